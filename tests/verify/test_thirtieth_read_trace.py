"""The thirtieth read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/48-trace-attempts.md). Each test records a real program (a subprocess, as `porter trace
record` runs it) and checks porter's view against the program's own values, taken without porter
(torch.testing.assert_close is the oracle)."""

from __future__ import annotations


from tests.deps import need
from tests.verify.recording import recorded

# steps whose gradients all come from `torch.autograd.grad`, one of its calls making a graph of
# its gradients (a gradient penalty's, a meta-learning inner step's); each writes its own loss
_GRAPHED_GRADIENTS = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.05)
g = torch.Generator().manual_seed(3010)
losses = []
for way in ("penalty", "inner", "penalty", "hessian"):
    x = torch.randn(32, 8, generator=g).requires_grad_(True)
    y = torch.randn(32, 1, generator=g)
    opt.zero_grad()
    params = list(m.parameters())
    if way == "inner":  # MAML: the outer loss of the weights one inner step on
        fast = torch.autograd.grad((m(x) - y).pow(2).mean(), params, create_graph=True)
        w1, b1, w2, b2 = [p - 0.1 * f for p, f in zip(params, fast)]
        out = torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(x, w1, b1)), w2, b2)
        loss = (out - y).pow(2).mean()
    else:
        out = m(x)
        loss = (out - y).pow(2).mean()
    if way == "penalty":  # WGAN-GP's: the gradient of the output by the input, kept differentiable
        (gx,) = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True)
        loss = loss + 10.0 * (gx.norm(dim=1) - 1).pow(2).mean()
    grads = torch.autograd.grad(loss, params, create_graph=way == "hessian")  # the step's own call
    for p, gr in zip(params, grads):
        p.grad = gr.detach()
    losses.append(float(loss.detach()))
    opt.step()
    if len(sys.argv) > 1:
        json.dump(losses, open(sys.argv[1], "w"))
"""


def _same_losses(torch, steps: list[dict], expected: list[float]) -> None:
    """The losses recorded for `steps` are the program's own (`expected`), by assert_close."""
    torch.testing.assert_close(
        torch.tensor([s["loss"] for s in steps], dtype=torch.float64),
        torch.tensor(expected, dtype=torch.float64),
        rtol=1e-6,
        atol=1e-7,
    )


def test_a_step_taking_every_gradient_by_autograd_grad_records_its_loss_not_the_penalty_s_output(tmp_path):
    """A step that took its gradients by `torch.autograd.grad` alone recorded the sum of every
    such call's scalar: a gradient penalty's (the critic's output summed, WGAN-GP) or a MAML inner
    step's loss was added to the step's loss (6.877 recorded -2.459 + 6.877), so a faithful port
    of a `loss.backward()` reference FAILed "the loss curves part". A call that makes a graph of
    its gradients (`create_graph=True`) is now the step's loss only where the step took no other
    (a Hessian's step: its own call makes one): each step's recorded loss is the program's own."""
    torch = need("torch")
    rec, expected = recorded(tmp_path, _GRAPHED_GRADIENTS, steps=4)
    steps = rec.trace.manifest["steps"]
    assert [s["backward_calls"] for s in steps] == [1, 1, 1, 1], steps
    _same_losses(torch, steps, expected)


# LBFGS through its closure: its line search calls the closure again each step
_LBFGS = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.LBFGS(m.parameters(), lr=0.5, max_iter=4)
g = torch.Generator().manual_seed(3011)
x, y = torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g)
losses = []
calls = [0]
def closure():
    calls[0] += 1
    opt.zero_grad()
    loss = (m(x) - y).pow(2).mean()
    loss.backward()
    return loss
for step in range(3):
    losses.append(float(opt.step(closure).detach()))  # the first call's loss, as step() returns it
    if len(sys.argv) > 1:
        json.dump(losses, open(sys.argv[1], "w"))
