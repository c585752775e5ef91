"""The twenty-ninth read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/47-trace-attempts.md). Each test records a real program (a subprocess, as `porter trace
record` runs it) and checks porter's view against the program's own values, taken without porter
(torch.testing.assert_close is the oracle)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from porter.verify.procs import WorkerSet
from tests.deps import need

# one step a way of taking the gradient; each writes the loss the program computed (its oracle)
_GRADIENT_WAYS = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
g = torch.Generator().manual_seed(1)
losses = []
for way in ("backward", "grad", "vector", "list", "penalty"):
    x = torch.randn(32, 8, generator=g).requires_grad_(way == "penalty")
    y = torch.randint(0, 4, (32,), generator=g)
    opt.zero_grad()
    out = m(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    if way == "backward":
        loss.backward()
    elif way == "grad":  # functional: the gradients set by hand
        for p, gr in zip(m.parameters(), torch.autograd.grad(loss, list(m.parameters()))):
            p.grad = gr
    elif way == "vector":  # a per-sample loss given its gradient
        per = torch.nn.functional.cross_entropy(out, y, reduction="none")
        per.backward(torch.full_like(per, 1 / 32))
    elif way == "list":  # two scalars at once
        l1 = torch.nn.functional.cross_entropy(out[:16], y[:16]) / 2
        l2 = torch.nn.functional.cross_entropy(out[16:], y[16:]) / 2
        torch.autograd.backward([l1, l2])
        loss = l1 + l2
    else:  # a gradient penalty taken by autograd.grad inside a step that calls backward
        (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        loss = loss + 0.1 * gx.pow(2).mean()
        loss.backward()
    losses.append(float(loss.detach()))
    opt.step()
    if len(sys.argv) > 1:
        json.dump(losses, open(sys.argv[1], "w"))
"""


def _tree(tmp_path: Path, body: str) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "train.py").write_text(body)
    return tree


def _record(tmp_path: Path, tree: Path, **kw):
    from porter.verify.script import ScriptConfig, record

    cfg = ScriptConfig(ported=None, command=(sys.executable, "train.py"), **kw)
    with WorkerSet() as workers:
        return record("reference", tree, cfg, tmp_path / "t.safetensors", tmp_path / "work", workers)


def test_the_loss_of_every_way_of_taking_gradients_is_recorded(tmp_path):
    """Only a lone scalar given to `torch.autograd.backward` was recorded: a program whose step
    took its gradients by `torch.autograd.grad` (then `p.grad = g`), called `backward` on a
    per-sample loss with its gradient, or on a list of two losses, recorded NaN, and its faithful
    port of a `loss.backward()` reference FAILed on "the loss curves part at step 1 ... the loss
    is made from it otherwise" (a reference of that form: "not finite ... no baseline"). Each
    step's recorded loss is now the scalar the call takes the gradient of: the program's own
    loss, by assert_close. A gradient penalty's `autograd.grad` in a step that calls backward
    adds nothing, and a torch function mode's second call of `autograd.grad` (porter's own
    probes are such modes) is not counted twice."""
    torch = need("torch")
    tree = _tree(tmp_path, _GRADIENT_WAYS)
    oracle = tmp_path / "losses.json"
    subprocess.run([sys.executable, "train.py", str(oracle)], cwd=tree, check=True, timeout=300)
    expected = json.loads(oracle.read_text())
    rec = _record(tmp_path, tree, timeout=300, steps=5)
    assert rec.status == "ok", (rec.status, rec.error)
    steps = rec.trace.manifest["steps"]
    recorded = [s["loss"] for s in steps]
    assert [s["backward_calls"] for s in steps] == [1, 1, 1, 1, 1], steps  # a list: one call, its sum
    torch.testing.assert_close(
        torch.tensor(recorded, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64), rtol=1e-6, atol=1e-7
    )


