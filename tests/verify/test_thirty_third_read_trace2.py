"""The thirty-third read's second wave on the recorder and the compare (helper `trace2`,
docs/reads/51-trace2-attempts.md): what the first wave added (the module holding layers called one
by one named the model; a `zero_grad` dropping the losses before it). Each test records real
programs (subprocesses, as `porter trace record` runs them) and checks porter's verdict against
the programs' own values, taken without porter (torch.testing.assert_close is the oracle)."""

from __future__ import annotations

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# a backbone and a head trained 3 Adam steps, called one after the other; HOLD builds the
# optimizer; each step writes its loss and the gradient norm, as the program takes them
_PARTS = """\
import json, sys
import torch
torch.manual_seed(0)
bb = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh())
head = torch.nn.Linear(8, 3)
HOLD
g = torch.Generator().manual_seed(3170)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((head(bb(x)) - y) ** 2).mean()
    loss.backward()
    params = [*bb.parameters(), *head.parameters()]
    own.append([loss.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in params])).item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""
_CHAINED = "import itertools\nopt = torch.optim.Adam(itertools.chain(bb.parameters(), head.parameters()), lr=1e-2)"
_LISTED = "both = torch.nn.ModuleList([bb, head])\nopt = torch.optim.Adam(both.parameters(), lr=1e-2)"


@pytest.mark.slow
def test_a_port_keeping_its_parts_in_a_modulelist_passes(tmp_path, monkeypatch):
    """A port that keeps its backbone and head in a `ModuleList` (to hand the optimizer their
    parameters), both called as before: the same losses and norms, yet it FAILed both ways on the
    names alone ("parameters on one side only: reference ['0.weight', ..., '<Linear>.weight'],
    ported ['0.0.weight', ..., '1.weight']"): the list, never called, was named the model. A
    module without a forward of its own is never the one a program calls: PASS."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _PARTS.replace("HOLD", _CHAINED), 3, "chained")
    port, own_port = recorded(tmp_path, _PARTS.replace("HOLD", _LISTED), 3, "listed")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for a, b in ((ref, port), (port, ref)):
        res, said = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "pass", said
        assert "one side only" not in said, said


# a model whose forward walks its `ModuleList`; CALL calls it, or walks the list by hand
_BLOCKS = """\
import json, sys
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)])
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x
torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
def forward(x):
    CALL
g = torch.Generator().manual_seed(3171)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((forward(x) - y) ** 2).mean()
    loss.backward()
    own.append([loss.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in net.parameters()])).item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""
_BY_HAND = """for b in net.blocks:
        x = b(x)
    return x"""


@pytest.mark.slow
def test_a_port_walking_its_models_modulelist_by_hand_passes(tmp_path, monkeypatch):
    """A port walking its model's `ModuleList` by hand against a reference calling the model: the
    list (the smallest module never called holding every layer) was named the model, its layers
    `0`, `2` against the reference's `blocks.0`, `blocks.2`: FAIL on the names alone. The model
    holding the list is named now: PASS."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _BLOCKS.replace("CALL", "return net(x)"), 3, "called")
    port, own_port = recorded(tmp_path, _BLOCKS.replace("CALL", _BY_HAND), 3, "walked")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said
    assert {"blocks.0", "blocks.2"} <= {r["module"] for r in res.modules if r["compared"]}, res.modules


# a WGAN whose generator G (the larger: the optimizer counted) steps every fifth iteration, first
# in it; the critic D steps at every iteration after it, on its own loss (G's output detached);
# G's gradients are zeroed BEFORE its backward, or AFTER its step; each of G's steps writes its loss
# and gradient norm
_WGAN = """\
import json, sys
import torch
torch.manual_seed(0)
G = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 6))
D = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
og = torch.optim.Adam(G.parameters(), lr=1e-3)
od = torch.optim.Adam(D.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(3172)
own = []
for i in range(15):
    z, real = torch.randn(8, 4, generator=g), torch.randn(8, 6, generator=g)
    if i % 5 == 0:
        gl = -D(G(z)).mean()
        BEFORE
        gl.backward()
        own.append([gl.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in G.parameters()])).item()])
        og.step()
        AFTER
    dl = D(G(z).detach()).mean() - D(real).mean()
    od.zero_grad()
    dl.backward()
    od.step()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_a_generator_zeroing_after_its_step_has_its_steps_own_loss(tmp_path, monkeypatch):
    """The counted generator steps every fifth iteration; the critic's four backward calls
    between (their gradients the critic's alone) were summed into the generator's step loss
    unless the generator zeroed its gradients right before its backward: zeroing them after its
    step instead (the same updates) FAILed "the loss curves part at step 2". A step's loss is now
    the backward calls that reached the counted optimizer's parameters: both record the
    program's own losses, and PASS."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _WGAN.replace("BEFORE", "og.zero_grad()").replace("AFTER", ""), 3, "before")
    port, own_port = recorded(tmp_path, _WGAN.replace("BEFORE", "").replace("AFTER", "og.zero_grad()"), 3, "after")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for rec, values in ((ref, own), (port, own_port)):
        got = [[s["loss"], s["grad_norm"]] for s in rec.trace.manifest["steps"]]
        torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), torch.tensor(values, dtype=torch.float64))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said


# a Sequential of two Sequentials and a Linear; CALL calls it, or calls its leaf layers one by one
_NESTED = """\
import json, sys
import torch
torch.manual_seed(0)
S = torch.nn.Sequential
m = S(S(torch.nn.Linear(6, 8), torch.nn.Tanh()), S(torch.nn.Linear(8, 8), torch.nn.Tanh()), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
def forward(x):
    CALL
g = torch.Generator().manual_seed(3173)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((forward(x) - y) ** 2).mean()
    loss.backward()
    own.append([loss.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()])).item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""
_LEAVES = """for layer in m.modules():
        if not list(layer.children()):
            x = layer(x)
    return x"""


@pytest.mark.slow
def test_a_port_calling_nested_sequentials_leaf_layers_one_by_one_passes(tmp_path, monkeypatch):
    """A port calling the leaf layers of its nested `Sequential`s one by one against a reference
    calling the outer one: the outer's output was set aside, but the inner containers' FAILed
    "first diverging module at step 1: 0: not called on the ported side", every layer inside them
    agreeing. A container the port never calls, whose layers it calls, is set aside as the model
    is: PASS; a port scaling one inner container's output still FAILs at the layer after it."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _NESTED.replace("CALL", "return m(x)"), 3, "whole")
    port, own_port = recorded(tmp_path, _NESTED.replace("CALL", _LEAVES), 3, "leaves")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said
    assert "other shapes" not in said, said  # (the model's row was said so)
    inner = [r for r in res.modules if r["module"] in ("0", "1")]
    assert len(inner) == 2 and not any(r["compared"] for r in inner), inner
    assert {"0.0", "1.0", "2"} <= {r["module"] for r in res.modules if r["compared"]}, res.modules
    scaled = _LEAVES.replace("x = layer(x)", "x = layer(x) * (1.01 if layer is m[1][1] else 1.0)")
    changed, own_changed = recorded(tmp_path, _NESTED.replace("CALL", scaled), 3, "scaled")
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_changed), torch.tensor(own))
    res, said = compared(monkeypatch, ref.trace, changed.trace)
    assert res.verdict == "fail", said
    assert res.first_divergence is not None and res.first_divergence["module"] == "2", said
