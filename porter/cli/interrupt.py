"""SIGINT and SIGTERM end a run the same way: workers killed, temporaries removed, and the
user told what was written.

SIGTERM (what `timeout`, CI runners and `docker stop` send) is turned into `Terminated`, a
KeyboardInterrupt, so one path of cleanup serves both signals. While one file is written the
two signals wait (`deferred`): a file is counted as written exactly when it was.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived."""


# what the run was told and whether it has said so: a command without a cleanup path of its
# own (kernels, backends, trace, the --split series, the report) still ends as its signal
# says, 143 for SIGTERM (typer turns any KeyboardInterrupt into exit 130), with one line
_state = {"sigterm": False, "said": False}


def _on_sigterm(signum: int, frame: object) -> None:
    _state["sigterm"] = True
    raise Terminated()


def said() -> None:
    """The run has told the user it was interrupted (and what it left)."""
    _state["said"] = True


def ending(code: int) -> tuple[int, str | None]:
    """For an exit 130 or 143: the code the signal that arrived gives, and the line to print
    if the run has not said it was interrupted (None if it has)."""
    # the code says it too: a worker set's own handler ends the run with SystemExit(128 + signal)
    # without going through `_on_sigterm` (`trace record` and parity-check said "SIGINT" on a SIGTERM)
    term = _state["sigterm"] or code == 128 + signal.SIGTERM
    how = "SIGTERM" if term else "SIGINT"
    return (143 if term else code), (None if _state["said"] else f"porter: interrupted ({how}).")


def install() -> None:
    """Make SIGTERM raise `Terminated` in the main thread (once, from the entry point)."""
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread, or no such signal here
        pass


def exit_code(exc: BaseException) -> int:
    """128 + the signal number, as a shell reports a process a signal ended."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def signal_name(exc: BaseException) -> str:
    return "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends (where the platform can)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