assert calls[0] > 3, calls  # (the line search did call it again)
"""


def test_a_step_whose_closure_the_optimizer_calls_again_records_the_first_call_s_loss(tmp_path):
    """LBFGS calls its closure up to `max_iter` times a step, and each call's loss was summed into
    the step's: 3.67 recorded for the program's 0.961 (four calls), and a faithful port whose line
    search stopped a call sooner would fail on the loss. The step's loss is now its closure's first
    call's, the one `step` returns: the program's own, by assert_close."""
    torch = need("torch")
    rec, expected = recorded(tmp_path, _LBFGS, steps=3)
    steps = rec.trace.manifest["steps"]
    assert [s["backward_calls"] for s in steps] == [1, 1, 1], steps
    _same_losses(torch, steps, expected)


# losses kept in a dict and given to torch as its values, a generator or the `map` that
# `GradScaler.scale` makes of them: torch takes any iterable of tensors
_ITERABLE_LOSSES = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
g = torch.Generator().manual_seed(3012)
losses = []
for way in ("values", "generator", "scaled", "grad"):
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    out = m(x)
    parts = {"ce": torch.nn.functional.cross_entropy(out, y), "l2": 0.01 * out.pow(2).mean()}
    if way == "values":
        torch.autograd.backward(parts.values())
    elif way == "generator":
        torch.autograd.backward(v for v in parts.values())
    elif way == "scaled":
        torch.autograd.backward(scaler.scale(parts.values()))
    else:
        params = list(m.parameters())
        for p, gr in zip(params, torch.autograd.grad((v for v in parts.values()), params)):
            p.grad = gr
    if way == "scaled":
        scaler.step(opt)
        scaler.update()
    else:
        opt.step()
    losses.append(float(sum(parts.values()).detach()))
    if len(sys.argv) > 1:
        json.dump(losses, open(sys.argv[1], "w"))
"""


def test_losses_given_as_a_dict_s_values_a_generator_or_scaled_so_are_recorded(tmp_path):
    """`torch.autograd.backward` and `torch.autograd.grad` take any iterable of tensors, and
    `GradScaler.scale` gives back a `map` for one that is not a list or tuple: a step that called
    `torch.autograd.backward(losses.values())`, on a generator, or on `scaler.scale(losses.values())`
    recorded its loss as NaN (only a list or tuple was read), and its faithful port of a
    `sum(losses.values()).backward()` reference would FAIL on the loss. The iterable is now read
    once, as a tuple, by the recorder and torch alike: each step's loss is the program's own
    (unscaled), and the program's gradients are untouched."""
    torch = need("torch")
    rec, expected = recorded(tmp_path, _ITERABLE_LOSSES, steps=4)
    steps = rec.trace.manifest["steps"]
    _same_losses(torch, steps, expected)


# a GradScaler whose scale starts too high: its first steps are skipped (inf gradients), as at
# the start of most mixed-precision runs; writes the losses of the iterations that stepped
_SKIPPED_STEPS = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**124)
g = torch.Generator().manual_seed(3013)
stepped_losses, skipped = [], 0
for it in range(6):
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    loss = 40 * torch.nn.functional.cross_entropy(m(x), y)
    scaler.scale(loss).backward()
    before = scaler.get_scale()
    scaler.step(opt)
    scaler.update()
    if scaler.get_scale() < before:  # (the step was skipped: the scale backed off)
        skipped += 1
    else:
        stepped_losses.append(float(loss.detach()))
    if len(sys.argv) > 1:
        assert skipped, "the scaler skipped no step"
        json.dump(stepped_losses, open(sys.argv[1], "w"))
"""


def test_a_step_the_grad_scaler_skipped_leaves_its_loss_out_of_the_next_step_s(tmp_path):
    """`GradScaler.step` skips the optimizer's step where the gradients hold an inf (its scale
    too high, as at a mixed-precision run's start), and the skipped iterations' losses were
    added to the next step's: 169.9 recorded at step 1 for the program's 57.2 (two skipped), a
    loss no iteration had, and what a verdict quoted ("the loss curves part at step 1: reference
    169.9"). The losses of an iteration whose step was skipped are now dropped: each step's loss
    is its own iteration's."""
    torch = need("torch")
    rec, expected = recorded(tmp_path, _SKIPPED_STEPS, steps=3)
    steps = rec.trace.manifest["steps"]
    assert [s["backward_calls"] for s in steps] == [1, 1, 1], steps
    _same_losses(torch, steps, expected[:3])
