"""The twenty-third read's leftover `__global__` spelled through a macro (issue 24): failed on e74fdb1."""

from __future__ import annotations

from pathlib import Path

from porter.kernels.inventory import scan

MACROS = "#pragma once\n#define LIB_GLOBAL __global__ static\n#define LIB_HOST_DEVICE __host__ __device__\n"
KERNELS = """#pragma once
#include <lib/detail/macros.hpp>
template <typename Op>
LIB_GLOBAL
void Kernel(typename Op::Params params) {
  Op op;
}

template <typename Op>
LIB_GLOBAL
#ifdef __CUDACC__
__launch_bounds__(Op::MaxThreads, 1)
#endif  // __CUDACC__
void device_kernel(typename Op::Params const params, int n) {
}
"""
SETUP = """from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
setup(name="x", ext_modules=[CUDAExtension("x", ["k.cu"], include_dirs=["inc"])])
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_kernels_declared_with_a_macro_of_global_are_listed(tmp_path):
    # cutlass declares its kernels `CUTLASS_GLOBAL void Kernel(` (`#define CUTLASS_GLOBAL __global__
    # static` in a header the kernels' header includes): `porter kernels` over its 664 headers listed
    # none, and said nothing; the file's own such macro was not read either
    _tree(
        tmp_path,
        {
            "setup.py": SETUP,
            "inc/lib/detail/macros.hpp": MACROS,
            "inc/lib/kernel/device_kernel.h": KERNELS,
            "k.cu": "#define MY_KERNEL __global__\nMY_KERNEL void scale(float* x, int n) { x[0] *= 2; }\n",
        },
    )
    got = {(k.name, k.path, k.line, tuple(k.params)) for k in scan(tmp_path).kernels if k.kind == "cuda"}
    assert got == {
        ("Kernel", "inc/lib/kernel/device_kernel.h", 4, ("typename Op::Params params",)),
        ("device_kernel", "inc/lib/kernel/device_kernel.h", 10, ("typename Op::Params const params", "int n")),
        ("scale", "k.cu", 2, ("float* x", "int n")),
    }


def test_a_macro_not_seen_defined_is_said(tmp_path):
    # the kernels' header without the header defining its macro (cutlass not in the tree): a note
    _tree(tmp_path, {"k.cu": "#include <cutlass/cutlass.h>\nCUTLASS_GLOBAL void gemm(float* x) {}\n"})
    inv = scan(tmp_path)
    assert not [k for k in inv.kernels if k.kind == "cuda"]
    assert any("k.cu:2" in p and "CUTLASS_GLOBAL" in p and "gemm is not listed" in p for p in inv.problems)


def test_a_macro_of_host_device_makes_no_kernel(tmp_path):
    # a macro of no `__global__` (`__host__ __device__`) makes no kernel, nor a note
    _tree(tmp_path, {"k.cu": "#define HD __host__ __device__\nHD void f(float* x) {}\n__global__ void k(int n) {}\n"})
    inv = scan(tmp_path)
    assert [k.name for k in inv.kernels if k.kind == "cuda"] == ["k"]
    assert not inv.problems


def test_a_macro_of_a_macro_of_global_is_read_at_its_use(tmp_path):
    # `#define B_GLOBAL A_GLOBAL`: the kernel is where B_GLOBAL is used, not at the `#define`
    _tree(tmp_path, {"k.cu": "#define A_GLOBAL __global__\n#define B_GLOBAL A_GLOBAL\nB_GLOBAL void k(float* x) {}\n"})
    inv = scan(tmp_path)
    assert [(k.name, k.line) for k in inv.kernels if k.kind == "cuda"] == [("k", 3)]
    assert not inv.problems


def test_a_function_like_macro_using_a_macro_of_global_is_said_not_listed_by_its_parameter(tmp_path):
    # `#define DEF(name) MY_GLOBAL void name(...)`: its parameter is no kernel; its kernels are said unlisted
    _tree(
        tmp_path, {"k.cu": "#define MY_GLOBAL __global__\n#define DEF(name) MY_GLOBAL void name(float* x) {}\nDEF(k)\n"}
    )
    inv = scan(tmp_path)
    assert not [k for k in inv.kernels if k.kind == "cuda"]
    assert any("k.cu:2: macro DEF" in p and "not listed" in p for p in inv.problems)
