"""The thirty-fourth read's trace leftovers, second wave (helper `trleft2`,
docs/reads/52-trleft2-attempts.md). The recorded test runs a real program (a subprocess, as `porter
trace record` runs it) and checks what porter says against the program's own counts, taken without
porter."""

from __future__ import annotations

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# a GAN: the generator G (small) steps at every iteration, the critic D (larger: the counted
# optimizer) at every fifth; the program writes, per D step, its iteration and G's steps before it
_GAN = """\
import json, sys
import torch
torch.manual_seed(0)
G = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 6))
D = torch.nn.Sequential(torch.nn.Linear(6, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
og = torch.optim.Adam(G.parameters(), lr=1e-3)
od = torch.optim.Adam(D.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(3210)
own, g_steps = [], 0
for i in range(20):
    z, real = torch.randn(8, 4, generator=g), torch.randn(8, 6, generator=g)
    dl = D(G(z).detach()).mean() - D(real).mean()
    dl.backward()
    if i % 5 == 4:
        own.append([i, g_steps])
        g_steps = 0
        od.step()
    od.zero_grad()
    gl = -D(G(z)).mean()
    og.zero_grad(); gl.backward(); og.step(); od.zero_grad()
    g_steps += 1
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_steps_of_a_critic_stepping_every_fifth_iteration_say_the_iterations_they_span(tmp_path, monkeypatch):
    """`--steps 3` counts the critic's steps (the most gradient elements), which come at every fifth
    iteration: the recording spans iterations 0-14, and `trace record` said "3 step(s)", `trace
    compare` "3 optimizer step(s)", nothing more. Each step keeps the other optimizer's steps before
    it (the program's own count: 4, 5, 5), and both commands say the span."""
    need("torch")
    from porter.cli.trace import _wrote

    rec, own = recorded(tmp_path, _GAN, 3, "gan")
    m = rec.trace.manifest
    assert [i for i, _ in own[:3]] == [4, 9, 14]
    line = _wrote(tmp_path / "t.safetensors", 1024, m)
    assert "another optimizer stepped 14 time(s) up to its step 3 (4, 5, 5 before each)" in line, line
    assert [s.get("other_optimizer_steps") for s in m["steps"]] == [n for _, n in own[:3]], m["steps"]
    res, said = compared(monkeypatch, rec.trace, rec.trace)
    assert res.verdict == "pass", said
    assert "reference: the 3 step(s) are the counted optimizer's; another optimizer stepped 14" in said, said


def test_a_trace_without_the_count_or_with_another_type_says_nothing_wrong():
    """An older porter's trace (no `other_optimizer_steps`) says nothing; a hand-edited count that
    is no number is read as none, and a program with one optimizer says nothing."""
    from porter.verify.iterations import iterations_spanned

    assert iterations_spanned({"steps": [{"loss": 1.0}, {"loss": 0.5}]}) is None
    assert iterations_spanned({"steps": [{"other_optimizer_steps": 0}] * 3}) is None
    assert iterations_spanned({"steps": [{"other_optimizer_steps": "x"}, "junk"]}) is None
    said = iterations_spanned({"steps": [{"other_optimizer_steps": 2}, {"other_optimizer_steps": "x"}]})
    assert said is not None and "stepped 2 time(s) up to its step 2 (2, 0 before each)" in said, said


def _gan_losses(skip: bool, real: str = "real") -> str:
    """The GAN writing the critic's own loss at each of its steps; `skip`: its loss (and forward)
    taken only where it steps; `real`: what the critic's step is given as the real batch."""
    body = _GAN.replace("own.append([i, g_steps])", "own.append([i, dl.item()])")
    critic = "    dl = D(G(z).detach()).mean() - D(real).mean()\n    dl.backward()\n"
    if skip:
        body = body.replace(
            critic + "    if i % 5 == 4:\n", "    if i % 5 == 4:\n    " + critic.replace("\n    ", "\n        ")
        )
    return body.replace("D(real)", f"D({real})")


@pytest.mark.slow
def test_a_gan_port_running_the_critic_only_where_it_steps_passes(tmp_path, monkeypatch):
    """The reference takes the critic's loss at every iteration and throws its gradients away where
    it does not step; the port takes it only where it steps: the same critic losses (the programs'
    own, `assert_close`), yet FAIL both ways "first diverging module at step 1, in the port's call
    order: <Sequential>.0#2": step 1's calls were taken from iteration 0 on, where the reference calls
    `D(real)` and the port the next iteration's `D(G(z))`. A `zero_grad` throwing the counted
    optimizer's gradients away at an iteration's end restarts them: PASS both ways, and a port
    feeding its critic `real * 1.01` still FAILs."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _gan_losses(False), 3, "every")
    port, own_port = recorded(tmp_path, _gan_losses(True), 3, "skip")
    assert "D(real)" in _gan_losses(True) and _gan_losses(True) != _gan_losses(False)
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for a, b in ((ref.trace, port.trace), (port.trace, ref.trace)):
        res, said = compared(monkeypatch, a, b)
        assert res.verdict == "pass", said
    planted, own_planted = recorded(tmp_path, _gan_losses(True, "real * 1.01"), 3, "planted")
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_planted), torch.tensor(own))
    res, said = compared(monkeypatch, ref.trace, planted.trace)
    assert res.verdict == "fail", said


@pytest.mark.slow
def test_a_gan_reference_zeroing_its_critic_by_setting_grad_none_passes_its_port(tmp_path, monkeypatch):
    """The reference zeroes its critic by hand (`p.grad = None` over its parameters, not
    `od.zero_grad()`), the port by `zero_grad` and takes the critic's loss only where it steps: the
    same critic losses, yet FAIL "the loss curves part at step 1: reference -0.711243, ported
    -0.0486189" (five iterations' losses summed: the hand's zeroing unseen). Gradients the last
    backward left, gone by the next call or backward, are read as a `zero_grad`: PASS both ways."""
    torch = need("torch")
    by_hand = _gan_losses(False).replace("od.zero_grad()", "[setattr(p, 'grad', None) for p in D.parameters()]")
    assert "od.zero_grad" not in by_hand
    ref, own = recorded(tmp_path, by_hand, 3, "hand")
    port, own_port = recorded(tmp_path, _gan_losses(True), 3, "skip")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for a, b in ((ref.trace, port.trace), (port.trace, ref.trace)):
        res, said = compared(monkeypatch, a, b)
        assert res.verdict == "pass", said
