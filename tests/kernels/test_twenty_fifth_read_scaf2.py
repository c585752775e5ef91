"""The twenty-fifth read's leftovers of the scaffold writers, second wave (issue 24, scaf2): each
test failed on 47d9d02."""

from __future__ import annotations


import pytest

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.helpers import port_files

BUILD = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    'setup(ext_modules=[CUDAExtension("pkg._C", sources=["pkg/csrc/k.cu"])])\n'
)
USE = (
    "import torch\n{imp}\n\n\ndef fwd(x):\n    return {ext}.fused(x)\n\n\n"
    "def model(x):\n    if x.is_cuda:\n        return fwd(x)\n    return x + 1\n"
)


def test_a_dotted_extension_import_is_named_in_the_from_imports_form(tmp_path, monkeypatch):
    # `import pkg._C` then `pkg._C.fused(x)` said ``uses `fwd` (uses `pkg._C` (...))``, where
    # `from pkg import _C` says ``uses `fwd` → `_C` (...)``: the same chain, two forms
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.py").write_text(BUILD)
    (tmp_path / "pkg" / "csrc").mkdir(parents=True)
    (tmp_path / "pkg" / "csrc" / "k.cu").write_text("__global__ void k(float* x, int n) {}\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "control.py").write_text(USE.format(imp="from pkg import _C", ext="_C"))
    (tmp_path / "pkg" / "dotted.py").write_text(USE.format(imp="import pkg._C", ext="pkg._C"))
    ported = port_files(tmp_path, "xla")
    why = "(`pkg._C`: a CUDA extension built by `CUDAExtension` in setup.py:3 from pkg/csrc/k.cu)"
    for name, used in (("control", "_C"), ("dotted", "pkg._C")):
        (finding,) = ported[f"pkg/{name}.py"][1]
        assert finding.code == "GUARD001"
        assert f"keeps CUDA-only code (uses `fwd` → `{used}` {why}) away" in finding.message, finding.message


HELPERS = "import triton\n\n\n@triton.jit\ndef gelu(x):\n    return x * 0.5\n"
ACT = (
    "import triton\nimport triton.language as tl\n\n{imp}\n\n\n@triton.jit\n"
    "def act(x_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, {mod}.gelu(tl.load(x_ptr + offs)))\n\n\n"
    "def go(x):\n    act[(1,)](x, 1, BLOCK=8)\n"
)


@pytest.mark.parametrize(
    ("imp", "mod", "helper"),
    [
        ("import pkg.helpers as H", "H", True),
        ("from pkg import helpers as H", "H", True),
        ("from . import helpers as H", "H", True),
        ("import helpers", "helpers", True),  # (the control: read before)
        ("import pkg.other as helpers", "helpers", False),  # `helpers` names another module here
    ],
)
def test_a_helper_called_through_its_module_imported_under_another_name_is_a_helper(tmp_path, imp, mod, helper):
    # `import pkg.helpers as H` then `H.gelu(x)` in a kernel: the call was matched by the module's
    # last name only, so `gelu` stayed a kernel of its own, scaffolded as an op no code runs
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "act.py").write_text(ACT.format(imp=imp, mod=mod))
    listed = {k.name: k for k in scan(tmp_path, limit=None).kernels}
    assert listed["gelu"].helper_of == (["act"] if helper else [])
    assert ("a helper of act" in listed["gelu"].detail) is helper
    assert "modules" not in listed["act"].to_dict()
    written = write_scaffolds(scan(tmp_path, limit=None), tmp_path / "out", "xla", limit=None)
    assert any("gelu" in p.name for p in written) is not helper, written


OPS = (
    "import triton\nimport triton.language as tl\n\n"
    + "".join(
        f"\n\n@triton.jit\ndef {n}(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n"
        for n in ("k_a", "k_b", "k_c", "k_d", "direct")
    )
    + '\n\nKERNELS = {"a": k_a, "b": k_b}\n'
)
LAUNCHES = (
    "from pkg.ops import KERNELS, direct, k_c\nfrom pkg import ops\n\n\nclass M:\n    def __init__(self):\n"
    "        self.launch = k_c[(1,)]\n        self.other = ops.k_d[(1,)]\n\n"
    "    def run(self, x, op):\n        KERNELS[op][(1,)](x, x.numel(), BLOCK=8)\n"
    "        self.launch(x, 1, BLOCK=8)\n        self.other(x, 1, BLOCK=8)\n        direct[(1,)](x, 1, BLOCK=8)\n"
)


