"""Tied weights survive the xla port: run on XLA:CPU, losses equal to the original on the CPU.

The same port without the re-tie (DEV011 ignored) must untie them and drift: that is what
the fix is for, and it shows this test can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xla, pytest.mark.slow]

PROGRAM = '''
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
'''


# Runs several programs in one process (torch and torch_xla are imported once): each as
# __main__, with torch's default for the one global switch a port may set (XLA005), so no
# run inherits what an earlier one set.
DRIVER = """
import runpy, sys
import torch
import torch_xla
torch_xla.device()  # autograd sizes its device queues at the first backward: XLA's must exist by then
for script, out in zip(sys.argv[1::2], sys.argv[2::2]):
    torch.__future__.set_swap_module_params_on_conversion(False)
    sys.argv = [script, out]
    runpy.run_path(script, run_name="__main__")
"""
XLA_CPU = {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"}


def _run(scripts: list[Path], tmp_path: Path) -> list[dict]:
    """The original first (it runs on the CPU), then the ports (on XLA:CPU)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(XLA_CPU, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    outs = [tmp_path / f"run{i}.json" for i in range(len(scripts))]
    args = [str(p) for pair in zip(scripts, outs) for p in pair]
    proc = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(out.read_text()) for out in outs]


def _port(src: Path, out: Path, *extra: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", str(src), "--target", "xla", "--out-dir", str(out), "--quiet", *extra],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return out / "train.py"


def test_tied_weights_stay_tied_on_xla(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(textwrap.dedent(PROGRAM).lstrip())
    ported = _port(src, tmp_path / "port")
    # by default one fix, not two: XLA005's switch, and no DEV011 re-tie line beside it
    assert "set_swap_module_params_on_conversion(True)" in ported.read_text()
    assert "model.wte.weight = model.lm_head.weight" not in ported.read_text()
    # each of the two mechanisms alone keeps the tie: DEV011's re-tie, XLA005's switch
    retie = _port(src, tmp_path / "retie", "--ignore", "XLA005")
    assert "model.wte.weight = model.lm_head.weight" in retie.read_text()
    switch = _port(src, tmp_path / "switch", "--ignore", "DEV011")
    neither = _port(src, tmp_path / "untied", "--ignore", "DEV011,XLA005")
    original, on_xla, retie_only, switch_only, untied = _run([src / "train.py", ported, retie, switch, neither], tmp_path)
    assert original["device"] == "cpu" and on_xla["device"] == untied["device"] == "xla"

    assert original["tied"] and on_xla["tied"] and retie_only["tied"] and switch_only["tied"]
    for run in (on_xla, retie_only, switch_only):
        assert run["losses"] == pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
    # with neither, Module.to() on XLA makes two parameters and the model drifts
    assert not untied["tied"]
    assert untied["losses"] != pytest.approx(original["losses"], rel=1e-5, abs=1e-6)


def test_an_optimizer_built_before_the_move_trains_on_xla(tmp_path):
    """stable-baselines3's shape: the optimizer takes the parameters, then the model moves.
    On XLA, Module.to() made new Parameters and the optimizer stepped the old CPU ones;
    XLA005's switch keeps the objects, so the port learns as the original does."""
    src = tmp_path / "src"
    src.mkdir()
    program = textwrap.dedent(PROGRAM).lstrip()
    moved = "    model.to(device)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)\n"
    assert moved in program
    program = program.replace(moved, "    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)\n    model.to(device)\n")
    (src / "train.py").write_text(program)
    ported = _port(src, tmp_path / "port", "--ignore", "DEV011")
    assert "set_swap_module_params_on_conversion(True)" in ported.read_text()
    stale = _port(src, tmp_path / "stale", "--ignore", "DEV011,XLA005")
    original, on_xla, stale = _run([src / "train.py", ported, stale], tmp_path)
    assert original["device"] == "cpu" and on_xla["device"] == stale["device"] == "xla"

    assert on_xla["losses"] == pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
    assert stale["losses"] != pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
