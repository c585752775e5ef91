"""The operators a project's own C++/CUDA sources register with torch, and which of them have
a CUDA kernel only.

`torch.ops._C.sm100_cutlass_mla_decode(...)` calls what the project's compiled extension
registered: `STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, m) { m.impl("sm100_cutlass_mla_decode", ...); }`
in a `.cu` file gives the op a CUDA kernel, and when no registration gives it another (a
`TORCH_LIBRARY_IMPL(_C, CPU, ...)` block, `ops.impl("rms_norm", torch::kCPU, ...)`, a
CompositeExplicitAutograd one, an `ops.def(schema, fn)` with its function) a tensor of the
target sent into it fails: code that runs it is CUDA-only. A registration whose namespace is a
macro (`TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)`, the CPU build's) counts for every
namespace. Read with regular expressions, without running or compiling anything.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple, TypeVar

from porter.analysis import python_ops
from porter.analysis.build_includes import build_root, include_dirs
from porter.analysis.if_groups import Branch, branch_taken, directives, going_on
from porter.core import preprocessor
from porter.core.cpp_text import blank_comments, blanked, not_code
from porter.core.reading import MAX_PARSE_BYTES, NextOf, read_regular, read_regular_stat
from porter.core.textsafe import name_bytes

# what a C++ or CUDA source must contain to register an operator
TOKEN = b"TORCH_LIBRARY"
# and torch's older API, `torch::RegisterOperators().op("ns::op", &fn)` (torch-sparse 0.6.18,
# torch-scatter, torch-cluster): its ops were not read (twenty-sixth read)
OLD_TOKEN = b"RegisterOperators"
# the C++ and CUDA sources read (discovery notes these beside the Python files)
SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
# those nvcc compiles (a `.cuh` by the `.cu` that includes it); and what the others (C++ sources, whose
# compiler may be nvcc: `__NVCC__` "defined when compiling C/C++/CUDA source files") never define:
# `__CUDACC__` is "defined when compiling CUDA source files" (nvcc's documentation), and no device pass
# reads them. Undecided, a header's `#ifdef __CUDACC__` / `#define KEY CUDA` / `#else` / `#define KEY CPU`
# included by a `.cpp` gave CUDA (the first), and its CPU op was said CUDA-only (twenty-ninth read's leftover)
_NVCC_SUFFIXES = (".cu", ".cuh")
_HOST_COMPILER: dict[str, bool | None] = {"__NVCC__": None, "__CUDACC__": False, "__CUDA_ARCH__": False}
_NVCC_OR_NOT: dict[str, bool | None] = {"__NVCC__": None, "__CUDACC__": None, "__CUDA_ARCH__": None}

# `TORCH_LIBRARY_IMPL(ns, CUDA, m) {`, `STABLE_TORCH_LIBRARY_FRAGMENT(_C, ops) {`,
# `TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {`: the head, then its arguments (`_blocks`)
_HEAD = re.compile(rb"\b(?:STABLE_)?TORCH_LIBRARY(_IMPL)?(?:_FRAGMENT|_EXPAND)?(?:_EXPAND)?\s*\(\s*")
_NOT_ARGUMENT = re.compile(rb"[^\w()\s,]")  # what no argument list of a block holds (`{` among it)
# a call of a library (`m.impl(`; `p->impl(`, a pointer to it; `(&m)->impl(`, `(*p).def(`: were none, and the op said
# CUDA-only, thirty-third scaf2 read's leftover): its name and `impl` or `def`
_CALL = re.compile(
    rb"(?:(?P<paren>(?<![\w)\]>])\(\s*(?:[&*]\s*)?))?\b(?P<var>\w+)\s*(?(paren)\)\s*)(?:\.|->)\s*(?P<kind>impl|def)\s*\("
)
# a call chained to one of them (`m.impl(...).impl(`), matched after the `)` (from a run's first space only: linear)
_CHAINED = re.compile(rb"(?<!\s)\s*\.\s*(impl|def)\s*\(")
# where a call's code goes on after the string literals that open its arguments (blanked in its code)
_CODE_AGAIN = re.compile(rb"\S")
# the op a schema or name opens with (the literals' text, joined as the compiler joins `"ns::" "op"`);
# `"ns::op(...)"` names its block's namespace (torch refuses another), and was read as an op `ns` (twenty-fourth read);
# with its overload (`"a.out"`: an op of its own to torch's dispatcher, whose CPU kernel alone was read as `a`'s, so
# `a`, with a CUDA kernel only, was not said to be: thirtieth scaffold read's leftover)
_OP = re.compile(rb"\s*(?:\w+\s*::\s*)?(\w+(?:\.\w+)?)")
# what a call's name or schema may be wrapped in: torch's `TORCH_SELECTIVE_NAME(...)`, and `torch::schema(
# "...", c10::AliasAnalysisKind::...)` (intel-extension-for-pytorch's `m.def(torch::schema(...), fn)`: the def
# and its function, which every device runs, were none, and an op with it and a CUDA kernel said CUDA-only)
_WRAPPED = re.compile(rb"\s*(?:TORCH_SELECTIVE_(?:NAME|SCHEMA)|(?:(?:::\s*)?torch\s*::\s*)?schema)\s*\(")
# what `m.def(schema, ...)` may take after its schema that is no implementation: its tags (torch's
# `def(const char* schema, const std::vector<at::Tag>& tags = {})`): `m.def("f(Tensor x) -> Tensor",
# {at::Tag::pt2_compliant_tag})` (torch-harmonics 0.8.1) was read as an implementation every device runs,
# and an op with a CUDA kernel only was not said to be (thirtieth read)
_TAGS = re.compile(rb"\{|(?:std\s*::\s*)?vector\s*<\s*(?:at|c10)\s*::\s*Tag\b|(?:at|c10)\s*::\s*Tag\s*::")
# what `m.impl(op, ...)` may give that computes nothing: a fallthrough (`CppFunction::makeFallthrough()`) goes on to
# the next key, and autograd's not-implemented fallbacks redispatch below autograd (torch 2.9 as the oracle: an op with
# a CUDA kernel and such an `Autograd` or `CPU` one fails on a CPU tensor); read as a kernel, `TORCH_LIBRARY_IMPL(myops,
# Autograd, m) { m.impl("a", torch::autograd::autogradNotImplementedFallback()); }` kept `a`, with a CUDA kernel
# only, from being said to be (thirty-first read)
_NO_KERNEL = re.compile(rb"\b(?:makeFallthrough|(?:basicA|a)utogradNotImplemented(?:InplaceOrView)?Fallback)\s*\(\s*\)")
_TAG_WORD = re.compile(rb"(?<!\w)([A-Za-z_]\w*)\s*[,)]")  # (a macro given where tags go)
# a variable declared as tags (`const std::vector<at::Tag> tags = {...};`, `auto tags = std::vector<at::Tag>{...}`)
_TAG_VARIABLE = re.compile(
    rb"\bvector\s*<\s*(?:at|c10)\s*::\s*Tag\s*>[\s&]*(?:const\b[\s&]*)?([A-Za-z_]\w*)"
    rb"|(?<!\w)([A-Za-z_]\w*)\s*=\s*(?:std\s*::\s*)?vector\s*<\s*(?:at|c10)\s*::\s*Tag\b"
)
_MACRO = re.compile(rb"[A-Z][A-Z0-9_]+")
# an op of `RegisterOperators()`, chained (`.op("ns::a", &a).op("ns::b", &b)`), by its schema's
# `ns::op`, read up to the statement's `;`; and a key its options give (`.kernel<F>(DispatchKey::CUDA)`)
_OLD_OP = re.compile(
    rb'\.\s*op\s*\(\s*(?:torch::RegisterOperators::options\s*\(\s*\)\s*\.\s*schema\s*\(\s*)?"\s*(\w+)\s*::\s*(\w+(?:\.\w+)?)'
)
_OLD_KEY = re.compile(rb"DispatchKey::(\w+)")
# the key an op's options give by a word (`.kernel<F>(DEVICE_KEY)`, `.kernel(KEY, &fn)`): a macro, read
# where the file defines it (`.catchAllKernel<F>()` names none: every device runs it)
_OLD_KERNEL_KEY = re.compile(
    rb"\.\s*kernel\s*(?:<[^;<>]*(?:<[^;<>]*>[^;<>]*)*>\s*)?\(\s*(?:(?:c10|at|torch)\s*::\s*)?([A-Za-z_]\w*)\s*[,)]"
)
# a dispatch key: `torch::kCPU`, `c10::DispatchKey::CUDA`, in `torch::dispatch(key, fn)` or not; or a device
# type, which torch's `dispatch(c10::DeviceType, fn)` maps to the key of its name (`c10::DeviceType::CUDA`
# was read as no key, "any", and an op with a CUDA kernel only was not said to be: thirtieth read); from the
# global namespace too (`::c10::DispatchKey::CUDA` was "any" the same way: thirty-first read)
_KEY = re.compile(
    rb"(?:(?:(?:::)?torch::)?dispatch\s*\(\s*)?(?:::)?(?:torch::|c10::|at::)?(?:DispatchKey::|DeviceType::|k)([A-Z]\w*)"
)
# a word given where a key goes (`m.impl("op", DEVICE_KEY, &fn)`: a key by a macro was "any")
_KEY_WORD = re.compile(rb"(?<!\w)(?:(?:torch::)?dispatch\s*\(\s*)?([A-Za-z_]\w*)\s*,")
# `#define NAME body`: the macros a key may be given by, the body over its continued lines
# (`#define KEY \` then `torch::kCPU`: said "a macro this file defines as no key", untrue: twenty-ninth read)
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+((?:\\\r?\n|[^\n])*)", re.M)
_CONTINUED = re.compile(rb"\\\r?\n")
# a directive and its continued lines, blanked where blocks are looked for: vllm's `#define
# TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)` was read as the
# head of the next block, whose namespace (`myops`) was then none, and its CUDA-only ops unsaid (thirtieth read)
_DIRECTIVE_TEXT = re.compile(rb"^[ \t]*#(?:\\\r?\n|[^\n])*", re.M)
_UNDEF = re.compile(rb"^[ \t]*#[ \t]*undef[ \t]+(\w+)", re.M)
_DIRECTIVE_LINE = re.compile(rb"(?<![ \t])[ \t]*#")  # (a line of a block's body that opens so: the preprocessor's)
_NO_BRACES = bytes.maketrans(b"{}", b"  ")
# torch's dispatch keys spelled in capitals (torch 2.9's `DispatchKey`): any other such word given
# as a key is a macro, read where the file defines it
_CAPITAL_KEYS = frozenset({"CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "MTIA", "MAIA"})
# the key of an implementation given by a macro the file does not define (`UNREAD + name`): no
# device porter can name, never "any" (a CUDA one read as "any" hid a CUDA-only op: twenty-seventh read)
UNREAD = "unread:"
# and by one it defines as no key porter follows (more than `_Keys._DEPTH` macros deep, a cycle, an
# expression): said "a macro this file does not define", untrue (twenty-seventh read)
UNFOLLOWED = "unfollowed:"
# and by one it defines as another key in another build (`#ifdef WITH_X` / `#define KEY CPU` / `#else` / `#define KEY
# CUDA`, the group undecided): the last one was read, CUDA, and the block's op said CUDA-only where `cpp -DWITH_X`
# registers its CPU kernel (thirty-seventh read)
UNDECIDED = "undecided:"
_SPACE = frozenset(b" \t\n\r\f\v")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


# a block's library passed to a function porter does not read (`register_cpu(m)` of another file), in a block of a key
# other than CUDA's: (namespace or None, the block's key, the function, the block's line, whether the file defines a
# function of that name that takes a library: `detail::reg(m)`, `reg(&m)`, a call porter does not follow; None: no
# function, a call of the library whose op porter cannot read, `m.def(SCHEMA(a), &a_any)`, quoted in the third)
Unread = tuple[str | None, str, str, int, bool | None]


def registrations(
    source: bytes, path: Path | None = None, tree: Path | None = None, dirs: tuple[Path, ...] = ()
) -> list[tuple[str | None, str, str]]:
    """`registrations_and_unread`'s registrations."""
    return registrations_and_unread(source, path, tree, dirs)[0]


