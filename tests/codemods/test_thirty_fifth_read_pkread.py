"""The thirty-fifth read, real packages end to end (pkread): what lint, rewrite and kernels made of
schedulefree 1.4.1, lion-pytorch 0.2.5, torchft 0.2.0, pytorch-optimizer 4.1.0, attn-gym 0.0.17,
lightning-thunder 0.2.6 and megatron-core 0.19.2, checked against the packages' own sources and torch itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="tpu", unsafe=False):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target, unsafe_fixes=unsafe), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line) for f in result.findings]


DTYPE_KEYS = """import torch

DTYPE_WIDTHS = {torch.int8: 1, torch.float16: 2, torch.bfloat16: 2, torch.float32: 4}


def fp16_width():
    return DTYPE_WIDTHS[torch.half]


def kind(t):
    match t.dtype:
        case torch.float16:
            return "half"
        case _:
            return "other"


def make():
    return torch.zeros(3, dtype=torch.float16), {"fp16": torch.float16}
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_float16_that_keys_a_table_or_a_case_is_no_precision_choice(tmp_path, target):
    """pytorch-optimizer 4.1.0's `flash_adamw.py` keeps `DTYPE_WIDTHS = {torch.float16: 2, torch.bfloat16: 2,
    ...}`: AMP002 made the fp16 key `torch.bfloat16` (an unsafe fix), a duplicate key, so the table had no
    fp16 entry and a float16 parameter's lookup raised KeyError; `WIDTHS[torch.half]` and `case
    torch.float16:` (an `==` test) were rewritten the same. A dtype that is a key, an index or a case
    pattern stays, no finding; `dtype=torch.float16` and a table's fp16 value (the controls) are AMP002's."""
    new, found = _port(tmp_path, DTYPE_KEYS, target, unsafe=True)
    assert "{torch.int8: 1, torch.float16: 2, torch.bfloat16: 2, torch.float32: 4}" in new
    assert "DTYPE_WIDTHS[torch.half]" in new
    assert "case torch.float16:" in new
    assert 'torch.zeros(3, dtype=torch.bfloat16), {"fp16": torch.bfloat16}' in new
    assert [line for code, line in found if code == "AMP002"] == [19, 19]


DTYPE_LISTS = """import torch

SUPPORTED_INPUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
IO_TYPES = [torch.bfloat16, torch.half]


def check(x):
    if x.dtype not in SUPPORTED_INPUT_DTYPES:
        raise TypeError(x.dtype)
    return x.to(torch.float16), (torch.float16, torch.float32)
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_float16_in_a_named_list_that_holds_bfloat16_is_no_precision_choice(tmp_path, target):
    """attn-gym 0.0.17's `kda/validation.py` names `SUPPORTED_INPUT_DTYPES = (torch.float16, torch.bfloat16,
    torch.float32)` and turns away `x.dtype not in SUPPORTED_INPUT_DTYPES`: AMP002 made it `(torch.bfloat16,
    torch.bfloat16, torch.float32)` (an unsafe fix), so an fp16 input raised where the original took it. A
    collection that already holds bf16 is a list of dtypes: its fp16 stays, no finding; `x.to(torch.float16)`
    and a tuple without bf16 (the controls) are AMP002's."""
    new, found = _port(tmp_path, DTYPE_LISTS, target, unsafe=True)
    assert "SUPPORTED_INPUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)" in new
    assert "IO_TYPES = [torch.bfloat16, torch.half]" in new
    assert "return x.to(torch.bfloat16), (torch.bfloat16, torch.float32)" in new
    assert [line for code, line in found if code == "AMP002"] == [10, 10]
