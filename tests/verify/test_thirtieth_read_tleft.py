"""The thirtieth read's trace leftovers (helper `tleft`, docs/reads/48-tleft-attempts.md). Each
test records real programs (a subprocess, as `porter trace record` runs them) and checks porter's
verdict against the programs' own values, taken without porter (torch.testing.assert_close)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deps import need
from tests.verify.recording import recorded

# three steps; MODE: "backward" (the reference), "func" (torch.func.grad_and_value: no hook sees
# the loss, the model is called inside the transform), "func2" (the same of the loss doubled)
_FUNC_PROGRAM = """\
import json, sys
import torch
from torch.func import functional_call, grad_and_value
torch.manual_seed(3050)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
g = torch.Generator().manual_seed(3051)
losses = []
for step in range(3):
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    if "MODE" == "backward":
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
    else:
        k = 2.0 if "MODE" == "func2" else 1.0
        def f(ps):
            return k * torch.nn.functional.cross_entropy(functional_call(m, ps, (x,)), y)
        grads, loss = grad_and_value(f)({n: p.detach() for n, p in m.named_parameters()})
        for n, p in m.named_parameters():
            p.grad = grads[n]
    losses.append(float(loss.detach()))
    opt.step()
if len(sys.argv) > 1:
    json.dump(losses, open(sys.argv[1], "w"))
"""


def _recorded(tmp_path: Path, name: str, body: str, steps: int = 3):
    """The trace of `body` run as train.py, and the values it wrote itself (run without porter)."""
    rec, own = recorded(tmp_path, body, steps, name)
    return rec.trace, own


def _compared(monkeypatch, ref, port):
    """The verdict of two CPU recordings (the device check, a port on the reference's own device
    type, is set aside: an XLA:CPU port takes minutes on this machine and changes nothing here)."""
    from porter.verify import causes
    from porter.verify.tracecmp import compare_traces

    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))
    res = compare_traces(ref, port)
    return res, " | ".join(res.reasons)


@pytest.mark.slow
def test_a_step_whose_gradients_come_from_torch_func_is_not_failed_on_what_no_hook_saw(tmp_path, monkeypatch):
    """A step that takes its gradients by `torch.func.grad_and_value` calls no backward porter
    sees, and its model inside the transform: the loss was recorded NaN and the calls' outputs
    not at all, and a faithful port of a `loss.backward()` reference FAILed "first diverging
    module at step 1: 0: 1 output tensor(s) on the reference, 0 ported" and "the loss curves part
    at step 1: reference 1.37, ported nan" (such a reference: "not finite ... no baseline"). Now
    neither is compared, each said why; the gradient norm still is: the loss doubled fails."""
    torch = need("torch")
    traces, own = {}, {}
    for mode in ("backward", "func", "func2"):
        traces[mode], own[mode] = _recorded(tmp_path, mode, _FUNC_PROGRAM.replace("MODE", mode))
    # the oracle: the programs' own losses
    torch.testing.assert_close(torch.tensor(own["func"]), torch.tensor(own["backward"]))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own["func2"]), torch.tensor(own["backward"]))
    assert [s["backward_calls"] for s in traces["func"].manifest["steps"]] == [0, 0, 0]

    res, text = _compared(monkeypatch, traces["backward"], traces["func"])
    assert res.verdict == "pass", text
    assert "the port's loss is not recorded at 3 step(s)" in text, text
    assert "not recorded on the port (inside a torch.func transform" in text, text
    res, text = _compared(monkeypatch, traces["func"], traces["backward"])
    assert res.verdict == "pass" and "no baseline" not in text, text
    assert "the reference's loss is not recorded" in text, text
    res, text = _compared(monkeypatch, traces["backward"], traces["func2"])
    assert res.verdict == "fail" and "the gradient norm differs at step 1" in text, text
    assert "curves part" not in text and "output tensor(s) on the reference" not in text, text


# three steps of an optimizer of the program's own that takes a closure and never calls it (the
# gradients are taken before the step); CALL: "opt.step()" (the reference) or "opt.step(closure)"
_UNCALLED_CLOSURE = """\
import json, sys
import torch

class Plain(torch.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):  # the closure is taken and never called
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])

torch.manual_seed(3052)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = Plain(m.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 ** k)
g = torch.Generator().manual_seed(3053)
own = {"loss": [], "grad_norm": [], "lr": []}
for step in range(3):
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward()
    def closure():
        raise AssertionError("never called")
    own["loss"].append(float(loss))
    own["grad_norm"].append(float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()]))))
    own["lr"].append(opt.param_groups[0]["lr"])
    CALL
    sched.step()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_a_closure_the_optimizer_never_calls_leaves_the_step_s_own_norm_and_rate(tmp_path, monkeypatch):
    """The step's start (step 1's weights, the gradient norm, the rates) was recorded at the
    closure's first call: an optimizer that takes a closure and never calls it (the program took
    its gradients before the step) left every step's norm NaN and its rates empty, and a faithful
    port FAILed on them. Where a backward ran before the step, the start is now recorded at the
    step; the norms and rates are the program's own (assert_close), and the port passes."""
    torch = need("torch")
    ref, own_ref = _recorded(tmp_path, "ref", _UNCALLED_CLOSURE.replace("CALL", "opt.step()"))
    port, own_port = _recorded(tmp_path, "port", _UNCALLED_CLOSURE.replace("CALL", "opt.step(closure)"))
    assert own_port == own_ref  # (the oracle: the programs' own values, alike)
    steps = port.manifest["steps"]
    for what in ("grad_norm", "loss"):
        torch.testing.assert_close(
            torch.tensor([s[what] for s in steps], dtype=torch.float64),
            torch.tensor(own_port[what], dtype=torch.float64),
            rtol=1e-5,
            atol=1e-7,
        )
    assert [s["lr"] for s in steps] == [[r] for r in own_port["lr"]], steps
    res, text = _compared(monkeypatch, ref, port)
    assert res.verdict == "pass", text


