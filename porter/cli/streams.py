"""stdout and stderr that wait while a non-blocking pipe is full, rather than lose what is left.

A parent can hand porter a pipe in non-blocking mode (a shell after a program that set its own
stdout so, a job runner's log reader). CPython's buffered stream then drops what the full pipe
would not take and goes on: `lint` wrote 215 kB of a 335 kB `full` report, left with 1, "findings
found", and said nothing (ruff 0.17.6 says "Resource temporarily unavailable" and leaves with 2;
twenty-ninth read). Each write waits until the pipe takes bytes again, as on a blocking pipe; the
pipe's own mode, shared with the parent, is left as it is.
"""

from __future__ import annotations

import io
import os
import select
from typing import Any


class _WaitingWriter(io.RawIOBase):
    """Writes to `fd` that wait (`select`) while it takes no bytes. The fd is not closed here:
    it is the process's stdout or stderr."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any, /) -> int:
        while True:
            try:
                return os.write(self._fd, data)
            except BlockingIOError:
                select.select([], [self._fd], [])


def waiting_when_full(stream: io.TextIOWrapper) -> io.TextIOWrapper:
    """`stream`, or, where its fd is in non-blocking mode, a stream like it over that fd whose
    writes wait (nothing has been written yet: the run has not printed)."""
    try:
        fd = stream.fileno()
        if os.name != "posix" or os.get_blocking(fd):
            return stream
    except (OSError, ValueError):  # no fd (a test's capture), or a closed one
        return stream
    stream.flush()
    return io.TextIOWrapper(
        io.BufferedWriter(_WaitingWriter(fd)),
        encoding=stream.encoding,
        errors=stream.errors,
        newline="\n",
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )
