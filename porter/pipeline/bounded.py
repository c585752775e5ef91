"""One file's work outside porter's own process, under the per-file time limit.

`rewrite` and `lint` port every file in a worker (porter.pipeline.parallel): a file that
stalls libcst (thousands of chained calls), overflows its recursion or crashes its native
parser costs that file, not the run. The commands that read files one at a time for
something else (`porter kernels`, `porter backends --scaffold`) get the same bound through
`bounded`: the work runs in a forked child that ignores Ctrl-C and dies with porter, its
result comes back pickled, and past the limit the child is killed and the file reported.

Where `fork` is missing (Windows) the work runs in the process itself, unbounded.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from porter.pipeline.parallel import _PAUSE_S, _POLL_S, DEFAULT_FILE_TIMEOUT, _die_with_parent

R = TypeVar("R")


class Failed(Exception):
    """The work on one file did not finish: why, in words for a one-line note."""


def limit_of(file_timeout: float | None) -> float | None:
    """The limit in seconds from `--file-timeout` (None: the default; 0: none)."""
    limit = DEFAULT_FILE_TIMEOUT if file_timeout is None else file_timeout
    return limit if limit > 0 else None


def bounded(fn: Callable[..., R], *args: object, limit: float | None = DEFAULT_FILE_TIMEOUT) -> R:
    """`fn(*args)`, run in a child process for at most `limit` seconds (None: no limit): its
    result, or `Failed` (it raised, ran out of time, or its process died)."""
    if not hasattr(os, "fork"):
        return _direct(fn, *args)
    for stream in (sys.stdout, sys.stderr):  # a forked child must not print what porter had buffered
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    parent = os.getpid()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(write_end, parent, fn, args)
    os.close(write_end)
    try:
        data = _read_all(read_end, limit)
    finally:
        os.close(read_end)
        _end(pid)
    if data is None:
        raise Failed(
            f"took longer than {limit:g} s (the per-file limit, --file-timeout); passed over" if limit else "timed out"
        )
    try:
        kind, value = pickle.loads(data)
    except Exception:  # noqa: BLE001 - nothing (the child died) or a cut-off message
        raise Failed("porter's parser crashed on this file (its process died); passed over") from None
    if kind == "error":
        raise Failed(str(value))
    return value  # type: ignore[no-any-return]


def _direct(fn: Callable[..., R], *args: object) -> R:
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - one file's failure is a note, never a traceback
        raise Failed(_why(exc)) from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply for porter's parser (RecursionError); passed over"
    if isinstance(exc, MemoryError):
        return "too large for porter's parser (MemoryError); passed over"
    return f"internal error in porter: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}; passed over"


def _child(fd: int, parent: int, fn: Callable[..., object], args: tuple[object, ...]) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if hasattr(signal, "SIGHUP"):  # a closed terminal's SIGHUP: the parent ends the run, as on SIGINT
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        _die_with_parent(parent)
        try:
            message: tuple[str, object] = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - sent back as the file's note
            message = ("error", _why(exc))
        try:
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001
            data = pickle.dumps(("error", _why(exc)))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:  # noqa: BLE001 - the parent reports a child that sent nothing
        code = 1
    finally:
        os._exit(code)  # never the parent's exit handlers, never its buffers


def _read_all(fd: int, limit: float | None) -> bytes | None:
    """Everything the child writes until it closes the pipe; None past `limit` seconds of the
    child's time: a look later than asked (porter stopped by Ctrl-Z, then `fg`) moves the limit on
    by the pause, as the pool does (`_PAUSE_S`; thirty-first read)."""
    deadline = None if limit is None else time.monotonic() + limit
    chunks: list[bytes] = []
    due = None
    while True:
        now = time.monotonic()
        if deadline is not None and due is not None and now - due > _PAUSE_S:
            deadline += now - due
        wait = None if deadline is None else min(deadline - now, _POLL_S)
        if wait is not None and wait <= 0:
            return None
        due = None if wait is None else now + wait
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _end(pid: int) -> None:
    """Make sure the child is gone (killed if it still runs) and reaped."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        pass