@pytest.mark.slow
def test_an_ema_rate_off_by_less_than_a_thousandth_fails_a_faithful_one_passes(tmp_path):
    """An EMA copy's rate q was compared to 1e-3 of itself (widened by the residuals): a port
    averaging at 0.10005 where the reference averages at 0.1 (decay 0.89995 for 0.9) passed
    (twenty-ninth read's leftover). The rates are now compared to the noise each side's fit saw
    (`rate_noise`): it fails on the rate; the same average written with `lerp_` passes;
    torch.testing.assert_close of the copies after one update is the oracle."""
    torch = need("torch")
    from porter.verify.tracecmp import _copy_rate_fails
    from tests.verify.test_script_safety import _ema_manifests

    updates = {
        "ref": "e.mul_(0.9).add_(p, alpha=0.1)",
        "lerp": "e.lerp_(p, 0.1)",
        "off": "e.mul_(0.89995).add_(p, alpha=0.10005)",
    }
    m = _ema_manifests(tmp_path, updates, timeout=300)
    assert _copy_rate_fails(m["ref"], m["lerp"]) == []
    fails = _copy_rate_fails(m["ref"], m["off"])
    assert len(fails) == 1 and "is averaged at another rate after step 1" in fails[0], fails
    assert "ported 0.10005" in fails[0], fails
    # the oracle: one update of each from the same copy and model weights
    g = torch.Generator().manual_seed(3056)
    e0, w = torch.randn(64, 4, generator=g), torch.randn(64, 4, generator=g)
    torch.testing.assert_close(e0.clone().lerp_(w, 0.1), e0.clone().mul_(0.9).add_(w, alpha=0.1))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(
            e0.clone().mul_(0.89995).add_(w, alpha=0.10005), e0.clone().mul_(0.9).add_(w, alpha=0.1)
        )


# three steps; the biases' group is empty at step 1 and filled before step 2's update at RATE
_FILLED_LATER = """\
import json, sys
import torch
torch.manual_seed(3057)
m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
weights = [m[0].weight, m[2].weight]
biases = [m[0].bias, m[2].bias]
opt = torch.optim.SGD([{"params": weights, "lr": 0.1}, {"params": [], "lr": RATE}])
x = torch.randn(16, 4, generator=torch.Generator().manual_seed(3058))
for step in range(1, 4):
    opt.zero_grad()
    m(x).pow(2).mean().backward()
    if step == 2:
        opt.param_groups[1]["params"].extend(biases)
    opt.step()
if len(sys.argv) > 1:
    json.dump([p.detach().reshape(-1).tolist() for p in m.parameters()], open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_a_parameter_group_empty_at_step_one_and_filled_later_has_its_rate_compared(tmp_path, monkeypatch):
    """A group step 1 holds empty was taken as no group to compare (its rate moves nothing: the
    twenty-ninth trace2 read), and the traces name groups by step 1's parameters only: a port that
    filled the group later at 0.02 where the reference used 0.01 (its weights not the reference's,
    assert_close) failed on the loss curves alone, the verdict saying step 2's "learning rate
    agree". The recorder now keeps each step's group sizes (`group_sizes`): a group filled later is
    compared as one added after step 1 (the 0.02 fails on the rate, the same rate passes), and a
    group whose count changed after step 1 is said."""
    torch = need("torch")
    traces, own = {}, {}
    for name, rate in (("ref", "0.01"), ("same", "0.01"), ("other", "0.02")):
        traces[name], own[name] = _recorded(tmp_path, name, _FILLED_LATER.replace("RATE", rate))
    # the oracle: the programs' own weights after three steps
    torch.testing.assert_close([torch.tensor(p) for p in own["same"]], [torch.tensor(p) for p in own["ref"]])
    with pytest.raises(AssertionError):
        torch.testing.assert_close([torch.tensor(p) for p in own["other"]], [torch.tensor(p) for p in own["ref"]])
    res, text = _compared(monkeypatch, traces["ref"], traces["other"])
    assert res.verdict == "fail" and "the learning rate differs at step 1" in text, text
    res, text = _compared(monkeypatch, traces["ref"], traces["same"])
    assert res.verdict == "pass", text
    assert "held [2, 0] parameter(s) at step 1 and [2, 2] at step 2" in text, text