def test_a_launch_from_an_imported_dict_or_kept_in_an_attribute_says_so(tmp_path):
    # `KERNELS[op][grid](x)` of `from pkg.ops import KERNELS`, and `self.other = ops.k_d[grid]`: the
    # dict was read in the launching file only, `ops.k_d[grid]` not at all; each kernel was listed
    # with no launch and its scaffold made up inputs, unsaid
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text(OPS)
    (tmp_path / "pkg" / "use.py").write_text(LAUNCHES)
    inv = scan(tmp_path, limit=None)
    said = {k.name: k.unresolved for k in inv.kernels}
    held = (
        "launched as `KERNELS[...][...](...)` at pkg/use.py:11, one of the kernels `KERNELS` (imported from"
        " pkg.ops) holds, picked at run time: its arguments are not read as this kernel's"
    )
    assert said["k_a"] == said["k_b"] == [held]
    kept = "at pkg/use.py:{}, not called there (passed on or kept: `functools.partial`, a variable)"
    assert said["k_c"] == ["launched as `k_c[...]` " + kept.format(7) + ": its arguments are not read as this kernel's"]
    assert said["k_d"] == [
        "launched as `ops.k_d[...]` " + kept.format(8) + ": its arguments are not read as this kernel's"
    ]
    assert said["direct"] == []  # the control: a launch porter reads
    test = next(
        p for p in write_scaffolds(inv, tmp_path / "out", "xla", limit=None) if p.name == "test_k_a_xla_parity.py"
    )
    assert f"# TODO(porter): {held.partition(': its')[0]}" in test.read_text()


KERNELS_CU = "__global__ void scale(float* x, int n) {}\n__global__ void shift(float* x, int n) {}\n"
HOST_CPP = (
    "#include <cuda.h>\n#include <cuda_runtime.h>\n__global__ void scale(float* x, int n);\n\n"
    "void run(float* x, int n) {\n  void* args[] = {&x, &n};\n"
    "  cudaLaunchKernel((void*)scale, dim3(1), dim3(64), args, 0, 0);\n}\n\n"
    "void run_driver(CUmodule mod, float* x, int n) {\n  CUfunction f;\n"
    '  cuModuleGetFunction(&f, mod, "shift");  // "scale" is not this one\n  void* args[] = {&x, &n};\n'
    "  cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, args, 0);\n  CUfunction g = lookup();\n"
    "  cuLaunchKernel(g, 1, 1, 1, 64, 1, 1, 0, 0, args, 0);\n}\n"
)


def test_an_api_launch_in_a_cpp_file_and_the_driver_api_s_say_so(tmp_path):
    # `cudaLaunchKernel((void*)scale, ...)` in a `.cpp` (only `.cu`/`.cuh` were read for it), and
    # `cuLaunchKernel(f, ...)` of `cuModuleGetFunction(&f, mod, "shift")`: each kernel was listed with
    # no launch and its `make_inputs` made up, unsaid; `g`, which nothing names, is no kernel's
    (tmp_path / "k.cu").write_text(KERNELS_CU)
    (tmp_path / "host.cpp").write_text(HOST_CPP)
    inv = scan(tmp_path, limit=None)
    said = {k.name: k.unresolved for k in inv.kernels}
    tail = ", whose arguments (an array of their addresses) porter does not read"
    assert said["scale"] == ["launched through `cudaLaunchKernel` at host.cpp:7" + tail]
    driver = "launched through `cuLaunchKernel` (a `CUfunction` of a module loaded at run time) at host.cpp:14"
    assert said["shift"] == [driver + tail]
    assert [k.name for k in inv.kernels] == ["scale", "shift"]  # (the `.cpp`'s declaration is no kernel)
    written = write_scaffolds(inv, tmp_path / "out", "xla", limit=None)
    test = next(p for p in written if p.name == "test_shift_xla_parity.py")
    assert f"# TODO(porter): {driver}" in test.read_text()


SPECIALISED = (
    "template <typename T>\n__global__ void k(T* x, int n) {}\n\n"
    "template <>\n__global__ void k < double > (double* x, int n) {}\n\n"
    "template <typename T>\n__global__ void plain(T* x, int n) {}\n\n"
    "template <>\n__global__ void plain(float* x, int n) {}\n\n"  # (deduced: no arguments written)
    "void run(float* f, double* d, int n) {\n  k<float><<<1, 64>>>(f, n);\n  k<double><<<1, 64>>>(d, n);\n"
    "  k<<<1, 64>>>(f, n);\n}\n"
)


def test_a_template_specialization_is_named_so_and_takes_the_launches_of_its_arguments(tmp_path):
    # `template <> __global__ void k<double>(...)` was called "an overload", and `k<double><<<` was
    # given to both it and the primary template (whose scaffold then read `double` for `T`)
    (tmp_path / "k.cu").write_text(SPECIALISED)
    kernels = [(k.name, k.line, k.detail, [c.line for c in k.calls]) for k in scan(tmp_path, limit=None).kernels]
    assert kernels == [
        ("k", 2, "__global__", [14]),  # (`k<<<` of line 16 deduces its arguments: not read, said since 0073c76)
        ("k", 5, "__global__; a specialization for <double> of line 2: `double* x` for `T* x`", [15]),
        ("plain", 8, "__global__", []),
        ("plain", 11, "__global__; a specialization of line 8: `float* x` for `T* x`", []),  # (deduced arguments)
    ]
