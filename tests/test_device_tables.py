"""Tables of the devices each entry runs on (BACK010) and lists of devices written as availability
tests (BACK001), from transformers 5.25.0: every entry stays byte for byte and the target is
claimed by none (nothing says the code in question runs there)."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port, port_files, write_files

TARGETS = ["neuron", "tpu", "xla"]

# shaped like transformers 5.25.0 modeling_flash_attention_utils.py and integrations/hub_kernels.py
TABLES = """
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
"""


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
AVAILABILITY = """
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
"""


# the project's device abstraction (transformers' `infer_device`-like ladder over device types)
DEVICES = """
import torch


def infer_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.xpu.is_available():
        return "xpu"
    if torch.npu.is_available():
        return "npu"
    return "cpu"
"""


@pytest.mark.parametrize("target", TARGETS)
def test_availability_tests_naming_cuda_and_another_accelerator_keep_cudas(tmp_path, target):
    """`torch.accelerator.is_available()` in CUDA's place would stand for the other
    accelerator (and the target) too: in a library, CUDA's test stays, the finding says so."""
    write_files(tmp_path, {"lib/__init__.py": "", "lib/devices.py": DEVICES, "lib/quant.py": AVAILABILITY})
    new, findings = port_files(tmp_path, target)["lib/quant.py"]
    assert new == textwrap.dedent(AVAILABILITY).lstrip()
    lists = [f for f in findings if f.code == "BACK001"]
    assert [f.start.line for f in lists] == [6, 12, 18]
    assert all("CUDA's test is kept" in f.message and not f.applied for f in lists)


def test_an_application_still_chooses_the_target():
    """Outside a library, `torch.cuda.is_available() or torch.xpu.is_available()` chooses
    the program's device: it is ported, so the target is chosen."""
    new, findings = _port(AVAILABILITY, "neuron")
    assert (
        "torch.cuda.is_available()" not in new and "torch.accelerator.is_available() or torch.xpu.is_available()" in new
    )
    assert not any(f.code == "BACK001" for f in findings)
