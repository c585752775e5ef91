"""The twenty-fifth read's scaffold leftovers, taken by the twenty-sixth read's sleft (issue 24): each
test failed on 0073c76."""

from __future__ import annotations

from porter.kernels.inventory import scan

DRIVER = (
    "#include <cuda.h>\n"
    'extern "C" __global__ void scale(float* x, int n) {}\n'
    'extern "C" __global__ void shift(float* x, int n) {}\n'
    "CUfunction lookup(CUmodule m, const char* name);\n"
    "void by_name(CUmodule m, float* x, int n, const char* which) {\n"
    "  CUfunction g = lookup(m, which);\n  void* args[] = {&x, &n};\n"
    "  cuLaunchKernel(g, 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n"
    "  cuLaunchKernel(table[n], 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n}\n"
    "void by_library(CUlibrary lib, float* x, int n) {\n"
    '  CUkernel k;\n  cuLibraryGetKernel(&k, lib, "shift");\n  void* args[] = {&x, &n};\n'
    "  cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n}\n"
)


def test_a_driver_launch_of_a_function_no_lookup_of_the_file_names_is_said(tmp_path):
    # `cuLaunchKernel(g, ...)` of a `CUfunction` looked up by another function (or a name built at run
    # time), and of `table[n]`, were no kernel's and said nowhere; `cuLibraryGetKernel(&k, lib, "shift")`
    # names its kernel as `cuModuleGetFunction` does, and was not read
    (tmp_path / "a.cu").write_text(DRIVER)
    inv = scan(tmp_path, limit=None)
    unnamed = (
        "a `CUfunction` no `cuModuleGetFunction` or `cuLibraryGetKernel` of this file names by a literal (looked "
        "up through another function or file, or by a name built at run time): the kernel it runs is not read"
    )
    assert inv.problems == [
        f"a.cu:8: `cuLaunchKernel` launches `g`, {unnamed}",
        f"a.cu:9: `cuLaunchKernel` launches `table[n]`, {unnamed}",
    ]
    said = {k.name: k.unresolved for k in inv.kernels}
    assert said["scale"] == []
    assert said["shift"] == [
        "launched through `cuLaunchKernel` (a `CUfunction` of a module loaded at run time) at a.cu:15, whose "
        "arguments (an array of their addresses) porter does not read"
    ]
