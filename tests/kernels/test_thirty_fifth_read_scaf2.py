"""The thirty-fifth read's second-wave leftover helper on the scaffold readers (scaf2, issue 24): each test failed on
16a1dae1. The verdicts are torch 2.9's and the compiler's (`cpp -P` with the macro defined and undefined, libclang
18.1.1): docs/reads/53-scaf2-tools."""

from __future__ import annotations

from porter.analysis import python_ops
from porter.kernels.inventory import scan

from tests.growth import linear_steps


def _loop_of(n: int) -> list[tuple[str, bytes]]:
    """A module registering a CPU kernel for each of `n` names in one loop, under an `if` on the name."""
    items = ", ".join(f'"op{i}"' for i in range(n))
    source = (
        'import torch\nDEF = torch.library.Library("myops", "DEF")\n'
        f'for op in ({items}):\n    if op != "op1":\n        DEF.impl(op, lambda x: x, "CPU")\n'
    )
    return [("m.py", source.encode())]


def test_a_loop_of_many_names_is_read_in_steps_linear_in_them():
    # (16a1dae1: each item read the loop's N values again, to find which library `op` stands for: 0.21 s at 1,000
    # names, 2.34 s at 4,000; counted: x5.0 the bytecodes from 80 to 320 names, x9.0 from 320 to 1,280; now x3.3, x3.8)
    kernels = linear_steps(python_ops.registered_kernels, _loop_of, 1280, limit=6)
    assert len(kernels) == 1279 and ("myops", "op1", "cpu") not in kernels


# each kernel's namespace after an `#if` group, as `cpp -P` and libclang 18.1.1 read it with nothing defined (and with
# `X` defined: `b` for the first, `a` and `b` for the others, the same): docs/reads/53-scaf2-tools/ns_oracle.py
AFTER_A_GROUP = {
    "namespace a {\n#ifdef X\n}\nnamespace b {\n#endif\n": "a",  # (no `#else`: an empty one where `X` is undefined)
    "namespace a {\n#if 0\n}\nnamespace b {\n#endif\n": "a",  # (a branch no build takes)
    "namespace a {\n#if 1\n}\nnamespace b {\n#else\n#endif\n": "b",  # (the branch every build takes, not the last)
    "namespace a {\n#ifdef X\n}\nnamespace b {\n#else\n#endif\n": "a",  # (the control: the `#else` goes on)
    # (`#if 1` in an undecided branch: taken there; nsfuzz.py seed 1413000 found it in the fix as first written)
    "namespace a {\n#ifdef X\n#else\n#if 1\n}\nnamespace b {\n#endif\n#endif\n": "b",
}
LAUNCH = "__global__ void k(float* x) { x[0] = 1; }\n}\nvoid go(float* x) { SPACE::k<<<1, 1>>>(x); }\n"


def test_a_kernel_after_an_if_group_is_in_the_namespace_the_compiler_reads(tmp_path):
    # (16a1dae1: `porter kernels` read the `#if` branch's braces on after the group whatever the build takes: `k` was
    # listed in `b` and its launch `a::k<<<...>>>` attached to no kernel, or in `a::b` after `#if 1`; the registration
    # readers, one rule now (`if_groups.going_on`), read these braces as the compiler)
    for i, (head, space) in enumerate(AFTER_A_GROUP.items()):
        (tmp_path / f"k{i}.cu").write_text(head + LAUNCH.replace("SPACE", space))
    kernels = sorted(scan(tmp_path).kernels, key=lambda k: k.path)
    assert [(k.namespace, [c.line for c in k.calls]) for k in kernels] == [
        (space, [head.count("\n") + 3]) for head, space in AFTER_A_GROUP.items()
    ]


def test_a_namespace_left_open_in_its_branch_holds_that_branch_s_kernel_only(tmp_path):
    # (the control, as on 16a1dae1: `hip` in the `USE_ROCM` build, `cu` in the other, as `cpp -P` and libclang)
    (tmp_path / "k.cu").write_text(
        "#ifdef WITH_HIP\nnamespace hip {\n__global__ void k1(float* x) {}\n#else\nnamespace cu {\n"
        "__global__ void k2(float* x) {}\n#endif\n}\n"
    )
    assert [(k.name, k.namespace) for k in scan(tmp_path).kernels] == [("k1", "hip"), ("k2", "cu")]


def test_a_cpp_only_project_reads_its_key_header_in_the_setup_s_include_dirs(tmp_path):
    # (16a1dae1: with no `.cu` file in the tree no `-I` folder was read: `CppExtension(..., include_dirs=["inc"])`'s
    # `inc/keys.h` `#define OP_KEY CPU` gave "not read: `OP_KEY`, a macro this file does not define"; `cpp -P -Iinc`
    # reads `TORCH_LIBRARY_IMPL(myops, CPU, m)`)
    (tmp_path / "csrc").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "keys.h").write_text("#pragma once\n#define OP_KEY CPU\n")
    (tmp_path / "csrc" / "k.cpp").write_text(
        '#include <torch/library.h>\n#include "keys.h"\nat::Tensor a_any(const at::Tensor& x) { return x; }\n'
        'TORCH_LIBRARY(myops, m) { m.def("a(Tensor x) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", a_any); }\n'
        'TORCH_LIBRARY_IMPL(myops, OP_KEY, m) { m.impl("a", a_any); }\n'
    )
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CppExtension\n"
        'setup(name="q", ext_modules=[CppExtension("q._C", ["csrc/k.cpp"], include_dirs=["inc"])])\n'
    )
    assert sorted(r.key for r in scan(tmp_path).registered if r.op == "a") == ["CPU", "CUDA"]