def registrations_and_unread(
    source: bytes, path: Path | None = None, tree: Path | None = None, dirs: tuple[Path, ...] = ()
) -> tuple[list[tuple[str | None, str, str]], list[Unread]]:
    """(namespace or None for a macro, op, dispatch key) for each implementation `source`
    registers; the key "any" for an implementation without one (`m.def(schema, fn)`,
    `m.impl("op", fn)` in a library block: every device runs it). Linear in the source: a
    block's body ends at its closing brace or at the next block, a call's arguments are read
    from where they open (a file of 2,000 spaces after `TORCH_LIBRARY(` cost 15 s, 20,000 for
    ever, with one regular expression for the whole head). `path` is the source's file: a key's
    macro it does not define is looked for in the headers it includes (`_included_defines`) that are
    in `tree` (by default the file's own folder), beside it or in the build's `-I` folders `dirs`. And each block
    that passes its library to a function the file does not define (`Unread`): what it registers is not known."""
    if not registers(source) and not (path is not None and _header_registers(source, path, tree, dirs)):
        return [], []
    inherited = _header_macros(source, path, tree, dirs)
    source = blank_comments(source)  # (a registration commented out is none)
    code = _code_of(source)
    compiled = _compiled_at(code, path)
    unbuilt = lambda at: compiled(at) is False  # noqa: E731
    keys = _Keys(source, path, unbuilt, tree, dirs, compiled)  # (its headers are named by strings)
    directed = code  # (with its directives: `_last_branch_braces` reads them)
    code = _DIRECTIVE_TEXT.sub(lambda d: re.sub(rb"[^\n]", b" ", d.group()), code) if b"#" in code else code
    out: list[tuple[str | None, str, str]] = []
    unread: list[Unread] = []
    if OLD_TOKEN in code:
        out = _old_registrations(source, code, keys, unbuilt)
    # (a head no build compiles opens no block: `#if 1` / `..._IMPL(myops, Meta, m) {` / `#else` / `..._IMPL(myops, CPU,
    # m) {` / `#endif` / `m.impl("b", b_cpu);` / `}`: the CPU one's body went on after the `#endif`, `b` read as the
    # CPU's, where the compiler reads it as the Meta block's: thirty-sixth read, scleft2)
    heads = _heads(source, code, unbuilt, inherited, compiled)
    blocks = [block for block in heads if block[6] is not None or compiled(block[5]) is not False]
    # (a brace on a line no default build compiles closes nothing: `#if 0` / `}` / `#endif` in a block, or in a
    # function it registers through, ended its body there, and its CPU kernels after it were none: thirty-third read)
    braced = _built_lines(code, 0, unbuilt) if blocks and b"#" in source else code
    by_branch = branch_taken(directed.decode("latin-1"), _compiler_knows(path)) if blocks and b"#" in source else None
    braced = _last_branch_braces(directed, braced, compiled, by_branch) if blocks and b"#" in source else braced
    tails = _Tails(directed, code, (compiled, by_branch), unbuilt) if by_branch is not None else None
    braces = (NextOf(braced, b"{"), NextOf(braced, b"}"))  # one search of the file for all blocks
    macros = _Registering(source, unbuilt, inherited=inherited, compiled=compiled) if blocks else None
    tag_names = _tag_variables(code) if blocks else frozenset()
    helpers = _Helpers(source, code, unbuilt, macros, braced) if blocks else None
    line_of = _line_counter(source)
    for i, (impl, ns_text, key_text, var, body_start, head, inner) in enumerate(blocks):
        # a macro (`TORCH_EXTENSION_NAME`, `CONCAT(...)`) names no namespace known here
        ns = ns_text.decode() if re.fullmatch(rb"\w+", ns_text) and not _MACRO.fullmatch(ns_text) else None
        limit = blocks[i + 1][5] if i + 1 < len(blocks) else len(source)
        tail = tails.body(source, body_start, braces, blocks) if tails is not None and inner is None else None
        body, origin = _block_body(source, (body_start, head, inner), braces, limit, unbuilt, macros, tail)
        block = _Reading(ns, impl, key_text, blocks[i][5], keys, tag_names, compiled)
        nameless: list[bytes] = []  # (its calls whose op is not read)
        for one_body, one_origin, one_var in [
            (body, origin, var),
            *(helpers.called(body, origin, var) if helpers else ()),
        ]:
            out += _block_registrations(one_body, one_origin, one_var, block, nameless)
        key = keys.of(key_text, head) if impl is not None and key_text is not None else "any"
        if key not in _NO_OTHER_DEVICE:  # (a CUDA block's: more CUDA kernels, which make no op any less CUDA-only)
            line = line_of(head)
            if ns == GLOBAL_NAMESPACE and key == "CPU":
                unread += [(ns, key, call.decode("latin-1"), line, None) for call in _cpu_fallbacks(body, var)]
            unread += [(ns, key, name.decode(), line, own) for name, own in (helpers.unread if helpers else ())]
            unread += [(ns, key, call.decode("latin-1"), line, None) for call in nameless]
    return out, unread


# the global namespace of a backend fallback (`TORCH_LIBRARY_IMPL(_, CPU, m) { m.fallback(...); }`)
GLOBAL_NAMESPACE = "_"
_FALLBACK_CALL = rb"(?<![\w.>])%s\s*(?:\.|->)\s*fallback\s*\("


def _cpu_fallbacks(body: bytes, var: bytes) -> list[bytes]:
    """The calls `m.fallback(...)` of a `TORCH_LIBRARY_IMPL(_, CPU, m)` block's library `var` in its `body` that give a
    kernel (not `makeFallthrough()`), each to its `;` (at most 2,000 bytes: linear). torch's dispatcher calls such a
    fallback for every op with no CPU kernel of its own on a CPU tensor (torch 2.9: `Library("_", "IMPL").fallback(fn,
    "CPU")`, the same `torch::Library::fallback`, runs an op with a CUDA kernel only), as the Python form is read
    (thirty-fifth read); what it computes is not read. Read as nothing and said nowhere, the project's ops were said
    CUDA-only (thirty-sixth read, scaf2): now no op is, and the listing says why. torch's own C++ fallbacks are of
    other keys (`BackendSelect`, `Python`, `FuncTorchBatched`, `AlwaysCall`; a backend's `cpu_fallback`, which
    redispatches to the CPU kernel an op lacks): not read, the ops stay CUDA-only."""
    code = _code_of(body)
    out = []
    for m in re.finditer(_FALLBACK_CALL % re.escape(var), code):
        end = code.find(b";", m.end(), m.end() + 2000)
        end = min(len(code), m.end() + 2000) if end < 0 else end
        if not _NO_KERNEL.search(code, m.end(), end):
            out.append(body[m.start() : end])
    return out


def _line_counter(source: bytes) -> Callable[[int], int]:
    """The line of an offset, each newline counted once where offsets are asked in order (counted from the
    file's start for each block, 20,000 unclosed `TORCH_LIBRARY(a, m) {` took 5 s; 50,000, 11 s)."""
    at, line = 0, 1

    def line_of(offset: int) -> int:
        nonlocal at, line
        line += source.count(b"\n", at, offset) if offset >= at else -source.count(b"\n", offset, at)
        at = offset
        return line

    return line_of


class _Reading(NamedTuple):
    """What a block's calls are read with: its namespace (None: a macro's), whether it is an `_IMPL` one, its
    key's text, where its head is, the file's key macros and the names it declares as tags."""

    ns: str | None
    impl: bytes | None
    key_text: bytes | None
    head: int
    keys: _Keys
    tag_names: frozenset[bytes]
    compiled: Callable[[int], bool | None]  # (`_compiled_at` the file)


def _block_registrations(
    body: bytes, origin: Callable[[int], int], var: bytes, block: _Reading, nameless: list[bytes]
) -> list[tuple[str | None, str, str]]:
    """`registrations` of the calls of the library `var` in a block's `body` (`origin`: where each offset is); in
    `nameless`, the text of each call that may give a kernel and whose op porter cannot read (`m.def(SCHEMA(a),
    &a_any)`, a function-like macro; `m.impl(name, ...)`): they were passed over unsaid, and an op with a CUDA kernel
    beside one said CUDA-only (thirty-second scaf2 read's leftover)."""
    out: list[tuple[str | None, str, str]] = []
    ns, keys = block.ns, block.keys
    body_code = _code_of(body)
    closes = _closing_parens(body_code) if _CALL.search(body_code) else {}  # (a schema's parentheses)
    for kind, at in _library_calls(body_code, var, closes):
        strings, end = _op_strings(
            body, body_code, at, closes, lambda word, off: _string_macro(keys, word, origin(off))
        )
        op = _OP.match(strings) if strings else None
        # (`m.impl(` / `#ifdef WITH_X` / `"x",` / `#else` / `"d",` / `#endif`: a call compiled whose op is in a branch
        # porter cannot decide is no op it reads; read as the first, `d`'s CPU kernel was none, and `d` said
        # CUDA-only: thirty-fourth scaffold read's leftover, scaf2)
        if op is not None and block.compiled(origin(max(at, end - 1))) is None is not block.compiled(origin(at)):
            op = None
        if strings is None or op is None:
            close = closes.get(at, -1)
            arguments = _top_commas(body_code[at:close]) if close >= 0 else []
            # (`m.def(SCHEMA(a))`, a schema alone, gives no kernel)
            if (kind == b"impl" or len(arguments) > 1) and arguments and _unnamed(arguments[0], keys, origin(at)):
                nameless.append(var + b"." + kind + b"(" + body[at : close + 1])
            continue
        rest = _after_strings(body, end)
        # (a fallthrough, autograd's not-implemented fallback: no kernel), looked for up to the call's `)`: to the
        # body's end, 100,000 unclosed `m.def("x",` took minutes
        if rest is not None and _NO_KERNEL.search(body_code, rest, closes.get(at, rest)):
            continue
        if block.impl is not None and block.key_text is not None:
            if kind == b"impl":
                out.append((ns, op.group(1).decode(), keys.of(block.key_text, block.head)))
            continue
        if rest is None or (kind == b"def" and _are_tags(body, rest, keys, origin(at), block.tag_names)):
            continue  # `m.def("schema")`, `m.def("schema", {at::Tag::...})`: no implementation
        key = _key_name(body, rest, keys if kind == b"impl" else None, origin(at))
        out.append((ns, op.group(1).decode(), key))
    return out


def _unnamed(argument: bytes, keys: _Keys, where: int) -> bool:
    """Whether a call's first argument (its code, strings blanked), which porter reads no op of, names one all the
    same: through a function-like macro or a call (`SCHEMA(a)`), a macro whose text holds a parenthesis (`#define
    NAME ("a")`), a variable. One whose words are only macros the source does not define before it (`"myops::"
    UNKNOWN`) is no C++ without a `-D`, and one in its own text (`#define SELF "c" SELF`) none after it: no op
    (thirty-second sleft and scaf2 reads)."""
    words = list(_MACRO_WORD.finditer(argument))
    return not words or any(_names_through(argument, w, keys, where) for w in words)


def _names_through(argument: bytes, word: re.Match[bytes], keys: _Keys, where: int) -> bool:
    """Whether `word` of a call's first argument `argument` is a call, a variable, or a macro whose text holds a
    parenthesis (`_unnamed`)."""
    if argument[word.end() :].lstrip()[:1] == b"(" or not _MACRO.fullmatch(word.group()):
        return True
    definition = keys.definition(word.group(), where, strict=True)
    return definition is not None and b"(" in _code_of(definition)


# the C++ words that take a parenthesized word and are no function it is passed to
_NOT_A_FUNCTION = frozenset({b"sizeof", b"alignof", b"decltype", b"typeid", b"noexcept", b"if", b"while", b"switch"})
# the calls that hand their argument on as it is (`static_cast<torch::Library&>(m)`, `std::ref(m)`): the call
# around them is the one the library is passed to
_HANDING_ON = frozenset({b"static_cast", b"const_cast", b"reinterpret_cast", b"ref", b"addressof"})
# in a body: a call's name (`reg(`, `detail::reg(`, `r.add(`, `p->add(`) and its `(`, another parenthesis, or a word
_PASS_TOKENS = re.compile(rb"(?<![\w:.>])(\w+(?:(?:::|\.|->)\w+)*)[ \t\r\n]*\(|([()])|(?<![\w:.>])(\w+)")
# another name a body gives the library (`auto& lib = m;`, `torch::Library& lib = m;`, `auto&& lib = m;`,
# `torch::Library& lib{m};`), or a pointer to it (`torch::Library* p = &m;`, `auto* const p = &m;`, `auto p = &m;`,
# `torch::Library* p{&m};`): the name (group 1), the library's (2). (`auto p = &m`, `auto&& r = m`, a brace or a
# parenthesis: unread, their `impl`s were no kernel and the op said CUDA-only: thirty-third read, scaf2)
_ALIAS = re.compile(
    rb"(?<![\w:])(?:auto|(?:\w+\s*::\s*){0,3}Library)\b\s*(?:(?:&&?|\*(?:\s*const\b)?)\s*)?(\w+)\s*"
    rb"(?:=\s*(?:[({]\s*)?|[({]\s*)(?:&\s*)?(?:\(\s*)?(\w+)\s*(?:\)\s*)?(?:[})]\s*)?([;,])\s*"
)
# a declaration's next declarator (`auto& x = m, &y = m;`: `y`, read as none, and the op said CUDA-only:
# thirty-third scaf2 read's leftover), as `_ALIAS` reads its first
_NEXT_DECLARATOR = re.compile(
    rb"(?:(?:&&?|\*(?:\s*const\b)?)\s*)?(?<!\w)(\w+)\s*"
    rb"(?:=\s*(?:[({]\s*)?|[({]\s*)(?:&\s*)?(?:\(\s*)?(\w+)\s*(?:\)\s*)?(?:[})]\s*)?([;,])\s*"
)
# a pointer given the library after it is declared (`torch::Library* p;` then `p = &m;`: unread, as `_NEXT_DECLARATOR`)
_ASSIGNED = re.compile(rb"(?<![\w:.>])(\w+)\s*=\s*&\s*(?:\(\s*)?(\w+)\s*(?:\)\s*)?;")
_MEMBER = re.compile(rb"(?<!\s)\s*(?:\.|->)")  # (after the library's name: its own call, `m.impl(`)
# a function of the file that takes a library (`void register_cpu(torch::Library& m) {`): its name, its parameters
_TAKES_LIBRARY = re.compile(rb"(?<!\w)(\w+)\s*\(([^(){};]*)\)\s*\{")
_LIBRARY_PARAM = re.compile(rb"(?<!\w)(?:\w+\s*::\s*){0,3}Library\s*&\s*(\w+)")  # (one parameter, stripped, whole)


