"""What the trust features of script-mode parity-check cost: the noise-floor run and the
redirection of device random draws, against script mode without them, in the same run.

    PJRT_DEVICE=CPU XLA_FLAGS=--xla_backend_optimization_level=0 \\
        python benchmarks/bench_parity_trust.py [--steps 10] [--repeats 3]

On the fixture GPT trainer (original on the CPU through the CUDA shim, porter's expected xla
port on XLA:CPU), three variants of `porter parity-check` (porter.verify.script.run_script),
interleaved so that machine load hits them alike:

* baseline: no noise floor, no random-draw mode on the ported side (script mode before the
  trust features);
* + RNG redirection: device draws from the CPU generator (a TorchFunctionMode on the port);
* + noise floor: the original run a second time (the default).

Reports the median wall time of the whole check and of the ported side, and each variant's
ratio to the baseline. OMP_NUM_THREADS=1 for every run. A benchmark, not a test: numbers depend
on the machine and its load; read the ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "fixtures" / "projects" / "gpt_trainer"
VARIANTS = [
    ("baseline (no floor, no RNG mode)", {"noise_floor": False, "rng_probe": False}),
    ("+ RNG redirection", {"noise_floor": False}),
    ("+ RNG redirection + noise floor (default)", {}),
]


def check(orig: Path, port: Path, steps: int, **flags) -> tuple[float, float]:
    from porter.verify.script import ScriptConfig, run_script

    cfg = ScriptConfig(
        original=orig,
        ported=port,
        steps=steps,
        timeout=900,
        command=(
            sys.executable,
            "train.py",
            "--no-compile",
            "--dtype",
            "float32",
            "--eval-iters",
            "1",
            "--n-layer",
            "1",
            "--out-dir",
            "runs",
            "--max-iters",
            str(steps + 40),
        ),
        **flags,
    )
    t0 = time.perf_counter()
    res = run_script(cfg)
    wall = time.perf_counter() - t0
    if res.verdict != "pass":
        raise SystemExit(f"the check did not pass: {res.reasons}")
    return wall, res.ported.wall_s if res.ported else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    opts = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    with tempfile.TemporaryDirectory() as tmp:
        orig, port = Path(tmp) / "original", Path(tmp) / "ported"
        shutil.copytree(PROJECT / "src", orig)
        shutil.copytree(PROJECT / "expected" / "xla", port)
        train = port / "train.py"
        text = train.read_text()
        if "wte.weight = model.lm_head.weight" not in text:  # the faithful port (test_script_mode)
            text = text.replace(
                "    model.to(device)\n",
                "    model.to(device)\n    model.transformer.wte.weight = model.lm_head.weight\n",
                1,
            )
            train.write_text(text)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in VARIANTS}
        for _ in range(opts.repeats):
            for name, flags in VARIANTS:
                runs[name].append(check(orig, port, opts.steps, **flags))
    base_wall = statistics.median(w for w, _ in runs[VARIANTS[0][0]])
    base_port = statistics.median(p for _, p in runs[VARIANTS[0][0]])
    print(f"{'variant':44} {'check s':>8} {'ported side s':>14}  ratios to the baseline")
    for name, _ in VARIANTS:
        wall = statistics.median(w for w, _ in runs[name])
        port_s = statistics.median(p for _, p in runs[name])
        print(
            f"{name:44} {wall:8.1f} {port_s:14.1f}  check ×{wall / base_wall:.2f}, "
            f"ported side ×{port_s / base_port:.2f}"
        )


if __name__ == "__main__":
    main()
