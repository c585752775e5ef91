"""Tied weights survive the xla port: run on XLA:CPU, losses equal to the original on the CPU.

The same port without the re-tie (DEV011 ignored) must untie them and drift: that is what
the fix is for, and it shows this test can fail.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.helpers import port_tree
from tests.programs import run_programs

# one module fixture runs every program: its tests stay on one xdist worker
pytestmark = [pytest.mark.xla, pytest.mark.slow, pytest.mark.xdist_group("tied_weights_xla")]

PROGRAM = """
import json
import sys

import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx):
        return self.lm_head(self.wte(idx))


def main(out):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyLM(11, 8)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    idx = (torch.arange(10) % 11).view(2, 5).to(device)
    losses = []
    for _ in range(3):
        loss = nn.functional.cross_entropy(model(idx).view(-1, 11), idx.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with open(out, "w") as fh:
        json.dump({"tied": model.wte.weight is model.lm_head.weight, "losses": losses,
                   "device": model.lm_head.weight.device.type}, fh)


main(sys.argv[1])
"""


OPTIMIZER_FIRST = "    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)\n    model.to(device)\n"
MOVE_FIRST = "    model.to(device)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)\n"

# every port of both programs, by name: (program, flags)
PORTS = {
    "ported": ("tied", ()),
    "retie": ("tied", ("--ignore", "XLA005")),
    "switch": ("tied", ("--ignore", "DEV011")),
    "untied": ("tied", ("--ignore", "DEV011,XLA005")),
    "moved_late_port": ("moved_late", ("--ignore", "DEV011")),
    "stale": ("moved_late", ("--ignore", "DEV011,XLA005")),
}


@pytest.fixture(scope="module")
def tied(tmp_path_factory) -> dict:
    """Both programs and all their ports, run in one process (torch_xla loads once): the
    originals first (on the CPU), then the ports (on XLA:CPU). Sources, ports and results by name."""
    root = tmp_path_factory.mktemp("tied")
    program = textwrap.dedent(PROGRAM).lstrip()
    assert MOVE_FIRST in program
    # stable-baselines3's shape: the optimizer takes the parameters, then the model moves
    sources = {"tied": program, "moved_late": program.replace(MOVE_FIRST, OPTIMIZER_FIRST)}
    scripts = {}
    for name, text in sources.items():
        (root / name).mkdir()
        scripts[name] = root / name / "train.py"
        scripts[name].write_text(text)
    for name, (source, flags) in PORTS.items():
        scripts[name] = port_tree(root / source, root / f"port-{name}", "xla", *flags) / "train.py"
    names = list(scripts)
    runs = run_programs([(scripts[n], [str(root / f"{n}.json")], root) for n in names], root, xla=True)
    for name, run in zip(names, runs):
        assert run.rc == 0, (name, run.stderr[-3000:])
    return {
        "text": {n: p.read_text() for n, p in scripts.items()},
        **{n: json.loads((root / f"{n}.json").read_text()) for n in names},
    }


def test_tied_weights_stay_tied_on_xla(tied):
    text = tied["text"]
    # by default one fix, not two: XLA005's switch, and no DEV011 re-tie line beside it
    assert "set_swap_module_params_on_conversion(True)" in text["ported"]
    assert "model.wte.weight = model.lm_head.weight" not in text["ported"]
    # each of the two mechanisms alone keeps the tie: DEV011's re-tie, XLA005's switch
    assert "model.wte.weight = model.lm_head.weight" in text["retie"]
    original, on_xla, retie_only, switch_only, untied = (
        tied[n] for n in ("tied", "ported", "retie", "switch", "untied")
    )
    assert original["device"] == "cpu" and on_xla["device"] == untied["device"] == "xla"

    assert original["tied"] and on_xla["tied"] and retie_only["tied"] and switch_only["tied"]
    for run in (on_xla, retie_only, switch_only):
        assert run["losses"] == pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
    # with neither, Module.to() on XLA makes two parameters and the model drifts
    assert not untied["tied"]
    assert untied["losses"] != pytest.approx(original["losses"], rel=1e-5, abs=1e-6)


def test_an_optimizer_built_before_the_move_trains_on_xla(tied):
    """stable-baselines3's shape: the optimizer takes the parameters, then the model moves.
    On XLA, Module.to() made new Parameters and the optimizer stepped the old CPU ones;
    XLA005's switch keeps the objects, so the port learns as the original does."""
    assert "set_swap_module_params_on_conversion(True)" in tied["text"]["moved_late_port"]
    original, on_xla, stale = (tied[n] for n in ("moved_late", "moved_late_port", "stale"))
    assert original["device"] == "cpu" and on_xla["device"] == stale["device"] == "xla"

    assert on_xla["losses"] == pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
    assert stale["losses"] != pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
