"""The twenty-third adversarial read of the scaffold writers (issue 24): each test failed on e74fdb1."""

from __future__ import annotations

import pytest
import torch

from porter.kernels.triton_ref import translate, why_not

HEAD = "import triton\nimport triton.language as tl\n\n@triton.jit\n"
OFFS = "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"


@pytest.mark.parametrize(
    ("load_mask", "store_mask"),
    [(", mask=offs < n, other=0.0", ""), ("", ", mask=offs < n"), (", mask=offs < n", ", mask=offs < m")],
)
def test_loads_and_stores_under_different_bounds_are_not_derived(load_mask, store_mask):
    # `x = tl.load(p + offs, mask=offs < n)` then `tl.store(q + offs, x + 1)` was "derived" as
    # `q.view(-1)[:] = x + 1` with x of n values: the reference raised "The expanded size of the
    # tensor (64) must match the existing size (37)" where the kernel writes its grid's lanes
    source = (
        HEAD
        + "def k(x_ptr, y_ptr, n, m, BLOCK: tl.constexpr):\n"
        + OFFS
        + f"    x = tl.load(x_ptr + offs{load_mask})\n"
        + f"    tl.store(y_ptr + offs, x + 1{store_mask})\n"
    )
    derived = translate(source, "k")
    if derived is not None:  # e74fdb1: derived, and its reference fails to run
        namespace: dict = {"torch": torch}
        exec(derived.source(), namespace)
        namespace["k_reference"](torch.randn(64), torch.randn(64), 37, 50)
    assert "different bounds" in (why_not(source, "k") or "")


def test_loads_and_stores_under_one_bound_are_still_derived():
    source = (
        HEAD
        + "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        + OFFS
        + "    mask = offs < n\n"
        + "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        + "    tl.store(y_ptr + offs, x + 1, mask=mask)\n"
    )
    x, y = torch.randn(64), torch.zeros(64)
    _reference(source)(x, y, 37)
    torch.testing.assert_close(y[:37], x[:37] + 1)
    assert not y[37:].any()


SCALE = """import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


def run(x, y):
    scale[(1,)](x, y, x.numel(), BLOCK=1024)
"""


def test_a_launch_imported_by_the_package_name_of_the_scanned_folder_runs_that_module_s_kernel(tmp_path):
    # `porter kernels fla` over flash-linear-attention 0.2.2: `fla/ops/gsa/fused_recurrent.py`
    # launches `fused_recurrent_fwd_kernel` imported `from fla.ops.common.fused_recurrent`, and
    # `fla/ops/generalized_delta_rule/iplr/` defines another of that name: the paths spell
    # `ops.common...`, the import `fla.ops.common...`, so the launch was given to neither
    from porter.kernels.inventory import scan

    pkg = tmp_path / "fla"
    (pkg / "ops" / "common").mkdir(parents=True)
    (pkg / "ops" / "iplr").mkdir()
    (pkg / "ops" / "common" / "k.py").write_text(SCALE.replace("FACTOR", "2.0"))
    (pkg / "ops" / "iplr" / "k.py").write_text(SCALE.replace("FACTOR", "3.0"))
    (pkg / "ops" / "gsa.py").write_text(
        "from fla.ops.common.k import scale\n\n\ndef gsa(a, b, count):\n    scale[(1,)](a, b, count, BLOCK=64)\n"
    )
    for root in (pkg, tmp_path):
        inv = scan(root)
        calls = {k.path: [(c.path, c.args) for c in k.calls] for k in inv.kernels}
        common, iplr, gsa = (
            str(p.relative_to(root)) for p in (pkg / "ops/common/k.py", pkg / "ops/iplr/k.py", pkg / "ops/gsa.py")
        )
        assert sorted(calls[common]) == [
            (common, ["x", "y", "x.numel()", "BLOCK=1024"]),
            (gsa, ["a", "b", "count", "BLOCK=64"]),
        ]
        assert calls[iplr] == [(iplr, ["x", "y", "x.numel()", "BLOCK=1024"])]


def test_a_kernel_defined_in_a_cpp_header_its_cu_includes_is_listed_with_its_launch(tmp_path):
    # flash-attn 2.7.4's csrc/fused_softmax (apex's): `scaled_masked_softmax.h` defines the
    # `__global__` kernels and `scaled_masked_softmax_cuda.cu` includes it; only `.cu`/`.cuh` were
    # read, so `porter kernels` listed none of them, and said nothing
    from porter.kernels.inventory import scan

    (tmp_path / "softmax.h").write_text(
        "#pragma once\ntemplate <typename T>\n__global__ void softmax_warp_forward(T* dst, const T* src, int rows)"
        " {\n  dst[0] = src[0];\n}\n\ninline void launch(float* d, const float* s, int rows) {\n"
        "  softmax_warp_forward<float><<<rows, 32>>>(d, s, rows);\n}\n"
    )
    (tmp_path / "plain.hpp").write_text("#pragma once\ninline int twice(int x) { return 2 * x; }\n")
    (tmp_path / "softmax_cuda.cu").write_text('#include "softmax.h"\n#include "plain.hpp"\n')
    inv = scan(tmp_path)
    listed = {(k.name, k.path): [c.args for c in k.calls] for k in inv.kernels if k.kind == "cuda"}
    assert listed == {("softmax_warp_forward", "softmax.h"): [["d", "s", "rows"]]}


def test_not_of_a_number_is_python_s_not_as_in_triton():
    # Triton takes `not 0` as a constexpr (True): `x * (not 0)` stores x; the reference wrote
    # `x * (~0)`, the bitwise complement, and computed -x
    source = (
        HEAD
        + "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        + OFFS
        + "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        + "    tl.store(y_ptr + offs, x * (not 0), mask=offs < n)\n"
    )
    x, y = torch.randn(64), torch.zeros(64)
    _reference(source)(x, y, 64)
    torch.testing.assert_close(y, x)


def _reference(source):
    """The reference porter derives for kernel `k` of `source`, ready to call."""
    derived = translate(source, "k")
    assert derived is not None
    namespace: dict = {"torch": torch}
    exec(derived.source(), namespace)
    return namespace["k_reference"]
