"""The twenty-fourth read's leftovers of the scaffold writers (issue 24, scaf2): each test failed on
h9-scaffold's tip."""

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


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.py").write_text(BUILD)
    (tmp_path / "pkg" / "csrc").mkdir(parents=True)
    (tmp_path / "pkg" / "csrc" / "k.cu").write_text("__global__ void k(float* x, int n) {}\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "control.py").write_text(USE.format(imp="from pkg import _C", ext="_C"))
    return tmp_path


@pytest.mark.parametrize(("imp", "ext"), [("import pkg._C", "pkg._C"), ("import pkg._C, os", "pkg._C")])
def test_an_extension_imported_by_its_dotted_name_has_its_ops_called(project, imp, ext):
    # `import pkg._C` then `pkg._C.fused(x)`: a dotted import binds `pkg`, and only `from pkg import
    # _C` was read: the extension's entry did not list the call, and lint took `model`'s `x.is_cuda`
    # for a device check to switch (DEV004), running `pkg._C.fused` on the target
    (project / "pkg" / "dotted.py").write_text(USE.format(imp=imp, ext=ext))
    entry = next(k for k in scan(project).kernels if k.kind == "cuda-extension")
    assert sorted((c.path, c.line) for c in entry.calls) == [("pkg/control.py", 6), ("pkg/dotted.py", 6)]
    ported = port_files(project, "xla")
    for name in ("pkg/control.py", "pkg/dotted.py"):  # the control: `from pkg import _C`, read before
        new, findings = ported[name]
        assert "    if x.is_cuda:\n" in new, name
        assert [f.code for f in findings] == ["GUARD001"], (name, findings)
        assert "pkg._C" in findings[0].message


def test_the_listing_names_each_bound_op_and_namespace_once(tmp_path):
    # vllm's csrc/torch_bindings.cpp: `ops.def(...)` then `ops.impl("rms_norm", torch::kCUDA, &rms_norm)`
    # (no `m.def`: "binds:" was left out), and one namespace under `TORCH_LIBRARY` and
    # `TORCH_LIBRARY_IMPL` was named twice ("TORCH_LIBRARY myops, myops")
    (tmp_path / "k.cu").write_text(
        "#include <torch/library.h>\n"
        "__global__ void rms_kernel(float* x, int n) {}\n"
        'TORCH_LIBRARY(myops, ops) {\n  ops.def(\n    "rms_norm(Tensor! out, Tensor x) -> ()");\n'
        '  ops.def("myops::fused(Tensor x) -> Tensor");\n}\n'
        'TORCH_LIBRARY_IMPL(myops, CUDA, m) {\n  m.impl("rms_norm", &rms_norm);\n'
        '  m.impl("myops::fused", &fused);\n  m.impl("gelu", &gelu);\n}\n'
    )
    (kernel,) = scan(tmp_path).kernels
    assert kernel.detail == "__global__; binds: rms_norm, fused, gelu; TORCH_LIBRARY myops"


HELPED = (
    "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef _add_one(x):\n    return x + 1\n\n\n"
    "@triton.jit\ndef k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, _add_one(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)\n\n\n"
    "@triton.jit\ndef unlaunched(x_ptr):\n    tl.store(x_ptr, 1.0)\n\n\n"
    "def run(x, y):\n    k[(1,)](x, y, x.numel(), BLOCK=64)\n"
)


def test_a_triton_helper_with_no_launch_is_no_op_of_its_own(tmp_path):
    # `_add_one`, a `@triton.jit` function only `k` calls (flash-attn's `_attn_fwd_inner`), was listed
    # as a kernel and got an op, a skeleton and a parity test of its own: no code runs it as an op
    (tmp_path / "k.py").write_text(HELPED)
    inv = scan(tmp_path)
    helper = next(k for k in inv.kernels if k.name == "_add_one")
    assert helper.detail == "@triton.jit; a helper of k: called in their code, never launched"
    passed: list[str] = []
    written = {p.name for p in write_scaffolds(inv, tmp_path / "out", "xla", passed=passed)}
    assert {"k_op.py", "unlaunched_op.py"} <= written  # the control: a kernel, launched or not, has its own
    assert not any("add_one" in name for name in written), written
    assert passed == ["k.py:6: _add_one: no scaffold written: a @triton.jit helper of k"]


def test_a_triton_helper_is_named_with_the_callers_of_its_own_file(tmp_path):
    # flash-attn's flash_attn_triton.py and flash_attn_triton_amd/bwd_prefill.py each define
    # `_bwd_kernel_one_col_block`: a kernel's own `def` line is no call of it, and the callers of
    # the helper's own file are its callers
    (tmp_path / "a.py").write_text(HELPED)
    (tmp_path / "b.py").write_text(HELPED.replace("def k(", "def k2(").replace("k[(1,)]", "k2[(1,)]"))
    (tmp_path / "c.py").write_text(
        "from b import _add_one\n"
        + HELPED.split("@triton.jit\ndef _add_one")[0]
        + "@triton.jit\ndef k3(x_ptr):\n    tl.store(x_ptr, _add_one(1.0))\n\n"
        + "def run(x):\n    k3[(1,)](x)\n"
    )
    helpers = sorted((k.path, k.helper_of) for k in scan(tmp_path).kernels if k.helper_of)
    assert helpers == [("a.py", ["k"]), ("b.py", ["k2"])]


INLINE = '''import torch
from torch.utils.cpp_extension import load_inline

CUDA = """
__global__ void scale_kernel(const float* x, float* y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}
torch::Tensor scale(torch::Tensor x, double alpha);
"""

ext = load_inline(name="scale_ext", cpp_sources="torch::Tensor scale(torch::Tensor x, double alpha);",
                  cuda_sources={cuda}, functions=["scale"])


def run(x):
    return ext.scale(x, 2.0)
'''


@pytest.mark.parametrize(
    "cuda", ["CUDA", '["__global__ void scale_kernel(const float* x, float* y, float alpha, int n) {}"]']
)
def test_a_load_inline_cuda_source_s_kernels_are_read_for_their_parameters(tmp_path, cuda):
    # `load_inline(cuda_sources=...)` with a `__global__` kernel in a Python string: only the op
    # (`scale_ext.scale`, no parameters) was listed; the kernel was not read, so its scaffold could
    # not take `x`, `y`, `alpha`, `n`
    (tmp_path / "m.py").write_text(INLINE.replace("{cuda}", cuda))
    inv = scan(tmp_path)
    op = next(k for k in inv.kernels if k.name == "scale_ext.scale")  # the control: listed before
    assert [(c.path, c.line) for c in op.calls] == [("m.py", 17)]
    kernel = next(k for k in inv.kernels if k.name == "scale_kernel")
    assert (kernel.kind, kernel.path, kernel.line) == ("cuda", "m.py", 12)
    assert kernel.params == ["const float* x", "float* y", "float alpha", "int n"]
    written = write_scaffolds(inv, tmp_path / "out", "xla")
    skeleton = next(p for p in written if p.name == "scale_kernel_op.py").read_text()
    assert "def scale_kernel(x: torch.Tensor, " in skeleton and "alpha: float, n: int) -> " in skeleton
