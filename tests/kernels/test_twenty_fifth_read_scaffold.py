"""The twenty-fifth read of the scaffold writers (issue 24): each test failed on 5907f51."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

COMBINED = (
    "import triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef _maxc(a, b):\n    return tl.maximum(a, b)\n\n\n"
    "@triton.jit\ndef _addc(a, b):\n    return a + b\n\n\n"
    "@triton.jit\ndef k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    x = tl.load(x_ptr + tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n, other=0.0)\n"
    "    tl.store(y_ptr, tl.reduce(x, 0, _maxc))\n"
    "    tl.store(y_ptr + 1, tl.associative_scan(x, 0, combine_fn=_addc))\n\n\n"
    "@triton.jit\ndef unlaunched(x_ptr):\n    tl.store(x_ptr, 1.0)\n\n\n"
    "def run(x, y):\n    k[(1,)](x, y, x.numel(), BLOCK=64)\n"
)


def test_a_combine_function_passed_to_tl_reduce_is_a_helper(tmp_path):
    # torch inductor's triton_helpers.py passes six `@triton.jit` functions to `tl.reduce` by name
    # (`tl.reduce(input, axis, _prod_accumulate)`): each was listed as a kernel of its own and got an
    # op, a skeleton and a parity test that no code runs; a called helper was already none
    (tmp_path / "k.py").write_text(COMBINED)
    inv = scan(tmp_path)
    details = {k.name: k.detail for k in inv.kernels}
    assert details["_maxc"] == "@triton.jit; a helper of k: passed as a function in their code, never launched"
    assert details["_addc"] == "@triton.jit; a helper of k: passed as a function in their code, never launched"
    assert details["unlaunched"] == "@triton.jit"  # the control: named by no kernel
    passed: list[str] = []
    written = {p.name for p in write_scaffolds(inv, tmp_path / "out", "xla", passed=passed)}
    assert {"k_op.py", "unlaunched_op.py"} <= written
    assert not any("maxc" in name or "addc" in name for name in written), written
    assert sorted(passed) == [
        "k.py:11: _addc: no scaffold written: a @triton.jit helper of k",
        "k.py:6: _maxc: no scaffold written: a @triton.jit helper of k",
    ]
