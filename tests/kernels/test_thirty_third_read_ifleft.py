"""The thirty-third read of the registration readers, second wave (ifleft, issue 24): a `TORCH_LIBRARY_IMPL` block, or
a function it registers through, whose braces differ across the branches of an `#if` group porter cannot decide. Each
case failed on 10f79650 but the controls (decided groups: `#ifndef USE_ROCM`, `#if 0`), which held there too.

`cpp -P` is the oracle (docs/reads/51-ifleft-tools/block_if2.py.txt): with `-DX`, `-DY`, both and neither, each
build's CPU kernels; an op is CUDA-only only where it is so in every build (an undecided `#if` may be either, and
torch dispatches a CPU tensor to the kernel of the build that has one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analysis import native_ops
from tests.growth import linear_steps

HEAD = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); m.impl("d", &d_cuda); }
"""
CPU = b"TORCH_LIBRARY_IMPL(myops, CPU, m) {"
REG = b"void reg(torch::Library& m) {"

CASES = {
    # `}` in both branches of `#ifdef X` / `#else`: the first ended the body, `a`'s CPU kernel was none
    "block_ifdef_else": (
        CPU + b'\n#ifdef X\n m.impl("b", &b_cpu); }\n#else\n m.impl("a", &a_cpu); }\n#endif\n',
        {"c", "d"},
    ),
    "helper_ifdef_else": (
        REG + b'\n#ifdef X\n m.impl("b", &b_cpu); }\n#else\n m.impl("a", &a_cpu); }\n#endif\n' + CPU + b" reg(m); }\n",
        {"c", "d"},
    ),
    "block_elif": (
        CPU + b'\n#ifdef X\n m.impl("b", &b_cpu); }\n#elif defined(Y)\n m.impl("d", &d_cpu); }\n'
        b'#else\n m.impl("a", &a_cpu); }\n#endif\n',
        {"c"},
    ),
    "block_nested": (
        CPU + b'\n#ifdef X\n#ifdef Y\n m.impl("d", &d_cpu); }\n#else\n m.impl("b", &b_cpu); }\n#endif\n'
        b'#else\n m.impl("a", &a_cpu); }\n#endif\n',
        {"c"},
    ),
    # a `{` opened in each branch: the function never closed, and was read as none (no verdict for `b`, `c`, `d`)
    "helper_opened_in_each": (
        REG + b'\n#ifdef X\n if (x) {\n#else\n if (y) {\n#endif\n m.impl("a", &a_cpu); }\n}\n' + CPU + b" reg(m); }\n",
        {"b", "c", "d"},
    ),
    # no `#else`: with X undefined the block goes on to `d`'s CPU kernel
    "block_ifdef_no_else": (
        CPU + b'\n m.impl("a", &a_cpu);\n#ifdef X\n }\n#endif\n m.impl("d", &d_cpu); }\n',
        {"b", "c"},
    ),
    "block_elif_no_else": (
        CPU + b'\n#ifdef X\n m.impl("b", &b_cpu); }\n#elif defined(Y)\n m.impl("a", &a_cpu); }\n#endif\n'
        b' m.impl("d", &d_cpu); }\n',
        {"c"},
    ),
    # controls, groups porter decides: only the compiled branch's braces count
    "block_rocm_decided": (
        CPU + b'\n#ifndef USE_ROCM\n m.impl("a", &a_cpu); }\n#else\n m.impl("b", &b_cpu); }\n#endif\n',
        {"b", "c", "d"},
    ),
    "block_if0_else": (
        CPU + b'\n#if 0\n m.impl("b", &b_cpu); }\n#else\n m.impl("a", &a_cpu); }\n#endif\n',
        {"b", "c", "d"},
    ),
    "block_rocm_no_else": (
        CPU + b'\n m.impl("a", &a_cpu);\n#ifndef USE_ROCM\n }\n#endif\n m.impl("d", &d_cpu); }\n',
        {"b", "c", "d"},
    ),
    "block_rocm_only_no_else": (
        CPU + b'\n m.impl("a", &a_cpu);\n#ifdef USE_ROCM\n }\n#endif\n m.impl("d", &d_cpu); }\n',
        {"b", "c"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_branch_of_an_undecided_if_keeps_the_kernels_its_braces_close_over(name: str) -> None:
    source, cuda_only = CASES[name]
    assert set(native_ops.cuda_only_ops([("a.cpp", HEAD + source)]).get("myops", {})) == cuda_only


def test_the_branch_brace_rule_is_linear() -> None:
    """16,000 `#ifdef X` / `#else` groups, each closing a block in both branches, and 16,000 groups in one block whose
    branches open a brace each: one pass over the directives, each span's braces blanked once (bytecodes counted)."""

    def closed_in_both(n: int) -> bytes:
        return HEAD + (CPU + b'\n#ifdef X\n m.impl("b", &b_cpu); }\n#else\n m.impl("a", &a_cpu); }\n#endif\n') * n

    def many_groups(n: int) -> bytes:
        return HEAD + CPU + b"\n" + b'#ifdef X\n { m.impl("b", &b_cpu);\n#else\n {\n#endif\n }\n' * n + b"}\n"

    for make, expected in ((closed_in_both, {"c", "d"}), (many_groups, {"a", "c", "d"})):

        def blank(code: bytes) -> bytes:
            return native_ops._last_branch_braces(code, code, native_ops._compiled_at(code, Path("a.cpp")))

        blanked = linear_steps(blank, make, 16000)
        assert blanked.count(b"{") == blanked.count(b"}")  # (each group's braces read in its `#else` branch alone)
        assert set(native_ops.cuda_only_ops([("a.cpp", make(16000))]).get("myops", {})) == expected
