"""The thirty-fourth read, real packages end to end (pkread): what lint, rewrite and kernels made of
galore-torch 1.0, apollo-torch 1.0.3, kvpress 0.5.5, fairscale 0.4.13, mmengine 0.10.7, torchtitan 0.3.0,
lightning-thunder 0.2.6 and megatron-core 0.19.2, checked against the libraries' own sources and torch itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="tpu", unsafe=False):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target, unsafe_fixes=unsafe), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line) for f in result.findings]


ADAFACTOR = """import torch


def step(p, grad):
    if grad.dtype in {torch.float16, torch.bfloat16}:
        grad = grad.float()
    if p.dtype == torch.float16:
        p = p.float()
    if torch.half != p.dtype and p.dtype not in (torch.half,):
        pass
    return grad, p, torch.zeros(3, dtype=torch.float16)
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_float16_that_a_comparison_tests_for_is_no_precision_choice(tmp_path, target):
    """galore-torch 1.0's Adafactor (from transformers) upcasts `if grad.dtype in {torch.float16,
    torch.bfloat16}` and copies back `if p.dtype in {...}`: AMP002 made each `torch.float16` there
    `torch.bfloat16` (`{torch.bfloat16, torch.bfloat16}`, an unsafe fix), so an fp16 parameter would
    no longer get its update copied back. A dtype a comparison tests for is no choice: it stays, with
    no finding; the `dtype=torch.float16` that creates a tensor (the control) is still AMP002's."""
    new, found = _port(tmp_path, ADAFACTOR, target, unsafe=True)
    assert "in {torch.float16, torch.bfloat16}" in new
    assert "p.dtype == torch.float16" in new
    assert "torch.half != p.dtype and p.dtype not in (torch.half,)" in new
    assert "torch.zeros(3, dtype=torch.bfloat16)" in new
    assert [line for code, line in found if code == "AMP002"] == [11]


GENERATOR = """import torch


def noise(shape, seed):
    g = torch.Generator(device="cuda")
    h = torch.Generator("cuda:0")
    g.manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda"), torch.zeros(shape, device="cuda"), h
"""


def test_a_random_generator_on_the_device_stays_where_pytorch_xla_has_none(tmp_path):
    """apollo-torch 1.0.3 draws its projections from `torch.Generator(device=...)` on the
    parameter's device: on PyTorch/XLA (torch_xla 2.9, PJRT_DEVICE=CPU) `torch.Generator(device="xla")`
    raises "XLA device type not an accelerator", yet for a literal `"cuda"` there porter wrote
    `torch.Generator(device="xla")` (DEV002, a safe fix). The generator's device stays, and so does the `device=` of a draw given
    that generator (they must match), reported (manual); `torch.zeros(..., device="cuda")` (the
    control) is ported, and on tpu the generator is too (rules/device.toml `[device_generator]`)."""
    new, found = _port(tmp_path, GENERATOR, "xla")
    assert 'torch.Generator(device="cuda")' in new and 'torch.Generator("cuda:0")' in new
    assert 'generator=g, device="cuda")' in new
    assert 'torch.zeros(shape, device="xla")' in new
    assert sorted(line for code, line in found if code == "DEV002") == [5, 6, 8, 8]
    tpu, _ = _port(tmp_path, GENERATOR, "tpu")
    assert 'torch.Generator(device="tpu")' in tpu
