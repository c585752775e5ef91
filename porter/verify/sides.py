"""What each side's process is started with, and how its end is read: shared by model mode
(runner) and script mode (script), which build on it and never on each other."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Protocol

import porter
from porter.verify.devices import hardware_hints


class _Targeted(Protocol):
    @property
    def target(self) -> str: ...


def read_record(path: Path) -> dict | None:
    """A side's own record (`error.json`, `meta.json`): the object it holds, or None when there
    is none, or it is not one whole JSON object (a side killed at its deadline while writing
    it left it empty or cut off; parity-check read it with json.loads and ended in a
    JSONDecodeError traceback)."""
    import json

    try:
        with open(path, "rb") as fh:
            value = json.loads(fh.read(16 * 2**20))
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def write_record(path: Path, value: object) -> None:
    """`value` as JSON at `path`, whole or not at all: a temporary beside it, renamed over it
    (a side can be killed at its deadline while it writes)."""
    import json

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value, indent=1))
    os.replace(tmp, path)


def side_env(role: str, cfg: _Targeted, base: dict | None = None) -> dict:
    """One side's environment: porter importable; the port on its target's device (XLA's CPU
    client where no accelerator is attached); the reference kept off every target."""
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


def classify(
    rc: int | None, timed_out: bool, completed: bool, error: dict | None, phase: str, timeout: float
) -> tuple[str, dict | None]:
    """(status, error) of a finished worker: ok | error | timeout | killed | crashed."""
    if timed_out:
        return "timeout", {
            "kind": "timeout",
            "phase": phase,
            "type": "Timeout",
            "message": f"no result after {timeout:g} s (still in phase '{phase}'); the process group was killed",
            "location": None,
        }
    if completed:
        return "ok", None
    if error is not None:
        return "error", error
    if rc is not None and rc < 0:
        sig = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        why = " (the kernel's out-of-memory killer, most likely)" if -rc == signal.SIGKILL else ""
        return "killed", {
            "kind": "out_of_memory" if -rc == signal.SIGKILL else "crashed",
            "phase": phase,
            "type": sig,
            "message": f"killed by {sig}{why} in phase '{phase}'",
            "location": None,
        }
    return "crashed", {
        "kind": "crashed",
        "phase": phase,
        "type": f"exit status {rc}",
        "message": f"the worker exited with status {rc} in phase '{phase}' without writing a result",
        "location": None,
    }
