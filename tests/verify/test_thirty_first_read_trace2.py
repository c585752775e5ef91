"""The thirty-first read's second wave on the recorder and the compare (`trace2` helper,
docs/reads/49-trace2-attempts.md): the first wave's additions (skipped scaler iterations, groups
added after step 1, the weight_norm name table) in combination, and traces of an older porter
against new ones. The recorded tests record real programs (a subprocess, as `porter trace record`
runs them) and check porter's verdict against the programs' own values, taken without porter
(torch.testing.assert_close)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded


def _recorded(tmp_path: Path, name: str, body: str, steps: int = 3):
    """The trace of `body` run as train.py, and the values it wrote itself (run without porter)."""
    rec, own = recorded(tmp_path, body, steps, name)
    return rec.trace, own


# two bias-free layers weight-normed by FORM (the deprecated hook form `torch.nn.utils.weight_norm`
# or its parametrization), frozen at step 1 and each added after it as its own group: ADDED gives
# (layer, lr) in the order added. Written: each layer's weight after two updates (g * v / |v|)
_WN_ADDED = """\
import json, sys
import torch
torch.manual_seed(3094)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16, bias=False), torch.nn.Tanh(),
                        torch.nn.Linear(16, 4, bias=False))
for k in (2, 4):
    FORM(m[k])
    m[k].requires_grad_(False)
opt = torch.optim.SGD(m[0].parameters(), lr=0.1)
g = torch.Generator().manual_seed(3095)
x, y = torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)
for step in range(2):
    m.zero_grad()
    torch.nn.functional.mse_loss(m(x), y).backward()
    opt.step()
    if step == 0:
        for layer, lr in ADDED:
            m[layer].requires_grad_(True)
            opt.add_param_group({"params": list(m[layer].parameters()), "lr": lr})
def weight(k):
    p = getattr(m[k], "parametrizations", None)
    g, v = (p.weight.original0, p.weight.original1) if p is not None else (m[k].weight_g, m[k].weight_v)
    return torch._weight_norm(v, g, 0).tolist()
if len(sys.argv) > 1:
    json.dump([weight(2), weight(4)], open(sys.argv[1], "w"))
"""
_OLD, _NEW = "torch.nn.utils.weight_norm", "torch.nn.utils.parametrizations.weight_norm"


def _wn_added(form: str, added: str) -> str:
    return _WN_ADDED.replace("FORM(", f"{form}(").replace("ADDED:", f"{added}:")


@pytest.mark.slow
def test_weight_norm_groups_added_after_step_one_are_paired_through_the_name_table(tmp_path, monkeypatch):
    """Groups added after step 1 are paired by the parameters they hold (the first wave's tleft),
    and weight_norm's two forms by a name table (the first wave's trace), but the pairing of the
    groups did not read the table: a port that moved to the parametrization and added the two
    groups in the other order at each other's rates (another training: assert_close on the
    weights) PASSed with `--steps 2`, the groups paired by their order. It now FAILs "the learning
    rate differs at step 2", naming the group; the faithful migration, groups in another order,
    PASSes with its rates compared."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _wn_added(_OLD, "((2, 0.01), (4, 0.001))"), steps=2)
    swap, own_swap = _recorded(tmp_path, "swap", _wn_added(_NEW, "((4, 0.01), (2, 0.001))"), steps=2)
    order, own_order = _recorded(tmp_path, "order", _wn_added(_NEW, "((4, 0.001), (2, 0.01))"), steps=2)
    for a, b in zip(own_ref, own_order):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_ref[0]), torch.tensor(own_swap[0]))
    res, said = compared(monkeypatch, ref, swap)
    assert res.verdict == "fail" and "the learning rate differs at step 2" in said, said
    assert "(the group holding 2.weight_g: reference 0.01, ported 0.001)" in said, said
    res, said = compared(monkeypatch, ref, order)
    assert res.verdict == "pass", said
    assert "paired by their order" not in said and "rates were not compared" not in said, said


def test_skipped_iterations_of_an_older_trace_are_not_said_as_none():
    """A trace of an older porter (db3dd76) has no `scaler_skipped`: read as 0, the same program
    recorded by the old porter and the new one (both skipped 2 iterations, the program's own count)
    was said "the GradScaler skipped ...: the reference's none, the port's 2". The older side's
    count is now said not recorded, and one that records no skip is still said none."""
    from porter.verify.tracecmp import _skipped_iterations

    old = {"steps": [{"loss": 1.0}, {"loss": 0.9}, {"loss": 0.8}]}  # (the fields db3dd76 wrote)
    new = {"steps": [{"loss": 1.0, "scaler_skipped": n} for n in (0, 1, 1)]}
    unscaled = {"steps": [{"loss": 1.0, "scaler_skipped": 0} for _ in range(3)]}
    for rm, pm, role in ((old, new, "reference"), (new, old, "port")):
        (said,) = _skipped_iterations(rm, pm)
        assert f"the {role}'s none" not in said and f"the {role}'s not recorded" in said, said
    (said,) = _skipped_iterations(unscaled, new)
    assert "the reference's none, the port's 2 (first before step 2)" in said, said


