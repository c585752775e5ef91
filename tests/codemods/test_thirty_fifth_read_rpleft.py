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
