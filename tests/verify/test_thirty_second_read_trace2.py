"""The thirty-second read's second wave on the recorder and the compare (helper `trace2`,
docs/reads/50-trace2-attempts.md): what the first wave added, attacked. Each test records real
programs (a subprocess, as `porter trace record` runs them) and checks porter's verdict against
the programs' own values, taken without porter (torch.testing.assert_close)."""

from __future__ import annotations

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# a gradient-norm regulariser over two micro-batches a step: the loss's gradients taken with a
# graph, their squares added to it; MODE "backward": `total.backward()` at each; "inplace": a second
# graphed `autograd.grad` of the total, accumulated into `.grad` in place (`add_`); "sum": the same,
# `.grad` a new tensor at each micro-batch (`p.grad + g`, a `.clone()` at the first); "split": as
# "inplace", the total's gradients taken by two graphed calls, of the first layer's and of the rest
_PENALTY_ACCUMULATED = """\
import json, sys
import torch
torch.manual_seed(3140)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.05)
g = torch.Generator().manual_seed(3141)
losses = []
for step in range(3):
    opt.zero_grad()
    seen = 0.0
    for micro in range(2):
        x, y = torch.randn(16, 8, generator=g), torch.randn(16, 4, generator=g)
        loss = torch.nn.functional.mse_loss(m(x), y)
        gs = torch.autograd.grad(loss, list(m.parameters()), create_graph=True)
        total = loss + 0.1 * sum(gr.pow(2).sum() for gr in gs)
        if "MODE" == "backward":
            total.backward()
        else:
            ps = list(m.parameters())
            if "MODE" == "split":
                grads = [*torch.autograd.grad(total, ps[:2], create_graph=True)]
                grads += torch.autograd.grad(total, ps[2:], create_graph=True)
            else:
                grads = torch.autograd.grad(total, ps, create_graph=True)
            for p, gr in zip(m.parameters(), grads):
                if p.grad is None:
                    p.grad = gr.detach() if "MODE" != "sum" else gr.detach().clone()
                elif "MODE" != "sum":
                    p.grad.add_(gr.detach())
                else:
                    p.grad = p.grad + gr.detach()
        seen += float(total.detach())
    losses.append(seen)
    opt.step()
if len(sys.argv) > 1:
    json.dump(losses, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["inplace", "sum", "split"])
def test_graphed_calls_accumulated_over_micro_batches_record_each_total_once(tmp_path, monkeypatch, mode):
    """A gradient-norm regulariser over two micro-batches, its totals' gradients taken by a second
    graphed `autograd.grad` and accumulated into `.grad`: only the first micro-batch's total was
    the step's loss where `.grad` was added to in place (the second's gradients gone), and all four
    calls' scalars (the losses and the totals) were summed where `.grad` was a new tensor, and a
    total taken by two calls (a layer's parameters, the rest's) was counted twice, so a faithful
    port of a `total.backward()` reference FAILed "the loss curves part at step 1". A graphed
    call's loss inside a later one's graph (the total holds the loss; a second call of the same
    total starts where the first did) is now part of it."""
    torch = need("torch")
    ref, own_ref = recorded(tmp_path, _PENALTY_ACCUMULATED.replace("MODE", "backward"), 3, "backward")
    port, own_port = recorded(tmp_path, _PENALTY_ACCUMULATED.replace("MODE", mode), 3, mode)
    # the oracle: the two programs' own losses (the two totals of a step, summed) agree
    torch.testing.assert_close(torch.tensor(own_ref), torch.tensor(own_port))
    got = torch.tensor([s["loss"] for s in port.trace.manifest["steps"]], dtype=torch.float64)
    torch.testing.assert_close(got, torch.tensor(own_port, dtype=torch.float64), rtol=1e-6, atol=1e-7)
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said
