"""The thirty-fifth read's real-package leftovers (pkleft): attn-gym 0.0.17, lightning-thunder 0.2.6,
megatron-core 0.19.2 and torchft 0.2.0 end to end, checked against the packages' own sources and torch itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="tpu"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line) for f in result.findings]


GLOO_FOR_CUDA = """import torch
from torch.distributed import ProcessGroup


def create(pg, gloo, store):
    pg._register_backend(torch.device("cpu"), ProcessGroup.BackendType.GLOO, gloo)
    if torch.cuda.is_available():
        pg._register_backend(torch.device("cuda"), ProcessGroup.BackendType.GLOO, gloo)
    if torch.xpu.is_available():
        pg._register_backend(torch.device("xpu"), ProcessGroup.BackendType.GLOO, gloo)
    return pg


def pick():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_gloo_registration_for_cuda_stays_cuda(tmp_path, target):
    """torchft 0.2.0 `process_group.py:670`: `if torch.cuda.is_available(): pg._register_backend(
    torch.device("cuda"), ProcessGroup.BackendType.GLOO, gloo)` was ported in place to the target's device
    under the target's check. Gloo takes CPU and CUDA tensors only (torch 2.13's
    `Backend.backend_capability["gloo"] == ["cpu", "cuda"]`); on XLA (torch_xla 2.9, PJRT_DEVICE=CPU) an
    allreduce of XLA tensors through it leaves each rank's values unreduced. The registration and its
    check stay CUDA's (GUARD001, GUARD003); a device choice (`pick`, the control) is still ported."""
    new, found = _port(tmp_path, GLOO_FOR_CUDA, target)
    assert (
        '    if torch.cuda.is_available():\n        pg._register_backend(torch.device("cuda"), '
        "ProcessGroup.BackendType.GLOO, gloo)\n"
    ) in new
    assert ("GUARD001", 7) in found
    assert 'return torch.device("cuda")' not in new


PER_DTYPE_BUFFERS = """import torch


def buffers(buffer_size, device):
    return {
        torch.float32: torch.empty(buffer_size[torch.float32], dtype=torch.float32, device=device),
        torch.float16: torch.empty(buffer_size[torch.float16], dtype=torch.float16, device=device),
        torch.bfloat16: torch.empty(buffer_size[torch.bfloat16], dtype=torch.bfloat16, device=device),
        "half": torch.empty(1, dtype=torch.float16),
    }
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_the_float16_entry_of_a_table_by_dtype_keeps_its_float16(tmp_path, target):
    """megatron-core 0.19.2 `megatron_fsdp/param_and_grad_buffer.py:3031`: `{torch.float32: torch.empty(...,
    dtype=torch.float32), torch.float16: torch.empty(buffer_size[torch.float16], dtype=torch.float16), torch.bfloat16:
    ...}`, one buffer per dtype: AMP002 (--unsafe-fixes) made the fp16 entry's buffer bf16, so fp16 parameters got
    their storage from a bf16 buffer (bf16 has its own entry). The value of a dtype table's fp16 key keeps its
    fp16; a string-keyed entry's `dtype=torch.float16` (the control) is still AMP002's."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(PER_DTYPE_BUFFERS)
    result = run([tmp_path], Settings(target=target, unsafe_fixes=True), jobs=1, cache=False)[0][0]
    new = (result.new_source or b"").decode()
    assert "torch.empty(buffer_size[torch.float16], dtype=torch.float16, device=device)" in new
    assert '"half": torch.empty(1, dtype=torch.bfloat16)' in new
