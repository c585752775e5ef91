"""The thirty-third read's leftover of the recorder's counted optimizer (helper `optleft`,
docs/reads/51-optleft-attempts.md): the test failed on 10f79650 on the wrong outcome. The recorded
programs write their own losses, gradient norms and rates (torch.testing.assert_close is the oracle)."""

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded

# fine-tuning in two phases: the optimizer built again at the second iteration (its rate RATE) while
# the program still holds the first (`keep`); each iteration writes the loss, gradient norm and rate
# the program itself takes
_REBUILT_KEPT = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3341)
own = []
for i in range(3):
    if i == 1:
        keep = [opt]
        opt = torch.optim.Adam(m.parameters(), lr=RATE)
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()]))
    own.append([loss.item(), norm.item(), opt.param_groups[0]["lr"]])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_an_optimizer_built_again_while_the_old_one_is_held_takes_the_count(tmp_path, monkeypatch):
    """A program that builds a new optimizer over the same parameters at its second iteration while
    it still holds the first was recorded to the first one's single step ("stopped: script ended"),
    and a port whose second phase ran at twice the rate PASSed on that step alone, though the
    programs' own losses part at step 3. The newer optimizer, stepping while the counted one has not
    since it was built, takes the count: the program's three steps, the FAIL, and a faithful PASS."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _REBUILT_KEPT.replace("RATE", "1e-2"), 3, "ref")
    port, own_port = recorded(tmp_path, _REBUILT_KEPT.replace("RATE", "2e-2"), 3, "port")
    same, own_same = recorded(tmp_path, _REBUILT_KEPT.replace("RATE", "1e-2"), 3, "same")

    def losses(values):
        return torch.tensor([v[0] for v in values], dtype=torch.float64)

    # the oracle, without porter: the faithful port's losses are the reference's, the other's part
    torch.testing.assert_close(losses(own_same), losses(own))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(losses(own_port), losses(own))
    got = [[s["loss"], s["grad_norm"], *s["lr"]] for s in ref.trace.manifest["steps"]]
    torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), torch.tensor(own, dtype=torch.float64))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "fail", said
    assert "learning rate differs at step 2" in said
    res, said = compared(monkeypatch, ref.trace, same.trace)
    assert res.verdict == "pass", said
