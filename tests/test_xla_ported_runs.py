"""The ported GPT trainer runs on PyTorch/XLA's CPU device and matches the original on the CPU.

This is the proof that the xla port computes: real XLA compilation (PJRT_DEVICE=CPU),
a few optimizer steps, finite losses equal to the CUDA-original script run on the CPU.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xla, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "gpt_trainer"
STEPS = 3


def run_trainer(src: Path, out: Path, workdir: Path, extra_env: dict[str, str]) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(extra_env, PYTHONDONTWRITEBYTECODE="1", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run(
        # --eval-iters 1: the losses compared are the training steps'; the default (20 batches
        # of each split before the first step) ran 40 forward passes on each side for nothing
        [sys.executable, str(src / "train.py"), "--max-iters", str(STEPS), "--eval-iters", "1", "--no-compile",
         "--dtype", "float32", "--out", str(out)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(out.read_text())


def test_ported_gpt_trainer_matches_cpu(tmp_path: Path):
    ported = tmp_path / "ported"
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", str(PROJECT / "src"), "--target", "xla", "--out-dir", str(ported), "-q"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    # what runs is exactly the reviewed expected port
    for name in ("train.py", "model.py"):
        assert (ported / name).read_bytes() == (PROJECT / "expected" / "xla" / name).read_bytes()

    xla = run_trainer(ported, tmp_path / "xla.json", tmp_path, {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"})
    cpu = run_trainer(PROJECT / "src", tmp_path / "cpu.json", tmp_path, {})
    assert xla["device"] == "xla" and cpu["device"] == "cpu"
    assert len(xla["losses"]) == len(cpu["losses"]) == STEPS
    assert all(math.isfinite(v) for v in xla["losses"])
    for a, b in zip(xla["losses"], cpu["losses"]):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-4)
