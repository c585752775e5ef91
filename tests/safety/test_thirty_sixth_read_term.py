"""The thirty-sixth read of terminal and report output (term, on c5b375fb): each test failed there."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]


def _porter(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_") and k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [sys.executable, "-m", "porter", *args],
        env={**base, "PYTHONPATH": str(_ROOT), **env},
        capture_output=True,
        timeout=300,
    )


def _block(page: str, fence: str) -> list[str]:
    """The lines of the first fenced code block `fence` opens."""
    lines = page.splitlines()
    start = lines.index(fence) + 1
    return lines[start : lines.index("```", start)]


def test_explain_off_a_terminal_keeps_a_makefile_recipes_tab() -> None:
    """`porter explain LCH008 | less` (off a terminal: the page's Markdown source) wrote its
    Makefile example's recipe line indented by eight spaces: rich turns a tab into spaces. GNU
    make reads a recipe only after a tab (its manual, "Recipe Syntax"): the line with spaces is
    read as the assignment of a variable `CMAKE_ARGS`, the target has no recipe (`make -n`:
    "Nothing to be done"). Now the source as written."""
    run = _porter("explain", "LCH008")
    assert run.returncode == 0, run.stderr
    block = _block(run.stdout.decode("utf-8"), "```makefile")
    recipe = [line for line in block if "pip install" in line]
    assert recipe and all(line.startswith("\t") for line in recipe), block


def test_explain_off_a_terminal_still_escapes_what_the_encoding_lacks() -> None:
    """Control: a page with characters an ASCII stream lacks (AMP001's) is still written, with
    escapes, exit 0; a page with no tab is its source as before."""
    run = _porter("explain", "AMP001", PYTHONIOENCODING="ascii")
    assert run.returncode == 0, run.stderr
    assert run.stdout.isascii() and b"AMP001" in run.stdout
    plain = _porter("explain", "DEV001").stdout.decode("utf-8")
    assert plain.startswith("# DEV001 `cuda-method`\n") and plain.endswith("\n") and not plain.endswith("\n\n")
    assert all(line == line.rstrip() for line in plain.splitlines())  # no padding off a terminal


# the thirty-fourth read's side (its alarm 4 s, under porter's WorkerSet, timeout 8 s), its work done in a child it
# waits on, as a launcher's `python` or a DataLoader's worker; the child writes its pid to "up"
_CHILD = (
    "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\nfor _ in range(10):\n    time.sleep(0.05)\n"
)
_SIDE_WITH_A_CHILD = f"""
import subprocess, sys
from porter.verify.launch import _alarm
_alarm({{"deadline_s": 4, "stopped_file": sys.argv[1]}})
subprocess.run([sys.executable, "-c", {_CHILD!r}, sys.argv[2]], check=True)
print("done", flush=True)
"""
_PORTER_RUN = """
import json, os, sys
from pathlib import Path
from porter.verify.procs import WorkerSet
work = Path(sys.argv[1])
with WorkerSet() as workers:
    r = workers.run([sys.executable, "-c", sys.argv[2], str(work / "stopped"), str(work / "up")], cwd=work,
                    env=dict(os.environ), log_path=work / "log", timeout=8.0, stopped_file=work / "stopped")
print(json.dumps({"rc": r.returncode, "timed_out": r.timed_out}), flush=True)
"""


def _state(pid: int) -> str:
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


def _run_side(work: Path, side: str, stop: bool) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    porter = subprocess.Popen([sys.executable, "-c", _PORTER_RUN, str(work), side], env=env, stdout=subprocess.PIPE)
    try:
        assert _until(lambda: (work / "up").exists() and (work / "up").read_text() != "")
        if stop:
            child = int((work / "up").read_text())
            os.kill(child, signal.SIGSTOP)
            assert _until(lambda: _state(child) == "T")
            time.sleep(6)
            with contextlib.suppress(ProcessLookupError):  # (ended with the side at its timeout)
                os.kill(child, signal.SIGCONT)
        out, _ = porter.communicate(timeout=60)
        return json.loads(out), (work / "log").read_text(errors="replace")
    finally:
        if porter.poll() is None:
            porter.kill()
        porter.wait()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="no /proc")
def test_a_stop_of_the_sides_child_is_not_counted_as_time_awake(tmp_path: Path) -> None:
    """`kill -STOP` of the process the side waits on (not the side: its child), 6 s over the side's
    4 s alarm, then SIGCONT: the side ended `TimedOut: no result after 4 s awake (time stopped not
    counted)` after 0.5 s of work, rc 1: porter read the side's own state only (S, waiting). Now a
    stop of any process the worker started is read as the worker's: done."""
    result, log = _run_side(tmp_path, _SIDE_WITH_A_CHILD, stop=True)
    assert result == {"rc": 0, "timed_out": False}, log
    assert "done" in log and "TimedOut" not in log


def test_a_side_whose_child_overruns_is_still_timed_out(tmp_path: Path) -> None:
    """Control: a child that runs past the side's alarm, never stopped, still ends the side at it."""
    slow = _SIDE_WITH_A_CHILD.replace(repr(_CHILD), repr(_CHILD.replace("range(10)", "range(600)")))
    result, log = _run_side(tmp_path, slow, stop=False)
    assert result["rc"] != 0 and "TimedOut" in log, log
