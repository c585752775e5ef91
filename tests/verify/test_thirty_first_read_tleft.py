"""The thirtieth read's trace leftovers, closed by the thirty-first read's `tleft` helper
(docs/reads/49-tleft-attempts.md). Each test records real programs (a subprocess, as `porter
trace record` runs them) and checks porter's verdict against the programs' own values, taken
without porter (torch.testing.assert_close)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# an EMA updated at every iteration; SCALED: a GradScaler whose scale grows each step and backs off
# at an overflow (held at float32's edge, as mixed precision holds it): every other iteration from
# the second is skipped (no update). One batch throughout, so a skipped iteration changes nothing
# but the count: the weights after each update are the unscaled program's
_EMA_SKIPPED = """\
import copy, json, sys
import torch
torch.manual_seed(3082)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
ema = copy.deepcopy(m).requires_grad_(False)
opt = torch.optim.SGD(m.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**124, growth_interval=1, enabled=SCALED)
g = torch.Generator().manual_seed(3083)
x, y = torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)
skipped, weights = [0], []
for it in range(12):
    opt.zero_grad()
    loss = 8 * torch.nn.functional.mse_loss(m(x), y)
    scaler.scale(loss).backward()
    before = scaler.get_scale() if SCALED else 1.0
    scaler.step(opt)
    scaler.update()
    if SCALED and scaler.get_scale() < before:
        skipped[-1] += 1
    else:
        weights.append([p.detach().clone().tolist() for p in m.parameters()])
        skipped.append(0)
    with torch.no_grad():
        for e, p in zip(ema.parameters(), m.parameters()):
            e.lerp_(p, DECAY)
    if len(weights) == 3 and len(sys.argv) > 1:
        json.dump({"skipped": skipped[:3], "weights": weights}, open(sys.argv[1], "w"))
        break
"""


def _recorded(tmp_path: Path, name: str, body: str, steps: int = 3):
    """The trace of `body` run as train.py, and the values it wrote itself (run without porter)."""
    rec, own = recorded(tmp_path, body, steps, name)
    return rec.trace, own


@pytest.mark.slow
def test_an_ema_read_across_a_skipped_scaler_step_is_no_rate_difference_and_the_skips_are_said(tmp_path, monkeypatch):
    """A `GradScaler` that skips iterations (inf gradients) left the model standing while the
    program's EMA, updated at every iteration, moved again: the copy's rate read at the next
    step was 0.19 for a decay of 0.1, and a faithful port without a scaler (bf16 on a TPU) FAILed
    "is averaged at another rate after step 1: reference 0.19, ported 0.1"; the skipped
    iterations were said nowhere. Each step now records the iterations skipped before it, an
    update read across skips the other side did not make is not compared, and the skips are said;
    two sides that skip alike still have their rates compared (a decay of 0.2 fails)."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _EMA_SKIPPED.replace("SCALED", "True").replace("DECAY", "0.1"))
    port, own_port = _recorded(tmp_path, "port", _EMA_SKIPPED.replace("SCALED", "False").replace("DECAY", "0.1"))
    # the oracle: the reference skipped iterations, and the two programs' weights after each update agree
    assert sum(own_ref["skipped"]) > 0 and sum(own_port["skipped"]) == 0, (own_ref, own_port)
    torch.testing.assert_close(
        [torch.tensor(w) for ws in own_ref["weights"] for w in ws],
        [torch.tensor(w) for ws in own_port["weights"] for w in ws],
    )
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "pass", said
    assert [s.get("scaler_skipped") for s in ref.manifest["steps"]] == own_ref["skipped"], ref.manifest["steps"]
    assert "is averaged at another rate" not in said, said
    skips = [w for w in res.warnings if "GradScaler skipped" in w]
    assert len(skips) == 1 and f"the reference's {sum(own_ref['skipped'])} (first before step 2)" in skips[0], said
    # the same skips on both sides: the rates are compared, a decay of 0.2 fails on them
    off, _ = _recorded(tmp_path, "off", _EMA_SKIPPED.replace("SCALED", "True").replace("DECAY", "0.2"))
    res, said = compared(monkeypatch, ref, off)
    assert res.verdict == "fail" and "is averaged at another rate after step 1" in said, said


