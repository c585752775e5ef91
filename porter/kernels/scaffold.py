"""`porter kernels --scaffold DIR`: per kernel, a reference op, a target kernel skeleton and a
parity test stub.

For kernel `K` it writes:
- `K_op.py`: `torch.library.custom_op("porter_kernels::K")` whose body is a plain-PyTorch
  reference (derived from the Triton source where `triton_ref` can; otherwise a TODO that raises
  — never a silent identity), and a `register_fake` implementation for `torch.compile`.
- `K_<target>.py`: an `@nki.jit` kernel called from an annotated PyTorch function that
  `nki_op` registers, for neuron; a JAX function with annotated arguments that returns its
  outputs, registered with `@torch.tpu.pallas.jax_op`, for tpu; a Pallas kernel through
  `torch_xla.experimental.custom_kernel.make_kernel_from_pallas` for xla. Each body is a TODO.
- `test_K_TARGET_parity.py`: runs the reference on the CPU, and compares kernel and reference
  where the target runtime is installed (skipped elsewhere).

So `*_op.py`, `*_TARGET.py` and `test_*_TARGET_parity.py` each name one kind of file exactly.

The reference op lets the ported model run before any kernel is written. Existing files are
never overwritten.
"""

from __future__ import annotations

import ast
import errno
import keyword
import math
import os
import re
import struct
import unicodedata
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from porter.kernels.inventory import (
    BRANCH_SAYINGS,
    CallSite,
    Inventory,
    Kernel,
    closing_parens,
    place,
    without_default,
)
from porter.pipeline.bounded import Failed, bounded
from porter.pipeline.parallel import DEFAULT_FILE_TIMEOUT
from porter.pipeline.writer import temporary
from porter.kernels.triton_ref import Translation, number_literal, roles, translate, why_not
from porter.core.reading import Unreadable, read_regular, too_large
from porter.core.textsafe import printable

_INT_NAME = re.compile(r"(^n$|^n_|_n$|stride|size|numel|num|count|len|rows|cols|^[NMK]$|dim|elements)", re.I)


_MAX_NAME = 64  # a kernel's files add `test_` and `_neuron_parity.py`: far below any file system's 255


def safe_name(name: str) -> str:
    """An ASCII Python identifier for `name` (a file name too): not a keyword, no leading
    digit, not longer than `_MAX_NAME` (a longer one keeps a digest of the whole name)."""
    out = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_") or "kernel"
    if out[0].isdigit():
        out = "k_" + out
    if len(out) > _MAX_NAME:
        import hashlib

        out = out[: _MAX_NAME - 9] + "_" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    if keyword.iskeyword(out) or out in _BOUND or out in _SCHEMA_WORDS or any(out + end in _BOUND for end in _ENDINGS):
        out += "_"
    return out


# the names a generated file imports (a kernel called `torch` made `def torch(...)` rebind the
# module in its `_op.py`, one called `wrap` a `wrap_nki` that hid torch_neuronx's), and the
# modules a kernel's files would shadow (`torch` + `_neuron.py` is AWS's `torch_neuron`)
_BOUND = frozenset(
    {
        "annotations", "torch", "pytest", "nki", "nisa", "nl", "nki_op", "wrap_nki", "jax", "jnp", "pl",
        "torch_tpu", "torch_xla", "make_kernel_from_pallas", "triton", "tl", "torch_neuron", "torch_neuronx",
        "functools",
        # and the builtins a function of the kernel's parameters calls: a parameter `float` made the
        # reference's `float('inf')` call a tensor (sixteenth read)
        "float", "NotImplementedError",
    }
)  # fmt: skip
# the words of torch's op schema that Python takes as names (torch/csrc/jit/frontend/lexer.h; the
# others are Python's keywords): a parameter or a kernel named `NoneType` or `Ellipsis` gave an op
# module that failed at import, "expected ident" (seventeenth read)
_SCHEMA_WORDS = frozenset({"NoneType", "Ellipsis"})
_NAMESPACE_ATTRS = frozenset({"name"})  # what `torch.ops.NAMESPACE` has of its own (safe_name strips `_dir`'s `_`)
_ENDINGS = ("_op", "_neuron", "_tpu", "_xla", "_nki", "_nki_kernel", "_pallas", "_pallas_kernel", "_reference")


def _unused(name: str, taken: set[str]) -> str:
    """`name` in ASCII with underscores added until it is neither taken nor bound by the scaffold;
    taken. ASCII: torch's schema parser reads no other name (a Triton pointer `xé` made an op
    module that failed at import, "UnicodeDecodeError": seventeenth read)."""
    ascii_name = re.sub(r"\W", "_", unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode())
    new = ("p_" if not ascii_name or ascii_name[0].isdigit() else "") + ascii_name + "_"
    while new in taken or new in _BOUND:
        new += "_"
    taken.add(new)
    return new


# Text from the user's tree (file names, kernel names, source, reasons) never becomes code:
# it goes into a comment or a docstring on one line with its control characters, backslashes
# and quotes escaped, or into a string literal written by `repr`. Every generated file is
# parsed before it is written (`_checked`).


def _one_line(text: object) -> str:
    return printable(" ".join(str(text).split()))


def _comment(text: object) -> str:
    """Text for after `# ` (one line: a newline in a name cannot end the comment)."""
    return _one_line(text)


def _doc(text: object) -> str:
    """Text for inside a `\"\"\"docstring\"\"\"`: one line, `\\` and `"` escaped."""
    return _one_line(text).replace("\\", "\\\\").replace('"', '\\"')


def _lit(text: object) -> str:
    """A Python string literal holding `text` (one line)."""
    return repr(_one_line(text))


def _typed(sig: Signature) -> list[str]:
    """Each parameter with its type (and default) for torch: a custom op's own, else its kind's."""
    return [
        f"{p}: {sig.types.get(p) or _TORCH_TYPE[sig.kinds[p]]}" + (f" = {sig.defaults[p]}" if p in sig.defaults else "")
        for p in sig.params
    ]


@dataclass
class Signature:
    """The reference op's parameters (Python identifiers), their kinds and what it writes."""

    params: list[str]
    kinds: dict[str, str]  # tensor / int / float
    mutates: list[str] = field(default_factory=list)
    known: bool = True  # kinds and mutation read from the kernel, not assumed
    types: dict[str, str] = field(default_factory=dict)  # a custom op's own types, as torch reads them
    defaults: dict[str, str] = field(default_factory=dict)  # and its defaults (a trailing run)
    untaken: list[str] = field(default_factory=list)  # the kernel's parameters no op can take (a function)
    structs: list[str] = field(default_factory=list)  # and those of a type no number (a struct by value)
    arrays: list[str] = field(default_factory=list)  # and arrays of pointers (`float** ptrs`: a list of tensors)
    functors: list[str] = field(default_factory=list)  # and those of a template type it calls (`Op op`: `op(x)`)
    positions: dict[int, str] = field(default_factory=dict)  # a C++ kernel's: its parameter's index -> the op's
    # a C++ kernel's numbers of one of its template types that no launch gives a number type: a
    # float by guess (the declaration, the types its launches give, if any, and the arguments it is
    # deduced from whose types porter does not read)
    guessed: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    packs: list[str] = field(default_factory=list)  # and its parameter packs (`Args... args`): one float each
    dtypes: dict[str, str] = field(default_factory=dict)  # a C++ kernel's integer pointers: the tensor's dtype
    ranks: dict[str, int] = field(default_factory=dict)  # and its accessors' ranks (`PackedTensorAccessor<T, 3>`)
    # and its pointers to a type no number (`const Box* boxes`): the type, said at its float tensor
    pointees: dict[str, str] = field(default_factory=dict)


# -- what each parameter is --------------------------------------------------------------------

_TORCH_TYPE = {"tensor": "torch.Tensor", "int": "int", "float": "float"}
_JAX_TYPE = {"tensor": "jax.Array", "int": "int", "float": "float"}
# an argument a launch passes that is an integer / a float, whatever the parameter's name
_INT_ARG = re.compile(
    r"(\.stride\(|\.numel\(\)|\.shape\[|\.size\(|\.dim\(\)|\.ndim\b|\.element_size\(\)|\blen\(|\bcdiv\(|^-?\d+$)"
)
_FLOAT_ARG = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$")
_C_INT = {
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "bool",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "index_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "uint",
}


# the floating types a kernel's parameter may be by value: C's, CUDA's and ATen's
_C_FLOAT = {
    "float",
    "double",
    "half",
    "__half",
    "__nv_half",
    "__nv_bfloat16",
    "nv_bfloat16",
    "at::Half",
    "at::BFloat16",
    "c10::Half",
    "c10::BFloat16",
}
# the dtype of a tensor a pointer to one of C's integer types stands for, where the type says its
# width (`int64_t* idx` was `torch.randn`, float: twenty-seventh read), or LP64 does (Linux's, where
# torch's CUDA extensions build; libclang for x86_64-linux gives `long` and `size_t` 8 bytes):
# `long* idx`, `size_t*` were floats (twenty-seventh read's leftover). An `index_t` the file does not
# alias stays under the op's TODO
_C_INT_DTYPE = {
    "long": "torch.int64",
    "long int": "torch.int64",
    "signed long": "torch.int64",
    "unsigned long": "torch.uint64",
    "unsigned long int": "torch.uint64",
    "size_t": "torch.uint64",
    "ssize_t": "torch.int64",
    "ptrdiff_t": "torch.int64",
    "bool": "torch.bool",
    "int8_t": "torch.int8",
    "uint8_t": "torch.uint8",
    "unsigned char": "torch.uint8",
    "int16_t": "torch.int16",
    "short": "torch.int16",
    "uint16_t": "torch.uint16",
    "int": "torch.int32",
    "int32_t": "torch.int32",
    "uint32_t": "torch.uint32",
    "unsigned": "torch.uint32",
    "unsigned int": "torch.uint32",
    "int64_t": "torch.int64",
    "long long": "torch.int64",
    "uint64_t": "torch.uint64",
    "unsigned long long": "torch.uint64",
    # (C's other spellings of them, as libclang reads each: `signed char*` and `unsigned short*` were
    # float tensors, twenty-ninth read)
    "signed char": "torch.int8",
    "short int": "torch.int16",
    "signed short": "torch.int16",
    "signed short int": "torch.int16",
    "unsigned short": "torch.uint16",
    "unsigned short int": "torch.uint16",
    "signed": "torch.int32",
    "signed int": "torch.int32",
    "signed long int": "torch.int64",
    "long long int": "torch.int64",
    "signed long long": "torch.int64",
    "signed long long int": "torch.int64",
    "unsigned long long int": "torch.uint64",
}
# one of CUDA's attributes (`__grid_constant__`)
_ATTRIBUTE = re.compile(r"__\w+__")


