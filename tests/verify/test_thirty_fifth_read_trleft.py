"""The thirty-fifth read's trace leftovers (helper `trleft`, docs/reads/53-trleft-attempts.md):
each recorded test failed on 5a077b66 on the wrong verdict. The recorded programs write their own
losses (torch.testing.assert_close on them is the oracle)."""

from tests.deps import need
from tests.verify.recording import compared, recorded

# a language-model head tied to the embedding (`lm_head.weight = emb.weight`, as GPT-2's)
TIED = """\
import json, sys, torch
torch.manual_seed(0)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8)
        self.enc = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())
        self.lm_head = torch.nn.Linear(8, 10, bias=False)
        self.lm_head.weight = self.emb.weight
    def forward(self, ids):
        return self.lm_head(self.enc(self.emb(ids)))
m = Net()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3230)
own = []
for i in range(3):
    ids, y = torch.randint(0, 10, (4, 5), generator=g), torch.randint(0, 10, (4, 5), generator=g)
    loss = torch.nn.functional.cross_entropy(CALL.reshape(-1, 10), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    own.append([loss.item()])
    opt.step()
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""


def test_a_port_applying_a_tied_head_by_a_function_on_the_embedding_passes(tmp_path, monkeypatch):
    """The reference calls `lm_head`, tied to the embedding; the port applies it by
    `F.linear(h, m.emb.weight)`. The same losses, yet FAIL "first diverging module at step 1:
    lm_head: not called on the ported side": the head's weight is recorded by its first name
    (`emb.weight`), so the head had no parameter of its own to show its work was done."""
    need("torch")
    need("safetensors")
    import torch

    ref, own = recorded(tmp_path, TIED.replace("CALL", "m(ids)"), 3, "whole")
    port, own_port = recorded(
        tmp_path, TIED.replace("CALL", "torch.nn.functional.linear(m.enc(m.emb(ids)), m.emb.weight)"), 3, "ftied"
    )
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, reasons = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass" and "parameters applied by a function" in reasons, reasons


ACT = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3231)
own = []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((CALL - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    own.append([loss.item()])
    opt.step()
if len(sys.argv) > 1: json.dump(own, open(sys.argv[1], "w"))
"""


def test_a_port_doing_an_activation_module_s_work_by_a_function_passes_and_one_dropping_it_fails(tmp_path, monkeypatch):
    """The reference calls `Sequential(Linear, Tanh, Linear)`; the port `m[2](torch.tanh(m[0](x)))`.
    The same losses, yet FAIL "first diverging module at step 1: 1: not called on the ported side":
    `nn.Tanh` holds nothing whose work the port could show. Now its row is not compared, said, and a
    port dropping the activation still FAILs, at the next module and the loss."""
    need("torch")
    need("safetensors")
    import torch

    ref, own = recorded(tmp_path, ACT.replace("CALL", "m(x)"), 3, "whole")
    port, own_port = recorded(tmp_path, ACT.replace("CALL", "m[2](torch.tanh(m[0](x)))"), 3, "ftanh")
    torch.testing.assert_close(torch.tensor(own_port), torch.tensor(own))
    res, reasons = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "pass" and "holding no parameter nor buffer" in reasons, reasons
    dropped, own_dropped = recorded(tmp_path, ACT.replace("CALL", "m[2](m[0](x))"), 3, "dropped")
    assert abs(own_dropped[0][0] - own[0][0]) > 1e-3, (own_dropped, own)
    res, reasons = compared(monkeypatch, ref.trace, dropped.trace)
    assert res.verdict == "fail" and "2: max abs error" in reasons and "loss curves part" in reasons, reasons


def test_an_older_trace_or_a_module_holding_state_is_not_set_aside():
    """The rule reads the recorder's mark only: a row without it (a trace of an older porter, a
    module with a parameter or a buffer) is not judged by what comes after it."""
    need("torch")
    from types import SimpleNamespace

    from porter.verify.tracecmp import _stateless_done, _tied_names

    port = SimpleNamespace(manifest={"modules": [{"key": "0", "outputs": []}]})
    assert _stateless_done({"key": "1", "stateless": True}, port)
    assert not _stateless_done({"key": "1"}, port)
    assert not _stateless_done({"key": "1", "stateless": "yes"}, port)
    assert not _stateless_done({"key": "1", "stateless": True}, SimpleNamespace(manifest={"modules": []}))
    tied = SimpleNamespace(manifest={"tied": [["emb.weight", "lm_head.weight"], "bad"]})
    assert _tied_names(["emb.weight", 3], tied) == {"emb.weight", "lm_head.weight"}
    assert _tied_names(["enc.0.weight"], tied) == {"enc.0.weight"}


def test_a_call_raising_in_the_recorders_own_work_is_said_as_porter_s(tmp_path):
    """An exception a call of porter's raised inside the recorder's own tensor work (a statistic of
    the program's gradients, `torch.stack(norms)`), the program's line below it, was said as the
    program's (`in_user_code: True`, at the program's line): a call in porter's frame may be the
    program's exception passing through a wrapper, so only its own work can tell."""
    need("torch")
    import importlib.util
    from types import SimpleNamespace

    import torch

    from porter.verify.recorder import Recorder, _grad_norm
    from porter.verify.worker import describe_exception

    (tmp_path / "prog.py").write_text("def train(step):\n    step()\n")
    spec = importlib.util.spec_from_file_location("prog", tmp_path / "prog.py")
    assert spec is not None and spec.loader is not None
    prog = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prog)

    def step():
        with Recorder.own_work(SimpleNamespace(op_counter=None, xla=None, _own_depth=0)):
            _grad_norm(sparse)  # (porter's `g.reshape(-1)` call raises)

    sparse = torch.zeros(2, 2).to_sparse()
    try:
        prog.train(step)
    except RuntimeError as exc:
        said = describe_exception(exc, str(tmp_path))
    assert said["in_user_code"] is False, said
    assert said["message"].startswith("porter's own code raised this at porter/verify/recorder.py:"), said
    assert "(the program's prog.py:2 called it)" in said["message"], said

    def programs():  # the same call outside porter's own work stays the program's
        _grad_norm(sparse)

    try:
        prog.train(programs)
    except RuntimeError as exc:
        said = describe_exception(exc, str(tmp_path))
    assert said["in_user_code"] is True and said["location"] == "prog.py:2", said
