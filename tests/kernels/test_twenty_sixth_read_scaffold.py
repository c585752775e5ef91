"""The twenty-sixth read of the scaffold writers (issue 24): each test failed on 0073c76."""

from __future__ import annotations

import pytest

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

SHADOWED = (
    "__global__ void copy(const float* x_, float* x, int n) { x[threadIdx.x] = x_[threadIdx.x]; }\n"
    "__global__ void under(const float* _y, float* y, int n) { y[threadIdx.x] = _y[threadIdx.x]; }\n"
    "__global__ void plain(const float* src, float* dst, int n) { dst[threadIdx.x] = src[threadIdx.x]; }\n"
    "void run(float* a, float* b, int n) {\n"
    "  copy<<<1, 32>>>(a, b, n);\n  under<<<1, 32>>>(a, b, n);\n  plain<<<1, 32>>>(a, b, n);\n}\n"
)


@pytest.mark.parametrize(
    ("kernel", "signature", "written"),
    [
        ("copy", "x_: torch.Tensor, x: torch.Tensor, n: int", "x"),
        # a name Python may not hold as written (`_y`: safe_name strips it) gets a new one, no other's
        ("under", "y_: torch.Tensor, y: torch.Tensor, n: int", "y"),
        ("plain", "src: torch.Tensor, dst: torch.Tensor, n: int", "dst"),  # the control
    ],
)
def test_a_cuda_parameter_keeps_its_name_where_another_s_would_shadow_it(tmp_path, kernel, signature, written):
    # `k(const float* x_, float* x)`: the op was `k(x, x_)`, each parameter named as the other (`x_`
    # stripped to `x`, then `x` made `x_`), so the tensor the kernel writes was `x_` in its
    # mutates_args and its reference: a user who reads the kernel to write the reference writes
    # the other tensor
    (tmp_path / "k.cu").write_text(SHADOWED)
    write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")
    op = (tmp_path / "out" / f"{kernel}_op.py").read_text()
    assert f"def {kernel}({signature}) -> None:" in op
    assert f"mutates_args=('{written}',)" in op