class _Helpers:
    """The functions of a file that take a library and register with it, read where a block passes its own
    (`TORCH_LIBRARY_IMPL(myops, CPU, m) { register_cpu(m); }`): their calls are the block's. Not read, the
    block's CPU kernels were none, and its ops with a CUDA kernel said CUDA-only (thirty-first scaffold read's
    leftover). A function is read once per block (one that calls itself too). Each other call the library is
    passed to (`detail::reg(m)`, `R::add(m, true)`, `reg(&m)`, `r.add(m)`, past `_DEPTH`, a name the file defines
    twice) is `unread`: those were neither read nor said, and the ops they register for the CPU said CUDA-only
    (thirty-second scaf2 read)."""

    _DEPTH = 4  # functions of functions followed

    def __init__(
        self, source: bytes, code: bytes, unbuilt: Callable[[int], bool], macros: _Registering | None, braced: bytes
    ) -> None:
        self._source, self._code, self._unbuilt, self._macros = source, code, unbuilt, macros
        self._braced = braced  # (`code` with the lines no default build compiles blanked: its braces count)
        self._defined: dict[bytes, list[tuple[int, bytes, int]]] | None = None
        self._named: set[bytes] = set()  # (the file's functions that take a library in any form: `Library*` too)
        self._bodies: dict[int, tuple[bytes, Callable[[int], int]] | None] = {}  # (by where each starts)
        # (of the last `called`: the calls passed the library that are not read, and whether the file defines them)
        self.unread: list[tuple[bytes, bool]] = []

    def called(
        self, body: bytes, origin: Callable[[int], int], var: bytes
    ) -> list[tuple[bytes, Callable[[int], int], bytes]]:
        """(body, where its offsets are, the library's name there) of each function `body` (`origin`: where its
        offsets are) passes `var` to, and of those they pass theirs to, and of each other name a body gives the
        library (`auto& lib = m;`: its `reg(lib)` was neither read nor said, thirty-second scaf2 read; a pointer,
        `torch::Library* p = &m; p->impl(...)`, neither: thirty-third scleft read); `unread` the
        names of the calls it is passed to that are not read."""
        out: list[tuple[bytes, Callable[[int], int], bytes]] = []
        seen: set[bytes] = set()
        named: set[tuple[int, bytes]] = set()  # (a body, by `id`, and another name of the library there)
        self.unread = []
        self._definitions()
        todo = [(body, origin, var, 0)]
        while todo:
            text, where, name, depth = todo.pop()
            code = _code_of(text)
            declared: set[bytes] = set()  # (`auto& t(m);` declares `t`: it calls no function `t`)
            for other, library in _aliases(code) if name in code else ():
                if library == name and (id(text), other) not in named:
                    named.add((id(text), other))
                    out.append((text, where, other))
                    todo.append((text, where, other, depth))
                declared.add(other)
            for callee, index, whole in _passes(code, name):
                if callee in declared:
                    continue
                last = _callee_word(callee)
                found = self._function(last) if whole and callee == last and depth < self._DEPTH else None
                read = self._body_at(found[2]) if found is not None and found[0] == index else None
                if found is None or read is None:
                    if callee not in seen:
                        self.unread.append((callee, last in self._named))
                        seen.add(callee)
                    continue
                if callee in seen:
                    continue
                seen.add(callee)
                inner, inner_origin = read
                out.append((inner, inner_origin, found[1]))
                todo.append((inner, inner_origin, found[1], depth + 1))
        return out

    def _body_at(self, start: int) -> tuple[bytes, Callable[[int], int]] | None:
        """The body of the file's function whose `{` ends at `start`, read once and with a brace search of its
        own: the blocks' search only goes forward, and a function defined above the blocks read its body to a later
        block's end (a CUDA block's kernels between were counted as the caller's CPU ones: the lead's review of the
        thirty-second sleft read, and scaf2's). None where its braces never close (no compiler reads it: a body to
        the file's end was read again for each block that calls it)."""
        if start not in self._bodies:
            end = len(self._code)
            closes = len(_body(self._code, start, self._braces(), end)) < end - start
            read = (self._source, (start, start, None), self._braces(), end, self._unbuilt, self._macros)
            self._bodies[start] = _block_body(*read) if closes else None
        return self._bodies[start]

    def _braces(self) -> tuple[NextOf, NextOf]:
        """A new forward-only search of the code's braces."""
        return NextOf(self._braced, b"{"), NextOf(self._braced, b"}")

    def _function(self, name: bytes) -> tuple[int, bytes, int] | None:
        """(the library parameter's place, its name, where the body starts) of the file's one function `name` that
        takes a library (None where it defines none, or two: which one a call reaches is not read)."""
        found = self._definitions().get(name, [])
        return found[0] if len(found) == 1 else None

    def _definitions(self) -> dict[bytes, list[tuple[int, bytes, int]]]:
        """The file's functions that take a library by reference, by name (read once; `_named` with them)."""
        if self._defined is None:
            self._defined = {}
            for m in _TAKES_LIBRARY.finditer(self._code) if b"Library" in self._code else ():
                params = _top_commas(m.group(2)) if b"Library" in m.group(2) and not self._unbuilt(m.start()) else []
                self._named.update([m.group(1)] if params else [])
                taken = [
                    (i, p.group(1)) for i, p in enumerate(_LIBRARY_PARAM.fullmatch(p.strip()) for p in params) if p
                ]
                if taken:
                    self._defined.setdefault(m.group(1), []).append((*taken[0], m.end()))
        return self._defined


