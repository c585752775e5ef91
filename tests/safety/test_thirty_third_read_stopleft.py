"""The thirty-third read of the workers under Ctrl-Z, second wave (stopleft, on 10f79650): each test failed there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTSTP"), reason="no job control")

# porter's worker (parity-check's, verify's, trace record's: `WorkerSet.run`) of a program that counts
# 40 steps of 0.05 s, under a timeout far longer than its work and shorter than the stop below
_PORTER = """
import json, sys
from pathlib import Path
from porter.verify.procs import WorkerSet
work = Path(sys.argv[1])
counter = (
    "import os, time\\n"
    "open('pid', 'w').write(str(os.getpid()))\\n"
    "for n in range(1, 41):\\n"
    "    open('count.new', 'w').write(str(n)); os.replace('count.new', 'count'); time.sleep(0.05)\\n"
)
with WorkerSet() as workers:
    r = workers.run([sys.executable, "-c", counter], cwd=work, env=dict(__import__("os").environ),
                    log_path=work / "log", timeout=float(sys.argv[2]))
print(json.dumps({"rc": r.returncode, "timed_out": r.timed_out}), flush=True)
"""


def _state(pid: int) -> str:
    """A process's state (`/proc/PID/stat`'s third field: T is stopped); '' once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


def _until(what, limit: float = 30.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if what():
            return True
        time.sleep(0.02)
    return what()


def test_ctrl_z_stops_the_worker_with_porter_and_its_stopped_time_is_not_its_timeout(tmp_path: Path) -> None:
    """Ctrl-Z (SIGTSTP to porter's group) stopped porter only: the worker, in its own session, ran on
    (its counter 1 -> 30 while the shell said "Stopped"). Now the worker's group is stopped with
    porter (state T, its counter still), continued on SIGCONT, and the 9 s stopped do not count
    against its 8 s timeout: it ends as done, not timed out."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # its own process group in this session (a job, as a shell starts it): a group whose parent is in
    # another session is orphaned, and the kernel drops a Ctrl-Z sent there
    porter = subprocess.Popen(
        [sys.executable, "-c", _PORTER, str(tmp_path), "8"], env=env, stdout=subprocess.PIPE, process_group=0
    )
    worker = 0
    try:
        assert _until(lambda: (tmp_path / "count").exists() and (tmp_path / "pid").exists())
        worker = int((tmp_path / "pid").read_text())
        os.kill(porter.pid, signal.SIGTSTP)
        assert _until(lambda: _state(porter.pid) == "T")
        assert _until(lambda: _state(worker) == "T", 10), f"the worker ran on: state {_state(worker)!r}"
        before = (tmp_path / "count").read_text()
        time.sleep(9)
        assert _state(worker) == "T" and (tmp_path / "count").read_text() == before
        os.killpg(porter.pid, signal.SIGCONT)  # `fg`
        out, _ = porter.communicate(timeout=60)
        assert json.loads(out) == {"rc": 0, "timed_out": False}
        assert (tmp_path / "count").read_text() == "40"
    finally:
        for pid in (porter.pid, worker) if porter.poll() is None else ():
            if pid:
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.killpg(pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
        porter.wait()
