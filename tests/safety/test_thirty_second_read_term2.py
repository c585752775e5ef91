"""The thirty-second read of streams, outputs and reports, second wave (term2, on 7269850e): each
test failed there."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import termios
import time

import pytest

from tests.safety.conftest import CUDA, REPO

_LINES = b"import torch\n" + b"".join(b"x%d = torch.randn(3).cuda()\n" % i for i in range(40))


def _started(tmp_path, stdout: int, stem: str = "m") -> subprocess.Popen[bytes]:
    """`porter lint` of 30 files `{stem}N.py` (about 60 kB of `full` findings) with `stdout` as its stdout."""
    for i in range(30):
        (tmp_path / f"{stem}{i}.py").write_bytes(_LINES)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    argv = [sys.executable, "-m", "porter", "lint", ".", "-t", "xla", "--output-format", "full", "--jobs", "1"]
    # (SIGINT as a terminal's job gets it: an xdist worker ignores SIGINT, its children inherited that, and
    # porter, rightly leaving an ignored SIGINT ignored, never saw the signal: the fresh-clone runs' hang)
    return subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _unread(fd: int) -> int:
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)


def _wait_until(done, proc: subprocess.Popen[bytes]) -> None:
    """Until `done()` (the output is full, porter waits on it), or porter left first. (A wait with
    no end hung the suite where `done()` never came true: a hang guard, not a time.)"""
    end = time.monotonic() + 300
    while not done():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        if time.monotonic() > end:
            proc.kill()
            pytest.fail(f"porter neither left nor waited on its stdout: {proc.communicate()[1]!r}")
        time.sleep(0.05)


def _waits_on_the_pipe(proc: subprocess.Popen[bytes], read: int, size: int) -> bool:
    """Whether porter waits for room in its stdout pipe: the kernel says its thread sleeps in the
    pipe's write (`wchan`), or the pipe holds its size. The bytes unread alone are not it: a write
    that does not fit in the room its page has left waits for a page, with the room still empty
    (`é0.py`'s findings in 256-character pieces: 3,854 of 4,096 unread; the wait never ended)."""
    try:
        with open(f"/proc/{proc.pid}/wchan") as wchan:
            if "pipe_write" in wchan.read():
                return True
    except OSError:  # no /proc, or porter has left (`_wait_until` sees that)
        pass
    return _unread(read) >= size


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="a pipe's size is set on Linux")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_stdout_waits_on_a_full_pipe_ends_the_run(tmp_path, signum, stem="m"):
    # `porter lint . | less`, less stopped reading, Ctrl-C: stdout on a pipe is always settled
    # (first wave), and the flush at exit then waited on the full pipe for ever
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    size = fcntl.fcntl(write, fcntl.F_GETPIPE_SZ)
    proc = _started(tmp_path, write, stem)
    os.close(write)
    try:
        _wait_until(lambda: _waits_on_the_pipe(proc, read, size), proc)
        proc.send_signal(signum)
        try:
            _, err = proc.communicate(timeout=120)  # a hang, not a time: the base never left
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail("porter did not leave after the signal: it waited on the full pipe")
    finally:
        os.close(read)
    assert proc.returncode == 128 + signum, err
    assert f"porter: interrupted ({signal.Signals(signum).name})".encode() in err, err
    assert b"Traceback" not in err, err


def test_a_socket_stdout_whose_reader_left_with_bytes_unread_is_a_reader_that_left(tmp_path):
    # the reader of a socket closes with bytes unread: the next write is ECONNRESET, not EPIPE;
    # porter printed a traceback, then "Exception ignored … BrokenPipeError", exit 120
    ours, theirs = socket.socketpair()
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    proc = _started(tmp_path, theirs.fileno())
    theirs.close()
    _wait_until(lambda: _unread(ours.fileno()) > 0, proc)
    ours.close()
    _, err = proc.communicate(timeout=300)
    assert (proc.returncode, err) == (0, b"")


def _porter(argv: list[str], cwd) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(cwd / ".c")}
    return subprocess.run([sys.executable, "-m", "porter", *argv], cwd=cwd, env=env, capture_output=True, timeout=300)


@pytest.mark.parametrize("name", ["sp/index.md", "sp/./index.json"])
def test_a_report_named_as_the_split_series_index_is_refused(tmp_path, name):
    # `rewrite . --split sp --report sp/index.md` wrote the series, then the report over its index
    # (the order to apply the patches in), exit 0
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_bytes(CUDA)
    run = _porter(["rewrite", "src", "-t", "xla", "--split", "sp", "--report", name, "--allow-no-vcs"], tmp_path)
    assert (run.returncode, (tmp_path / "sp").exists()) == (2, False), run.stderr
    assert b"is a file --split writes" in run.stderr, run.stderr
    assert (tmp_path / "src" / "m.py").read_bytes() == CUDA
