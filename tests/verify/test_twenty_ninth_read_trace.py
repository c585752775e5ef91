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