def _from_calls(k: Kernel, names: list[str]) -> dict[str, str]:
    """int / float per parameter, from what the launches pass (`x.stride(0)`, `1e-5`)."""
    out: dict[str, str] = {}
    for call in k.calls:
        for i, arg in enumerate(call.args):
            if arg.startswith("*"):
                break
            name, _, value = arg.partition("=") if re.match(r"^\w+=(?!=)", arg) else ("", "", arg)
            param = name or (names[i] if i < len(names) else None)
            if param is None:
                continue
            if _INT_ARG.search(value):
                out.setdefault(param, "int")
            elif _FLOAT_ARG.match(value):
                out.setdefault(param, "float")
    return out


def _scalar(name: str, evidence: dict[str, str], indices: set[str]) -> str:
    if name in evidence:
        return evidence[name]
    return "int" if name in indices or _INT_NAME.search(name) else "float"


def _triton_signature(k: Kernel, tr: Translation | None) -> Signature:
    every = [p.split(":")[0] for p in k.params]
    params = [p.split(":")[0] for p in k.params if "constexpr" not in p]
    found = roles(k.source, k.name)
    evidence = _from_calls(k, every)
    if tr is not None:
        pointers, stored = set(tr.stored) | set(tr.loaded), list(tr.stored)
    elif found is not None:
        pointers, stored = set(found.pointers), list(found.stored)
    else:
        return Signature(params, {p: "tensor" for p in params}, [], known=False)
    indices = set(found.indices) if found is not None else set()
    kinds = {
        p: "tensor" if p in pointers and evidence.get(p) is None else _scalar(p, evidence, indices) for p in params
    }
    # a tl.constexpr added into an address (`dw + offs + W`) is among the terms `roles` finds, but
    # no parameter of the op: "internal error: KeyError: 'W'" left 32 of fla-core's kernels without
    # a scaffold (seventeenth read)
    return Signature(params, kinds, [p for p in stored if kinds.get(p) == "tensor"])


def _annotation_kind(annotation: ast.expr | None) -> str:
    text = ast.unparse(annotation) if annotation is not None else ""
    if "Tensor" in text or not text:
        return "tensor"
    if re.search(r"\b(int|SymInt|bool)\b", text):
        return "int"
    if "float" in text:
        return "float"
    return "tensor"


# the types of torch's op schema (torch/_library/infer_schema.py), by the last part of their names
_SCHEMA_TYPES = {
    "Tensor": "torch.Tensor",
    "int": "int",
    "SymInt": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "Number": "torch.types.Number",
    "dtype": "torch.dtype",
    "device": "torch.device",
}
_SEQUENCES = {"list", "List", "Sequence", "tuple", "Tuple"}


def _schema_type(node: ast.expr | None) -> str | None:
    """A custom op's annotation spelled with `torch` and builtins alone (the op module imports no
    more), or None for one outside torch's schema types."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # `"int"`
        try:
            return _schema_type(ast.parse(node.value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _SCHEMA_TYPES.get(node.id if isinstance(node, ast.Name) else node.attr)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # `X | None`
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        inner = _schema_type(sides[0]) if len(sides) == 1 else None
        return f"{inner} | None" if inner else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
        head = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        items = [i for i in items if not (isinstance(i, ast.Constant) and i.value in (None, ...))]
        inner = _schema_type(items[0]) if len(items) == 1 else None
        if inner and (head == "Optional" or head == "Union"):
            return f"{inner} | None"
        if inner and head in _SEQUENCES:
            return f"list[{inner}]"
    return None


def _schema_default(node: ast.expr | None) -> str | None:
    """A default torch's op schema holds (None, a bool, a number, a string, `torch.<dtype>`), as
    source, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (type(None), bool, int, float, str)):
        return (
            number_literal(node.value)
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
            else repr(node.value)
        )
    text = ast.unparse(node) if node is not None else ""
    return text if re.fullmatch(r"torch\.\w+", text) else None


def _custom_op_signature(k: Kernel) -> Signature:
    """The op's own annotations and defaults (a custom op is typed already): a `str` was a Tensor,
    a `list[int]` an int, an `Optional` required (seventeenth read)."""
    try:
        fn = ast.parse(k.source).body[0]
    except (SyntaxError, ValueError, RecursionError, IndexError):
        fn = None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return Signature(list(k.params), {p: "tensor" for p in k.params}, known=False)
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    params = [a.arg for a in args]
    positional = fn.args.posonlyargs + fn.args.args
    given = dict(zip([a.arg for a in positional][len(positional) - len(fn.args.defaults) :], fn.args.defaults))
    given.update((a.arg, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None)
    defaults: dict[str, str] = {}
    for a in reversed(args):  # a trailing run: a parameter without a default ends it
        value = _schema_default(given.get(a.arg))
        if value is None:
            break
        defaults[a.arg] = value
    types = {a.arg: t for a in args if (t := _schema_type(a.annotation)) is not None}
    kinds = {a.arg: _type_kind(types[a.arg]) if a.arg in types else _annotation_kind(a.annotation) for a in args}
    return Signature(params, kinds, types=types, defaults=defaults)


def _type_kind(schema_type: str) -> str:
    """The kind of a schema type `_schema_type` spelled: a `str`, a `torch.dtype` or a
    `torch.device` is "value", no tensor (the Pallas op typed them `jax.Array` and passed them
    to its kernel as arrays: eighteenth read)."""
    if "torch.Tensor" in schema_type:
        return "tensor"
    if re.search(r"\b(int|bool)\b", schema_type):
        return "int"
    return "float" if re.search(r"\bfloat\b|Number", schema_type) else "value"


# C++'s own words of a parameter's type: never its name
_C_TYPE_WORDS = _C_INT | {"float", "double", "void", "auto", "const", "volatile", "__restrict__", "restrict"}


def _without_extent(head: str) -> str:
    """`head` less a last array extent (`x[N]` -> `x`): the text from the first `[` after the
    `]` before the last, as `re.sub(r"\\[[^\\]]*\\]$", "", head)` cuts it, found with two
    scans (that pattern tried every `[` of a run of them to the end: quadratic)."""
    if not head.endswith("]"):
        return head
    start = head.find("[", head.rfind("]", 0, len(head) - 1) + 1)
    return head if start == -1 else head[:start]


def _without_extents(head: str) -> str:
    """`head` less all its array extents (`x[4][N]` -> `x`): a parameter's name is read before
    them (`float x[N]` was named `N`: twentieth read)."""
    head = head.rstrip()
    for _ in range(16):
        if not head.endswith("]"):
            break
        head = _without_extent(head).rstrip()
    return head


# a declarator in parentheses: `(*f)(float)` (a function pointer), `(Cls::*m)(int)` (a member
# function's), `(&a)[4]` (an array's reference); group 3: a function's parameters follow
_PAREN_DECLARATOR = re.compile(
    r"\(\s*(?:[\w:<>,][\w:<>, ]*::\s*)?([*&]+)\s*(?:(?:const|volatile|__restrict__)\s+)*(\w+)\s*\)\s*(\()?"
)


def _c_param(decl: str, index: int = 0, typenames: Collection[str] = ()) -> tuple[str, str, bool]:
    """(name, kind, const pointer) of one C++ parameter declaration (`arg<index>` when it names
    none, as a declaration may: `const float*`, `int`, `const T`). A function pointer's kind is
    "function": no tensor, no number (it was `arg1: Tensor`, named after its parameter's type).
    One by value of a type that is no number (C's, a floating type of CUDA or ATen, one of the
    kernel's template type parameters `typenames`) is "struct": no tensor, no number
    (`ConvParamsBase params` was a float: nineteenth read). A pointer to pointers or an array of
    them (`float** ptrs`, `float* ptrs[]`) is "pointers", one device pointer per tensor: it was one
    tensor, of random numbers in the test (twenty-fourth read)."""
    for _ in range(16):  # an attribute (`[[maybe_unused]] int n`) is no array extent: `n` was a tensor
        start = decl.find("[[")
        end = decl.find("]]", start)
        if start < 0 or end < 0:
            break
        decl = decl[:start] + " " + decl[end + 2 :]
    head = without_default(decl).strip()
    inner = _PAREN_DECLARATOR.search(head)
    if inner is not None:
        if inner.group(3):
            return inner.group(2), "function", False
        return inner.group(2), "tensor", bool(re.match(r"\s*const\b", head))
    outer = head  # less its template arguments: an unnamed accessor was named `RestrictPtrTraits`
    for _ in range(16):
        outer, cut = re.subn(r"<[^<>]*>", " ", outer)
        if not cut:
            break
    declarator = _without_extents(outer)
    words = re.findall(r"[A-Za-z_]\w*", declarator)
    # (a qualified name, `torch::PackedTensorAccessor32`, is one type: no type and a name)
    qualified = re.findall(r"[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*", declarator)
    named = [w for w in qualified if w not in ("const", "volatile", "__restrict__", "restrict")]
    unnamed = (
        len(named) < 2 or "::" in named[-1] or named[-1] in _C_TYPE_WORDS or _without_extent(head).rstrip()[-1:] in "*&"
    )
    name = f"arg{index}" if unnamed else words[-1]
    # a pointer or an array by its declarator, not by a `*` of its default value (`int n = 2 * 3`)
    # or of its type's template arguments (CUTLASS's `Array<int, kCount / (kWarps * kSize)>`): both
    # were tensors (twentieth read)
    if "*" in outer or "[" in outer:
        return (name, *_pointer_kind(outer))
    if "TensorAccessor" in head:  # ATen's accessors (`PackedTensorAccessor32<...>`): a tensor
        return name, "tensor", bool(re.match(r"\s*const\b", head))
    # (CUDA's `__grid_constant__` and such attributes are no part of the type)
    qualifiers = {"const", "volatile", "__restrict__", "restrict", "std"}
    types = {w for w in (words if unnamed else words[:-1]) if w not in qualifiers and not _ATTRIBUTE.fullmatch(w)}
    if types and types <= _C_INT:
        return name, "int", False
    spelled = {re.sub(r"\s+", "", t).removeprefix("std::") for t in (named if unnamed else named[:-1])}
    spelled = {t for t in spelled if not _ATTRIBUTE.fullmatch(t)}
    number = spelled <= _C_INT | _C_FLOAT | {"auto", *typenames}
    return name, "float" if number else "struct", False


# an ATen accessor's element type and rank (`PackedTensorAccessor32<int64_t, 2, ...>`)
_ACCESSOR = re.compile(r"TensorAccessor(?:32|64)?\s*<([^<>,]*),\s*(\d+)\s*[,>]")


def _accessor(decl: str) -> tuple[str | None, int] | None:
    """(dtype, rank) of accessor parameter `decl` (`PackedTensorAccessor32<int64_t, 3> a`: int64, 3;
    its dtype None for a float element), or None for no accessor: an accessor of `int64_t` was a
    float tensor, of rank 3 one of `(4, 256)` (twenty-seventh read's leftovers)."""
    m = _ACCESSOR.search(decl)
    if m is None:
        return None
    return _C_INT_DTYPE.get(" ".join(m.group(1).split()).removeprefix("std::")), int(m.group(2))


def _tensor_type(
    decl: str, param: tuple[str, int], k: Kernel, into: tuple[str, dict[str, str], dict[str, int], dict[str, str]]
) -> None:
    """Into `into` (the op's name for tensor parameter `param`, the dtypes, ranks and struct types by
    it): the dtype of its integer elements (`_pointee_dtype`, else `_launched_dtype`), an accessor's
    rank, and the struct it points to (`_struct_pointee`)."""
    py, dtypes, ranks, pointees = into
    if (pointee := _struct_pointee(decl, param[0], k.typenames)) is not None:
        pointees[py] = pointee
    dtype = _pointee_dtype(decl, param[0]) or _launched_dtype(decl, param, k)
    if dtype:
        dtypes[py] = dtype
    accessor = _accessor(decl)
    if accessor is not None:
        ranks[py] = accessor[1]


def _pointee_dtype(decl: str, name: str) -> str | None:
    """The dtype of the tensor of pointer parameter `decl` (named `name`) where it points to an
    integer type of a known width (`const int64_t* __restrict__ idx`: `torch.int64`), or it is an
    accessor of one, else None."""
    accessor = _accessor(decl)
    if accessor is not None:
        return accessor[0]
    words = re.findall(r"[A-Za-z_]\w*(?:::\w+)*|\S", without_default(decl))
    kept = [w for w in words if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", name)]
    if kept.count("*") + kept.count("[") != 1 or kept[-1] not in ("*", "]"):
        return None
    base = " ".join(w.removeprefix("std::") for w in kept if w not in ("*", "[", "]"))
    return _C_INT_DTYPE.get(base)


# CUDA's vector types (`float4`, `half2`, `uint4`): numbers, a float tensor stands for them
_VECTOR_TYPE = re.compile(
    r"(?:u?(?:char|short|int|long|longlong)|float|double|half|__half|__nv_bfloat16|bfloat16)[1-4]"
)


def _struct_pointee(decl: str, name: str, typenames: Collection[str]) -> str | None:
    """The type pointer parameter `decl` points to where it is no number (`const Box* boxes`: `Box`):
    its tensor of random floats was under the op's general TODO only (twenty-seventh read's leftover)."""
    if _accessor(decl) is not None:
        return None
    words = re.findall(r"[A-Za-z_]\w*(?:\s*::\s*\w+)*|\S", without_default(decl))
    skip = ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class", name)
    kept = [re.sub(r"\s+", "", w) for w in words if w not in skip and not _ATTRIBUTE.fullmatch(w)]
    if kept.count("*") + kept.count("[") != 1 or kept[-1] not in ("*", "]"):
        return None
    base = [w.removeprefix("std::") for w in kept if w not in ("*", "[", "]")]
    if len(base) != 1 or not re.fullmatch(r"[A-Za-z_][\w:]*", base[0]):
        return None  # (`unsigned long`, an expression: C's own)
    number = {*_C_INT, *_C_FLOAT, *typenames, "void", "auto", "scalar_t", "index_t"}
    return None if base[0] in number or _VECTOR_TYPE.fullmatch(base[0]) else base[0]


def _pointer_kind(outer: str) -> tuple[str, bool]:
    """(kind, const pointer) of a pointer or array parameter (`outer`: its declaration less its
    template arguments and default)."""
    if outer.count("*") + ("[" in outer) > 1:
        return "pointers", False
    # a `const` before the last `*` (or, of an array, its `[`), found without a scan from each
    # `const` (`\bconst\b[^*]*\*` was quadratic on a run of them)
    last = outer.rfind("*") if "*" in outer else outer.find("[")
    const = re.search(r"\bconst\b", outer[:last]) is not None and not re.search(
        r"\*\s*const\b\s*\w*\s*$", outer.replace("__restrict__", "")
    )
    return "tensor", const


_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^])(?:[+\-*/%&|^]|<<|>>)?=(?!=)")


