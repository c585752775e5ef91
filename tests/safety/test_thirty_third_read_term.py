"""The thirty-third read of terminal and report output (term, on 6d9b5ff1): each test failed there."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from tests.safety import test_thirty_second_read_term2 as term2
from tests.safety.conftest import CUDA, REPO, porter


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="a pipe's size is set on Linux")
def test_an_interrupt_while_stdout_waits_on_a_pipe_with_room_left_ends_the_run(tmp_path):
    # files named past ASCII: each 256-character piece of `full` is more than 256 bytes, and the
    # write that does not fit in the page's room waits with 3,854 of 4,096 bytes unread; the
    # second wave's test waited for 4,096 with no end (a hang of the suite, not a verdict)
    term2.test_an_interrupt_while_stdout_waits_on_a_full_pipe_ends_the_run(tmp_path, signal.SIGINT, stem="é")


def test_write_baseline_with_diff_is_refused_not_left_without_its_patch(tmp_path):
    # `lint --write-baseline b.json --diff`: the baseline written, no patch printed, exit 0,
    # unsaid (`--diff` says "write nothing"); ruff 0.17.6 refuses `--diff --add-noqa`
    (tmp_path / "m.py").write_bytes(CUDA)
    run = porter("lint", "m.py", "-t", "xla", "--write-baseline", "b.json", "--diff", cwd=tmp_path)
    assert (run.returncode, (tmp_path / "b.json").exists(), run.stdout) == (2, False, b""), run.stderr
    assert b"--diff and --write-baseline do not go together" in run.stderr, run.stderr


# the first draw of rewrite's progress bar made to wait (a terminal whose output is stopped, Ctrl-S,
# or a slow ssh link: the write waits), after it has hidden the cursor; the bar from the first file
_FIRST_DRAW_WAITS = """
import os, time
import rich.live
import porter.report.progress as progress
progress.RunProgress.__init__.__kwdefaults__["delay"] = 0.0
real = rich.live.Live.refresh
def waiting(self):
    if not os.path.exists({marker!r}):
        open({marker!r}, "w").close()
        while True:
            time.sleep(0.05)
    return real(self)
rich.live.Live.refresh = waiting
"""


def _on_a_terminal(argv: list[str], cwd, hook, python: bool = False) -> tuple[subprocess.Popen[bytes], int]:
    """porter (or, `python`, a script of `argv`) as a terminal's job: its own session, a pty (100
    columns) its controlling terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(PYTHONPATH=f"{REPO}{os.pathsep}{hook}", TERM="xterm-256color", XDG_CACHE_HOME=str(hook))

    def terminal_job() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(
        [sys.executable, *argv] if python else [sys.executable, "-m", "porter", *argv],
        cwd=cwd,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        preexec_fn=terminal_job,
    )
    os.close(follower)
    return proc, leader


def _read_all(proc: subprocess.Popen[bytes], leader: int, until=None) -> bytes:
    """What the terminal got, until `until()` (or porter's end; bounded: a hang guard)."""
    out, end = b"", time.monotonic() + 300
    os.set_blocking(leader, False)
    while time.monotonic() < end:
        # (before the read: what came until then is read; porter's end too, or what it wrote after the read and
        # before it ended, its last line, was lost)
        done = until() if until is not None else proc.poll() is not None
        try:
            while chunk := os.read(leader, 65536):
                out += chunk
        except BlockingIOError:
            pass
        except OSError:  # EIO: every end of the terminal's other side closed
            break
        if done:
            break
        time.sleep(0.02)
    return out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_progress_bar_first_draws_ends_the_run_as_it_says(tmp_path, signum):
    # Ctrl-C while the bar's first draw waited on the terminal: `ValueError: list.remove(x): x not
    # in list` from `RunProgress.__exit__`, exit 1, the cursor left hidden, no "interrupted" line
    (tmp_path / "m.py").write_bytes(CUDA)
    hook, marker = tmp_path / "hook", tmp_path / "drawing"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_FIRST_DRAW_WAITS.format(marker=str(marker)))
    argv = ["rewrite", "m.py", "-t", "xla", "--diff", "--jobs", "1", "--allow-no-vcs"]
    proc, leader = _on_a_terminal(argv, tmp_path, hook)
    try:
        out = _read_all(proc, leader, until=marker.exists)
        assert proc.poll() is None, out
        proc.send_signal(signum)
        out += _read_all(proc, leader)
        code = proc.wait(timeout=300)
    finally:
        os.close(leader)
    assert b"Traceback" not in out, out
    assert code == 128 + signum, out
    assert f"porter: interrupted ({signal.Signals(signum).name})".encode() in out, out
    assert b"\x1b[?25l" not in out, out  # the cursor never hidden (the bar leaves it shown: thirty-sixth read)