# a critic step with WGAN-GP's gradient penalty (`autograd.grad` of its output by its input, with
# a graph); MODE "backward": the loss's gradients by `loss.backward()`, else by a second graphed
# `autograd.grad` of the loss by the critic's parameters (a Hessian-regularised critic's form)
_PENALTY_AND_GRAPHED_LOSS = """\
import json, sys
import torch
torch.manual_seed(3084)
critic = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(critic.parameters(), lr=0.05)
g = torch.Generator().manual_seed(3085)
losses = []
for step in range(3):
    x = torch.randn(32, 8, generator=g).requires_grad_(True)
    y = torch.randn(32, 1, generator=g)
    opt.zero_grad()
    out = critic(x)
    # WGAN-GP's penalty: the gradient of the output by the input, kept differentiable
    (gx,) = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True)
    loss = (out - y).pow(2).mean() + 10.0 * (gx.norm(dim=1) - 1).pow(2).mean()
    if "MODE" == "backward":
        loss.backward()
    else:  # the loss's own gradients kept differentiable too (a Hessian-regularised critic's)
        grads = torch.autograd.grad(loss, list(critic.parameters()), create_graph=True)
        for p, gr in zip(critic.parameters(), grads):
            p.grad = gr.detach()
    losses.append(float(loss.detach()))
    opt.step()
if len(sys.argv) > 1:
    json.dump(losses, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_a_penalty_and_a_loss_both_taken_with_a_graph_record_the_loss_alone(tmp_path, monkeypatch):
    """A step whose gradient penalty and whose loss's own gradients were both taken by
    `torch.autograd.grad(create_graph=True)` recorded the sum of both calls' scalars (2.373 for
    the program's 6.264, `backward_calls` 2), so a faithful port of a `loss.backward()` reference
    FAILed "the loss curves part at step 1". A graphed call that takes gradients of parameters
    the optimizer steps is now the step's loss, the penalty's (of the critic's input) set aside:
    the recorded losses are the program's own, and the pair passes."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "backward", _PENALTY_AND_GRAPHED_LOSS.replace("MODE", "backward"))
    port, own_port = _recorded(tmp_path, "graph", _PENALTY_AND_GRAPHED_LOSS.replace("MODE", "graph"))
    # the oracle: the two programs' own losses agree
    torch.testing.assert_close(torch.tensor(own_ref), torch.tensor(own_port))
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "pass", said
    steps = port.manifest["steps"]
    assert [s["backward_calls"] for s in steps] == [1, 1, 1], steps
    torch.testing.assert_close(
        torch.tensor([s["loss"] for s in steps], dtype=torch.float64),
        torch.tensor(own_port, dtype=torch.float64),
        rtol=1e-6,
        atol=1e-7,
    )


# three layers, the optimizer holding the first only; after step 1 the others are unfrozen, each
# its own group added by `add_param_group` in the order and at the rates ADDED gives: (layer, lr)
_GROUPS_ADDED = """\
import json, sys
import torch
torch.manual_seed(3087)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m[0].parameters(), lr=0.1)
g = torch.Generator().manual_seed(3088)
x, y = torch.randn(32, 8, generator=g), torch.randn(32, 4, generator=g)
for step in range(3):
    m.zero_grad()
    torch.nn.functional.mse_loss(m(x), y).backward()
    opt.step()
    if step == 0:  # the later layers unfrozen after step 1, a group each: ADDED
        for layer, lr in ADDED:
            opt.add_param_group({"params": list(m[layer].parameters()), "lr": lr})
if len(sys.argv) > 1:
    json.dump([p.tolist() for p in m.parameters()], open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_groups_added_after_step_one_are_paired_by_the_parameters_they_hold(tmp_path, monkeypatch):
    """Groups `add_param_group` added after step 1 were paired by their order alone (the traces
    named step 1's groups only): a port that added the two groups in the other order at each
    other's rates (layer 2 at 0.001 for 0.01) PASSed with `--steps 2`, and a faithful port that
    added them in the other order had its rates "not compared". Each added group is now named by
    its parameters: the first FAILs "the learning rate differs at step 2", naming the group, the
    second PASSes with its rates compared. The oracle: the programs' own weights after three
    updates (torch.testing.assert_close)."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _GROUPS_ADDED.replace("ADDED:", "((2, 0.01), (4, 0.001)):"), steps=2)
    swap, own_swap = _recorded(tmp_path, "swap", _GROUPS_ADDED.replace("ADDED:", "((4, 0.01), (2, 0.001)):"), steps=2)
    order, own_order = _recorded(
        tmp_path, "order", _GROUPS_ADDED.replace("ADDED:", "((4, 0.001), (2, 0.01)):"), steps=2
    )
    torch.testing.assert_close(torch.tensor(own_ref[2]), torch.tensor(own_order[2]))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_ref[2]), torch.tensor(own_swap[2]))
    res, said = compared(monkeypatch, ref, swap)
    assert res.verdict == "fail" and "the learning rate differs at step 2" in said, said
    assert "(the group holding 2.bias: reference 0.01, ported 0.001)" in said, said
    res, said = compared(monkeypatch, ref, order)
    assert res.verdict == "pass", said
    assert "not compared" not in said and "paired by their order" not in said, said
