"""What a run writes to a terminal that has hung up goes nowhere, as `2>/dev/null` sends it.

When the terminal closes (an ssh session dropped, a window closed) the kernel hangs it up and
then sends SIGHUP; every later write to it fails with EIO. The run's cleanup after the signal
(the list of what was written, the workers ended, the work folders removed) printed to it,
met EIO and ended as "cannot write the output", exit 2, where SIGHUP's is 129 (twenty-ninth
read, second wave). A terminal that is still there (`kill -HUP` by hand) is left as it is.
"""

from __future__ import annotations

import errno
import os

_STREAMS = (1, 2)  # stdout, stderr


class TerminalHungUp(BrokenPipeError):
    """A write to a terminal that has hung up: a reader that left, so a command that writes
    files goes on (`PorterConsole.on_broken_pipe`), but not one that chose to stop, as
    `| head -1` does: `lint` and `trace compare` left with 0, "no findings" and "parity holds",
    their verdict lost with the terminal (thirtieth read). Such a run ends with 2, as ruff's
    "Input/output error" does."""


def hung_up(fd: int) -> bool:
    """Whether `fd` is a terminal that has hung up: the kernel answers its every request with
    EIO (a terminal that is there answers `tcgetattr`; a file or a pipe, ENOTTY)."""
    try:
        import termios
    except ImportError:  # no terminals of POSIX's kind
        return False
    try:
        termios.tcgetattr(fd)
    except termios.error as exc:
        return bool(exc.args) and exc.args[0] == errno.EIO
    except (OSError, ValueError):
        return False
    return False


def drop_a_hung_up_terminal() -> None:
    """stdout and stderr, where each is a terminal that has hung up, made `os.devnull` (the
    process's streams keep their fds; what they still hold is flushed there)."""
    for fd in _STREAMS:
        if hung_up(fd):
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, fd)
            finally:
                os.close(null)