def _aliases(code: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(the other name, the library's) of each other name `code` gives a library: a declaration's declarators
    (`_ALIAS`, `_NEXT_DECLARATOR`) and a pointer assigned (`_ASSIGNED`)."""
    for alias in _ALIAS.finditer(code):
        yield alias.group(1), alias.group(2)
        while alias.group(3) == b",":
            declarator = _NEXT_DECLARATOR.match(code, alias.end())
            if declarator is None:
                break
            alias = declarator
            yield alias.group(1), alias.group(2)
    for assigned in _ASSIGNED.finditer(code):
        yield assigned.group(1), assigned.group(2)


def _passes(code: bytes, var: bytes) -> list[tuple[bytes, int, bool]]:
    """(the call's name as written, the argument's place, whether that argument is the name alone) of each call
    `code` passes the library `var` to, through casts and `&` (`reg(static_cast<torch::Library&>(m))`, `reg(&m)`);
    its own calls (`m.impl(`), and `sizeof(m)`, are none."""
    out: list[tuple[bytes, int, bool]] = []
    opened: list[tuple[bytes | None, int]] = []  # (the call's name, or None for a bare parenthesis; after its `(`)
    taken: set[int] = set()
    for m in _PASS_TOKENS.finditer(code):
        if m.group(1) is not None:
            opened.append((m.group(1), m.end()))
        elif m.group(2) == b"(":
            opened.append((None, m.end()))
        elif m.group(2) is not None:
            del opened[-1:]
        elif m.group(3) == var and not _MEMBER.match(code, m.end()):
            call = next(
                (c for c in reversed(opened) if c[0] is not None and _callee_word(c[0]) not in _HANDING_ON), None
            )
            if call is None or call[0] is None or _callee_word(call[0]) in _NOT_A_FUNCTION or call[1] in taken:
                continue  # (`auto& lib = m;`, `(void)m;`: left; a call's first use of it only, `f(m, m, ...)`)
            taken.add(call[1])
            args = _top_commas(code[call[1] : m.start()])
            out.append((call[0], len(args) - 1, not args[-1].strip() and _alone(code, m.end())))
    return out


def _callee_word(callee: bytes) -> bytes:
    """The last word of a call's name (`ref` of `std::ref`)."""
    return re.split(rb"::|\.|->", callee)[-1]


def _alone(code: bytes, end: int) -> bool:
    """Whether the library's name ending at `end` ends its argument (`reg(m, true)`, not `reg(m + 1)`)."""
    rest = code[end : end + 64].lstrip()
    return rest[:1] in (b",", b")")


def _block_body(
    source: bytes,
    block: tuple[int, int, bytes | None],
    braces: tuple[NextOf, NextOf],
    limit: int,
    unbuilt: Callable[[int], bool],
    macros: _Registering | None,
    tail: bytes | None = None,
) -> tuple[bytes, Callable[[int], int]]:
    """A block's body (`block`: where it starts, its head, its body where a macro gives it whole) as the
    compiler reads it, with where each of its bytes is in the source: its unbuilt lines blanked, its
    backslash-newlines taken out (`m.im\\` then `pl("foo", ...)` was none, and the op said CUDA-only:
    twenty-ninth scaf2 read's leftover), its registering macros expanded. `tail`: its text where `_Tails` reads
    it (a head in a branch not gone on with, its body going on after the `#endif`)."""
    body_start, head, inner = block
    if inner is None:
        raw = tail if tail is not None else _body(source, body_start, braces, limit)
        body, origin = _unspliced(_built_lines(raw, body_start, unbuilt), body_start)
    else:
        body, origin = inner, _use_site(head)  # (a block a macro gives whole: its body is the expansion's)
    return macros.expand(body, origin) if macros is not None else (body, origin)


_BRACE = re.compile(rb"[{}]")


class _Tails:
    """The branches of `#if` groups whose braces do not go on after their group (`_last_branch_braces` blanks them),
    each with no group inside it and built or undecided: a block whose head is in one and whose body the branch leaves
    open goes on after the `#endif` in the build that takes the branch (`#ifdef WITH_X` / `TORCH_LIBRARY_IMPL(myops,
    CPU, m) {` / `m.impl("a", ...)` / `#else` / `TORCH_LIBRARY_IMPL(myops, Meta, m) {` / ... / `#endif` / `m.impl("b",
    b_cpu);` / `}`: the `WITH_X` build, `cpp -P -DWITH_X`, registers `b_cpu` for the CPU; the body ended at the next
    head, `b` had only CUDA and Meta kernels and was said CUDA-only: thirty-fifth scaf2 read's leftover, the
    thirty-sixth's scleft2). Its body is then the branch's text, the rest of its group blanked, and the text after
    the group to where the branch's open braces close (the braces there as the group's reading counts them). A block
    with another head after it in its branch is read as before."""

    def __init__(
        self,
        directed: bytes,
        code: bytes,
        reading: tuple[Callable[[int], bool | None], Callable[[int], bool | None]],
        unbuilt: Callable[[int], bool],
    ) -> None:
        compiled, own = reading
        text = directed.decode("latin-1")  # (one character a byte: offsets kept)
        found = list(directives(text))
        starts = [at for at, _, _ in found]
        groups: list[list[Branch]] = []
        self.spans: list[tuple[int, int, int]] = []  # (a branch's text's start, its end, its group's end)
        for directive in found:
            if directive[2].startswith("if") or not groups:
                groups += [[directive]] if directive[2].startswith("if") else []
                continue
            if directive[2] != "endif":
                groups[-1].append(directive)
                continue
            branches = groups.pop()
            ends = [at for at, _, _ in branches[1:]] + [directive[0]]
            going = going_on(branches, own)
            line_end = text.find("\n", directive[1])
            after = len(text) if line_end < 0 else line_end + 1
            self.spans += [
                (start, end, after)
                for i, ((at, start, _), end) in enumerate(zip(branches, ends))
                if i != going and compiled(at) is not False
            ]
        self.spans.sort()
        self.built = _built_lines(code, 0, unbuilt) if self.spans else code
        # (a group inside the branch counts its braces in every branch: a brace in one, and the branch is not read)
        inside = [(bisect.bisect_right(starts, start), bisect.bisect_left(starts, end)) for start, end, _ in self.spans]
        self.spans = [
            span
            for span, (first, last) in zip(self.spans, inside)
            if first == last or not re.search(rb"[{}]", self.built[found[first][0] : found[last - 1][1]])
        ]
        self.firsts = [start for start, _, _ in self.spans]
        self.heads: list[int] = []

    def body(self, source: bytes, body_start: int, braces: tuple[NextOf, NextOf], blocks: list[_Head]) -> bytes | None:
        """The raw body of the block whose body starts at `body_start` where its head is in one of the branches and
        the branch leaves it open (its text from `body_start`, the rest of the group blanked; None otherwise)."""
        i = bisect.bisect_right(self.firsts, body_start) - 1
        if i < 0 or not self.spans[i][0] <= body_start < self.spans[i][1]:
            return None
        _, end, after = self.spans[i]
        self.heads = self.heads or sorted(head for *_, head, _ in blocks)
        heads = self.heads
        following = bisect.bisect_right(heads, body_start)
        if following < len(heads) and heads[following] < end:
            return None  # (another head in the branch: read as before, each block's scan to the next head's: linear)
        depth = 1
        for brace in _BRACE.finditer(self.built, body_start, end):
            depth += 1 if brace.group() == b"{" else -1
            if depth == 0:
                return None  # (closed in its branch: read as before)
        later = bisect.bisect_left(heads, after)
        limit = heads[later] if later < len(heads) else len(source)
        close, at = after, after
        for _ in range(depth):  # (each brace the branch left open, innermost first)
            close = at + len(_body(source, at, braces, limit))
            if close >= limit:
                break
            at = close + 1
        hole = re.sub(rb"[^\n]", b" ", source[end:after])
        return source[body_start:end] + hole + source[after:close]


def _heads(
    source: bytes,
    code: bytes,
    unbuilt: Callable[[int], bool],
    inherited: _Defined | None = None,
    compiled: Callable[[int], bool | None] | None = None,
) -> list[_Head]:
    """The library blocks of `code` (`source` with its comments, strings and directives blanked), read with its
    backslash-newlines taken out and the uses of the file's macros that open one expanded (`#define LIB(k)
    TORCH_LIBRARY_IMPL(myops, k, m)`, `LIB(CPU) {`): a splice between a head's arguments, or in its word
    (`TORCH_LIBRARY_IM\\` then `PL(`), and a head given by such a macro made no block, its CPU kernels lost
    and its ops said CUDA-only (thirtieth scaf2 read; the splice in the word and the macro its leftovers), as
    did a block a macro gives whole (`#define CPU_IMPL(op) TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(#op,
    ...); }`). Each block's offsets are the source's (a whole one's: its use's), with its body where a macro
    gives it. The source is expanded with its strings, then blanked: an expansion of the code (its strings
    blanked) and one of the source were two, and where their lengths differed (a use given a string,
    `DEF(a, "a(Tensor x) -> Tensor")`) a block given whole was dropped, unsaid (thirty-first scaf2 read).
    `inherited`: the macros of the file's headers (`_header_macros`)."""
    macros = _Registering(source, unbuilt, _HEAD, inherited, compiled)
    if macros.expands():
        kept = _DIRECTIVE_TEXT.sub(lambda d: re.sub(rb"[^\n]", b" ", d.group()), source) if b"#" in source else source
        text, origin = macros.expand(*_unspliced(kept, 0))
        expanded = _code_of(text)
    else:
        expanded, origin = _unspliced(code, 0)
        text = expanded
    out: list[_Head] = []
    braces: tuple[NextOf, NextOf] | None = None
    for impl, ns_text, key_text, var, body_start, head in _blocks(expanded):
        brace = origin(body_start - 1)
        if code[brace : brace + 1] == b"{":
            out.append((impl, ns_text, key_text, var, brace + 1, origin(head), None))
            continue
        braces = braces or (NextOf(expanded, b"{"), NextOf(expanded, b"}"))
        inner = _body(text, body_start, braces, len(text))
        out.append((impl, ns_text, key_text, var, origin(head), origin(head), inner))
    return out


def _library_calls(code: bytes, var: bytes, closes: dict[int, int]) -> Iterator[tuple[bytes, int]]:
    """(`impl` or `def`, where its arguments begin) of each call of the library `var` in a block's `code`
    (its body, strings blanked: `R"(m.impl("d", &d_cpu))"`, a help text, was read as a CPU kernel of `d`, an op
    with a CUDA kernel only: thirty-first read), chained ones too (`Library::impl` returns the library): of
    `m.impl("a", &a_cpu).impl("b", &b_cpu)` only `a` was read, and `b`, with a CPU kernel, was said to be
    CUDA-only (thirtieth read). `closes`: `_closing_parens(code)`."""
    for call in _CALL.finditer(code):
        if call.group("var") != var:
            continue
        kind, at = call.group("kind"), call.end()
        while True:
            yield kind, at
            close = closes.get(at, -1)
            chained = _CHAINED.match(code, close + 1) if close >= 0 else None
            if chained is None:
                break
            kind, at = chained.group(1), chained.end()


def _unspliced(body: bytes, start: int) -> tuple[bytes, Callable[[int], int]]:
    """A block's `body` (from offset `start` of the source) with its backslash-newlines taken out, and where
    each of its offsets was in the source: a macro is read by the definition in effect there, and with two
    bytes lost a splice, of 40 split calls then `#undef REG` / `#define REG(x) ...kCPU...` / `REG(a);` the
    use was expanded by the first `REG`, a CUDA one (`cpp`: the CPU one), and a key macro redefined in a
    block was read at the block's start (thirtieth scaf2 read)."""
    cuts, lost, spliced, at = [], [0], [], 0
    for m in _CONTINUED.finditer(body):
        spliced.append(body[at : m.start()])
        at = m.end()
        cuts.append(m.start() - lost[-1])
        lost.append(lost[-1] + len(m.group()))
    if not cuts:
        return body, lambda i: start + i
    return b"".join([*spliced, body[at:]]), lambda i: start + i + lost[bisect.bisect_right(cuts, i)]


def _code_of(source: bytes) -> bytes:
    """`source` (comments blanked) with its string literals blanked too, offsets kept: where a block's
    head, its braces and the directives are looked for. A `TORCH_LIBRARY_IMPL(ns, CPU, m) { ... }` quoted
    in a string (a help text, a raw string of generated code) was read as a CPU kernel, and a `"}"` in
    a block ended it (thirtieth read); the op names are still read from the source's strings."""
    if b'"' not in source:
        return source
    return blanked(source.decode("latin-1"), strings=True).encode("latin-1")


def registers(source: bytes) -> bool:
    """Whether `source` may register an op (the cheap test before `registrations`)."""
    return TOKEN in source or OLD_TOKEN in source


def registers_in(source: bytes, path: Path, dirs: tuple[Path, ...] = ()) -> tuple[bool, list[Header]]:
    """Whether `source` (the file `path`) may register an op, itself or through a block a header's macro opens
    (`#include "ops.h"` / `CPU_LIB { ... }`, no `TORCH_LIBRARY` in the file: passed over, and its op said
    CUDA-only: thirty-second sleft read's leftover), and the headers read to know (`headers`, in `dirs` too): an
    edit of one changes the answer. A file that includes nothing reads none."""
    own = registers(source)
    if not own and b"include" not in source:
        return False, []
    read = headers(source, path, None, dirs)
    return own or any(TOKEN in data for _, _, data in read), read


def _header_registers(source: bytes, path: Path, tree: Path | None, dirs: tuple[Path, ...]) -> bool:
    """Whether a header `source` (the file `path`) includes spells `TORCH_LIBRARY` (`registers_in`): the cheap test
    before its macros are read (each header's macros read for every file including it made `porter kernels` four
    times slower on 300 files including 8 headers of 200 macros)."""
    if b"include" not in source:
        return False
    return any(TOKEN in data for _, _, data in headers(source, path, tree if tree is not None else path.parent, dirs))


def _unbuilt_at(source: bytes, path: Path | None) -> Callable[[int], bool]:
    """Whether an offset of `source` lies in an `#if` branch a default nvcc build does not compile
    (`#if 0`, `#ifdef USE_ROCM`): a registration there was read as one, and a CPU kernel kept
    under `#if 0` hid an op's being CUDA-only (twenty-ninth read). A `.cpp` is a C++ source, which no
    compiler defines `__CUDACC__` or `__CUDA_ARCH__` for (`_HOST_COMPILER`); a source of no known file
    decides none of nvcc's names."""
    compiled = _compiled_at(source, path)
    return lambda at: compiled(at) is False


def _compiled_at(source: bytes, path: Path | None) -> Callable[[int], bool | None]:
    """Whether a default nvcc build compiles an offset of `source` (`preprocessor.compiled`: None, not known)."""
    if b"#" not in source:
        return lambda at: True
    text = source.decode("latin-1")  # one character a byte: offsets kept
    conditions = preprocessor.Conditions(text, lambda at: 0, _compiler_knows(path))  # (no line: only if taken)
    return lambda at: preprocessor.compiled(conditions.around(at))


def _compiler_knows(path: Path | None) -> dict[str, bool | None]:
    """What nvcc's names are to the compiler of the file `path` (None: not known)."""
    return _NVCC_OR_NOT if path is None else {} if path.suffix in _NVCC_SUFFIXES else _HOST_COMPILER


def undecided(source: bytes, path: Path | None = None) -> list[tuple[int, str]]:
    """(line, the branch) of each registration of `source` (a library block's head, a `RegisterOperators`)
    in an `#if` branch porter cannot decide (`#ifdef WITH_CPU`: the build's `-D`): `registrations` reads
    it as compiled, and it was read so unsaid (twenty-ninth read's leftover); the listing says it."""
    if not registers(source) or b"#" not in source:
        return []
    source = blank_comments(source)
    text = source.decode("latin-1")  # one character a byte: offsets kept
    newlines = [i for i, c in enumerate(source) if c == 10]
    conditions = preprocessor.Conditions(text, lambda at: bisect.bisect_left(newlines, at) + 1, _compiler_knows(path))
    # (looked for with strings blanked: a `"TORCH_LIBRARY_IMPL(myops, CPU, m)"` in a help text under `#ifdef
    # WITH_HELP` was said as a registration "read as compiled, so the op is not taken for CUDA-only": thirty-first read)
    code = _code_of(source)
    heads = [m.start() for m in _HEAD.finditer(code)] + [m.start() for m in re.finditer(OLD_TOKEN, code)]
    # (a call in its block's own branch: the block's head says it)
    heads += [c for h, c in _library_calls_in_blocks(code, path) if conditions.around(c) != conditions.around(h)]
    out = []
    for at in sorted(heads):
        branches = conditions.around(at)
        if preprocessor.compiled(branches) is None:
            line, branch, _ = next(b for b in branches if b[2] is None)
            out.append((bisect.bisect_left(newlines, at) + 1, f"`{branch}` of the `#if` at line {line}"))
    return out


def _library_calls_in_blocks(code: bytes, path: Path | None) -> list[tuple[int, int]]:
    """(where its block's head is, where it is) of each call of a library block's own library (`m.impl(` in
    `TORCH_LIBRARY_IMPL(myops, CPU, m) {`), its body's braces counted as `registrations` counts them. Under an
    `#ifdef WITH_CPU` in the body, such a call was read as compiled and said nowhere (`undecided` looked at heads only:
    thirty-third scleft and ifleft reads' leftover); pybind11's `m.def(` is in no library block."""
    compiled = _compiled_at(code, path)
    flat = _DIRECTIVE_TEXT.sub(lambda d: re.sub(rb"[^\n]", b" ", d.group()), code)
    by_branch = branch_taken(code.decode("latin-1"), _compiler_knows(path))
    braced = _last_branch_braces(code, _built_lines(flat, 0, lambda at: compiled(at) is False), compiled, by_branch)
    braces = (NextOf(braced, b"{"), NextOf(braced, b"}"))
    out: list[tuple[int, int]] = []
    for _impl, _ns, _key, var, body_start, head in _blocks(flat):
        end = body_start + len(_body(flat, body_start, braces, len(flat)))
        out += [(head, m.start()) for m in _CALL.finditer(flat, body_start, end) if m.group("var") == var]
    return out


def _built_lines(text: bytes, start: int, unbuilt: Callable[[int], bool]) -> bytes:
    """`text` (from offset `start` of the source) with its lines in a branch no default build compiles
    and its directives' lines blanked (lines and offsets kept), before a registering macro's use is
    expanded: an offset of the expanded text is not the source's. A use whose arguments span an
    `#ifdef` (`REG(` / `#ifdef USE_ROCM` / `bar` / `#else` / `foo` / `#endif` / `)`) took `#else` and
    `#endif` for its argument, and its registration was none (twenty-ninth read, second wave)."""
    out, at, directive = [], start, False
    for i, line in enumerate(text.splitlines(keepends=True)):
        directive = directive or (i > 0 and _DIRECTIVE_LINE.match(line) is not None)
        out.append(re.sub(rb"[^\n]", b" ", line) if directive or unbuilt(at) else line)
        directive = directive and line.rstrip(b"\r\n").endswith(b"\\")  # (a directive's continued lines too)
        at += len(line)
    return b"".join(out)


def _last_branch_braces(
    code: bytes, braced: bytes, compiled: Callable[[int], bool | None], own: Callable[[int], bool | None] | None = None
) -> bytes:
    """`braced` with the braces of each `#if` group's compiled or undecided branches but its last one blanked (a
    group with no `#else` has an empty one where no branch is surely taken): the braces count as in the group's last
    branch (each starts from the braces open at the `#if`, as the compiler reads the one it compiles), and the text
    of every branch stays in the body. Where porter cannot decide an `#ifdef X` / `#else`, either may be built, and
    an op registered for the CPU in either has a CPU kernel in that build (torch dispatches a CPU tensor to it): it is
    not CUDA-only. A block, or a function it calls, whose `}` was in both branches ended at the `#ifdef` one, and the
    `#else` one's CPU kernels were none, their ops said CUDA-only (thirty-third ifleft read; the thirty-second read's
    per-branch rule was for namespaces: `if_groups.going_on` is the rule of both now). `compiled`: `_compiled_at`;
    `own`: `if_groups.branch_taken` (by default, of `code` with nothing known). One pass, linear."""
    text = code.decode("latin-1")  # (one character a byte: offsets kept)
    own = own or branch_taken(text)
    groups: list[list[Branch]] = []  # each open group's branches: (its directive's place, its end, word)
    cuts: list[tuple[int, int]] = []  # the spans whose braces are blanked
    for directive in directives(text):
        word = directive[2]
        if word.startswith("if") or not groups:
            groups += [[directive]] if word.startswith("if") else []
            continue
        if word != "endif":
            groups[-1].append(directive)
            continue
        branches = groups.pop()
        ends = [at for at, _, _ in branches[1:]] + [directive[0]]
        going = going_on(branches, own)  # (the one rule of `porter kernels`' namespaces too)
        cuts += [
            (start, end)
            for i, ((at, start, _), end) in enumerate(zip(branches, ends))
            if i != going and compiled(at) is not False
        ]
    if not cuts:
        return braced
    out, at = [], 0
    for start, end in sorted(cuts):  # (a nested group's spans lie in its branch's: each byte blanked once)
        start = max(start, at)
        out += [braced[at:start], braced[start:end].translate(_NO_BRACES)] if end > start else []
        at = max(at, end)
    return b"".join([*out, braced[at:]])


def _old_registrations(
    source: bytes, code: bytes, keys: _Keys, unbuilt: Callable[[int], bool]
) -> list[tuple[str | None, str, str]]:
    """`registrations` of `torch::RegisterOperators()` statements: each `.op("ns::op", &fn)` an
    implementation every device runs (a catch-all kernel), one whose options name a key that key's
    (a macro's as `keys` reads it). Linear: each statement is read once, from `RegisterOperators` to its `;`
    (both looked for in `code`, the source with its strings blanked: one in a string is none)."""
    out: list[tuple[str | None, str, str]] = []
    at = code.find(OLD_TOKEN)
    while at >= 0:
        end = code.find(b";", at)
        end = len(source) if end < 0 else end
        ops = list(_OLD_OP.finditer(source, at, end))
        # each op's options run to the next op; a statement of none (`// torch::RegisterOperators`
        # in a comment, an op not spelled "ns::op") raised ValueError from a strict zip, and lint,
        # rewrite and kernels stopped with an internal error (twenty-seventh read)
        for i, op in enumerate(ops):
            if unbuilt(op.start()):
                continue
            after = ops[i + 1].start() if i + 1 < len(ops) else end
            key = _OLD_KEY.search(source, op.end(), after)
            word = None if key else _OLD_KERNEL_KEY.search(source, op.end(), after)
            found = key.group(1).decode() if key else keys.of(word.group(1), word.start()) if word else "any"
            out.append((op.group(1).decode(), op.group(2).decode(), found))
        at = code.find(OLD_TOKEN, end)
    return out


def _op_strings(
    body: bytes,
    code: bytes,
    at: int,
    closes: dict[int, int],
    spelled: Callable[[bytes, int], bytes | None] = lambda word, at: None,
) -> tuple[bytes | None, int]:
    """The text of the string literals that open a call's arguments at `at` (`code`: the `body` with its
    strings blanked; `closes`: its `_closing_parens`), joined, bare or wrapped (`_WRAPPED`: xformers' 50
    `TORCH_SELECTIVE_NAME` blocks, every op dropped unsaid: twenty-eighth read), and where the arguments go
    on after them. Raw strings too: `m.def(R"(a(Tensor x) -> Tensor)", &a_any)` (DeepGEMM's, Ascend's
    schemas are raw) was none, and `a`, with a CUDA kernel beside the function every device runs, was said
    CUDA-only (thirty-first read). A macro among or before them is read as `spelled` (`word`, its offset in `body`)
    gives its literals' text: of `m.def("myops::" NAME "(Tensor x) -> Tensor", fn)` the strings ended at `NAME`, and
    the op was read as `myops` (thirty-first scaffold read's leftover), and `m.def(NAME "(Tensor x) -> Tensor", fn)`
    was none; one it gives none of is no op porter reads."""
    wrapped = _WRAPPED.match(code, at)
    start = wrapped.end() if wrapped else at
    found: list[bytes] = []
    while True:
        again = _CODE_AGAIN.search(code, start)
        end = again.start() if again else len(code)
        text = _literals_text(body[start:end])
        found += [text] if text is not None else []
        word = _MACRO_WORD.match(code, end)
        if word is None:
            break
        given = spelled(word.group(), end)
        if given is None:
            return None, at
        found.append(given)
        start = word.end()
    if not found or wrapped is None:
        return (b"".join(found) if found else None), end
    close = closes.get(wrapped.end(), -1)
    return (b"".join(found), close + 1) if close >= 0 else (None, at)


_MACRO_WORD = re.compile(rb"[A-Za-z_]\w*")  # (a word just after a string literal: a macro joined to it)


def _string_macro(keys: _Keys, word: bytes, where: int, read: dict[bytes, bytes | None] | None = None) -> bytes | None:
    """The text of the string literals the macro `word` stands for at offset `where` of the source (`#define NAME
    "a"`), None where it stands for anything else or for nothing porter reads. The macros among them are read so too
    (`#define FULL "myops::" NAME`, `#define NAME OTHER`), as the preprocessor rescans a use: they were read as no
    op, and a function every device runs lost (thirty-second scaf2 read). `read`: the macros read for this use
    (one in its own expansion is left a word: no string)."""
    read = {} if read is None else read
    if word in read or len(read) >= _STRING_MACRO_DEPTH:
        return read.get(word)
    read[word] = None
    definition = keys.definition(word, where, strict=True)  # (`"ns::" NAME` before `#define NAME`: no C++)
    if definition is None:
        return None
    code, found, start = _code_of(definition), [], 0
    for inner in _MACRO_WORD.finditer(code):
        given = _string_macro(keys, inner.group(), where, read)
        if given is None or code[start : inner.start()].strip():
            return None
        found += [_literals_text(definition[start : inner.start()]) or b"", given]
        start = inner.end()
    last = _literals_text(definition[start:]) if not code[start:].strip() else None
    read[word] = b"".join(found) + (last or b"") if found or last is not None else None
    return read[word]


_STRING_MACRO_DEPTH = 16  # macros read for one use in a schema


def _literals_text(piece: bytes) -> bytes | None:
    """What the string literals of `piece` (literals and spaces only) hold, joined as the compiler joins
    them; None where it holds none."""
    found = []
    for m in not_code(piece.decode("latin-1")):
        literal = m.group(0)
        if m.group("raw") is not None:
            end = len(literal) - len(m.group("raw")) - 2  # (before its `)delimiter"`)
            found.append(literal[literal.index("(") + 1 : end] if literal.endswith(")" + m.group("raw") + '"') else "")
        elif literal.startswith('"'):
            found.append(literal[1:-1])
    return "".join(found).encode("latin-1") if found else None


def _after_strings(body: bytes, at: int) -> int | None:
    """Where a call's arguments go on after its strings and a comma, or None when nothing
    follows them (the call closes, or the source ends)."""
    while at < len(body) and (body[at] in _SPACE or body[at] == 44):  # spaces and commas
        at += 1
    return None if at >= len(body) or body[at] == 41 else at  # `)`


_Block = tuple[bytes | None, bytes, bytes | None, bytes, int, int]
_Head = tuple[bytes | None, bytes, bytes | None, bytes, int, int, bytes | None]  # (a `_Block`, its body if a macro's)
_Tail = tuple[tuple[int, int], bytes | None, tuple[int, int], bytes]


def _blocks(source: bytes) -> Iterator[_Block]:
    """(impl, namespace text, key text, variable, body start, head start) of each library
    block's head, as `HEAD([\\w()\\s,]*?)\\s*,\\s*(?:(\\w+)\\s*,\\s*)?(\\w+)\\s*\\)\\s*\\{`
    reads it (the shortest namespace), found without backtracking: the argument list runs to
    the first byte no argument list holds, which must be the `{`, and is read from its end."""
    stop, tail = -1, None
    taken = 0
    for m in _HEAD.finditer(source):
        if m.start() < taken:
            continue
        start = m.end()
        if stop < start:
            found = _NOT_ARGUMENT.search(source, start)
            stop = found.start() if found else len(source)
            tail = _tail(source, stop)
        if tail is None:
            continue
        key_run, key, comma_run, var = tail
        if key is not None and start <= key_run[1]:
            ns_end, key_text = max(start, key_run[0]), key
        elif start <= comma_run[1]:
            ns_end, key_text = max(start, comma_run[0]), None
        else:
            continue
        taken = stop + 1
        yield m.group(1), source[start:ns_end], key_text, var, stop + 1, m.start()


def _back(source: bytes, at: int, chars: frozenset[int]) -> int:
    while at > 0 and source[at - 1] in chars:
        at -= 1
    return at


def _tail(source: bytes, stop: int) -> _Tail | None:
    """The end of an argument list that stops at `stop`: `, [KEY ,] VAR )` then `{`; for each
    comma, where the spaces before it begin and where it is; None when it is not one."""
    if source[stop : stop + 1] != b"{":
        return None
    close = _back(source, stop, _SPACE) - 1
    if close < 0 or source[close] != 41:  # `)`
        return None
    var_end = _back(source, close, _SPACE)
    var_start = _back(source, var_end, _WORD)
    comma = _back(source, var_start, _SPACE) - 1
    if var_start == var_end or comma < 0 or source[comma] != 44:  # `,`
        return None
    comma_run = (_back(source, comma, _SPACE), comma)
    key_end = comma_run[0]
    key_start = _back(source, key_end, _WORD)
    key_comma = _back(source, key_start, _SPACE) - 1
    if key_start < key_end and key_comma >= 0 and source[key_comma] == 44:
        key_run = (_back(source, key_comma, _SPACE), key_comma)
        return key_run, source[key_start:key_end], comma_run, source[var_start:var_end]
    return (0, -1), None, comma_run, source[var_start:var_end]


def _tag_variables(code: bytes) -> frozenset[bytes]:
    """The names `code` (strings and comments blanked) declares as tags (`_TAG_VARIABLE`)."""
    if b"Tag" not in code:
        return frozenset()
    return frozenset(m.group(1) or m.group(2) for m in _TAG_VARIABLE.finditer(code))


def _are_tags(text: bytes, at: int, keys: _Keys, where: int, variables: frozenset[bytes] = frozenset()) -> bool:
    """Whether a `def`'s argument from `at` (offset `where` of the source) is its tags: a braced list, a
    `std::vector<at::Tag>`, an `at::Tag::`, a macro defined as one there (`#define TAGS
    {at::Tag::pt2_compliant_tag}`, `m.def("a(Tensor x) -> Tensor", TAGS)`: read as an implementation every
    device runs, and `a`, with a CUDA kernel only, not said to be: thirtieth scaf2 read), or one of the
    `variables` the file declares as tags (`std::vector<at::Tag> tags = {...}`: the same; its leftover)."""
    if _TAGS.match(text, at):
        return True
    word = _TAG_WORD.match(text, at)
    if word is not None and word.group(1) in variables:
        return True
    definition = keys.definition(word.group(1), where) if word else None
    return definition is not None and _TAGS.match(definition.strip()) is not None


def _key_name(text: bytes, at: int, keys: _Keys | None, where: int) -> str:
    """The key of `m.impl("op", key, fn)`'s arguments from `at`: "any" where none is given (a word
    then no comma is the function), a macro's as `keys` reads it at offset `where` of the source (the
    block's body: `m.def` takes none, no `keys`)."""
    match = _KEY.match(text, at)
    if match:
        return match.group(1).decode()
    if keys is None:
        return "any"
    word = _KEY_WORD.match(text, at)
    return keys.of(word.group(1), where) if word else "any"


class _Keys:
    """The dispatch key a word given as one stands for: itself where it is torch's (`CUDA`,
    `CompositeExplicitAutograd`), else the key of the macro the file defines by that name
    (`#define DEVICE_KEY c10::DispatchKey::CUDA`), else `UNREAD` and the word. The file's
    `#define`s and `#undef`s are read once, when a word first needs them, and a word is read by the
    definition in effect where it is used: of `#define KEY torch::kCUDA`, a block, `#undef KEY`,
    `#define KEY torch::kCPU`, the first block's op was read CPU, the last definition, and a CUDA-only
    op was not said (twenty-ninth scaf2 read's leftover). Where the file defines it only after the
    use, its headers' definition counts, else that later one (as before)."""

    _DEPTH = 4  # macros of macros followed (`#define K KEY`, `#define KEY CUDA`)

    def __init__(
        self,
        source: bytes,
        path: Path | None,
        unbuilt: Callable[[int], bool],
        tree: Path | None = None,
        dirs: tuple[Path, ...] = (),
        compiled: Callable[[int], bool | None] | None = None,
    ) -> None:
        self._source, self._path, self._tree, self._dirs = source, path, tree, dirs
        self._compiled = compiled
        self._own: dict[bytes, list[tuple[int, bytes | None]]] | None = None
        self._included: dict[bytes, bytes] | None = None
        # a `#define` in a branch no default build compiles is none (`#ifndef USE_ROCM` / `#define KEY CUDA` /
        # `#else` / `#define KEY HIP`: the last, HIP, was read, and the op was not CUDA-only: twenty-ninth read)
        self._unbuilt = unbuilt

    def of(self, word: bytes, at: int, depth: int = 0) -> str:
        """The key `word`, used at offset `at` of the source, stands for; `UNDECIDED` and the word where the
        definitions some build may have in effect there give two keys."""
        body = self.definition(word, at)
        keys = {self._of(word, other, at, depth) for other in self._undecided(word, at)}
        return UNDECIDED + word.decode() if len(keys) > 1 else self._of(word, body, at, depth)

    def _undecided(self, word: bytes, at: int) -> list[bytes]:
        """The bodies of the definitions of `word` that some build may have in effect at `at`, where the last one
        before it is in a branch porter cannot decide: it, and each before it back to one it can (an `#undef`, or no
        definition, is no key: a block of it compiles in no build)."""
        if self._compiled is None or self._own is None:
            return []
        before = [(offset, body) for offset, body in self._own.get(word, []) if offset < at]
        out: list[bytes] = []
        while before and self._compiled(before[-1][0]) is None:
            out += [body for _, body in before[-1:] if body is not None]
            before.pop()
        return [*out, *(body for _, body in before[-1:] if body is not None)] if out else []

    def _of(self, word: bytes, body: bytes | None, at: int, depth: int) -> str:
        """The key `word` stands for where `body` is its definition in effect."""
        if body is None:
            return word.decode() if self._torchs(word) else UNREAD + word.decode()
        body = body.split(b"//")[0].strip()
        key = _KEY.fullmatch(body)
        if key:
            return key.group(1).decode()
        followed = depth < self._DEPTH and re.fullmatch(rb"\w+", body)
        return self.of(body, at, depth + 1) if followed else UNFOLLOWED + word.decode()

    def definition(self, word: bytes, at: int, strict: bool = False) -> bytes | None:
        """The body of the macro `word` in effect at `at` (None where none is, or after its `#undef`; where the file
        defines it only after `at`, that later one unless `strict`, as the preprocessor reads it)."""
        if self._own is None:
            self._own = _defines_by_offset(self._source, self._unbuilt)
        events = self._own.get(word, [])
        before = [body for offset, body in events if offset < at]
        if before:
            return before[-1]
        if self._included is None and self._path is not None and not self._torchs(word):
            tree = self._tree if self._tree is not None else self._path.parent
            self._included = _included_defines(self._source, self._path, tree, self._dirs)  # (read once)
        found = (self._included or {}).get(word)
        return found if found is not None or not events or strict else events[-1][1]

    @staticmethod
    def _torchs(word: bytes) -> bool:
        """Whether `word` is one of torch's keys (`CUDA`, `CompositeExplicitAutograd`), no macro."""
        return word.decode() in _CAPITAL_KEYS or (word[:1].isupper() and not _MACRO.fullmatch(word))


def _defines_by_offset(source: bytes, unbuilt: Callable[[int], bool]) -> dict[bytes, list[tuple[int, bytes | None]]]:
    """Each macro's `#define`s (its body) and `#undef`s (None) in `source`, by offset, those in a branch
    no default build compiles left out."""
    out: dict[bytes, list[tuple[int, bytes | None]]] = {}
    found: list[tuple[int, bytes, bytes | None]] = [
        (m.start(), m.group(1), _CONTINUED.sub(b" ", m.group(2))) for m in _DEFINE.finditer(source)
    ]
    found += [(m.start(), m.group(1), None) for m in _UNDEF.finditer(source)]
    for offset, name, body in sorted(found, key=lambda one: one[0]):
        if not unbuilt(offset):
            out.setdefault(name, []).append((offset, body))
    return out


# `#include "name"`: a header the compiler looks for beside the including file first
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
_INCLUDES = 8  # headers read at most for one file's key macros
_INCLUDE_DEPTH = 2  # the file's headers and theirs


# a header `headers` read: its path (from the working folder), its `stat` before it was read and
# its bytes, comments blanked; None and b"" where none could be read (a header made later is read then)
# or none is read (a link out of the tree: its `stat` is still recorded, so a copy put in its place is read)
Header = tuple[Path, os.stat_result | None, bytes]


def tree_of(path: Path) -> Path:
    """The tree a source's headers are read in: the working folder where the source is in it (lint
    names sources from there), else the source's own folder."""
    here = os.path.realpath(".")
    return Path(here) if _in_tree(os.path.realpath(path), here) else path.parent


def headers(source: bytes, path: Path, tree: Path | None = None, dirs: tuple[Path, ...] = ()) -> list[Header]:
    """The headers `source` (the file `path`) includes by a relative name that names a file beside it (a quoted
    one) or in the build's `-I` folders `dirs` (as the compiler looks: it was "not read", twenty-seventh read's
    leftover; `_header_places`), and theirs (`_INCLUDE_DEPTH` deep, `_INCLUDES` headers at most, each read as a
    source is): where a key macro of the file is looked for (`_included_defines`), so what the cache's key of
    its registrations hashes beside its own bytes (`sha256_with`). A header whose real path is not in `tree` (by
    default `tree_of(path)`: a link out of it) is not read, as the kernels' own include search reads none (it
    was: twenty-eighth read's leftover); its `stat` is kept with the rest, so that a copy put in its place is
    read (the stat index vouched for the source on, and its old key: twenty-ninth cache2 read). An `#include` in
    a comment or in a branch no default build compiles (`#ifdef USE_ROCM`) is none: its header's `#define`s came
    first, and the ROCm build's key was read (twenty-ninth cache2 read)."""
    top = os.path.realpath(tree if tree is not None else tree_of(path))
    out: list[Header] = []
    queue = [(blank_comments(source), path, 1)]
    seen: set[Path] = set()
    missing: set[Path] = set()
    while queue:
        text, at, depth = queue.pop(0)
        folder, unbuilt = at.parent, None
        for m in _INCLUDE.finditer(text):
            unbuilt = unbuilt or _unbuilt_at(text, path)  # (in `#ifdef USE_ROCM`: none, as `_included_defines`)
            name = os.fsdecode(m.group(1) or m.group(2))
            if unbuilt(m.start()) or os.path.isabs(name):
                continue
            target, before = _header_places(name, folder, dirs, m.group(2) is not None)
            # (the places looked in first with nothing there, or all: a header made in one later is the one
            # the compiler reads, so the stat index looks at them too; made in the `-I` folder, it was not read)
            out.extend((t, None, b"") for t in before if t not in missing)
            missing.update(before)
            if target is None or target in seen or len(seen) >= _INCLUDES:
                continue
            seen.add(target)
            if not _in_tree(os.path.realpath(target), top):
                out.append((target, None, b""))  # (not read, but its `stat` looked at: a copy put there is read)
                continue
            try:
                st, data = read_regular_stat(target, MAX_PARSE_BYTES)
            except (OSError, ValueError):
                out.append((target, None, b""))  # (not a regular file, or gone since: not read)
                continue
            data = blank_comments(data)  # (`#define KEY CUDA /* the device */` was "no key porter reads")
            out.append((target, st, data))
            if depth < _INCLUDE_DEPTH:
                queue.append((data, target, depth + 1))
    return out


def _header_places(name: str, folder: Path, dirs: tuple[Path, ...], angled: bool) -> tuple[Path | None, list[Path]]:
    """(the header `#include "name"` in a file of `folder` stands for, as the compiler looks: beside
    that file, then in the build's `-I` folders `dirs`; for `#include <name>` (`angled`) in `dirs`
    only, None where it is in none of them) and the places looked in before it with nothing there.
    An angled one was not read: `#include <keys.h>` found through `-I` gave "not read" where
    `porter kernels`' own include search reads it (thirty-second ilint read)."""
    looked = [f / name for f in (dirs if angled else (folder, *dirs))]
    found = next((i for i, t in enumerate(looked) if os.path.isfile(t)), None)
    return (None, looked) if found is None else (looked[found], looked[:found])


def build_dirs(path: Path, known: dict[Path, tuple[Path, ...]]) -> tuple[Path, ...]:
    """The `-I` folders the build files of the project of the source `path` give (`build_root`: the highest
    folder above it in its tree, `tree_of`, with a setup.py or a CMakeLists.txt; `include_dirs`: setup.py's
    `include_dirs=`, CMake's `include_directories`; of the build files whose project holds the source), read once a
    source folder into `known`: lint passed none, so a
    key's header found only there was "not read", and the op not CUDA-only (DEV002 where `porter kernels` read
    the key and GUARD004 was due, unsaid)."""
    tree = tree_of(path)
    root = build_root(path, tree)
    if root is None:
        return ()
    folder = Path(os.path.realpath(path.parent))  # (the build files that apply to a source: its folder's)
    if folder not in known:  # (named from the working folder where they are in it, as the headers are)
        here = os.path.realpath(".")
        found = include_dirs(root, tree, folder)
        known[folder] = tuple(Path(os.path.relpath(d)) if _in_tree(str(d), here) else d for d in found)
    return known[folder]


def sha256_with(source: bytes, read: Iterable[Header]) -> bytes:
    """The sha256 of what a source's registrations are read from: its bytes and those of the
    headers `read` (`headers`). Of its bytes alone, an edit of `keys.h`'s `#define DEVICE_KEY
    CUDA` kept the cached CUDA-only facts of the op it registers (twenty-ninth cache read)."""
    h = hashlib.sha256(source)
    for target, _, data in read:
        h.update(b"\0" + os.fsencode(target) + b"\0" + hashlib.sha256(data).digest())
    return h.digest()


def _included_defines(source: bytes, path: Path, tree: Path, dirs: tuple[Path, ...] = ()) -> dict[bytes, bytes]:
    """The `#define`s of the headers `source` (the file `path`) includes (`headers`): a key given
    by a project header's macro (`#define DEVICE_KEY CUDA` in `keys.h`) was "not read", and an op
    with a CUDA kernel only not CUDA-only to lint (twenty-seventh read's leftover). The first
    definition of a name is kept, until an `#undef` (`_in_order`), or until a header the source includes itself
    defines it again where every build that reads the header does (`_in_effect`): the preprocessor reads the last
    (`#define KEY CUDA` in a.h, `#define KEY CPU` in b.h, `#include "a.h"` / `#include "b.h"`: `cpp -P` gives CPU; the
    op was said CUDA-only: the thirty-sixth read's scleft2). A header's own headers are read after all the source's
    (`headers`: not in the preprocessor's order), so theirs never replace one."""
    out: dict[bytes, bytes] = {}
    direct = _direct_headers(source, path, dirs)
    for target, _, data in headers(source, path, tree, dirs):
        # (a `#define` under `#ifdef USE_ROCM` is none; `#ifdef __CUDACC__` is decided by the compiler of
        # the source that includes the header: keys.h's `#ifndef __CUDACC__` / `#define KEY CPU` was read
        # in a .cu, and its op not CUDA-only: twenty-ninth cache2 read)
        unbuilt = _unbuilt_at(data, path)
        events = [(d.start(), d.group(1), _CONTINUED.sub(b" ", d.group(2))) for d in _DEFINE.finditer(data)]
        _in_order(out, events, data, unbuilt, _in_effect(data, path) if target in direct and data else None)
    return out


def _direct_headers(source: bytes, path: Path, dirs: tuple[Path, ...]) -> set[Path]:
    """The headers the source (the file `path`) includes itself, in a branch a default build may compile."""
    text = blank_comments(source)
    unbuilt = _unbuilt_at(text, path)
    out: set[Path] = set()
    for m in _INCLUDE.finditer(text):
        name = os.fsdecode(m.group(1) or m.group(2))
        if not unbuilt(m.start()) and not os.path.isabs(name):
            target, _ = _header_places(name, path.parent, dirs, m.group(2) is not None)
            out |= {target} if target is not None else set()
    return out


# an include guard's or a default's directive: `#ifndef NAME`, `#if !defined(NAME)`
_IF_UNDEFINED = re.compile(r"#\s*(?:ifndef\s+(\w+)|if\s*!\s*defined\s*\(?\s*(\w+)\s*\)?)\s*")


def _in_effect(data: bytes, path: Path) -> Callable[[int, bytes], bool]:
    """Whether a `#define` of a name at an offset of the header `data` is read by every build that reads the header
    (every branch around it taken, or an include guard's: `#ifndef G` of another name `G` the header defines), so
    that it replaces an earlier definition (not one under `#ifndef NAME` of its own name, nor an undecided one)."""
    if b"#" not in data:
        return lambda at, name: True
    text = data.decode("latin-1")
    conditions = preprocessor.Conditions(text, lambda at: 0, _compiler_knows(path))
    defined = set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", text, re.M))  # (`#define A_H`: no body)

    def guard(directive: str, name: bytes) -> bool:
        m = _IF_UNDEFINED.fullmatch(directive)
        word = (m.group(1) or m.group(2)) if m else None
        return word is not None and word != name.decode("latin-1") and word in defined

    return lambda at, name: all(taken is True or guard(d, name) for _, d, taken in conditions.around(at))


T = TypeVar("T")


def _in_order(
    out: dict[bytes, T],
    events: list[tuple[int, bytes, T]],
    data: bytes,
    unbuilt: Callable[[int], bool],
    replaces: Callable[[int, bytes], bool] | None = None,
) -> None:
    """Apply a header's `#define`s `events` (offset, name, what it defines) and its `#undef`s to `out`, in the order
    they come: a name defined already keeps its first definition, an `#undef` takes it away. A header's `#undef` was
    not read: of `#define DEVICE_KEY CPU` / `#undef DEVICE_KEY` / `#define DEVICE_KEY CUDA` the first was read (`cpp`:
    CUDA), and an op with a CUDA kernel only not CUDA-only (thirty-second sleft read's leftover). `replaces`: whether
    a definition at an offset takes the place of an earlier one (`_in_effect`)."""
    undone = [(m.start(), m.group(1), None) for m in _UNDEF.finditer(data)] if b"undef" in data else []
    for offset, name, given in sorted([*events, *undone], key=lambda one: one[0]):
        if unbuilt(offset):
            continue
        if given is None:
            out.pop(name, None)
        elif replaces is not None and replaces(offset, name):
            out[name] = given
        else:
            out.setdefault(name, given)


# `#define REG(op) m.impl(TORCH_SELECTIVE_NAME("ns::" #op), TORCH_FN(op))`: a function-like macro (its last
# parameter may be `...`, `__VA_ARGS__` in its body), or an object-like one (`#define REG_FOO m.impl(...)`)
_FUNCTION_MACRO = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:\(([\w \t,]*(?:\.\.\.)?[ \t]*)\)|(?!\())((?:\\\r?\n|[^\n])*)", re.M
)
_TOKEN_PASTE = re.compile(rb"(?<!\s)\s*##\s*")  # (from a run's first space only: linear)
# a macro body's string literals (one unclosed to where it stops: a scan from each `"` was quadratic),
# `#param`s and words
_MACRO_PARTS = re.compile(rb'("(?:[^"\\\n]|\\.)*"?)|(?<!#)#(?!#)[ \t]*(\w+)|\w+')
_EXPANSIONS = 256  # uses of registering macros expanded at most, in one file
_OPEN = re.compile(rb"\s*\(")
_VARIADIC = b"..."
# (parameters, None for an object-like macro; body; where its `#define` is)
_Macro = tuple[list[bytes] | None, bytes, int]
_Defined = dict[bytes, list[tuple[int, _Macro | None]]]  # (each name's definitions and `#undef`s, by offset)


class _Registering:
    """The macros of a file that register (their body calls `.impl(` or `.def(`, or uses such a macro),
    and their uses in a library block expanded as the preprocessor does (`#op` a string, `a ## b` one
    word, the expansion read again for macros but its own): `TORCH_LIBRARY_IMPL(ns, CPU, m) { REG(c); }`
    was no registration, unsaid (twenty-eighth read's leftover). A definition in a branch no default
    build compiles is none, and of two the last built one counts; an object-like one (`REG_FOO;`) and one
    that uses another (`#define REG_CPU(op) REG(op, kCPU)`) were none, and the op said CUDA-only, and
    of `#ifndef USE_ROCM` / `#define REG(op) ...kCUDA...` / `#else` / `#define REG(op) ...kCPU...` the
    second was read (twenty-ninth read, second wave); so was a variadic one's use (`REG(...)`,
    `__VA_ARGS__`) and one whose arguments a backslash-newline splits (an op said CUDA-only), and a use
    before the macro's `#define` was expanded (the preprocessor leaves it: a CPU kernel read that no
    build registers). A use is expanded by the definition in effect where it is: of two (or one, an
    `#undef`, another) the last was kept, so a use between them was not expanded, and one after an
    `#undef` with no new definition was (twenty-ninth scaf2 read's leftover). A use of another number of
    arguments, or past `_EXPANSIONS`, is left as written."""

    def __init__(
        self,
        source: bytes,
        unbuilt: Callable[[int], bool],
        opens: re.Pattern[bytes] = _CALL,
        inherited: _Defined | None = None,
        compiled: Callable[[int], bool | None] | None = None,
    ) -> None:
        self._compiled = compiled
        defined: _Defined = {name: list(events) for name, events in (inherited or {}).items()}
        for m in _FUNCTION_MACRO.finditer(source) if b"define" in source else ():
            if not unbuilt(m.start()):
                defined.setdefault(m.group(1), []).append((m.start(), _macro_of(m)))
        for m in _UNDEF.finditer(source) if defined else ():
            if m.group(1) in defined and not unbuilt(m.start()):
                defined[m.group(1)].append((m.start(), None))
        for events in defined.values():
            events.sort(key=lambda event: event[0])
        self._macros = _registering_of(defined, opens)
        self._use = re.compile(rb"(?<!\w)(" + b"|".join(map(re.escape, self._macros)) + rb")(?!\w)")
        self._left = _EXPANSIONS

    def expands(self) -> bool:
        """Whether the file defines a macro of these."""
        return bool(self._macros)

    def _undecided(self, name: bytes, where: int, macro: _Macro) -> list[_Macro]:
        """The other definitions of `name` (of `macro`'s parameters) some build may have in effect at `where`, where the
        one in effect there is in a branch porter cannot decide: each before it back to one it can. Expanded by the
        last alone, `#ifdef WITH_X` / `#define REG TORCH_LIBRARY_IMPL(myops, CPU, m)` / `#else` / `#define REG
        ...(myops, CUDA, m)` / `#endif` / `REG { m.impl("a", a_k); }` was CUDA's, and `a` said CUDA-only where `cpp
        -DWITH_X` registers its CPU kernel (thirty-seventh read): a use is expanded by each, one after the other (what
        some build registers). A head without its body (the example's) is still read by the last: two heads in a row
        would give the body to one of them, a guess either way."""
        events = [(offset, m) for offset, m in self._macros[name] if offset < where]
        out: list[_Macro] = []
        while self._compiled is not None and events and events[-1][0] >= 0 and self._compiled(events[-1][0]) is None:
            out += [m for _, m in events[-1:] if m is not None]
            events.pop()
        out += [m for _, m in events[-1:] if m is not None] if out else []
        others: dict[bytes, _Macro] = {}
        for m in out:
            if m[0] == macro[0] and m[1] != macro[1]:
                others.setdefault(m[1], m)
        texts = [macro[1], *others]
        return list(others.values()) if all(b"{" in text or not _HEAD.search(text) for text in texts) else []

    def expand(
        self, body: bytes, origin: Callable[[int], int], hidden: frozenset[bytes] = frozenset()
    ) -> tuple[bytes, Callable[[int], int]]:
        """`body` (`origin`: where each of its offsets is in the source) with its uses of the macros defined
        before them expanded, but of those in `hidden` (being expanded) and of those in a string literal
        (expanded there, `TORCH_WARN("REG(b) is gone")` was a registration of `b`, and an op with a CUDA
        kernel only was not said to be: thirtieth read); and where each offset of the expansion is in the
        source (an expanded use's text: where the use is)."""
        if not self._macros:
            return body, origin
        out, at, done, closes, pieces = [], 0, 0, None, [(0, 0, True)]  # (offset in the output, in `body`, copied)
        code = _code_of(body)  # (where the uses are looked for: none in a string)
        for use in self._use.finditer(code):
            name = use.group(1)
            where = origin(use.start())
            macro = next((m for offset, m in reversed(self._macros[name]) if offset < where), None)
            if use.start() < at or name in hidden or self._left <= 0 or macro is None:
                continue
            params, text, _ = macro
            closes = _closing_parens(code) if closes is None and params is not None else closes
            given, end = _arguments(body, code, use.end(), params, closes or {})
            if given is None:
                continue
            self._left -= 1
            expanded, _ = self.expand(_substituted(text, given), _use_site(where), hidden | {name})
            for other in self._undecided(name, where, macro):
                more, _ = self.expand(_substituted(other[1], given), _use_site(where), hidden | {name})
                expanded += b" " + more
            out += [body[at : use.start()], expanded]
            done += use.start() - at + len(expanded)
            pieces += [(done - len(expanded), use.start(), False), (done, end, True)]
            at = end
        starts = [piece[0] for piece in pieces]

        def moved(i: int) -> int:
            offset, was, copied = pieces[bisect.bisect_right(starts, i) - 1]
            return origin(was + i - offset) if copied else origin(was)

        return b"".join([*out, body[at:]]), moved


def _use_site(where: int) -> Callable[[int], int]:
    """Where each offset of a macro use's expansion is in the source: where the use is."""
    return lambda _: where


def _arguments(
    body: bytes, code: bytes, at: int, params: list[bytes] | None, closes: dict[int, int]
) -> tuple[dict[bytes, bytes] | None, int]:
    """A macro use's arguments from `at` (after its name), by parameter (`__VA_ARGS__` the variadic
    ones), and where the use ends; None where it is no use. Its parentheses and commas are looked for in
    `code` (`body` with its strings blanked; `closes`: its `_closing_parens`), as the preprocessor reads a
    string as one token: of `CPU_IMPL(a, "doc, more")` or `REG(a, "(")` the string's comma or parenthesis was
    read as the use's, the use left unexpanded, and its CPU kernel lost (the op said CUDA-only: thirty-first
    scaf2 read)."""
    if params is None:
        return {}, at
    opened = _OPEN.match(code, at)
    close = closes.get(opened.end(), -1) if opened else -1
    if opened is None or close < 0:
        return None, at
    args, start = [], opened.end()
    for part in _top_commas(code[start:close]):
        args.append(_CONTINUED.sub(b"", body[start : start + len(part)]).strip())
        start += len(part) + 1
    fixed = params[:-1] if params[-1:] == [_VARIADIC] else params
    if len(args) != len(params) and (fixed is params or len(args) < len(fixed)):
        return None, at
    given = dict(zip(fixed, args, strict=False))
    return ({**given, b"__VA_ARGS__": b", ".join(args[len(fixed) :])} if fixed is not params else given), close + 1


def _macro_of(m: re.Match[bytes]) -> _Macro:
    """The macro a `_FUNCTION_MACRO` match defines."""
    params = None if m.group(2) is None else [p.strip() for p in m.group(2).split(b",")]
    return params, _CONTINUED.sub(b" ", m.group(3)).strip(), m.start()


def _header_macros(source: bytes, path: Path | None, tree: Path | None, dirs: tuple[Path, ...]) -> _Defined:
    """The macros of the headers `source` (the file `path`) includes (`headers`, as `_included_defines` reads them),
    each in effect from the file's start (offset -1; of two, the first): a block opened by a header's macro
    (`#define CPU_LIB TORCH_LIBRARY_IMPL(myops, CPU, m)` in `ops.h`, `CPU_LIB {`) and a registering one used in a
    block (`REG_CPU(a);`) were none, and their ops with a CUDA kernel said CUDA-only (thirty-first sleft read's
    leftover). A header's `#undef` takes a macro away (`_in_order`)."""
    out: dict[bytes, _Macro] = {}
    if path is None or b"include" not in source:
        return {}
    for _, _, data in headers(source, path, tree if tree is not None else path.parent, dirs):
        if b"define" not in data:
            continue
        events = [(m.start(), m.group(1), _macro_of(m)) for m in _FUNCTION_MACRO.finditer(data)]
        _in_order(out, events, data, _unbuilt_at(data, path))
    return {name: [(-1, macro)] for name, macro in out.items()}


def _registering_of(defined: _Defined, opens: re.Pattern[bytes]) -> _Defined:
    """Those of the macros `defined` (each name's definitions and `#undef`s, None, by offset) that register:
    one of whose bodies `opens` finds in (calls `.impl(`/`.def(`; or opens a library block, `_HEAD`), or uses
    one that does (followed from the callers back to their users, each macro once)."""
    bodies = {name: b" ".join(m[1] for _, m in events if m is not None) for name, events in defined.items()}
    users: dict[bytes, list[bytes]] = {}
    for name, body in bodies.items():
        for word in set(re.findall(rb"\w+", body)) & defined.keys():
            users.setdefault(word, []).append(name)
    queue = [name for name, body in bodies.items() if opens.search(body)]
    found = set(queue)
    while queue:
        for user in users.get(queue.pop(), []):
            if user not in found:
                found.add(user)
                queue.append(user)
    return {name: defined[name] for name in found}


def _substituted(text: bytes, given: dict[bytes, bytes]) -> bytes:
    """A macro's body with its parameters `given` their arguments: `#p` the argument as a string,
    `a ## b` one word, a string literal of the body as written."""

    def one(m: re.Match[bytes]) -> bytes:
        if m.group(1) is not None:
            return m.group(0)
        if m.group(2) is not None:
            return b'"' + _stringified(given[m.group(2)]) + b'"' if m.group(2) in given else m.group(0)
        return given.get(m.group(0), m.group(0))

    return _TOKEN_PASTE.sub(b"", _MACRO_PARTS.sub(one, text))


def _stringified(argument: bytes) -> bytes:
    """A macro's argument as `#param` makes it a string's text: its `"` and `\\` escaped, as the preprocessor does
    (a backslash outside a literal is a splice, taken out before). `#doc` of `"x ("` was `""x (""`, its `(` code,
    and the `m.impl` after it in a block a macro gives whole was none (an op said CUDA-only: thirty-first scaf2
    read)."""
    return argument.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def _closing_parens(text: bytes) -> dict[int, int]:
    """Where the `)` that closes each `(` of `text` is, by the offset after the `(` (an unclosed one
    has none): found in one pass, where a scan from each use of a macro to its `)` was quadratic
    (`REG(` 50,000 times, unclosed: lint never ended; twenty-ninth read, second wave)."""
    out, opened = {}, []
    for i, byte in enumerate(text):
        if byte == 40:  # `(`
            opened.append(i + 1)
        elif byte == 41 and opened:  # `)`
            out[opened.pop()] = i
    return out


def _top_commas(text: bytes) -> list[bytes]:
    """`text` split at its commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, byte in enumerate(text):
        depth += (byte == 40) - (byte == 41)
        if byte == 44 and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _in_tree(path: str, top: str) -> bool:
    """Whether real path `path` is the real folder `top` or under it."""
    try:
        return os.path.commonpath([path, top]) == top
    except ValueError:  # (another drive)
        return False


def _body(source: bytes, start: int, brackets: tuple[NextOf, NextOf], end: int) -> bytes:
    """The text from `start` (after an opening bracket) to its matching closing one, or to
    `end`; `brackets` finds the opening and closing ones (asked at starts that never go back)."""
    opens, closes = brackets
    depth = 1
    at = start
    while depth:
        next_open, next_close = opens.after(at), closes.after(at)
        next_open = next_open if next_open < end else -1
        if next_close < 0 or next_close >= end:
            return source[start:end]
        if 0 <= next_open < next_close:
            depth, at = depth + 1, next_open + 1
        else:
            depth, at = depth - 1, next_close + 1
    return source[start : at - 1]


# the keys whose kernels no tensor but a CUDA one reaches (and Meta's, which computes no values): c10's
# `Autocast` is `AutocastCUDA` (DispatchKey.h), read as another device's, so xformers 0.0.28.post3's five
# ops with a CUDA kernel, a Meta one and an `Autocast` one (`silu_bw_fused`, ...) were not CUDA-only (thirtieth read)
# c10's other per-backend keys of CUDA (`SparseCUDA`, `QuantizedCUDA`, ...: torch 2.9's `DispatchKey`) are reached
# by a CUDA tensor of that layout only, and an op with a CUDA kernel and a `SparseCUDA` one was not CUDA-only
# (thirty-first read)
_CUDA_TENSORS_ONLY = frozenset(
    {"CUDA", "AutogradCUDA", "Autocast", "AutocastCUDA", "Meta"}
    | {"SparseCUDA", "SparseCsrCUDA", "QuantizedCUDA", "NestedTensorCUDA"}
)
# the keys of transforms and modes (functionalization, vmap, Python subclasses and modes, conjugate and negative views,
# zero tensors, the tracer) and of Meta's layouts: a plain tensor's call reaches none of them (torch 2.9 as the oracle:
# an op with a CUDA kernel and a kernel that computes for any of them raises NotImplementedError on a CPU tensor), and
# one reached under its transform redispatches to the device's. Read as another device's, an op with a CUDA kernel, a
# Meta one and a `Functionalize` one (torch's recipe for a custom op that mutates) was not said CUDA-only (thirty-second
# read)
_NO_PLAIN_TENSOR = frozenset(
    {"Functionalize", "FuncTorchBatched", "BatchedNestedTensor", "FuncTorchVmapMode", "FuncTorchGradWrapper"}
    | {"FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode", "Python", "PythonTLSSnapshot"}
    | {"PythonDispatcher", "PreDispatch", "Conjugate", "Negative", "ZeroTensor", "Tracer"}
    | {"SparseMeta", "SparseCsrMeta", "NestedTensorMeta", "AutogradMeta"}
)
_NO_OTHER_DEVICE = _CUDA_TENSORS_ONLY | _NO_PLAIN_TENSOR  # (an op with a CUDA kernel and these only is CUDA-only)


# the keys of a kernel that wraps another (it records autograd, views, casts) and most often redispatches: an op
# with a CUDA kernel and such kernels only reaches no kernel on a CPU tensor where it does (torch: a
# redispatching Autograd kernel's op raises NotImplementedError there), and runs where it computes itself;
# porter does not read which, so it takes no such op for CUDA-only, and says so (thirtieth read's leftover)
_WRAPPER_KEYS = frozenset({"Autograd", "AutogradCPU", "AutogradOther", "ADInplaceOrView", "AutocastCPU"})


def wrapped_only(keys: Iterable[str]) -> list[str]:
    """The wrapper keys (`_WRAPPER_KEYS`) of an op whose kernels' `keys` are CUDA's and those only, else []."""
    others = set(keys) - _NO_OTHER_DEVICE
    return sorted(others) if "CUDA" in keys and others and others <= _WRAPPER_KEYS else []


def cuda_only_ops(
    sources: Iterable[tuple[str, bytes]], python: Iterable[tuple[str, str, str, str]] = ()
) -> dict[str, dict[str, str]]:
    """namespace -> {op: why} for each op the sources give a CUDA kernel and no other; `python`: the (file, namespace,
    op, key) of the kernels the project's Python files register (porter.analysis.python_ops), read as theirs."""
    return cuda_only_and_overloaded(sources, python)[0]


def cuda_only_and_overloaded(
    sources: Iterable[tuple[str, bytes]], python: Iterable[tuple[str, str, str, str]] = ()
) -> tuple[dict[str, dict[str, str]], dict[str, set[str]]]:
    """`cuda_only_ops`, and namespace -> the ops with an overload that is not CUDA-only (`a` of `a.out` with a CPU
    kernel): a name bound to `torch.ops.NS.a` reaches it (`op = torch.ops.NS.a; op.out(x)`)."""
    keys: dict[tuple[str | None, str], set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    unseen: set[str | None] = set()  # (the namespaces a block registers in through a function porter does not read)
    dirs: dict[Path, tuple[Path, ...]] = {}
    for name, source in sources:
        path = Path(source_path(name))
        found, unread = registrations_and_unread(source, path, tree_of(path), build_dirs(path, dirs))
        unseen.update(None if ns == GLOBAL_NAMESPACE else ns for ns, _, _, _, _ in unread)  # (`_`: every one)
        for ns, op, key in found:
            keys.setdefault((ns, op), set()).add(key)
            if ns is not None and key == "CUDA":
                where.setdefault((ns, op), name)
    _take_python(python, keys, where, unseen)
    out: dict[str, dict[str, str]] = {}
    for (ns, op), at in where.items():
        found_keys = keys[(ns, op)] | keys.get((None, op), set())
        if found_keys - _NO_OTHER_DEVICE or ns in unseen or None in unseen:
            continue
        out.setdefault(ns, {})[op] = (
            f"the project's op `{ns}::{op}` has a CUDA kernel only: registered for CUDA in {at}, for no other device"
        )
    overloaded: dict[str, set[str]] = {}
    for ns, op in keys:
        if ns is not None and "." in op and op not in out.get(ns, {}):
            overloaded.setdefault(ns, set()).add(op.partition(".")[0])
    return out, overloaded


def unjudged_by_python(python: Iterable[tuple[str, str, str, str]]) -> list[tuple[str, str | None, str]]:
    """(file, namespace or None for every one, key) of each Python kernel (`python_ops`) of an op porter cannot read
    for another device than CUDA's: no op of that namespace is said CUDA-only (`_take_python`)."""
    return [
        (name, None if ns == python_ops.UNREAD else ns, key)
        for name, ns, op, key in python
        if op == python_ops.UNREAD and key not in _NO_OTHER_DEVICE
    ]


def unjudged_in_every_namespace(python: Iterable[tuple[str, str, str, str]]) -> list[tuple[str, str, str]]:
    """(file, op, key) of each Python kernel (`python_ops`) of a read op in a namespace porter cannot read
    (`Library(*ARGS)`, `Library(ns, ...)` of a parameter) for another device than CUDA's: no op of that name in any
    namespace is said CUDA-only (`_take_python`), which was said nowhere (thirty-fifth read, scaf3)."""
    return [
        (name, op, key)
        for name, ns, op, key in python
        if ns == python_ops.UNREAD and op != python_ops.UNREAD and key not in _NO_OTHER_DEVICE
    ]


def _take_python(
    python: Iterable[tuple[str, str, str, str]],
    keys: dict[tuple[str | None, str], set[str]],
    where: dict[tuple[str, str], str],
    unseen: set[str | None],
) -> None:
    """Add the Python files' kernels (`python_ops`) to `keys` and `where`; one of an op porter cannot read
    (`f"myops::{name}"`) for another device than CUDA's leaves its namespace (or, unread too, every one) unseen; one of
    a namespace porter cannot read (`Library(*ARGS)`) is every namespace's op's, as a macro's namespace in C++."""
    python = list(python)
    unseen.update(ns for _, ns, _ in unjudged_by_python(python))
    for name, python_ns, python_op, key in python:
        if python_op == python_ops.UNREAD:
            continue
        if python_ns == python_ops.UNREAD:  # (no CUDA-only verdict comes of it: `where` takes read namespaces only)
            keys.setdefault((None, python_op), set()).add(key)
            continue
        keys.setdefault((python_ns, python_op), set()).add(key)
        if key == "CUDA":
            where.setdefault((python_ns, python_op), name)


def source_path(name: str) -> str:
    """The file a source's name names: discovery names the sources as every output shows a name
    (`textsafe.path_name`: `\\xNN` for a byte that is not UTF-8, a backslash doubled), and read
    under that name a source in `csrc\\xff/` named no file, so its ops were not known (seventeenth
    read)."""
    return os.fsdecode(name_bytes(name))


def read(names: Iterable[str]) -> list[tuple[str, bytes]]:
    """(name, bytes) of each of the C++/CUDA sources `names` (paths from the working folder, as
    shown) that registers ops (`registers_in`); one that cannot be read is passed over (discovery noted it)."""
    out = []
    dirs: dict[Path, tuple[Path, ...]] = {}
    for name in names:
        if not name.endswith(SUFFIXES):
            continue
        path = Path(source_path(name))
        try:
            source = read_regular(path, MAX_PARSE_BYTES)  # (past it: discovery noted it)
        except (OSError, ValueError):
            continue
        if registers_in(source, path, build_dirs(path, dirs))[0]:
            out.append((name, source))
    return out
