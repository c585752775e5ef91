"""Progress for long runs: a rich bar on a terminal, plain lines otherwise, nothing when quiet.

    with RunProgress(err_console, total=count_files(paths, settings), quiet=quiet) as progress:
        results, summary = run(paths, settings, on_result=progress.wrap(collect))

Short runs stay silent: the bar appears only after `delay` seconds, and plain lines are
written at most every `every` seconds, so a ten-file port prints no progress at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.table import Column
from rich.text import Text
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

from porter.pipeline.discover import discover
from porter.core.textsafe import printable
from porter.report.console import LIVE, on_a_terminal


def count_files(paths: list[Path], settings) -> int:
    """How many candidates a run will see (a walk without reading; cheap next to the port)."""
    return sum(1 for _ in discover(paths, settings.exclude))


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
        # shell sets it) drew no bar and got no lines either (nineteenth read)
        self.tty = on_a_terminal(console) and console.is_interactive if tty is None else tty
        self.clock = clock
        self.done = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._start = 0.0
        self._last_line = 0.0
        self.lines_written = 0

    # -- context ---------------------------------------------------------------------------

    def __enter__(self) -> RunProgress:
        self._start = self._last_line = self.clock()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            LIVE.remove(self._bar)
            self._bar.stop()
            self._bar = None
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
        self._bar = Progress(
            TextColumn(f"[bold]{self.label}[/]"),
            BarColumn(),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),  # (the count stays whole)
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            _PathColumn(self.console, self._others()),
            console=self.console,
            transient=True,
        )
        self._task = self._bar.add_task(self.label, total=self.total, completed=self.done, path="")
        self._bar.start()
        LIVE.append(self._bar)  # another console's print goes above it

    def _others(self) -> int:
        """The cells the bar's columns before the path take at their least: the label, the
        count at its widest, the two times, a bar of `_LEAST_BAR` and the gaps between."""
        count = len(f"{self.total}/{self.total}") if self.total else len(f"{self.done}/?") + 6
        return cell_len(self.label) + count + 2 * len("0:00:00") + _LEAST_BAR + 5

    def _line(self, final: bool = False) -> None:
        elapsed = self.clock() - self._start
        of = f"/{self.total}" if self.total else ""
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        word = "done" if final else self.label
        self.console.print(
            f"porter: {word} {self.done}{of} files{pct}, {elapsed:.0f}s", highlight=False, soft_wrap=True
        )
        self.lines_written += 1


_LEAST_BAR = 10  # the bar's own least width (cells) before the path gives way
_LEAST_PATH = 8  # a path cut shorter than this says nothing: none is shown


class _PathColumn(ProgressColumn):
    """The file in hand, cut to what the other columns leave of the console's width, read at
    each refresh (a resize included): rich narrows every column of the row alike, so at 50
    columns and fewer a 40-cell path squeezed the count out (`porting   … …  pkg/mod…`;
    twenty-fifth read's leftover). The path gives way first, then goes; a name, never markup."""

    def __init__(self, console: Console, others: int) -> None:
        super().__init__(table_column=Column(no_wrap=True))  # (the bar narrows, not the path)
        self.console, self.others = console, others

    def render(self, task: Task) -> Text:
        room = self.console.width - self.others
        path = str(task.fields.get("path", ""))
        if room < _LEAST_PATH:
            return Text("")
        while cell_len(path) > room:
            path = "…" + path[2:]
        return Text(path, style="dim")


def _short(path: str | None, width: int = 40) -> str:
    """The end of `path` for the bar, its control characters escaped first: rich's `Text` drops
    CR, BEL, BS, VT and FF before the console escapes the rest (`c<CR>r.py` showed `cr.py`, another
    file's name) and breaks the bar's line at a newline (twenty-third read)."""
    if not path:
        return ""
    path = printable(path)
    return path if len(path) <= width else "…" + path[-(width - 1) :]
