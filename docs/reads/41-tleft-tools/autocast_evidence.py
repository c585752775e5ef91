"""Evidence for the maintainers' question (twenty-third read, tleft): what a port that adds
bfloat16 autocast to a float32 program differs by, on three tiny Hugging Face models.
Run from a folder holding hf_train.py, with PYTHONPATH naming porter:
    python autocast_evidence.py OUT_DIR [gpt2 llama bert]
For each model: a float32 reference (CUDA shim), a faithful float32 XLA:CPU port and a bf16
autocast XLA:CPU port, recorded with `porter trace record`; each port compared with porter's
verdict, the verdict at float32 tolerances (the port's regime read as float32), and
torch.testing.assert_close on the per-step losses at float32's and bfloat16's default
tolerances (independent of porter's)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from porter.verify.tracecmp import compare_traces
from porter.verify.tracefile import read_trace

HERE = Path(__file__).resolve().parent
ENV = dict(
    os.environ,
    PJRT_DEVICE="CPU",
    OMP_NUM_THREADS="1",
    XLA_FLAGS="--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false",
)


def record(out: Path, side: str, arch: str, amp: str) -> Path:
    path = out / f"{arch}-{side}-{amp}.st"
    args = [sys.executable, "-m", "porter", "trace", "record", "-o", str(path), "--steps", "3", "--no-noise-floor"]
    if side == "xla":
        args += ["--side", "ported"]
    subprocess.run([*args, "--", sys.executable, str(HERE / "hf_train.py"), side, arch, amp], env=ENV, check=True)
    return path


def close(a: torch.Tensor, b: torch.Tensor, **tol) -> bool:
    try:
        torch.testing.assert_close(b, a, **tol)
        return True
    except AssertionError:
        return False


def judge(ref_path: Path, port_path: Path) -> dict:
    ref, port = read_trace(ref_path), read_trace(port_path)
    res = compare_traces(ref, port)
    modules = [m for m in res.modules if m.get("max_rel") is not None]
    row = {
        "regime": res.regime,
        "verdict": res.verdict,
        "max_loss_rel": res.max_loss_rel,
        "max_module_rel": max((m["max_rel"] for m in modules), default=None),
        "modules_failing_at_float32": None,
        "warned": [w for w in res.warnings if "precision regimes" in w],
    }
    port.manifest["precision"] = {**port.manifest.get("precision", {}), "regime": "float32"}
    strict = compare_traces(ref, port)
    row["verdict_at_float32"] = strict.verdict
    row["modules_failing_at_float32"] = sum(not m["passed"] for m in strict.modules)
    row["modules"] = len(strict.modules)
    row["first_reason_at_float32"] = strict.reasons[0]
    rl, pl = ref.tensors["steps.loss"], port.tensors["steps.loss"]
    row["losses"] = [rl.tolist(), pl.tolist()]
    row["assert_close_float32"] = close(rl.float(), pl.float())  # float32 defaults: rtol 1.3e-6, atol 1e-5
    row["assert_close_bfloat16"] = close(rl.bfloat16(), pl.bfloat16())  # bf16 defaults: rtol 1.6e-2, atol 1e-5
    return row


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for arch in sys.argv[2:] or ["gpt2", "llama", "bert"]:
        ref = record(out, "ref", arch, "fp32")
        for amp in ("fp32", "bf16"):
            row = judge(ref, record(out, "xla", arch, amp))
            print(json.dumps({"arch": arch, "port": amp, **row}), flush=True)


if __name__ == "__main__":
    main()
