"""The kernels a project's Python files register for its ops with `torch.library`.

An op may get its kernels in Python, a CUDA one only (optimum-quanto 0.2.7's `gemm_f16i4_awq`: `torch.library.define`
then `@torch.library.impl("quanto::gemm_f16i4_awq", ["CUDA"])`: unread, `if a.is_cuda:` around its call was rewritten
to the target's check, DEV004's "safe" fix, where GUARD001 is due), and an op the C++/CUDA sources give a CUDA kernel
only may get another there:
`@torch.library.impl("myops::a", "cpu")`, `@torch.library.register_kernel("myops::a", "cpu")`,
`lib = torch.library.Library("myops", "IMPL")` then `lib.impl("a", a_cpu, "CPU")` (optimum-quanto registers its
ops' `"default"` kernels so). Unread, such an op was said to have "a CUDA kernel only ... for no other device"
(GUARD001) while a CPU tensor, or with `"default"` every device's, runs it (thirty-second read). Read with `ast`,
without running anything; a key porter cannot read (a name, an expression) is kept as `UNREAD`, another device's
to the caller, so that no op is said CUDA-only on a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from porter.analysis.program import called_name

# what a Python file must contain to register a kernel so (`torch.library`, `from torch import library`, `Library(`)
TOKEN = b"library"
UNREAD = "?"  # a key given by what is not a string
# the callee's name, and where its key goes: (position, keyword, the key when none is given)
# (an op `custom_op`/`triton_op` makes is given its function as every device's kernel where no `device_types` says
# otherwise: read as none, `register_kernel("ns::op", "cuda")` beside it made such an op CUDA-only)
_QUALIFIED = {
    "impl": (1, "types", None),
    "register_kernel": (1, "device_types", "default"),
    "custom_op": (-1, "device_types", "default"),
    "triton_op": (-1, "device_types", "default"),
}
_ON_LIBRARY = (2, "dispatch_key")  # `lib.impl("op", fn, "CPU")`, `torch.library.impl(lib, "op", "CPU")`
# a device type's name as a key (`"cuda"`, `"meta"`): the C++ reader's keys are spelled so
_KEY_OF_DEVICE = {"cuda": "CUDA", "meta": "Meta"}
_OP = re.compile(r"\w+(?:\.\w+)?")  # (an op and its overload, as the C++ reader reads them)


def registered_kernels(files: Iterable[tuple[str, bytes]]) -> list[tuple[str, str, str, str]]:
    """(file, namespace, op, key) for each kernel the Python `files` (name, bytes) register; an overload is its own op
    (`a.out`)."""
    out: list[tuple[str, str, str, str]] = []
    for name, source in files:
        if TOKEN not in source.lower():
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # (lint says it)
        libraries = _library_variables(tree)
        for call in ast.walk(tree):
            if isinstance(call, ast.Call):
                out.extend((name, *kernel) for kernel in _kernels_of_call(call, libraries))
    return out


def _library_variables(tree: ast.AST) -> dict[str, tuple[str, str]]:
    """name -> (namespace, key) of each `NAME = [torch.library.]Library("ns", kind[, key])` of the file: its `impl`s
    given no key register for the library's (torch's `Library.impl`)."""
    out: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            ns = _literal_str(node.value.args[0]) if called_name(node.value) == "Library" and node.value.args else None
            if ns is not None:
                out[ast.unparse(node.targets[0])] = (ns, _given_keys(node.value, (2, "dispatch_key", ""))[0])
    return out


def _kernels_of_call(call: ast.Call, libraries: dict[str, tuple[str, str]]) -> Iterator[tuple[str, str, str]]:
    name = called_name(call)
    if name not in _QUALIFIED or not call.args:
        return
    first = _literal_str(call.args[0])
    if first is not None and "::" in first:
        ns, _, op = first.partition("::")
        where = _QUALIFIED[name]
    elif isinstance(call.func, ast.Attribute) and ast.unparse(call.func.value) in libraries and first is not None:
        (ns, key), op = libraries[ast.unparse(call.func.value)], first
        where = (*_ON_LIBRARY, key)
    elif name == "impl" and ast.unparse(call.args[0]) in libraries and len(call.args) > 1:
        op = _literal_str(call.args[1]) or ""
        ns, key = libraries[ast.unparse(call.args[0])]
        where = (*_ON_LIBRARY, key)
    else:
        return
    op = op.strip().removesuffix(".default")
    if _OP.fullmatch(op):
        yield from ((ns.strip(), op, key) for key in _given_keys(call, where))


def _given_keys(call: ast.Call, where: tuple[int, str, str | None]) -> list[str]:
    at, keyword, default = where
    given = (
        call.args[at] if 0 <= at < len(call.args) else next((k.value for k in call.keywords if k.arg == keyword), None)
    )
    if given is None or (isinstance(given, ast.Constant) and given.value is None):
        return [default] if default is not None else [UNREAD]
    items = given.elts if isinstance(given, (ast.Tuple, ast.List, ast.Set)) else [given]
    keys = [_literal_str(item) for item in items]
    return [UNREAD if key is None else _KEY_OF_DEVICE.get(key, key) for key in keys]


def _literal_str(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
