"""The thirty-sixth read of the trace compare (helper `trace`, docs/reads/54-trace-attempts.md):
each test failed on c5b375fb on the wrong outcome. The recorded programs write their own losses and
their parameters after each step (torch.testing.assert_close is the oracle)."""

import copy
import dataclasses

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded, same_training

BODY = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
opt = torch.optim.Adam(m.parameters(), lr=LR)
g = torch.Generator().manual_seed(3264)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    EVAL
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""
# a validation batch of the training batch's shape, between the backward and the step
EVAL = """with torch.no_grad():
        m(torch.randn(4, 6, generator=torch.Generator().manual_seed(99)))"""


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory):
    """The same training without an evaluation and with one between the backward and the step;
    and with it at another learning rate (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("evaluations")
    forms = {
        "plain": ("1e-2", "pass"),
        "evaluated": ("1e-2", EVAL),
        "evaluated_lr": ("2e-2", EVAL),
    }
    return {
        name: recorded(where, BODY.replace("LR", lr).replace("EVAL", ev), 3, name) for name, (lr, ev) in forms.items()
    }


def test_a_reference_evaluating_between_backward_and_step_passes_against_a_port_that_does_not(evaluations, monkeypatch):
    (plain, plain_own), (evaluated, evaluated_own) = evaluations["plain"], evaluations["evaluated"]
    assert same_training(plain_own, evaluated_own)  # the oracle: the same losses and weights
    for ref, port in ((evaluated, plain), (plain, evaluated)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "pass", said
    res, said = compared(monkeypatch, evaluated.trace, plain.trace)
    assert "made with gradients off" in said and "not called on the ported side" not in said


def test_an_unfaithful_port_of_an_evaluating_reference_still_fails(evaluations, monkeypatch):
    """The control: the evaluation's call left out, the port's other rate still FAILs; and a trace
    without the mark (an older porter's) FAILs on the missing call as before."""
    (evaluated, evaluated_own), (bad, bad_own) = evaluations["evaluated"], evaluations["evaluated_lr"]
    plain = evaluations["plain"][0]
    assert not same_training(evaluated_own, bad_own)
    for ref, port in ((evaluated, bad), (bad, evaluated)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
    manifest = copy.deepcopy(evaluated.trace.manifest)
    for e in manifest.get("modules") or []:
        e.pop("nograd", None)
    old = dataclasses.replace(evaluated.trace, manifest=manifest)
    res, said = compared(monkeypatch, old, plain.trace)
    assert res.verdict == "fail" and "not called on the ported side" in said, said
