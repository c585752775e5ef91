"""The thirty-fourth read's trace leftovers (helper `trleft`, docs/reads/52-trleft-attempts.md). The
recorded tests run real programs (subprocesses, as `porter trace record` runs them) and check
porter's verdict against the programs' own values, taken without porter (torch.testing.assert_close
is the oracle)."""

from __future__ import annotations

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# three layers trained 3 Adam steps at the top level (no function of the program's), held as MAKE
# and called as CALL; each step writes its loss and gradient norm, as the program takes them
_PROGRAM = """\
import json, sys
import torch
torch.manual_seed(0)
layers = [torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)]
MAKE
opt = torch.optim.Adam(m.parameters(), lr=LR)
g = torch.Generator().manual_seed(3190)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    CALL
    loss = ((h - y) ** 2).mean()
    loss.backward()
    own.append([loss.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()])).item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""
_SEQUENTIAL = "m = torch.nn.Sequential(*layers)"
_LIST = "m = torch.nn.ModuleList(layers)"
_WHOLE = "h = m(x)"
_WALKED = "h = x\n    for layer in m:\n        h = layer(h)"


def _recorded(tmp_path, name: str, make: str, call: str, lr: str = "1e-2"):
    body = _PROGRAM.replace("MAKE", make).replace("CALL", call).replace("LR", lr)
    rec, own = recorded(tmp_path, body, 3, name)
    return rec.trace, own


@pytest.mark.slow
def test_a_port_walking_a_top_level_modulelist_by_hand_passes(tmp_path, monkeypatch):
    """A reference calling a `Sequential` of three layers against a port holding them in a
    `ModuleList` it walks by hand at the top level: the same losses and norms, yet FAIL both ways
    on the names alone ("parameters on one side only: reference ['0.weight', ...], ported
    ['weight', 'bias', '<Linear>.weight', ...]"): no module with a forward holds the layers, so
    they were named by their roots. The list's naming is kept beside (`model_listed`) and taken
    where the other side's names are it: PASS; the same port at another rate still FAILs."""
    torch = need("torch")
    ref, own = _recorded(tmp_path, "whole", _SEQUENTIAL, _WHOLE)
    port, own_port = _recorded(tmp_path, "walked", _LIST, _WALKED)
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for a, b in ((ref, port), (port, ref)):
        res, said = compared(monkeypatch, a, b)
        assert res.verdict == "pass", said
        assert "one side only" not in said, said
    res, _ = compared(monkeypatch, ref, port)
    assert {"0", "1", "2"} <= {r["module"] for r in res.modules if r["compared"]}, res.modules
    other, own_other = _recorded(tmp_path, "other", _LIST, _WALKED, "2e-2")
    with pytest.raises(AssertionError):
        torch.testing.assert_close(torch.tensor(own_other), torch.tensor(own))
    res, said = compared(monkeypatch, ref, other)
    assert res.verdict == "fail" and "learning rate differs" in said, said


@pytest.mark.slow
def test_a_top_level_loop_over_a_sequentials_layers_passes(tmp_path, monkeypatch):
    """A port calling its `Sequential`'s layers one by one in a loop at the script's top level (no
    function of the program's holding its globals): the same losses and norms, yet FAIL "first
    diverging module at step 1: (model): not called on the ported side": `model_uncalled` was
    read from a weak reference when the trace was written, after the script's globals had gone
    with it. Taken when the modules are named now: PASS."""
    torch = need("torch")
    ref, own = _recorded(tmp_path, "whole", _SEQUENTIAL, _WHOLE)
    port, own_port = _recorded(tmp_path, "loop", _SEQUENTIAL, _WALKED)
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, said = compared(monkeypatch, ref, port)
    assert res.verdict == "pass", said
    assert "one by one" in said, said
    assert port.manifest["model_uncalled"] is True


# a backbone and a head called one after the other; HOLD builds the optimizer (and a holder)
_PARTS = """\
import json, sys
import torch
torch.manual_seed(0)
bb = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh())
head = torch.nn.Linear(8, 3)
class Net(torch.nn.Module):
    def __init__(self, bb, head):
        super().__init__()
        self.bb, self.head = bb, head
    def forward(self, x):
        return self.head(self.bb(x))
HOLD
g = torch.Generator().manual_seed(3194)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((head(bb(x)) - y) ** 2).mean()
    loss.backward()
    params = [*bb.parameters(), *head.parameters()]
    own.append([loss.item(), torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in params])).item()])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""
_CHAINED = "import itertools\nopt = torch.optim.Adam(itertools.chain(bb.parameters(), head.parameters()), lr=1e-2)"
_HELD = "net = Net(bb, head)\nopt = torch.optim.Adam(net.parameters(), lr=1e-2)"


@pytest.mark.slow
def test_a_port_holding_its_parts_in_a_module_it_never_calls_passes(tmp_path, monkeypatch):
    """A port keeping its backbone and head in a module with a forward it never calls (it calls
    the parts by hand, as the reference does without that module): the same losses and norms, yet
    FAIL both ways on the names alone ("reference ['0.weight', ..., '<Linear>.weight'], ported
    ['bb.0.weight', ..., 'head.weight']"): the holder was named the model on one side only. The
    roots' naming is kept beside (`model_rooted`): PASS both ways, every module compared."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _PARTS.replace("HOLD", _CHAINED), 3, "chained")
    port, own_port = recorded(tmp_path, _PARTS.replace("HOLD", _HELD), 3, "held")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    for a, b in ((ref.trace, port.trace), (port.trace, ref.trace)):
        res, said = compared(monkeypatch, a, b)
        assert res.verdict == "pass", said
        assert "one side only" not in said and "not compared" not in said, said


def test_the_lists_naming_moves_each_roots_names_and_no_other():
    """The rename behind `model_listed`: the model's own key and names, a `<Type>` root's and its
    later calls and input, and nothing of another root sharing the start of its name."""
    from porter.verify.listed import relisted_name

    prefixes = {"": "0", "<Tanh>": "1", "<Linear>": "2"}
    got = [relisted_name(n, prefixes) for n in ("(model)", "(model)#2", "(model) (input)", "weight", "a.bias")]
    assert got == ["0", "0#2", "0 (input)", "0.weight", "0.a.bias"]
    got = [relisted_name(n, prefixes) for n in ("<Linear>", "<Linear>.weight", "<Linear>#3", "<Linear 2>.bias")]
    assert got == ["2", "2.weight", "2#3", "<Linear 2>.bias"]
    assert relisted_name("<optimizer>.param0", prefixes) == "<optimizer>.param0"
    rooted = {"bb": "", "head": "<Linear>"}  # a holder's naming back to the roots'
    got = [relisted_name(n, rooted) for n in ("bb", "bb#2", "bb (input)", "bb.0.weight", "head.bias", "bbx.w")]
    assert got == ["(model)", "(model)#2", "(model) (input)", "0.weight", "<Linear>.bias", "bbx.w"]


def test_a_hand_edited_model_listed_is_not_read():
    """A `model_listed` that is not a map of names (a hand-edited trace) is read as none: no
    rename, no traceback."""
    from porter.verify.listed import listed_pair, listed_prefixes
    from porter.verify.tracefile import Trace

    ref = Trace({"parameters": [{"name": "0.weight"}]}, {})
    for bad in ([["", "0"]], {"": 0}, "0", None):
        port = Trace({"parameters": [{"name": "weight"}], "model_listed": bad}, {})
        assert listed_prefixes(port) == {}
        assert listed_pair(ref, port) == (ref, port)
    port = Trace({"parameters": [{"name": "weight"}], "model_listed": {"": "0"}, "tied": [["weight", 3]]}, {})
    _, moved = listed_pair(ref, port)
    assert moved.manifest["tied"] == [["0.weight", 3]] and moved.manifest["model_uncalled"] is True
