"""The twenty-ninth read of terminal output, second wave (term2, on ca53b8b): each test failed there."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios

import pytest

from tests.safety.conftest import CUDA, REPO

_WAIT = """
import importlib, os, time
mod = importlib.import_module({module!r})
real, calls = getattr(mod, {name!r}), []
def wrapped(*args, **kwargs):
    calls.append(1)
    if len(calls) == {nth}:
        open({marker!r}, "w").close()
        end = time.monotonic() + 60
        while not os.path.exists({marker!r} + ".closed") and time.monotonic() < end:
            time.sleep(0.05)  # the terminal closes while porter is in this call
    return real(*args, **kwargs)
setattr(mod, {name!r}, wrapped)
"""


def _own_terminal(hang_up=signal.SIG_DFL):
    """The child leads a session whose controlling terminal is its stdin (a pty's far end), as a
    login shell's command does: closing the near end hangs the terminal up and sends SIGHUP
    (`hang_up`: its handler; SIG_IGN as `trap '' HUP`, or a job the shell was told to `disown`)."""

    def start() -> None:
        signal.signal(signal.SIGHUP, hang_up)
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    return start


def _closed_under(argv: list[str], cwd, env: dict, marker, hang_up=signal.SIG_DFL) -> int:
    """`argv` on a pty of its own that is closed once `marker` exists (then `marker`.closed is
    made); its exit status."""
    near, far = os.openpty()
    run = subprocess.Popen(argv, cwd=cwd, env=env, stdin=far, stdout=far, stderr=far, preexec_fn=_own_terminal(hang_up))
    os.close(far)
    while not marker.exists() and run.poll() is None:
        if select.select([near], [], [], 0.1)[0]:
            try:
                os.read(near, 1 << 16)  # (what it says before: the pty must not fill)
            except OSError:
                break
    os.close(near)
    marker.with_name(marker.name + ".closed").touch()
    return run.wait(timeout=180)


@pytest.mark.skipif(not hasattr(termios, "TIOCSCTTY"), reason="a controlling terminal is POSIX's")
def test_a_closed_terminal_ends_the_run_with_sighups_code_and_its_cleanup(tmp_path):
    # the terminal closes (an ssh session dropped): the kernel hangs it up, then sends SIGHUP. The
    # run's cleanup said what was written to the terminal, met EIO and ended as "cannot write the
    # output", exit 2, where SIGHUP's code is 129 (the first wave's test sent SIGHUP to a live pipe)
    (tmp_path / "src").mkdir()
    for i in range(3):
        (tmp_path / "src" / f"m{i}").mkdir()
        (tmp_path / "src" / f"m{i}" / "m.py").write_bytes(CUDA)
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "marker"
    (hook / "sitecustomize.py").write_text(
        _WAIT.format(module="porter.report.series", name="_put", nth=2, marker=str(marker))
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    argv = [sys.executable, "-m", "porter", "rewrite", "src", "--target", "xla", "--split", "series"]
    code = _closed_under(argv, tmp_path, env, marker)
    assert code == 128 + signal.SIGHUP, code
    assert sorted(p.name for p in (tmp_path / "series").iterdir()) == ["0001-m0-devices.patch"]


@pytest.mark.skipif(not hasattr(termios, "TIOCSCTTY"), reason="a controlling terminal is POSIX's")
def test_a_rewrite_whose_terminal_hung_up_without_a_sighup_still_writes_its_files(tmp_path):
    # `porter rewrite . & disown` (or under `trap '' HUP`), then the terminal closes: no SIGHUP, and
    # every write to the terminal fails with EIO. The next progress line ended the run with "cannot
    # write the output", exit 2, none of the files written; a pipe whose reader left goes on
    (tmp_path / "src").mkdir()
    for i in range(4):
        (tmp_path / "src" / f"m{i}.py").write_bytes(CUDA)
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "marker"
    (hook / "sitecustomize.py").write_text(
        _WAIT.format(module="porter.cli.rewrite._Collector", name="__call__", nth=2, marker=str(marker)).replace(
            "importlib.import_module('porter.cli.rewrite._Collector')",
            "importlib.import_module('porter.cli.rewrite')._Collector",
        )
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    argv = [sys.executable, "-m", "porter", "rewrite", "src", "--target", "xla", "--allow-no-vcs"]
    code = _closed_under(argv, tmp_path, env, marker, hang_up=signal.SIG_IGN)
    ported = [p.name for p in sorted((tmp_path / "src").iterdir()) if p.read_bytes() != CUDA]
    assert (code, ported) == (0, ["m0.py", "m1.py", "m2.py", "m3.py"])


_WORKERS = """
import os, sys, tempfile, time
from pathlib import Path
from porter.verify.procs import WorkerSet
w = WorkerSet().__enter__()
d = w.add_temp_dir(Path(tempfile.mkdtemp(prefix="porter-trace-")))
open({marker!r}, "w").close()
try:
    time.sleep(60)
except SystemExit:
    print("porter: interrupted (SIGHUP).", file=sys.stderr, flush=True)  # as `trace record` says it
    raise
"""


@pytest.mark.skipif(not hasattr(termios, "TIOCSCTTY"), reason="a controlling terminal is POSIX's")
def test_a_closed_terminal_while_parity_workers_run_ends_with_sighups_code(tmp_path):
    # parity-check's and `trace record`'s worker set ends its workers on SIGHUP, then the command
    # says it was interrupted: on a hung-up terminal that line raised EIO, a traceback and exit 1
    marker = tmp_path / "marker"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    code = _closed_under([sys.executable, "-c", _WORKERS.format(marker=str(marker))], tmp_path, env, marker)
    assert (code, list(tmp_path.glob("porter-trace-*"))) == (128 + signal.SIGHUP, [])


def test_a_terminal_still_there_is_not_taken_for_a_hung_up_one(tmp_path):
    from porter.core.hangup import hung_up

    near, far = os.openpty()
    try:
        assert hung_up(far) is False
    finally:
        os.close(near)
        os.close(far)
    with open(tmp_path / "f", "w") as f:
        assert hung_up(f.fileno()) is False


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ("README.md", "Exit codes of `rewrite`"),
        ("docs/ci.md", "## Exit codes"),
        ("docs/parity.md", "## Safety of runs"),
    ],
)
def test_every_exit_code_of_a_signal_is_documented(doc, where):
    # the first wave made SIGHUP end a run with 129; the exit codes the docs list said 130 and 143
    # only: a CI script or a wrapper that reads the code met one the docs do not name
    from porter.cli.interrupt import INTERRUPTED

    text = (REPO / doc).read_text(encoding="utf-8")
    section = text[text.index(where) :][:2000]
    assert [c for c in INTERRUPTED if str(c) not in section] == [], doc


def test_a_diff_of_the_copy_whose_reader_left_still_writes_the_copy(tmp_path):
    # `rewrite --diff --out-dir` writes the copy and prints its patch: the patch goes past the
    # console, so the first wave's rule (a command that writes files goes on without its reader)
    # missed it; the broken pipe ended the run, no copy written, exit 0. `--diff` alone keeps 0.
    (tmp_path / "src").mkdir()
    for i in range(3):
        (tmp_path / "src" / f"m{i}.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    gone, write = os.pipe()
    os.close(gone)
    try:
        args = ["rewrite", "src", "--target", "xla", "--diff", "--out-dir", "copy"]
        out = subprocess.run(
            [sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, stdout=write, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    copy = tmp_path / "copy"
    ported = sorted(p.name for p in copy.iterdir() if p.read_bytes() != CUDA) if copy.is_dir() else []
    assert (out.returncode, ported) == (0, ["m0.py", "m1.py", "m2.py"]), out.stderr.decode()[-600:]
