"""The thirty-sixth read's real packages (pkread): stable-baselines3 2.7.0, open_clip_torch 3.2.0, gpytorch 1.14.2,
torchrec 1.3.0 and kornia 0.8.1 end to end, checked against the packages' own sources and Python, torch itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="xla"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line, f.message) for f in result.findings]


DDP_WITH_KWARGS = """import torch
from torch.nn.parallel import DistributedDataParallel


class Strategy:
    def __init__(self, **kwargs):
        self._ddp_kwargs = kwargs

    def wrap(self, model, rank):
        return DistributedDataParallel(module=model, device_ids=[rank], **self._ddp_kwargs)

    def plain(self, model, rank):
        return DistributedDataParallel(model, device_ids=[rank])
"""


def test_gradient_as_bucket_view_is_not_added_beside_a_kwargs_spread(tmp_path):
    """Lightning's `DistributedDataParallel(module=model, device_ids=..., **self._ddp_kwargs)` (the user's
    `DDPStrategy(gradient_as_bucket_view=True)` lands in the spread; open_clip_train 3.2.0's
    `DistributedDataParallel(model, device_ids=[device], **ddp_args)` has the shape): the xla port added
    `gradient_as_bucket_view=True` after the `**`, and Python raises "got multiple values for keyword argument
    'gradient_as_bucket_view'" when the spread holds it. The device ids are still dropped; the recommendation
    is said, not written. A call without a spread (the control) still gets it."""
    new, found = _port(tmp_path, DDP_WITH_KWARGS)
    assert "DistributedDataParallel(module=model, **self._ddp_kwargs)\n" in new
    assert "DistributedDataParallel(model, gradient_as_bucket_view=True)\n" in new
    wrap = [m for code, line, m in found if code == "DIST002" and line == 10]
    assert wrap and "not added" in wrap[0]
    # Python itself: the ported call's keywords, with the spread holding the option, are accepted
    call = new.split("return ")[1].split("\n")[0]
    kwargs = {"gradient_as_bucket_view": True}
    code = f"def DistributedDataParallel(*a, **k): return k\nself = S\nout = {call}"
    scope = {"S": type("S", (), {"_ddp_kwargs": kwargs}), "model": None, "rank": 0}
    exec(compile(code, "<ported>", "exec"), scope)
    assert scope["out"]["gradient_as_bucket_view"] is True


DEVICE_MODULE_GATE = """import torch


def memcpy_stream(device: torch.device, priority: int = 0):
    return torch.get_device_module(device).Stream(priority=priority) if device.type in ["cuda", "mtia"] else None


def event(device: torch.device):
    if device.type in ("cuda", "xpu"):
        return torch.get_device_module(device).Event()
    return None


def pinned(device: torch.device):
    return device.type in ["cuda", "mtia"]
"""


def test_a_device_list_that_gates_get_device_module_gains_no_xla(tmp_path):
    """torchrec 1.3.0 `train_pipeline/utils.py:468` (DataLoadingThread): `torch.get_device_module(device).Stream(
    priority=...) if device.type in ["cuda", "mtia"] else None` became `["cuda", "mtia", "xla"]` (BACK001, safe).
    torch_xla 2.9 (PJRT_DEVICE=CPU) registers no `torch.xla`: `torch.get_device_module(torch_xla.device())` raises
    "Device 'xla' does not have a corresponding module registered as 'torch.xla'", where the original took the
    `None` branch. The list stays and BACK001 says why; a list that gates nothing of the kind (the control) still
    gains "xla"."""
    new, found = _port(tmp_path, DEVICE_MODULE_GATE)
    assert 'if device.type in ["cuda", "mtia"] else None' in new
    assert 'if device.type in ("cuda", "xpu"):' in new
    assert 'return device.type in ["cuda", "mtia", "xla"]' in new
    said = [m for code, line, m in found if code == "BACK001" and line in (5, 9)]
    assert len(said) == 2 and all("torch.xla" in m for m in said)


def test_a_device_list_that_gates_get_device_module_gains_tpu(tmp_path):
    """The control on TorchTPU: torch-tpu 0.2.0 registers `torch.tpu` with `Stream(device=None, priority=0)` and
    `Event(...)` (`_device_module.py`), so the list gains "tpu" as before."""
    new, _ = _port(tmp_path, DEVICE_MODULE_GATE, "tpu")
    assert 'if device.type in ["cuda", "mtia", "tpu"] else None' in new
    assert 'if device.type in ("cuda", "xpu", "tpu"):' in new


OWN_CUDA_METHOD = """import torch
from torch.nn import Module