def _c_writes(body: str, name: str) -> bool:
    """Whether a kernel body writes through `name` (or a pointer declared from it): an
    assignment whose left side indexes or dereferences it, or an `atomic*` on it. A regular
    expression read of C++ (never compiled): enough to tell an output from an input."""
    names = {name}
    for m in re.finditer(r"\*\s*(?:__restrict__\s*)?(\w+)\s*=\s*([^;]*)", body):
        if re.search(rf"\b{re.escape(name)}\b", m.group(2)):
            names.add(m.group(1))
    alt = "|".join(re.escape(n) for n in sorted(names))
    # a reference bound to what it points at (`float& r = out[i];`): `r = v` writes there
    refs = [m.group(1) for m in re.finditer(rf"&\s*(\w+)\s*=\s*(?:\*\s*({alt})\b|({alt})\s*\[)", body)]
    for statement in re.split(r"[;{}]", body):
        assign = _ASSIGN.search(statement)
        if assign is not None:
            left = statement[: assign.start()]
            if refs and re.fullmatch(r"\s*(\w+)\s*", left) and left.strip() in refs:
                return True
            # (each optional token takes the spaces after it: `\s*\(?\s*` split one run of spaces
            # every way, quadratically; seventeenth read)
            if re.search(rf"(\*\s*(?:\(\s*)?({alt})\b|\b({alt})\b\s*(?:\)\s*)?\[)", left):  # `*p =`, `p[i] =`
                return True
    # `++p[i]`, `++*p`, `p[i]++`, `(*p)--` write (`c[0]++` counted nothing: nineteenth read); `*p++`
    # and `++p` move the pointer only
    if re.search(rf"(?:\+\+|--)\s*(?:\*\s*({alt})\b|({alt})\s*\[)", body) or re.search(
        rf"(?:\b({alt})\s*\[[^\[\];]*\]|\(\s*\*\s*({alt})\s*\))\s*(?:\+\+|--)", body
    ):
        return True
    return re.search(rf"\batomic\w*\s*\(\s*(?:&\s*)?(?:\(\s*)?({alt})\b", body) is not None or _passed(body, alt)


