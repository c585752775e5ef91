"""The thirty-fifth read of the trace recorder and trace compare (helper `trace`,
docs/reads/53-trace-attempts.md): each test failed on 5a077b66 on the wrong outcome. The recorded
programs write their own losses (torch.testing.assert_close is the oracle)."""

import pytest
import torch

from tests.deps import need
from tests.verify.recording import compared, recorded

BODY = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
OPT
g = torch.Generator().manual_seed(3223)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
BACKWARD
    opt.step()
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""
ONE_ADAM = "opt = torch.optim.Adam(m.parameters(), lr=1e-2)"
WHOLE = """    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())"""
# the first layer's parameters stepped and zeroed by their post-accumulate-grad hooks (one `Adam`
# a parameter), the last layer's by an `Adam` after the backward: the same updates as one `Adam`
HOOKED = """opt = torch.optim.Adam(m[2].parameters(), lr=LR)
per = {p: torch.optim.Adam([p], lr=1e-2) for p in m[0].parameters()}
def hook(p):
    per[p].step()
    per[p].zero_grad()
for p in m[0].parameters():
    p.register_post_accumulate_grad_hook(hook)"""
# two micro-batches of two, each loss halved: the batch's gradient
MICRO = """    loss = 0.0
    for xs, ys in ((x[:2], y[:2]), (x[2:], y[2:])):
        part = ((m(xs) - ys) ** 2).mean() / 2
        part.backward()
        loss += part.item()
    own.append(loss)"""


def _program(opt: str = ONE_ADAM, backward: str = WHOLE) -> str:
    return BODY.replace("OPT", opt).replace("BACKWARD", backward)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    need("torch")
    return recorded(tmp_path_factory.mktemp("whole"), _program(), 3, "whole")


def test_a_port_stepping_some_parameters_in_the_backward_and_the_rest_after_it_passes(whole, tmp_path, monkeypatch):
    """The counted optimizer steps after the backward, others inside it (their parameters'
    post-accumulate-grad hooks): its gradient norm was its own parameters' alone, and against one
    optimizer over the model (the programs' losses equal) FAILed "the gradient norm differs at step
    1: reference 2.28768, ported 1.61774". The step's norm is that of every optimizer stepped since
    the last: PASS both ways; the same port at another rate still FAILs."""
    ref, ref_own = whole
    port, port_own = recorded(tmp_path, _program(HOOKED.replace("LR", "1e-2")), 3, "hooked")
    torch.testing.assert_close(torch.tensor(port_own), torch.tensor(ref_own))
    for a, b in ((ref, port), (port, ref)):
        res, said = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "pass", said
    bad, _ = recorded(tmp_path, _program(HOOKED.replace("LR", "2e-2")), 3, "hooked_bad")
    res, said = compared(monkeypatch, ref.trace, bad.trace)
    assert res.verdict == "fail" and "learning rate differs" in said, said


def test_a_later_call_of_a_layer_the_port_calls_is_not_said_applied_by_a_function(tmp_path):
    """A reference accumulating two micro-batches against a port taking the batch whole (recorded
    in the read: the programs' losses equal): the reference's second calls of the layers the port
    calls once were "not compared ... never called in the port, its parameters applied by a
    function (F.linear on its weights ...)", untrue of a layer the port called, and a head the
    port calls once where the reference calls it twice PASSed unsaid. Such a call is one the port
    does not make; a head never called, its weights applied by a function, is still not compared."""
    need("safetensors")
    from porter.verify.tracecmp import compare_traces
    from tests.verify.test_thirty_fourth_read_trace2 import _headed_trace

    both = [["fc.weight", "head.weight"]]
    ref = _headed_trace(tmp_path / "r.safetensors", "cpu (reference; CUDA shim)", ("fc", "head", "head#2"), both, 0)
    port = _headed_trace(tmp_path / "p.safetensors", "xla (CPU PJRT, emulated)", ("fc", "head"), both, 0)
    res = compare_traces(ref, port)
    row = next(m for m in res.modules if m["module"] == "head#2")
    assert not row.get("weights_applied") and row.get("passed") is False, (res.reasons, row)
    assert res.verdict == "fail" and not any("applied by a function" in w for w in res.warnings), res.reasons
    only = _headed_trace(tmp_path / "o.safetensors", "xla (CPU PJRT, emulated)", ("fc",), both, 0)
    row = next(m for m in compare_traces(ref, only).modules if m["module"] == "head")
    assert row.get("weights_applied") and not row["compared"], row
