"""Progress for long runs: a rich bar on a terminal, plain lines otherwise, nothing when quiet.

    with RunProgress(err_console, total=count_files(paths, settings), quiet=quiet) as progress:
        results, summary = run(paths, settings, on_result=progress.wrap(collect))

Short runs stay silent: the bar appears only after `delay` seconds, and plain lines are
written at most every `every` seconds, so a ten-file port prints no progress at all.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column, Table
from rich.text import Text

from porter.pipeline.discover import discover
from porter.core.textsafe import printable
from porter.report.console import LIVE, on_a_terminal


def count_files(paths: list[Path], settings) -> int:
    """How many candidates a run will see (a walk without reading; cheap next to the port)."""
    return sum(1 for _ in discover(paths, settings.exclude))


# Ctrl-Z (SIGTSTP) where the platform has job control
_STOP = getattr(signal, "SIGTSTP", None)


def _cursor_back_on_stop(console: Console, live: Live) -> Any:
    """While the bar is drawn, Ctrl-Z erases the bar's frame before porter stops: drawn anew below
    the shell's lines on `fg`, the old one (`porting … 1/40`) stayed on the screen after the run
    (thirty-third read, second wave); and shows the cursor (the bar hid it until the thirty-sixth
    read; it no longer does, `_Bar.start`, nor hides it again on `fg`). The handler it replaces
    (None: none replaced)."""
    if _STOP is None:
        return None

    def on_stop(signum: int, frame: object) -> None:
        _write_now(console, _frame_erased(live) + _SHOW_CURSOR)
        signal.signal(signum, signal.SIG_DFL)
        try:
            os.kill(os.getpid(), signum)  # stopped here, as without a handler, until SIGCONT
        finally:
            signal.signal(signum, on_stop)

    try:
        before = signal.getsignal(_STOP)
        if before is not signal.SIG_DFL:  # ignored (a shell without job control) or someone's own
            return None
        signal.signal(_STOP, on_stop)
    except ValueError:  # not the main thread
        return None
    return before


_SHOW_CURSOR = b"\x1b[?25h"


def _frame_erased(live: Live) -> bytes:
    """What erases the bar's last frame and puts the cursor where it began (rich's own, as each
    draw does first); nothing once the bar is stopped (its last draw erased it). `_live_render` is
    rich's own (15.0.0 has it; no public call gives the sequence): where a rich release moves
    it, the frame stays and the cursor is still shown, not a traceback in the signal handler."""
    if not live.is_started:
        return b""
    try:
        return live._live_render.position_cursor().segment.text.encode()
    except AttributeError:
        return b""


def _write_now(console: Console, data: bytes) -> None:
    """Write `data` now, past the console's buffer (the signal may have come in the middle of a
    draw, whose buffer is written when the draw ends) and its stream's (a write the signal
    interrupted holds it)."""
    try:
        os.write(console.file.fileno(), data)
    except (OSError, ValueError, AttributeError):  # gone, or no descriptor: nothing to show it on
        pass


def _restore_stop(before: Any) -> None:
    if _STOP is not None and before is not None:
        try:
            signal.signal(_STOP, before)
        except ValueError:
            pass


class RunProgress:
    def __init__(
        self,
        console: Console,
        total: int | None = None,
        *,
        quiet: bool = False,
        label: str = "porting",
        delay: float = 0.5,
        every: float = 5.0,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.total = total
        self.quiet = quiet
        self.label = label
        self.delay = delay
        self.every = every
        # the live bar needs a terminal that moves its cursor: a dumb one (TERM=dumb, as Emacs'
        # shell sets it) drew no bar and got no lines either (nineteenth read); and a row above
        # it: on a terminal one row high, rich's last frame went into the scrollback before the
        # cursor moved up to clear it, and stayed there (twenty-sixth read)
        if tty is None:
            tty = on_a_terminal(console) and console.is_interactive and console.height > 1
        self.tty = tty
        self.clock = clock
        self.done = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._stop_handler: Any = None  # SIGTSTP's handler before the bar's (`_cursor_back_on_stop`)
        self._start = 0.0
        self._last_line = 0.0
        self.lines_written = 0

    # -- context ---------------------------------------------------------------------------

    def __enter__(self) -> RunProgress:
        self._start = self._last_line = self.clock()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            bar, self._bar = self._bar, None
            # (not there where a signal came while the bar first drew, before `_start_bar` added
            # it: Ctrl-C then was a `ValueError` traceback, exit 1, the cursor left hidden and the
            # run's "interrupted" line unsaid; thirty-third read)
            if bar in LIVE:
                LIVE.remove(bar)
            try:
                bar.stop()
            finally:  # (a Ctrl-C in its last draw left porter's Ctrl-Z handler to the program after)
                _restore_stop(self._stop_handler)
        elif not self.quiet and not self.tty and self.lines_written:
            self._line(final=True)

    # -- updates ---------------------------------------------------------------------------

    def advance(self, path: str | None = None) -> None:
        self.done += 1
        if self.quiet:
            return
        now = self.clock()
        if self.tty:
            if self._bar is None and now - self._start >= self.delay:
                self._start_bar()
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=self.done, path=_short(path))
        elif now - self._last_line >= self.every:
            self._last_line = now
            self._line()

    def wrap(self, callback: Callable | None) -> Callable:
        """An `on_result` for `porter.pipeline.runner.run` that calls `callback` then advances."""

        def on_result(cand, result) -> None:
            if callback is not None:
                callback(cand, result)
            self.advance(getattr(result, "path", None))

        return on_result

    def _start_bar(self) -> None:
        whole = Column(no_wrap=True)  # the table squeezes the bar and the path, never these
        self._bar = _Bar(
            TextColumn(f"[bold]{self.label}[/]", table_column=whole),
            BarColumn(),
            MofNCompleteColumn(table_column=whole),
            TimeElapsedColumn(table_column=whole),
            TimeRemainingColumn(table_column=whole),
            _PathColumn(),
            console=self.console,
            transient=True,
        )
        self._task = self._bar.add_task(self.label, total=self.total, completed=self.done, path="")
        self._stop_handler = _cursor_back_on_stop(self._bar.console, self._bar.live)
        self._bar.start()
        LIVE.append(self._bar)  # another console's print goes above it

    def _line(self, final: bool = False) -> None:
        elapsed = self.clock() - self._start
        of = f"/{self.total}" if self.total else ""
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        word = "done" if final else self.label
        self.console.print(
            f"porter: {word} {self.done}{of} files{pct}, {elapsed:.0f}s", highlight=False, soft_wrap=True
        )
        self.lines_written += 1


class _Bar(Progress):
    """rich's `Progress` that leaves out whole columns where the terminal is too narrow for all
    of them, the least needed first: rich cut every column to fit, and at 80 columns a run of
    2,100 files counted `2100/2…`, at 59 columns 210 files `210/2…` (twenty-sixth read)."""

    def start(self) -> None:
        """rich's start, the cursor left shown (as cargo's and uv's bars leave it): rich hid it until the bar's
        stop, and a porter ended where no handler runs (Ctrl-\\'s SIGQUIT, whose default action ends it at once
        even in C; SIGKILL, the OOM killer) left the shell with no cursor (thirty-sixth read, term2)."""
        console = self.live.console
        shown = console.show_cursor
        console.show_cursor = lambda show=True: show and shown(True)  # type: ignore[method-assign]
        try:
            super().start()
        finally:
            del console.show_cursor

    def make_tasks_table(self, tasks: Iterable[Task]) -> Table:
        tasks = list(tasks)
        if not tasks:  # as rich's `__init__` draws it, before its console is set
            return super().make_tasks_table(tasks)
        every = self.columns
        self.columns = _fitting(self.console, every, tasks)
        try:
            return super().make_tasks_table(tasks)
        finally:
            self.columns = every


# the narrowest the bar and the path are drawn before a column is left out
_SQUEEZED = 4
# `_start_bar`'s columns by their place, in the order they are left out: the path, the time left,
# the time taken, the bar, the label (the count stays)
_LEFT_OUT = (5, 4, 3, 1, 0)


def _fitting(console: Console, columns: tuple, tasks: list[Task]) -> tuple:
    """`columns` less the fewest of `_LEFT_OUT` that leaves the rest whole in `console`'s width."""
    options = console.options

    def width(column: ProgressColumn) -> int:
        if isinstance(column, (BarColumn, _PathColumn)):
            return _SQUEEZED
        return max((Measurement.get(console, options, column(task)).maximum for task in tasks), default=0)

    shown = list(columns)
    for leave_out in _LEFT_OUT:
        if sum(width(c) + 1 for c in shown) - 1 <= console.width:
            break
        del shown[leave_out]
    return tuple(shown)


class _PathColumn(ProgressColumn):
    """The file being ported, its end kept where the table gives it less room than it takes."""

    def render(self, task: Task) -> _Tail:
        return _Tail(task.fields.get("path", ""))


class _Tail:
    """Text shown by its end, a `…` before it, where it is drawn narrower than it is."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = cell_len(self.text)
        return Measurement(min(width, _SQUEEZED), width).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text
        if cell_len(text) > options.max_width:
            while text and cell_len(text) > options.max_width - 1:
                text = text[1:]
            text = "…" + text
        yield Text(text, style="dim", no_wrap=True, overflow="crop")  # a path is a name, never markup


def _short(path: str | None, width: int = 40) -> str:
    """The end of `path` for the bar, its control characters escaped first: rich's `Text` drops
    CR, BEL, BS, VT and FF before the console escapes the rest (`c<CR>r.py` showed `cr.py`, another
    file's name) and breaks the bar's line at a newline (twenty-third read)."""
    if not path:
        return ""
    path = printable(path)
    return path if len(path) <= width else "…" + path[-(width - 1) :]
