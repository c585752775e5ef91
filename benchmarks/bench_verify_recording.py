"""What recording a training run costs: the fixture GPT trainer run bare (`python train.py`)
against the same run under `porter trace record`, on each side (the original on the CPU, the
port on PyTorch/XLA's CPU client), with the recorder's parts switched off one at a time.

    PJRT_DEVICE=CPU XLA_FLAGS=--xla_backend_optimization_level=0 \\
        python benchmarks/bench_verify_recording.py [--steps 10] [--repeats 1]

Variants: bare `python train.py` (the original with --device cpu: no CUDA path), porter's
launcher without recording (device setup: the CUDA shim on the original, seeding), and the
launcher recording with all probes, without ATen-op counting, and without op and host-sync
counting. Reports per variant: wall time of the whole process and the median of the script's
own per-iteration times ("iter N: ... time X ms", which it prints itself) over iterations 3..N.
OMP_NUM_THREADS=1 for every run.
A benchmark, not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "fixtures" / "projects" / "gpt_trainer"
ITER = re.compile(r"iter (\d+): loss [\d.]+, time ([\d.]+)ms")


def steady_ms(log: str) -> float | None:
    times = [float(t) for i, t in ITER.findall(log) if int(i) >= 2]
    return statistics.median(times) if times else None


def bare(tree: Path, args: list[str], env: dict) -> tuple[float, float | None]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "train.py", *args],
        cwd=tree,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=True,
    ).stdout
    return time.perf_counter() - t0, steady_ms(out)


def recorded(role: str, tree: Path, args: list[str], steps: int, **flags) -> tuple[float, float | None]:
    from porter.verify.procs import WorkerSet
    from porter.verify.script import ScriptConfig, record

    cfg = ScriptConfig(ported=None, command=(sys.executable, "train.py", *args), steps=steps, timeout=900, **flags)
    with tempfile.TemporaryDirectory() as tmp, WorkerSet() as workers:
        t0 = time.perf_counter()
        rec = record(role, tree, cfg, Path(tmp) / "t.safetensors", Path(tmp) / "w", workers)
        wall = time.perf_counter() - t0
        if rec.status != "ok":
            raise SystemExit(f"{role} recording failed: {rec.error}")
        return wall, steady_ms((Path(tmp) / "w" / "log.txt").read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    opts = ap.parse_args()
    # one intra-op thread everywhere: on a shared machine, thread contention would swamp
    # the differences being measured
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    common = ["--no-compile", "--dtype", "float32", "--eval-iters", "1", "--out-dir", "runs"]
    with tempfile.TemporaryDirectory() as tmp:
        orig, port = Path(tmp) / "original", Path(tmp) / "ported"
        shutil.copytree(PROJECT / "src", orig)
        shutil.copytree(PROJECT / "expected" / "xla", port)
        sides = [("original (cpu)", "reference", orig, ["--device", "cpu"]), ("port (XLA:CPU)", "ported", port, [])]
        variants = [
            ("launcher only (no recording)", {"record": False}),
            ("recorded (all probes)", {}),
            ("recorded, no op counting", {"ops": False}),
            ("recorded, no op or host-sync counting", {"ops": False, "syncs": False}),
        ]
        print(f"{'side':16} {'variant':40} {'wall s':>8} {'step ms':>9}")
        for label, role, tree, extra in sides:
            rows = [
                (
                    "bare",
                    [bare(tree, [*common, *extra, "--max-iters", str(opts.steps)], env) for _ in range(opts.repeats)],
                )
            ]
            for name, flags in variants:
                iters = opts.steps if flags.get("record") is False else opts.steps + 40
                rows.append(
                    (
                        name,
                        [
                            recorded(role, tree, [*common, "--max-iters", str(iters)], opts.steps, **flags)
                            for _ in range(opts.repeats)
                        ],
                    )
                )
            base_wall = statistics.median(w for w, _ in rows[0][1])
            base_step = statistics.median(s for _, s in rows[0][1] if s is not None)
            for name, runs in rows:
                wall = statistics.median(w for w, _ in runs)
                step = statistics.median(s for _, s in runs if s is not None)
                print(
                    f"{label:16} {name:40} {wall:8.1f} {step:9.2f}  "
                    f"(wall ×{wall / base_wall:.2f}, step ×{step / base_step:.2f})"
                )


if __name__ == "__main__":
    main()
