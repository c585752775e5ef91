"""Contract 6 (bounded work): the byte scans that read every file of a project (the project
index of `rewrite` and `lint`, and `porter backends`) take time linear in the file, whatever
it holds. Each of these ran past any per-file limit, because the index is a project's, not a
file's (adversarial read 14)."""

from __future__ import annotations

import time

from porter.analysis.cuda_only_index import from_statements
from porter.analysis.device_backends import class_statements, classes
from porter.analysis.native_ops import registrations

LIMIT_S = 10  # each input below took minutes to hours before (measured: see each test)


def _quick(fn, source: bytes) -> object:
    began = time.monotonic()
    out = fn(source)
    took = time.monotonic() - began
    assert took < LIMIT_S, f"{fn.__name__} took {took:.1f} s on {len(source)} bytes"
    return out


def test_class_statements_whose_brackets_never_close():
    """`class CudaA(` on 40,000 lines: `\\([^)]*\\)` searched to the end of the file from each
    (5,000 lines 3.4 s, 20,000 54 s: a lint with --file-timeout 10 took 66 CPU s)."""
    assert _quick(list, b"".join(class_statements(b"class CudaA(\n" * 40000))) == []  # type: ignore[arg-type]
    assert _quick(lambda s: classes("m.py", s), b"class CudaA(\n" * 40000) == []
    found = list(class_statements(b"class CUDA_A(Base,\n    Other):\n    pass\nclass CPU_A:\n"))
    assert [(n, b) for _, n, b in found] == [(b"CUDA_A", b"Base,\n    Other"), (b"CPU_A", None)]


def test_from_imports_whose_brackets_never_close():
    """`from a import (` on 40,000 lines (5,000 lines cost 1.2 s)."""
    assert len(_quick(lambda s: list(from_statements(s)), b"from a import (\n" * 40000)) == 40000  # type: ignore[arg-type]


def test_library_blocks_of_a_hostile_cpp_source():
    """A C++ source the index reads for its TORCH_LIBRARY blocks: 2,000 spaces after
    `TORCH_LIBRARY(` cost 15 s (cubic: 20,000 did not end), 1,000 unclosed blocks 1 s."""
    assert _quick(registrations, b"TORCH_LIBRARY(" + b" " * 200000) == []
    assert _quick(registrations, b"TORCH_LIBRARY(a, m) {\n" * 100000) == []
    assert len(_quick(registrations, b"TORCH_LIBRARY(a, m) {\n" + b'm.def("x",\n' * 100000)) == 99999  # type: ignore[arg-type]
    ok = b'TORCH_LIBRARY_IMPL(_C, CUDA, m) {\n  m.impl("mla", &mla);\n}\nTORCH_LIBRARY(_C, ops) { ops.def("f(Tensor x) -> Tensor", &f); }\n'
    assert registrations(ok) == [("_C", "mla", "CUDA"), ("_C", "f", "any")]
