"""The ported GPT trainer runs on PyTorch/XLA's CPU device and matches the original on the CPU.

This is the proof that the xla port computes: real XLA compilation (PJRT_DEVICE=CPU),
a few optimizer steps, finite losses equal to the CUDA-original script run on the CPU.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.helpers import port_tree
from tests.programs import run_programs

pytestmark = [pytest.mark.xla, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "gpt_trainer"
STEPS = 3


# --eval-iters 1: the losses compared are the training steps'; the default (20 batches of
# each split before the first step) ran 40 forward passes on each side for nothing
ARGS = ["--max-iters", str(STEPS), "--eval-iters", "1", "--no-compile", "--dtype", "float32"]


def test_ported_gpt_trainer_matches_cpu(tmp_path: Path):
    ported = port_tree(PROJECT / "src", tmp_path / "ported", "xla")
    # what runs is exactly the reviewed expected port
    for name in ("train.py", "model.py"):
        assert (ported / name).read_bytes() == (PROJECT / "expected" / "xla" / name).read_bytes()

    # one process (torch_xla loads once): the original on the CPU, then the port on XLA:CPU
    scripts = {"cpu": PROJECT / "src" / "train.py", "xla": ported / "train.py"}
    runs = run_programs(
        [(script, [*ARGS, "--out", str(tmp_path / f"{n}.json")], tmp_path) for n, script in scripts.items()],
        tmp_path,
        xla=True,
    )
    for name, run in zip(scripts, runs):
        assert run.rc == 0, (name, run.stdout[-2000:] + run.stderr[-4000:])
    cpu, xla = (json.loads((tmp_path / f"{n}.json").read_text()) for n in scripts)
    assert xla["device"] == "xla" and cpu["device"] == "cpu"
    assert len(xla["losses"]) == len(cpu["losses"]) == STEPS
    assert all(math.isfinite(v) for v in xla["losses"])
    for a, b in zip(xla["losses"], cpu["losses"]):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-4)