# two optimizers over disjoint parts of one model (SMALL: the first layer; the rest, the most
# gradient elements, counted), stepped in the order ORDER gives; an EMA updated at each iteration's
# end at the rate DECAY. Written: the EMA's weights after three iterations
_TWO_EMA = """\
import copy, json, sys
import torch
torch.manual_seed(3096)
m = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh(), torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
ema = copy.deepcopy(m).requires_grad_(False)
small = torch.optim.SGD(m[0].parameters(), lr=0.05)
big = torch.optim.SGD([*m[2].parameters(), *m[4].parameters()], lr=0.05)
g = torch.Generator().manual_seed(3097)
x, y = torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)
for it in range(4):
    small.zero_grad()
    big.zero_grad()
    torch.nn.functional.mse_loss(m(x), y).backward()
    for opt in ORDER:
        opt.step()
    with torch.no_grad():
        for e, p in zip(ema.parameters(), m.parameters()):
            e.lerp_(p, DECAY)
if len(sys.argv) > 1:
    json.dump([p.tolist() for p in ema.parameters()], open(sys.argv[1], "w"))
"""


def _two_ema(order: str, decay: float) -> str:
    return _TWO_EMA.replace("ORDER:", f"{order}:").replace("DECAY)", f"{decay})")


@pytest.mark.slow
def test_an_ema_rate_is_read_before_the_other_optimizer_moves_its_layers(tmp_path, monkeypatch):
    """Of two optimizers the counted one is the one with the most gradient elements (the first
    wave's trace), but the copies' rates were read at its own step: where the other stepped first,
    its layer had moved since the EMA's update, the rates read 0.186 (residual 0.11) for the
    program's 0.1, "not compared", and a port averaging at 0.2 PASSed. They are now read at the
    iteration's first step of any optimizer: the 0.2 port FAILs "averaged at another rate", the
    faithful port stepping in the other order PASSes with the rates compared. The oracle: the EMA's
    weights after the iterations (assert_close)."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _two_ema("(small, big)", 0.1))
    order, own_order = _recorded(tmp_path, "order", _two_ema("(big, small)", 0.1))
    rate, own_rate = _recorded(tmp_path, "rate", _two_ema("(small, big)", 0.2))
    for a, b in zip(own_ref, own_order):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_ref[2]), torch.tensor(own_rate[2]))
    res, said = compared(monkeypatch, ref, rate)
    assert res.verdict == "fail" and "is averaged at another rate after step 1: reference 0.1, ported 0.2" in said, said
    res, said = compared(monkeypatch, ref, order)
    assert res.verdict == "pass" and "their rates of averaging agree" in said, said


# a GAN's two optimizers, each over its own net and loss; GRADS: `backward` (loss.backward()) or
# `graph` (torch.autograd.grad(loss, params, create_graph=True), then p.grad =). Written: each
# iteration's two losses
_GAN_GRAPHED = """\
import json, sys
import torch
torch.manual_seed(3098)
D = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
G = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
od, og = torch.optim.SGD(D.parameters(), lr=0.05), torch.optim.SGD(G.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(3099)
real, z = torch.randn(16, 4, generator=gen), torch.randn(16, 2, generator=gen)
def grads(loss, params):
    params = list(params)
    if "GRADS" == "backward":
        loss.backward()
    else:
        for p, g in zip(params, torch.autograd.grad(loss, params, create_graph=True)):
            p.grad = g.detach()
out = []
for it in range(4):
    od.zero_grad()
    d_loss = torch.nn.functional.softplus(D(G(z).detach())).mean() + torch.nn.functional.softplus(-D(real)).mean()
    grads(d_loss, D.parameters())
    od.step()
    og.zero_grad()
    g_loss = torch.nn.functional.softplus(-D(G(z))).mean()
    grads(g_loss, G.parameters())
    og.step()
    out.append((d_loss.item(), g_loss.item()))
if len(sys.argv) > 1:
    json.dump(out, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_two_optimizers_losses_taken_with_a_graph_are_recorded_as_backward_ones(tmp_path, monkeypatch):
    """The graphed calls kept as the step's loss were those of the counted optimizer's parameters
    (the first wave's tleft): a GAN's critic counted (the only one holding gradients at step 1), the
    generator's loss taken before the critic's next step was dropped where the port took both with
    `create_graph=True`, while `backward` keeps every call's: the same losses (assert_close)
    FAILed "the loss curves part at step 2: reference 2.05533, ported 1.45446". Graphed calls of
    any optimizer's parameters are now kept: PASS, the recorded losses alike (since the thirty-third
    read, step 2's is the critic's own: its `zero_grad` drops what came before, on both sides)."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _GAN_GRAPHED.replace("GRADS", "backward"))
    port, own_port = _recorded(tmp_path, "port", _GAN_GRAPHED.replace("GRADS", "graph"))
    torch.testing.assert_close(torch.tensor(own_ref), torch.tensor(own_port))
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "pass", said
    losses = [[s["loss"] for s in t.manifest["steps"]] for t in (ref, port)]
    torch.testing.assert_close(torch.tensor(losses[0]), torch.tensor(losses[1]))
    # (the critic's alone: its `zero_grad` at the iteration's start drops the generator's `backward` loss before it,
    # and the graphed twin of that loss took no gradient of the critic's parameters; the thirty-third read)
    torch.testing.assert_close(losses[0][1], own_ref[1][0])
