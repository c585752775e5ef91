"""Tables of the devices each entry runs on (BACK010) and lists of devices written as availability
tests (BACK001), from transformers 5.25.0: every entry stays byte for byte and the target is
claimed by none (nothing says the code in question runs there)."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port

TARGETS = ["neuron", "tpu", "xla"]

# shaped like transformers 5.25.0 modeling_flash_attention_utils.py and integrations/hub_kernels.py
TABLES = '''
from transformers.utils import is_torch_cuda_available, is_torch_mlu_available, is_torch_npu_available

KERNEL_DEVICES = {
    "kernels-community/flash-attn2": ("cuda", "xpu"),
    "kernels-community/flash-attn3": ("cuda",),
    "kernels-community/aiter-flash-attn": ("rocm",),
    "kernels-community/metal-flash-sdpa": ("mps",),
}

MATRIX = {
    2: {
        "supported_devices": (
            (is_torch_cuda_available, "cuda"),
            (is_torch_mlu_available, "mlu"),
            (is_torch_npu_available, "npu"),
        ),
    },
    3: {"supported_devices": ((is_torch_cuda_available, "cuda"),), "cuda_min_major_version": 8},
}


def runs_here(repo, tensor):
    return tensor.device.type in KERNEL_DEVICES.get(repo, (tensor.device.type,))
'''


def _port(code: str, target: str):
    return port(textwrap.dedent(code).lstrip("\n"), target)


@pytest.mark.parametrize("target", TARGETS)
def test_device_tables_are_kept_with_a_finding(target):
    new, findings = _port(TABLES, target)
    assert new == textwrap.dedent(TABLES).lstrip("\n")
    tables = [f for f in findings if f.code == "BACK010"]
    assert [f.start.line for f in tables] == [3, 13, 18]
    assert "each entry runs on (cuda, xpu, rocm, mps)" in tables[0].message
    assert "pairs each device with its availability test (cuda, mlu, npu)" in tables[1].message
    assert 'under `"supported_devices"`' in tables[2].message
    assert not any(f.code in ("DEV002", "BACK001") for f in findings)


@pytest.mark.parametrize(
    "code",
    [
        # one list repeated per dtype: the devices the code handles, not a table (BACK001 adds the target)
        'FAST = {"fp16": ("cuda", "xpu"), "bf16": ("cuda", "xpu")}\n',
        # CUDA and the CPU only: a device choice, ported as a device
        'WHERE = {"a": ("cuda", "cpu"), "b": ("cpu",)}\n',
        # a pair that is no availability test
        'PAIRS = ((print, "cuda"), (len, "xpu"))\n',
    ],
)
def test_what_is_not_a_device_table(code):
    _, findings = port(code, "neuron")
    assert not any(f.code == "BACK010" for f in findings)


# transformers 5.25.0 quantizer_awq.py / quantizer_finegrained_fp8.py, torchtune 0.6.1 memory stats
AVAILABILITY = '''
import torch
from transformers.utils import is_torch_xpu_available


def update_dtype(dtype):
    if dtype == torch.bfloat16 and (torch.cuda.is_available() or torch.xpu.is_available()):
        dtype = torch.float16
    return dtype


def needs_gpu(pre_quantized):
    if not torch.cuda.is_available() and not is_torch_xpu_available():
        return pre_quantized
    return False


def stats(is_npu_available):
    if not (torch.cuda.is_available() or is_npu_available):
        return {}
    return {"a": 1}
'''


@pytest.mark.parametrize("target", TARGETS)
def test_availability_tests_naming_cuda_and_another_accelerator_keep_cudas(target):
    """`torch.accelerator.is_available()` in CUDA's place would stand for the other
    accelerator (and the target) too: CUDA's test stays, the finding says so."""
    new, findings = _port(AVAILABILITY, target)
    assert new == textwrap.dedent(AVAILABILITY).lstrip("\n")
    lists = [f for f in findings if f.code == "BACK001"]
    assert [f.start.line for f in lists] == [6, 12, 18]
    assert all("CUDA's test is kept" in f.message and not f.applied for f in lists)


def test_cuda_availability_alone_is_still_ported():
    new, findings = port("import torch\n\nif torch.cuda.is_available() or False:\n    torch.cuda.synchronize()\n", "neuron")
    assert "torch.accelerator.is_available()" in new and not any(f.code == "BACK001" for f in findings)
