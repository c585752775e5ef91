"""SIGINT, SIGTERM and SIGHUP end a run the same way: workers killed, temporaries removed, and
the user told what was written.

SIGTERM (what `timeout`, CI runners and `docker stop` send) and SIGHUP (the terminal closed: an
ssh session dropped) are turned into `Terminated`, a KeyboardInterrupt, so one path of cleanup
serves every signal. A SIGHUP killed porter outright, wherever it was: mid-write, a tree partly
ported with no list of what was written (twenty-ninth read). While one file is written the
signals wait (`deferred`): a file is counted as written exactly when it was.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from porter.cli.streams import stop_waiting

# the signals that end a run with its cleanup (SIGHUP where the platform has one)
_ENDING = (signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []))
_SIGNALS = (signal.SIGINT, *_ENDING)


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP: `signum`) arrived."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__()
        self.signum = signum


# what the run was told and whether it has said so: a command without a cleanup path of its
# own (kernels, backends, trace, the --split series, the report) still ends as its signal
# says, 143 for SIGTERM (typer turns any KeyboardInterrupt into exit 130), with one line
_state = {"signum": 0, "said": False}


def _on_sigterm(signum: int, frame: object) -> None:
    stop_waiting()
    _state["signum"] = signum
    if signum != signal.SIGTERM:  # SIGHUP: the cleanup's lines must not meet a closed terminal's EIO
        from porter.core.hangup import drop_a_hung_up_terminal

        drop_a_hung_up_terminal()
    raise Terminated(signum)


def said() -> None:
    """The run has told the user it was interrupted (and what it left)."""
    _state["said"] = True


# the exit codes of a run a signal ended: 128 + the signal
INTERRUPTED = tuple(128 + s for s in _SIGNALS)


def ending(code: int) -> tuple[int, str | None]:
    """For an exit in `INTERRUPTED`: the code the signal that arrived gives, and the line to print
    if the run has not said it was interrupted (None if it has)."""
    # the code says it too: a worker set's own handler ends the run with SystemExit(128 + signal)
    # without going through `_on_sigterm` (`trace record` and parity-check said "SIGINT" on a SIGTERM)
    signum = _state["signum"] or code - 128
    return 128 + signum, (None if _state["said"] else f"porter: interrupted ({signal.Signals(signum).name}).")


def _on_sigint(signum: int, frame: object) -> None:
    """Python's own SIGINT handler, once porter's output has stopped waiting on its readers."""
    stop_waiting()
    raise KeyboardInterrupt


def install() -> None:
    """Make SIGTERM and SIGHUP raise `Terminated` in the main thread (once, from the entry
    point); a SIGHUP ignored by whoever started porter (`nohup`) stays ignored. Each signal first
    stops the output's waits (`stop_waiting`): the cleanup's own lines waited for ever on a full
    pipe whose reader had stopped reading (`porter lint . | less`, then Ctrl-C) where the signal
    came between two writes (the fresh-clone run of the thirty-second read's merge)."""
    handlers = [(signum, _on_sigterm) for signum in _ENDING] + [(signal.SIGINT, _on_sigint)]
    for signum, handler in handlers:
        try:
            now = signal.getsignal(signum)
            # (SIGINT where Python's own handler has it: not where it is ignored, `nohup` or `&` in a script)
            if signum == signal.SIGINT and now is not signal.default_int_handler:
                continue
            if signum == signal.SIGTERM or now is not signal.SIG_IGN:
                signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main thread, or no such signal here
            pass


def exit_code(exc: BaseException) -> int:
    """128 + the signal number, as a shell reports a process a signal ended."""
    return 128 + (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)


def signal_name(exc: BaseException) -> str:
    return signal.Signals(exit_code(exc) - 128).name


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