class NNUtil(Module):
    def cuda(self, device=None):
        super().cuda(device=device)
        from faiss import GpuIndexFlatL2, StandardGpuResources

        self.res = StandardGpuResources()
        self.index = [GpuIndexFlatL2(self.res, 3)]
        return self

    def to(self, device):
        if str(device) == "cpu":
            return self.cpu()
        elif "cuda" in str(device):
            return self.cuda()
        else:
            raise ValueError(f"Unknown device {device}")


def pick():
    return "cuda" if torch.cuda.is_available() else "cpu"
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_device_test_in_front_of_the_files_own_cuda_method_stays_cuda(tmp_path, target):
    """gpytorch 1.14.2 `utils/nearest_neighbors.py:220` (`NNUtil.to`): `elif "cuda" in str(device): return
    self.cuda()`, where `NNUtil.cuda()` builds faiss GPU indexes, became `elif "xla" in str(device)` (DEV005, safe)
    while `self.cuda()` stayed (DEV001: the file defines its own `cuda()`). The target ran CUDA's method
    (`Module.cuda()`: no NVIDIA driver there) and a CUDA device reached "Unknown device". The test stays CUDA's,
    DEV005 says why; a device choice elsewhere in the file (`pick`, the control) is still ported."""
    new, found = _port(tmp_path, OWN_CUDA_METHOD, target)
    assert 'elif "cuda" in str(device):\n            return self.cuda()' in new
    assert any(code == "DEV005" and line == 17 and "self.cuda()" in m for code, line, m in found)
    assert 'return "cuda" if' not in new


REFUSES_NON_CUDA = """import torch


def check(x, tensors):
    ref_device = x.device
    for name, tensor in tensors:
        if tensor is not None:
            if not tensor.is_cuda or tensor.device != ref_device:
                raise ValueError(
                    f"{name} must be on the same CUDA device as x ({ref_device}), "
                    f"got {tensor.device if tensor.is_cuda else 'CPU'}"
                )


def where(t):
    return t.device if t.is_cuda else "host"
"""


@pytest.mark.parametrize("target", ["tpu", "neuron"])
def test_the_message_of_a_kept_cuda_refusal_keeps_its_is_cuda(tmp_path, target):
    """flash-sinkhorn 0.4.1 `kernels/_common.py:114`: `if not tensor.is_cuda or tensor.device != ref_device: raise
    ValueError(f"... got {tensor.device if tensor.is_cuda else 'CPU'}")`: BACK006 kept the check (it turns away what
    is not CUDA), DEV004 made the message's `tensor.is_cuda` the target's, so on CUDA a tensor on another index was
    said to be on the "CPU" (`diff-defects`: cuda-only-enabled). The raise's words stay with its check; an `is_cuda`
    outside it (`where`, the control) is still ported."""
    new, found = _port(tmp_path, REFUSES_NON_CUDA, target)
    assert "got {tensor.device if tensor.is_cuda else 'CPU'}" in new
    assert "if not tensor.is_cuda or tensor.device != ref_device:" in new
    assert "return t.device if t.is_cuda else" not in new
    assert any(code == "BACK006" and line == 8 for code, line, _ in found)
