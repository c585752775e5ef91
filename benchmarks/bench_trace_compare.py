"""How `porter trace compare` scales with the optimizer steps two traces hold, on a terminal and
off one, for one or more porter trees measured in the same run.

    .venv/bin/python benchmarks/bench_trace_compare.py [--steps 100000] [--porter TREE ...]

Writes two traces of N steps (a loss, gradient norm, learning rate and step time a step; one
NaN steady step time, so the reader's walk for non-finite numbers runs), then runs
`python -m porter trace compare` on them once per tree (each tree first on its PYTHONPATH):
once with its output on a pseudo-terminal (the rich tables a person sees; the bytes drained and
counted) and once into a file. Each run's wall time, CPU time (user + system) and peak resident
memory are the child's own (`os.wait4`). Pass a `git archive` of main and this checkout to set
the two side by side on the same machine and load. The nineteenth adversarial read of issue 24
saw 100,000 steps take 82 s and 0.95 GB.
"""

from __future__ import annotations

import argparse
import os
import pty
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_traces(folder: Path, steps: int) -> tuple[Path, Path]:
    """Two traces of `steps` steps, written by this checkout's porter (the file format is the
    same for every tree compared)."""
    code = f"""
import random, sys, torch
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from porter.verify.tracefile import write_trace
for name, seed in (("a", 0), ("b", 1)):
    r = random.Random(seed)
    losses = [2.0 - i * 1e-6 + (r.random() * 1e-9 if seed else 0.0) for i in range({steps})]
    steps = [{{"step": i + 1, "loss": x, "grad_norm": x, "lr": [x], "step_time_s": x}} for i, x in enumerate(losses)]
    m = {{"side": {{"label": "cpu", "kind": "cpu", "versions": {{}}}}, "devices": {{"parameters": {{"cpu": 1}}, "losses": ["cpu"]}},
         "steps": steps, "modules": [], "precision": {{"regime": "float32"}}, "steps_recorded": {steps},
         "perf": {{"steady_step_s": float("nan")}}}}
    write_trace(Path({str(folder)!r}) / f"{{name}}.safetensors", m, {{"steps.loss": torch.tensor(losses, dtype=torch.float64)}})
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    return folder / "a.safetensors", folder / "b.safetensors"


def run(tree: Path, traces: tuple[Path, Path], terminal: bool, out: Path) -> dict:
    """One `trace compare` under `tree`'s porter: wall s, CPU s, peak MB, bytes written."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200", "LINES": "50"}
    env.pop("FORCE_COLOR", None)
    cmd = [sys.executable, "-m", "porter", "trace", "compare", *map(str, traces)]
    written = [0]
    start = time.perf_counter()
    if terminal:
        master, slave = pty.openpty()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, cwd=tree)
        os.close(slave)

        def drain() -> None:
            while True:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # the child closed its end
                    return
                if not chunk:
                    return
                written[0] += len(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        reader.join(timeout=10)
        os.close(master)
    else:
        with out.open("wb") as f:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.DEVNULL, env=env, cwd=tree
            )
            _, status, usage = os.wait4(proc.pid, 0)
        written[0] = out.stat().st_size
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "mb_out": written[0] / 1e6,
        "exit": proc.returncode,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--porter", action="append", type=Path, help="a porter tree (repeatable; default this checkout)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tree and output, alternating trees")
    args = ap.parse_args()
    trees = [t.resolve() for t in (args.porter or [ROOT])]
    random.seed(0)
    print(
        f"{'tree':<28} {'output':<9} {'steps':>7} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'MB out':>7} {'exit':>4}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        traces = write_traces(Path(tmp), args.steps)
        for _ in range(args.repeat):
            for terminal in (False, True):
                for tree in trees:  # alternating: each tree under the same load
                    r = run(tree, traces, terminal, Path(tmp) / "out.txt")
                    print(
                        f"{str(tree)[-28:]:<28} {'terminal' if terminal else 'file':<9} {args.steps:>7} "
                        f"{r['wall_s']:>7.1f} {r['cpu_s']:>7.1f} {r['peak_mb']:>8.0f} {r['mb_out']:>7.1f} {r['exit']:>4}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
