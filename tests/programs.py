"""Run torch programs in a long-lived Python process, so torch (and torch_xla) load once.

A fresh `python` for each run of an original and its ports paid the imports each time (torch
about 1.7 CPU-s, torch_xla and its device 4.7) for programs that compute for well under a
second. Here a test process keeps one runner process of each kind (plain torch; torch with
torch_xla's CPU device ready) and hands it programs. Each program still runs as a script does:
as `__main__`, with its own argv and working directory, its folder first on `sys.path`, the
modules it imported from its folder forgotten afterwards (an original and its port both have a
`model.py`), and `os.environ`, `sys.path`, torch's default dtype, grad mode and the one global
switch a port may set (XLA005's swap on conversion) put back as they were. A program that
raises or exits non-zero is recorded with its traceback, and the next one runs.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

XLA_CPU = {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"}

# reads one request a line (the runs, the results file), answers "done" on its own channel:
# fd 1 goes to stderr, so that nothing a program or a native library prints can reach it
_RUNNER = r"""
import contextlib, io, json, os, runpy, sys, traceback
answer = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
import torch
if sys.argv[1] == "1":
    import torch_xla
    torch_xla.device()  # autograd sizes its device queues at the first backward: XLA's must exist by then
environ, path, dtype = dict(os.environ), list(sys.path), torch.get_default_dtype()


def run(script, args, cwd):
    folder = os.path.dirname(os.path.realpath(script))
    torch.__future__.set_swap_module_params_on_conversion(False)
    torch.set_default_dtype(dtype)
    torch.set_grad_enabled(True)
    os.environ.clear()
    os.environ.update(environ)
    before = set(sys.modules)
    sys.argv, sys.path[:] = [script, *args], [folder, *path[1:]]
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
        file = getattr(sys.modules[name], "__file__", None) or ""
        if os.path.realpath(file).startswith(folder + os.sep):
            del sys.modules[name]
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


for line in sys.stdin:
    runs, results = json.loads(line)
    with open(results, "w") as fh:
        json.dump([run(*r) for r in runs], fh)
    answer.write("done\n")
    answer.flush()
"""


@dataclass
class Run:
    """One program's exit status and what it printed."""

    rc: int
    stdout: str
    stderr: str


class _Runner:
    """One runner process and the file its stderr goes to (a pipe nobody reads would fill)."""

    def __init__(self, xla: bool) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
        }
        # one intra-op thread: the suite already runs a test per core, and a second OpenMP
        # thread spin-waiting beside it cost the GPT trainer's CPU run half again its CPU time
        env.update(
            XLA_CPU if xla else {},
            CUDA_VISIBLE_DEVICES="",
            PYTHONWARNINGS="ignore",
            PYTHONDONTWRITEBYTECODE="1",
            OMP_NUM_THREADS="1",
        )
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _RUNNER, "1" if xla else "0"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def ask(self, request: str, timeout: float) -> bool:
        """Send one request; whether the answer came (else the runner is ended)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(request + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if ready and self.proc.stdout.readline() == "done\n":
            return True
        self.proc.kill()
        self.proc.wait()
        return False

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-4000:].decode(errors="replace")


_runners: dict[bool, _Runner] = {}


@atexit.register
def _end_runners() -> None:
    """A runner ends at the end of its input: close it, and wait a moment for that."""
    for runner in _runners.values():
        if runner.proc.stdin is not None:
            runner.proc.stdin.close()
        try:
            runner.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            runner.proc.kill()


def run_programs(
    runs: list[tuple[Path, list[str], Path]], tmp_path: Path, *, xla: bool = False, timeout: float = 600
) -> list[Run]:
    """Run each (script, args, working directory) in turn on the CPU (with CUDA hidden) in this
    test process's runner; with `xla`, in the one where torch_xla's CPU device (XLA:CPU) is ready."""
    runner = _runners.get(xla)
    if runner is None or runner.proc.poll() is not None:
        runner = _runners[xla] = _Runner(xla)
    results = tmp_path / "programs.json"
    request = json.dumps([[[str(script), list(args), str(cwd)] for script, args, cwd in runs], str(results)])
    ok = runner.ask(request, timeout)
    assert ok and results.is_file(), (
        f"the program runner {'ended' if runner.proc.poll() is not None else 'did not answer'}:\n{runner.tail()}"
    )
    return [Run(**r) for r in json.loads(results.read_text())]
