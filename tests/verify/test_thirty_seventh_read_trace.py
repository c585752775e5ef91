"""The thirty-seventh read of the trace compare (helper `trace`, docs/reads/55-trace-attempts.md):
each test failed on e4e00db6 on the wrong outcome. The recorded programs write their own losses and
their parameters after each step (torch.testing.assert_close is the oracle)."""

import copy
import dataclasses

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded, same_training

BODY = """\
import json, sys, torch
torch.manual_seed(0)
class W(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.body = torch.nn.Sequential(torch.nn.Linear(6, 3), torch.nn.Tanh(), torch.nn.Linear(3, 3))
    def forward(s, x):
        h = s.body[1](s.body[0](x))
        o = s.body[2](h)
        return RET
m = W()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1740020)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x)[OUT] - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One model returning its output and its hidden state (of one shape) as a tuple, as a plain
    dict built in that order (read by key: `hidden` first), and as a dict with the output moved."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("outputs")
    forms = {
        "tuple": ("(o, h)", "0"),
        "dict": ('{"out": o, "hidden": h}', '"out"'),
        "dict_bad": ('{"out": o * 1.01, "hidden": h}', '"out"'),
    }
    return {
        name: recorded(where, BODY.replace("RET", ret).replace("OUT", out), 3, name)
        for name, (ret, out) in forms.items()
    }


def test_a_model_returning_a_dict_pairs_with_one_returning_a_tuple_in_its_order(outputs, monkeypatch):
    (tup, tup_own), (dic, dic_own) = outputs["tuple"], outputs["dict"]
    assert same_training(tup_own, dic_own)  # the oracle: the same losses and weights
    for ref, port in ((tup, dic), (dic, tup)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "pass", said


def test_a_dict_returning_port_that_changed_the_output_still_fails_at_the_model(outputs, monkeypatch):
    """The control: the dict's `out` moved 1 % FAILs at the model both ways; and a trace without
    the built order (an older porter's) FAILs at the model as before."""
    (tup, tup_own), (bad, bad_own) = outputs["tuple"], outputs["dict_bad"]
    assert not same_training(tup_own, bad_own)
    for ref, port in ((tup, bad), (bad, tup)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail" and "first diverging module at step 1: (model)" in said, said
    manifest = copy.deepcopy(outputs["dict"][0].trace.manifest)
    for e in manifest.get("modules") or []:
        e.pop("built", None)
    old = dataclasses.replace(outputs["dict"][0].trace, manifest=manifest)
    res, said = compared(monkeypatch, tup.trace, old)
    assert res.verdict == "fail" and "(model)" in said, said


KEYWORDS = """\
import json, sys, torch
torch.manual_seed(0)
class K(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.body = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    def forward(s, x, noise):
        return s.body(x + 0.1 * noise)
m = K()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1740021)
own, weights = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((CALL - y) ** 2).mean()
    loss.backward()
    own.append(loss.item())
    opt.step()
    weights.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "weights": weights}, open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="module")
def keywords(tmp_path_factory):
    """One model of two tensor arguments called by place, by keyword, and by keyword with other
    noise (unfaithful)."""
    need("torch")
    need("safetensors")
    where = tmp_path_factory.mktemp("keywords")
    forms = {
        "placed": "m(x, x.flip(0))",
        "named": "m(x=x, noise=x.flip(0))",
        "named_bad": "m(x=x, noise=x.flip(1))",
    }
    return {name: recorded(where, KEYWORDS.replace("CALL", call), 3, name) for name, call in forms.items()}


def test_a_model_called_by_keyword_pairs_with_one_called_by_place(keywords, monkeypatch):
    (placed, placed_own), (named, named_own) = keywords["placed"], keywords["named"]
    assert same_training(placed_own, named_own)
    for ref, port in ((placed, named), (named, placed)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "pass", said


def test_a_model_called_by_keyword_with_other_data_still_fails_on_the_data(keywords, monkeypatch):
    (placed, placed_own), (bad, bad_own) = keywords["placed"], keywords["named_bad"]
    assert not same_training(placed_own, bad_own)
    for ref, port in ((placed, bad), (bad, placed)):
        res, said = compared(monkeypatch, ref.trace, port.trace)
        assert res.verdict == "fail" and "the data differs at step 1: (model) (input)" in said, said
