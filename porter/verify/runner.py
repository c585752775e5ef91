"""Runs the two sides, each in its own subprocess with a timeout, and collects what they
wrote. The reference runs first: it writes the initial weights and the inputs that the
ported side loads."""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from porter.verify.config import ParityConfig
from porter.verify.procs import WorkerSet, log_tail, sweep_left
from porter.verify.sides import classify, read_record, side_env


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


def run_side(
    role: str, cfg: ParityConfig, workdir: Path, ref_out: Path | None = None, workers: WorkerSet | None = None
) -> SideRun:
    out = workdir / role
    out.mkdir(parents=True, exist_ok=True)
    tree = cfg.original if role == "reference" else cfg.ported
    job = {
        "role": role,
        "tree": str(tree),
        "out": str(out),
        "entry": cfg.entry,
        "inputs": cfg.inputs_ref,
        "target": cfg.target,
        "dtype": cfg.dtype,
        "seed": cfg.seed,
        "warmup": cfg.warmup,
        "repeats": cfg.repeats,
        "train_steps": cfg.train_steps,
        "explain": cfg.explain,
        "ref_out": str(ref_out) if ref_out else None,
    }
    job_path = out / "job.json"
    job_path.write_text(json.dumps(job, indent=1))
    log_path = out / "log.txt"
    t0 = time.perf_counter()
    own = workers is None
    workers = workers or WorkerSet().__enter__()
    try:
        res = workers.run(
            # by its file path: `-m` looked it up in the tree first, where a project's own
            # `porter` shadowed it
            [cfg.python, str(Path(__file__).with_name("worker.py")), str(job_path)],
            cwd=tree,
            env=side_env(role, cfg),
            log_path=log_path,
            timeout=cfg.timeout,
        )
    finally:
        if own:
            workers.__exit__(None, None, None)
    rc, timed_out = res.returncode, res.timed_out
    wall = time.perf_counter() - t0
    meta = read_record(out / "meta.json") or {}
    phase = (out / "phase.txt").read_text().strip() if (out / "phase.txt").is_file() else "startup"
    error = read_record(out / "error.json")
    status, error = classify(rc, timed_out, rc == 0 and bool(meta.get("completed")), error, phase, cfg.timeout)
    return SideRun(role, status, rc, wall, out, meta, error, log_tail(log_path))


def run_both(cfg: ParityConfig, workdir: Path | None = None) -> tuple[SideRun, SideRun | None, Path]:
    """Reference first; the ported side only when the reference completed (without a valid
    reference there is nothing to compare with, and a reference whose outputs hold NaN/Inf
    is no baseline). The `porter-parity-*` folders a porter killed outright left are removed
    first, as `trace record`'s and script mode's are (twenty-eighth trace2 read's leftover)."""
    if workdir is None:
        sweep_left("porter-parity-")
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
