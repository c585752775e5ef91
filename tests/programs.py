"""Run several torch programs in one Python process, so torch (and torch_xla) load once.

A fresh `python` for each run of an original and its ports paid the imports each time (torch
about 1.7 CPU-s, torch_xla and its device 4.7) for programs that compute for well under a
second. Here each program still runs as a script does: as `__main__`, with its own argv and
working directory, its folder first on `sys.path`, the modules it imported from its folder
forgotten afterwards (an original and its port both have a `model.py`), and torch's one
global switch a port may set (XLA005's swap on conversion) back at torch's default. A program
that raises or exits non-zero is recorded with its traceback, and the next one runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

XLA_CPU = {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"}

_DRIVER = r"""
import contextlib, io, json, os, runpy, sys, traceback
runs, results_path, xla = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if xla:
    import torch_xla
    torch_xla.device()  # autograd sizes its device queues at the first backward: XLA's must exist by then
results = []
for script, args, cwd in runs:
    folder = os.path.dirname(os.path.realpath(script))
    torch = sys.modules.get("torch")  # loaded by the first program that imports it, then kept
    if torch is not None:
        torch.__future__.set_swap_module_params_on_conversion(False)
    before = set(sys.modules)
    sys.argv, sys.path[0] = [script, *args], folder
    os.chdir(cwd)
    out, err, rc = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            rc = 1
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None) or ""
        if os.path.realpath(path).startswith(folder + os.sep):
            del sys.modules[name]
    results.append({"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()})
with open(results_path, "w") as fh:
    json.dump(results, fh)
"""


@dataclass
class Run:
    """One program's exit status and what it printed."""

    rc: int
    stdout: str
    stderr: str


def run_programs(runs: list[tuple[Path, list[str], Path]], tmp_path: Path, *, xla: bool = False, timeout: float = 600) -> list[Run]:
    """Run each (script, args, working directory) in turn in one process on the CPU (with
    CUDA hidden); with `xla`, torch_xla is loaded and its CPU device (XLA:CPU) is ready."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    # one intra-op thread: the suite already runs a test per core, and a second OpenMP thread
    # spin-waiting beside it cost the GPT trainer's CPU run half again its CPU time
    env.update(XLA_CPU if xla else {}, CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    spec = json.dumps([[str(script), list(args), str(cwd)] for script, args, cwd in runs])
    results = tmp_path / "programs.json"
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, spec, str(results), "1" if xla else "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0 and results.is_file(), proc.stdout[-2000:] + proc.stderr[-4000:]
    return [Run(**r) for r in json.loads(results.read_text())]
