"""The thirty-third read's trace leftovers (helper `trleft`, docs/reads/51-trleft-attempts.md). Each
test records real programs (subprocesses, as `porter trace record` runs them) and checks porter's
verdict against the programs' own values, taken without porter (torch.testing.assert_close is the
oracle)."""

from __future__ import annotations

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# a small MLP trained 3 steps by Adam, its forward written as CALL; each step writes its loss and
# gradient norm, as the program itself takes them
_PROGRAM = """\
import json, sys
import torch
from torch.utils.checkpoint import checkpoint_sequential
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
def forward(x):
    CALL
g = torch.Generator().manual_seed(3160)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((forward(x) - y) ** 2).mean()
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()]))
    own.append([loss.item(), norm.item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""

_WHOLE = "return m(x)"
_LOOP = """for layer in m:
        x = layer(x)
    return x"""
_CHECKPOINTED = "return checkpoint_sequential(m, 2, x, use_reentrant=False)"


def _recorded(tmp_path, name: str, call: str):
    rec, own = recorded(tmp_path, _PROGRAM.replace("CALL", call), 3, name)
    return rec.trace, own


@pytest.mark.slow
@pytest.mark.parametrize("call", [_LOOP, _CHECKPOINTED], ids=["loop", "checkpoint_sequential"])
def test_a_port_calling_its_sequentials_layers_one_by_one_passes(tmp_path, monkeypatch, call):
    """A port calling its `Sequential`'s layers one by one (a loop, `checkpoint_sequential`)
    against a reference calling the container: the same losses and norms (the programs' own), yet
    it FAILed on names alone ("parameters on one side only: reference ['0.bias', ...], ported
    ['<Linear>.bias', ...]"): the first layer called was named the model. The module holding every
    layer called is found and named the model now; its own output, never called on the port, is
    said and not compared."""
    torch = need("torch")
    ref, own = _recorded(tmp_path, "whole", _WHOLE)
    port, own_port = _recorded(tmp_path, "layers", call)
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "pass", said
    names = {r["module"] for r in res.modules if r["compared"]}
    assert {"0", "1", "2"} <= names, res.modules
    (model,) = [r for r in res.modules if r["module"] == "(model)"]
    assert not model["compared"] and "one by one" in model["problem"], model
    back, said_back = compared(monkeypatch, port, ref)
    assert back.verdict == "pass", said_back
    assert "only the port recorded, not compared: (model)" in said_back


# (the forward's body, then the layer made spectral and the optimizer made again, at the top level)
_SPECTRAL = "return m(x)\nm[2] = torch.nn.utils.FORM(m[2])\nopt = torch.optim.Adam(m.parameters(), lr=1e-2)"


@pytest.mark.slow
def test_spectral_norms_hook_form_against_its_parametrization_fails_on_the_values(tmp_path, monkeypatch):
    """`torch.nn.utils.spectral_norm` (a hook form: `2.weight_orig`, buffers `2.weight_u`, `_v`)
    against its parametrization (`2.parametrizations.weight.original`, `...0._u`, `_v`): the
    parametrization runs 15 power iterations when made, so the programs' own losses differ and a
    FAIL is due; it FAILed on the names alone ("parameters on one side only"). The two forms'
    names are paired now, and the FAIL says where the values part."""
    torch = need("torch")
    ref, own = _recorded(tmp_path, "old", _SPECTRAL.replace("FORM", "spectral_norm"))
    port, own_port = _recorded(tmp_path, "new", _SPECTRAL.replace("FORM", "parametrizations.spectral_norm"))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_port)[:, 0], torch.tensor(own)[:, 0])
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "fail", said
    assert "one side only" not in said and "not in the port" not in said, said
    assert res.first_divergence is not None, said
    # the power iteration's buffers are paired too (each was said to be the port's alone)
    assert "weight.0._u" not in said, said


# a GAN: the generator G steps every iteration, the larger critic D every fifth; the critic's loss is
# taken at every iteration, its backward run at each (its gradients zeroed where it does not step) or,
# ONLY_STEPPED, only where it steps; each of D's steps writes that iteration's critic loss and D's
# gradient norm
_GAN = """\
import json, sys
import torch
torch.manual_seed(0)
G = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 6))
D = torch.nn.Sequential(torch.nn.Linear(6, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
og = torch.optim.Adam(G.parameters(), lr=1e-3)
od = torch.optim.Adam(D.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(3163)
own = []
for i in range(15):
    z, real = torch.randn(8, 4, generator=g), torch.randn(8, 6, generator=g)
    dl = D(G(z).detach()).mean() - D(real).mean()
    if i % 5 == 4 or not ONLY_STEPPED:
        dl.backward()
    if i % 5 == 4:
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in D.parameters()]))
        own.append([dl.item(), norm.item()])
        od.step()
    od.zero_grad()
    gl = -D(G(z)).mean()
    og.zero_grad(); gl.backward(); og.step(); od.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_a_critic_stepping_every_fifth_iteration_has_its_steps_own_loss(tmp_path, monkeypatch):
    """The larger optimizer (a critic's) is the one counted; it steps every fifth iteration. Every
    backward since its last step was summed as its step's loss (-1.29 for the program's -0.167:
    five iterations' critic and generator losses, their gradients zeroed), so a faithful port
    running the critic's backward only where it steps FAILed "the loss curves part at step 1". A
    `zero_grad` of the counted optimizer's parameters now drops the losses before it: the recorded
    losses are the program's own, and the two PASS."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _GAN.replace("ONLY_STEPPED", "False"), 3, "every")
    port, own_port = recorded(tmp_path, _GAN.replace("ONLY_STEPPED", "True"), 3, "stepped")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said
    for rec, values in ((ref, own), (port, own_port)):
        got = [[s["loss"], s["grad_norm"]] for s in rec.trace.manifest["steps"]]
        torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), torch.tensor(values, dtype=torch.float64))
