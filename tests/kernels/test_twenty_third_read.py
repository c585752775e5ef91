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
    derived = translate(source, "k")
    assert derived is not None
    namespace: dict = {"torch": torch}
    exec(derived.source(), namespace)
    x, y = torch.randn(64), torch.zeros(64)
    namespace["k_reference"](x, y, 37)
    torch.testing.assert_close(y[:37], x[:37] + 1)
    assert not y[37:].any()