# a shell with job control: the session's leader on the terminal, porter a job of its own in front
# (a process group with no such parent, `setsid porter`, is orphaned: the kernel drops its Ctrl-Z)
_JOB_SHELL = """
import fcntl, os, signal, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(0, os.getpgrp())
    for s in (signal.SIGTTOU, signal.SIGINT, signal.SIGTSTP):
        signal.signal(s, signal.SIG_DFL)
    os.execv(sys.executable, [sys.executable, "-m", "porter", *sys.argv[2:]])
try:
    os.setpgid(pid, pid)  # (as a shell does, both sides: whichever comes first)
except OSError:  # the child has already exec'd into its group
    pass
open(sys.argv[1], "w").write(str(pid))
while True:
    _, status = os.waitpid(pid, os.WUNTRACED)
    if not os.WIFSTOPPED(status):
        sys.exit(os.waitstatus_to_exitcode(status))
"""

# rewrite's bar drawn from the first file, then porter held after it until the gate opens
_HELD_AFTER_THE_BAR = """
import os, time
import porter.report.progress as progress
progress.RunProgress.__init__.__kwdefaults__["delay"] = 0.0
real = progress.RunProgress.advance
def held(self, path=None):
    real(self, path)
    if self._bar is not None and not os.path.exists({marker!r}):
        open({marker!r}, "w").close()
        while not os.path.exists({gate!r}):
            time.sleep(0.05)
progress.RunProgress.advance = held
"""


def _state(pid: int) -> bytes:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()[0]


def _stopped_then_continued(tmp_path, held: str, porter_argv: list[str]) -> tuple[bytes, bytes, int]:
    """Run porter as a job on a terminal, its `sitecustomize` `held` (a template of `marker` and
    `gate`) holding it at a draw; Ctrl-Z there, then `fg`: what the terminal showed while it was
    stopped, all it showed, and the exit code."""
    hook, marker, gate, pid_file = tmp_path / "hook", tmp_path / "drawn", tmp_path / "gate", tmp_path / "pid"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(held.format(marker=str(marker), gate=str(gate)))
    (hook / "jobshell.py").write_text(_JOB_SHELL)
    shell, leader = _on_a_terminal([str(hook / "jobshell.py"), str(pid_file), *porter_argv], tmp_path, hook, True)
    try:
        out = _read_all(shell, leader, until=marker.exists)
        assert shell.poll() is None, out
        job = int(pid_file.read_text())
        os.kill(job, signal.SIGTSTP)
        out += _read_all(shell, leader, until=lambda: _state(job) == b"T")
        assert _state(job) == b"T", out
        stopped = out
        gate.touch()
        os.kill(job, signal.SIGCONT)
        out += _read_all(shell, leader)
        code = shell.wait(timeout=300)
    finally:
        os.close(leader)
    return stopped, out, code


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's state is read in /proc")
def test_ctrl_z_while_the_progress_bar_is_drawn_gives_the_shell_its_cursor_back(tmp_path):
    # the bar hides the cursor; Ctrl-Z stopped porter with it hidden: the shell's prompt came back
    # with no cursor until `fg`
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "n.py").write_bytes(CUDA)
    porter_argv = ["rewrite", ".", "-t", "xla", "--diff", "-j", "1", "--allow-no-vcs"]
    stopped, out, code = _stopped_then_continued(tmp_path, _HELD_AFTER_THE_BAR, porter_argv)
    assert b"\x1b[?25l" not in stopped, stopped  # the cursor never hidden (the bar leaves it shown: thirty-sixth read)
    assert code == 1, out  # the run went on after `fg`, its diff printed
    assert out.count(b"+++ b/") == 2, out
    assert out.rfind(b"\x1b[?25h") > out.rfind(b"\x1b[?25l"), out
