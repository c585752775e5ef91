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


NCCL_VERSION = """import unittest

import torch


def fast_path():
    if torch.cuda.is_available():
        return torch.cuda.nccl.version() >= (2, 25)
    return False


class T(unittest.TestCase):
    @unittest.skipUnless(torch.cuda.is_available() and torch.cuda.nccl.version() >= (2, 25), "needs NCCL >=2.25")
    def test_a(self):
        return torch.cuda.is_available() and torch.cuda.device_count() > 1
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_cuda_check_in_front_of_torch_nccl_stays_cuda(tmp_path, target):
    """torchft 0.2.0's `process_group_test.py` skips unless `torch.cuda.is_available() and
    torch.cuda.nccl.version() >= (2, 25)`: porter made the left `torch.accelerator.is_available()` (CUDA001),
    so on the target the right ran, and in a torch without NCCL (TorchTPU's torch 2.13) `torch.cuda.nccl.version()`
    raises AttributeError (`torch._C` has no `_nccl_version`) as the module is imported. `torch.cuda.nccl` is
    CUDA-only code: the check in front of it stays CUDA's (GUARD001); the one in front of `device_count()` (the
    control) is ported."""
    new, found = _port(tmp_path, NCCL_VERSION, target)
    assert "    if torch.cuda.is_available():\n        return torch.cuda.nccl.version()" in new
    assert "skipUnless(torch.cuda.is_available() and torch.cuda.nccl.version()" in new
    assert "return torch.cuda.is_available() and torch.cuda.device_count()" not in new
    assert [line for code, line in found if code == "GUARD001"] == [7, 13]


ACCELERATOR_GATE = """import torch


class Transport:
    def __init__(self):
        self._stream = torch.Stream(torch.accelerator.current_accelerator()) if torch.accelerator.is_available() else None
        self.device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

    def sync(self, curr_device):
        if curr_device >= 0 and torch.accelerator.is_available():
            torch.accelerator.set_device_index(curr_device)
        if torch.accelerator.is_available():
            torch.accelerator.synchronize()
"""


def test_an_accelerator_check_that_gates_streams_stays_on_xla(tmp_path):
    """torchft 0.2.0's `http_transport.py` makes `torch.Stream(torch.accelerator.current_accelerator()) if
    torch.accelerator.is_available() else None`, and its manager `torch.accelerator.synchronize()` under
    `if torch.accelerator.is_available():`. DEV012 made each test `xr.global_runtime_device_count() > 0` (and the
    stream's device `torch_xla.device()`), so on XLA the stream was made (RuntimeError "Backend doesn't support
    create a new Stream", torch-xla 2.9 on the CPU) and `synchronize()` asked CUDA. A check that gates the
    accelerator's streams or device index stays (False on XLA), a manual DEV012 says so; the one that picks the
    device (the control) is still pointed at XLA."""
    new, found = _port(tmp_path, ACCELERATOR_GATE, "xla")
    assert "torch.Stream(torch.accelerator.current_accelerator()) if torch.accelerator.is_available() else None" in new
    assert "if curr_device >= 0 and torch.accelerator.is_available():" in new
    assert "        if torch.accelerator.is_available():\n            torch.accelerator.synchronize()" in new
    assert 'self.device = torch_xla.device() if xr.global_runtime_device_count() > 0 else "cpu"' in new
    assert sorted(line for code, line in found if code == "DEV012") == [6, 7, 7, 10, 12]
