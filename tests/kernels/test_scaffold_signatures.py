"""What a scaffold's reference op declares: each parameter's type and what the kernel writes,
read from the kernel (Triton's pointer arithmetic, a CUDA kernel's declaration and body) and
from its launches, and checked here by registering the op with torch and reading its schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.deps import need
from tests.kernels.test_inventory import _load

# a matmul: `tl.dot` and a 2-D grid are outside what porter translates, so no reference is
# derived; the strides are multiplied into the addresses, the pointers are added
MATMUL = """import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc * scale, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, c):
    matmul_kernel[(1, 1)](
        a,  # (M, K)
        b,
        c,
        a.shape[0], b.shape[1], a.shape[1],
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        0.5,
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
    )
"""

CU = """#include <torch/extension.h>
__global__ void axpy_kernel(const float* __restrict__ x, const float* y, float* __restrict__ out, int64_t n, float alpha) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = alpha * x[i] + y[i];
  }
}
__global__ void hist_kernel(const int* bins, int* counts, int n) {
  int i = threadIdx.x;
  if (i < n) atomicAdd(&counts[bins[i]], 1);
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mm.py").write_text(MATMUL)
    (tmp_path / "src" / "k.cu").write_text(CU)
    return tmp_path / "src"


def test_call_arguments_are_listed_once_each(project):
    """A launch over several lines, with comments and a trailing comma: each argument as
    written, no comma doubled."""
    [mm] = [k for k in scan(project).kernels if k.name == "matmul_kernel"]
    assert mm.calls[0].args[:5] == ["a", "b", "c", "a.shape[0]", "b.shape[1]"]
    assert mm.calls[0].args[-1] == "BLOCK_K=32"
    out = CliRunner().invoke(app, ["kernels", str(project)], env={"COLUMNS": "400"}).output
    assert ",," not in out and "(a, b, c, a.shape[0]," in out


@pytest.mark.torch
def test_the_reference_ops_declare_what_the_kernels_take_and_write(project, tmp_path):
    torch = need("torch")
    out = tmp_path / "k"
    write_scaffolds(scan(project), out, "neuron")
    schemas = {}
    for name in ("matmul_kernel", "axpy_kernel", "hist_kernel"):
        _load(out / f"{name}_op.py")
        schemas[name] = str(getattr(torch.ops.porter_kernels, name).default._schema)
    # pointers are tensors, strides and sizes integers (from the launch: `a.stride(0)`),
    # the scale a float; the kernel stores into c
    assert schemas["matmul_kernel"] == (
        "porter_kernels::matmul_kernel(Tensor a_ptr, Tensor b_ptr, Tensor(a2!) c_ptr, SymInt M, SymInt N, SymInt K, "
        "SymInt stride_am, SymInt stride_ak, SymInt stride_bk, SymInt stride_bn, SymInt stride_cm, SymInt stride_cn, "
        "float scale) -> ()"
    )
    # a CUDA kernel keeps its parameters: const pointers are inputs, the one it assigns is written
    assert (
        schemas["axpy_kernel"]
        == "porter_kernels::axpy_kernel(Tensor x, Tensor y, Tensor(a2!) out, SymInt n, float alpha) -> ()"
    )
    assert schemas["hist_kernel"] == "porter_kernels::hist_kernel(Tensor bins, Tensor(a1!) counts, SymInt n) -> ()"
    # the Pallas op takes every argument and returns what the kernel wrote
    write_scaffolds(scan(project), tmp_path / "tpu", "tpu")
    assert (
        "def axpy_kernel_pallas(x: jax.Array, y: jax.Array, out: jax.Array, n: int, alpha: float) -> jax.Array:"
        in (tmp_path / "tpu" / "axpy_kernel_tpu.py").read_text()
    )
