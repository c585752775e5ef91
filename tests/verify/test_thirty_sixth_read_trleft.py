"""The thirty-fifth read's trace leftovers, third wave (helper `trleft` of the thirty-sixth read,
docs/reads/54-trleft-attempts.md): the recorded test failed on c5b375fb on the wrong verdict. The
recorded programs write their own losses and parameters (torch.testing.assert_close on them is the
oracle)."""

from tests.deps import need
from tests.verify.recording import compared, recorded

_BODY = """\
import json, sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
with torch.no_grad():
    for i, p in enumerate(m.parameters()):
        p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(i)) * 0.3)
OPT
g = torch.Generator().manual_seed(3286)
own, own_p = [], []
for i in range(3):
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    own.append([loss.item()])
    opt.step()
    own_p.append(torch.cat([p.detach().flatten() for p in m.parameters()]).tolist())
if len(sys.argv) > 1: json.dump({"loss": own, "params": own_p}, open(sys.argv[1], "w"))
"""
_ADAM = "opt = torch.optim.Adam(m.parameters(), lr=1e-2)"
_HOOKS = """opt = torch.optim.Adam(m.parameters(), lr=1e-2)
per = {p: torch.optim.Adam([p], lr=LR) for p in m[0].parameters()}
def hook(p):
    per[p].step(); per[p].zero_grad()
for p in m[0].parameters():
    p.register_post_accumulate_grad_hook(hook)"""


def test_in_backward_optimizers_beside_one_adam_over_every_parameter_pass_and_another_rate_fails(tmp_path, monkeypatch):
    """53-trace2's `hooks2_all`: the first layer's parameters stepped by one `Adam` each in their
    post-accumulate-grad hooks, one `Adam` over every parameter stepped after the backward (the
    hooked ones' gradients `None` by then): the same weights after each step as one `Adam`, yet
    FAIL both ways "the gradient norm differs at step 1" (the first hook's optimizer was counted).
    The `Adam` over the model, the only optimizer of the last layer, is counted now: PASS both ways;
    the hooks' `Adam` at 2e-2 still FAILs."""
    need("torch")
    need("safetensors")
    import torch

    ref, own = recorded(tmp_path, _BODY.replace("OPT", _ADAM), 3, "ref")
    port, own_port = recorded(tmp_path, _BODY.replace("OPT", _HOOKS.replace("LR", "1e-2")), 3, "port")
    bad, own_bad = recorded(tmp_path, _BODY.replace("OPT", _HOOKS.replace("LR", "2e-2")), 3, "bad")
    torch.testing.assert_close(torch.tensor(own_port["loss"]), torch.tensor(own["loss"]))
    torch.testing.assert_close(torch.tensor(own_port["params"]), torch.tensor(own["params"]))
    assert not torch.allclose(torch.tensor(own_bad["params"]), torch.tensor(own["params"]))
    for a, b in ((ref, port), (port, ref)):
        res, why = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "pass", why
        assert "gradient norm differs" not in why
    for a, b in ((ref, bad), (bad, ref)):
        res, why = compared(monkeypatch, a.trace, b.trace)
        assert res.verdict == "fail", why
