"""The verifier's own overhead: `porter parity-check` wall time on a small transformer over
the wall time of the bare model runs it wraps (each side in a plain subprocess: import
torch (and torch_xla), build the model, run the same number of steps, sync).

    PJRT_DEVICE=CPU python benchmarks/bench_verify.py [--repeats 5] [--xla-opt0]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "verify" / "models"

BARE = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {tree!r})
    xla = {xla}
    if xla:
        import torch_xla, torch_xla.core.xla_model as xm
        dev = torch_xla.device()
        def sync(): torch_xla.sync(); xm.wait_device_ops()
    else:
        dev = torch.device("cpu")
        def sync(): pass
    import types
    src = open({tree!r} + "/tinynet.py").read()
    if not xla:  # the original is CUDA code: run the same model on the CPU, no shim
        src = (src.replace('"cuda"', '"cpu"').replace(".cuda()", ".cpu()")
                  .replace("torch.cuda.synchronize()", "None"))
    tinynet = types.ModuleType("tinynet")
    exec(compile(src, "tinynet.py", "exec"), tinynet.__dict__)
    torch.manual_seed(0)
    model = tinynet.make_model().to(dev).eval()
    x, _ = tinynet.example_inputs()
    x = x.to(dev)
    for _ in range({steps}):
        with torch.no_grad():
            model(x)
        sync()
""")


def bare_side(tree: Path, xla: bool, steps: int, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", BARE.format(tree=str(tree), xla=xla, steps=steps)],
        check=True,
        env=env,
        cwd=tree,
        capture_output=True,
    )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--xla-opt0", action="store_true", help="XLA_FLAGS=--xla_backend_optimization_level=0")
    args = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("PJRT_DEVICE", "CPU")
    if args.xla_opt0:
        env["XLA_FLAGS"] = "--xla_backend_optimization_level=0"
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    from porter.verify import ParityConfig, run_parity

    steps = 1 + args.warmup + args.repeats + 1  # first, warm-up, timed, sync-probe step
    bare_ref = bare_side(MODELS / "original", False, steps, env | {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    bare_port = bare_side(MODELS / "ported_xla", True, steps, env)
    for explain in (False, True):
        cfg = ParityConfig(
            original=MODELS / "original",
            ported=MODELS / "ported_xla",
            entry="tinynet:make_model",
            inputs="tinynet:example_inputs",
            warmup=args.warmup,
            repeats=args.repeats,
            explain=explain,
        )
        t0 = time.perf_counter()
        r = run_parity(cfg)
        total = time.perf_counter() - t0
        assert r.verdict == "pass", r.reasons
        bare = bare_ref + bare_port
        print(
            f"explain={explain!s:5}  parity-check {total:6.1f} s   bare runs {bare:6.1f} s "
            f"(reference {bare_ref:.1f} s + ported {bare_port:.1f} s)   overhead "
            f"{total - bare:+6.1f} s = {total / bare:.2f}x   "
            f"[reference side {r.reference.wall_s:.1f} s, ported side {r.ported.wall_s:.1f} s, "
            f"ported phases {', '.join(f'{k} {v:.1f}' for k, v in r.ported.phase_s.items())}]"
        )


if __name__ == "__main__":
    main()
