"""Every custom kernel of a tree: where it is defined, where it is called, what each call passes.

- Triton: `@triton.jit` / `@triton.autotune` / `@triton.heuristics` functions, and launches
  `kernel[grid](...)` in any Python file (matched by the kernel's name).
- `torch.utils.cpp_extension.load` / `load_inline`: each op the module exposes (`functions=`
  of `load_inline`, else the names called on the loaded module) with those call sites.
- `CUDAExtension(...)` in setup.py: the extension and its sources.
- `.cu` / `.cuh` files (KERN004): `__global__` kernels and the ops bound with `m.def("name", …)`
  or `TORCH_LIBRARY` — read with regular expressions, never compiled.
- Custom ops registered for CUDA over a CUDA-only implementation (KERN005:
  `@torch.library.custom_op(..., device_types="cuda")`, `@op.register_kernel("cuda")`,
  `@triton_op`): the op and what makes its implementation CUDA-only.

Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import bisect
import collections
import functools
import itertools
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.codemods.context import one_line
from porter.codemods.guards import CudaOnly
from porter.codemods.kernels import CPP_EXTENSION, cuda_only_registrations, triton_kernels, triton_wrapped
from porter.analysis import native_ops, python_ops
from porter.analysis.cuda_only_index import cuda_only_imports, extension_imports
from porter.analysis.if_groups import branch_brace_spans, branch_taken
from porter.analysis.prefilter import WIDE_BOMS, decorated_imported
from porter.core import preprocessor
from porter.analysis.build_includes import include_dirs, within
from porter.core.preprocessor import BACKSLASH_NEWLINE, joined
from porter.pipeline.bounded import Failed, bounded
from porter.pipeline.discover import discover
from porter.pipeline.parallel import DEFAULT_FILE_TIMEOUT
from porter.core.reading import (
    MAX_PARSE_BYTES,
    Unreadable,
    lf_line_ends,
    read_regular,
    too_large,
    too_large_to_parse,
)
from porter.files.errors import Unreadable as NotInFormat
from porter.core.textsafe import path_name
from porter.core.cpp_text import blanked
from porter.analysis.resolve import ImportTable, Resolver, ScopeStack, _import_statements, dotted

CUDA_SUFFIXES = (".cu", ".cuh")
_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx")  # read for kernels where they hold `__global__`
# a kernel's head, to the `(` of its parameters; they end at the `)` that closes it (`closing_parens`):
# `[^)]*` ended them at a function pointer's own (`void (*f)(float)`), and lost the rest
# (and an explicit specialization's template arguments, `spec<float, Tr<2>>`: one was not listed)
_TEMPLATE_ARGS = r"(?:<[^<>(){};]*(?:<[^<>(){};]*>[^<>(){};]*)*>\s*)?"
# what may stand between `__global__`, `void` and the name: `__launch_bounds__(...)` and
# `__attribute__((...))` of nested parentheses, `[[...]]`. vllm 0.34.0 writes
# `__launch_bounds__(512, VLLM_BLOCKS_PER_SM(512))` (`[^)]*` listed 7 kernels named
# `__launch_bounds__`) and `__attribute__((amdgpu_waves_per_eu(1, 1)))` (one `__attribute__`)
# Any `__word__` there is one of CUDA's attributes, with its arguments or without (vllm 0.34.0's
# `__cluster_dims__(1, 2, 1)` after its launch bounds listed 4 kernels named `__cluster_dims__`:
# nineteenth read); each is one whole word (`(?<!\w)...(?!\w)`), so a run of them splits one way, and
# `__global__` is none (it begins the next kernel: a run of them was read from each, quadratically)
_NESTED = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
# and any other word, with its arguments or none: a kernel returns `void`, so a word between
# `__global__` and `void`, or between `void` and the name, is no type but a macro standing for
# attributes (vllm 0.34.0's `__global__ void GDN_CU_MODE __launch_bounds__(...) rdna35_gdn_chunked_kernel_cu(`,
# `#define GDN_CU_MODE __attribute__((target("cumode")))`, was not listed; `__global__
# LAUNCH_BOUNDS(256) void k(` neither), or one of `static`/`inline`/`extern` (CUTLASS's
# `__global__ static __launch_bounds__(...) void gemm_device(`: 6 kernels of flash-attn 2.8.3's sdist)
# a `__global__` function returns void, spelled `void` or as a template's type that is void where it
# is instantiated (SFINAE): vllm 0.34.0's `__global__ std::enable_if_t<(width > 0) && ...>
# fused_add_rms_norm_kernel(` (2 kernels, 4 definitions) was not listed (twentieth read). Its
# arguments hold `<...>` three deep and parentheses (a `>` in them compares); `auto` is a trailing
# `-> void` (`__global__ auto k(int* p) -> void {`: no `__global__` deduces its type); each alternative
# begins with its own character, so a run is read one way
_ANGLES = r"<(?:[^<>(){};]|" + _NESTED + r")*>"
for _ in range(2):
    _ANGLES = r"<(?:[^<>(){};]|" + _NESTED + r"|" + _ANGLES + r")*>"


# a conditional directive between `__global__` and the name (cutlass's `CUTLASS_GLOBAL` then
# `#ifdef __CUDACC__`, `__launch_bounds__(...)`, `#endif` before `void device_kernel(`): the kernel
# is one whichever branch is taken (it begins with its own character, so a run is read one way)
_DIRECTIVE_IN_HEAD = r"#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*(?![^\n])"  # (to its line's end: one way)


# what nvcc's `__global__` stands for (`__location__(global)`: `__attribute__((global))`), spelled so in a source:
# `__attribute__((global)) void k(float* x)`, libclang's kernel `k`, was listed nowhere, its launch "a name no kernel
# porter lists has" (thirty-first scaffold read's leftover)
_ATTRIBUTE_GLOBAL = r"__attribute__\s*\(\(\s*global\s*\)\)"
_GLOBAL_SPELLED = "__global__|" + _ATTRIBUTE_GLOBAL


def _head_text(void: str, spelled: str = _GLOBAL_SPELLED, voided: str = "") -> str:
    """The pattern of a `__global__` kernel's head, its `void` spelled as `void` says (alternatives),
    its `__global__` as `spelled` says (alternatives: `__global__` and the macros standing for it),
    and `__global__ void` as `voided` says (the macros standing for both: `#define K __global__ void`)."""
    taken = spelled + "|" + void + ("|" + voided if voided else "")
    word = r"(?<!\w)(?!(?:" + taken + r")(?!\w))[A-Za-z_]\w*(?!\w)(?!\s*(?:<|::))(?:\s*"
    word += _NESTED + r")?"
    bounds = r"(?:(?:" + word + r"|\[\[[^\]]*\]\]|" + _DIRECTIVE_IN_HEAD + r")\s*)*"
    returns = r"(?:(?:" + void + r")\s+|auto\s+|(?:typename\s+)?(?:::\s*)?\w+(?:\s*::\s*\w+)*\s*" + _ANGLES
    returns += r"(?:\s*::\s*\w+)?\s*)"
    # the name in parentheses just after the return type (`__global__ void (k)(float* x)`, libclang's `k`: it
    # was listed nowhere, its launch "a name no kernel porter lists has": thirtieth read); after a word it is
    # a macro's argument (`void KNAME(k)(`), no name
    # (in two or more: `__global__ void ((k))(float* x)`, libclang's `k`, was listed nowhere: thirty-first scaffold
    # read's leftover)
    named = r"(?:(?:\(\s*)+(?=\w+\s*(?:\)\s*)+\()|" + bounds + r")"
    # (or `void` first: natten 0.21.7's `void __global__ fna_reference_kernel(`, libclang's kernel, was listed nowhere
    # and its launches said as "a name no kernel porter lists has": thirty-first read)
    returned_first = r"(?<!\w)(?:" + void + r")\s+(?:" + spelled + r")\s+" + bounds
    head = r"(?:(?:" + spelled + r")\s+" + bounds + returns + r"|" + returned_first + r")" + named
    if voided:
        head = r"(?:(?:" + spelled + r")\s+" + bounds + returns + r"|(?:" + voided + r")\s+)" + named
    # (an attribute may follow the name: `__global__ void k [[deprecated]] (float* x)`, libclang's `k`, was listed
    # nowhere and its launch "a name no kernel porter lists has": thirty-first read)
    named_after = _TEMPLATE_ARGS + r"(?:\[\[[^\]]*\]\]\s*)?\("
    return head + _NOT_A_NAME + r"((?:\w+\s*##\s*)*\w+)(?:\s*\))*\s*" + named_after


# the C++ keywords that may follow a kernel's parameters with their own parentheses (`noexcept(true)`,
# `throw()`, a trailing `requires (...)`): no kernel is so named. `__global__ void k(float* x) noexcept(true)`
# was listed as a kernel named `noexcept` of the parameter `true` (its parameters read as an attribute
# macro's arguments), `k` nowhere and its launch "a name no kernel porter lists has" (thirtieth read); and the
# compilers' attributes, which may follow them too (`__global__ void k(float* x) __attribute__((noinline)) {`,
# which libclang reads as `k`, listed a kernel `__attribute__` of the parameter `(noinline)`: thirty-first read)
_NOT_A_NAME = (
    r"(?!(?:noexcept|throw|requires|decltype|alignas|sizeof|alignof|static_assert|__attribute__|__declspec)(?!\w))"
)


_GLOBAL = re.compile(_head_text("void"))


@functools.lru_cache(maxsize=32)
def _kernel_head(
    voids: tuple[str, ...], globals_: tuple[str, ...] = (), voided: tuple[str, ...] = ()
) -> re.Pattern[str]:
    """The head of a `__global__` kernel whose `void` may also be spelled as one of `voids`, the
    file's plain aliases of it (`using void_t = void;`, `typedef void V;`: not read as the return
    type, though the file's aliases were read for its parameters), its `__global__` as one of
    `globals_`, the object-like macros of it the file sees (`_GlobalMacros`), and its `__global__
    void` as one of `voided` (those ending in `void`)."""
    if not voids and not globals_ and not voided:
        return _GLOBAL
    spelled = "|".join((_GLOBAL_SPELLED, *(r"(?<!\w)" + re.escape(n) for n in globals_)))
    both = "|".join(r"(?<!\w)" + re.escape(n) for n in voided)
    return re.compile(_head_text("|".join(("void", *voids)), spelled, both))


# a `(` just after a kernel's parameters: they were a macro's arguments, its name a macro's
# (`__global__ void k ATTR(1)(float* x)`, no C++, was listed as a kernel named `ATTR`)
# (past the attributes that may follow a name: of `__global__ void KNAME(foo) [[deprecated]] (float* x)`, libclang's
# `foo_kernel`, a kernel `KNAME` of a parameter `foo` was listed, `foo_kernel` nowhere: thirty-first scaf2 read)
_NAME_ATTRIBUTES = r"(?:\[\[[^\[\]]*\]\]\s*|__attribute__\s*\(\([^()]*(?:\([^()]*\)[^()]*)*\)\)\s*)*"
_CALLED = re.compile(r"(?<!\s)\s*" + _NAME_ATTRIBUTES + r"\(")
# a function-like macro (`#define K(name) __global__ void name(...)`), its body to the line's end
# past each backslash-newline
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)\n]*)\)((?:\\\r?\n|[^\n])*)", re.M)
# `##` and the blanks around it, matched from a run's first blank only (`\s*##` from each blank of
# a long run was quadratic)
_PASTE = re.compile(r"(?<!\s)\s*##\s*")
# a name called (a macro's use): `_USE_AT` where it is, `_USE` the name
_USE_AT = re.compile(r"\b(\w+)\s*\(")
_USE = re.compile(r"\b(\w+)(?=\s*\()")
# the type aliases of a C++ file: `typedef T Name;`, `using Name = T;` and an object-like
# `#define Name T` (mmcv 2.2.0: `#define TensorAcc4R PackedTensorAccessor32<...>`); each bounded
# in length, so a `typedef` that never ends is not scanned to the file's end from each one
_TYPEDEF = re.compile(r"\btypedef\b([^;{}()]{0,1000}?)\b(\w+)\s*;")
# C's function pointer type: `typedef float (*op_t)(float);` (`_TYPEDEF` reads no parenthesis)
_TYPEDEF_POINTER = re.compile(r"\btypedef\b([^;{}()]{1,200})\(\s*([*&])\s*(\w+)\s*\)\s*(\([^;{}()]{0,1000}\))\s*;")
_USING = re.compile(r"\busing[ \t\n]+(\w+)[ \t\n]*=([^;{}]{1,1000});")
# an enumeration (`enum class Mode : uint8_t {`): a number, of its underlying type (an `int` where
# it names none): a parameter of it by value was no struct
_ENUM = re.compile(r"\benum\s+(?:(?:class|struct)\s+)?(\w+)\s*(?::([^{};]{1,200}))?\{")
# and C's `typedef enum { SUM, MEAN } reduce_t;` (deepspeed 0.19.8's `adamMode_t`, mmcv 2.2.0's
# `reduce_t`): group 1 holds the underlying type after a `:`, group 2 the alias
_TYPEDEF_ENUM = re.compile(r"\btypedef\s+enum\b[^{};:]{0,200}(?::([^{};]{1,200}))?\{[^{}]{0,5000}\}\s*(\w+)\s*;")
_OBJECT_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([^\n]{1,1000})", re.M)
_CONTINUED = re.compile(r"\\(?=\r?\n)")
# a line continuation inside a word (`__global__ void scale_\\<newline>kernel(`): the preprocessor
# removes it, so the word is one (the kernel was listed as `kernel`: twenty-first read)
_SPLIT_WORD = re.compile(r"(?<=\w)(?:\\\r?\n\w+)+")


def _spliced(code: str) -> str:
    """`code` with its line continuations removed as the preprocessor removes them, offsets and
    line count kept: a word split by one is joined (its line ends moved after it), any other is a blank."""

    def join(m: re.Match[str]) -> str:
        split = m.group(0)
        word = BACKSLASH_NEWLINE.sub("", split)
        ends = "".join(re.findall(r"\r?\n", split))
        return word + " " * (len(split) - len(word) - len(ends)) + ends

    return _CONTINUED.sub(" ", _SPLIT_WORD.sub(join, code))


# an object-like `#define Name body`, its body past each backslash-newline: one that stands for a
# kernel's parameters (vllm 0.34.0's `__global__ void MarlinDefault(MARLIN_KERNEL_PARAMS)`, over 9
# lines) was read as one parameter of that name
_OBJECT_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+((?:\\\r?\n|[^\n])*)", re.M)
# an `#include "kernel.h"` or `#include <cutlass/cutlass.h>` (read in the text with its strings):
# group 1 the `"` or `<`, group 2 the name
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(["<])([^"<>\n]{1,300})[">]', re.M)
_ANY_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:\\\r?\n|[^\n])*", re.M)  # and its body, to its line's end
_UNDEF = re.compile(r"^[ \t]*#[ \t]*undef[ \t]+(\w+)", re.M)
# `m.def("ns::op(...)")` and `m.impl("op", ...)` bind `op`, whatever the block's own name for the library
# (vllm's `ops.def`, `ops.impl`): only `m.def` was named (twenty-fourth read)
_BIND = re.compile(r"\b\w+\s*\.\s*(?:def|impl)\(\s*\"(?:\w+\s*::\s*)?(\w+)")
# `TORCH_LIBRARY_FRAGMENT(ns, m)` too (flashinfer's dcp_lse_reduce.cu, vllm 0.34.0's dcp_utils): its
# namespace was not named (twenty-first read)
_TORCH_LIB = re.compile(r"TORCH_LIBRARY(?:_IMPL|_FRAGMENT)?\s*\(\s*(\w+)")


# a universal character name, C++'s spelling of a letter in an ASCII source (`k\\u00f6` is `kö` to the compiler)
_UCN = re.compile(r"(?<!\\)\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")


def _cxx_text(data: bytes) -> str:
    """A C++ source's text, composed (NFC: lines kept): a kernel named in decomposed letters (`ko` and
    U+0308, which `\\w` does not take) was listed nowhere and its launch dropped, unsaid (twenty-eighth
    read's leftover); composed, it is `kö`, as its launch is. A universal character name that spells a
    letter is read as it (`__global__ void k\\u00f6(`, libclang's `kö`, was listed nowhere, and its
    launch said as one of `u00f6`: thirtieth read)."""
    text = data.decode("utf-8", errors="replace")
    text = _UCN.sub(_ucn_letter, text) if "\\u" in text or "\\U" in text else text
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _ucn_letter(m: re.Match[str]) -> str:
    """The letter a universal character name spells, or the name as written where it spells none. A letter
    is what a name of the file spelled in UTF-8 may hold (`\\w`: `k²` is a name to porter, as to C++17's
    Annex E and libclang 18), or what a Python name may (`·`): `k\\u00b2` was read as `k` and `u00b2`, its
    kernel listed nowhere and its launch said as one of `u00b2` (thirty-first read)."""
    code = int(m.group(1) or m.group(2), 16)
    letter = chr(code) if code <= 0x10FFFF else ""
    named = letter.isalnum() or ("a" + letter).isidentifier()
    return letter if named and len(letter) == 1 else m.group(0)


def _unread_marks(code: str, rel: str) -> list[str]:
    """A note where a word of `code` (composed, comments and strings blanked) goes on with a
    combining mark no letter takes (`x` and U+0303): a kernel or launch so named is not read."""
    if code.isascii():
        return []
    marks = "".join(sorted(c for c in set(code) if unicodedata.category(c).startswith("M")))
    found = re.search(r"\w[" + re.escape(marks) + "]", code) if marks else None
    if found is None:
        return []
    line = code.count("\n", 0, found.start()) + 1
    mark = f"U+{ord(found.group()[1]):04X}"
    return [
        f"{path_name(rel)}:{line}: a name goes on with a combining mark ({mark}) that composes with no letter, "
        "which porter does not read as part of a name: a kernel or launch so named is not listed"
    ]


# a name with the combining marks of Unicode's combining blocks in it (`ko` and U+0308), as written
_NAME_AS_WRITTEN = re.compile(r"(?:\w|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])+")


def _two_spellings(text: str, rel: str) -> list[str]:
    """A note where a name of `text` (a C++ source as decoded, not composed) is spelled both in
    decomposed letters (NFD: `ko` and U+0308) and composed (`kö`): porter reads the file composed, so
    as one name, where a compiler reads two (libclang 18: a launch of the composed one is of an
    undeclared name), and a launch of the one was attached to the other's kernel, unsaid (twenty-ninth
    read's leftover)."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return []
    first: dict[str, int] = {}
    for m in _NAME_AS_WRITTEN.finditer(blanked(text, strings=True)):
        first.setdefault(m.group(), m.start())
    for word, at in first.items():
        composed = unicodedata.normalize("NFC", word)
        if composed != word and composed in first:
            return [
                f"{path_name(rel)}:{text.count(chr(10), 0, at) + 1}: `{composed}` is spelled here in decomposed "
                "letters (NFD) and elsewhere in the file composed (NFC): porter reads both as one name, where a "
                "compiler reads two (C++23 asks names composed), so a launch of the one is listed with the "
                "other's kernel"
            ]
    return []


def _spellings(text: str, rel: str) -> list[tuple[str, str, bool]]:
    """(`rel`, name composed, whether spelled decomposed) for the first spelling of each non-ASCII name of
    `text` (a C++ source as decoded, not composed) of each kind: `_spelled_across` reads them over files."""
    if text.isascii():
        return []
    seen: dict[tuple[str, bool], None] = {}
    for m in _NAME_AS_WRITTEN.finditer(blanked(text, strings=True)):
        if not m.group().isascii():
            composed = unicodedata.normalize("NFC", m.group())
            seen.setdefault((composed, composed != m.group()), None)
    return [(rel, name, decomposed) for name, decomposed in seen]


def _spelled_across(spelled: list[tuple[str, str, bool]]) -> list[str]:
    """A note for each name one file spells decomposed (NFD) and another composed (NFC): porter reads both
    as one name, a compiler as two, so a launch in the one file was listed with the other's kernel, unsaid
    (`_two_spellings` says it within a file: twenty-ninth and thirtieth reads' leftover)."""
    decomposed = {name: rel for rel, name, nfd in reversed(spelled) if nfd}
    out = []
    for rel, name, nfd in spelled:
        other = decomposed.get(name)
        if not nfd and other is not None and other != rel:
            out.append(
                f"{path_name(rel)}: `{name}` is spelled here composed (NFC) and in {path_name(other)} in decomposed "
                "letters (NFD): porter reads both as one name, where a compiler reads two (C++23 asks names "
                "composed), so a launch of the one is listed with the other's kernel"
            )
            decomposed.pop(name)
    return out


@dataclass
class CallSite:
    path: str
    line: int
    args: list[str]
    cell: int | None = None  # a notebook's: the code cell (`line` is the cell's)
    template: list[str] = field(default_factory=list)  # a C++ launch's template arguments (`k<float, 128><<<`)
    # a C++ launch's: the plain locals of its host function its arguments name, each as it is
    # initialized (`int n = x.size(0);`: "n" -> "x.size(0)"), and the line of it
    locals: dict[str, tuple[str, int]] = field(default_factory=dict)
    # and the pointers it passes that are such locals or the host function's parameters, each to the
    # type it is declared to point to (`int64_t* p = ...;`: "p" -> "int64_t")
    pointees: dict[str, str] = field(default_factory=dict)
    # where one of them is `scalar_t`: the dispatch macro around the launch that binds it
    # (`AT_DISPATCH_FLOATING_TYPES`), and the types it binds it to (none: porter does not read them)
    dispatch: str = ""
    dispatched: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return f"{place(self.path, self.line, self.cell)} ({', '.join(self.args)})"


def place(path: str, line: int, cell: int | None) -> str:
    """Where a kernel or a call is, as lint says it: `k.py:3`, or `k.ipynb (cell 2, line 3)`."""
    return f"{path_name(path)}:{line}" if cell is None else f"{path_name(path)} (cell {cell}, line {line})"


@dataclass
class Kernel:
    name: str
    kind: str  # "triton", "cpp_extension", "cuda-extension", "cuda"
    path: str
    line: int
    params: list[str] = field(default_factory=list)
    detail: str = ""
    calls: list[CallSite] = field(default_factory=list)
    source: str = ""  # the kernel's own source text (Triton: the function)
    cell: int | None = None  # a notebook's: the code cell (`line` is the cell's)
    # a CUDA kernel's: the type aliases its parameters name (`typedef`, `using`, an object-like
    # `#define`), name -> what it stands for, as its file declares them
    aliases: dict[str, str] = field(default_factory=dict)
    # a CUDA kernel's template type parameters (`T` of `template <typename T, int N>`): a parameter
    # of such a type by value is a number, one of a type no number is a struct (nineteenth read)
    typenames: list[str] = field(default_factory=list)
    # and all its template parameters in order, of a type or not (`T`, `BLOCK` of `<typename T, int
    # BLOCK>`): where a launch's template arguments (`k<float, 128><<<`) stand
    template: list[str] = field(default_factory=list)
    # a CUDA kernel's `#if` branches in its file: (line of the `#if`, the branch's directive, whether a
    # default nvcc build takes it: None where porter cannot tell), outermost first
    branches: list[tuple[int, str, bool | None]] = field(default_factory=list)
    # the launches that may run it, which porter cannot tell run it (`ops.k[grid]` of an unknown
    # `ops`): said in its scaffold's TODO, as written
    unresolved: list[str] = field(default_factory=list)
    # a CUDA kernel's C++ namespace (`vllm::fp8`), "" at file scope or in an unnamed one
    namespace: str = ""
    # a Triton kernel never launched that other Triton kernels call: their names (it is no op of its own)
    helper_of: list[str] = field(default_factory=list)
    # a CUDA kernel's of `template <>`: the template arguments it is the specialization for (`double`
    # of `k<double>(`), where a launch `k<double><<<` runs it and not its primary template
    specialises: list[str] = field(default_factory=list)
    # a Triton kernel's: the modules its file imports under another name, local -> the module's last
    # name (`H` -> `helpers` of `import pkg.helpers as H`), so `H.gelu(x)` reads as `helpers.gelu(x)`
    modules: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return place(self.path, self.line, self.cell)

    def to_dict(self) -> dict:
        """As `--json` writes it: a file name that is not UTF-8 as `\\xNN`, as every output shows one."""
        d = asdict(self)
        d.pop("source")
        d.pop("aliases")
        d.pop("typenames")
        d.pop("template")
        d.pop("branches")
        d.pop("helper_of")  # (its detail says so)
        d.pop("modules")
        d.pop("specialises")  # (its detail says so)
        if not self.namespace:
            del d["namespace"]
        if not self.unresolved:  # (the launches porter cannot tie to its arguments, where there are any)
            del d["unresolved"]
        d["path"] = path_name(self.path)
        for call in d["calls"]:
            call["path"] = path_name(call["path"])
            for key in _LAUNCH_ONLY:
                if not call[key]:
                    del call[key]
        return d


# a kernel declared (`__global__ void k(P p);`) and defined nowhere in the tree: it was listed as
# "defined" at its declaration, as a kernel porter read (xformers 0.0.28's `attention_kernel_batched`,
# libclang: no definition; twenty-ninth read)
DECLARED_ONLY = "declared only: no definition of it in the tree, so no body read"

# what a C++ launch's call holds in `--json`, where it holds one
_LAUNCH_ONLY = ("template", "locals", "pointees", "dispatch", "dispatched")


@dataclass
class Inventory:
    kernels: list[Kernel] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    macros: list[_Macro] = field(default_factory=list)  # ones that make kernels, of no use in their file
    used: set[str] = field(default_factory=set)  # the names of the macros used
    launches: list[tuple[str, CallSite]] = field(default_factory=list)  # C++ launches `k<<<...>>>(...)`, by name
    # C++ launches through the runtime's API (`cudaLaunchKernel((void*)k, ...)`): the kernel's name, and why
    # its arguments are not read, or the launch where it passes them as a call does (`cudaLaunchKernelEx`)
    api_launches: list[tuple[str, str | CallSite]] = field(default_factory=list)
    # the ops the C++/CUDA sources register with torch, as lint reads them (`native_ops`): a host `.cpp`'s
    # (torch-sparse's `RegisterOperators`) were not listed (twenty-seventh read)
    registered: list[Registered] = field(default_factory=list)
    # the non-ASCII names of a C++ source, composed, and whether it spells each decomposed: (path, name, NFD)
    spelled: list[tuple[str, str, bool]] = field(default_factory=list)


@dataclass
class Registered:
    """An op a C++/CUDA source registers with torch, and the dispatch key of its implementation as
    `native_ops.registrations` reads it ("any", a key, or `native_ops.UNREAD` and a macro's name)."""

    path: str
    namespace: str | None  # None: a macro's (`TORCH_EXTENSION_NAME`)
    op: str
    key: str

    @property
    def name(self) -> str:
        return f"{self.namespace}::{self.op}" if self.namespace else f"{self.op} (of a macro's namespace)"

    @property
    def device(self) -> str:
        if self.key == "any":
            return "any device"
        if self.key.startswith(native_ops.UNREAD):
            return f"not read: `{self.key.removeprefix(native_ops.UNREAD)}`, a macro this file does not define"
        if self.key.startswith(native_ops.UNDECIDED):
            return (
                f"not read: `{self.key.removeprefix(native_ops.UNDECIDED)}`, a macro this file defines as another key"
                " in another build (an `#if` porter cannot decide)"
            )
        if self.key.startswith(native_ops.UNFOLLOWED):
            return (
                f"not read: `{self.key.removeprefix(native_ops.UNFOLLOWED)}`, a macro this file defines as no key"
                " porter reads (a macro of macros too deep or in a cycle, or an expression)"
            )
        return self.key

    def to_dict(self) -> dict:
        return {"op": self.name, "device": self.device, "path": path_name(self.path)}


def _native_registered(data: bytes, rel: str, path: Path, search: _Search, problems: list[str]) -> list[Registered]:
    """The ops `data` (the file `path`) registers; a note in `problems` where one is in a branch porter
    cannot decide (`#ifdef WITH_CPU`), which is read as compiled: said nowhere before (twenty-ninth read), and
    where a block registers through a function porter does not read."""
    found, unread = native_ops.registrations_and_unread(data, path, search.base, search.dirs)
    for ns, key, fn, line, own in unread:  # (a block's `register_cpu(m)` of another file: thirty-second sleft read)
        space = f"`{ns}`" if ns is not None else "a namespace a macro names"
        if ns == native_ops.GLOBAL_NAMESPACE:  # (`TORCH_LIBRARY_IMPL(_, CPU, m) { m.fallback(...); }`: scaf2)
            problems.append(
                f"{path_name(rel)}:{line}: the {key} block of the global namespace `_` registers `{one_line(fn, 60)}`, "
                f"a fallback every op with no {key} kernel of its own runs on a {key} tensor: no op is taken for "
                "CUDA-only"
            )
            continue
        if own is None:  # (`m.def(SCHEMA(a), &a_any)`: thirty-third scleft read)
            problems.append(
                f"{path_name(rel)}:{line}: the {key} block of {space} registers `{one_line(fn, 60)}`, whose op porter "
                f"cannot read (a function-like macro, a variable): no op of {space} is taken for CUDA-only"
            )
            continue
        # (or of this file, in a call porter does not follow: `detail::reg(m)`, `reg(&m)`: thirty-second scaf2 read)
        what = "a call porter does not follow" if own else "a function this file does not define"
        problems.append(
            f"{path_name(rel)}:{line}: the {key} block of {space} passes its library to `{fn}`, {what}: what it "
            f"registers is not read, so no op of {space} is taken for CUDA-only"
        )
    unsure = native_ops.undecided(data, path) if found else []
    if unsure:
        more = f" (and {len(unsure) - 1} more)" if len(unsure) > 1 else ""
        problems.append(
            f"{path_name(rel)}:{unsure[0][0]}: a registration in {unsure[0][1]}{more}, a branch porter cannot "
            "decide (the build's `-D` does): read as compiled, so the op is not taken for CUDA-only"
        )
    return [Registered(rel, ns, op, key) for ns, op, key in found]


def _python_files(root: Path, notebooks: bool = True) -> list[Path]:
    """The Python files and (with `notebooks`) the notebooks under `root`: lint reports a notebook's
    Triton kernels and launches (KERN002) and sends the user to `porter kernels`, which listed none
    of them (eighteenth read)."""
    kinds = (".py", ".ipynb") if notebooks else (".py",)
    return [c.path for c in discover([root]) if c.problem is None and c.path.suffix in kinds]


def _cells(source: bytes) -> tuple[bytes, Callable[[int], tuple[int | None, int]]]:
    """A notebook's code cells as one module (as lint reads them: porter.files.notebooks.virtual),
    and where a line of it is: (cell, line of the cell)."""
    from porter.files.notebooks import layout, virtual
    from porter.files.sites import Text

    nb = layout.read(Text(source).text)
    module = virtual.join([virtual.plan(c) for c in nb.cells if c.kind == "code" and c.parts])

    def where(line: int) -> tuple[int | None, int]:
        at = module.origin[line - 1] if 0 < line <= len(module.origin) else None
        return (None, line) if at is None else (module.plans[at[0]].cell.number, at[1] + 1)

    return module.text.encode("utf-8", "surrogateescape"), where


def _as_is(line: int) -> tuple[int | None, int]:
    return None, line


# an object-like macro whose body holds `__global__` (cutlass's `#define CUTLASS_GLOBAL __global__
# static`, `#define K __global__ static void`): its name in group 1. A kernel declared with one was
# not listed (`porter kernels` over cutlass's 664 headers listed none: twenty-third read's leftover)
_STANDS_FOR_GLOBAL_TEXT = r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+[^\n]*?(?<!\w)__global__(?!\w)"
_STANDS_FOR_GLOBAL = re.compile(_STANDS_FOR_GLOBAL_TEXT, re.M)
_STANDS_FOR_GLOBAL_BYTES = re.compile(_STANDS_FOR_GLOBAL_TEXT.encode(), re.M)


def _cuda_files(
    root: Path, hip: list[Path] | None = None
) -> tuple[list[Path], frozenset[str], list[tuple[Path, bytes]], list[tuple[Path, bytes]]]:
    """The `.cu`/`.cuh` files of `root` and its kernel headers (those holding `__global__`), and the
    names those files define as `__global__` (`_STANDS_FOR_GLOBAL`). A header that holds such a name
    and not `__global__` is a kernel header too (cutlass's `device_kernel.h`, whose kernels are
    `CUTLASS_GLOBAL`; a `.cu`'s `#define G __global__` before `#include "k.h"` makes `G void k(` of
    k.h a kernel: `_preludes`): the others are looked at again for the names (`_Others`), only in a
    tree that has one. Last, the `.cu` files whose headers need the lines read before them, with
    their bytes (`_prelude_givers`); and the host C++ files that spell an API launch (`_API_BYTES`). The HIP sources
    holding `__global__` go to `hip` (not read: `_hip_note`)."""
    out: list[Path] = []
    headers, cus = _Others(), _Others()
    names: set[bytes] = set()
    by_headers: set[bytes] = set()  # (the names a header defines)
    definers: list[tuple[Path, bytes]] = []
    hosts: list[tuple[Path, bytes]] = []  # (host C++ files spelling an API launch, read: `_host_api_launches`)
    for path in [root] if root.is_file() else _tree_files(root):
        if path.suffix in CUDA_SUFFIXES:
            out.append(path)
            data = _header_bytes(path)
            own = _STANDS_FOR_GLOBAL_BYTES.findall(data) if b"__global__" in data else []
            names.update(own)
            if own:
                definers.append((path, data))
            else:
                cus.add(path, data)
        elif path.suffix in _HEADER_SUFFIXES:
            data = _header_bytes(path)
            if b"__global__" in data:
                out.append(path)
                by_headers.update(_STANDS_FOR_GLOBAL_BYTES.findall(data))
            headers.add(path, data)
        elif path.suffix in _HOST_SUFFIXES and _host_read(data := _header_bytes(path)):
            hosts.append((path, data))
        elif path.suffix == _HIP_SUFFIX and hip is not None and b"__global__" in _header_bytes(path):
            hip.append(path)
    names.update(by_headers)
    users = headers.holding(names) if names else []
    givers = _prelude_givers(definers, cus, users, headers) if by_headers else definers
    spelled = frozenset(n.decode("ascii", errors="replace") for n in names)
    return _one_name_each(out + users), spelled, givers, hosts


# a HIP (ROCm) source: its kernels are listed nowhere and were said nowhere ("0 kernel(s)" for a tree of `.hip`
# files: thirty-fourth read's leftover); read as CUDA, a hipified copy of a `.cu` would list each kernel twice
_HIP_SUFFIX = ".hip"


def _hip_note(hip: list[Path], base: Path) -> list[str]:
    """One note for the HIP sources holding `__global__` that porter does not read."""
    if not hip:
        return []
    more = f" (and {len(hip) - 1} more)" if len(hip) > 1 else ""
    return [
        f"{path_name(os.path.relpath(hip[0], base))}{more}: a HIP (ROCm) source with `__global__` kernels, not read: "
        "its kernels are listed only where a `.cu` or `.cuh` file defines them too"
    ]


def _host_read(data: bytes) -> bool:
    """Whether a host C++ file is read: it spells an API launch or registers an op, or includes a header whose
    macro may open a library block (`native_ops.registrations_and_unread` reads its headers to know)."""
    return any(b in data for b in _API_BYTES) or native_ops.registers(data) or b"include" in data


def _prelude_givers(
    definers: list[tuple[Path, bytes]], cus: _Others, users: list[Path], headers: _Others
) -> list[tuple[Path, bytes]]:
    """The `.cu` files `_preludes` reads, where a header defines a macro of `__global__`: those that
    define one, and those that spell the name of a header using one, or of a header spelling such a
    name, on (a cheap look, no `#include` resolved). `#include "g.h"` (`#define G __global__`) then
    `#include "k.h"` (`G void k(`) made no kernel of k.h: preludes were made only for a `.cu` defining
    one (twenty-fourth read's leftover); nor did `#include "m.h"` of an m.h including k.h (twenty-fifth's)."""
    if not cus.files:  # (no `.cu` to give one)
        return definers
    spelled = {p.name.encode() for p in users}
    includers: dict[bytes, set[bytes]] = {}  # a header's name -> the names of the headers including it
    for path, data in headers.files:
        data = _header_bytes(path) if data is None else data
        for name in _INCLUDED_NAME.findall(data) if b"include" in data else ():
            includers.setdefault(name.rpartition(b"/")[2], set()).add(path.name.encode())
    wanted = list(spelled)
    while wanted:  # (each name once: the headers that include a user, on, up the tree)
        more = includers.get(wanted.pop(), set()) - spelled
        spelled |= more
        wanted += more
    return definers + cus.pairs_holding(spelled)


# the name an `#include` line spells (`sub/k.h` of `#include "sub/k.h"`), read in a header's bytes
_INCLUDED_NAME = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*["<]([^">\n]*)[">]', re.M)
# the bytes of the headers (and, apart, of the `.cu` files) held for `_Others.holding`, at most
# (cutlass's 664 headers hold 20 MB); past it, a file is read again
_OTHERS_HELD = 64 * 2**20


class _Others:
    """Files of the tree, their bytes held (to `_OTHERS_HELD`) for the second look, for the names of
    `__global__` the tree's files define: each was read again, once per name it did not hold
    (cutlass's, twice; twenty-third read's leftover)."""

    def __init__(self) -> None:
        self.files: list[tuple[Path, bytes | None]] = []
        self.left = _OTHERS_HELD

    def add(self, path: Path, data: bytes) -> None:
        held = len(data) <= self.left
        self.left -= len(data) if held else 0
        self.files.append((path, data if held else None))

    def holding(self, names: set[bytes]) -> list[Path]:
        """The files that hold one of `names`."""
        return [path for path, _ in self.pairs_holding(names)]

    def pairs_holding(self, names: set[bytes]) -> list[tuple[Path, bytes]]:
        """The files that hold one of `names`, with their bytes."""
        out = []
        for path, data in self.files:
            data = _header_bytes(path) if data is None else data
            if any(n in data for n in names):
                out.append((path, data))
        return out


def _preludes(
    definers: list[tuple[Path, bytes]], search: _Search, notes: list[str]
) -> dict[str, tuple[tuple[_Key, str], ...]]:
    """Each header a `.cu` of `definers` includes, or they include, by real path, with the
    `#define`/`#undef` lines the compiler reads before it, in its order (`_GlobalMacros` keys them
    before the header's own): the `.cu`'s own before its `#include`, and those of the headers read
    before. `#define G __global__` then `#include "k.h"` makes k.h's `G void k(` a kernel, which k.h
    read alone did not see (twenty-third read's leftover); a header a header includes got none
    (twenty-fourth read's). A header that files include after differing lines takes the first
    file's (by name); where the macros of `__global__` differ there, a note in `notes` says the
    kernels the later one compiles are not read (it was unsaid: twenty-fifth read's leftover)."""
    out: dict[str, tuple[tuple[_Key, str], ...]] = {}
    first: dict[str, tuple[Path, dict[str, str]]] = {}  # (the file that gave it, and what its macros stand for)
    for path, data in sorted(definers):
        commented = blanked(_cxx_text(data), strings=False)
        found: list[str] = []
        texts = [((), commented), *_headers(commented, path, search, [], found)]
        events = sorted(((*key, d.start()), d) for key, text in texts for d in _DEFINE_OR_UNDEF.finditer(text))
        kinds: dict[str, str] = {}  # (what each macro stands for, read on to each header: `_GlobalMacros`)
        read = 0
        for (key, _), header in zip(texts[1:], found):
            while read < len(events) and events[read][0] < key:
                d = events[read][1]
                kinds[d.group(2)] = _macro_kind(d.group(3), kinds) if d.group(1) == "define" else ""
                read += 1
            standing = {n: kind for n, kind in kinds.items() if kind}
            if header not in out:
                out[header] = (((), "\n".join(d.group() for at, d in events if at < key)),)
                first[header] = (path, standing)
            elif standing != first[header][1]:
                notes.append(_differing_prelude(header, first[header][0], path, search.base))
    return out


def _differing_prelude(header: str, first: Path, other: Path, base: Path) -> str:
    """The note of a header two `.cu` files include after differing macros of `__global__`."""
    shown = [path_name(os.path.relpath(os.path.realpath(p), base)) for p in (header, first, other)]
    return (
        f"{shown[0]}: included by {shown[1]} and {shown[2]} after differing macros of `__global__`: read as "
        f"{shown[1]} includes it; its kernels as {shown[2]} compiles it are not read"
    )


def _one_name_each(paths: list[Path]) -> list[Path]:
    """`paths` sorted, a file the tree holds under two names (a link to a header beside it) once: its
    kernels were listed once per name, each given every launch (the compiler reads one file), and
    its own name (not a link) kept where it has one."""
    by_file: dict[str, Path] = {}
    for path in sorted(paths, key=lambda p: (p.is_symlink(), p)):
        by_file.setdefault(os.path.realpath(path), path)
    return sorted(by_file.values())


def _tree_files(root: Path) -> Iterator[Path]:
    """The files under folder `root`, less hidden and build folders."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if not d.startswith(".") and d not in ("build", "dist", "node_modules", "__pycache__")
        ]
        yield from (Path(dirpath) / f for f in filenames)


def _header_bytes(path: Path) -> bytes:
    """A C++ header's bytes, read for its kernels: apex's fused softmax (flash-attn 2.7.4's
    `csrc/fused_softmax/scaled_masked_softmax.h`) defines its kernels in a `.h` its `.cu` includes,
    and they were neither listed nor said (twenty-third read)."""
    try:
        return read_regular(path, MAX_PARSE_BYTES)
    except Unreadable:  # past the parse limit or not a regular file: not read as a .cu is not
        return b""


class _Returns(cst.CSTVisitor):
    """Each function of a module, by name, to the names its own `return`s give (`""` for any other
    value, or none), read before the launches are: one defined after the function that launches its
    result (`k = make(); k[grid]` above `def make()`) was not followed (twenty-eighth read's leftover)."""

    def __init__(self) -> None:
        self.found: dict[str, tuple[str, ...]] = {}
        self._open: list[tuple[str, set[str]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._open.append((node.name.value, set()))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        name, returned = self._open.pop()
        returned |= set(self.found.get(name, ()))  # (two functions of one name: either may run)
        self.found[name] = tuple(sorted(returned or {""}))

    def visit_Return(self, node: cst.Return) -> None:
        if self._open:
            self._open[-1][1].add(node.value.value if isinstance(node.value, cst.Name) else "")


def _factory_returns(module: cst.Module) -> dict[str, tuple[str, ...]]:
    found = _Returns()
    module.visit(found)
    return found.found


class _Scan(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(
        self, rel: str, module: cst.Module, imports: ImportTable, where: Callable[[int], tuple[int | None, int]]
    ) -> None:
        self.rel, self.module, self.where = rel, module, where
        self.resolver = Resolver(imports, ScopeStack())
        self.launches: list[_PyLaunch] = []
        self._origins = _import_origins(module, rel)
        self.imports = imports
        self.attr_launches: list[tuple[str, str, CallSite]] = []  # (holder, kernel, site): `ops.k[grid](...)`
        self.self_attrs: dict[str, set[str]] = {}  # `self.k = kernel` (or `= ops.kernel`): k -> what is assigned
        self.loads: list[tuple[str, cst.Call, tuple[int | None, int], str | None]] = []  # (what, call, where, var)
        self._assigned: dict[int, str] = {}  # id(load call) -> the name it is assigned to
        self.attr_calls: list[tuple[str, str, CallSite]] = []  # (var, fn, site)
        self.extensions: list[tuple[cst.Call, tuple[int | None, int]]] = []
        self.extension_names: set[str] = set()  # names bound to `CUDAExtension` (`_cuda_extension`)
        self.texts: dict[str, cst.BaseExpression] = {}  # a name bound to a string (or strings): `load_inline`'s sources
        self.held: dict[str, list[str]] = {}  # a name bound to a dict, list or tuple of names: `{"a": k_a, "b": k_b}`
        self.indirect: list[_PyLaunch] = []  # launches porter cannot tie to one kernel's arguments (`_indirect`)
        # of those, a launch from a container another module binds (`KERNELS[op][grid](x)` after `from
        # .ops import KERNELS`), by the container's name and origin: `_attach_held` finds what it holds
        self.held_imported: list[_PyLaunch] = []
        # a container `self.X` may be: one bound in a class's body (`KERNELS = {...}`) or as `self.X = {...}`
        self.class_held: dict[str, list[str]] = {}
        self._in_class: list[bool] = []  # (whether each scope around is a class's body)
        # launches of a kernel of a module named at run time (`getattr(ops, name)[grid](x)`), by the module
        self.module_launches: list[_PyLaunch] = []
        self.notes: list[str] = []  # launches porter does not read, each said (`_run_time_launch`)
        # a name bound to `wrap_triton(k)`, to `k`, in source order, a function's own dropped as it ends
        self._wrapped: dict[str, cst.BaseExpression] = {}
        self._wrapped_outer: list[dict[str, cst.BaseExpression]] = []
        # a function of this file to the names its `return`s give (`def make(): ... return k`):
        # `make()[grid](...)` launches `k` (`""` among them: a function returning anything else)
        self._returns = _factory_returns(module)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._in_class.append(True)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._in_class.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._in_class.append(False)
        self._wrapped_outer.append(dict(self._wrapped))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._in_class.pop()
        self._wrapped = self._wrapped_outer.pop()

    def _site(self, node: cst.Call, options: frozenset[str] = frozenset()) -> CallSite:
        """The call `node` as a call site, less its keyword arguments named in `options` (the launch's own)."""
        cell, line = self.where(self.get_metadata(PositionProvider, node).start.line)
        args = [_arg_text(self.module, a) for a in node.args if a.keyword is None or a.keyword.value not in options]
        return CallSite(self.rel, line, args, cell)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            if self._cuda_extension(node.value):
                self.extension_names.add(node.targets[0].target.value)
            if isinstance(node.value, cst.Call):
                self._assigned[id(node.value)] = node.targets[0].target.value
            elif isinstance(node.value, (cst.SimpleString, cst.List, cst.Tuple)):
                self.texts[node.targets[0].target.value] = node.value
            if isinstance(node.value, (cst.Dict, cst.List, cst.Tuple)):
                self.held[node.targets[0].target.value] = _names_held(node.value, self._unwrapped)
                if self._in_class and self._in_class[-1]:
                    self.class_held[node.targets[0].target.value] = _names_held(node.value, self._unwrapped)
        self._not_called(node.value, node)
        for t in node.targets:
            for target, value in self._paired(t.target, node.value, node):
                self._self_assigned(target, value)

    def _self_assigned(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`self.k = kernel` (or `= wrap_triton(kernel)`: it was none's, unsaid), `self.K = {...}`."""
        if isinstance(target, cst.Attribute) and dotted(target.value) == "self":
            self.self_attrs.setdefault(target.attr.value, set()).add(dotted(self._unwrapped(value)) or "")
            if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
                self.class_held.setdefault(target.attr.value, []).extend(_names_held(value, self._unwrapped))

    def _paired(
        self, target: cst.BaseExpression, value: cst.BaseExpression, node: cst.CSTNode | None = None
    ) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
        """Each target of an assignment with the value it takes: a tuple's by position (`a, b =
        wrap_triton(k), x`: `a` launches `k`; it was followed by none, unsaid). A tuple porter cannot
        pair (a starred target, a value of another length or built at run time) takes nothing read;
        where it holds a wrapped kernel that is said (`node`: the assignment, said once)."""
        if not isinstance(target, (cst.Tuple, cst.List)):
            return [(target, value)]
        names = [e.value for e in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names):
            if not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
                return [p for t, v in zip(names, value.elements, strict=True) for p in self._paired(t, v.value, node)]
        if node is not None and _spells_wrapper(self.module.code_for_node(value)):
            site = self._bare_site(node)
            written = self.module.code_for_node(node).strip()[:80]
            self.notes.append(f"{place(self.rel, site.line, site.cell)}: `{written}` {_UNPAIRED}")
        return []

    def _bind_wrapped(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """`name = wrap_triton(k)` (or `= launch` of such a name): `name[grid](...)` launches `k`;
        annotated, chained (`a = b = ...`) or by `:=` too (each was passed over, unsaid)."""
        if isinstance(target, (cst.Tuple, cst.List)) and value is not None:
            for name in _names_bound(target):  # (a name of a tuple not paired: no wrapped kernel's now)
                self._wrapped.pop(name, None)
            for t, v in self._paired(target, value):
                self._bind_wrapped(t, v)
            return
        if not isinstance(target, cst.Name):
            return
        self._wrapped.pop(target.value, None)
        if value is not None and (kernel := self._unwrapped(value)) is not value:
            self._wrapped[target.value] = kernel
        elif value is not None and self._made_by(value):  # (`k = pick(x)`: one of its kernels, `_indirect`)
            self._wrapped[target.value] = value

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for t in original_node.targets:
            self._bind_wrapped(t.target, original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._bind_wrapped(original_node.target, original_node.value)

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind_wrapped(original_node.target, original_node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        launched = self._unwrapped(func.value) if isinstance(func, cst.Subscript) else None
        if isinstance(launched, cst.Name):
            # by the name Python reads (NFKC), as the kernels are named: `ｓcale` was a kernel
            # apart from its launch `scale[grid](...)`, its reference not derived (seventeenth read)
            name = unicodedata.normalize("NFKC", launched.value)
            self.launches.append(_PyLaunch(name, self._site(node), self._origins.get(launched.value)))
        elif isinstance(launched, cst.Attribute):
            holder = dotted(launched.value)
            if holder is not None:
                self.attr_launches.append(
                    (holder, unicodedata.normalize("NFKC", launched.attr.value), self._site(node))
                )
        elif isinstance(func, cst.Attribute) and (holder := dotted(func.value)) is not None:
            # a dotted holder too: `pkg._C.op(x)` after `import pkg._C`
            self.attr_calls.append((holder, func.attr.value, self._site(node)))
        elif isinstance(func, cst.Subscript) and isinstance(func.value, cst.Call) and _getattr_of(func.value):
            self._run_time_launch(func.value, node)
        if _runs_with_grid(node) and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            # `k.run(x, n, BLOCK=128, grid=grid, warmup=False)`: a launch, its arguments less the run's own
            site = self._site(node, _RUN_OPTIONS)
            name = unicodedata.normalize("NFKC", func.value.value)
            self.launches.append(_PyLaunch(name, site, self._origins.get(func.value.value)))
        self._indirect(node)
        qual = self.resolver.qualname(func) or ""
        if qual in (f"{CPP_EXTENSION}.load", f"{CPP_EXTENSION}.load_inline"):
            # every call is listed: assigned or not, its ops called here or not
            line = self.where(self.get_metadata(PositionProvider, node).start.line)
            self.loads.append((qual.split(".")[-1], node, line, self._assigned.get(id(node))))
        if qual == _CUDA_EXTENSION or (isinstance(func, cst.Name) and func.value in self.extension_names):
            self.extensions.append((node, self.where(self.get_metadata(PositionProvider, node).start.line)))

    def _cuda_extension(self, value: cst.BaseExpression) -> bool:
        """Whether `value` is `CUDAExtension`, or a choice one of whose two is (`Extension = CppExtension
        if suffix == 'cpu' else CUDAExtension`, then `Extension(...)`: torch-scatter's, torch-sparse's
        and torch-cluster's setup.py; their extensions were not listed: twenty-sixth read)."""
        values = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,)
        return any(self.resolver.qualname(v) == _CUDA_EXTENSION for v in values)

    def _unwrapped(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """What a launch `X[grid](...)` runs: `X`, or `k` of `wrap_triton(k)` (torch's way to launch a
        Triton kernel in a `triton_op`: `k` was listed with no launch, its inputs made up, unsaid:
        twenty-sixth read), or of a name bound to it before (`launch = wrap_triton(k)`: a launch of
        `launch`, no kernel's; and `wrap_triton(KERNELS[op])[grid]` not followed: twenty-sixth read)."""
        if isinstance(value, cst.NamedExpr):  # `(launch := wrap_triton(k))[grid](...)`
            value = value.value
        if isinstance(value, cst.Name) and value.value in self._wrapped:
            return self._wrapped[value.value]
        if isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].keyword:
            if self.resolver.qualname(value.func) in _TRITON_WRAPPERS:
                return value.args[0].value
        if len(made := self._made_by(value)) == 1:
            # a kernel a function of this file makes and returns (`k = make(); k[grid](...)`): the
            # launch was nobody's, unsaid (twenty-eighth read's leftover)
            return cst.Name(made[0])
        return value

    def _made_by(self, value: cst.BaseExpression) -> tuple[str, ...]:
        """The kernels a call of a function of this file gives, where each of its `return`s gives a
        name (`make()`, `pick(flag)`); none for any other value."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            names = self._returns.get(value.func.value, ("",))
            return () if "" in names else names
        return ()

    def _indirect(self, node: cst.Call) -> None:
        """A launch of a kernel a dict or list holds (`KERNELS[key][grid](...)`), and a kernel subscripted
        with its grid and passed on (`functools.partial(k[grid], BLOCK=32)`): such a kernel was listed
        with no launch, unsaid (twenty-fifth read); now each kernel it may be is told so, in its scaffold."""
        func = node.func
        inner = self._unwrapped(func.value) if isinstance(func, cst.Subscript) else None
        if isinstance(func, cst.Subscript) and isinstance(inner, cst.Subscript):
            held = inner.value
            if isinstance(held, cst.Name) and held.value in self.held:
                how = f"one of the kernels `{held.value}` holds, picked at run time"
                for name in self.held[held.value]:
                    written = f"{held.value}[...][...](...)"
                    own = self._origins.get(name) is None  # (an imported one: said to the kernels of its name)
                    self.indirect.append(_PyLaunch(name, self._site(node), None, False, written, own, how))
            elif isinstance(held, cst.Name) and (origin := self._origins.get(held.value)):
                module = origin.rpartition(".")[0]
                how = f"one of the kernels `{held.value}` (imported from {module}) holds, picked at run time"
                written = f"{held.value}[...][...](...)"
                self.held_imported.append(_PyLaunch(held.value, self._site(node), origin, False, written, False, how))
            elif isinstance(held, (cst.Attribute, cst.Call)):
                self._held_through(held, node)
        elif isinstance(func, cst.Subscript) and isinstance(inner, cst.Call) and not _getattr_of(inner):
            self._launched_result(inner, node)
        for arg in node.args:
            self._not_called(arg.value, node)

    def _launched_result(self, call: cst.Call, node: cst.Call) -> None:
        """`pick(flag)[grid](...)` (or `k = pick(flag); k[grid](...)`) of a function of this file that
        returns one of several kernels: a launch of each it may be; of any other call's result, a
        note. Both were passed over, unsaid (twenty-eighth read's leftover)."""
        site = self._site(node)
        written = f"{dotted(call.func) or '...'}(...)[...](...)"
        made = self._made_by(call)
        if not made:
            self.notes.append(f"{place(self.rel, site.line, site.cell)}: `{written}` {_UNFOLLOWED}")
            return
        how = f"one of the kernels `{dotted(call.func)}(...)` returns, picked at run time"
        for name in made:
            own = self._origins.get(name) is None
            self.indirect.append(_PyLaunch(name, site, None, False, written, own, how))

    def _module_of(self, holder: str) -> str | None:
        """The module a dotted name of this file is (`ops` of `from . import ops`, `pkg.ops`), as
        `through_attributes` reads it; None where it is none porter knows."""
        head, _, rest = holder.partition(".")
        module = self._origins.get(head) or self.imports.names.get(head)
        return ".".join(p for p in (module, rest) if p) if module else None

    def _held_through(self, held: cst.Attribute | cst.Call, node: cst.Call) -> None:
        """A launch from a container reached through an attribute: a module's (`ops.KERNELS[op][grid]`,
        followed as an imported one), a class's (`self.KERNELS`, one its body or `self.KERNELS = {...}`
        binds), or built at run time (`getattr(mod, name)[op][grid]`): each was not followed, unsaid
        (twenty-fifth read's leftover); what porter cannot follow is said as a note."""
        site = self._site(node)
        holder = dotted(held.value) if isinstance(held, cst.Attribute) else None
        if isinstance(held, cst.Call):
            written = f"{dotted(held.func) or '...'}(...)[...][...](...)"
        else:
            written = f"{holder or '...'}.{held.attr.value}[...][...](...)"
        if holder == "self" and isinstance(held, cst.Attribute) and held.attr.value in self.class_held:
            how = f"one of the kernels `self.{held.attr.value}` holds, picked at run time"
            for name in self.class_held[held.attr.value]:
                own = self._origins.get(name) is None
                self.indirect.append(_PyLaunch(name, site, None, False, written, own, how))
            return
        module = self._module_of(holder) if holder and holder != "self" else None
        if module is not None and isinstance(held, cst.Attribute):
            how = f"one of the kernels `{holder}.{held.attr.value}` (of {module}) holds, picked at run time"
            origin = f"{module}.{held.attr.value}"
            self.held_imported.append(_PyLaunch(held.attr.value, site, origin, False, written, False, how))
            return
        self.notes.append(f"{place(self.rel, site.line, site.cell)}: `{written}` {_UNFOLLOWED}")

    def _run_time_launch(self, got: cst.Call, node: cst.Call) -> None:
        """`getattr(M, N)[grid](...)`: with N a literal, a launch of `M.N` (`ops.k[grid]`); else of a
        kernel of module M named at run time, said to each of M's kernels; else a note. Each was
        passed over in silence (twenty-fifth read's leftover)."""
        holder = dotted(got.args[0].value)
        name = got.args[1].value
        site = self._site(node)
        if holder is not None and isinstance(name, cst.SimpleString) and isinstance(name.evaluated_value, str):
            self.attr_launches.append((holder, unicodedata.normalize("NFKC", name.evaluated_value), site))
            return
        module = self._module_of(holder) if holder and holder != "self" else None
        written = f"getattr({holder or '...'}, ...)[...](...)"
        if module is None:
            self.notes.append(f"{place(self.rel, site.line, site.cell)}: `{written}` {_UNFOLLOWED}")
            return
        how = f"a kernel of {module} named at run time"
        self.module_launches.append(_PyLaunch("", site, module + ".*", False, written, False, how))

    def _bare_site(self, node: cst.CSTNode) -> CallSite:
        cell, line = self.where(self.get_metadata(PositionProvider, node).start.line)
        return CallSite(self.rel, line, [], cell)

    def _not_called(self, value: cst.BaseExpression, node: cst.CSTNode) -> None:
        """`k[grid]` passed as an argument or assigned, not called there: a launch porter does not follow."""
        if not isinstance(value, cst.Subscript):
            return
        how = "not called there (passed on or kept: `functools.partial`, a variable)"
        kept = self._unwrapped(value.value)  # (`wrap_triton(k)[grid]` kept: `k`'s, as `k[grid]` kept)
        if isinstance(kept, cst.Name):
            name = kept.value
            site = self._bare_site(node)
            own = self._origins.get(name) is None
            self.indirect.append(_PyLaunch(name, site, None, False, f"{name}[...]", own, how))
        elif isinstance(kept, cst.Attribute) and (holder := dotted(kept.value)) is not None:
            # `self.other = ops.k[grid]`: said to the kernels of its name (its own file's, of `self.k`)
            name = unicodedata.normalize("NFKC", kept.attr.value)
            site = self._bare_site(node)
            written = f"{holder}.{name}[...]"
            self.indirect.append(_PyLaunch(name, site, None, holder != "self", written, holder == "self", how))

    def through_attributes(self) -> list[_PyLaunch]:
        """The launches through an attribute (`ops.k[grid](...)`, `self._kernel[grid](...)`), each
        run from the module its holder is imported as (`from . import ops`, `import pkg.ops as ops`),
        or as the one name this file assigns to `self.k` (`self.k = kernel`) is launched; else kept
        as unresolved, said in the scaffold of each kernel it may run. They gave no call evidence
        and no word (twenty-first read's leftover)."""
        out = []
        for holder, name, site in self.attr_launches:
            written = f"{holder}.{name}[...](...)"
            if holder == "self":
                assigned = sorted(self.self_attrs.get(name, ()))
                if len(assigned) != 1 or not assigned[0]:
                    may = [n.rpartition(".")[2] for n in assigned if n] or [name]
                    out += [_PyLaunch(n, site, None, True, written, own_file=True) for n in may]
                    continue
                holder, _, name = assigned[0].rpartition(".")
                if not holder:  # `self.k = kernel`: as a plain name's launch
                    out.append(_PyLaunch(name, site, self._origins.get(name)))
                    continue
            head, _, rest = holder.partition(".")
            module = self._origins.get(head) or self.imports.names.get(head)
            origin = ".".join(p for p in (module, rest, name) if p) if module else None
            out.append(_PyLaunch(name, site, origin, True, "" if origin else written))
        return out


# a Triton launch from a container or a module porter cannot follow: an object's, one built at run time
_UNFOLLOWED = (
    "launches a kernel picked at run time from an object porter does not follow (an instance's, a "
    "function's result, one built at run time): which kernels it may run is not read"
)


# an assignment to a tuple porter cannot pair with its value, where the value spells a kernel's wrapper
_UNPAIRED = (
    "binds a kernel's `wrap_triton(...)` to a tuple porter cannot pair with its value (a starred target, "
    "a value of another length or built at run time): the launches of its names are not read"
)
# what spells torch's Triton wrappers (`_TRITON_WRAPPERS`'s last names): the cheap test before a note
_WRAPPER_WORDS = re.compile(r"\b(?:wrap_triton|capture_triton)\b")


def _spells_wrapper(text: str) -> bool:
    return _WRAPPER_WORDS.search(text) is not None


def _names_bound(target: cst.BaseExpression | cst.BaseElement) -> list[str]:
    """The plain names a tuple target binds, nested and starred ones too."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.StarredElement):
        return _names_bound(target.value)
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_bound(e.value if isinstance(e, cst.Element) else e)]
    return []


def _names_held(
    value: cst.Dict | cst.List | cst.Tuple, unwrap: Callable[[cst.BaseExpression], cst.BaseExpression]
) -> list[str]:
    """The plain names a dict's values, a list or a tuple hold (`{"a": k_a}` -> `k_a`), each as `unwrap`
    reads it (`{"a": wrap_triton(k_a)}` -> `k_a`: it held none, unsaid)."""
    held = [unwrap(e.value) for e in value.elements if isinstance(e, (cst.DictElement, cst.Element))]
    return [n.value for n in held if isinstance(n, cst.Name)]


def _getattr_of(value: cst.BaseExpression) -> bool:
    """Whether `value` is a plain `getattr(M, N)` (two arguments, no keywords)."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "getattr"
        and len(value.args) == 2
        and not any(a.keyword or a.star for a in value.args)
    )


_CUDA_EXTENSION = f"{CPP_EXTENSION}.CUDAExtension"
# torch's wrappers of a Triton kernel that a launch subscripts as it would the kernel
# (`wrap_triton(k)[grid](x)`; `capture_triton` its name in torch 2.5)
_TRITON_WRAPPERS = frozenset(
    ("torch.library.wrap_triton", "torch.library.capture_triton", "torch._library.capture_triton")
)


@dataclass(frozen=True)
class _PyLaunch:
    """A Triton launch `k[grid](...)`, by the kernel's name: where it is, the module the name is
    imported from (None: the launching file's own); `attribute` where it is launched through one
    (`ops.k[grid]`: run from that module, never the file's own kernel), and `unresolved` the
    launch as written where porter cannot tell its module (an unresolved `self.kernel[grid]` is
    said to its file's kernels of that name only: vllm 0.34.0 has ten other `kernel`s)."""

    name: str
    site: CallSite
    origin: str | None
    attribute: bool = False
    unresolved: str = ""
    own_file: bool = False  # (an unresolved `self.k`: said to its own file's kernels of that name only)
    how: str = "whose module porter cannot resolve"  # (of an unresolved launch: why)


# the keywords of a Triton kernel's `run` that are the launch's, no argument of the kernel (triton 3.x's
# `JITFunction.run(*args, grid, warmup, **kwargs)`)
_RUN_OPTIONS = frozenset({"grid", "warmup"})


def _runs_with_grid(node: cst.Call) -> bool:
    """Whether `node` is `name.run(..., grid=...)`: a Triton kernel run without `[grid]` (`kernel.run(*args,
    grid=grid, warmup=False)`), whose launch was not read, so the kernel had no call sites and its scaffold's
    inputs none to follow (thirty-first scaffold read's leftover)."""
    func = node.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "run"
        and any(a.keyword is not None and a.keyword.value == "grid" for a in node.args)
    )


def _arg_text(module: cst.Module, arg: cst.Arg) -> str:
    """An argument as written, without the comma, comments and line breaks around it."""
    keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
    value = " ".join(module.code_for_node(arg.value).split())
    return f"{arg.star}{keyword}{value}"


def _strings(node: cst.BaseExpression | None) -> list[str]:
    if isinstance(node, (cst.List, cst.Tuple)):
        out = []
        for el in node.elements:
            if isinstance(el.value, cst.SimpleString):
                v = el.value.evaluated_value
                out.append(v if isinstance(v, str) else v.decode())
        return out
    if isinstance(node, cst.SimpleString):
        v = node.evaluated_value
        return [v if isinstance(v, str) else v.decode()]
    return []


def _arg(call: cst.Call, name: str, index: int) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if len(positional) > index else None


def _missing(path: Path, root: Path, sources: cst.BaseExpression | None) -> str:
    """`; not in the tree: …` for literal sources found neither beside the file nor under root."""
    base = root if root.is_dir() else root.parent
    gone = [src for src in _strings(sources) if not (path.parent / src).exists() and not (base / src).exists()]
    return f"; not in the tree: {', '.join(gone)}" if gone else ""


def _sources(root: Path, base: Path) -> list[tuple[str, bytes]]:
    found = []
    for path in _python_files(root, notebooks=False):  # what other modules import
        try:
            found.append((os.path.relpath(path, base), lf_line_ends(read_regular(path, MAX_PARSE_BYTES))))
        except OSError:  # `Unreadable` too, past the size porter parses: `scan` reports it
            continue
    return found


def _body(code: str, start: int, text: str) -> str:
    """The `{...}` body that follows `start` in C++ source `text`, its braces counted in `code`
    (`text` with its comments and literals blanked, of the same offsets), or "". Counted in
    `text`, a `}` in a comment, a string or a character literal ended the body there, and what
    the kernel wrote after it was not seen (`mutates_args=()`: nineteenth read)."""
    open_at = code.find("{", start)
    if open_at < 0 or ";" in code[start:open_at]:
        return ""  # a declaration without a body
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at : i + 1]
    return text[open_at:]


def _search_for_source(search: _Search, root: Path, path: Path, known: dict[Path, _Search]) -> _Search:
    """`search` with the `-I` folders of the build files whose project holds the source `path` only (`include_dirs`),
    once a folder into `known`: a vendored project's folders were searched for every source of the tree."""
    folder = Path(os.path.realpath(path.parent))
    if folder not in known:
        dirs = include_dirs(root, search.base, folder) if search.dirs else ()
        known[folder] = replace(search, dirs=dirs)
    return known[folder]


def scan(root: Path, limit: float | None = DEFAULT_FILE_TIMEOUT) -> Inventory:
    """The kernels under `root`. Each file is read in a process of its own for at most `limit`
    seconds (None: no limit): a file that stalls or overflows the parser is a problem of the
    inventory, named, and the scan goes on (porter.pipeline.bounded)."""
    inv = Inventory()
    base = root if root.is_dir() else root.parent
    python_sources = _sources(root, base)
    hip: list[Path] = []
    cuda_files, globals_, definers, hosts = _cuda_files(root, hip)
    inv.problems.extend(_hip_note(hip, base))
    cuda_sources = [os.path.relpath(p, base) for p in cuda_files]
    found = _Found(
        imported=cuda_only_imports(python_sources, None, cuda_sources),  # CUDA-only names from other modules
        compiled=extension_imports(python_sources, cuda_sources),  # the project's own compiled extensions
    )
    for path in _python_files(root):
        _scan_python_bounded(path, os.path.relpath(path, base), root, inv, found, limit)
    for launch in found.launches:
        _attach_launch(found.triton.get(launch.name, []), launch, base.name)
    _attach_held(found, base.name)
    _attach_module_launches(found, base.name, limit)
    if found.triton:
        inv.problems.extend(found.notes)
    _triton_helpers(inv.kernels)
    for ext, calls in found.ext_calls.items():
        _attach_extension_calls(inv, ext, calls, found.ext_why[ext])
    macros: list[_Macro] = []
    passed: set[str] = set()
    # (the `-I` folders for the host C++ files too: a project of `.cpp` sources alone read its keys' headers beside
    # them only, and a key `#define`d in `CppExtension(include_dirs=["inc"])`'s `inc/keys.h` was "not read":
    # thirty-fifth read, scaf2)
    dirs = include_dirs(root, base) if cuda_files or hosts else ()
    search = _Search(Path(os.path.realpath(base)), dirs, globals_) if cuda_files or hosts else _Search(base)
    search = replace(search, preludes=_preludes(definers, search, inv.problems)) if definers else search
    searches: dict[Path, _Search] = {}
    for path in cuda_files:
        rel = os.path.relpath(path, base)
        try:
            one = bounded(_scan_cuda_alone, path, rel, _search_for_source(search, root, path, searches), limit=limit)
        except Failed as exc:
            inv.problems.append(f"{path_name(rel)}: {exc}")
            passed.add(rel)
            continue
        inv.kernels.extend(one.kernels)
        inv.problems.extend(one.problems)
        macros.extend(one.macros)
        inv.launches.extend(one.launches)
        inv.api_launches.extend(one.api_launches)
        inv.registered.extend(one.registered)
        inv.spelled.extend(one.spelled)
    _macro_uses(cuda_files, base, macros, inv, limit, passed, search)
    for path, data in hosts:
        inv.api_launches.extend(_host_api_launches(data, os.path.relpath(path, base)))
        one_search = _search_for_source(search, root, path, searches)
        inv.registered.extend(_native_registered(data, os.path.relpath(path, base), path, one_search, inv.problems))
    inv.registered.extend(_python_registered(python_sources, inv.problems))
    # a kernel declared in a header and defined in a .cu file is one kernel, the definition
    # (the declaration was a second, `add_`, of parameters named after their types: seventeenth read)
    defined = {k.name for k in inv.kernels if k.kind == "cuda" and k.source}
    inv.kernels = [
        k
        for k in inv.kernels
        if not (k.kind == "cuda" and k.detail.startswith("__global__") and not k.source and k.name in defined)
    ]
    for k in inv.kernels:
        if k.kind == "cuda" and k.detail.startswith("__global__") and not k.source:
            k.detail += f"; {DECLARED_ONLY}"
    inv.kernels = _twins(inv.kernels)
    inv.problems.extend(_wrapped_only_notes(inv.registered))
    inv.problems.extend(_spelled_across(inv.spelled))
    _attach_launches(inv)
    _qualify(inv.kernels)
    return inv


# a Python kernel's key as the table says it: `"default"` (a custom op's own function) runs on every device
_PYTHON_KEYS = {"default": "any", python_ops.UNREAD: "not read: a key given by a name or an expression"}


def _python_registered(sources: list[tuple[str, bytes]], problems: list[str] | None = None) -> list[Registered]:
    """The kernels the project's Python files register (`python_ops`: `lib.impl("a", a_cpu, "CPU")`,
    `@a.register_kernel("cpu")`): lint read them, the table listed none, so an op with a CPU kernel in Python was
    listed with its CUDA kernel only (thirty-second scaffold read's leftover). A note in `problems` for each file that
    registers a kernel of an op porter cannot read (`f"myops::{name}"`, a parameter): its namespace's ops (every
    one's, where that is unread too) get no CUDA-only verdict, which was said nowhere (thirty-fourth scaf2 read's
    price: torch 2.9's own files lose six right ones so, `symm_mem`'s)."""
    kernels = python_ops.registered_kernels(sources)
    problems = [] if problems is None else problems
    for path, ns, key in dict.fromkeys(native_ops.unjudged_by_python(kernels)):
        space = f"`{ns}`" if ns is not None else "any namespace (its namespace is not read either)"
        device = f"`{key}`" if key != python_ops.UNREAD else "a key porter cannot read"
        problems.append(
            f"{path_name(path)}: registers a kernel for {device} of an op porter cannot read (a name given at run "
            f"time): no op of {space} is taken for CUDA-only"
        )
    problems.extend(_every_namespace_notes(kernels))
    return [
        Registered(path, ns, op, _PYTHON_KEYS.get(key, key))
        for path, ns, op, key in kernels
        # (an op or a namespace porter cannot read: lint gives no verdict on its namespace's ops, or on the op's)
        if python_ops.UNREAD not in (ns, op)
    ]


def _every_namespace_notes(kernels: list[tuple[str, str, str, str]]) -> list[str]:
    """A note for each file that registers a kernel of an op in a namespace porter cannot read (`Library(*ARGS)`): the
    op of that name is taken for not CUDA-only in every namespace, and the table leaves the kernel out, unsaid
    (thirty-fifth read, scaf3: the scaffold read's `Library(*ARGS)` rule)."""
    notes = []
    for path, op, key in dict.fromkeys(native_ops.unjudged_in_every_namespace(kernels)):
        device = f"`{key}`" if key != python_ops.UNREAD else "a key porter cannot read"
        notes.append(
            f"{path_name(path)}: registers a kernel for {device} of `{op}` in a namespace porter cannot read (given at "
            f"run time): no op `{op}` of any namespace is taken for CUDA-only"
        )
    return notes


def _wrapped_only_notes(registered: list[Registered]) -> list[str]:
    """A note for each op registered for CUDA and otherwise only for keys that wrap a kernel (`Autograd`,
    `ADInplaceOrView`): such a kernel that redispatches reaches no kernel on another device (the op is then
    CUDA-only), one that computes runs there; porter does not read which, and the op was counted as another
    device's, unsaid (thirtieth read's leftover). A macro's namespace counts for every namespace."""
    keys: dict[tuple[str | None, str], set[str]] = {}
    where: dict[tuple[str | None, str], str] = {}
    for r in registered:
        keys.setdefault((r.namespace, r.op), set()).add(r.key)
        where.setdefault((r.namespace, r.op), r.path)
    out = []
    for (ns, op), found in keys.items():
        wrappers = native_ops.wrapped_only(found | keys.get((None, op), set())) if ns is not None else []
        if wrappers:
            out.append(
                f"{path_name(where[(ns, op)])}: `{ns}::{op}` has a CUDA kernel and {', '.join(wrappers)} ones only: "
                "if those redispatch (as most do) it runs on CUDA tensors only, if they compute it runs on others "
                "too; porter does not read which, so it does not take the op for CUDA-only"
            )
    return out


def _qualify(kernels: list[Kernel]) -> None:
    """A CUDA kernel whose name another namespace's kernel also has is named with its namespace
    (`fp8::scale` and `int8::scale`): the two were listed, scaffolded and told apart as "an
    overload" of one name (twenty-second read's leftover)."""
    spaces: dict[str, set[str]] = {}
    for k in kernels:
        if k.kind == "cuda":
            spaces.setdefault(k.name, set()).add(k.namespace)
    for k in kernels:
        if k.kind == "cuda" and k.namespace and len(spaces[k.name]) > 1:
            k.name = f"{k.namespace}::{k.name}"


def _attach_launch(kernels: list[Kernel], launch: _PyLaunch, top: str) -> None:
    """A Triton launch as a call of the kernel it runs (`_launch_target`); where porter cannot tell
    which, each kernel of its name says so in its scaffold (`unresolved`), not nothing."""
    path = None if launch.attribute else launch.site.path
    k = None if launch.unresolved else _launch_target(kernels, path, launch.origin, top)
    if k is not None:
        k.calls.append(launch.site)
        return
    if launch.own_file:
        kernels = [k for k in kernels if k.path == launch.site.path]
    where = place(launch.site.path, launch.site.line, launch.site.cell)
    why = (
        f"launched as `{launch.unresolved}` at {where}, {launch.how}"
        if launch.unresolved
        else f"launched at {where}, which may run this kernel or another of its {len(kernels)} of this name"
    )
    for k in kernels:
        k.unresolved.append(why + ": its arguments are not read as this kernel's")


# a plain call `name(` (not `tl.name(`): how one Triton kernel calls another, a `@triton.jit` helper;
# and a module's `module.name(`
_PLAIN_CALL = re.compile(r"(?<![\w.])(\w+)[ \t]*\(")
_MODULE_CALL = re.compile(r"(?<![\w.])(\w+)\.(\w+)[ \t]*\(")
# a bare name passed as an argument (`tl.reduce(x, 0, _max)`, `combine_fn=_add`): how a kernel hands
# a `@triton.jit` combine function to `tl.reduce`/`tl.associative_scan`
_PASSED = re.compile(r"[(,=]\s*(\w+)\s*(?=[,)])")


def _triton_helpers(kernels: list[Kernel]) -> None:
    """A Triton kernel never launched that other Triton kernels call, or pass as a function (a combine
    function of `tl.reduce`), is their helper, not an op: said in its detail, and no scaffold of its
    own is written (it got one, an op no code runs; a passed one did until the twenty-fifth read).
    The callers of its own file where it has any (two files may each define a helper of one name).
    A call through its module's name (`helpers.gelu(x)` of pkg/helpers.py's `gelu`) is one too: it
    was not read, and the helper kept an op of its own (twenty-fourth read's leftover); and through a
    name the module is imported as (`H.gelu(x)` of `import pkg.helpers as H`: twenty-fifth read's)."""
    triton = [k for k in kernels if k.kind == "triton"]
    called = {id(k): set(_PLAIN_CALL.findall(k.source)) - {k.name} for k in triton}  # (not its `def` line)
    through = {id(k): {(k.modules.get(m, m), f) for m, f in _MODULE_CALL.findall(k.source)} for k in triton}
    # (not its parameters: its `def` line's, and a name its parameter shadows is no kernel's)
    passed = {id(k): set(_PASSED.findall(k.source)) - {k.name, *_param_words(k.params)} for k in triton}
    for k in triton:
        if k.calls or k.unresolved:
            continue
        attribute = (_module_name(k.path), k.name)
        callers = [
            o
            for o in triton
            if k.name in called[id(o)] | passed[id(o)] or (o.path != k.path and attribute in through[id(o)])
        ]
        k.helper_of = sorted({o.name for o in [o for o in callers if o.path == k.path] or callers})
        if k.helper_of:
            calls = any(k.name in called[id(o)] or attribute in through[id(o)] for o in callers)
            how = "called" if calls else "passed as a function"
            k.detail += f"; a helper of {', '.join(k.helper_of)}: {how} in their code, never launched"


def _param_words(params: list[str]) -> set[str]:
    """The names of a Python function's parameters (`BLOCK: tl.constexpr = 4` -> `BLOCK`)."""
    return {p.lstrip("*").split(":")[0].split("=")[0].strip() for p in params}


def _module_name(path: str) -> str:
    """The name a module of file `path` is imported by (`pkg/helpers.py` -> `helpers`, `pkg/__init__.py` -> `pkg`)."""
    parts = PurePosixPath(path.replace("\\", "/")).with_suffix("").parts
    return parts[-2] if len(parts) > 1 and parts[-1] == "__init__" else parts[-1] if parts else ""


def _attach_launches(inv: Inventory) -> None:
    """Each C++ launch (`k<<<grid, block>>>(args)`, read in the .cu/.cuh files) as a call of the
    CUDA kernels of its name that take as many arguments, those of its own file if any: a CUDA
    kernel had no call sites, so no `make_inputs` values (twentieth read's leftover)."""
    by_name: dict[str, list[Kernel]] = {}
    for k in inv.kernels:
        if k.kind == "cuda" and k.source:
            by_name.setdefault(k.name, []).append(k)
    inv.launches += [(name, site) for name, site in inv.api_launches if isinstance(site, CallSite)]
    for written, site in inv.launches:
        qualifier, _, name = written.rpartition("::")
        fits = [k for k in by_name.get(name, ()) if _takes(k.params, len(site.args))]
        if not fits:  # (`kernel<<<` of a function pointer or a launcher's parameter: dropped, unsaid)
            inv.problems.append(_unattached(written, site, name in by_name))
        # `fp8::k<<<` runs a kernel of a namespace ending in `fp8` (from inside `vllm`: `vllm::fp8`)
        if qualifier:
            fits = [k for k in fits if ("::" + k.namespace).endswith("::" + qualifier)] or fits
        fits = [k for k in fits if k.path == site.path] or fits
        ran, unread = _by_template(fits, site.template)
        for k in ran:
            k.calls.append(site)
        for k in fits if unread else ():
            where = place(site.path, site.line, None)
            k.unresolved.append(
                f"launched at {where}, {unread}: it may run this kernel or another of its {len(fits)} of this "
                "name, and its arguments are not read as this kernel's"
            )
    inv.launches = []
    _attach_api_launches(inv, by_name)


def _attach_api_launches(inv: Inventory, by_name: dict[str, list[Kernel]]) -> None:
    """Each launch through the runtime's or the driver's API as its kernels' unresolved note."""
    for name, why in inv.api_launches:
        if isinstance(why, CallSite):  # (attached as a `<<<` launch is)
            continue
        if not name:  # (a launch of no kernel porter knows: the scan's note)
            inv.problems.append(why)
        elif name not in by_name:  # (`cudaLaunchKernel((void*)k, ...)` of no listed `k`: dropped, unsaid)
            inv.problems.append(f"`{name}` {why}: {_NOT_LISTED}")
        for k in by_name.get(name, ()):
            k.unresolved.append(why)
    inv.api_launches = []


_NOT_LISTED = (
    "a name no kernel porter lists has (a function pointer, a launcher's parameter, a kernel outside the tree)"
)


def _unattached(written: str, site: CallSite, named: bool) -> str:
    """The note of a `<<<` launch that runs no kernel porter lists: of a name no kernel has (a
    function pointer, a launcher's parameter, a kernel outside the tree), or of too many or too few
    arguments for each kernel of its name."""
    where = place(site.path, site.line, None)
    if named:
        why = f"with {len(site.args)} argument(s), which no kernel of that name porter lists takes"
    else:
        why = _NOT_LISTED
    return f"{where}: a launch of `{written}`, {why}: the kernel it runs is not read"


def _by_template(fits: list[Kernel], args: list[str]) -> tuple[list[Kernel], str]:
    """Of kernels `fits`, those a launch of template arguments `args` runs: the `template <>`
    specialization for them, else the others (a `k<double><<<` launch was given to the primary
    template and to the specialization for `double`: twenty-fifth read's leftover). Where a
    specialization is in `fits` and the launch's arguments are deduced (`k<<<` of a `double*`), or a
    specialization's own are (`template <> void k(double* x)`), none, and why: both went to the
    primary template, as the compiler does not (twenty-fifth read's leftover)."""
    specs = [k for k in fits if k.template == [""]]
    if not specs:
        return fits, ""
    if not args:
        return [], "whose template arguments are deduced from its arguments' types (porter does not read them)"
    wanted = ["".join(a.split()) for a in args]
    exact = [k for k in specs if k.specialises == wanted]
    if exact:
        return exact, ""
    if any(not k.specialises for k in specs):
        return [], "where a `template <>` specialization deduces its template arguments (porter does not read them)"
    return [k for k in fits if k.template != [""]], ""


def _word_at(code: str, word: str, start: int, end: int) -> int:
    """Where `word` is first written whole in `code[start:end]`, or -1: a kernel `d<double>`'s name was
    found in `void`, and its template arguments read as none. By hand: a pattern per name is built at
    call time."""
    at = code.find(word, start, end)
    while at >= 0:
        before = code[at - 1] if at else " "
        after = code[at + len(word)] if at + len(word) < len(code) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            return at
        at = code.find(word, at + 1, end)
    return -1


def _specialised(code: str, start: int, name: str) -> list[str]:
    """The template arguments of the `template <>` kernel whose head is at `start` of `code`
    (`double` of `__global__ void k<double>(`), blanks taken out; [] where its name has none."""
    at = _word_at(code, name, start, start + _LAUNCH_READ)
    after = at + len(name) if at >= 0 else -1
    while 0 <= after < len(code) and code[after] in " \t\r\n":
        after += 1
    if after < 0 or not code.startswith("<", after):
        return []
    end = _closing(code, after, _ANGLE_BRACKETS, "<")
    return ["".join(a.split()) for a in _top_level_split(code[after + 1 : end])] if end is not None else []


def _takes(params: list[str], count: int) -> bool:
    """Whether a C++ function of `params` takes `count` arguments (its defaults may be left out, a
    parameter pack takes any number)."""
    declared = [p for p in params if p.strip() not in ("", "void")]
    packs = sum(1 for p in declared if "..." in p.split("=")[0])
    needed = len([p for p in declared if "=" not in p]) - packs
    return needed <= count and (packs > 0 or count <= len(declared))


# a C++ launch: `k<<<grid, block, smem, stream>>>(args)`, `ns::k<float, 128><<<...>>>(...)`; read at most
# this many per file, each at most this long (its configuration and its arguments), its name and
# template arguments this far back
_LAUNCHES = 4096
_LAUNCH_READ = 8192
_LAUNCH_BACK = 512
_PARENS = re.compile(r"[()]")
_ANGLE_BRACKETS = re.compile(r"[<>]")
# a template's angle bracket, not one of `<=`, `<<`, `>=`, `->`: flash-attn's `auto kernel =
# &k<..., Kernel_traits::kHeadDim <= 128, ...>` was never closed, its launch attached to no kernel
# (twenty-seventh read)
_ANGLE = re.compile(r"(?<!<)<(?![<=])|(?<![-=])>(?!=)")
# the same, or a parenthesis: a `>` in parentheses compares (`&fk<float, (X > 128), 2>` was closed
# at it, its launch attached to no kernel: twenty-seventh read's leftover)
_ANGLE_OR_PAREN = re.compile(_ANGLE.pattern + r"|[()]")
_OPENS = re.compile(r"\s*\(")


def _launches(
    code: str, lines: _Lines, rel: str, defines: Sequence[tuple[int, int]] = (), kept: str = ""
) -> list[tuple[str, CallSite]]:
    """The launches in `code` (comments and strings blanked), by the kernel's name: where each is,
    its arguments (as `kept`, the same code with its literals, spells them) and its template
    arguments, each an alias of the file's in force there taken as what it stands for (vllm's
    launcher `using Idx_t = int64_t; ... k<..., Idx_t, ...><<<`).
    Bounded: `_LAUNCHES` of them, each read `_LAUNCH_READ` forward and `_LAUNCH_BACK` back."""
    out: list[tuple[str, CallSite]] = []
    aliases: dict[str, list[tuple[_Key, str | None]]] = {}
    dispatches = _Dispatches(code if "<<<" in code and "scalar_t" in code else "")
    scopes = _Scopes(code if "<<<" in code else "", defines)
    if "<<<" in code:
        for where, name, value in sorted(_type_aliases(code)):
            aliases.setdefault(name, []).append(((where,), value))
    at = 0
    for _ in range(_LAUNCHES):
        start = code.find("<<<", at)
        if start < 0:
            break
        close = code.find(">>>", start + 3, start + _LAUNCH_READ)
        at = start + 3 if close < 0 else close + 3
        opened = _OPENS.match(code, at) if close >= 0 else None
        end = _closing(code, opened.end() - 1, _PARENS, "(") if opened else None
        if opened is None or end is None:
            continue
        at = end + 1
        launched, template = _launch_head(code[max(0, start - _LAUNCH_BACK) : start])
        if launched is None:
            continue
        name = bare = launched.rsplit("::", 1)[-1]  # (`launched` keeps the `ns::` written before it)
        if not template:  # `auto kernel = &k<Ktraits>; kernel<<<...>>>(params)` (causal-conv1d, mamba-ssm)
            name, template = _pointed(code[max(0, start - _POINTER_BACK) : start], name) or (name, template)
        args = [" ".join(a.split()) for a in _spelled(_top_level_split(code[opened.end() : end]), kept, opened.end())]
        template = [_alias_of(t, _InForce(aliases, start)) for t in template]
        site = CallSite(rel, lines.of(start), [] if args == [""] else args, template=template)
        if "scalar_t" in template:
            site.dispatch = "\n".join(dispatches.around(start))  # (read by `_dispatched`)
        site.locals = {n: (v, lines.of(where)) for n, (v, where) in scopes.locals_at(start, site.args).items()}
        site.pointees = scopes.pointees_at(start, site.args)
        out.append((launched if name == bare else name, site))
    return out


def _spelled(pieces: list[str], kept: str, at: int) -> list[str]:
    """`pieces` (a list cut at its commas, read from offset `at` of code whose literals are blanks) as
    `kept` spells them: a launch's `'c'` was an empty argument in the listing and the scaffold."""
    if not kept:
        return pieces
    out = []
    for piece in pieces:
        out.append(kept[at : at + len(piece)])
        at += len(piece) + 1
    return out


# a launch through the runtime's API, and which of its arguments is the kernel (`cudaLaunchKernelEx`
# takes its configuration first): each takes the kernel's arguments as an array of their addresses,
# `void** args`, which porter does not read (a kernel launched only so listed no launch, unsaid),
# but the C++ template `cudaLaunchKernelEx(&config, k<T>, a, b)`, which takes them as a call does
# (`_ex_launch`: they were said to be an array porter does not read: twenty-eighth read)
# and the driver API's (`cuLaunchKernel(f, ...)`), a `CUfunction` named by `cuModuleGetFunction(&f,
# module, "k")` or `cuLibraryGetKernel(&f, library, "k")` (a kernel of a module loaded at run time:
# twenty-fifth read's leftover)
_API_LAUNCH = re.compile(
    r"(?<![\w.])(cudaLaunchKernel|cudaLaunchCooperativeKernel|cudaLaunchKernelExC?"
    r"|cuLaunchKernel|cuLaunchCooperativeKernel|cuLaunchKernelEx)\s*\("
)
_API_KERNEL_AT = {"cudaLaunchKernelEx": 1, "cudaLaunchKernelExC": 1, "cuLaunchKernelEx": 1}
_GET_FUNCTION = re.compile(
    r"(?<![\w.])(?:cuModuleGetFunction|cuLibraryGetKernel)\s*\(\s*&\s*(\w+)\s*,[^,;()]{0,200},\s*\"(\w+)\""
)
_ANY_LOOKUP = re.compile(r"(?<![\w.])(?:cuModuleGetFunction|cuLibraryGetKernel)\s*\(\s*&\s*(\w+)")
# a `cuLaunchKernel` of a `CUfunction` no lookup of its file names by a literal: it ran a kernel
# porter does not know, unsaid (twenty-fifth read's leftover)
_UNNAMED_FUNCTION = (
    "a `CUfunction` no `cuModuleGetFunction` or `cuLibraryGetKernel` of this file names by a literal "
    "(looked up through another function or file, or by a name built at run time): the kernel it runs is not read"
)
# a runtime API launch whose kernel argument is no name (an array's element, a call's result): it
# was dropped, unsaid (twenty-eighth read)
_UNNAMED_KERNEL = "no kernel's name porter reads (an expression: the kernel it runs is not read)"
# and of one a lookup of its file names by a literal and another by a name built at run time
_RUN_TIME_LOOKUP = "which a lookup of this file names at run time: the kernel it runs there is not read"
# the host C++ files read for such launches only (a `.cpp` launching a `.cu`'s kernel), by a byte of each
_HOST_SUFFIXES = (".cpp", ".cc", ".cxx")
_API_BYTES = (b"cudaLaunch", b"cuLaunch")


def _api_kernel(arg: str) -> str | None:
    """The kernel an API launch's argument names, casts and `&` before it, template arguments after it
    (`(void*)k`, `(const void*)&ns::k<Tr<2>>`, `reinterpret_cast<void*>(k)`), or None. By hand: a
    pattern searched for a name at the end was quadratic on a long word."""
    text = arg.strip()
    if text.endswith(")"):  # a cast's operand (`static_cast<void*>(k)`), or a call's result: no name
        back = _closing(text[::-1], 0, _PARENS, ")")
        at = len(text) - 1 - back if back is not None else 0
        head = text[:at].rstrip()
        if head[-1:].isalnum() or head[-1:] == "_":
            return None  # (`pick(i)`: its `i` was taken for the kernel)
        text = text[at + 1 : -1].strip()
    if text.endswith(">"):  # (a `>` in parentheses compares: `tk<float, (X > 2) ? 4 : 8>` had no name)
        for at, depth in _template_angles(text, backwards=True):
            if depth == 0:
                text = text[:at].rstrip()
                break
    at = len(text)
    while at and (text[at - 1].isalnum() or text[at - 1] == "_"):
        at -= 1
    return text[at:] or None


def _api_launches(code: str, lines: _Lines, rel: str, commented: str = "") -> list[tuple[str, str | CallSite]]:
    """The kernels `code` launches through the runtime's API, by name (a variable pointing to one,
    `auto kernel = &k<Ktraits>;`, read as `<<<` reads it), or the driver's (a `CUfunction` the file
    names by `cuModuleGetFunction`, read in `commented`: its strings kept), each with the TODO its
    scaffold says."""
    out: list[tuple[str, str | CallSite]] = []
    named_by = _looked_up(commented) if "Get" in commented else {}
    gate = "cudaLaunch" in code or "cuLaunch" in code
    for call in itertools.islice(_API_LAUNCH.finditer(code) if gate else (), _LAUNCHES):
        read = code[call.end() - 1 : call.end() - 1 + _LAUNCH_READ]
        end = _closing(read, 0, _PARENS, "(")
        args = _top_level_split(read[1:end]) if end is not None else []
        at = _API_KERNEL_AT.get(call.group(1), 0)
        named = _api_kernel(args[at][-_LAUNCH_BACK:]) if len(args) > at else None
        where = place(rel, lines.of(call.start()), None)
        how = f"`{call.group(1)}`"
        if call.group(1).startswith("cuLaunch") and named not in named_by:  # (no kernel's: the scan's note)
            written = " ".join(args[at].split())[:80] if len(args) > at else "?"
            out.append(("", f"{where}: {how} launches `{written}`, {_UNNAMED_FUNCTION}"))
            continue
        if named is None:  # (`table[i]`, `pick(i)`: dropped, unsaid)
            written = " ".join(args[at].split())[:80] if len(args) > at else "?"
            out.append(("", f"{where}: {how} launches `{written}`, {_UNNAMED_KERNEL}"))
            continue
        pointed = _pointed(code[max(0, call.start() - _POINTER_BACK) : call.start()], named)
        packed = any(a.rstrip().endswith("...") for a in args[2:])  # (`args...`: as many as the pack holds)
        if call.group(1) == "cudaLaunchKernelEx" and len(args) > 2 and not packed:
            kept = _spelled(args, _spliced(commented) if commented else "", call.end())
            out.append(_ex_launch(kept, pointed, CallSite(rel, lines.of(call.start()), [])))
            continue
        if call.group(1).startswith("cuLaunch"):
            how += " (a `CUfunction` of a module loaded at run time)"
            if len(may := named_by[named]) > 1:
                each = ", ".join(f"`{n}`" if n else "a name built at run time" for n in may)
                how += f", one of {each} (this file looks `{named}` up as each)"
            why = f"launched through {how} at {where}, whose arguments (an array of their addresses)"
            out += [(n, why + " porter does not read") for n in may if n]
            if "" in may:
                out.append(("", f"{where}: `{call.group(1)}` launches `{named}`, {_RUN_TIME_LOOKUP}"))
            continue
        array = "a parameter pack" if packed else "an array of their addresses"
        why = f"launched through {how} at {where}, whose arguments ({array})"
        out.append((pointed[0] if pointed else named, why + " porter does not read"))
    return out


def _ex_launch(args: list[str], pointed: tuple[str, list[str]] | None, site: CallSite) -> tuple[str, CallSite]:
    """The kernel `cudaLaunchKernelEx(&config, k<T>, a, b)` launches (`args`: its arguments as
    written), with `site` given the template arguments and the kernel's arguments it passes."""
    name, site.template = pointed or _assigned("= " + args[1] + ";") or (_api_kernel(args[1]) or "", [])
    site.args = [" ".join(a.split()) for a in args[2:]]
    return name, site


def _looked_up(commented: str) -> dict[str, list[str]]:
    """Each `CUfunction` to the kernels the file's lookups name it (`cuModuleGetFunction(&f, m, "k")`):
    a variable looked up as two kernels (in two functions) was the last one's, its launch of the
    first given to the second (twenty-sixth read); now a launch of it is said to each."""
    out: dict[str, list[str]] = {}
    literal = _GET_FUNCTION.findall(commented)
    for var, name in literal:
        if name not in out.setdefault(var, []):
            out[var].append(name)
    # one of its lookups by a name no literal of this file spells (`cuModuleGetFunction(&f, m, name)`):
    # "" among them, the launch said as not read too (it was the literal lookup's kernel's alone)
    looked = collections.Counter(_ANY_LOOKUP.findall(commented))
    looked.subtract(var for var, _ in literal)
    for var, names in out.items():
        if looked[var] > 0:
            names.append("")
    return out


def _host_api_launches(data: bytes, rel: str) -> list[tuple[str, str | CallSite]]:
    """`_api_launches` of a host C++ file (`.cpp`, its bytes as `_cuda_files` read them): a kernel
    of a `.cu` launched there through the runtime's or the driver's API was listed with no launch,
    unsaid (`.cu`/`.cuh` were read only). One that spells no API launch (read for its headers' blocks) has none."""
    if not any(b in data for b in _API_BYTES):
        return []
    text = _cxx_text(data)
    commented = blanked(text, strings=False)
    return _api_launches(_spliced(blanked(text, strings=True)), _Lines(text), rel, commented)


# a plain local of a host function, of a number type (or `auto`), initialized where it is declared:
# `int n = x.size(0);`, `const auto stride = x.stride(0);`, `int64_t rows = x.numel() / cols;`
_LOCAL = re.compile(
    r"(?<![\w.>])(?:auto|bool|float|double|size_t|ssize_t|index_t|u?int(?:8|16|32|64)_t|int|long|short|char|unsigned)"
    r"\s+([A-Za-z_]\w*)\s*=\s*([^;{}=][^;{}]{0,300});"
)  # (read from its last type word: `const`s and `unsigned long`s before it read again from each were quadratic)
# what writes a name (or may: its address taken) after its declaration: such a local's value is not
# its initializer's at the launch
_WRITES = re.compile(r"(?:\+\+|--|&)\s*([A-Za-z_]\w*)|(?<!\w)([A-Za-z_]\w*)\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))")
_WORD = re.compile(r"[A-Za-z_]\w*")
# a pointer declared (a local, `int64_t* p =`, or a parameter, `const long *p,`): its type and name; the
# `*` on one side of the spaces only (`(n_queries * n_keys)`, `a*b`: a product, no declaration), or on
# neither (`int64_t * p`, group 2) where the type is a word no variable may be (`_TYPE_WORD`): it was read
# as a product, and `T* x` of its launch a float tensor (twenty-ninth read's leftover)
_POINTER_DECLARED = re.compile(
    r"(?<![\w.>:])((?:(?:unsigned|signed)[ \t]+)?[A-Za-z_][\w:]*)(?:\*[ \t]+|([ \t]+\*[ \t]+)|[ \t]+\*)"
    r"(?:(?:const|__restrict__)[ \t]+)*([A-Za-z_]\w*)[ \t]*[=;,)]"
)
_TYPE_WORD = re.compile(  # (from a word's start only: `\w+_t` tried from each letter of a run was quadratic)
    r"(?<![\w:])(?:(?:unsigned|signed)[ \t]+)?(?:(?:std::)?\w+_t|char|short|int|long|bool|float|double|unsigned|signed)"
)
_LOCALS_BACK = 16384  # how far back of a launch its host function's locals are read
_FUNCTION_HEAD = re.compile(r"(?<!\w)(\w+)\s*$")
_NOT_FUNCTIONS = frozenset(("if", "for", "while", "switch", "catch", "return", "sizeof", "decltype"))


class _Scopes:
    """The `{...}` blocks of C++ `code`, nested, and the plain locals a launch there may read."""

    def __init__(self, code: str, defines: Sequence[tuple[int, int]] = ()) -> None:
        self.code, self.defines = code, list(defines)
        self.blocks = _Nest(_brace_spans(code)) if code else _Nest([])
        # where the locals of a launch begin (`_region`) -> how far they are read, and those read
        self._read: dict[int, tuple[int, dict[str, list[tuple[int, int, str]]]]] = {}

    def locals_at(self, at: int, args: list[str]) -> dict[str, tuple[str, int]]:
        """The locals the launch at `at` passes in `args` (or names in their initializers, a few rounds
        deep), each with its initializer and where it is: declared in its host function (or the
        `#define` the launch is in) in a block around the launch, and not written after."""
        if not self.code:
            return {}
        region = self._region(at)
        read_to, declared = self._read.get(region, (region, {}))
        for m in _LOCAL.finditer(self.code, read_to, at):  # (the launches come in order: each part read once)
            init = " ".join(_top_level_split(m.group(2))[0].split())  # (`int a = 1, b = 2;`: a's)
            declared.setdefault(m.group(1), []).append((m.start(), m.end(), init))
        self._read[region] = (max(read_to, at), declared)
        out: dict[str, tuple[str, int]] = {}
        wanted = [w for a in args for w in _WORD.findall(a)]
        for _ in range(4 * len(wanted) + 8):
            if not wanted:
                break
            word = wanted.pop()
            if word in out or word not in declared:
                continue
            value = self._value(word, declared[word], at)
            if value is not None:
                out[word] = value
                wanted += _WORD.findall(value[0])
        return out

    def pointees_at(self, at: int, args: list[str]) -> dict[str, str]:
        """The type each argument of the launch at `at` that is a bare name points to, where its host
        function (its parameters or its body before the launch) declares it a pointer: `T* x` of
        `k<<<...>>>(p, n)` after `int64_t* p = ...;` was a float tensor (twenty-seventh read's leftover)."""
        names = {a for a in args if _WORD.fullmatch(a)}
        if not self.code or not names:
            return {}
        region = self._region(at)
        start = max(0, region - _LAUNCH_BACK)
        out: dict[str, str] = {}
        for m in _POINTER_DECLARED.finditer(self.code, start, at):
            if m.group(3) in names and (m.group(2) is None or _TYPE_WORD.fullmatch(m.group(1))):
                out[m.group(3)] = " ".join(m.group(1).split())  # (the last declaration before the launch)
        return out

    def _value(self, name: str, declarations: list[tuple[int, int, str]], at: int) -> tuple[str, int] | None:
        """The initializer (and its offset) of the last of `name`'s `declarations` in a block around
        `at`, if nothing writes the name between it and `at`."""
        for start, end, value in reversed(declarations):
            block = next(self.blocks.around(start), None)
            if block is not None and self.blocks.spans[block][1] < at:
                continue  # (in a block closed before the launch)
            # (a declaration of the name in a block closed before is none: `int n = 7;` shadows it there)
            others = [(s, e) for s, e, _ in declarations if e <= at]
            writes = [m for m in _WRITES.finditer(self.code, end, at) if name in m.groups()]
            written = any(not any(s <= m.start() < e for s, e in others) for m in writes)
            return None if written else (value, start)
        return None

    def _region(self, at: int) -> int:
        """Where the locals of the launch at `at` begin: its host function's body (the first block
        around it that is a function's, not a lambda's nor an `if`'s), or the `#define` it is in,
        `_LOCALS_BACK` back at most."""
        start = max(0, at - _LOCALS_BACK)
        i = bisect.bisect_right(self.defines, (at, math.inf)) - 1
        if i >= 0 and self.defines[i][0] <= at < self.defines[i][1]:  # (a macro's: used who knows where)
            return max(start, self.defines[i][0])
        for block in self.blocks.around(at):
            opened = self.blocks.spans[block][0]
            head = self.code[max(0, opened - _LAUNCH_BACK) : opened].rstrip()
            head = _less_qualifiers(head)
            if head.endswith(")"):
                paren = _opening(head)
                word = _FUNCTION_HEAD.search(head, 0, paren) if paren is not None else None
                if word is not None and word.group(1) not in _NOT_FUNCTIONS:
                    return max(start, opened)
        return start


_QUALIFIERS = ("const", "noexcept", "override", "final")


def _less_qualifiers(head: str) -> str:
    """`head` (a block's head) less the `const`/`noexcept`/... words that end it (a function's)."""
    for _ in range(16):
        head = head.rstrip()
        word = next((q for q in _QUALIFIERS if head.endswith(q)), None)
        if word is None or head[: -len(word)][-1:].isalnum() or head[: -len(word)][-1:] == "_":
            break
        head = head[: -len(word)]
    return head


def _opening(head: str) -> int | None:
    """Where the `(` that the `)` ending `head` closes opens, or None."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(head[i], 0)
        if depth == 0:
            return i
    return None


def _brace_spans(code: str) -> list[tuple[int, int]]:
    """The `{...}` blocks of `code`, by where each opens (one that never closes: to the end)."""
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            opened.append(len(spans))
            spans.append((m.start(), len(code)))
        elif opened:
            i = opened.pop()
            spans[i] = (spans[i][0], m.start())
    return spans


_NAMESPACE = re.compile(r"\bnamespace\s+(\w+(?:\s*::\s*\w+)*)\s*\{")


class _Namespaces:
    """The named `namespace N {` blocks of C++ `code` (comments and strings blanked), nested."""

    def __init__(self, code: str) -> None:
        found = _NAMESPACE.finditer(code) if "namespace" in code else ()
        named = {m.end() - 1: "".join(m.group(1).split()) for m in found}
        pieces = branch_brace_spans(code, branch_taken(code)) if named else []
        self.nest = _Nest([(start, end) for start, end, _ in pieces])
        self.names = [named.get(opened, "") for _, _, opened in pieces]
        self.opened = [opened for _, _, opened in pieces]

    def at(self, offset: int) -> str:
        """The namespace at `offset`, outermost first (`vllm::fp8`); "" at file scope."""
        # (by where each block opens: a block going on after an `#if` group is a piece that starts there, after the
        # pieces of those it holds)
        around = sorted((self.opened[i], self.names[i]) for i in self.nest.around(offset) if self.names[i])
        return "::".join(name for _, name in around)


class _Nest:
    """Spans (`(open, close)`, sorted by where they open, nested or apart) and which holds which."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.opens = [s[0] for s in spans]
        self.parent: list[int] = []  # the index of the span around each, or -1
        stack: list[int] = []
        for i, (opened, _) in enumerate(spans):
            while stack and spans[stack[-1]][1] < opened:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)

    def around(self, at: int) -> Iterator[int]:
        """The spans that hold offset `at`, the innermost first (up the spans around the last one
        opened before it: one that does not hold `at` is in one that may)."""
        i = bisect.bisect_left(self.opens, at) - 1
        while i >= 0:
            if self.spans[i][1] > at:
                yield i
            i = self.parent[i]


_POINTER_BACK = 4096  # how far back of a launch a function pointer it launches is looked for

# ATen's dispatch macros (ATen/Dispatch.h of torch 2.9; torch/headeronly/core/Dispatch.h spells them
# `THO_`): the ScalarTypes each binds `scalar_t` to, by the name's middle; an `_AND<N>` form (`_AND`,
# `_AND1`: one) adds its first N arguments. `AT_DISPATCH_CASE(type, ...)` binds it to `type`.
_DISPATCH_MACRO = re.compile(
    r"(?:AT|THO)_DISPATCH_(?:CASE_)?(FLOATING_TYPES_AND_HALF|ALL_TYPES_AND_COMPLEX|FLOATING_AND_COMPLEX_TYPES"
    r"|REDUCED_FLOATING_TYPES|FLOATING_TYPES|COMPLEX_TYPES|INTEGRAL_TYPES|ALL_TYPES)(?:_AND(\d?))?"
)
_INTEGRAL = ("Byte", "Char", "Int", "Long", "Short")
_COMPLEX = ("ComplexDouble", "ComplexFloat")
_DISPATCH_TYPES = {
    "FLOATING_TYPES": ("Double", "Float"),
    "FLOATING_TYPES_AND_HALF": ("Double", "Float", "Half"),
    "REDUCED_FLOATING_TYPES": ("Half", "BFloat16"),
    "COMPLEX_TYPES": _COMPLEX,
    "FLOATING_AND_COMPLEX_TYPES": ("Double", "Float", *_COMPLEX),
    "INTEGRAL_TYPES": _INTEGRAL,
    "ALL_TYPES": (*_INTEGRAL, "Double", "Float"),
    "ALL_TYPES_AND_COMPLEX": (*_INTEGRAL, "Double", "Float", *_COMPLEX),
}
# each ScalarType's C++ type (c10/core/ScalarType.h), as the kernel's parameters spell them
_SCALAR_TYPES = {
    "Byte": "uint8_t", "Char": "int8_t", "Short": "int16_t", "Int": "int", "Long": "int64_t", "Bool": "bool",
    "UInt16": "uint16_t", "UInt32": "uint32_t", "UInt64": "uint64_t", "Half": "at::Half", "BFloat16": "at::BFloat16",
    "Float": "float", "Double": "double", "ComplexHalf": "c10::complex<at::Half>",
    "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>",
}  # fmt: skip
_DISPATCH_NESTING = 8  # a dispatch macro's own macros expanded this deep at most


class _Dispatches:
    """The calls of a dispatch macro (`AT_DISPATCH_FLOATING_TYPES(...)`, a project's
    `VLLM_DISPATCH_FLOATING_TYPES(...)`) in `code`, nested as they are."""

    def __init__(self, code: str) -> None:
        close = closing_parens(code) if code else {}
        spans: list[tuple[int, int]] = []
        self.calls: list[str] = []  # each as `NAME(args)`, an argument that is no name as `_`
        for m in _USE_AT.finditer(code):  # (those whose name holds `DISPATCH`)
            end = close.get(m.end() - 1)
            if end is not None and "DISPATCH" in m.group(1):
                args = [a.strip() for a in _top_level_split(code[m.end() : end])]
                plain = [a if re.fullmatch(r"[\w:]+", a) else "_" for a in args]
                spans.append((m.end() - 1, end))
                self.calls.append(f"{m.group(1)}({', '.join(plain)})")
        self.nest = _Nest(spans)

    def around(self, at: int) -> list[str]:
        """The calls whose arguments hold offset `at`, the innermost first."""
        return [self.calls[i] for i in itertools.islice(self.nest.around(at), _DISPATCH_NESTING)]


def _dispatched(launches: list[tuple[str, CallSite]], code: str, included: _Included) -> None:
    """For each launch that gives `scalar_t` (`k<scalar_t><<<...>>>`), the dispatch macro around it
    that binds it and the types it binds it to: ATen's (`_DISPATCH_TYPES`), or a macro of the file or
    of its headers read down to ATen's (vllm's `VLLM_DISPATCH_FLOATING_TYPES`). `scalar_t` was left
    unread (twenty-first read's leftover): a `T alpha` of such a launch a float by guess."""
    sites = [site for _, site in launches if site.dispatch]
    if not sites:
        return
    macros: dict[str, list[_Macro]] = {}
    texts = [code]
    if any(_DISPATCH_MACRO.fullmatch(c.split("(")[0]) is None for s in sites for c in s.dispatch.split("\n")):
        texts += [blanked(text, strings=True) for _, text in included.headers()]
    for text in texts:
        for macro in _function_macros(text):
            macros.setdefault(macro.name, []).append(macro)
    for site in sites:
        site.dispatch, site.dispatched = _binding(site.dispatch.split("\n"), macros)


def _binding(calls: list[str], macros: Mapping[str, list[_Macro]]) -> tuple[str, list[str]]:
    """The dispatch call of `calls` (the innermost first) that binds `scalar_t`, and the types it
    binds it to, or the first one porter cannot read and no types; one that binds another name only
    (vllm's `fp8_t`) is passed over."""
    for call in calls:
        name = call.split("(")[0]
        types, other, unread = _bound(call, macros, 0)
        if types and not unread:
            return name, list(dict.fromkeys(types))
        if unread or not other:
            return name, []
    return (calls[0].split("(")[0] if calls else ""), []


def _bound(text: str, macros: Mapping[str, list[_Macro]], depth: int) -> tuple[list[str], bool, bool]:
    """(the types the dispatch macros called in `text` bind `scalar_t` to, whether one binds another
    name, whether one is not read)."""
    types: list[str] = []
    other = unread = False
    close = closing_parens(text)
    for m in _USE_AT.finditer(text):
        name, end = m.group(1), close.get(m.end() - 1)
        args = [a.strip() for a in _top_level_split(text[m.end() : end])] if end is not None else []
        known = _DISPATCH_MACRO.fullmatch(name)
        if name in ("AT_DISPATCH_CASE", "THO_DISPATCH_CASE") or name.endswith("_CASE_TYPE_USING_HINT"):
            hint = args[1] if name.endswith("_HINT") and len(args) > 1 else "scalar_t"
            if hint != "scalar_t":
                other = True
                continue
            one = _scalar_type(args[0] if args else "")
            types += [one] if one else []
            unread |= one is None
        elif known is not None:
            extra = 0 if known.group(2) is None else int(known.group(2) or 1)  # (`_AND`: one)
            found = [_scalar_type(a) for a in args[:extra]]
            types += [_SCALAR_TYPES[t] for t in _DISPATCH_TYPES[known.group(1)]] + [t for t in found if t]
            unread |= None in found
        elif name in macros and depth < _DISPATCH_NESTING:
            for macro in macros[name]:  # (one that never spells `scalar_t`, nor calls one that may, binds another name)
                body = _expanded(macro, args)
                t, o, u = _bound(body, macros, depth + 1)
                types, other, unread = types + t, other or o or not (t or u or "scalar_t" in body), unread or u
        elif "DISPATCH" in name and not name.endswith("_SWITCH"):
            unread = True
    return types, other, unread


def _scalar_type(enum: str) -> str | None:
    """The C++ type of a ScalarType as a dispatch macro's argument spells it (`at::ScalarType::Half`,
    `at::kHalf`, `torch::headeronly::ScalarType::Float`), or None."""
    last = enum.rpartition("::")[2].strip()
    if re.fullmatch(r"k[A-Z]\w*", last):
        last = last[1:]
    return _SCALAR_TYPES.get(last)


def _pointed(before: str, name: str) -> tuple[str, list[str]] | None:
    """The kernel and its template arguments that the variable `name` last points to in `before`
    (`auto kernel = &k<Ktraits, true>;`, `kernel = k;`), or None."""
    found = None
    for use in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", before):
        found = _assigned(before[use.end() : use.end() + _LAUNCH_BACK]) or found
    return found


# the rest of a function pointer's declarator after its name (`)(float*, int)` of `void (*kp)(float*,
# int) = k2;`): its `kp<<<` was attached to no kernel, as `auto kp = &k2;`'s is (twenty-seventh read)
_FUNCTION_DECLARATOR = re.compile(r"^\s*\)\s*\([^()]*\)")


def _assigned(after: str) -> tuple[str, list[str]] | None:
    """The function and its template arguments that `after` (the text after a variable's name)
    assigns to it (`= &k<Ktraits>;`), or None."""
    rest = _FUNCTION_DECLARATOR.sub("", after, count=1).lstrip()
    if not rest.startswith("=") or rest.startswith("=="):
        return None
    rest = rest[1:].lstrip().removeprefix("&").lstrip()
    at = 0
    while at < len(rest) and (rest[at].isalnum() or rest[at] in "_:"):
        at += 1
    pointed = rest[:at].rpartition("::")[2]
    rest = rest[at:].lstrip()
    template: list[str] = []
    if rest.startswith("<"):
        end = next((at for at, depth in _template_angles(rest[:_LAUNCH_READ]) if depth == 0), None)
        if end is None:
            return None
        template = [" ".join(a.split()) for a in _top_level_split(rest[1:end])]
        rest = rest[end + 1 :].lstrip()
    if not rest.startswith(";") or not pointed.isidentifier():
        return None
    return pointed, template


def _alias_of(name: str, aliases: Mapping[str, str]) -> str:
    """What type `name` stands for through `aliases` (an alias of an alias: a few rounds), or `name`."""
    for _ in range(8):
        if name not in aliases:
            break
        name = " ".join(aliases[name].split())
    return name


def _template_angles(text: str, backwards: bool = False) -> Iterator[tuple[int, int]]:
    """The angle brackets of a template's arguments that open `text` (`<` first; with `backwards`,
    that end it, read from its end), those inside parentheses left out (they compare): (where, the
    depth of angles open after it), until the first one closes. Parentheses are counted in the order read."""
    found = list(_ANGLE_OR_PAREN.finditer(text))
    depth = parens = 0
    opens, paren = (">", ")") if backwards else ("<", "(")
    for m in reversed(found) if backwards else found:
        g = m.group()
        if g in "()":
            parens += 1 if g == paren else -1
            continue
        if parens:
            continue
        depth += 1 if g == opens else -1
        yield m.start(), depth
        if depth == 0:
            return


def _closing(text: str, at: int, brackets: re.Pattern[str], opening: str) -> int | None:
    """Where the bracket opened at `at` closes in `text` (of `_LAUNCH_READ` read), or None."""
    depth = 0
    for m in brackets.finditer(text, at, min(len(text), at + _LAUNCH_READ)):
        depth += 1 if m.group() == opening else -1
        if depth == 0:
            return m.start()
    return None


def _launch_head(before: str) -> tuple[str | None, list[str]]:
    """The name of the kernel a launch's `<<<` follows (`before`: the text before it), and the
    template arguments given it (`k<float, 128><<<`); where it follows no name but an expression
    (`kernel_ptrs_[idx]<<<`, `(*fp)<<<`), the expression (`_launch_expression`)."""
    before = before.rstrip()
    if before.endswith((")", "]")):
        return _launch_expression(before)
    template: list[str] = []
    if before.endswith(">"):
        for at, depth in _template_angles(before, backwards=True):
            if depth == 0:
                template = [" ".join(a.split()) for a in _top_level_split(before[at + 1 : -1])]
                before = before[:at].rstrip()
                break
        else:
            return None, []
    at = len(before)
    while at and (before[at - 1].isalnum() or before[at - 1] == "_"):
        at -= 1
    name = before[at:]
    # (one past ASCII is a kernel's too: `ké<<<` was dropped, unsaid; and `k²<<<`, of a name porter lists, which
    # Python's `isidentifier` refuses: thirty-first read)
    if not name or not (name[0] == "_" or name[0].isalpha()):
        return None, []
    return _qualifier(before[:at]) + name, template


def _launch_expression(before: str) -> tuple[str | None, list[str]]:
    """What a launch's `<<<` follows where `before` ends in a bracket: the name (and template arguments) in `(k)`,
    `(k<float>)` or `(*fp)` (a function's name in parentheses, a pointer's dereferenced), else the expression as written
    (`kernel_ptrs_[idx]`, a table of kernels: a launch of no name porter lists, said so). Such launches were dropped,
    unsaid (thirty-first read), and `(k<float>)<<<` said "a name no kernel porter lists has" of a kernel porter lists
    (thirty-second read); None where its brackets do not close in `before`."""
    depth, at = 0, len(before)
    while at:
        at -= 1
        depth += (before[at] in ")]") - (before[at] in "([")
        if depth == 0:
            break
    if depth:
        return None, []
    head = before[:at].rstrip()
    called = _CALLEE_END.search(head)  # (`get_kernel(i)<<<`, `ks[i]<<<`: what is called or indexed)
    if before[at] == "(" and called is None:
        inner = before[at + 1 : -1].strip().lstrip("*&").strip()
        named = inner.split("<", 1)[0].rstrip() if inner.endswith(">") else inner  # (`k` of `k<float>`)
        if _LAUNCHED_NAME.fullmatch(named):
            return _launch_head(inner)
        return " ".join(before[at:].split()), []
    return " ".join(before[called.start() if called else at :].split()), []


_LAUNCHED_NAME = re.compile(r"(?:::\s*)?\w+(?:\s*::\s*\w+)*")
# the name an indexed or called launch's expression opens with (`params.kernels` of `params.kernels[i]<<<`), but
# a keyword's (`return (k)<<<`)
_CALLEE_END = re.compile(r"(?<![\w.:>])(?!(?:return|else|do|case)\Z)\w+(?:(?:\.|::|->)\w+)*\Z")


def _qualifier(before: str) -> str:
    """The namespaces a launch writes before its kernel's name (`fp8::` of `fp8::k<<<`), "" if none."""
    out = ""
    while (head := before.rstrip()).endswith("::"):
        head = head[:-2].rstrip()
        at = len(head)
        while at and (head[at - 1].isalnum() or head[at - 1] == "_"):
            at -= 1
        if at == len(head):
            break  # `::k` (the global namespace)
        out, before = head[at:] + "::" + out, head[:at]
    return out


def _twins(kernels: list[Kernel]) -> list[Kernel]:
    """`kernels`, a CUDA kernel defined again in its file and namespace with the same parameters (`#if`/`#else`
    branches, SFINAE twins: vllm 0.34.0's `fused_add_rms_norm_kernel`, its ROCm attention kernels
    four times) listed once, its detail naming the other lines; one defined again with other
    parameters (an overload, a specialization: mmcv's `template <>` ones for `phalf`) stays, its
    detail saying how it differs from the first (each was listed as if alone, and scaffolded as `k`
    and `k_`; twentieth read's leftover). Of `#if` twins the one listed is the one nvcc compiles
    with no `-D` of the build's (`compiled`) where porter can tell, else the first, said (the first
    was read, unsaid: twenty-first read's leftover)."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[Kernel]] = {}
    first: dict[tuple[str, str, str], Kernel] = {}
    out: list[Kernel | tuple[str, str, tuple[str, ...]]] = []
    for k in kernels:
        if k.kind != "cuda" or not k.source:
            out.append(k)
            continue
        one = first.setdefault((k.path, k.namespace, k.name), k)
        # (a specialization with its primary's parameters is no twin of it: `k<double>` runs it alone)
        params = tuple(" ".join(p.split()) for p in k.params)
        key = (k.path, f"{k.namespace}::{k.name}", (*params, "<>", *k.specialises) if k.template == [""] else params)
        if key not in groups:
            groups[key] = [k]
            out.append(key)
            if one is not k:
                k.detail += f"; {_overload_kind(k, one)}: {_differs(one.params, k.params)}"
        else:
            groups[key].append(k)
    return [_listed(groups[k]) if isinstance(k, tuple) else k for k in out]


# what a kernel's detail says where a default build may not compile it, or compiles another
# definition of it: `scaffold._branch_notes` says these clauses in the op's docstring
UNBUILT = "in a branch a default nvcc build does not compile"
OTHER_BRANCH = "defined again in another branch"
TWIN_UNBUILT = "in a branch nvcc does not compile"
BRANCH_SAYINGS = (UNBUILT, OTHER_BRANCH, TWIN_UNBUILT)


def _overload_kind(k: Kernel, first: Kernel) -> str:
    """What a kernel defined again is to the first of its name: a `template <>` specialization (for the
    template arguments it writes, or deduced ones: it was called an overload), the other branch of an
    `#if` (a build compiles one of the two: it was called an overload), else an overload."""
    at = preprocessor.fork(first.branches, k.branches)
    if at is not None:
        return (
            f"line {first.line}'s kernel {OTHER_BRANCH} of the `#if` at line {at[0]} (`{at[2]}`,"
            f" line {first.line} in `{at[1]}`): a build compiles one of the two"
        )
    if k.template != [""]:
        return f"an overload of line {first.line}"
    kind = f"a specialization for <{', '.join(k.specialises)}>" if k.specialises else "a specialization"
    return f"{kind} of line {first.line}"


def _listed(same: list[Kernel]) -> Kernel:
    """The one of kernels `same` (one name, one file, the same parameters) that is listed, its detail
    naming the others: the only one a default nvcc build compiles where porter can tell, else the first."""
    if len(same) == 1:
        return same[0]
    compiled = [k for k in same if preprocessor.compiled(k.branches) is True]
    alone = len(compiled) == 1 and all(preprocessor.compiled(k.branches) is False for k in same if k is not compiled[0])
    listed = compiled[0] if alone else same[0]
    for k in same:
        if k is listed:
            continue
        apart = preprocessor.apart(listed.branches, k.branches)
        if apart is None:
            listed.detail += f"; also defined at line {k.line}, of the same parameters (a twin: the first is read)"
        elif alone:
            listed.detail += (
                f"; also defined at line {k.line}, of the same parameters, {TWIN_UNBUILT}"
                f" ({apart}): the one it compiles is read"
            )
        else:
            listed.detail += (
                f"; also defined at line {k.line}, of the same parameters, in another #if branch ({apart}): the"
                " first is read (which one a build compiles depends on its -D flags, the pass or the -arch)"
            )
    return listed


def _branched(kernels: list[Kernel], code: str, lines: _Lines) -> None:
    """Each of `kernels` (of C++ `code`) given the `#if` branches it lies in (`_twins` reads them)."""
    if "#" in code and "if" in code:
        conditions = preprocessor.Conditions(code, lines.of)
        for k in kernels:
            k.branches = conditions.around(lines.start(k.line))
            unbuilt = preprocessor.unbuilt(k.branches)
            if unbuilt is not None:  # (`#if 0`, `#ifdef USE_ROCM`: listed and scaffolded, unsaid)
                k.detail += f"; {UNBUILT} ({unbuilt})"


def _differs(before: list[str], params: list[str]) -> str:
    """How parameters `params` differ from `before`'s (an overload's, from its first definition)."""
    if len(before) != len(params):
        return f"{len(params)} parameters for {len(before)}"
    changed = [
        f"`{p}` for `{b}`" for b, p in zip(before, params, strict=True) if " ".join(b.split()) != " ".join(p.split())
    ]
    if not changed:  # (a specialization's may be the same)
        return "the same parameters"
    return ", ".join(changed[:3]) + (f" (and {len(changed) - 3} more)" if len(changed) > 3 else "")


def _scan_python_bounded(path: Path, rel: str, root: Path, inv: Inventory, found: _Found, limit: float | None) -> None:
    """`_scan_python` in a process of its own for at most `limit` seconds, its findings
    merged into `inv` and `found` (a file without a kernel's bytes needs no process)."""
    if not _worth_a_process(path, rel, found):
        found.passed_over[rel] = path
        return
    try:
        one, seen = bounded(_scan_python_alone, path, rel, root, found.imported, found.compiled, limit=limit)
    except Failed as exc:
        inv.problems.append(f"{path_name(rel)}: {exc}")
        return
    inv.kernels.extend(one.kernels)
    inv.problems.extend(one.problems)
    found.launches.extend(seen.launches)
    for name, ks in seen.triton.items():
        found.triton.setdefault(name, []).extend(ks)
    for ext, calls in seen.ext_calls.items():
        found.ext_calls.setdefault(ext, []).extend(calls)
    for ext, why in seen.ext_why.items():
        found.ext_why.setdefault(ext, why)
    found.held.update(seen.held)
    found.held_launches.extend(seen.held_launches)
    found.module_launches.extend(seen.module_launches)
    found.notes.extend(seen.notes)
    found.origins.update(seen.origins)
    found.exports.update(seen.exports)


def _scan_python_alone(path: Path, rel: str, root: Path, imported: dict, compiled: dict) -> tuple[Inventory, _Found]:
    """`_scan_python` of one file on its own: what it found, and what it leaves for the others
    (a Triton kernel in `triton` is the same object as in the inventory's list, as pickled)."""
    inv = Inventory()
    found = _Found(imported=imported, compiled=compiled)
    _scan_python(path, rel, root, inv, found)
    found.imported, found.compiled = {}, {}  # the caller's own: not sent back
    return inv, found


def _scan_cuda_alone(path: Path, rel: str, search: _Search, macros: list[_Macro] | None = None) -> Inventory:
    """`_scan_cuda` of one file on its own."""
    inv = Inventory()
    _scan_cuda(path, rel, inv, macros, search)
    return inv


def _macro_uses(
    cuda_files: list[Path],
    base: Path,
    macros: list[_Macro],
    inv: Inventory,
    limit: float | None,
    passed: set[str],
    search: _Search,
) -> None:
    """The kernels made by uses, in other files of `cuda_files`, of `macros` (each of no use in its own file: a
    header's `#define DEF_KERNEL(name) ...` used in a .cu file); a macro of no use anywhere is
    listed as its own kernel, by the macro's name, saying so (files in `passed` are not read again)."""
    used: set[tuple[str, str]] = set()
    for path in cuda_files if macros else []:
        rel = os.path.relpath(path, base)
        others = [m for m in macros if m.path != rel]
        if not others or rel in passed:
            continue
        try:
            one = bounded(_scan_cuda_alone, path, rel, search, others, limit=limit)
        except Failed as exc:
            inv.problems.append(f"{path_name(rel)}: {exc}")
            continue
        inv.kernels.extend(one.kernels)
        inv.problems.extend(one.problems)
        used.update((m.path, m.name) for m in others if m.name in one.used)
    for m in macros:
        if (m.path, m.name) in used:
            continue
        for _, _, params, source, typenames, template in _kernels_in(m.body, m.body):
            why = f"__global__; made by macro {m.name}, of no use found: its kernels are named at each use"
            inv.kernels.append(
                Kernel(
                    m.name, "cuda", m.path, m.line, params, why, source=source, typenames=typenames, template=template
                )
            )
            break


def _import_origins(module: cst.Module, rel: str) -> dict[str, str]:
    """The module each name a file imports with `from M import name` comes from, dotted (a
    relative `from .ops import k` read from the file's own folder)."""
    package = Path(rel).parent.parts
    out: dict[str, str] = {}
    for stmt in _import_statements(module):
        if not isinstance(stmt, cst.ImportFrom):
            continue
        written = dotted(stmt.module) if stmt.module is not None else ""
        level = len(stmt.relative)
        if level:
            up = package[: len(package) - (level - 1)] if level - 1 <= len(package) else ()
            written = ".".join([*up, *([written] if written else [])])
        if isinstance(stmt.names, cst.ImportStar):  # (`*`: each of `M`'s, as `_module_kernels` reads it)
            out[f"*{written}"] = f"{written}.*"  # (by a key no name is, one per module)
            continue
        for alias in stmt.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name) and written:
                out[bound.value] = f"{written}.{dotted(alias.name)}"
    _reexported(module, out)
    return out


def _reexported(module: cst.Module, origins: dict[str, str]) -> None:
    """Into `origins`, each name a module's top level binds to an attribute of a module it imports
    (`from . import kern as K` or `import pkg.kern as K`, then `k = K.k`): `getattr(ops, name)` of
    such an `ops` was a note that it imports no kernel (twenty-seventh read)."""
    modules = dict(origins)
    for stmt in _import_statements(module):
        for alias in stmt.names if isinstance(stmt, cst.Import) else ():
            full = dotted(alias.name) or ""
            bound = alias.asname.name if alias.asname is not None else None
            modules[bound.value if isinstance(bound, cst.Name) else full] = full
    for line in module.body:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Attribute):
                home = _module_of(dotted(small.value.value) or "", modules)
                if isinstance(small.targets[0].target, cst.Name) and home is not None:
                    origins[small.targets[0].target.value] = f"{home}.{small.value.attr.value}"


def _module_of(where: str, modules: dict[str, str]) -> str | None:
    """The module `where` (`K`, `K.sub`, `pkg.kern`) names through the imports `modules`, or None."""
    head, dot, rest = where.partition(".")
    return modules.get(where) or (modules[head] + dot + rest if head in modules else None)


def _launch_target(kernels: list[Kernel], path: str | None, origin: str | None, top: str) -> Kernel | None:
    """The kernel a launch in file `path` runs, of the kernels of its name (one per file that
    defines one): its own file's, else the one of the module it is imported from, else the only
    one. Two files defining a kernel of one name (liger-kernel 0.8.5's Ascend backend repeats
    its CUDA kernels' names) gave every launch to the last one read: its pointer typed `int`
    from the other's stride, its stores dropped from `mutates_args` (twenty-first read). With
    none to tell them apart, the launch is given to none: no evidence beats a wrong one. A launch
    through a module's attribute (`path` None) never runs its own file's. A tree scanned from its
    package's folder (`porter kernels fla`) imports `fla.ops.x`, whose path spells `ops.x`: the
    folder's name `top` may come first (fla 0.2.2's gsa launches of its two
    `fused_recurrent_fwd_kernel`s were given to neither: twenty-third read)."""
    own = [k for k in kernels if k.path == path]
    if own:
        return own[0]
    if origin is not None:
        module = "." + origin.rsplit(".", 1)[0]
        hits = [
            k
            for k in kernels
            if any(f".{m}".endswith(module) for m in (_dotted_path(k.path), f"{top}.{_dotted_path(k.path)}"))
        ]
        if len(hits) == 1:
            return hits[0]
    return kernels[0] if len(kernels) == 1 else None


def _dotted_path(rel: str) -> str:
    """A Python file's module name as its path spells it (`a/b/c.py` -> `a.b.c`, `a/__init__.py` -> `a`)."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class _Found:
    """What the scan of one Python file leaves for the files after it and for the end of the scan."""

    imported: dict
    compiled: dict
    launches: list[_PyLaunch] = field(default_factory=list)
    triton: dict[str, list[Kernel]] = field(default_factory=dict)  # by name: one per file that defines it
    ext_calls: dict[str, list[tuple[str, CallSite]]] = field(default_factory=dict)  # extension -> (op, call site)
    ext_why: dict[str, str] = field(default_factory=dict)
    # (file, name) -> the names a dict, list or tuple it binds holds; and the launches from a container
    # another module binds (`_attach_held`)
    held: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    held_launches: list[_PyLaunch] = field(default_factory=list)
    module_launches: list[_PyLaunch] = field(default_factory=list)  # `getattr(ops, name)[grid](x)`, by module
    origins: dict[str, dict[str, str]] = field(default_factory=dict)  # file -> its `from M import k`: k -> M.k
    notes: list[str] = field(default_factory=list)  # Triton launches not followed, said in a tree with a kernel
    # the Python files the byte test passed over, by name: where `getattr(M, name)[grid]` names one, its
    # imports are read then (`_attach_module_launches`)
    passed_over: dict[str, Path] = field(default_factory=dict)
    exports: dict[str, set[str]] = field(default_factory=dict)  # file -> its `__all__`'s names (a star import's)


# `program_id` and `constexpr`: a kernel in a file that never spells "triton" (`from .tu import jit,
# tl`; `@jit`, `tl.program_id`), which neither lint nor `porter kernels` read (twenty-second read's
# leftover); lint's KERN002 has the same tokens (rules/kernels.toml)
_KERNEL_TOKENS = (b"triton", b"cpp_extension", b"[", b"custom_op", b"register_kernel", b"program_id", b"constexpr")


def _may_hold_kernel(source: bytes, rel: str, found: _Found) -> bool:
    """The cheap byte test a file passes before it is parsed; or a decorator a module of the tree
    binds to Triton (`from .tu import jit`, `@jit`: the project index's fact, `decorated_imported`)."""
    return (
        rel in found.compiled
        or any(t in source for t in _KERNEL_TOKENS)
        or decorated_imported(found.imported.get(rel, ()), source)
    )


def _worth_a_process(path: Path, rel: str, found: _Found) -> bool:
    """Whether `_scan_python` would parse the file (or report it unreadable): the others are
    passed over here, without a process of their own."""
    try:
        return _may_hold_kernel(read_regular(path), rel, found)
    except Unreadable:
        return True  # `_scan_python` names the reason


def _parse(
    path: Path, rel: str, inv: Inventory, found: _Found
) -> tuple[bytes, cst.Module, Callable[[int], tuple[int | None, int]]] | None:
    """The file's bytes and tree (a notebook's: of its code cells), when it can hold a kernel (a
    cheap byte test first), and where a line of it is; a file that cannot be read or parsed is a
    problem of the inventory, not a crash."""
    try:
        source = read_regular(path)
    except Unreadable as exc:
        inv.problems.append(f"{path_name(rel)}: {exc.reason}")
        return None
    try:
        if not _may_hold_kernel(source, rel, found):
            return None
        source, where = _cells(source) if path.suffix == ".ipynb" else (source, _as_is)
        past = too_large_to_parse(len(source))
        if past is not None:  # what `porter rewrite` says of it, and as it says it: not parsed
            inv.problems.append(f"{path_name(rel)}: {past}")
            return None
        return source, cst.parse_module(source), where
    except NotInFormat as exc:  # a notebook that is not one
        inv.problems.append(f"{path_name(rel)}: {exc.reason}")
        return None
    except Exception as exc:  # noqa: BLE001 - an unreadable file is a problem, not a crash
        inv.problems.append(f"{path_name(rel)}: {exc.__class__.__name__}")
        return None


def _reexports_in(base: Path, path: Path) -> Callable[[str], dict[str, str] | None]:
    """For a module `path` imports (`vllm.triton_utils`, `.utils`): the names its file under `base`
    (or beside `path`, relative) binds to Triton (`triton` -> "triton", `tl` -> "triton.language"),
    or None where the tree has no such file. Read with `ast` (a few small files per scan)."""

    def lookup(module: str) -> dict[str, str] | None:
        dots = len(module) - len(module.lstrip("."))
        # `vllm.triton_utils` under the scanned `vllm/` itself: the files stay the tree's
        folder = (base.parent if module.split(".")[0] == base.name else base) if not dots else path.parents[dots - 1]
        stem = folder.joinpath(*module.lstrip(".").split(".")) if module.lstrip(".") else folder
        for candidate in (stem / "__init__.py", stem.with_name(stem.name + ".py")):
            if candidate.is_file():
                return _triton_bindings(str(candidate))
        return None

    return lookup


@functools.lru_cache(maxsize=64)
def _triton_bindings(path: str) -> dict[str, str]:
    """The names the module at `path` binds to Triton by its imports (in `if` blocks too)."""
    try:
        source = read_regular(path)
        tree = ast.parse(source) if b"triton" in source else None
    except (Unreadable, OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            for a in node.names:
                local, full = (a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0])
                out.setdefault(local, full)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for a in node.names:
                out.setdefault(a.asname or a.name, f"{node.module}.{a.name}")
    return {k: v for k, v in out.items() if v == "triton" or v.startswith("triton.")}


def _triton_of(
    module: cst.Module,
    resolver: Resolver,
    positions,
    where,
    rel: str,
    inv: Inventory,
    found: _Found,
    lookup: Callable[[str], dict[str, str] | None] | None = None,
) -> None:
    """A Python file's Triton kernels, decorated or made by a call (`k = triton.jit(fn)`), through
    a module re-exporting Triton too (`lookup`: vllm's `from vllm.triton_utils import triton`)."""
    # at module level in `if HAS_TRITON:` too: the kernel was neither listed nor scaffolded (seventeenth
    # read); and in a function or a class, as lint reports it (torchao 0.18.0's 5 built in a function
    # were reported, with the advice to run `porter kernels`, and not listed: nineteenth read)
    how: dict[str, str] = {}
    start = len(inv.kernels)
    for written, fn in triton_kernels(module, resolver, in_blocks=True, nested=True, lookup=lookup, how=how).items():
        name = unicodedata.normalize("NFKC", written)  # as Python reads it (`ｓcale` is `scale`)
        cell, line = where(positions[fn.name].start.line)
        k = _triton_kernel(module, name, fn, rel, line)
        k.detail += f" ({how[written]})" if written in how else ""
        k.cell = cell
        found.triton.setdefault(name, []).append(k)
        inv.kernels.append(k)
    for written, (fn, call) in triton_wrapped(module, resolver, nested=True).items():
        name = unicodedata.normalize("NFKC", written)
        if any(other.path == rel for other in found.triton.get(name, [])):
            continue
        cell, line = where(positions[call].start.line)
        # its source under the name it is bound to, as the reference and the launches call it
        k = _triton_kernel(module, name, fn.with_changes(name=cst.Name(name), decorators=()), rel, line)
        k.detail = (dotted(call.func.func if isinstance(call.func, cst.Call) else call.func) or "triton.jit") + "(...)"
        k.cell = cell
        found.triton.setdefault(name, []).append(k)
        inv.kernels.append(k)
    renamed = _renamed_modules(resolver.imports) if len(inv.kernels) > start else {}
    for k in inv.kernels[start:]:
        k.modules = renamed


def _scan_python(path: Path, rel: str, root: Path, inv: Inventory, found: _Found) -> None:
    """One Python file's kernels: Triton kernels, CUDA-only custom ops, launches, and the
    extensions it builds or loads and the ops it calls on them."""
    parsed = _parse(path, rel, inv, found)
    if parsed is None:
        return
    source, module, where = parsed
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    imports = ImportTable.from_module(module)
    resolver = Resolver(imports, ScopeStack())
    positions = wrapper.resolve(PositionProvider)
    base = root if root.is_dir() else root.parent
    _triton_of(module, resolver, positions, where, rel, inv, found, _reexports_in(base, path))
    if any(t in source for t in (b"custom_op", b"register_kernel", b"triton_op", b"library.impl")):
        facts = CudaOnly(module, imports, {f[1]: f[3][0] for f in found.imported.get(rel, ())})
        for op, fn, why in cuda_only_registrations(module, resolver, facts):
            params = [p.name.value for p in fn.params.params]
            detail = f"registered for CUDA; {why}"
            cell, line = where(positions[fn.name].start.line)
            inv.kernels.append(
                Kernel(op, "custom-op", rel, line, params, detail, source=module.code_for_node(fn), cell=cell)
            )
    s = _Scan(rel, module, imports, where)
    wrapper.visit(s)
    _leave(s, rel, found)
    for holder, op, site in s.attr_calls:
        if holder in found.compiled.get(rel, {}):
            ext_module, ext_reason = found.compiled[rel][holder]
            found.ext_calls.setdefault(ext_module, []).append((op, site))
            found.ext_why.setdefault(ext_module, ext_reason)
    for what, call, (cell, line), var in s.loads:
        for k in [
            *_loaded_extension(s, path, root, rel, what, call, line, var),
            *_inline_kernels(s, what, call, rel, line),
        ]:
            k.cell = cell
            inv.kernels.append(k)
    for call, (cell, line) in s.extensions:
        given = _arg(call, "name", 0)
        # a name bound to the string (mmcv's `ext_name = 'mmcv._ext'`): unread, the extension was listed
        # twice, as `?` and as the module Python loads (once `extension = CUDAExtension` was read)
        names = _strings(s.texts.get(given.value, given) if isinstance(given, cst.Name) else given)
        sources = _arg(call, "sources", 1)
        detail = "sources: " + (", ".join(_strings(sources)) or "computed") + _missing(path, root, sources)
        inv.kernels.append(Kernel(names[0] if names else "?", "cuda-extension", rel, line, detail=detail, cell=cell))


def _renamed_modules(imports: ImportTable) -> dict[str, str]:
    """The names a file imports under another name, local -> the last name of what it imports (`H`
    -> `helpers` of `import pkg.helpers as H`, `from pkg import helpers as H`, `from . import
    helpers as H`): a module among them is its helpers' (`_triton_helpers`)."""
    named = {local: full.rpartition(".")[2] for local, full in imports.names.items()}
    named.update((local, obj.rpartition(".")[2]) for local, (_, obj) in imports.relative.items())
    return {local: last for local, last in named.items() if last and last != local}


def _leave(s: _Scan, rel: str, found: _Found) -> None:
    """What one file's `_Scan` leaves for the end of the scan: its launches, the containers of names
    it binds, and its launches from another module's container."""
    found.launches.extend([*s.launches, *s.through_attributes(), *s.indirect])
    found.held.update({(rel, name): names for name, names in s.held.items() if names})
    found.held_launches.extend(s.held_imported)
    found.module_launches.extend(s.module_launches)
    found.notes.extend(s.notes)
    if s._origins:
        found.origins[rel] = s._origins
    if "__all__" in s.texts and s.module.code.count("__all__") == 1:  # (one list: none added to it)
        found.exports[rel] = set(_strings(s.texts["__all__"]))


def _attach_module_launches(found: _Found, top: str, limit: float | None = None) -> None:
    """A launch of a kernel of a module named at run time (`getattr(ops, name)[grid](x)`), said to
    each Triton kernel that module defines or imports (`origin` is `pkg.ops.*`); a tree with a Triton
    kernel says the launches it does not follow (a note: they were passed over in silence). A module
    the byte test passed over (it only imports its kernels: `from .kern import k as k2`, no `[`) has
    its imports read here: it was said to import no kernel (twenty-seventh read)."""
    for launch in found.module_launches:
        module = "." + (launch.origin or "").removesuffix(".*")
        _read_passed_over(found, module, top, limit)
        runs = _module_kernels(found, module, top)
        for kernels in runs.values():
            _attach_launch(kernels, launch, top)
        if not runs:
            where = place(launch.site.path, launch.site.line, launch.site.cell)
            found.notes.append(f"{where}: `{launch.unresolved}` launches {launch.how}: {_NO_MODULE_KERNEL}")


# a `getattr(ops, name)[grid]` of a module porter finds no Triton kernel of (a module it does not read)
_NO_MODULE_KERNEL = "porter finds no Triton kernel that module defines or imports: which kernels it may run is not read"


def _of_module(rel: str, module: str, top: str) -> bool:
    """Whether file `rel` is module `module` (`.pkg.ops`), from the tree's folder or above it (`top`)."""
    return any(f".{m}".endswith(module) for m in (_dotted_path(rel), f"{top}.{_dotted_path(rel)}"))


def _read_passed_over(found: _Found, module: str, top: str, limit: float | None) -> None:
    """The imports of each file of `module` the byte test passed over, into `found.origins` (each
    read once, in a process of its own for at most `limit` seconds; one that fails keeps its note)."""
    for rel in [r for r in found.passed_over if _of_module(r, module, top)]:
        path = found.passed_over.pop(rel)
        with suppress(Failed):
            if origins := bounded(_origins_alone, path, rel, limit=limit):
                found.origins[rel] = origins


def _origins_alone(path: Path, rel: str) -> dict[str, str]:
    """`_import_origins` of one file: none where it cannot be read or parsed (as `_parse` says of it)."""
    try:
        return _import_origins(cst.parse_module(read_regular(path, MAX_PARSE_BYTES)), rel)
    except (Unreadable, cst.ParserSyntaxError, RecursionError):
        return {}


def _module_kernels(found: _Found, module: str, top: str) -> dict[str, list[Kernel]]:
    """The Triton kernels (by name) a module (`.pkg.ops`) defines, and those it imports (`from .kern
    import k`: `getattr(ops, name)` may run `k` too; it was said only to those `ops` defines; `from
    .kern import *`: each kernel of `kern`)."""
    out = {
        name: mine for name, ks in found.triton.items() if (mine := [k for k in ks if _of_module(k.path, module, top)])
    }
    for rel, origins in found.origins.items():
        for origin in origins.values() if _of_module(rel, module, top) else ():
            home, _, name = origin.rpartition(".")
            for k in found.triton.get(name, []) if name != "*" else _starred(found):
                if _of_module(k.path, "." + home, top) and k not in out.get(k.name, []):
                    out.setdefault(k.name, []).append(k)
    return out


def _starred(found: _Found) -> Iterator[Kernel]:
    """The Triton kernels a star import of their module binds: not a `_private` one, and one its
    module's `__all__` names where it has one (`from .kern import *` was said to run each kernel of
    `kern`: twenty-seventh read)."""
    for k in itertools.chain(*found.triton.values()):
        if not k.name.startswith("_") and k.name in found.exports.get(k.path, {k.name}):
            yield k


def _attach_held(found: _Found, top: str) -> None:
    """A launch from a container another module binds (`KERNELS[op][grid](x)` after `from .ops import
    KERNELS`), said to each kernel that module's container holds: they were listed with no launch,
    unsaid (the container was read in the launching file only: twenty-fifth read's leftover)."""
    for launch in found.held_launches:
        module = "." + (launch.origin or "").rpartition(".")[0]
        for (rel, name), names in found.held.items():
            dotted_rel = _dotted_path(rel)
            if name == launch.name and any(f".{m}".endswith(module) for m in (dotted_rel, f"{top}.{dotted_rel}")):
                for n in names:
                    _attach_launch([k for k in found.triton.get(n, []) if k.path == rel], launch, top)


def _triton_kernel(module: cst.Module, name: str, fn: cst.FunctionDef, rel: str, line: int) -> Kernel:
    """A Triton kernel with its parameters (constexpr ones marked) and decorators."""
    params = [
        p.name.value
        + (": tl.constexpr" if p.annotation and "constexpr" in module.code_for_node(p.annotation.annotation) else "")
        for p in fn.params.params
    ]
    decos = ", ".join("@" + module.code_for_node(d.decorator).split("(")[0] for d in fn.decorators)
    return Kernel(name, "triton", rel, line, params, decos, source=module.code_for_node(fn))


def _loaded_extension(
    s: _Scan, path: Path, root: Path, rel: str, what: str, call: cst.Call, line: int, var: str | None
) -> list[Kernel]:
    """The kernels of an extension compiled at run time (`load`, `load_inline`): one per op it
    exposes or that is called on it, or the extension itself when no op is seen."""
    names = _strings(_arg(call, "name", 0))
    ext = names[0] if names else (var or "?")
    if what == "load_inline":
        fns = _strings(_arg(call, "functions", 3))
        detail = "load_inline" + _unread_sources(s, call)
    else:
        fns = []
        detail = (
            "load("
            + ", ".join(_strings(_arg(call, "sources", 1)))
            + ")"
            + _missing(path, root, _arg(call, "sources", 1))
        )
    called = [(fn, site) for v, fn, site in s.attr_calls if var is not None and v == var]
    ops = fns or sorted({fn for fn, _ in called})
    if not ops:  # no op seen: the extension itself is still a kernel to port
        return [Kernel(ext, "cpp_extension", rel, line, detail=detail + "; its ops are not called in this file")]
    out = []
    for op in ops:
        k = Kernel(f"{ext}.{op}", "cpp_extension", rel, line, detail=detail)
        k.calls = [site for f, site in called if f == op]
        out.append(k)
    return out


def _inline_kernels(s: _Scan, what: str, call: cst.Call, rel: str, line: int) -> list[Kernel]:
    """The `__global__` kernels of a `load_inline`'s `cuda_sources` (a string or strings in the call,
    or a name the module binds to them), read as a .cu file's: they were not read, so no scaffold
    took their parameters (twenty-fourth read)."""
    given = _arg(call, "cuda_sources", 2) if what == "load_inline" else None
    if isinstance(given, cst.Name):
        given = s.texts.get(given.value, given)
    text = "\n".join(_strings(given))
    if "__global__" not in text:
        return []
    code = blanked(text, strings=True)
    detail = f"__global__, in the cuda_sources of load_inline at line {line}"
    return [
        Kernel(name, "cuda", rel, line, params, detail, source=body, typenames=typenames, template=template)
        for _, name, params, body, typenames, template in _kernels_in(_spliced(code), text, _void_aliases(code))
    ]


# what a `load_inline`'s `cuda_sources` is where porter does not read it (by its node's kind)
_BUILT = {
    "FormattedString": "an f-string",
    "ConcatenatedString": "strings written side by side",
    "BinaryOperation": "an expression",
    "Call": "a call",
    "Name": "a name porter does not follow there",
    "Attribute": "an attribute",
    "Subscript": "a subscript",
}


def _unread_sources(s: _Scan, call: cst.Call) -> str:
    """Said in a `load_inline` entry whose `cuda_sources` porter does not read (`_inline_kernels`
    reads strings, and names the module binds to them): built at run time (`open(...).read()`, an
    f-string, a concatenation), its kernels were neither listed nor said (twenty-fourth read's leftover)."""
    given = _arg(call, "cuda_sources", 2)
    if isinstance(given, cst.Name):
        given = s.texts.get(given.value, given)
    elements = [e.value for e in given.elements] if isinstance(given, (cst.List, cst.Tuple)) else [given]
    unread = [e for e in elements if e is not None and not isinstance(e, cst.SimpleString)]
    if not unread:
        return ""
    kind = _BUILT.get(type(unread[0]).__name__, "an expression")
    return f"; its cuda_sources are {kind}, built at run time: their kernels are not read"


def _attach_extension_calls(inv: Inventory, ext: str, calls: list[tuple[str, CallSite]], why: str) -> None:
    """The ops Python calls on a compiled extension: added to the build file's entry, or to one
    made for an extension found only by its import (a `_C` in a project with .cu sources)."""
    entry = next(
        (
            e
            for e in inv.kernels
            if e.kind == "cuda-extension"
            and (e.name == ext or e.name.endswith("." + ext) or ext.endswith("." + e.name))
        ),
        None,
    )
    if entry is None:
        first = calls[0][1]
        entry = Kernel(ext, "cuda-extension", first.path, first.line, detail=why.partition(": ")[2])
        inv.kernels.append(entry)
    entry.calls.extend(site for _, site in calls)
    entry.detail += "; ops called: " + ", ".join(sorted({op for op, _ in calls}))


_CLOSES = {")": "(", "]": "[", "}": "{", ">": "<"}


def _top_level_split(params: str) -> list[str]:
    """A C++ parameter list cut at its own commas, not those of a template's arguments
    (`PackedTensorAccessor32<scalar_t, 2, RestrictPtrTraits> x` is one parameter: it was three).
    In a default value (after a parameter's `=`) `<` and `>` compare and shift, and a bracket
    closes the one it matches: `int shift = (1 << 3), float scale` was one parameter (eighteenth read)."""
    out, opened, start, default = [], [], 0, False
    count = dict.fromkeys("([{<", 0)  # of each bracket in `opened`
    for i, c in enumerate(params):
        if c in "<>" and _ANGLE.match(params, i) is None:
            continue  # (`X <= 128`, `1 << 4` of a template's arguments: no bracket)
        if c in "([{" or (c == "<" and not default):
            opened.append(c)
            count[c] += 1
        elif c in ")]}" or (c == ">" and not default):
            while count[_CLOSES[c]]:  # (a `<` it skips was a comparison)
                count[opened[-1]] -= 1
                if opened.pop() == _CLOSES[c]:
                    break
        elif c == "=" and not opened and params[i - 1 : i] not in ("<", ">", "!", "=") and params[i + 1 : i + 2] != "=":
            default = True
        elif c == "," and not opened:
            out.append(params[start:i])
            start, default = i + 1, False
    return [*out, params[start:]]


class _Lines:
    """The line of an offset of `text`, by bisection: `text.count("\\n", 0, at)` per kernel was
    quadratic (40,000 kernels in a 2 MiB file took 45 s of the 60 s a file gets: eighteenth read)."""

    def __init__(self, text: str) -> None:
        self.ends = [m.start() for m in re.finditer("\n", text)]

    def of(self, at: int) -> int:
        return bisect.bisect_left(self.ends, at) + 1

    def start(self, line: int) -> int:
        """The offset where `line` (counted from 1) begins."""
        return self.ends[line - 2] + 1 if 1 < line <= len(self.ends) + 1 else 0


def closing_parens(code: str) -> dict[int, int]:
    """Where each `(` of `code` closes, by its offset (one pass; one that never closes is absent)."""
    close: dict[int, int] = {}
    opened: list[int] = []
    for m in re.finditer(r"[()]", code):
        if m.group() == "(":
            opened.append(m.start())
        elif opened:
            close[opened.pop()] = m.start()
    return close


@dataclass
class _Macro:
    """A function-like macro whose body defines a `__global__` kernel named by its parameters."""

    name: str
    params: list[str]
    body: str  # its replacement text, continuation lines joined, comments blanked
    path: str
    line: int


# a template's head, its parameters in group 1 (two levels of `<...>` inside: `typename V = Vec<T, 4>`)
_TEMPLATE = re.compile(r"\btemplate\s*<([^<>{};]*(?:<[^<>{};]*(?:<[^<>{};]*>[^<>{};]*)*>[^<>{};]*)*)>")
# what may stand between a template's head and `__global__`, read back from `__global__`
_BEFORE_GLOBAL = re.compile(r"(?:\b(?:static|inline|extern)|\s)$")


def _template_heads(code: str) -> dict[int, list[tuple[str, bool]]]:
    """The parameters of each `template <typename T, class... Ts, int N>` of `code`, by the offset
    where its head ends: each name (`T`, `Ts`, `N`; "" for an unnamed one) and whether it is a type's."""
    return {m.end(): [_template_param(part) for part in _top_level_split(m.group(1))] for m in _TEMPLATE.finditer(code)}


def _template_param(part: str) -> tuple[str, bool]:
    """(name, of a type) of one parameter of a template's head (`typename T`, `int N = 4`)."""
    typed = re.match(r"\s*(?:typename|class)\b\s*(?:\.\.\.\s*)?(\w*)", part)
    if typed:
        return typed.group(1), True
    words = re.findall(r"[A-Za-z_]\w*", part.split("=")[0])
    return (words[-1] if len(words) > 1 else ""), False


def _head_before(code: str, start: int) -> int:
    """Where the text before offset `start` ends, less the blanks and `static`/`inline`/`extern`
    words just before it (read back in windows of 40 characters)."""
    while start and (m := _BEFORE_GLOBAL.search(code, max(0, start - 40), start)) is not None:
        start = m.start()
    return start


def _kernels_in(
    code: str,
    text: str,
    voids: tuple[str, ...] = (),
    spelling: _GlobalMacros | None = None,
) -> Iterator[tuple[int, str, list[str], str, list[str], list[str]]]:
    """(offset, name, parameter declarations, body, template type parameters, template parameters) of each `__global__`
    kernel of `code` (comments and strings blanked; `text` the source, of the same offsets; `voids`
    the aliases of `void` its return type may be spelled as, `spelling` the macros of `__global__`
    the file sees)."""
    close = closing_parens(code)
    heads = _template_heads(code)
    live = spelling if spelling is not None and spelling.names else None
    globals_, voided = (live.globals_, live.voided) if live is not None else ((), ())
    for m in _kernel_head(voids, globals_, voided).finditer(code):
        end = close.get(m.end() - 1)
        if end is None or _CALLED.match(code, end + 1) or live is not None and not live.at(code, m.start()):
            continue
        params = [" ".join(p.split()) for p in _top_level_split(joined(code[m.end() : end])) if p.strip()]
        body = _body(code, end + 1, text)
        head = heads.get(_head_before(code, m.start()), [])
        typed, names = [n for n, typed in head if typed and n], [n for n, _ in head]
        yield m.start(), _PASTE.sub("", m.group(1)), params, body, typed, names
        for name, other in _head_branches(code[m.start() : m.start(1)], m.start(), close):
            yield m.start(), name, other, body, typed, names


# a kernel's name and parameters in an `#if` branch its head takes before `#else` (`__global__ void`,
# `#ifdef FOO`, `foo_k(float* a)`, `#else`, `bar_k(float* a, int n)`): read as an attribute macro's
# arguments, the branch's kernel was listed nowhere (twenty-eighth read's leftover)
_BRANCH_NAME = re.compile(r"#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*\n\s*([A-Za-z_]\w*)\s*\(")
# (and only the `#else`/`#elif` lines between its `)` and the kernel's own name: no `__launch_bounds__`
# of one branch, before the `void`, is a kernel)
_BRANCH_END = re.compile(r"(?:\s*#[ \t]*(?:elif|else)\b[^\n]*)+\s*")


def _head_branches(head: str, at: int, close: Mapping[int, int]) -> Iterator[tuple[str, list[str]]]:
    """(name, parameters) of each kernel an `#if` branch of a kernel's `head` (at offset `at`) names:
    one whose `)` only `#elif`/`#else` lines follow, or only spaces then such a branch (a head of three
    branches, `#if`/`#elif`/`#else`, listed two: twenty-eighth read's leftover)."""
    if "#" not in head:
        return
    found = []
    for m in _BRANCH_NAME.finditer(head):
        end = close.get(at + m.end() - 1)
        if end is not None and end < at + len(head):
            found.append((m, end - at))
    chain = len(head)  # (where the branches kept, read from the last, begin)
    kept: list[tuple[str, list[str]]] = []
    for m, end in reversed(found):
        if _BRANCH_END.fullmatch(head, end + 1) if chain == len(head) else not head[end + 1 : chain].strip():
            params = [" ".join(p.split()) for p in _top_level_split(joined(head[m.end() : end])) if p.strip()]
            kept.append((m.group(1), params))
            chain = m.start()
    yield from reversed(kept)


# a `#define NAME body` or `#undef NAME`: group 1 which, group 2 the name, group 3 the body
_DEFINE_OR_UNDEF = re.compile(r"^[ \t]*#[ \t]*(define|undef)[ \t]+(\w+)([^\n]*)", re.M)


class _GlobalMacros:
    """The object-like macros of `__global__` that a C++ file sees, and where each stands for it, as
    the compiler reads them: each `#define` and `#undef` of the file and of the headers it includes,
    in the preprocessor's order (`_Key`), the last before a head deciding. `globals_` are those a
    `void` follows (`#define G __global__ static`), `voided` those that end in it (`#define K
    __global__ static void`). Only the file's own macros and `__global__ void` were read, so `K k(`
    of a `__global__ static void` macro was no kernel, and a header's `#undef G` / `#define G` (empty)
    did not make `G void h(` a host function (twenty-third read's leftovers)."""

    def __init__(self, texts: Sequence[tuple[_Key, str]]) -> None:
        events = sorted(
            ((*key, m.start()), m.group(2), m.group(1) == "define", m.group(3), m.end())
            for key, text in texts
            for m in _DEFINE_OR_UNDEF.finditer(text)
        )
        self.history: dict[str, list[tuple[_Key, str]]] = {}
        kinds: dict[str, str] = {}  # each macro's kind where the preprocessor is: "global", "voided" or ""
        self.own: list[tuple[int, int]] = []  # the file's own `#define` lines of them: no kernel's head
        for key, name, defined, body, end in events:
            kinds[name] = _macro_kind(body, kinds) if defined else ""
            self.history.setdefault(name, []).append((key, kinds[name]))
            if kinds[name] and len(key) == 1:
                self.own.append((key[0], end))
        self.history = {n: h for n, h in self.history.items() if any(kind for _, kind in h)}
        self.globals_ = tuple(sorted(n for n, h in self.history.items() if any(k == "global" for _, k in h)))
        self.voided = tuple(sorted(n for n, h in self.history.items() if any(k == "voided" for _, k in h)))
        self.names = (*self.globals_, *self.voided)

    def at(self, code: str, start: int) -> bool:
        """Whether the head at `start` of `code` is `__global__`'s own, or a macro's that stands for it there."""
        word = _WORD.match(code, start)
        history = self.history.get(word.group()) if word is not None else None
        if not history:
            return True
        i = bisect.bisect_left(history, ((start,),)) - 1  # (an offset alone sorts before its entries)
        return i >= 0 and bool(history[i][1])


def _macro_kind(body: str, kinds: Mapping[str, str]) -> str:
    """What a `#define`'s `body` stands for, `kinds` those of the macros defined before it: `__global__`
    (or such a macro) a `void` must follow ("global"), `__global__ ... void` ("voided"), or neither."""
    words = _WORD.findall(body)
    if "__global__" not in words and not any(kinds.get(w) for w in words):
        return ""
    return "voided" if "void" in words or any(kinds.get(w) == "voided" for w in words) else "global"


def _expanded(macro: _Macro, args: list[str]) -> str:
    """`macro`'s body with its parameters replaced by `args` and `##` pasted, as the preprocessor
    expands one use (`#x` is left as written)."""
    params, values = macro.params, [a.strip() for a in args]
    if params and params[-1].endswith("..."):  # variadic: `__VA_ARGS__` (or `rest...`) is the rest, commas kept
        named = params[-1][:-3].strip() or "__VA_ARGS__"
        params = params[:-1]
        values = [*values[: len(params)], ", ".join(values[len(params) :])]
        params = [*params, named]
    given = dict(zip(params, values))
    out = re.sub(r"\b\w+\b", lambda m: given.get(m.group(), m.group()), macro.body)
    return _PASTE.sub("", out)


def _function_macros(code: str, rel: str = "", lines: _Lines | None = None) -> list[_Macro]:
    """Every function-like `#define` of `code`, its continued lines joined (of file `rel`, at its
    line where `lines` are given)."""
    return [
        _Macro(
            m.group(1),
            [p.strip() for p in m.group(2).split(",")],
            joined(m.group(3)),
            rel,
            lines.of(m.start()) if lines is not None else 0,
        )
        for m in _DEFINE.finditer(code)
    ]


def _macros(code: str, rel: str, lines: _Lines, given: list[_Macro] | tuple[_Macro, ...] = ()) -> list[_Macro]:
    """The function-like macros of `code` that make a kernel: whose body defines one named by
    their parameters, or uses such a macro (of `code`, or one of `given`: another file's), as
    `#define A(n) B(n, float)` over `#define B(n, T) __global__ void n(T* x)` does (A was not one:
    eighteenth read's leftover)."""
    defs = _function_macros(code, rel, lines)
    making = {m.name for m in given}
    users: dict[str, list[_Macro]] = {}
    for d in defs:
        if any(set(re.findall(r"\w+", k.group(1))) & set(d.params) for k in _GLOBAL.finditer(d.body)):
            making.add(d.name)
        for used in set(_USE.findall(d.body)):
            users.setdefault(used, []).append(d)
    queue = list(making)
    while queue:  # what uses a macro that makes a kernel makes one (each macro once: linear)
        for d in users.get(queue.pop(), ()):
            if d.name not in making:
                making.add(d.name)
                queue.append(d.name)
    return [d for d in defs if d.name in making]


def _type_aliases(code: str) -> list[tuple[int, str, str]]:
    """The type aliases `code` declares (comments and strings blanked): (offset, name, what it stands for)."""
    out = [(m.start(), m.group(2), m.group(1).strip()) for m in _TYPEDEF.finditer(code) if m.group(1).strip()]
    out += [(m.start(), m.group(1), m.group(2).strip()) for m in _USING.finditer(code)]
    out += [
        (m.start(), m.group(3), f"{m.group(1).strip()} ({m.group(2)}){m.group(4)}")
        for m in _TYPEDEF_POINTER.finditer(code)
    ]
    out += [(m.start(), m.group(1), (m.group(2) or "int").strip()) for m in _ENUM.finditer(code)]
    out += [(m.start(), m.group(2), (m.group(1) or "int").strip()) for m in _TYPEDEF_ENUM.finditer(code)]
    out += [
        (m.start(), m.group(1), m.group(2).strip())
        for m in _OBJECT_DEFINE.finditer(code)
        if not m.group(2).endswith("\\")
    ]
    return out


# at most this many aliases of `void` are read as a kernel's return type (each is one more
# alternative tried at each word of a kernel's head: 5,000 took 2 s on 180 KB); real code has one or two
_VOID_ALIASES = 64


def _void_aliases(code: str, headers: Sequence[tuple[int, str, str]] = ()) -> tuple[str, ...]:
    """The names `code` declares as aliases of `void` (`typedef void V;`, `using W = V;`: an alias of
    one counts), or `headers` do (`_header_aliases`), the first `_VOID_ALIASES` found; each alias
    looked at once."""
    named: dict[str, list[str]] = {}
    for _, name, value in [*_type_aliases(code), *headers]:
        named.setdefault(value, []).append(name)
    voids: dict[str, None] = {}
    todo = ["void"]
    while todo and len(voids) < _VOID_ALIASES:
        for name in named.pop(todo.pop(), []):
            if name != "void" and name not in voids:
                voids[name] = None
                todo.append(name)
    return tuple(voids)[:_VOID_ALIASES]


# `__global__`, whose head is read this far (to its `{` or `;`) for the words a header may alias to void
_GLOBAL_WORD = re.compile(r"\b__global__\b")
_HEAD_READ = 512


def _header_aliases(code: str, included: _Included) -> list[tuple[int, str, str]]:
    """The type aliases (`_type_aliases`) of the headers `path` includes (`_headers`, as the macro
    reader follows them) that a `__global__` head of `code` may spell its `void` with: read only
    where a head has no `void`, `auto` nor template return type before its first `(`, and only the
    headers that may define a word of such a head, or a word of what that stands for
    (`_ROUNDS`). A file's own aliases of void were read, its headers' not (twentieth read's leftover)."""
    wanted: set[str] = set()
    for g in _GLOBAL_WORD.finditer(code):
        head = code[g.end() : g.end() + _HEAD_READ]
        head = head[: min((i for i in (head.find("{"), head.find(";")) if i >= 0), default=len(head))]
        if re.search(r"\b(?:void|auto)\b|<", head.split("(", 1)[0]):
            continue
        wanted.update(_type_words(head.replace("(", " ").replace(")", " ") + " _"))
    if not wanted:
        return []
    headers = included.headers()
    names = [_defined(text) for _, text in headers]
    out: list[tuple[int, str, str]] = []
    done: set[int] = set()
    for _ in range(_ROUNDS):
        new = [i for i in range(len(headers)) if i not in done and not names[i].isdisjoint(wanted)]
        if not new:
            break
        for i in new:
            done.add(i)
            found = _type_aliases(blanked(headers[i][1], strings=True))
            out += found
            wanted.update(w for _, name, value in found if name in wanted for w in _type_words(value + " _"))
    return out


def _global_macros(code: str, included: _Included) -> _GlobalMacros:
    """The object-like macros of `__global__` that file `path` sees (`_GlobalMacros`): its own
    (`code`), and, only where it defines one or names one the tree's headers define
    (`search.globals_`), those of the headers it includes (`_headers`, as the macro reader follows
    them): a header may `#undef` the file's own."""
    texts: list[tuple[_Key, str]] = [((), code)]
    own = "__global__" in code and _STANDS_FOR_GLOBAL.search(code) is not None
    if own or any(n in code for n in included.search.globals_):
        prelude = included.search.preludes.get(os.path.realpath(included.path), ())
        texts += [((-1, *key), text) for key, text in prelude]  # (before the file's own: its includer's)
        texts += included.headers()
    return _GlobalMacros(texts if own or len(texts) > 1 else [])


def _spelled_in_macros(
    code: str, globals_: tuple[str, ...], lines: _Lines, rel: str, inv: Inventory
) -> list[tuple[int, int]]:
    """The function-like macros of `code` that use a macro of `__global__` (`#define DEF(name)
    MY_GLOBAL void name(...)`): their kernels are named at each use, which porter reads only for
    `__global__` itself, so each is said (the macro's parameter was listed as a kernel) and its span
    returned, for its head to be passed over."""
    if not globals_:
        return []
    used = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, globals_)) + r")(?!\w)")
    spans = [(d.start(), d.end(), d.group(1)) for d in _DEFINE.finditer(code) if used.search(d.group(3))]
    inv.problems.extend(
        f"{path_name(rel)}:{lines.of(at)}: macro {name} defines a kernel through a macro of `__global__`: "
        "its kernels are not listed"
        for at, _, name in spans
    )
    return [(start, end) for start, end, _ in spans]


# a word ending in `GLOBAL` just before a kernel's `void name(` (cutlass's `CUTLASS_GLOBAL void Kernel(`), in
# a file that does not see it defined (cutlass not in the tree, or not found where the build looks)
_GLOBAL_LIKE = re.compile(r"(?<!\w)(\w*GLOBAL)\s+(?:(?:static|inline)\s+)*void\s+(\w+)\s*\(")


def _unseen_globals(code: str, globals_: tuple[str, ...], lines: _Lines, rel: str) -> list[str]:
    """A note for each `NAME_GLOBAL void k(` whose macro the file does not see defined: if it stands
    for `__global__`, `k` is a kernel porter cannot list (it was passed over in silence)."""
    if "GLOBAL" not in code:
        return []
    return [
        f"{path_name(rel)}:{lines.of(m.start())}: `{m.group(1)} void {m.group(2)}(`: {m.group(1)} is no macro "
        "porter finds defined (in the file or the headers it includes); if it stands for `__global__`, "
        f"kernel {m.group(2)} is not listed"
        for m in _GLOBAL_LIKE.finditer(code)
        if m.group(1) not in globals_
    ]


def _aliases_of(params: list[str], aliases: Mapping[str, str]) -> dict[str, str]:
    """The entries of `aliases` that `params` name, and those their texts name in turn."""
    out: dict[str, str] = {}
    words = [w for p in params for w in re.findall(r"\w+", p)]
    while words:
        w = words.pop()
        if w in aliases and w not in out:
            out[w] = aliases[w]
            words.extend(re.findall(r"\w+", aliases[w]))
    return out


def _within(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset `at` lies in one of `spans` (sorted, apart)."""
    i = bisect.bisect_right(spans, (at, math.inf)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


class _TooLarge(Exception):
    """An expansion past its budget, or nested past `_NESTING`."""


_NESTING = 64  # macros expanded inside one another at most (each takes one more name from the rescan)


def _expand_uses(
    text: str, by_name: dict[str, _Macro], disabled: frozenset[str], used: set[str], budget: list[int]
) -> str:
    """`text` with each use of a macro of `by_name` replaced by what it expands to, rescanned, as
    the preprocessor expands a macro's replacement again: a macro is not expanded inside its own
    expansion (`disabled`), so a macro that uses itself ends. Raises `_TooLarge` past `budget`."""
    if len(disabled) > _NESTING:
        raise _TooLarge
    close = closing_parens(text)
    out: list[str] = []
    at = 0
    for use in _USE_AT.finditer(text):
        macro = by_name.get(use.group(1))
        end = close.get(use.end() - 1)
        if use.start() < at or macro is None or end is None or macro.name in disabled:
            continue
        body = _expanded(macro, _top_level_split(text[use.end() : end]))
        budget[0] -= len(body)
        if budget[0] < 0:
            raise _TooLarge
        used.add(macro.name)
        out += [text[at : use.start()], _expand_uses(body, by_name, disabled | {macro.name}, used, budget)]
        at = end + 1
    out.append(text[at:])
    return "".join(out)


def _macro_kernels(
    macros: list[_Macro],
    code: str,
    lines: _Lines,
    rel: str,
    detail: str,
    inv: Inventory,
    top: set[str] | None = None,
    text: str = "",
) -> tuple[list[Kernel], set[str]]:
    """A kernel per use of one of `macros` in `code` (`DEF_KERNEL(foo)`; with `top`, of those
    named in it only), named and typed as it expands (the macros its expansion uses expanded
    too), and the names of the macros used. What the uses expand to is bounded by the file's
    size (8 times, and 1 MiB more): a large macro used many times makes text of the square of
    the file's size. `text` is `code`'s source (comments and strings kept), read for the body of
    a kernel whose macro ends at its parameters (`_use_body`)."""
    by_name = {m.name: m for m in macros}
    close = closing_parens(code)
    defines = [(d.start(), d.end()) for d in _DEFINE.finditer(code)]
    budget = [8 * len(code) + 2**20]
    out: list[Kernel] = []
    used: set[str] = set()
    for use in _USE_AT.finditer(code):
        macro = by_name.get(use.group(1))
        end = close.get(use.end() - 1)
        if macro is None or end is None or (top is not None and macro.name not in top):
            continue
        if _within(defines, use.start()):
            continue  # in a `#define` (its own, or another macro's body: expanded at that macro's uses)
        line = lines.of(use.start())
        try:
            body = _expanded(macro, _top_level_split(code[use.end() : end]))
            budget[0] -= len(body)
            if budget[0] < 0:
                raise _TooLarge
            body = _expand_uses(body, by_name, frozenset([macro.name]), used, budget)
        except _TooLarge:
            inv.problems.append(
                f"{path_name(rel)}:{line}: the uses of macro {macro.name} from here on are not expanded "
                f"(their text passes 8 times the file's size, or nests more than {_NESTING} macros deep)"
            )
            break
        used.add(macro.name)
        tail = _use_body(body, code, end, text or code)
        for _, name, params, source, typenames, template in _kernels_in(body, body):
            why = f"{detail}; made by macro {macro.name} ({path_name(macro.path)}:{macro.line})"
            source = source or tail
            out.append(
                Kernel(name, "cuda", rel, line, params, why, source=source, typenames=typenames, template=template)
            )
    return out, used


# `__global__ void NAME(args)(`: a kernel whose name a function-like macro makes (`#define KNAME(n) n##_kernel`);
# its `__global__` may be the attribute, or a word the file defines as it (`_GlobalMacros`: `GLOBAL void KNAME(bar)(`,
# libclang's `bar_kernel`, was listed nowhere: thirty-first sleft read's leftover), in group 1 (no `static`: a run of
# them was read from each, quadratically)
_MACRO_NAMED_HEAD = re.compile(
    r"(?<!\w)(" + _ATTRIBUTE_GLOBAL + r"|(?!(?:static|inline)(?!\w))[A-Za-z_]\w*)\s+(?:(?:static|inline)\s+)*void\s+"
    r"(?:__launch_bounds__\s*\([^()]*\)\s*)?([A-Za-z_]\w*)\s*\("
)


def _macro_named(
    code: str, text: str, lines: _Lines, rel: str, detail: str, spelling: _GlobalMacros | None = None
) -> list[Kernel]:
    """A kernel for each `__global__ void KNAME(foo)(float* x) {` of `code` (comments and strings blanked;
    `text` the source, of the same offsets) whose `KNAME` the file defines as a function-like macro that
    makes one name (`#define KNAME(n) n##_kernel`: `foo_kernel`, as libclang reads it): it was listed
    nowhere, and its launch said to run "a name no kernel porter lists has" (thirtieth read's leftover). Its
    `__global__` may be spelled as `spelling` (the macros of it the file sees) reads it there."""
    if "define" not in code:
        return []
    macros = {m.name: m for m in _function_macros(code, rel, lines)}
    close = closing_parens(code) if macros else {}
    out = []
    for m in _MACRO_NAMED_HEAD.finditer(code) if macros else ():
        if not _spells_global(m.group(1), code, m.start(), spelling):
            continue
        macro, args_end = macros.get(m.group(2)), close.get(m.end() - 1)
        opened = _OPEN_PAREN.match(code, args_end + 1) if macro is not None and args_end is not None else None
        end = close.get(opened.end() - 1) if opened is not None else None
        if macro is None or args_end is None or opened is None or end is None or _CALLED.match(code, end + 1):
            continue
        name = _expanded(macro, _top_level_split(code[m.end() : args_end])).strip()
        if re.fullmatch(r"[A-Za-z_]\w*", name) is None:
            continue  # (`ATTR(1)` that makes no name: no C++)
        params = [" ".join(p.split()) for p in _top_level_split(joined(code[opened.end() : end])) if p.strip()]
        why = f"{detail}; named by macro {macro.name} ({path_name(macro.path)}:{macro.line})"
        out.append(Kernel(name, "cuda", rel, lines.of(m.start()), params, why, source=_body(code, end + 1, text)))
    return out


_OPEN_PAREN = re.compile(r"(?<!\s)\s*" + _NAME_ATTRIBUTES + r"\(")


def _spells_global(word: str, code: str, start: int, spelling: _GlobalMacros | None) -> bool:
    """Whether `word`, at `start` of `code`, is `__global__` there: itself, the attribute, or a macro of it."""
    if word == "__global__" or word.startswith("__attribute__"):
        return True
    return spelling is not None and word in spelling.globals_ and spelling.at(code, start)


def _use_body(expansion: str, code: str, end: int, text: str) -> str:
    """The body a macro's use at `code[..end]` gives the kernel its `expansion` ends with the
    parameters of: the `{...}` written after the use (flash-attn's `DEFINE_FLASH_FORWARD_KERNEL(k,
    ...) { ... }`, whose macro ends at `(... params)`). The kernel had no body, so no launch was
    attached to it (twenty-seventh read's leftover); "" where the expansion ends otherwise."""
    return _body(code, end + 1, text) if expansion.rstrip().endswith(")") else ""


def _aliased(kernels: list[Kernel], defs: _Defs, lines: _Lines) -> list[Kernel]:
    """`kernels`, each given the type aliases its parameters name, as in force at the kernel."""
    for k in kernels:
        k.aliases = _aliases_of(k.params, defs.at(defs.aliases, lines.start(k.line))) if defs.aliases else {}
    return kernels


_PARAMS_BUDGET = 10_000  # parameters that object-like macros expand to, in one file, at most


def _params_expanded(
    params: list[str], objects: Mapping[str, str], budget: list[int], disabled: frozenset[str] = frozenset()
) -> list[str]:
    """`params` with each that is only the name of an object-like macro of `objects` replaced by
    the parameters its body declares, rescanned (not inside its own expansion, as the preprocessor
    does). Raises `_TooLarge` past `budget` parameters or `_NESTING` macros deep."""
    out: list[str] = []
    for p in params:
        if p not in objects or p in disabled or not re.fullmatch(r"\w+", p):
            out.append(p)
            continue
        if len(disabled) >= _NESTING:
            raise _TooLarge
        inner = [" ".join(q.split()) for q in _top_level_split(objects[p]) if q.strip()]
        budget[0] -= len(inner)
        if budget[0] < 0:
            raise _TooLarge
        out.extend(_params_expanded(inner, objects, budget, disabled | {p}))
    return out


def _expand_param_macros(kernels: list[Kernel], defs: _Defs, lines: _Lines, rel: str, inv: Inventory) -> None:
    """Each of `kernels`' parameters that is an object-like macro (`MARLIN_KERNEL_PARAMS`) as the
    parameters it stands for: the definition in force at the kernel (`defs`: of its file and the
    headers it includes, vllm 0.34.0's `kernel.h` beside `marlin.cu`)."""
    budget = [_PARAMS_BUDGET]
    for k in kernels:
        if not any(re.fullmatch(r"\w+", p) for p in k.params):
            continue
        try:
            k.params = _params_expanded(k.params, defs.at(defs.macros, lines.start(k.line)), budget)
        except _TooLarge:
            inv.problems.append(
                f"{path_name(rel)}:{k.line}: the macros of kernel {k.name}'s parameters are not expanded "
                f"(they pass {_PARAMS_BUDGET} parameters, or nest more than {_NESTING} macros deep)"
            )
            return


@dataclass(frozen=True)
class _Search:
    """Where a C++ file's `#include`s are found, as the compiler looks: a quoted name beside the
    file that includes it, then (a quoted or an angled one) in the build's `-I` folders (`dirs`,
    `include_dirs` of setup.py, `include_directories` of CMakeLists.txt). No header outside `base`
    (the tree scanned) is read."""

    base: Path
    dirs: tuple[Path, ...] = ()
    globals_: frozenset[str] = frozenset()  # the tree's macros of `__global__` (`_cuda_files`)
    preludes: dict[str, tuple[tuple[_Key, str], ...]] = field(default_factory=dict, hash=False)  # (`_preludes`)

    def find(self, name: str, quoted: bool, beside: Path) -> Path | None:
        for folder in ((beside,) if quoted else ()) + self.dirs:
            if not os.path.isfile(folder / name):
                continue
            candidate = os.path.realpath(folder / name)
            if within(candidate, str(self.base)):
                return Path(candidate)
        return None


# the headers read for one C++ file, included by it or by them: this deep, this many and these
# bytes at most (a header read once: a second `#include` of it, or a cycle, adds nothing, as an
# include guard or `#pragma once` makes it)
_INCLUDE_DEPTH = 16
_INCLUDE_COUNT = 64
_INCLUDE_BYTES = 2 * 2**20
_INCLUDE_LOOKUPS = 4096  # and `#include`s looked up (each a `stat` per folder searched)


# where a definition comes into force, in the order the preprocessor meets it: the offset of the
# file's own, or that of the `#include` of the header holding it, then the offset in that header
# (and in a header it includes, ...)
_Key = tuple[int, ...]
# the words of a kernel's parameters that name no type to look up: C++'s own
_PLAIN = frozenset(
    "const volatile unsigned signed int float double char short long bool void auto struct class typename "
    "enum restrict __restrict __restrict__ std size_t int8_t int16_t int32_t int64_t uint8_t uint16_t "
    "uint32_t uint64_t".split()
)
_ROUNDS = 8  # rounds of names found in what the names looked for stand for (a macro in a macro, ...)


@dataclass
class _Defs:
    """The object-like macros and the type aliases of a C++ file and of the headers it includes
    (and they include), each name with where each of its definitions comes into force (`_Key`),
    or where an `#undef` ends it (None). A use reads the definition in force where it is, as the
    preprocessor does: the file's own macro won over a header's, whichever came first, and an
    `#undef` was not read (twentieth read's leftover). The headers are found as `search` says,
    read `_INCLUDE_DEPTH` deep, `_INCLUDE_COUNT` and `_INCLUDE_BYTES` at most; each is read for its
    definitions only when it may define one of the names looked for (`_defined`): read whole,
    CUTLASS's headers took 15 s for one of flash-attn's files."""

    macros: dict[str, list[tuple[_Key, str | None]]] = field(default_factory=dict)
    aliases: dict[str, list[tuple[_Key, str | None]]] = field(default_factory=dict)
    skipped: str = ""  # the first header passed over for the bytes budget, said (`_headers`)

    @staticmethod
    def at(table: dict[str, list[tuple[_Key, str | None]]], offset: int) -> _InForce:
        return _InForce(table, offset)

    @classmethod
    def of(cls, code: str, included: _Included, kernels: list[Kernel]) -> _Defs:
        """The definitions of a file (`code`: comments and strings blanked) and of its headers
        (`included`) that the parameters of `kernels` may name."""
        defs = cls()
        if not kernels:
            return defs
        defs.add(code, ())
        # (a kernel's own template type parameters are no names to look for: `T` is in every header)
        wanted = {w for k in kernels for p in k.params for w in _type_words(p) - set(k.typenames)}
        headers = included.headers() if wanted else []  # (no name to look for: no header to read)
        defs.skipped = included.skipped[0] if wanted and included.skipped else ""
        done: set[int] = set()
        names = [_defined(text) for _, text in headers]
        for _ in range(_ROUNDS):
            for w in list(wanted):  # (the types a macro's parameters name, not their names; what an alias names)
                wanted.update(
                    t for _, v in defs.macros.get(w, ()) if v for p in _top_level_split(v) for t in _type_words(p)
                )
                wanted.update(t for _, v in defs.aliases.get(w, ()) if v for t in _type_words(v + " _"))
            new = [i for i in range(len(headers)) if i not in done and not names[i].isdisjoint(wanted)]
            if not new:
                break
            for i in new:
                done.add(i)
                key, text = headers[i]
                defs.add(blanked(text, strings=True), key)
        for table in (defs.macros, defs.aliases):
            for history in table.values():
                history.sort(key=lambda e: e[0])
        return defs

    def add(self, code: str, key: _Key) -> None:
        """Add the definitions of `code` (comments and strings blanked), each at `key` and its
        offset there."""
        for m in _OBJECT_MACRO.finditer(code):
            self.macros.setdefault(m.group(1), []).append(((*key, m.start()), joined(m.group(2))))
        for where, name, value in _type_aliases(code):
            self.aliases.setdefault(name, []).append(((*key, where), value))
        for m in _UNDEF.finditer(code):
            for table in (self.macros, self.aliases):
                table.setdefault(m.group(1), []).append(((*key, m.start()), None))


# what may define a name as a macro or a type alias, in a header read as it is: `#define N`,
# `#undef N`, `using N =`, `enum N`, or `N;` (`typedef ... N;`, `} N;`)
_DEFINING = re.compile(
    r"^[ \t]*#[ \t]*(?:define|undef)[ \t]+(\w+)|\busing[ \t]+(\w+)[ \t]*=|\benum[ \t]+(?:(?:class|struct)[ \t]+)?(\w+)"
    r"|(?<!\w)(\w+)[ \t]*;",
    re.M,
)


def _defined(text: str) -> set[str]:
    """The names `text` (a header's, as it is) may define as a macro or a type alias (`_DEFINING`).
    A header that only names the names looked for, or declares a struct of one (CUTLASS's many
    `struct Params {`), is not read for its definitions."""
    return {name for m in _DEFINING.finditer(text) for name in m.groups() if name}


# the `=` of a parameter's default value: none of `==`, `!=`, `<=`, `>=`
_DEFAULT = re.compile(r"(?<![=!<>])=(?!=)")


def without_default(param: str) -> str:
    """A C++ parameter's declaration less its default value, cut at its first `=` that is no
    comparison: one in a template argument (flashinfer's `std::conditional_t<MT == ModelType::DSV4,
    ...> pages`) cut it there, and the parameter was named `MT` (twenty-first read)."""
    default = _DEFAULT.search(param)
    return param[: default.start()] if default else param


def _type_words(param: str) -> set[str]:
    """The words of a parameter's declaration that may name a macro or a type alias: all but
    C++'s own words, CUDA's `__word__` attributes, a class's member (`Visitor::Params`: CUTLASS
    declares a `Params` in each of its 200 headers) and the name it declares (its last word, when
    it has others)."""
    head = without_default(param).rstrip()
    words = re.findall(r"(?<!::)(?<!:: )\b[A-Za-z_]\w*", head)
    while head.endswith("]") and "[" in head:  # (an array's extents: `x[N]` declares `x`)
        head = head[: head.rindex("[")].rstrip()
    if len(words) > 1 and (head[-1:].isalnum() or head[-1:] == "_"):
        words = words[:-1]
    return {w for w in words if w not in _PLAIN and not (w.startswith("__") and w.endswith("__"))}


def _headers(
    commented: str, path: Path, search: _Search, skipped: list[str], found: list[str] | None = None
) -> list[tuple[_Key, str]]:
    """The headers file `path` includes (`commented`: its text, comments blanked), and they
    include, in the order the preprocessor reads them, each with the key of its definitions
    (`_Key`) and its text: each header once (a second `#include` of it, or a cycle, adds nothing,
    as an include guard or `#pragma once` makes it), at most `_INCLUDE_DEPTH` deep, `_INCLUDE_COUNT`
    of them and `_INCLUDE_BYTES` in all, `_INCLUDE_LOOKUPS` `#include`s looked up. A header's own
    `#include`s are read in its text as it is (a commented-out one is followed too: a header more,
    read for its words). A header past the bytes left is passed over, and the first such said
    in `skipped` (it was passed over in silence: twentieth read's leftover); `found` takes each
    header's real path, in the order of the list returned."""
    out: list[tuple[_Key, str]] = []
    seen: set[str] = set()
    left = [_INCLUDE_COUNT, _INCLUDE_BYTES, _INCLUDE_LOOKUPS]

    def walk(text: str, where: Path, key: _Key) -> None:
        for m in _INCLUDE.finditer(text):
            left[2] -= 1
            if left[2] < 0:
                return
            header = search.find(m.group(2), m.group(1) == '"', where.parent)
            if header is None or len(key) >= _INCLUDE_DEPTH or str(header) in seen or left[0] <= 0:
                continue
            seen.add(str(header))
            try:
                data = read_regular(header, limit=left[1])
            except Unreadable as exc:  # (too large for what is left, too)
                if too_large(exc.reason) and not skipped:
                    with suppress(OSError):
                        size = os.stat(header).st_size
                        shown = path_name(os.path.relpath(header, search.base))
                        skipped.append(
                            f"header {shown} ({size:,} bytes) not read for the "
                            f"kernels' macros and type aliases: past the {left[1]:,} bytes left of the "
                            f"{_INCLUDE_BYTES // 2**20} MiB read of one file's headers"
                        )
                continue
            left[0] -= 1
            left[1] -= len(data)
            inner = _cxx_text(data)
            out.append(((*key, m.start()), inner))
            if found is not None:
                found.append(str(header))
            walk(inner, header, (*key, m.start()))

    walk(commented, path, ())
    return out


class _Included:
    """The headers a C++ file includes (`_headers`), read once for the readers that want them
    (macros of `__global__`, aliases of `void`, dispatch macros, the parameters' definitions): each
    read them again, so a header was read up to four times per file (twenty-third read's leftover)."""

    def __init__(self, commented: str, path: Path, search: _Search) -> None:
        self.commented, self.path, self.search = commented, path, search
        self.skipped: list[str] = []
        self._headers: list[tuple[_Key, str]] | None = None

    def headers(self) -> list[tuple[_Key, str]]:
        if self._headers is None:
            self._headers = _headers(self.commented, self.path, self.search, self.skipped)
        return self._headers


class _InForce(Mapping[str, str]):
    """The definitions of a `_Defs` table in force at an offset (before it), by name."""

    def __init__(self, table: dict[str, list[tuple[_Key, str | None]]], offset: int) -> None:
        self.table, self.offset = table, offset

    def _value(self, name: str) -> str | None:
        history = self.table.get(name, [])
        i = bisect.bisect_left(history, ((self.offset,),)) - 1  # (an offset alone sorts before its entries)
        return history[i][1] if i >= 0 else None

    def __getitem__(self, name: str) -> str:
        value = self._value(name)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in self.table if self._value(name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


# a UTF-16/32 source (a byte-order mark first, as lint tells it): decoded as UTF-8 its kernels are
# no text, and it was passed over without a word (twenty-first read's leftover); not read, as no
# compiler reads it
_WIDE = "UTF-16/UTF-32 text ({}): not read for kernels (nvcc, gcc and clang do not compile it either)"
_MARKED, _NULS = "it starts with a byte-order mark", "no byte-order mark, but NUL bytes between its characters"
_WIDE_SAMPLE = 4096


def _wide(data: bytes) -> str:
    """Why `data` is UTF-16/UTF-32 text, or "": its byte-order mark, or, without one, its NUL bytes
    (a C++ source has none) at every other position of one parity in its first 4 KiB, as ASCII
    characters take them in UTF-16 or UTF-32, the other parity mostly not NUL (a file of zeros is
    none). A BOM-less one was read as UTF-8, found to hold no kernel, unsaid (twenty-second read)."""
    if data.startswith(WIDE_BOMS):
        return _MARKED
    sample = data[:_WIDE_SAMPLE]
    sample = sample[: len(sample) - len(sample) % 2]
    if len(sample) < 4 or b"\0" not in sample:
        return ""
    even, odd = (sample[i::2].count(0) / (len(sample) // 2) for i in (0, 1))
    return _NULS if max(even, odd) >= 0.75 and min(even, odd) <= 0.55 else ""


def _unread(path: Path, reason: str) -> str:
    """Why a .cu source was not read: past the parse limit, as `porter rewrite` says it of a Python file."""
    if too_large(reason):
        with suppress(OSError):
            return too_large_to_parse(os.stat(path).st_size) or reason
    return reason


def _scan_cuda(
    path: Path, rel: str, inv: Inventory, macros: list[_Macro] | None = None, search: _Search | None = None
) -> None:
    """A .cu source's `__global__` kernels (with what it binds and registers), or, with none, the
    first function it binds for Python. A kernel a macro defines is one per use of the macro
    (`DEF_KERNEL(foo)`): it was listed once, under the macro's parameter (eighteenth read). A
    macro of no use here goes into `inv.macros`; given `macros` (other files' macros of that kind),
    only their uses here are read. The headers it includes are found as `search` says (by
    default: in its own folder)."""
    try:  # a Python file's parse limit: the largest .cu/.cuh of the corpus libraries is 151 KiB
        data = read_regular(path, MAX_PARSE_BYTES)
        wide = _wide(data)
        why = _WIDE.format(wide) if wide else ""
    except Unreadable as exc:
        why = _unread(path, exc.reason)
    if why:
        if macros is None:  # (the second read's: said by the first)
            inv.problems.append(f"{path_name(rel)}: {why}")
        return
    text = _cxx_text(data)
    commented = blanked(text, strings=False)  # `m.def("name", ...)` names its op in a string
    code = blanked(text, strings=True)
    inv.problems.extend(_unread_marks(code, rel))
    inv.problems.extend(_two_spellings(data.decode("utf-8", errors="replace"), rel))
    inv.spelled = _spellings(data.decode("utf-8", errors="replace"), rel)
    # each op and namespace once: one op is defined and implemented, one namespace has a
    # `TORCH_LIBRARY` and a `TORCH_LIBRARY_IMPL` (it was named twice)
    search = search or _Search(Path(os.path.realpath(path.parent)))
    unsure: list[str] = []  # (said with the registrations, by the first read)
    registered = _native_registered(data, rel, path, search, unsure)
    # (and `RegisterOperators().op("ns::op", &fn)`'s, which `_BIND` does not read)
    bound = list(dict.fromkeys([*_BIND.findall(commented), *(r.op for r in registered)]))
    libs = list(dict.fromkeys(_TORCH_LIB.findall(code)))
    detail = (
        "__global__"
        + (f"; binds: {', '.join(bound)}" if bound else "")
        + (f"; TORCH_LIBRARY {', '.join(libs)}" if libs else "")
    )
    lines = _Lines(text)
    if macros is not None:  # the second read: the uses of other files' macros (and own ones using them) only
        alone = {m.name for m in _macros(code, rel, lines)}  # listed by the first read
        own = _macros(code, rel, lines, macros)
        top = {m.name for m in macros} | {m.name for m in own if m.name not in alone}
        made, inv.used = _macro_kernels([*macros, *own], code, lines, rel, detail, inv, top, text)
        defs = _Defs.of(code, _Included(commented, path, search), made)
        _expand_param_macros(made, defs, lines, rel, inv)
        inv.kernels.extend(_aliased(made, defs, lines))
        return
    inv.registered = registered
    inv.problems.extend(unsure)
    own = _macros(code, rel, lines)
    names = {m.name for m in own}
    spans = [(d.start(), d.end()) for d in _DEFINE.finditer(code) if d.group(1) in names]
    found = 0
    included = _Included(commented, path, search)  # (its headers read once, for the four readers)
    spelling = _global_macros(code, included)
    inv.problems.extend(_unseen_globals(code, spelling.names, lines, rel))
    spans = sorted(
        {*spans, *_spelled_in_macros(code, spelling.names, lines, rel, inv), *spelling.own}
    )  # (sorted, apart; a `#define K __global__ void` line is no kernel's head)
    # a line continuation is a blank to a kernel's head (`__global__ \\<newline> void k(`: no kernel was
    # read); the macros keep theirs (a `#define`'s body runs to the line that does not end in one)
    voids = _void_aliases(code, _header_aliases(code, included))
    spliced = _spliced(code)
    spaces = _Namespaces(code)
    for start, name, params, source, typenames, template in _kernels_in(spliced, text, voids, spelling):
        found += 1
        if _within(spans, start):
            continue  # a macro's: listed at each use
        line = lines.of(start)
        kernel = Kernel(name, "cuda", rel, line, params, detail, source=source, typenames=typenames, template=template)
        kernel.specialises = _specialised(spliced, start, name) if template == [""] else []
        kernel.namespace = spaces.at(start)
        inv.kernels.append(kernel)
    made, used = _macro_kernels(own, code, lines, rel, detail, inv, text=text)
    inv.kernels.extend(made)
    inv.kernels.extend(_macro_named(spliced, text, lines, rel, detail, spelling))
    _branched(inv.kernels, code, lines)
    kept = _spliced(commented) if "<<<" in spliced and commented != code else ""  # (a literal in a launch)
    inv.launches = _launches(spliced, lines, rel, [(m.start(), m.end()) for m in _ANY_DEFINE.finditer(code)], kept)
    inv.api_launches = _api_launches(spliced, lines, rel, commented)
    _dispatched(inv.launches, code, included)
    defs = _Defs.of(code, included, inv.kernels)
    if defs.skipped:
        inv.problems.append(f"{path_name(rel)}: {defs.skipped}")
    _expand_param_macros(inv.kernels, defs, lines, rel, inv)
    _aliased(inv.kernels, defs, lines)
    inv.macros.extend(m for m in own if m.name not in used)
    if not found and bound:
        inv.kernels.append(Kernel(bound[0], "cuda", rel, 1, detail=f"binds: {', '.join(bound)}"))
