"""The thirty-second read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/50-trace-attempts.md). Each test records a real program (a subprocess, as `porter trace
record` runs it) and checks porter's view against the program's own values, taken without porter
(torch.testing.assert_close is the oracle)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# a small MLP trained 3 steps by OPT; each step writes its loss and gradient norm, as the program
# itself takes them
_PROGRAM = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
BUILD
g = torch.Generator().manual_seed(3124)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()]))
    own.append([loss.item(), norm.item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""

_PLAIN = "opt = torch.optim.Adam(m.parameters(), lr=1e-2)"

# an Adam subclass whose step calls the parent's, beside a plain Adam built first (a second model's,
# say): the parent's `step` is hooked too, so the step hooks run twice in each step
_SUBCLASS = """\
class MyAdam(torch.optim.Adam):
    def step(self, closure=None):
        return super().step(closure)
torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=1e-2)
opt = MyAdam(m.parameters(), lr=1e-2)"""


def _recorded(tmp_path: Path, name: str, build: str):
    """The trace of the program built by `build`, and its own losses and gradient norms."""
    rec, own = recorded(tmp_path, _PROGRAM.replace("BUILD", build), 3, name)
    return rec.trace, own


@pytest.mark.slow
def test_an_optimizer_subclass_calling_its_parents_step_is_one_step_per_iteration(tmp_path, monkeypatch):
    """An `Adam` subclass whose `step` calls `super().step()`, with a plain `Adam` built in the same
    process, runs the step hooks twice: each iteration was recorded as two steps, the second
    without a loss ("the port's loss is not recorded at 1 step(s) ... torch.func.grad"), and against
    the plain `Adam` (the same updates) it FAILed "the gradient norm differs at step 2". The
    outermost step alone is recorded now: the program's losses and norms, and the two PASS."""
    torch = need("torch")
    plain, own = _recorded(tmp_path, "plain", _PLAIN)
    sub, own_sub = _recorded(tmp_path, "subclass", _SUBCLASS)
    torch.testing.assert_close(torch.tensor(own_sub), torch.tensor(own))
    steps = sub.manifest["steps"]
    got = [[s["loss"], s["grad_norm"]] for s in steps]
    torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), torch.tensor(own_sub, dtype=torch.float64))
    res, said = compared(monkeypatch, plain, sub)
    assert res.verdict == "pass", said


def test_buffers_only_the_port_recorded_are_not_called_module_outputs():
    """A port moving `torch.nn.utils.spectral_norm` to its parametrization records the buffers
    `2.parametrizations.weight.0._u` and `_v` the reference names otherwise: the line said "4
    module output(s) at step 1 only the port recorded", two of them buffers, which no module
    outputs. Buffers are counted apart; a line without buffers reads as before."""
    from porter.verify.tracecmp import _added_modules

    out = {"shape": [3], "dtype": "float32", "stats": "b0.stats", "sample": "b0.sample"}
    ref = {"modules": [{"key": "2", "outputs": [out]}], "buffers": [{"key": "2.weight_u", "type": "buffer"}]}
    port = {
        "modules": [{"key": "2", "outputs": [out]}, {"key": "2.parametrizations.weight.0", "outputs": [out]}],
        "buffers": [
            {"key": k, "type": "buffer"} for k in ("2.parametrizations.weight.0._u", "2.parametrizations.weight.0._v")
        ],
    }
    # the reference's `2.weight_u` is the port's `..._u` (paired since the thirty-third read)
    assert _added_modules(ref, port) == [
        "1 module output(s) and 1 buffer(s) at step 1 only the port recorded, not compared: "
        "2.parametrizations.weight.0, 2.parametrizations.weight.0._v"
    ]
    assert _added_modules(ref, {**port, "buffers": []}) == [
        "1 module output(s) at step 1 only the port recorded, not compared: 2.parametrizations.weight.0"
    ]
    assert _added_modules(ref, {**port, "modules": port["modules"][:1]}) == [
        "1 buffer(s) at step 1 only the port recorded, not compared: 2.parametrizations.weight.0._v"
    ]
