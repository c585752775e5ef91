"""The thirty-fifth read of the trace compare, second wave (helper `trace2`,
docs/reads/53-trace2-attempts.md): each test failed on 50e923f2 on the wrong outcome. The recorded
programs write their own losses and their parameters after each step (torch.testing.assert_close is
the oracle)."""

import pytest
import torch

from tests.deps import need
from tests.verify.recording import compared, recorded, same_training

BODY = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3251)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = 0.0
    for rows in CUTS:
        part = ((m(x[rows]) - y[rows]) ** 2).sum() / 12
        part.backward()
        loss += part.item()
    own.append(loss)
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


def _cut(cuts: str) -> str:
    return BODY.replace("CUTS", cuts)


@pytest.fixture(scope="module")
def cuts(tmp_path_factory):
    """The same training with the batch whole, in two micro-batches of 2, in three of 1, 2, 1 rows,
    and with the second micro-batch of two dropped (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("cuts")
    forms = {
        "whole": "(slice(0, 4),)",
        "halves": "(slice(0, 2), slice(2, 4))",
        "uneven": "(slice(0, 1), slice(1, 3), slice(3, 4))",
        "dropped": "(slice(0, 2),)",
    }
    return {name: recorded(where, _cut(c), 3, name) for name, c in forms.items()}


@pytest.mark.parametrize(("ref", "port"), [("halves", "whole"), ("whole", "halves"), ("uneven", "halves")])
def test_micro_batches_cut_otherwise_with_the_same_updates_pass_both_ways(cuts, ref, port, monkeypatch):
    """A reference accumulating two micro-batches against a port taking the batch whole (the same
    losses and the same weights after each step) FAILed "first diverging module at step 1: 0#2: not
    called on the ported side", the other way round PASS; micro-batches of 1, 2, 1 rows against 2, 2
    FAILed both ways at `0#2` (another batch's rows of the same shape). A later call of a module the
    two sides call on other shapes is not paired by number: PASS both ways, said."""
    (r, r_own), (p, p_own) = cuts[ref], cuts[port]
    assert same_training(r_own, p_own)
    for a, b in ((r.trace, p.trace), (p.trace, r.trace)):
        res, said = compared(monkeypatch, a, b)
        assert res.verdict == "pass", said
    res, _ = compared(monkeypatch, r.trace, p.trace)
    said = [w for w in res.warnings if "the batch cut otherwise" in w or "only the port recorded" in w]
    assert said, res.warnings


def test_a_port_dropping_a_micro_batch_still_fails(cuts, monkeypatch):
    """The rule above reads the shapes of a module's calls: a port making fewer calls of the
    reference's shapes (its second micro-batch dropped) still FAILs at the call it does not make."""
    (r, r_own), (p, p_own) = cuts["halves"], cuts["dropped"]
    assert not same_training(r_own, p_own)
    res, said = compared(monkeypatch, r.trace, p.trace)
    assert res.verdict == "fail" and "0#2: not called on the ported side" in said, said
    res, said = compared(monkeypatch, p.trace, r.trace)
    assert res.verdict == "fail", said


# the first layer's parameters stepped by one `Adam` each in their post-accumulate-grad hooks, the
# last layer's by the counted `Adam` after the backward: every optimizer steps in each iteration
HOOKED = BODY.replace(
    "opt = torch.optim.Adam(m.parameters(), lr=1e-2)",
    """opt = torch.optim.Adam(m[2].parameters(), lr=1e-2)
per = {p: torch.optim.Adam([p], lr=1e-2) for p in m[0].parameters()}
def hook(p):
    per[p].step()
    per[p].zero_grad()
for p in m[0].parameters():
    p.register_post_accumulate_grad_hook(hook)""",
).replace("CUTS", "(slice(0, 4),)")


def test_optimizers_stepped_inside_the_counted_steps_backward_span_no_iteration_of_their_own(cuts, tmp_path):
    """The optimizers a backward steps inside it (a parameter's hook) where the counted one steps
    right after it: the trace said "another optimizer stepped 3 time(s) up to its step 3 (1, 1, 1
    before each): the recording spans that many of the program's iterations or more, not 3", of a
    program whose 3 steps are 3 iterations (its training the batch-whole program's, by
    assert_close). Such steps are the counted step's iteration: nothing to say."""
    from porter.verify.iterations import iterations_spanned

    rec, own = recorded(tmp_path, HOOKED, 3, "hooked")
    assert same_training(own, cuts["whole"][1])
    steps = rec.trace.manifest["steps"]
    assert [s.get("other_optimizer_steps") for s in steps] == [0, 0, 0], steps
    assert iterations_spanned(rec.trace.manifest) is None


def test_the_span_said_is_true_of_a_gan_stepping_both_networks_in_each_iteration():
    """One other step before each of the counted one's is a GAN stepping both networks in each
    iteration (3 iterations) or a critic and generator alternating (6): "spans that many of the
    program's iterations or more, not 3" was untrue of the first. Both are said."""
    from porter.verify.iterations import iterations_spanned

    said = iterations_spanned({"steps": [{"other_optimizer_steps": 1}] * 3})
    assert said is not None and "not 3" not in said, said
    assert "spans 3 of the program's iterations" in said and "up to 6" in said, said


SHARED = """\
import json, sys, torch
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.l1, s.l2, s.l3, s.act = torch.nn.Linear(6, 16), torch.nn.Linear(16, 16), torch.nn.Linear(16, 3), torch.nn.Tanh()
    def forward(s, x):
        return s.l3(SECOND(s.l2(s.act(s.l1(x)))))
m = M()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3252)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""


def test_a_shared_activation_the_port_calls_once_is_not_said_never_called(tmp_path, monkeypatch):
    """A shared `nn.Tanh` the reference calls twice and the port once (its second by `torch.tanh`,
    the same losses): its second call was said "never called in the port and holding no parameter
    nor buffer", of a module the port calls. It is a call the port does not make (not compared,
    the outputs after it are); a port dropping that activation FAILs at the next module."""
    need("torch")
    ref, ref_own = recorded(tmp_path, SHARED.replace("SECOND", "s.act"), 3, "shared")
    port, port_own = recorded(tmp_path, SHARED.replace("SECOND", "torch.tanh"), 3, "by_function")
    torch.testing.assert_close(torch.tensor(port_own), torch.tensor(ref_own))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass", said
    assert not any("never called in the port" in w for w in res.warnings), res.warnings
    assert any("a call the port does not make" in w for w in res.warnings), res.warnings
    dropped, _ = recorded(tmp_path, SHARED.replace("SECOND", ""), 3, "dropped")
    res, said = compared(monkeypatch, ref.trace, dropped.trace)
    assert res.verdict == "fail" and "first diverging module at step 1: l3" in said, said
