"""XLA006/XLA007: what torch_xla 2.9 does not run, said and counted against readiness.

The twentieth trace read ported a training program with `porter rewrite --target xla`, which
said 100% readiness; the port failed on XLA:CPU at `torch.utils.checkpoint.checkpoint(...,
use_reentrant=False)` (`module 'torch' has no attribute 'xla'`) and under
`torch.inference_mode()` (`Cannot set version_counter for inference tensor`). The snippets
are modelled on that program. No evidence that TorchNeuron or TorchTPU fail on either: those
ports stay silent. The last test runs the constructs and the advised spellings on XLA:CPU.
"""

from __future__ import annotations

import json

import pytest

from porter.config.ruledata import Applicability
from tests.helpers import port
from tests.programs import run_programs

TRAIN = """\
import torch
import torch.utils.checkpoint as cp
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.fc, x, use_reentrant=False)


def body(a, b, x):
    x = cp.checkpoint(a, x, use_reentrant=False)
    x = checkpoint(b, x)
    x = checkpoint_sequential(torch.nn.Sequential(a, b), 2, x, use_reentrant=False)
    return checkpoint_sequential([a], 1, x, use_reentrant=False)


model = Block().cuda()
"""

EVAL = """\
import torch
from torch import inference_mode


@torch.inference_mode()
def predict(model, x):
    return model(x)


@torch.inference_mode
def score(model, x):
    return model(x)


def evaluate(model, x):
    with torch.inference_mode():
        y = model(x)
    with inference_mode(mode=True):
        y = model(y)
    with torch.inference_mode(False):
        z = model(x)
    return y, z


model = torch.nn.Linear(8, 8).cuda()
"""


def _codes(findings, code):
    return [f for f in findings if f.code == code]


def test_torch_checkpoint_is_left_for_a_person_on_xla():
    new, findings = port(TRAIN, "xla")
    found = _codes(findings, "XLA006")
    # the method's call, the module alias, the plain import, checkpoint_sequential; not one
    # segment, which checkpoint_sequential runs without a checkpoint (it ran on XLA:CPU)
    assert [f.start.line for f in found] == [12, 16, 17, 18]
    assert all(f.applicability is Applicability.MANUAL and not f.applied for f in found)
    assert "torch_xla.utils.checkpoint.checkpoint" in (found[0].advice or "")
    assert "no attribute 'xla'" in found[0].message
    assert new.count("checkpoint(") == TRAIN.count("checkpoint(")  # reported, not rewritten


def test_inference_mode_is_left_for_a_person_on_xla():
    new, findings = port(EVAL, "xla")
    found = _codes(findings, "XLA007")
    # the called and the bare decorator, the `with` (also through `from torch import`); not
    # `inference_mode(False)`, which turns the mode off
    assert [f.start.line for f in found] == [5, 10, 16, 18]
    assert all(f.applicability is Applicability.MANUAL and not f.applied for f in found)
    assert "torch.no_grad()" in (found[0].advice or "")
    assert "Cannot set version_counter" in found[0].message
    assert new.count("inference_mode") == EVAL.count("inference_mode")


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_no_finding_where_no_target_evidence(target):
    for code in (TRAIN, EVAL):
        _, findings = port(code, target)
        assert not [f for f in findings if f.code in ("XLA006", "XLA007")]


@pytest.mark.xla
@pytest.mark.slow
def test_the_evidence_on_xla_cpu(tmp_path):
    """Each construct the rules flag fails on XLA:CPU with the error they quote, and what the
    advice names runs: torch_xla's reentrant checkpoint (same gradient as without it) and
    `torch.no_grad()` (same output as on the CPU)."""
    script = tmp_path / "evidence.py"
    script.write_text(
        """\
import json, sys
import torch, torch_xla
import torch.utils.checkpoint as cp
from torch_xla.utils.checkpoint import checkpoint as xla_checkpoint

torch.manual_seed(0)
fc = torch.nn.Linear(4, 4)
x0 = torch.randn(2, 4)
dev = torch_xla.device()
m = torch.nn.Linear(4, 4).to(dev)
m.load_state_dict(fc.state_dict())
out = {}
for name, run in [
    ("nonreentrant", lambda x: cp.checkpoint(m, x, use_reentrant=False)),
    ("reentrant", lambda x: cp.checkpoint(m, x, use_reentrant=True)),
    ("sequential", lambda x: cp.checkpoint_sequential(torch.nn.Sequential(m, torch.nn.Identity()), 2, x, use_reentrant=False)),
    ("one_segment", lambda x: cp.checkpoint_sequential(torch.nn.Sequential(m), 1, x, use_reentrant=False)),
    ("xla", lambda x: xla_checkpoint(m, x)),
]:
    x = x0.clone().to(dev).requires_grad_()
    try:
        run(x).sum().backward()
        torch_xla.sync()
        out[name] = x.grad.cpu().flatten().tolist()
    except Exception as e:
        out[name] = repr(e)
x = x0.to(dev)
try:
    with torch.inference_mode():
        m(x)
    out["inference_mode"] = "ran"
except Exception as e:
    out["inference_mode"] = repr(e)
with torch.no_grad():
    out["no_grad"] = m(x).cpu().flatten().tolist()
ref = x0.clone().requires_grad_()
fc(ref).sum().backward()
out["cpu_grad"] = ref.grad.flatten().tolist()
out["cpu_out"] = fc(x0).detach().flatten().tolist()
json.dump(out, open(sys.argv[1], "w"))
"""
    )
    result = tmp_path / "out.json"
    (run,) = run_programs([(script, [str(result)], tmp_path)], tmp_path, xla=True)
    assert run.rc == 0, run.stdout[-2000:] + run.stderr[-4000:]
    out = json.loads(result.read_text())
    for name in ("nonreentrant", "reentrant", "sequential"):
        assert "has no attribute 'xla'" in out[name] or "no module of `xla`" in out[name], (name, out[name])
    assert "Cannot set version_counter for inference tensor" in out["inference_mode"]
    # one segment: checkpoint_sequential runs its last segment without a checkpoint
    for name in ("xla", "one_segment"):
        assert out[name] == pytest.approx(out["cpu_grad"], abs=1e-5), name
    assert out["no_grad"] == pytest.approx(out["cpu_out"], abs=1e-5)
