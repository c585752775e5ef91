"""The thirty-sixth read of the trace compare, its second-wave helper on the trace read's leftovers
(helper `trace2`, docs/reads/54-trace2-attempts.md): each test failed on 0ba4d640 on the wrong
outcome. The recorded programs write their own losses and their parameters after each step
(torch.testing.assert_close is the oracle)."""

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded, same_training

BODY = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3322)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    x = x SHIFT
    EVAL
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""
# an evaluation on a batch of the training batch's shape, before each training forward
EVAL = """with torch.no_grad():
        m(torch.randn(4, 6, generator=torch.Generator().manual_seed(3323)))"""


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory):
    """The same training without an evaluation and with one before each training forward; and
    with it, fed other data (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("evaluations")
    forms = {"plain": ("", "pass"), "evaluated": ("", EVAL), "evaluated_data": ("* 1.5", EVAL)}
    return {
        name: recorded(where, BODY.replace("SHIFT", shift).replace("EVAL", ev), 3, name)
        for name, (shift, ev) in forms.items()
    }


def test_an_evaluation_before_the_training_forward_on_one_side_passes(evaluations, monkeypatch):
    (plain, plain_own), (evaluated, evaluated_own) = evaluations["plain"], evaluations["evaluated"]
    assert same_training(plain_own, evaluated_own)  # the oracle: the same losses and weights
    for ref, port in ((evaluated, plain), (plain, evaluated)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "pass", said
        assert "the data differs" not in said, said
    # the step's input is the training call's on both sides, compared
    for rec in (plain, evaluated):
        (entry,) = rec.trace.manifest["inputs"]
        assert entry["key"] == "(model) (input)" and "nograd" not in entry
    res, said = compared(monkeypatch, plain.trace, evaluated.trace)
    assert "with gradients on (or off) were compared with the port's call made so" in said, said
    # a port evaluating first and fed other data is told so, the evaluation's batch not taken for its data
    res, said = compared(monkeypatch, evaluated.trace, evaluations["evaluated_data"][0].trace)
    assert res.verdict == "fail" and "the data differs at step 1: (model) (input)" in said, said


def test_a_port_evaluating_first_and_fed_other_data_still_fails(evaluations, monkeypatch):
    """The control: the port that evaluates first and trains on other data FAILs both ways."""
    (evaluated, evaluated_own), (bad, bad_own) = evaluations["evaluated"], evaluations["evaluated_data"]
    plain = evaluations["plain"][0]
    assert not same_training(evaluated_own, bad_own)
    for ref, port in ((evaluated, bad), (bad, evaluated), (plain, bad), (bad, plain)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said


PARAMS = """\
import json, sys, torch
P = lambda *s: torch.nn.Parameter(torch.empty(*s))
class PD(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.p = CONTAINER
    def forward(s, x):
        h = torch.tanh(torch.nn.functional.linear(x, s.p[W1], s.p[B1]))
        return torch.nn.functional.linear(h, s.p[W2], s.p[B2])
m = PD()
with torch.no_grad():
    for i, p in enumerate(PALL):
        p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(3324 + i)) * 0.3)
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3325)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in PALL]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


def _params(container: str, keys: tuple[str, ...]) -> str:
    """The program with its weights in `container`, read by `keys` (w1, b1, w2, b2), each made
    and written in that order (a ParameterDict lists its keys sorted)."""
    body = PARAMS.replace("CONTAINER", container).replace("PALL", "[m.p[W1], m.p[B1], m.p[W2], m.p[B2]]")
    for k, v in zip(("W1", "B1", "W2", "B2"), keys):
        body = body.replace(k, v)
    return body


@pytest.fixture(scope="module")
def containers(tmp_path_factory):
    """The same training with its weights in a ParameterDict and in a ParameterList; and in a
    ParameterList made with other values (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("containers")
    forms = {
        "dict": ('torch.nn.ParameterDict({"w1": P(16, 6), "b1": P(16), "w2": P(3, 16), "b2": P(3)})', DK),
        "list": ("torch.nn.ParameterList([P(16, 6), P(16), P(3, 16), P(3)])", ("0", "1", "2", "3")),
        "list_other": ("torch.nn.ParameterList([P(16, 6), P(16), P(3, 16), P(3)])", ("0", "1", "2", "3")),
    }
    bodies = {name: _params(c, keys) for name, (c, keys) in forms.items()}
    bodies["list_other"] = bodies["list_other"].replace("3324 + i", "3330 + i")
    return {name: recorded(where, body, 3, name) for name, body in bodies.items()}


DK = ('"w1"', '"b1"', '"w2"', '"b2"')


def test_a_parameter_dict_made_a_list_is_said_as_a_rename(containers, monkeypatch):
    """The FAIL is kept (a checkpoint saved by one side does not load on the other by name), said
    as the rename it is, not as parameters missing."""
    (d, d_own), (lst, lst_own) = containers["dict"], containers["list"]
    assert same_training(d_own, lst_own)  # the oracle: the same losses and weights
    for ref, port, pair in ((d, lst, "'p.w1' as 'p.0'"), (lst, d, "'p.0' as 'p.w1'")):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
        assert "parameters renamed in the port: 4 parameter(s)" in said and pair in said, said
        assert "parameters on one side only" not in said, said


def test_parameters_of_other_shapes_in_order_are_still_said_on_one_side_only(containers, monkeypatch):
    """The control: a ParameterList of other initial values is no rename."""
    (d, d_own), (other, other_own) = containers["dict"], containers["list_other"]
    assert not same_training(d_own, other_own)
    for ref, port in ((d, other), (other, d)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
        assert "parameters on one side only" in said and "renamed" not in said, said


COMPILED = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
with torch.no_grad():
    for i, p in enumerate(m.parameters()):
        p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(3327 + i)) * 0.3)
WRAP
opt = torch.optim.Adam(m.parameters(), lr=LR)
g = torch.Generator().manual_seed(3328)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The same training with its first layer plain and replaced by its `torch.compile` wrapper
    (the eager backend, on the CPU); and so wrapped at another learning rate (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("compiled")
    wrap = "m[0] = torch.compile(m[0], backend='eager')"
    forms = {"plain": ("pass", "1e-2"), "wrapped": (wrap, "1e-2"), "wrapped_lr": (wrap, "2e-2")}
    return {
        name: recorded(where, COMPILED.replace("WRAP", w).replace("LR", lr), 3, name) for name, (w, lr) in forms.items()
    }


def test_a_submodule_replaced_by_its_compiled_wrapper_pairs_with_the_plain_one(compiled, monkeypatch):
    (plain, plain_own), (wrapped, wrapped_own) = compiled["plain"], compiled["wrapped"]
    assert same_training(plain_own, wrapped_own)  # the oracle: the same losses and weights
    for ref, port in ((wrapped, plain), (plain, wrapped)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "pass", said
    keys = [e["key"] for e in wrapped.trace.manifest["modules"]]
    assert "0" in keys and not [k for k in keys if "_orig_mod" in k], keys


def test_a_compiled_submodule_at_another_rate_still_fails(compiled, monkeypatch):
    """The control: the wrapped port at another learning rate FAILs both ways."""
    (plain, plain_own), (bad, bad_own) = compiled["plain"], compiled["wrapped_lr"]
    assert not same_training(plain_own, bad_own)
    for ref, port in ((plain, bad), (bad, plain)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail", said
