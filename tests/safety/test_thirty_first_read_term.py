"""The thirty-first read of terminal and report output (term, on db3dd76): each test failed there."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from tests.safety.conftest import CUDA, REPO


def _porter(argv: list[str], cwd) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(cwd / ".c")}
    return subprocess.run([sys.executable, "-m", "porter", *argv], cwd=cwd, env=env, capture_output=True, timeout=300)


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
        run = _porter([command, "m.py", "-t", "xla", *extra, "--report", "r.md"], tmp_path)
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
    run = _porter(["lint", "m.py", "-t", "xla", "--report", "r.html"], tmp_path)
    assert (run.returncode, oct(stat.S_IMODE(report.stat().st_mode))) == (1, "0o600"), run.stderr
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_report_of_a_long_name_is_written(tmp_path):
    # a name of 245 to 255 bytes, which the file system takes: its temporary's name did not fit
    # ("File name too long", exit 2); `-o` cuts the temporary's name
    (tmp_path / "m.py").write_bytes(CUDA)
    name = "r" * 248 + ".md"
    run = _porter(["lint", "m.py", "-t", "xla", "--report", name], tmp_path)
    assert (run.returncode, (tmp_path / name).is_file()) == (1, True), run.stderr
