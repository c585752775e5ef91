"""GEN001: what a device-generic project keeps for CUDA on neuron and tpu is reported, one
info finding per kept line, and nothing else changes."""

from __future__ import annotations

import textwrap

import pytest

from porter.pipeline.findings import Severity
from tests.helpers import port
from tests.test_device_generic import TOOLS_UTILS

EXTRA = textwrap.dedent('''

def cudagraph_enabled(utils):
    return (
        utils.device_type == "cuda"
        and torch.cuda.is_available()
        and torch.version.hip is None
    )


def seed(s):
    torch.manual_seed(s)
    torch.cuda.manual_seed(s)


model = torch.compile(model)
''')

KEPT = [
    '`_get_available_device_type() or "cuda"`, whose `"cuda"` is only the fallback',
    "the CUDA switch `torch.backends.cudnn.deterministic`",
    "the CUDA switch `torch.backends.cudnn.benchmark`",
    "the CUDA switch `torch.backends.cuda.matmul.allow_tf32`",
    "the CUDA switch `torch.backends.cudnn.allow_tf32`",
    '`device_type != "cuda"`, a test of the device type torch selected',
    '`utils.device_type == "cuda"`, a test of the device type torch selected',
    "`torch.cuda.is_available()` beside a test of the device type torch selected",
    "`torch.cuda.manual_seed(s)` after `torch.manual_seed` with the same seed",
    "`torch.compile` without a backend",
]


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_every_kept_line_is_reported(target):
    code = TOOLS_UTILS + EXTRA
    new, findings = port(code, target)
    assert new == code
    kept = [f for f in findings if f.code == "GEN001"]
    assert all(f.severity is Severity.INFO and not f.applied for f in kept)
    messages = [f.message for f in kept]
    for what in KEPT:
        assert sum(m.startswith(what) for m in messages) == 1, (what, messages)
    assert len(kept) == len(KEPT)


def test_nothing_is_kept_on_xla():
    """xla ports the selection itself (its device is no torch.accelerator): nothing is kept."""
    _, findings = port(TOOLS_UTILS + EXTRA, "xla")
    assert not [f for f in findings if f.code == "GEN001"]


def test_a_project_that_names_cuda_keeps_nothing_and_reports_nothing():
    code = "import torch\ntorch.backends.cudnn.benchmark = True\nmodel = torch.compile(model)\n"
    new, findings = port(code, "neuron")
    assert "cudnn" not in new and 'backend="neuron"' in new
    assert not [f for f in findings if f.code == "GEN001"]
