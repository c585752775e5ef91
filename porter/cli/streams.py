"""stdout and stderr that wait while a non-blocking pipe is full, rather than lose what is left,
and a stderr whose reader left that takes no more, rather than end the run.

A parent can hand porter a pipe in non-blocking mode (a shell after a program that set its own
stdout so, a job runner's log reader). CPython's buffered stream then drops what the full pipe
would not take and goes on: `lint` wrote 215 kB of a 335 kB `full` report, left with 1, "findings
found", and said nothing (ruff 0.17.6 says "Resource temporarily unavailable" and leaves with 2;
twenty-ninth read). Each write waits until the pipe takes bytes again, as on a blocking pipe; the
pipe's own mode, shared with the parent, is left as it is.

stderr carries notes and progress, not the findings: where its reader left (`porter lint . -o
r.sarif 2>&1 | head`) the run ended there with 0, "no findings", and wrote no `-o` file (same read).
What stderr would have said is dropped, as `2>/dev/null` drops it, and the run goes on to its own
output and exit code. A stdout whose reader left still ends the run (as ruff).

A terminal that has hung up (closed with SIGHUP ignored or not sent: `porter rewrite . & disown`,
`trap '' HUP`) is a reader that left, as a pipe's: each write failed with EIO, and `rewrite` ended
at its next line with "cannot write the output", exit 2, none of its files written (twenty-ninth
read, second wave). It now meets the same rules as a pipe whose reader left (EPIPE); so does one
that had hung up before porter started (no longer a terminal to `isatty`: `rewrite` left with 2,
none of its files written; thirtieth read). Where the output is the work (`lint` without `--fix`,
`trace compare`), a terminal that hung up is an output lost, exit 2 (`TerminalHungUp`), as ruff
0.17.6's `check` ("Input/output error", 2; `48-ctleft-tools/hungup30.py.txt`).
"""

from __future__ import annotations

import errno
import io
import os
import select
import stat
from typing import Any

from porter.core.hangup import TerminalHungUp, hung_up


# the most a write once porter is leaving is given at a time: a pipe that `select` says takes
# bytes takes this many (POSIX's PIPE_BUF, an atomic write) without waiting
_AT_ONCE = select.PIPE_BUF


class _SettledWriter(io.RawIOBase):
    """Writes to `fd` that wait (`select`) while it takes no bytes, and, for stderr (`drop`),
    are dropped once its reader has left. The fd is not closed here: it is the process's.
    Once porter is leaving (`stop_waiting`), nothing waits: what the fd does not take now is dropped."""

    leaving = False

    def __init__(self, fd: int, drop: bool) -> None:
        super().__init__()
        self._fd = fd
        self._drop = drop
        self._gone = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any, /) -> int:
        while not self._gone:
            now = self._taken_now(data)
            if now is None:
                break
            try:
                return os.write(self._fd, now)
            except BlockingIOError:
                select.select([], [self._fd], [])
            except OSError as exc:
                self._left_or_raise(exc)
        return len(data)

    def _taken_now(self, data: Any) -> Any:
        """`data`; once porter is leaving, what of it the fd takes at once (None: nothing)."""
        if not _SettledWriter.leaving:
            return data
        if not select.select([], [self._fd], [], 0)[1]:
            return None
        return memoryview(data)[:_AT_ONCE]

    def _left_or_raise(self, exc: OSError) -> None:
        """The write's error where the reader left: stderr's writes are dropped from now on,
        stdout's raise BrokenPipeError (`TerminalHungUp` for a terminal); any other is raised."""
        # a socket whose reader left with bytes unread (`nc -U`, a log shipper that stopped) says
        # ECONNRESET, not EPIPE: the same reader that left, not a traceback and exit 1, then
        # "Exception ignored" and 120 (thirty-second read, second wave)
        if isinstance(exc, ConnectionResetError):
            exc = BrokenPipeError(errno.EPIPE, "the reader has left")
        if not (isinstance(exc, BrokenPipeError) or (exc.errno == errno.EIO and hung_up(self._fd))):
            raise exc
        if not self._drop and exc.errno == errno.EIO:
            raise TerminalHungUp(errno.EPIPE, "the terminal has hung up") from exc
        if not self._drop:
            raise exc
        self._gone = True


def stop_waiting() -> None:
    """From now on a write to a settled stream takes only what its fd takes at once, the rest
    dropped: porter is leaving (an interrupt, a reader gone). Ctrl-C or SIGTERM while stdout sat
    on a full pipe whose reader does not read (`porter lint . | less`, then `less` stopped) ended
    in a flush at exit that waited there for ever: no "interrupted" line, no exit (thirty-second
    read, second wave)."""
    _SettledWriter.leaving = True


def settled(stream: io.TextIOWrapper, stderr: bool) -> io.TextIOWrapper:
    """`stream`, or, where its fd is in non-blocking mode, a terminal (one that hung up too), a
    pipe or a socket, a stream like it over that fd that writes as `_SettledWriter`
    does (nothing has been written yet: the run has not printed)."""
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
        # a pipe blocking now may not be later: a process that shares it (the shell's next job,
        # a log reader's helper) can set O_NONBLOCK mid-run, and CPython's stream then dropped
        # what the full pipe would not take: 64 kB of 156 kB, exit 1, unsaid (thirty-second read)
        piped = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if os.name != "posix" or (os.get_blocking(fd) and not piped and not os.isatty(fd) and not hung_up(fd)):
            return stream
    except (OSError, ValueError):  # no fd (a test's capture), or a closed one
        return stream
    stream.flush()
    return io.TextIOWrapper(
        io.BufferedWriter(_SettledWriter(fd, drop=stderr)),
        encoding=stream.encoding,
        errors=stream.errors,
        newline="\n",
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )
