"""The thirty-first read of terminal and report output (term, on db3dd76): each test failed there."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from tests.safety.conftest import CUDA, REPO, porter


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="a FIFO is POSIX's")
@pytest.mark.parametrize("command", ["lint", "rewrite"])
def test_a_report_named_as_a_fifo_reaches_its_reader(tmp_path, command):
    # `mkfifo r.md; gh pr comment -F r.md & porter lint . --report r.md`: the report's own
    # temporary was renamed over the FIFO, its reader waited for good; `-o` writes into it
    (tmp_path / "m.py").write_bytes(CUDA)
    fifo = tmp_path / "r.md"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (a report of one file fits the pipe)
    try:
        extra = ["--diff"] if command == "rewrite" else []
        run = porter(command, "m.py", "-t", "xla", *extra, "--report", "r.md", cwd=tmp_path, timeout=300)
        got = b""
        while chunk := os.read(reader, 1 << 16):
            got += chunk
    finally:
        os.close(reader)
    assert (run.returncode, stat.S_ISFIFO(os.lstat(fifo).st_mode)) == (1, True), run.stderr
    assert got.startswith(b"## porter"), got[:200]


def test_a_private_report_keeps_its_permission_bits(tmp_path):
    # a report holds the project's code: one kept 0600 became 0644 at each run (`-o` keeps them)
    (tmp_path / "m.py").write_bytes(CUDA)
    report = tmp_path / "r.html"
    report.write_text("")
    report.chmod(0o600)
    run = porter("lint", "m.py", "-t", "xla", "--report", "r.html", cwd=tmp_path, timeout=300)
    assert (run.returncode, oct(stat.S_IMODE(report.stat().st_mode))) == (1, "0o600"), run.stderr
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_report_of_a_long_name_is_written(tmp_path):
    # a name of 245 to 255 bytes, which the file system takes: its temporary's name did not fit
    # ("File name too long", exit 2); `-o` cuts the temporary's name
    (tmp_path / "m.py").write_bytes(CUDA)
    name = "r" * 248 + ".md"
    run = porter("lint", "m.py", "-t", "xla", "--report", name, cwd=tmp_path, timeout=300)
    assert (run.returncode, (tmp_path / name).is_file()) == (1, True), run.stderr


_GATED = """
import os, time, {module} as m
real = m.{name}
def gated(*args, **kwargs):
    if not os.path.exists({gate!r}):
        open({marker!r}, "w").close()
        while not os.path.exists({gate!r}):
            time.sleep(0.05)
    return real(*args, **kwargs)
m.{name} = gated
"""


def _stopped_past_the_limit(argv: list[str], cwd, module: str, name: str) -> subprocess.CompletedProcess[bytes]:
    """porter `argv`, stopped (SIGSTOP to its group, as Ctrl-Z stops a job) for 10 s while the
    first call of `module.name` is in flight, then continued; that call waits on a gate opened
    right after SIGCONT, so the file's own time is ~0 s."""
    hook, marker, gate = cwd / "hook", cwd / "inflight", cwd / "gate"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_GATED.format(module=module, name=name, gate=str(gate), marker=str(marker)))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "NO_COLOR": "1", "XDG_CACHE_HOME": str(cwd / ".c")}
    run = subprocess.Popen(
        [sys.executable, "-m", "porter", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # (an orphaned group: SIGTSTP is discarded there, so SIGSTOP stands in)
    )
    try:
        end = time.monotonic() + 240
        while not marker.exists() and run.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        os.killpg(run.pid, signal.SIGSTOP)
        time.sleep(10)  # stopped past the limit
        os.killpg(run.pid, signal.SIGCONT)
    finally:
        gate.touch()
    out, err = run.communicate(timeout=300)
    return subprocess.CompletedProcess(argv, run.returncode, out, err)


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="job control is POSIX's")
def test_a_job_stopped_longer_than_the_file_timeout_does_not_fail_its_files(tmp_path):
    # Ctrl-Z, then `fg` a while later: the limit is judged by `time.monotonic()`, which runs on while
    # the job is stopped, so a file that needed a moment was "took longer than 6 s to port ... not
    # checked"
    (tmp_path / "m.py").write_bytes(CUDA)
    argv = ["lint", "m.py", "-t", "xla", "--no-cache", "--output-format", "concise", "--file-timeout", "6"]
    run = _stopped_past_the_limit(argv, tmp_path, "porter.pipeline.parallel", "port_one")
    assert (run.returncode, b"took longer" in run.stderr) == (1, False), run.stderr
    assert b"DEV001" in run.stdout


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="job control is POSIX's")
def test_a_kernels_run_stopped_longer_than_the_file_timeout_lists_its_kernel(tmp_path):
    # the same for the commands that read one file at a time in a forked child (`bounded`)
    from tests.safety.test_thirtieth_read_term2 import _KERNEL

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(_KERNEL)
    argv = ["kernels", "src", "--file-timeout", "6"]
    run = _stopped_past_the_limit(argv, tmp_path, "porter.pipeline.bounded", "_child")
    assert (b"took longer" in run.stdout + run.stderr, b"add_kernel" in run.stdout) == (False, True), run.stderr
