"""Runs the two sides, each in its own subprocess with a timeout, and collects what they
wrote. The reference runs first: it writes the initial weights and the inputs that the
ported side loads."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import porter
from porter.verify.config import ParityConfig
from porter.verify.devices import hardware_hints
from porter.verify.procs import WorkerSet, log_tail

if TYPE_CHECKING:
    from porter.verify.script import ScriptConfig  # script imports this module


@dataclass
class SideRun:
    role: str
    status: str  # ok | error | timeout | killed | crashed
    returncode: int | None
    wall_s: float
    out: Path
    meta: dict = field(default_factory=dict)
    error: dict | None = None
    log_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def side_env(role: str, cfg: ParityConfig | ScriptConfig, base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    pkg_root = str(Path(porter.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if role == "ported":
        hints = hardware_hints()
        if "PJRT_DEVICE" not in env and not hints.get(cfg.target if cfg.target != "xla" else "tpu"):
            env["PJRT_DEVICE"] = "CPU"  # no accelerator device files: XLA's CPU client
        env.setdefault("TPU_SKIP_MDS_QUERY", "1")  # no hang on a cloud metadata query
    else:
        # the reference is the original's CUDA run: the target runtimes never load there
        # (porter.verify.devices.keep_reference_off_targets), not even through torch's autoload,
        # and Hugging Face's libraries, which pick XLA whenever torch_xla is importable, are told
        # so in processes the program starts itself too
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
        env["USE_TORCH_XLA"] = "0"
    return env


def classify(rc: int | None, timed_out: bool, completed: bool, error: dict | None, phase: str,
             timeout: float) -> tuple[str, dict | None]:
    """(status, error) of a finished worker: ok | error | timeout | killed | crashed."""
    if timed_out:
        return "timeout", {"kind": "timeout", "phase": phase, "type": "Timeout",
                           "message": f"no result after {timeout:g} s (still in phase '{phase}'); "
                                      "the process group was killed", "location": None}
    if completed:
        return "ok", None
    if error is not None:
        return "error", error
    if rc is not None and rc < 0:
        sig = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        why = " (the kernel's out-of-memory killer, most likely)" if -rc == signal.SIGKILL else ""
        return "killed", {"kind": "out_of_memory" if -rc == signal.SIGKILL else "crashed",
                          "phase": phase, "type": sig,
                          "message": f"killed by {sig}{why} in phase '{phase}'", "location": None}
    return "crashed", {"kind": "crashed", "phase": phase, "type": f"exit status {rc}",
                       "message": f"the worker exited with status {rc} in phase '{phase}' "
                                  "without writing a result", "location": None}


def run_side(role: str, cfg: ParityConfig, workdir: Path, ref_out: Path | None = None,
             workers: WorkerSet | None = None) -> SideRun:
    out = workdir / role
    out.mkdir(parents=True, exist_ok=True)
    tree = cfg.original if role == "reference" else cfg.ported
    job = {
        "role": role, "tree": str(tree), "out": str(out), "entry": cfg.entry,
        "inputs": cfg.inputs_ref, "target": cfg.target, "dtype": cfg.dtype, "seed": cfg.seed,
        "warmup": cfg.warmup, "repeats": cfg.repeats, "train_steps": cfg.train_steps,
        "explain": cfg.explain, "ref_out": str(ref_out) if ref_out else None,
    }
    job_path = out / "job.json"
    job_path.write_text(json.dumps(job, indent=1))
    log_path = out / "log.txt"
    t0 = time.perf_counter()
    own = workers is None
    workers = workers or WorkerSet().__enter__()
    try:
        res = workers.run([cfg.python, "-m", "porter.verify.worker", str(job_path)], cwd=tree,
                          env=side_env(role, cfg), log_path=log_path, timeout=cfg.timeout)
    finally:
        if own:
            workers.__exit__(None, None, None)
    rc, timed_out = res.returncode, res.timed_out
    wall = time.perf_counter() - t0
    meta = {}
    if (out / "meta.json").is_file():
        try:
            meta = json.loads((out / "meta.json").read_text())
        except json.JSONDecodeError:
            meta = {}
    phase = (out / "phase.txt").read_text().strip() if (out / "phase.txt").is_file() else "startup"
    error = None
    if (out / "error.json").is_file():
        error = json.loads((out / "error.json").read_text())
    status, error = classify(rc, timed_out, rc == 0 and bool(meta.get("completed")), error,
                             phase, cfg.timeout)
    return SideRun(role, status, rc, wall, out, meta, error, log_tail(log_path))


def run_both(cfg: ParityConfig, workdir: Path | None = None) -> tuple[SideRun, SideRun | None, Path]:
    """Reference first; the ported side only when the reference completed (without a valid
    reference there is nothing to compare with, and a reference whose outputs hold NaN/Inf
    is no baseline)."""
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="porter-parity-"))
    with WorkerSet() as workers:
        if workdir is None:
            workers.add_temp_dir(base)  # removed if porter is interrupted
        ref = run_side("reference", cfg, base, workers=workers)
        if not ref.ok or ref.meta.get("nonfinite_outputs"):
            return ref, None, base
        ported = run_side("ported", cfg, base, ref_out=ref.out, workers=workers)
    return ref, ported, base


__all__ = ["SideRun", "run_side", "run_both", "side_env", "classify"]
