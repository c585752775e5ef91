"""The thirty-fourth read of terminal and report output (term, on 73040789): each test failed there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.safety.test_thirty_third_read_stopleft import _state, _until

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTSTP"), reason="no job control")

_ROOT = Path(__file__).resolve().parents[2]

# a side (verify's, trace record's) under its own alarm: deadline 4 s, so `signal.alarm(3)`; 0.5 s of work
# (a loaded machine's delays count as awake: the margin is 2.5 s)
_SIDE = """
import sys, time
from porter.verify.launch import _alarm
_alarm({"deadline_s": 4, "stopped_file": sys.argv[1]})
open(sys.argv[2], "w").write("up")
for _ in range(10):
    time.sleep(0.05)
print("done", flush=True)
"""

# porter's worker set running that side, under an 8 s timeout, told where to say the time stopped
_PORTER = """
import json, os, sys
from pathlib import Path
from porter.verify.procs import WorkerSet
work = Path(sys.argv[1])
with WorkerSet() as workers:
    r = workers.run([sys.executable, "-c", sys.argv[2], str(work / "stopped"), str(work / "up")], cwd=work,
                    env=dict(os.environ), log_path=work / "log", timeout=8.0, stopped_file=work / "stopped")
print(json.dumps({"rc": r.returncode, "timed_out": r.timed_out}), flush=True)
"""


def _end(*groups: int) -> None:
    for pid in groups:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.killpg(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def test_the_sides_alarm_leaves_out_the_time_porter_held_it_stopped(tmp_path: Path) -> None:
    """The side's alarm (`signal.alarm`, wall time) fired on `fg` after a Ctrl-Z longer than its
    margin: the side ended "timed out" at once on `fg`, after well under its 3 s awake. Now it counts the time porter says
    it held it stopped: the side ends its work."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    side = subprocess.Popen(
        [sys.executable, "-c", _SIDE, str(tmp_path / "stopped"), str(tmp_path / "up")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        process_group=0,
    )
    try:
        assert _until(lambda: (tmp_path / "up").exists())
        os.killpg(side.pid, signal.SIGSTOP)  # what porter's Ctrl-Z handler sends its workers
        assert _until(lambda: _state(side.pid) == "T")
        time.sleep(6)
        (tmp_path / "stopped").write_text("6.000")  # as porter writes it, before it continues the side
        os.killpg(side.pid, signal.SIGCONT)
        out, _ = side.communicate(timeout=60)
        assert (side.returncode, out.splitlines()[-1:]) == (0, [b"done"]), out.decode(errors="replace")
    finally:
        if side.poll() is None:
            _end(side.pid)
        side.wait()


def test_ctrl_z_longer_than_the_sides_margin_does_not_time_the_side_out(tmp_path: Path) -> None:
    """The same through porter's worker set: Ctrl-Z to porter's group for 6 s, `fg`; porter writes
    the time stopped for the side, whose 3 s alarm then does not end it: done, not timed out."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    porter = subprocess.Popen(
        [sys.executable, "-c", _PORTER, str(tmp_path), _SIDE], env=env, stdout=subprocess.PIPE, process_group=0
    )
    try:
        assert _until(lambda: (tmp_path / "up").exists())
        os.kill(porter.pid, signal.SIGTSTP)
        assert _until(lambda: _state(porter.pid) == "T")
        time.sleep(6)
        os.killpg(porter.pid, signal.SIGCONT)  # `fg`
        out, _ = porter.communicate(timeout=60)
        log = (tmp_path / "log").read_text(errors="replace")
        assert json.loads(out) == {"rc": 0, "timed_out": False}, log
        assert "done" in log
    finally:
        if porter.poll() is None:
            _end(porter.pid)
        porter.wait()


@pytest.mark.parametrize("fmt", ["sarif", "junit", "github", "gitlab"])
def test_statistics_in_a_format_they_are_not_printed_in_is_refused(tmp_path: Path, fmt: str) -> None:
    """`lint --statistics --output-format sarif -o porter.sarif` wrote the text table (`1<TAB>DEV001 ...`)
    into `porter.sarif`, exit 1, unsaid: the upload after it fails on a file that is not SARIF. ruff
    0.17.6 refuses it ("Unsupported serialization format for statistics"). Now exit 2, nothing written."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    env = {k: v for k, v in os.environ.items() if k != "PORTER_OUTPUT_FORMAT"}
    r = subprocess.run(
        [sys.executable, "-m", "porter", "lint", "a.py", "-t", "xla", "--no-cache", "--statistics"]
        + ["--output-format", fmt, "-o", f"out.{fmt}"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (r.returncode, (tmp_path / f"out.{fmt}").exists()) == (2, False), (r.returncode, r.stderr)
    assert f"--statistics and --output-format {fmt} do not go together" in r.stderr