# what may stand before a call's `(` and is no call (`if (p)`, `sizeof(p)`)
_NOT_CALLS = frozenset(("if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "defined"))


def _passed(body: str, alt: str) -> bool:
    """Whether the pointer (one of `alt`) is passed to a call as an address (`f(p)`, `f(p + i)`,
    `f(&p[i])`, `memcpy((char*)p, ...)`), which may write through it (a `memcpy` into an output,
    a device function that stores: `mutates_args=()` said neither was written: nineteenth read). A
    value read from it (`f(p[i])`) is no address."""
    close = closing_parens(body)
    pointer = re.compile(rf"({alt})\b")
    for call in re.finditer(r"\b(\w+)\s*\(", body):
        end = close.get(call.end() - 1)
        if end is None or call.group(1) in _NOT_CALLS:
            continue
        for arg in body[call.end() : end].split(","):
            arg = arg.strip()
            if arg.startswith("(") and ")" in arg:  # a cast
                arg = arg[arg.index(")") + 1 :].lstrip()
            taken = arg.startswith("&")  # `&p[i]`: an address; `p[i]`: a value
            arg = arg[1:].lstrip() if taken else arg
            named = pointer.match(arg)
            if named is not None and arg[named.end() :].lstrip().startswith("[") == taken:
                return True
    return False


def _unaliased(decl: str, name: str, aliases: dict[str, str]) -> str:
    """`decl` with each type alias it names (not its parameter's `name`) replaced by what it stands
    for, again in what replaces it (a few rounds: an alias of an alias), to a bounded length."""
    for _ in range(8):
        new = re.sub(r"\b\w+\b", lambda m: aliases.get(m.group(), m.group()) if m.group() != name else name, decl)
        if new == decl or len(new) > 10_000:
            break
        decl = new
    # an alias of a function pointer (`using op_t = float (*)(float);`) read into `op_t f` is
    # `float (*)(float) f`: the name goes into its declarator, as the kernel could have written it
    # (`f` was a tensor of the op, unsaid: twenty-sixth read)
    pointer = _ABSTRACT_POINTER.search(decl)
    tail = decl.rstrip()
    head = tail[: len(tail) - len(name)]  # (the declaration before its name, where it ends in it)
    named = tail.endswith(name) and not (head[-1:].isalnum() or head.endswith("_"))
    if pointer is not None and named and pointer.end() <= len(head):
        decl = decl[: pointer.start()] + f"({pointer.group(1)}{name})" + head[pointer.end() :].rstrip()
    return decl


_ABSTRACT_POINTER = re.compile(r"\(\s*([*&]+)\s*\)(?=\s*\()")  # `(*)` of `float (*)(float)`


# a C++ number literal: its sign, its digits (hex, binary, octal, decimal; `'` separators), its suffix; and a float's
# (from a number's first character only: a run of digits was read from each, quadratically)
_C_INT_LITERAL = re.compile(r"([+-]?)(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)[uUlLzZ]*")
_C_FLOAT_LITERAL = re.compile(r"(?<![\w.])[+-]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?[fFlL]?")


# the C++ integer types a default converts to, as nvcc (LP64) converts it: (bits, signed); a value past one's range
# wraps (`unsigned n = -1` is 4294967295, `bool b = 2` true: the op's default was -1, 2)
_C_INTEGER_TYPES = {
    **dict.fromkeys(("char", "signed char", "int8_t"), (8, True)),
    **dict.fromkeys(("unsigned char", "uint8_t", "uchar"), (8, False)),
    **dict.fromkeys(("short", "short int", "signed short", "int16_t"), (16, True)),
    **dict.fromkeys(("unsigned short", "unsigned short int", "uint16_t", "ushort"), (16, False)),
    **dict.fromkeys(("int", "signed", "signed int", "int32_t"), (32, True)),
    **dict.fromkeys(("unsigned", "unsigned int", "uint32_t", "uint"), (32, False)),
    **dict.fromkeys(("long", "long int", "long long", "long long int", "int64_t", "ptrdiff_t", "ssize_t"), (64, True)),
    **dict.fromkeys(("unsigned long", "unsigned long long", "uint64_t", "size_t", "ulong"), (64, False)),
}
# (a type porter does not know, `index_t`: a value every integer type of 16 bits or more holds as written)
_C_ANY_INTEGER = range(-(1 << 15), 1 << 15)
_C_QUALIFIERS = frozenset({"const", "volatile", "register", "std"})


def _c_defaults(decls: list[str], positions: dict[int, str], kinds: dict[str, str]) -> dict[str, str]:
    """The op's defaults of a C++ kernel's trailing parameters that have one porter can write in Python (a number,
    `true`/`false`): `__global__ void k(float* x, int n = 4)`, launched `k<<<1, 1>>>(x)`, gave an op `k(x, n: int)`
    that such a call fails, and `n = 256` under a TODO in `make_inputs` (thirty-first scaffold read's leftover)."""
    out: dict[str, str] = {}
    for index in sorted(positions, reverse=True):  # a trailing run: a parameter without one ends it
        param, decl = positions[index], decls[index]
        head = without_default(decl)
        given = decl[len(head) + 1 :].strip() if len(head) < len(decl) and kinds[param] != "tensor" else None
        ctype = " ".join(w for w in re.findall(r"[A-Za-z_]\w*", head)[:-1] if w not in _C_QUALIFIERS)
        value = _c_number(given, kinds[param], ctype) if given else None
        if value is None:
            break
        out[param] = value
    return out


def _c_number(text: str, kind: str, ctype: str = "") -> str | None:
    """Python source for the C++ literal `text` given to a parameter of `kind` ("int", "float") and C type `ctype`,
    as the parameter holds it; None where it is no literal porter reads (an expression, a macro, a character), or
    a value porter cannot write (`double d = 1e400`, infinite: torch 2.9 refused the op's schema, "invalid numeric
    default value", and the op module failed to import: thirty-second scaf2 read)."""
    number: int | float
    if text in ("true", "false"):
        number = int(text == "true")
    elif (whole := _C_INT_LITERAL.fullmatch(text)) is not None:
        digits = whole.group(2).replace("'", "")
        octal = len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()
        if octal and not set(digits) <= set("01234567"):
            return None
        number = int(digits, 8 if octal else 0) * (-1 if whole.group(1) == "-" else 1)
    elif _C_FLOAT_LITERAL.fullmatch(text):
        number = float(text.rstrip("fFlL"))
    else:
        return None
    if kind == "float":
        held = struct.unpack("f", struct.pack("f", number))[0] if ctype == "float" else float(number)
        return number_literal(float(number)) if math.isfinite(held) else None
    return _c_integer(number, ctype) if isinstance(number, int) else None  # (`int n = 2.5`: not read)


def _c_integer(number: int, ctype: str) -> str | None:
    """Python source for the integer `number` as a parameter of the C type `ctype` holds it."""
    if ctype == "bool":
        return str(int(number != 0))
    if ctype not in _C_INTEGER_TYPES:
        return number_literal(number) if number in _C_ANY_INTEGER else None
    bits, signed = _C_INTEGER_TYPES[ctype]
    held = number % (1 << bits)
    return number_literal(held - (1 << bits) if signed and held >= 1 << (bits - 1) else held)


def _cuda_signature(k: Kernel) -> Signature:
    params: list[str] = []
    kinds: dict[str, str] = {}
    mutates: list[str] = []
    untaken: list[str] = []
    structs: list[str] = []
    arrays: list[str] = []
    functors: list[str] = []
    positions: dict[int, str] = {}
    guessed: list[tuple[str, list[str], list[str]]] = []
    packs: list[str] = []
    dtypes: dict[str, str] = {}
    ranks: dict[str, int] = {}
    pointees: dict[str, str] = {}
    parsed = [_c_param(decl, index, k.typenames) for index, decl in enumerate(k.params)]
    own = {name for name, _, _ in parsed if name == safe_name(name)}  # (kept as they are)
    for index, (decl, (name, kind, const)) in enumerate(zip(k.params, parsed, strict=True)):
        if decl == "void":  # `k(void)`: C's spelling of no parameter
            continue
        if k.aliases:  # `Acc a` of `typedef PackedTensorAccessor32<float, 2> Acc;`: typed as what Acc is
            _, kind, const = _c_param(_unaliased(decl, name, k.aliases), index, k.typenames)
        if kind in ("function", "struct", "pointers"):
            {"function": untaken, "struct": structs, "pointers": arrays}[kind].append(decl)
            continue
        if kind == "float" and _functor(decl, name, k):
            functors.append(decl)
            continue
        if "..." in decl.split("=")[0]:  # a pack, of any number of arguments: one float, said
            packs.append(decl)
        elif kind == "float":
            kind = _launched_kind(decl, (name, index), k, guessed)
        py = _param_name(name, kinds, own)
        params.append(py)
        kinds[py] = kind
        if kind == "tensor":
            unaliased = _unaliased(decl, name, k.aliases) if k.aliases else decl
            _tensor_type(unaliased, (name, index), k, (py, dtypes, ranks, pointees))
        positions[index] = py
        if kind == "tensor" and not const and (not k.source or _c_writes(k.source, name)):
            mutates.append(py)  # no body to read: a pointer that is not const may be written
    return Signature(
        params,
        kinds,
        mutates,
        defaults=_c_defaults(k.params, positions, kinds),
        untaken=untaken,
        structs=structs,
        arrays=arrays,
        functors=functors,
        positions=positions,
        guessed=guessed,
        packs=packs,
        dtypes=dtypes,
        ranks=ranks,
        pointees=pointees,
    )


def _param_name(name: str, kinds: dict[str, str], own: set[str]) -> str:
    """The op's name for C++ parameter `name`: its own where Python may hold it, else a new one that
    is no other parameter's (`k(float* a_, float* a)` was `k(a, a_)`: each named as the other, the
    one the kernel writes called `a_` in mutates_args: twenty-sixth read)."""
    py = safe_name(name)
    while py in kinds or (py != name and py in own):
        py += "_"
    return py


def _launched_kind(
    decl: str, param: tuple[str, int], k: Kernel, guessed: list[tuple[str, list[str], list[str]]]
) -> str:
    """The kind of number parameter `param` (its name and place; declared `decl`, read as a float):
    where it is of one of the kernel's template types, the one the launches' template arguments agree
    on, int or float (`k<int64_t><<<...>>>`: an int), or, where no launch gives it, a tensor where
    each launch's argument there is a tensor's pointer (`_deduced`); where they disagree or give none,
    a float, added to `guessed` with the types given (a type porter does not know, the launcher's
    `I64`, says nothing) and the arguments it is deduced from."""
    name, index = param
    templated = _template_type(decl, name, k)
    if templated is None:
        return "float"
    given = _instantiated(k, templated)
    kinds_given = {_c_param(f"{t} _", 0)[1] for t in given} & {"int", "float"}
    if len(kinds_given) == 1:
        return kinds_given.pop()
    at = k.template.index(templated) if templated in k.template else 0
    args = [c.args[index] for c in k.calls if len(c.args) > index and len(c.template) <= at]
    if not given and args and all(_deduced(a) == "tensor" for a in args):
        return "tensor"  # (nerfacc's `DataIteratorT tgt_` of `outputs.data_ptr<float>()`: a float, said)
    guessed.append((decl, given, [a for a in dict.fromkeys(args) if _deduced(a) is None] if not given else []))
    return "float"


# the element type a tensor's pointer is of (`x.data_ptr<int64_t>()`)
_DATA_PTR_TYPE = re.compile(r"\bdata_ptr\s*<([^<>]*)>")


def _launched_dtype(decl: str, param: tuple[str, int], k: Kernel) -> str | None:
    """The integer dtype of pointer parameter `param` (its name and place; declared `decl`, `T* x`)
    of one of the kernel's template types, where every launch gives that type the same integer
    type: as a template argument (`k<int64_t><<<`) or by the pointer it passes (`x.data_ptr<int64_t>()`);
    else None. `T* x` of `k<<<...>>>(x.data_ptr<int64_t>())` was a float tensor (twenty-seventh read's
    leftover)."""
    name, index = param
    templated = _template_type(decl, name, k)
    if templated is None or not k.calls:
        return None
    at = k.template.index(templated) if templated in k.template else 0
    types: list[str] = []
    for c in k.calls:
        if len(c.template) > at:
            types += _dispatched_as(c, c.template[at]) or [c.template[at]]
            continue
        m = _DATA_PTR_TYPE.search(c.args[index]) if len(c.args) > index and _deduced(c.args[index]) else None
        pointee = c.pointees.get(c.args[index]) if len(c.args) > index else None
        if m is None and pointee is None:
            return None  # (an argument whose type porter does not read: under the op's TODO)
        types.append(m.group(1).strip() if m is not None else str(pointee))
    dtypes = {_C_INT_DTYPE.get(" ".join(_unaliased(t, "", k.aliases).split()).removeprefix("std::")) for t in types}
    return dtypes.pop() if len(dtypes) == 1 else None


# a launch's argument that is a tensor's pointer (`x.data_ptr<float>()`, `x.data_ptr<float>() + n`), or
# an iterator over one (`thrust::make_reverse_iterator(...)`), which a template type parameter is
# deduced from: the whole argument, from its start (`^...$`: one start only, linear)
_POINTER_ARG = re.compile(
    r"^(?:thrust\s*::\s*(?:make_reverse_iterator|device_pointer_cast)\s*\(\s*)?(?:[A-Za-z_]\w*|\([^()]*\))"
    r"\s*(?:\.|->)\s*(?:mutable_|const_)?data(?:_ptr)?\s*(?:<[\w:\s]*>)?\s*\(\s*\)"
    r"(?:\s*[-+]\s*[\w.]+(?:\s*\(\s*\))?)?\s*\)?$"
)


def _deduced(arg: str) -> str | None:
    """What a template type parameter is deduced as from launch argument `arg`: "tensor" for a
    tensor's pointer (or an iterator over one), None where porter does not read the argument's type."""
    return "tensor" if _POINTER_ARG.match(" ".join(arg.split())) else None


def _template_type(decl: str, name: str, k: Kernel) -> str | None:
    """The kernel's template type parameter that parameter `name` (declared `decl`) is a value of
    (`T alpha`, `const T alpha`), or None."""
    types = set(re.findall(r"[A-Za-z_]\w*", decl.split("=")[0])) - {name, "const", "volatile"}
    found = [t for t in types if t in k.typenames and not _ATTRIBUTE.fullmatch(t)]
    return found[0] if len(found) == 1 else None


def _instantiated(k: Kernel, typename: str) -> list[str]:
    """The types the launches of kernel `k` give its template type parameter `typename`
    (`k<float, 128><<<...>>>`), each once, in order, as the kernel's file aliases them."""
    if typename not in k.template:
        return []
    at = k.template.index(typename)
    given: list[str] = []
    for c in k.calls:
        if len(c.template) > at:
            given += _dispatched_as(c, c.template[at]) or [_unaliased(c.template[at], "", k.aliases)]
    return list(dict.fromkeys(" ".join(t.split()) for t in given))


def _dispatched_as(call: CallSite, given: str) -> list[str]:
    """The types template argument `given` of launch `call` stands for where it is the `scalar_t` of
    a dispatch macro around the launch (`AT_DISPATCH_FLOATING_TYPES`: `double`, `float`), or, where
    porter does not read that macro's types, what says so; else none."""
    if " ".join(given.split()) != "scalar_t" or not call.dispatch:
        return []
    return call.dispatched or [f"scalar_t of {call.dispatch}, whose types porter does not read"]


def _dispatch_notes(k: Kernel) -> list[str]:
    """A TODO per template type parameter of C++ kernel `k` that a launch gives the `scalar_t` of a
    dispatch macro: the types it stands for (the tensors of `make_inputs` are float32)."""
    out = []
    for at, typename in enumerate(k.template):
        for c in k.calls:
            types = _dispatched_as(c, c.template[at]) if len(c.template) > at else []
            if types:
                where = place(c.path, c.line, c.cell)
                of = f"the `scalar_t` of {c.dispatch} at {where}"
                out.append(f"TODO(porter): `{typename}` is {of}: {', '.join(types)}")
                break
    return out


def _functor(decl: str, name: str, k: Kernel) -> bool:
    """Whether parameter `name` (declared `decl`) is of one of the kernel's template type
    parameters and the kernel uses it as no number: calls it (`op(a, b)`) or reads a member of it
    (`op.scale`, `op->f`). `template <typename Op> __global__ void k(Op op, float* x)` typed `op` a
    float (twentieth read's leftover, issue 24): a template type is a number only as it is used.
    A pack expanded (`f(args...)`) is no member read."""
    types = set(re.findall(r"[A-Za-z_]\w*", without_default(decl))) - {name}
    if not types & set(k.typenames) or not k.source:
        return False
    return re.search(rf"(?<![\w.>]){re.escape(name)}\s*(?:\(|\.(?![\d.])|->)", k.source) is not None


def _signature(k: Kernel, tr: Translation | None, n: str) -> Signature:
    if k.kind == "triton":
        return _triton_signature(k, tr)  # its parameters are renamed in its source (`_params_renamed`)
    if k.kind == "custom-op":
        return _own_names(_custom_op_signature(k), n)
    if k.kind == "cuda" and k.detail.startswith("__global__"):
        # its own declaration, even of no parameter (`k()` took one tensor `arg0`: seventeenth read)
        return _own_names(_cuda_signature(k), n)
    # an op of a loaded extension: only its call sites say what it takes
    count = max((len(c.args) for c in k.calls), default=1)
    params = [f"arg{i}" for i in range(count)]
    evidence = _from_calls(k, params)
    return Signature(params, {p: evidence.get(p, "tensor") for p in params}, known=False)


def _clashes(param: str, n: str) -> bool:
    """Whether a parameter named `param` would hide a name the files of kernel `n` use (an
    import: `torch`, `jax`, `pl`; the test's `make_inputs(device)`; one of the kernel's own
    functions: `n`, `n_reference`, `n_nki_kernel`, `n_pallas_kernel`), or is a name torch's op
    schema cannot hold (past ASCII, `NoneType`)."""
    own = param in ("device", "make_inputs", n) or param.startswith(n + "_")
    return own or param in _BOUND or keyword.iskeyword(param) or not param.isascii() or param in _SCHEMA_WORDS


def _own_names(sig: Signature, n: str) -> Signature:
    """`sig` with each parameter that `_clashes` renamed (a trailing underscore): a CUDA kernel's
    `addk_reference` made `addk` call its tensor argument, a custom op's `pl` made the Pallas
    wrapper call `pl.pallas_call` on a jax.Array (a Triton kernel's are renamed in its source)."""
    taken = set(sig.params)
    renames: dict[str, str] = {}
    for p in sig.params:
        if not _clashes(p, n):
            continue
        renames[p] = _unused(p, taken)
    if not renames:
        return sig

    def keyed(by_param: dict[str, str]) -> dict[str, str]:
        return {renames.get(p, p): v for p, v in by_param.items()}

    return replace(
        sig,
        params=[renames.get(p, p) for p in sig.params],
        kinds=keyed(sig.kinds),
        mutates=[renames.get(p, p) for p in sig.mutates],
        types=keyed(sig.types),
        defaults=keyed(sig.defaults),
        positions={i: renames.get(p, p) for i, p in sig.positions.items()},
    )


def _free(name: str, taken: list[str]) -> str:
    """`name`, or with as many trailing underscores as make it none of `taken`."""
    while name in taken:
        name += "_"
    return name


# -- the files ---------------------------------------------------------------------------------


def _branch_notes(k: Kernel) -> list[str]:
    """The clauses of `k`'s detail that say a build may not compile it (`#if 0`, `#ifdef USE_ROCM`,
    another branch's definition): its scaffold said nothing of it (twenty-seventh read)."""
    return [part for part in k.detail.split("; ") if any(said in part for said in BRANCH_SAYINGS)]


def _op_source(k: Kernel, n: str, tr: Translation | None, reason: str | None, sig: Signature) -> str:
    """The op module's source."""
    head = [
        f'"""Reference op for {_doc(k.kind)} kernel `{_doc(k.name)}` ({_doc(k.where)}), scaffolded by porter.',
        "",
        *[f"TODO(porter): {_doc(note)} (check which build the port needs).\n" for note in _branch_notes(k)],
        "Call `" + f"torch.ops.porter_kernels.{n}" + "` where the original kernel was launched; the body is",
        "plain PyTorch, so the ported model runs on any device before the target kernel exists.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import torch",
        "",
        "",
    ]
    params, mutates = sig.params, sig.mutates
    typed = ", ".join(_typed(sig))
    args = ", ".join(params)
    if tr is not None:
        body = [
            tr.source(f"{n}_reference"),
            "",
            f'@torch.library.custom_op("porter_kernels::{n}", mutates_args={tuple(mutates)!r})',
            f"def {n}({typed}) -> None:",
            f"    {n}_reference({args})",
            "",
            "",
            f"@{n}.register_fake",
            f"def _({typed}) -> None:",
            f"    return None  # writes {', '.join(mutates)} in place: nothing new to allocate",
            "",
        ]
        return "\n".join(head + _registered(body, len(params)))
    why = reason or "porter cannot derive its math from the source"
    returns = "None" if mutates else "torch.Tensor"
    check = (
        "# TODO(porter): check the parameter types and what the kernel writes (mutates_args):"
        " porter read them from the kernel."
        if sig.known
        else "# TODO(porter): porter could not read the parameter types or what the kernel writes: "
        "check both (mutates_args)."
    )
    for taken, cannot in (
        (sig.untaken, "which no torch op can take (a function): the reference chooses it"),
        (
            sig.structs,
            "of a type porter does not know to be a number (a struct or class, which no torch op can"
            " take): pass the fields the kernel reads as the op's tensors and scalars",
        ),
        (
            sig.arrays,
            "an array of device pointers, one per tensor (no torch op takes a pointer): pass those tensors"
            " as one `list[torch.Tensor]` of the op",
        ),
        (
            sig.functors,
            "of a template type it calls or reads a member of (a functor or a struct, which no torch op"
            " can take): the reference does what it does, for each type the kernel is launched with",
        ),
    ):
        if taken:
            check += "\n# " + _comment(
                "TODO(porter): the kernel also takes " + ", ".join(f"`{d}`" for d in taken) + ", " + cannot
            )
    for decl, given, unread in sig.guessed:
        launched = f"its launches give {', '.join(f'`{t}`' for t in given)}" if given else "no launch found gives it"
        if unread:  # (deduced from an argument porter does not read the type of: said, with the argument)
            deduced = ", ".join(f"`{a}`" for a in unread)
            launched = f"its launches deduce it from {deduced}, whose type porter does not read"
        check += "\n# " + _comment(
            f"TODO(porter): `{decl}` is of one of the kernel's template types, taken as a float ({launched}):"
            " check its type"
        )
    for decl in sig.packs:
        check += "\n# " + _comment(
            f"TODO(porter): `{decl}` is a parameter pack, taken here as one float: give the op one parameter"
            " per argument the launches pass in its place"
        )
    body = [
        f"def {n}_reference({args}):",
        f'    """TODO(porter): write `{_doc(k.name)}` in plain PyTorch ({_doc(why)})."""',
        f"    raise NotImplementedError({_lit(f'TODO(porter): reference body of {k.name}: {why}')})",
        "",
        "",
        check,
        f'@torch.library.custom_op("porter_kernels::{n}", mutates_args={tuple(mutates)!r})',
        f"def {n}({typed}) -> {returns}:",
        f"    {'' if mutates else 'return '}{n}_reference({args})",
        "",
        "",
        f"@{n}.register_fake",
        f"def _({typed}) -> {returns}:",
    ]
    if mutates:
        body.append(f"    return None  # writes {', '.join(mutates)} in place: nothing new to allocate")
    else:
        like = next((p for p in params if sig.kinds[p] == "tensor"), None)
        hint = f", e.g. {like}.new_empty(...)" if like else ""
        todo = "TODO(porter): return an empty tensor with the output" + chr(39) + "s shape and dtype" + hint
        body.append(f"    raise NotImplementedError({_lit(todo)})")
    body.append("")
    return "\n".join(head + _registered(body, len(params)))


# the most arguments an op of torch takes ("this PyTorch build only supports 64", at import)
_MAX_OP_ARGS = 64


def _registered(lines: list[str], count: int) -> list[str]:
    """`lines`; for an op of more than `_MAX_OP_ARGS` arguments, with the decorators that register
    it (and its fake) turned into comments under a TODO: a Triton kernel of 300 parameters gave
    files that failed at import (seventeenth read)."""
    if count <= _MAX_OP_ARGS:
        return lines
    out = []
    for line in lines:
        if line.startswith("@") and ("porter_kernels::" in line or line.endswith(".register_fake")):
            out.append(
                f"# TODO(porter): torch registers an op of at most {_MAX_OP_ARGS} arguments and this one takes"
                f" {count}: pass them as lists (list[torch.Tensor], list[int]), then register it:"
            )
            line = "# " + line
        out.append(line)
    return out


def _nki_source(k: Kernel, n: str, sig: Signature, todo: str) -> str:
    """`nki_op` (torch_neuronx/nki_hop.py) registers an annotated PyTorch function through
    torch's `infer_schema`; that function calls the `@nki.jit` kernel through `wrap_nki`."""
    params, mutates = sig.params, sig.mutates
    args = ", ".join(params)
    typed = ", ".join(_typed(sig))
    mutated = "{" + ", ".join(repr(m) for m in mutates) + "}" if mutates else "{}"
    returns = "None" if mutates else "torch.Tensor"
    call = f"wrap_nki({n}_nki_kernel)({args})"
    return "\n".join(
        _registered(
            [
                f'"""NKI kernel skeleton for `{_doc(k.name)}` (TorchNeuron): an `@nki.jit` kernel, called from a',
                'type-annotated PyTorch function that `torch_neuronx.nki_op` registers as a torch op."""',
                "",
                "import nki",
                "import nki.isa as nisa",
                "import nki.language as nl",
                "import torch",
                "from torch_neuronx import nki_op, wrap_nki",
                "",
                "",
                "@nki.jit",
                f"def {n}_nki_kernel({args}):",
                f"    # {_comment(todo)}",
                "    # Tiles: load HBM → SBUF with nisa.dma_copy, compute with nisa / nl, copy back.",
                f"    raise NotImplementedError({_lit(todo)})",
                "",
                "",
                f'@nki_op("porter_kernels::{n}_nki", mutates_args={mutated})',
                f"def {n}_nki({typed}) -> {returns}:",
                f"    {call}"
                if mutates
                else "    # TODO(porter): allocate the output, pass it to the kernel, return it",
                *([] if mutates else [f"    return {call}"]),
                "",
            ],
            len(params),
        )
    )


def _pallas_source(k: Kernel, n: str, sig: Signature, todo: str) -> str:
    """`torch.tpu.pallas.jax_op` needs every argument annotated (ValueError at import
    otherwise) and returns the outputs: a JAX function cannot write into an argument, so
    the kernel's out-arguments become its results, each shaped as itself. The op takes every
    argument: what the kernel writes it may read first (an in-place `relu_`), and the Pallas
    kernel gets the arguments that are no tensor as keywords. The op took none of the tensors
    the kernel writes and gave the kernel no scalar, so neither `x = relu(x)` nor `out = x * alpha`
    could be written in it (nineteenth read)."""
    params, mutates, kinds = sig.params, sig.mutates, sig.kinds
    outputs = mutates or [_free("out", params)]  # a kernel's own `out` input: `out_ref` twice
    # a custom op's own types (`str`, `list[int]`, `torch.dtype`), its tensors as JAX's, and its defaults
    typed = ", ".join(
        f"{p}: {sig.types[p].replace('torch.Tensor', 'jax.Array') if p in sig.types else _JAX_TYPE[kinds[p]]}"
        + (f" = {sig.defaults[p]}" if p in sig.defaults else "")
        for p in params
    )
    tensors = [p for p in params if kinds[p] == "tensor"]
    others = [p for p in params if kinds[p] != "tensor"]
    like = next((p for p in tensors if sig.types.get(p, "torch.Tensor") == "torch.Tensor"), None)
    guess = f"jax.ShapeDtypeStruct({like}.shape, {like}.dtype)" if like else "jax.ShapeDtypeStruct((...), jnp.float32)"
    shapes = [f"jax.ShapeDtypeStruct({o}.shape, {o}.dtype)" if o in tensors else guess for o in outputs]
    out_shape = shapes[0] if len(outputs) == 1 else "(" + ", ".join(shapes) + ")"
    returns = "jax.Array" if len(outputs) == 1 else "tuple[" + ", ".join("jax.Array" for _ in outputs) + "]"
    refs = [f"{p}_ref" for p in tensors]
    for o in outputs:
        refs.append(_free(f"{o}_out_ref" if f"{o}_ref" in refs else f"{o}_ref", [*refs, *others]))
    kernel_args = ", ".join(refs) + (", *, " + ", ".join(others) if others else "")
    kernel = (
        f"functools.partial({n}_pallas_kernel, {', '.join(f'{p}={p}' for p in others)})"
        if others
        else (f"{n}_pallas_kernel")
    )
    return "\n".join(
        _registered(
            [
                f'"""Pallas kernel skeleton for `{_doc(k.name)}` (TorchTPU): `torch.tpu.pallas.jax_op` registers a',
                "JAX function with annotated arguments as a torch op; it returns its outputs"
                + (f" ({', '.join(outputs)}, written in place by the original kernel)." if mutates else "."),
                '"""',
                "",
                *(["import functools", ""] if others else []),
                "import jax",
                "import jax.numpy as jnp",
                "from jax.experimental import pallas as pl",
                "import torch",
                "import torch_tpu  # noqa: F401  (registers torch.tpu)",
                "",
                "",
                f"def {n}_pallas_kernel({kernel_args}):",
                f"    # {_comment(todo)}",
                f"    raise NotImplementedError({_lit(todo)})",
                "",
                "",
                f'@torch.tpu.pallas.jax_op("porter_kernels::{n}_pallas")',
                f"def {n}_pallas({typed}) -> {returns}:",
                "    # TODO(porter): the output shapes and the grid",
                f"    return pl.pallas_call({kernel}, out_shape={out_shape})({', '.join(tensors)})",
                "",
            ],
            len(params),
        )
    )


def _kernel_source(target: str, k: Kernel, n: str, sig: Signature) -> str:
    todo = f"TODO(porter): port `{k.name}` ({k.where}); {n}_op.{n}_reference is the math to match."
    if target == "neuron":
        return _nki_source(k, n, sig, todo)
    if target == "tpu":
        return _pallas_source(k, n, sig, todo)
    return "\n".join(
        [
            f'"""Pallas kernel skeleton for `{_doc(k.name)}` (PyTorch/XLA on TPU), wrapped for torch tensors by',
            '`torch_xla.experimental.custom_kernel.make_kernel_from_pallas`."""',
            "",
            "import jax",
            "from jax.experimental import pallas as pl",
            "from torch_xla.experimental.custom_kernel import make_kernel_from_pallas",
            "",
            "",
            f"def {n}_pallas_kernel(*refs):",
            f"    # {_comment(todo)}",
            f"    raise NotImplementedError({_lit(todo)})",
            "",
            "",
            f"def {n}_output_shapes({', '.join(sig.params)}):",
            "    # TODO(porter): [(shape, dtype)] of each output",
            f"    raise NotImplementedError({_lit(todo)})",
            "",
            "",
            f"{n}_xla = make_kernel_from_pallas({n}_pallas_kernel, {n}_output_shapes)",
            "",
        ]
    )


# the packages each target's kernel module imports: the runtime and what it does not install
# (jax is no dependency of torch-tpu, nor of torch_xla without its `pallas` extra; `nki` comes
# apart from torch_neuronx): with one missing, the parity test failed, ModuleNotFoundError, where
# it was to be skipped (eighteenth read)
_RUNTIME = {"neuron": ("torch_neuronx", "nki"), "tpu": ("torch_tpu", "jax"), "xla": ("torch_xla", "jax")}
_KERNEL_FN = {"neuron": "{n}_nki", "tpu": "{n}_pallas", "xla": "{n}_xla"}
_DEVICE = {"neuron": '"neuron"', "tpu": '"tpu"', "xla": "torch_xla.device()"}


_SAID = 8  # the launches porter cannot tie to a kernel, said one by one in its test (then counted)


def _unresolved(k: Kernel) -> list[str]:
    """`make_inputs`' TODO lines for the launches that may run kernel `k`, which porter cannot tie to it."""
    lines = ["    # " + _comment(f"TODO(porter): {why}") for why in k.unresolved[:_SAID]]
    more = len(k.unresolved) - _SAID
    return lines + ([f"    # TODO(porter): and {more} more such launches"] if more > 0 else [])


def _test_source(target: str, k: Kernel, n: str, sig: Signature, tr: Translation | None) -> str:
    kernel_fn = _KERNEL_FN[target].format(n=n)
    params = sig.params
    lines = [
        f'"""Parity of `{_doc(k.name)}`: the target kernel against the plain-PyTorch reference."""',
        "",
        "import pytest",
        "import torch",
        "",
        # a folder with an `__init__.py` (the scaffold written into the project's package) makes
        # this test a module of that package, and pytest puts the folder above it on the path: a
        # plain `from K_op import` failed at collection, "No module named 'K_op'" (twenty-first read)
        "if __package__:",
        f"    from .{n}_op import {n}_reference",
        "else:",
        f"    from {n}_op import {n}_reference",
        "",
        "",
        "def make_inputs(device='cpu'):",
        *_unresolved(k),
    ]
    if tr is not None:
        lines.append(
            "    # "
            + _comment(
                "TODO(porter): inputs shaped as the call sites pass them"
                + (f" (e.g. {k.calls[0].describe()})" if k.calls else "")
            )
        )
        tensors = [p for p in tr.params if p in tr.loaded or p in tr.stored]
        lines += [f"    {p} = torch.randn(4, 256, device=device)" for p in tensors]
        given = _launch_values(k, tensors)
        for p in tr.params:
            if p in tensors:
                continue
            if p in given:
                value, site = given[p]
                lines.append(f"    {p} = {value}  # " + _comment(f"as the launch at {site} passes it"))
            else:
                lines.append(f"    {p} = 256  # TODO(porter): the value the call site passes")
        lines.append(f"    return [{', '.join(tr.params)}]")
    elif sig.positions and k.calls:  # a C++ kernel's, from its launches (`k<<<grid, block>>>(...)`)
        lines += _c_inputs(k, sig)
    else:
        lines.append(f"    raise NotImplementedError({_lit(f'TODO(porter): inputs for {k.name}')})")
    lines += [
        "",
        "",
        "def test_reference_runs_on_cpu():",
        "    args = make_inputs()",
        f"    {n}_reference(*args)",
        "",
        "",
        "@pytest.mark.skipif(",
        f'    any(__import__("importlib").util.find_spec(m) is None for m in {_RUNTIME[target]!r}),',
        f'    reason="needs {" and ".join(_RUNTIME[target])} installed",',
        ")",
        "def test_kernel_matches_reference():",
    ]
    if target == "xla":
        lines.append("    import torch_xla")
    lines += [
        "    if __package__:",
        f"        from .{n}_{target} import {kernel_fn}",
        "    else:",
        f"        from {n}_{target} import {kernel_fn}",
        "",
        "    want = make_inputs()",
        f"    got = [a.to({_DEVICE[target]}) if isinstance(a, torch.Tensor) else a for a in want]",
        f"    out_ref = {n}_reference(*want)",
    ]
    if target == "tpu":
        # the Pallas op takes every argument and returns what the original kernel wrote in place
        lines += [
            f"    mutated = {list(sig.mutates)!r}",
            f"    names = {params!r}",
            f"    out = {kernel_fn}(*got)",
            "    outs = out if isinstance(out, tuple) else (out,)",
            "    wanted = [b for name, b in zip(names, want) if name in mutated] if out_ref is None else [out_ref]",
            "    for a, b in zip(outs, wanted, strict=True):",
            "        torch.testing.assert_close(a.cpu(), b, rtol=1e-3, atol=1e-3)",
            "",
        ]
        return "\n".join(lines)
    lines += [
        f"    out = {kernel_fn}(*got)",
        "    if out_ref is None:  # in-place kernel: compare the written tensors",
        "        for a, b in zip(got, want):",
        "            if isinstance(a, torch.Tensor):",
        "                torch.testing.assert_close(a.cpu(), b, rtol=1e-3, atol=1e-3)",
        "    else:",
        "        torch.testing.assert_close(out.cpu(), out_ref, rtol=1e-3, atol=1e-3)",
        "",
    ]
    return "\n".join(lines)


# what a launch's scalar argument may be made of to be rebuilt in `make_inputs`: numbers, and the
# sizes of the tensors the same launch passes (`x.numel()`, `x.size(0)`, `x.shape[1]`, `x.stride(0)`)
_SIZES = frozenset(("numel", "size", "stride", "shape", "dim", "ndim", "element_size", "ndimension"))
_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load, ast.Expression)


def _launch_values(k: Kernel, tensors: list[str]) -> dict[str, tuple[str, str]]:
    """Per scalar parameter of Triton kernel `k`, the value a launch of it passes, rebuilt from
    `make_inputs`' own tensors (`tensors`), and where that launch is: a literal (`0.5`), or a size
    of a tensor the same launch passes (`x.numel()` where `x` goes to `x_ptr`: `x_ptr.numel()`).
    Every scalar was 256, under a TODO, where the launch showed the value (twentieth read's leftover)."""
    names = [p.split(":")[0].strip() for p in k.params]
    out: dict[str, tuple[str, str]] = {}
    for call in k.calls:
        bound: dict[str, str] = {}
        for i, arg in enumerate(call.args):
            if arg.startswith("*"):
                break
            keyword, _, value = arg.partition("=") if re.match(r"^\w+=(?!=)", arg) else ("", "", arg)
            if keyword or i < len(names):
                bound[keyword or names[i]] = value
        passed = {text: param for param, text in bound.items() if param in tensors and text.isidentifier()}
        for param, text in bound.items():
            rebuilt = _rebuilt(text, passed)
            if rebuilt is not None and param not in tensors:
                out.setdefault(param, (rebuilt, place(call.path, call.line, call.cell)))
    return out


def _c_inputs(k: Kernel, sig: Signature) -> list[str]:
    """The body of `make_inputs` for C++ kernel `k`, launched (`k.calls`): a tensor per pointer, and
    each number as a launch passes it where that is a literal or a size of a tensor the same launch
    passes (`_c_values`, Triton's rule), else 256 under a TODO. The tensors come first: a number
    before them sized from one (`k(int n, float* x)` of `k<<<...>>>(x.numel(), ...)`: `n = x.numel()`
    then `x = ...`) named it before it was bound (NameError: twenty-seventh read)."""
    lines = [
        "    # " + _comment(f"TODO(porter): inputs shaped as the call sites pass them (e.g. {k.calls[0].describe()})")
    ] + ["    # " + _comment(note) for note in _dispatch_notes(k)]
    given = _c_values(k, sig)
    for p in sig.params:
        if sig.kinds[p] == "tensor":
            lines.append(_c_tensor(p, sig.dtypes.get(p), sig.ranks.get(p, 2)))
        if p in sig.pointees:
            struct = sig.pointees[p]
            lines[-1] += "  # " + _comment(
                f"TODO(porter): `{p}` points to `{struct}` values, no number: these floats only stand for them"
            )
    for p in sig.params:
        if sig.kinds[p] == "tensor":
            continue
        if p in given:
            value, site = given[p]
            lines.append(f"    {p} = {value}  # " + _comment(f"as the launch at {site} passes it"))
        elif p in sig.defaults:
            lines.append(f"    {p} = {sig.defaults[p]}  # " + _comment(f"the kernel's default ({k.where})"))
        else:
            lines.append(
                f"    {p} = 256  # " + _comment("TODO(porter): the value the call site passes" + _local_of(k, sig, p))
            )
    return [*lines, f"    return [{', '.join(sig.params)}]"]


def _c_tensor(param: str, dtype: str | None, rank: int = 2) -> str:
    """The line of `make_inputs` that makes the tensor of pointer `param`: of random floats, or of
    small integers (in bounds of the other tensors' 1,024 elements) of its integer `dtype`; of 1,024
    elements in `rank` dimensions (an accessor's)."""
    shape = tuple(_input_shape(rank))
    if dtype is None:
        return f"    {param} = torch.randn({', '.join(map(str, shape))}, device=device)"
    high = 2 if dtype == "torch.bool" else 64
    return f"    {param} = torch.randint(0, {high}, {shape}, dtype={dtype}, device=device)"


def _input_shape(rank: int) -> list[int]:
    """A shape of 1,024 elements in `rank` dimensions: (4, 256) for 2, its 256 split over the others
    for more (4, 16, 16), (1024,) for 1."""
    if rank <= 1:
        return [1024]
    rest = rank - 1
    return [4, *(2 ** (8 // rest + (i < 8 % rest)) for i in range(rest))]


def _local_of(k: Kernel, sig: Signature, param: str) -> str:
    """` (the launch at k.cu:9 passes `n`, initialized `y.size(0)` at line 4)` where a launch passes op
    parameter `param` a local porter could not rebuild in `make_inputs` (of a tensor it does not
    pass), or ""."""
    index = next((i for i, p in sig.positions.items() if p == param), None)
    for call in k.calls:
        arg = _uncast(call.args[index]) if index is not None and index < len(call.args) else ""
        if arg in call.locals:
            value, line = call.locals[arg]
            where = place(call.path, call.line, call.cell)
            return f" (the launch at {where} passes `{arg}`, initialized `{value}` at line {line})"
    return ""


# a C++ launch's argument that passes a tensor's data: `x.data_ptr<float>()`, `x.const_data_ptr()`
_DATA = re.compile(r"(\w+)\s*(?:\.|->)\s*(?:data_ptr|const_data_ptr|mutable_data_ptr|data)\s*(?:<[^<>()]*>)?\s*\(\s*\)")
_C_CAST = re.compile(r"\(\s*(?:(?:const|unsigned|signed|long)\s+)*[A-Za-z_][\w:]*\s*(?:\*\s*)*\)\s*")
_NAMED_CAST = ("static_cast<", "reinterpret_cast<", "const_cast<")
_C_NUMBER = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)([fFlLuU]{1,3})(?!\w)")


def _c_values(k: Kernel, sig: Signature) -> dict[str, tuple[str, str]]:
    """Per number of C++ kernel `k`'s op, the value a launch passes it (`_launch_values`' rule):
    a literal (`0.5f` as `0.5`) or a size of a tensor whose data the same launch passes
    (`x.numel()` where `x.data_ptr<float>()` goes to `x_out`: `x_out.numel()`), casts taken off
    and C's integer division kept (`//`); and where that launch is."""
    out: dict[str, tuple[str, str]] = {}
    packed = {sig.positions[i] for i, d in enumerate(k.params) if i in sig.positions and d in sig.packs}
    for call in k.calls:
        bound = {sig.positions[i]: _uncast(arg) for i, arg in enumerate(call.args) if i in sig.positions}
        for param in packed:  # (a pack's first argument is no value of it)
            bound.pop(param, None)
        passed = {}
        for param, text in bound.items():
            data = _DATA.fullmatch(text)
            if data and sig.kinds[param] == "tensor":
                passed[data.group(1)] = param
        for param, text in bound.items():
            if sig.kinds[param] == "tensor" or param in out:
                continue
            rebuilt = _rebuilt(_C_NUMBER.sub(r"\1", _with_locals(text, call.locals)), passed)
            if rebuilt is not None:
                out[param] = (_c_division(rebuilt), place(call.path, call.line, call.cell))
    return out


# a name that is no member (`x.n`) nor a function called (`n(...)`)
_LOCAL_USE = re.compile(r"(?<![\w.>:])[A-Za-z_]\w*(?!\w)(?!\s*\()")


def _with_locals(text: str, local: dict[str, tuple[str, int]]) -> str:
    """`text` (a launch's argument) with each local of its host function it names (`int n =
    x.size(0);`) as what it is initialized to, in parentheses, casts taken off (a few rounds: a local
    of locals). Each number a launch passed in a local was 256 under a TODO (853 of vllm 0.34.0's
    1,014: twenty-first read's leftover)."""
    for _ in range(4):
        new = _LOCAL_USE.sub(lambda m: f"({_uncast(local[m.group()][0])})" if m.group() in local else m.group(), text)
        if new == text or len(new) > 2000:
            break
        text = new
    return text


def _uncast(text: str) -> str:
    """`text` (a C++ argument) without the casts around it: `static_cast<int>(x.numel())`,
    `(float)beta`, `reinterpret_cast<half*>(x.data_ptr<at::Half>())`."""
    for _ in range(8):
        text = text.strip()
        cast = _C_CAST.match(text)
        if cast:
            text = text[cast.end() :]
            continue
        if not text.startswith(_NAMED_CAST) or not text.endswith(")"):
            break
        depth, at = 0, text.index("<")
        for i in range(at, len(text)):
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            if depth == 0:
                at = i + 1
                break
        inner = text[at:].strip()
        if not inner.startswith("(") or not _one_group(inner):
            break
        text = inner[1:-1]
    return text


def _one_group(text: str) -> bool:
    """Whether `text` is one parenthesized group: its first `(` closes at its end."""
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


def _c_division(text: str) -> str:
    """`text` (a rebuilt Python expression) with C's `/` as `//` where no float takes part."""
    tree = ast.parse(text, mode="eval")
    if any(isinstance(node, ast.Constant) and isinstance(node.value, float) for node in ast.walk(tree)):
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            node.op = ast.FloorDiv()
    return ast.unparse(tree)


def _rebuilt(text: str, passed: dict[str, str]) -> str | None:
    """`text` (a launch's argument) with each name of a tensor the launch passes (`passed`: the
    caller's name -> the parameter) as the parameter, where it is made only of numbers and their
    sizes; else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not all(_a_size(node, passed) for node in ast.walk(tree)):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = passed[node.id]
    return ast.unparse(tree)


def _a_size(node: ast.AST, passed: dict[str, str]) -> bool:
    """Whether `node` may be part of a number or of a size of a tensor of `passed` (`_rebuilt`)."""
    if isinstance(node, ast.Name):
        return node.id in passed
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.Attribute):
        return node.attr in _SIZES and isinstance(node.value, ast.Name)
    if isinstance(node, ast.Call):
        return not node.keywords and isinstance(node.func, ast.Attribute)
    if isinstance(node, ast.Subscript):  # `x.shape[1]`, not an element `x[0]`
        return isinstance(node.value, ast.Attribute)
    return isinstance(node, _ARITHMETIC)


class ScaffoldError(Exception):
    """A generated file that does not parse (a porter bug): it is not written."""


def _checked(name: str, text: str) -> bytes:
    """The file's bytes, once CPython compiles them: its parser alone (`ast.parse`) accepts what
    the compiler refuses at import (a parameter named twice, a misplaced `__future__` import)."""
    try:
        compile(text, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ScaffoldError(f"{name}: porter generated a file that does not parse ({exc}); not written") from None
    return text.encode("utf-8")


def _create(folder: Path, name: str, data: bytes) -> bool:
    """Write a new file `folder/name`, whole or not at all; False when the name is taken
    (by a file, a folder or a link, dangling or not: nothing is written through a link)."""
    fd, tmp = temporary(folder, name)  # `.NAME.PID.XXXX.porter-tmp`: a killed run's is swept by the next
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        try:
            os.link(tmp, folder / name)  # fails on any existing name; never follows a link
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            # a file system without hard links: create the name exclusively, then fill it
            try:
                out = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
            except FileExistsError:
                return False
            with os.fdopen(out, "wb") as fh:
                fh.write(data)
        return True
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _params_renamed(k: Kernel, n: str) -> Kernel:
    """`k` with each parameter (or local) that a generated file would bind over a name it uses
    renamed (a trailing underscore) in its parameters and its source: a Triton kernel's `torch`
    made `make_inputs` say `torch = 256` before `torch.randn(...)`, `device` replaced
    make_inputs's own argument, `wrap_nki` hid torch_neuronx's in the NKI wrapper."""
    names = [p.split(":")[0].strip() for p in k.params]
    # Python reads a name in NFKC (`ｘ` is `x`), and so does the translation (`ast`): a new name
    # is made from that form, or a fullwidth pointer was typed `float` (its kind was looked up
    # under the name as written, which the translation never saw)
    taken = {unicodedata.normalize("NFKC", p) for p in names}
    # and its locals, which the reference keeps: `torch = tl.load(...)` made it call `torch.exp`
    # on a tensor (seventeenth read)
    local = _locals(k.source) - taken
    taken |= local
    renames: dict[str, str] = {}
    for p in names:
        if safe_name(p) == p and not _clashes(p, n):
            continue
        renames[p] = _unused(unicodedata.normalize("NFKC", p), taken)
    for name in sorted(local & _BOUND):
        renames[name] = _unused(name, taken)
    if not renames:
        return k
    params = [
        renames.get(p.split(":")[0].strip(), p.split(":")[0].strip()) + p[len(p.split(":")[0]) :] for p in k.params
    ]
    return replace(k, params=params, source=_renamed(k.source, renames))


def _locals(source: str) -> set[str]:
    """The names a function's source binds (as Python reads them: NFKC)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _renamed(source: str, renames: dict[str, str]) -> str:
    """`source` with the names in `renames` renamed where they are names, not attributes
    (`x.torch`) or a call's keywords (`f(torch=1)`)."""
    import io
    import tokenize

    # the lines tokenize reads (ended by \n only): str.splitlines also ends one at a form feed,
    # \v, \x1c-\x1e, \x85 or U+2028/9, and a rename in a kernel holding one (in a comment)
    # landed on another line
    lines = io.StringIO(source).readlines()
    renames = {unicodedata.normalize("NFKC", old): new for old, new in renames.items()}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    edits = []
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME or unicodedata.normalize("NFKC", tok.string) not in renames:
            continue
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if before == "." or (after == "=" and before in ("(", ",")):
            continue
        edits.append(tok)
    for tok in reversed(edits):
        (row, col), (_, end) = tok.start, tok.end
        line = lines[row - 1]
        lines[row - 1] = line[:col] + renames[unicodedata.normalize("NFKC", tok.string)] + line[end:]
    return "".join(lines)


def write_scaffolds(
    inv: Inventory,
    out_dir: Path,
    target: str,
    kept: list[Path] | None = None,
    passed: list[str] | None = None,
    limit: float | None = DEFAULT_FILE_TIMEOUT,
    holds: dict[Path, bool | None] | None = None,
) -> list[Path]:
    """Write each kernel's files into `out_dir`; the paths written. A name that is taken
    (a file, a folder or a link, even a dangling one) is never written: it goes into `kept`,
    and into `holds` with whether it holds what porter would write (`_holds`).
    Each kernel's files are made in a process of their own for at most `limit` seconds: a
    kernel whose source stalls or overflows the parser goes into `passed` (a note), unwritten."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    kernels = list(_scaffolded(inv.kernels, passed))
    for k, n in zip(kernels, _file_names(kernels), strict=True):
        try:
            checked = bounded(_kernel_files, k, n, target, limit=limit)
        except Failed as exc:
            if passed is not None:
                passed.append(f"{k.where}: {k.name}: no scaffold written: {exc}")
            continue
        if isinstance(checked, ScaffoldError):
            raise checked
        for name, data in checked.items():
            if _create(out_dir, name, data):
                written.append(out_dir / name)
            elif kept is not None:
                kept.append(out_dir / name)
                if holds is not None:
                    holds[out_dir / name] = _holds(out_dir / name, data)
    return written


def unlisted_scaffolds(inv: Inventory, out_dir: Path) -> list[Path]:
    """The op files in `out_dir` porter scaffolded (their first line says so) for a kernel `inv` no
    longer lists: after a kernel was renamed or removed, its old files were kept and said nowhere
    (twenty-seventh read). They are the user's: said, never removed."""
    names = set(_file_names(list(_scaffolded(inv.kernels, None))))
    return [
        path
        for path in sorted(out_dir.glob("*_op.py"))
        if path.name.removesuffix("_op.py") not in names and _porter_op(path)
    ]


def _porter_op(path: Path) -> bool:
    """Whether `path` is a plain file whose first line is that of an op file porter writes."""
    if path.is_symlink():  # (never read through a link)
        return False
    try:
        head = read_regular(path, 1 << 20).split(b"\n", 1)[0]
    except Unreadable:
        return False
    return head.startswith(b'"""Reference op for ') and head.endswith(b", scaffolded by porter.")


def _holds(path: Path, data: bytes) -> bool | None:
    """Whether the kept file `path` holds `data`, what porter writes now (None: a link, or no plain
    file porter reads): rerun after a kernel changed, every kept file was said alike, one that no
    longer fits its kernel as one that is porter's own (twenty-sixth read)."""
    if path.is_symlink():  # (never read through a link, as never written through one)
        return None
    try:
        return read_regular(path, len(data)) == data
    except Unreadable as exc:
        return False if too_large(exc.reason) else None


def _scaffolded(kernels: list[Kernel], passed: list[str] | None) -> Iterator[Kernel]:
    """The kernels that get a scaffold: not an extension (its ops are listed one by one from its
    sources), nor a Triton helper (its code runs inside the kernels that call it: a note says so)."""
    for k in kernels:
        if k.helper_of and passed is not None:
            passed.append(f"{k.where}: {k.name}: no scaffold written: a @triton.jit helper of {', '.join(k.helper_of)}")
        elif k.kind != "cuda-extension" and not k.helper_of:
            yield k


def _file_names(kernels: list[Kernel]) -> list[str]:
    """Each kernel's `_free_name`, those already a Python name given theirs first: `a.b`, `a-b`
    and `a_b` (three `load_inline` modules) were numbered in order, and `a_b` was `a_b__`, its
    files named for none of the three (twenty-sixth read)."""
    seen: set[str] = set()
    own = {id(k): _free_name(k, seen) for k in kernels if safe_name(k.name) == k.name}
    return [own[id(k)] if id(k) in own else _free_name(k, seen) for k in kernels]


def _free_name(k: Kernel, seen: set[str]) -> str:
    """The name of kernel `k`'s files, none of `seen`'s (casefolded), and added to them."""
    n = safe_name(k.name)
    if n.startswith("test"):
        # pytest collects `test_*.py` and every function named `test*` in a test module:
        # kernel `test_a` made `test_a_op.py` (a test module, the name kernel `a_op`'s own
        # test needs) and `test_a_reference`, imported by its test, a test without fixtures
        n = "k_" + n
    # two kernels whose names differ only in what a name cannot hold, or only in case
    # (`Scale`, `scale`: on a case-insensitive file system, macOS's and Windows' default,
    # `scale_op.py` was `Scale_op.py`, "kept", and the second kernel got no files)
    # nor an op another kernel's files register (kernel `a`'s NKI op is `a_nki`, kernel `a_nki`'s
    # reference op too: torch took the second in place of the first), nor an attribute of torch's
    # op namespace (`torch.ops.porter_kernels.name` is the namespace's name: the op module of a
    # kernel `name` failed at import) (seventeenth read)
    while any(op.casefold() in seen for op in _ops_of(n)) or n in _NAMESPACE_ATTRS:
        n += "_"
    seen.update(op.casefold() for op in _ops_of(n))
    return n


def _ops_of(n: str) -> tuple[str, ...]:
    """The names of the ops the files of kernel `n` register (the first is their file names' stem)."""
    return (n, n + "_nki", n + "_pallas")


def _kernel_files(k: Kernel, n: str, target: str) -> dict[str, bytes] | ScaffoldError:
    """The three files of kernel `k` (named `n`), each checked to parse (or why one does not)."""
    if k.kind == "triton":
        k = _params_renamed(k, n)
    tr = translate(k.source, k.name) if k.kind == "triton" else None
    reason = why_not(k.source, k.name) if k.kind == "triton" and tr is None else None
    sig = _signature(k, tr, n)
    files = {
        f"{n}_op.py": _op_source(k, n, tr, reason, sig),
        f"{n}_{target}.py": _kernel_source(target, k, n, sig),
        # the test carries its target, as the target's module does: a second target's scaffold
        # in the same folder kept the first target's test (nineteenth read's leftover); and ends
        # in `_parity`: as `test_K_TARGET.py`, the glob `*_TARGET.py` of the target's modules took
        # the tests too (twentieth read's leftover)
        f"test_{n}_{target}_parity.py": _test_source(target, k, n, sig, tr),
    }
    try:
        return {name: _checked(name, text) for name, text in files.items()}
    except ScaffoldError as exc:
        return exc