def _unfrozen_weights(torch, rates: list[float]) -> list:
    """The oracle of `add_param_group`: two Linears, SGD on the first, the second unfrozen before
    the third step's update in one group a rate of `rates` (its weight, then its bias)."""
    torch.manual_seed(0)
    a, b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(a.parameters(), lr=0.1)
    x = torch.randn(16, 4)
    for step in range(1, 4):
        opt.zero_grad()
        b(torch.tanh(a(x))).pow(2).mean().backward()
        if step == 3:
            for p, lr in zip(b.parameters(), rates if len(rates) == 2 else rates * 2):
                opt.add_param_group({"params": [p], "lr": lr})
        opt.step()
    return [p.detach().clone() for p in (*a.parameters(), *b.parameters())]


def test_a_parameter_group_added_after_step_one_has_its_learning_rate_compared():
    """Step 1's groups name their parameters, and each step's rates were compared by those pairs
    alone: a group `add_param_group` added later (a layer unfrozen at step 3) was no pair, and a
    port that unfroze it at 0.5 where the reference used 0.1 PASSED ("learning rate agree"), its
    weights not the reference's (assert_close). Groups no pair holds are now compared as unnamed
    groups are: the 0.5 fails; the same rate, or the new group split in two at that rate, passes."""
    torch = need("torch")
    from porter.verify.tracecmp import _group_pairs, _step_row

    manifest = {"param_groups": [["0.weight", "0.bias"]]}
    pairs = _group_pairs(manifest, manifest)

    def lr_ok(ref_lrs: list[float], port_lrs: list[float]) -> bool | None:
        a = {"loss": 1.0, "grad_norm": 1.0, "lr": ref_lrs}
        b = {"loss": 1.0, "grad_norm": 1.0, "lr": port_lrs}
        return _step_row(2, a, b, None, ((1e-4, 1e-5), (1e-3, 1e-5)), pairs)["lr_ok"]

    reference = _unfrozen_weights(torch, [0.1])
    torch.testing.assert_close(_unfrozen_weights(torch, [0.1, 0.1]), reference)  # split: faithful
    try:
        torch.testing.assert_close(_unfrozen_weights(torch, [0.5]), reference)
    except AssertionError:
        pass
    else:
        raise AssertionError("the oracle: another rate for the unfrozen layer gives other weights")
    assert lr_ok([0.1, 0.1], [0.1, 0.5]) is False
    assert lr_ok([0.1, 0.1], [0.1, 0.1]) is True
    assert lr_ok([0.1, 0.1], [0.1, 0.1, 0.1]) is True
    assert lr_ok([0.1, 0.1], [0.1]) is False  # the port never unfroze it: the rates past the pairs differ


_CLOSURE_STEPS = """\
import json, sys
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4)
norms = []


def closure():
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    norms.append(float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))))
    return loss


for step in range(3):
    opt.step(closure)
    if len(sys.argv) > 1:
        json.dump(norms, open(sys.argv[1], "w"))
"""


def test_a_step_given_a_closure_records_its_weights_by_name_and_its_own_gradient_norm(tmp_path):
    """`opt.step(closure)` (LBFGS's form; SGD and Adam take it too) runs the forward and backward
    inside the step, after the pre-step hook: the initial weights were recorded before any module
    was called, named `<optimizer>.param0..3` (a FAIL said "first: <optimizer>.param3[0]", not
    `2.bias`), and the gradient norm was read before the closure made the gradients: NaN at step 1,
    the last step's after. The recorder now reads them after the closure's first call: the model's
    names, and each step's norm the program's own (assert_close)."""
    torch = need("torch")
    tree = _tree(tmp_path, _CLOSURE_STEPS)
    oracle = tmp_path / "norms.json"
    subprocess.run([sys.executable, "train.py", str(oracle)], cwd=tree, check=True, timeout=300)
    rec = _record(tmp_path, tree, timeout=300, steps=3)
    assert rec.status == "ok", (rec.status, rec.error)
    manifest = rec.trace.manifest
    assert [p["name"] for p in manifest["parameters"]] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    torch.testing.assert_close(
        torch.tensor([s["grad_norm"] for s in manifest["steps"]], dtype=torch.float64),
        torch.tensor(json.loads(oracle.read_text()), dtype=torch.float64),
        rtol=1e-6,
        atol=1e-7,
    )
