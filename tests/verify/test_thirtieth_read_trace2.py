"""The thirtieth read of the recorder and the compare, second wave (helper `trace2`,
docs/reads/48-trace2-attempts.md): the first wave's closures, `create_graph` gradients, torch.func
steps and EMA rates, in combination. Each test records a real program (a subprocess, as `porter
trace record` runs it) and checks porter's view against the program's own values, taken without
porter (torch.testing.assert_close is the oracle)."""

from __future__ import annotations

from tests.deps import need
from tests.verify.recording import recorded
from tests.verify.test_thirtieth_read_tleft import _FILLED_LATER


# an optimizer of the program's own that takes a closure and never calls it, its gradients taken
# before the step by torch.func (no backward: no hook sees them) or by a `create_graph=True`
# `autograd.grad` (a Hessian's step); an EMA copy averaged after each step at RATE
_NEVER_CALLED = """\
import copy, json, sys
import torch
torch.manual_seed(3060)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
ema = copy.deepcopy(m).requires_grad_(False)
RATE = 0.1
class Plain(torch.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))
    @torch.no_grad()
    def step(self, closure=None):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-g["lr"])
opt = Plain(m.parameters(), lr=0.05)
init = [p.detach().clone().flatten().tolist() for p in m.parameters()]
g = torch.Generator().manual_seed(3061)
for step in range(4):
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)
    params = dict(m.named_parameters())
    if WAY == "func":
        def lossf(ps):
            return (torch.func.functional_call(m, ps, (x,)) - y).pow(2).mean()
        grads = torch.func.grad(lossf)({k: v.detach() for k, v in params.items()})
        for k, p in params.items():
            p.grad = grads[k]
        loss = lossf(params)
    else:
        loss = (m(x) - y).pow(2).mean()
        for p, gr in zip(params.values(), torch.autograd.grad(loss, list(params.values()), create_graph=True)):
            p.grad = gr.detach()
    opt.step(lambda: loss)
    with torch.no_grad():
        for e, p in zip(ema.parameters(), m.parameters()):
            e.lerp_(p, RATE)
    if len(sys.argv) > 1:
        json.dump(init, open(sys.argv[1], "w"))
"""


def test_a_closure_never_called_leaves_the_initial_weights_and_the_ema_rate_recorded(tmp_path, monkeypatch):
    """A step given a closure recorded its start (step 1's initial weights and group names, each
    later step's EMA rate) at the closure's first call: an optimizer that never calls it, its
    gradients taken before the step by torch.func or by a `create_graph=True` `autograd.grad`,
    recorded no initial weight (the faithful port passed on "0 initial parameter(s) match", a
    port initialised otherwise was failed on its first module, not its weights) and no EMA rate
    (a port averaging at 0.2 passed, said "not compared"). The weights are now read at the step
    where the model was called before it: the initial weights are the program's own
    (assert_close), and the EMA's rate is recorded and compared."""
    torch = need("torch")
    from porter.verify import causes
    from porter.verify.tracecmp import compare_traces

    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))  # (both sides on the CPU)
    refs = {}
    for way in ("func", "graph"):
        body = _NEVER_CALLED.replace("RATE = 0.1", f"RATE = 0.1\nWAY = {way!r}")
        ref, init = recorded(tmp_path, body, steps=4, name=f"{way}-ref")
        refs[way] = ref.trace
        params = ref.trace.manifest["parameters"]
        assert [p["name"] for p in params] == ["0.weight", "0.bias", "2.weight", "2.bias"], way
        for k, values in enumerate(init):  # (a model this small is recorded whole)
            torch.testing.assert_close(
                ref.trace.tensors[f"p{k}.sample"].double(), torch.tensor(values, dtype=torch.float64)
            )
        rates = ref.trace.manifest["model_copy_rates"]
        assert rates and rates[0]["rates"], (way, rates)
        torch.testing.assert_close(torch.tensor(rates[0]["rates"]), torch.full((len(rates[0]["rates"]),), 0.1))
    port, _ = recorded(tmp_path, body.replace("RATE = 0.1", "RATE = 0.2"), steps=4, name="port")
    res = compare_traces(ref.trace, port.trace)
    assert res.verdict == "fail" and any("averaged at another rate" in r for r in res.reasons), res.reasons
    res = compare_traces(refs["graph"], refs["func"])  # (the same program's gradients taken otherwise)
    assert res.verdict == "pass" and "4 initial parameter(s) match" in res.reasons[0], res.reasons


def test_a_group_filled_later_against_a_trace_of_an_older_porter_is_no_rate_difference(tmp_path, monkeypatch):
    """Each step's `group_sizes` is new (the thirtieth read's tleft): a group empty at step 1 and
    filled later was taken as filled on the side whose trace says so and as empty (no group to
    compare) on the other, a trace of an older porter, so the same program recorded by both
    FAILed "the learning rate differs at step 1: reference [0.1, 0.01], ported [0.1, 0.01]",
    either way round. The sizes are now read only where both sides have them: it passes, the
    resized group said."""
    torch = need("torch")
    import copy

    from porter.verify import causes
    from porter.verify.tracecmp import compare_traces
    from porter.verify.tracefile import Trace

    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))  # (both sides on the CPU)
    rec, own = recorded(tmp_path, _FILLED_LATER.replace("RATE", "0.01"), steps=3)
    again, own_again = recorded(tmp_path, _FILLED_LATER.replace("RATE", "0.01"), steps=3, name="again")
    torch.testing.assert_close([torch.tensor(p) for p in own_again], [torch.tensor(p) for p in own])  # (the oracle)
    older = copy.deepcopy(again.trace.manifest)
    for s in older["steps"]:
        del s["group_sizes"]  # (what a porter before the thirtieth read writes)
    older_trace = Trace(manifest=older, tensors=again.trace.tensors)
    for ref, port in ((rec.trace, older_trace), (older_trace, rec.trace), (rec.trace, again.trace)):
        res = compare_traces(ref, port)
        text = " | ".join(res.reasons)
        assert res.verdict == "pass" and "learning rate differs" not in text, text
        assert "held [2, 0] parameter(s) at step 1 and [2, 2] at step 2" in text, text
