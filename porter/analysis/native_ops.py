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

import re
from collections.abc import Iterable
from pathlib import Path

from porter.core.reading import read_regular

# what a C++ or CUDA source must contain to register an operator
TOKEN = b"TORCH_LIBRARY"
# the C++ and CUDA sources read (discovery notes these beside the Python files)
SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")

# `TORCH_LIBRARY_IMPL(ns, CUDA, m) {`, `STABLE_TORCH_LIBRARY_FRAGMENT(_C, ops) {`,
# `TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {`
_BLOCK = re.compile(
    rb"\b(?:STABLE_)?TORCH_LIBRARY(_IMPL)?(?:_FRAGMENT|_EXPAND)?(?:_EXPAND)?\s*\(\s*([\w()\s,]*?)\s*,\s*(?:(\w+)\s*,\s*)?(\w+)\s*\)\s*\{"
)
_CALL = re.compile(rb"\b(\w+)\s*\.\s*(impl|def)\s*\(")
# the string literals that open a call's arguments (a schema may be several, side by side)
_STRINGS = re.compile(rb'\s*(?:"(?:[^"\\\n]|\\.)*"\s*)+')
_OP = re.compile(rb'"\s*(\w+)')
_MACRO = re.compile(rb"[A-Z][A-Z0-9_]+")
# a dispatch key: `torch::kCPU`, `c10::DispatchKey::CUDA`
_KEY = re.compile(rb"(?:torch::|c10::|at::)?(?:DispatchKey::|k)([A-Z]\w*)")


def registrations(source: bytes) -> list[tuple[str | None, str, str]]:
    """(namespace or None for a macro, op, dispatch key) for each implementation `source`
    registers; the key "any" for an implementation without one (`m.def(schema, fn)`,
    `m.impl("op", fn)` in a library block: every device runs it)."""
    if TOKEN not in source:
        return []
    out: list[tuple[str | None, str, str]] = []
    for block in _BLOCK.finditer(source):
        impl, ns_text, key_text, var = block.group(1), block.group(2), block.group(3), block.group(4)
        # a macro (`TORCH_EXTENSION_NAME`, `CONCAT(...)`) names no namespace known here
        ns = ns_text.decode() if re.fullmatch(rb"\w+", ns_text) and not _MACRO.fullmatch(ns_text) else None
        body = _body(source, block.end(), b"{", b"}")
        for call in _CALL.finditer(body):
            if call.group(1) != var:
                continue
            args = _body(body, call.end(), b"(", b")")
            strings = _STRINGS.match(args)
            op = _OP.match(strings.group(0).lstrip()) if strings else None
            if strings is None or op is None:
                continue
            rest = args[strings.end() :].strip().lstrip(b",").strip()
            if impl is not None and key_text is not None:
                if call.group(2) == b"impl":
                    out.append((ns, op.group(1).decode(), key_text.decode()))
                continue
            if not rest:
                continue  # `m.def("schema")`: no implementation
            out.append((ns, op.group(1).decode(), _key_name(rest)))
    return out


def _key_name(text: bytes) -> str:
    match = _KEY.match(text)
    return match.group(1).decode() if match else "any"


def _body(source: bytes, start: int, open_: bytes, close: bytes) -> bytes:
    """The text from `start` (after an opening bracket) to its matching closing one."""
    depth = 1
    at = start
    while depth:
        opens, closes = source.find(open_, at), source.find(close, at)
        if closes < 0:
            return source[start:]
        if 0 <= opens < closes:
            depth, at = depth + 1, opens + 1
        else:
            depth, at = depth - 1, closes + 1
    return source[start : at - 1]


def cuda_only_ops(sources: Iterable[tuple[str, bytes]]) -> dict[str, dict[str, str]]:
    """namespace -> {op: why} for each op the sources give a CUDA kernel and no other."""
    keys: dict[tuple[str | None, str], set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for name, source in sources:
        for ns, op, key in registrations(source):
            keys.setdefault((ns, op), set()).add(key)
            if ns is not None and key == "CUDA":
                where.setdefault((ns, op), name)
    out: dict[str, dict[str, str]] = {}
    for (ns, op), at in where.items():
        found = keys[(ns, op)] | keys.get((None, op), set())
        if found - {"CUDA", "AutogradCUDA", "Meta"}:
            continue
        out.setdefault(ns, {})[op] = (
            f"the project's op `{ns}::{op}` has a CUDA kernel only: registered for CUDA in {at}, for no other device"
        )
    return out


def read(names: Iterable[str]) -> list[tuple[str, bytes]]:
    """(name, bytes) of each of the C++/CUDA sources `names` (paths from the working folder)
    that registers ops; one that cannot be read is passed over."""
    out = []
    for name in names:
        if not name.endswith(SUFFIXES):
            continue
        try:
            source = read_regular(Path(name))
        except (OSError, ValueError):
            continue
        if TOKEN in source:
            out.append((name, source))
    return out
