"""The thirty-fourth read's leftovers of real packages, closed (rpleft): CUDA's autocast state asked
with no device type, checked against torch 2.9 and 2.13 themselves; the generator on a device from a
variable on xla; Helion's Pallas backend; XLA006/XLA007 in CUDA-only code; a project's own `cuda`
module; nccl4py."""

from __future__ import annotations

import pytest


def _port_package(tmp_path, text, target, name="amp.py"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    pkg = tmp_path / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / name).write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    result = next(r for r in results if str(r.path).endswith(name))
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.message) for f in result.findings]


# a device switch whose CUDA branch asks CUDA's autocast state in torch's no-device spelling
AUTOCAST_STATE = """import torch


def autocast_enabled(device_type):
    if device_type == 'cuda':
        enabled = CALL
    elif device_type == 'cpu':
        enabled = torch.is_autocast_cpu_enabled()
    elif device_type == 'npu':
        enabled = False
    else:
        enabled = False
    return enabled
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
@pytest.mark.parametrize(
    "call", ["torch.is_autocast_enabled()", "torch.set_autocast_enabled(True)"], ids=["is_enabled", "set_enabled"]
)
def test_cudas_branch_that_asks_cudas_autocast_state_with_no_device_type_is_not_copied(tmp_path, call, target):
    """torch 2.9 and 2.13: `is_autocast_enabled()` with no argument is CUDA's state (False inside
    `torch.autocast("cpu")`), `set_autocast_enabled(True)` sets `is_autocast_enabled("cuda")`. BACK002
    copied CUDA's branch for the target, so the target's branch asked (or set) CUDA's autocast."""
    new, findings = _port_package(tmp_path, AUTOCAST_STATE.replace("CALL", call), target)
    assert new.count(call) == 1, new
    said = [m for code, m in findings if code == "BACK002"]
    qual = call.split("(")[0]
    assert said and f"`{qual}`, CUDA's autocast state" in said[0]


def test_the_autocast_state_of_a_device_type_given_is_still_copied(tmp_path):
    """The control: `is_autocast_enabled(device_type)` asks about the device the switch is on."""
    new, _ = _port_package(tmp_path, AUTOCAST_STATE.replace("CALL", "torch.is_autocast_enabled(device_type)"), "tpu")
    assert "elif device_type == 'tpu':\n        enabled = torch.is_autocast_enabled(device_type)" in new


CUDA_GUARD = """import torch

_FAST_PATH = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)
"""
# XLA006 and XLA007 sites in code that only runs where the guard (CUDA, capability 8.0) holds, and
# the same sites unguarded (the controls)
GUARDED_AUTOGRAD = """import torch
from torch.utils.checkpoint import checkpoint

from pkg.guard import _FAST_PATH


def forward(layer, x):
    if _FAST_PATH:
        x = x.to("cuda")
        with torch.inference_mode():
            y = layer(x)
        return checkpoint(layer, y, use_reentrant=False)
    return layer(x)


def plain(layer, x):
    with torch.inference_mode():
        y = layer(x)
    return checkpoint(layer, y, use_reentrant=False)
"""


def test_xla006_and_xla007_in_code_that_only_runs_on_cuda_are_left_to_the_guard(tmp_path):
    """52-hfleft kept XLA008 out of code GUARD003 says only runs on CUDA; XLA006 and XLA007 (the same
    family) still said "raises on XLA tensors" there, for code XLA never runs. Now the unguarded
    lines (the controls) are reported, the guarded ones left to GUARD003."""
    from tests.helpers import port_files, write_files

    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/guard.py": CUDA_GUARD, "pkg/model.py": GUARDED_AUTOGRAD})
    found = [(f.code, f.start.line) for f in port_files(tmp_path, "xla")["pkg/model.py"][1]]
    assert sorted((code, line) for code, line in found if code in ("XLA006", "XLA007")) == [
        ("XLA006", 19),
        ("XLA007", 17),
    ]
    assert any(code == "GUARD003" for code, _ in found)


# apollo-torch 1.0.3 `random_projector.py`, cut down: a generator on the device of a parameter, and one
# on the module's device, which the port makes the XLA device
GENERATOR = """import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def project(p, rank):
    g = torch.Generator(device=p.device)
    g.manual_seed(0)
    return torch.randn(p.shape[0], rank, generator=g, device=p.device)


def make():
    return torch.Generator(device)


def on_cpu():
    return torch.Generator(), torch.Generator(device="cpu"), torch.Generator(device=torch.device("cpu"))
"""


@pytest.mark.parametrize("target", ["xla", "tpu", "neuron"])
def test_a_generator_on_a_device_porter_cannot_see_is_reported_on_xla(tmp_path, target):
    """torch_xla 2.9: `torch.Generator(device=torch_xla.device())` and `device=x.device` of an XLA tensor
    raise `XLA device type not an accelerator` (seen on XLA:CPU). A literal `"cuda"` was kept and
    reported (DEV002, 52); a device in a variable got nothing on xla. XLA009 now, on xla only; the
    CPU generators (the controls) are not reported."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(GENERATOR)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    lines = [f.start.line for f in result.findings if f.code == "XLA009"]
    assert lines == ([7, 13] if target == "xla" else [])


@pytest.mark.parametrize("target", ["tpu", "xla"])
@pytest.mark.parametrize("call", ["torch.get_autocast_gpu_dtype()", "torch.is_autocast_enabled()"], ids=["dtype", "on"])
def test_a_cuda_test_whose_branch_reads_cudas_autocast_state_is_not_made_the_targets(tmp_path, call, target):
    """With no third device (no switch BACK002 reads), DEV005 made `device_type == 'cuda'` the target's
    test, so the target's branch read CUDA's autocast state (float16, where the target's autocast has
    its own dtype). It stays CUDA's now, reported; one finding, not BACK002's beside it."""
    text = AUTOCAST_STATE.replace("CALL", call).replace("    elif device_type == 'npu':\n        enabled = False\n", "")
    new, findings = _port_package(tmp_path, text, target)
    assert "if device_type == 'cuda':" in new
    said = [m for code, m in findings if code in ("DEV005", "BACK002")]
    assert len(said) == 1 and f"`{call.split('(')[0]}`, CUDA's autocast state" in said[0]
