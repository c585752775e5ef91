"""The one rich console every command prints through (`make_console`), and Markdown for it.

Two things a plain `rich.console.Console` gets wrong for porter:

- **Control characters from files reach the terminal.** rich passes ESC through as it is, so
  a source comment, a trace manifest or an exception message holding `ESC [2J` clears the
  screen, and `ESC ] 8 ;;` spoofs a hyperlink. Here every piece of text is rendered with its
  control characters (C0 but tab and newline, DEL, C1, the Unicode line separators, the bidi
  controls and the invisible characters: a zero-width space, a soft hyphen) shown as `\\xNN`
  escapes; the console's own styling and cursor moves (a progress bar) are not text and are
  untouched. Markup is a separate matter: text from files goes in as `Text` or
  through `textsafe.plain`.
- **A terminal too narrow for a table.** rich squeezes a table into the terminal's width: at
  20 columns (a split pane) `porter targets` and `rules` drew empty cells and a rewrite's
  readiness column was `…`; at 80, `porter targets` showed xla's device as `torch_xla.…`. A word
  wider than its column is folded over lines, never cut with `…`, and a table whose columns
  cannot each get a few characters is drawn at its natural width, as off a terminal (the
  terminal wraps its lines): nothing is lost. Markdown (`explain`) and typer's help panels are
  drawn no narrower than shows all their text (`whole_width`).
- **Width off a terminal.** rich wraps a pipe or a file at 80 columns, which cuts rule names
  and paths in a CI log. Off a terminal (unless `COLUMNS` names a width) this console is wide
  enough never to wrap; tables and text take their natural width. Markdown would be padded
  to that width (rich justifies its paragraphs and draws its headings across the page), so
  `print_markdown` prints Markdown's source off a terminal: it is plain text already.

Emoji codes are text too: rich replaces `:rocket:` in a string with 🚀 (after markup is
escaped), so a file named `a:warning:b.py` was shown as `a⚠b.py`; this console never does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.measure import Measurement
from rich.segment import Segment, SegmentLines, Segments
from rich.table import Column, Table
from rich.text import Span, Text

from porter.core.textsafe import (
    BIDI,
    BLANK,
    INVISIBLE,
    LONE_FILLERS,
    UNSETTLED_WIDTH,
    encodable,
    escaped_match,
    inert,
)


def escape_unencodable(text: Text, encoding: str) -> None:
    """`text` as a stream in `encoding` writes it, before rich lays it out, its styles kept on
    the same characters: a character the encoding lacks (an ASCII locale) is written as an
    escape (`textsafe.encodable`), and rich measured the character, not the escape (a help's
    `fp16 → bf16` ran its row 5 columns past the panel: twenty-fifth read). The one place for
    both a str printed (`PorterConsole.render_str`) and the help's own `Text` (twenty-sixth
    read: two near-copies)."""
    if text.plain.isascii() or encoding.lower().startswith("utf"):
        return
    pieces = [encodable(char, encoding) for char in text.plain]
    at = list(accumulate((len(piece) for piece in pieces), initial=0))
    spans = [Span(at[span.start], at[min(span.end, len(pieces))], span.style) for span in text.spans]
    text.plain = "".join(pieces)
    text.spans = spans


# width for output that is not a terminal (a pipe, a CI log): wide enough never to wrap
UNWRAPPED = 10_000
# the progress bars drawn now (rich `Progress`, each by its console: `RunProgress` adds and
# removes them): rich draws the text its own console prints above the bar, but another console
# on the same terminal wrote at the cursor, on the bar's line (`rewrite --diff` on a terminal: a
# patch's `--- a/x.py` came after the bar's text, the bar's last state left in the scrollback:
# nineteenth read); such a print takes the bar away first and draws it again after
LIVE: list[Any] = []
# what never reaches the terminal as itself: C0 but tab and newline, DEL, C1, U+2028/2029,
# the bidirectional controls that reorder a line as shown, the invisible characters and those
# whose width terminals count differently, and those drawn blank (`textsafe`)
_CONTROL = re.compile(
    f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{BIDI}{INVISIBLE}{UNSETTLED_WIDTH}{BLANK}]|{LONE_FILLERS}"
)


def shown(text: str) -> str:
    """`text` as the console writes it: control characters as escapes, tab and newline kept."""
    return _CONTROL.sub(escaped_match, text)


class PorterConsole(Console):
    """A `rich.console.Console` that never writes a control character it was given as text,
    and prints at natural width off a terminal (see the module's docstring)."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if on_a_terminal(self) or self._width is not None or os.environ.get("COLUMNS", "").isdigit():
            return size
        return ConsoleDimensions(UNWRAPPED, size.height)

    @size.setter
    def size(self, new: tuple[int, int]) -> None:
        Console.size.fset(self, new)  # type: ignore[attr-defined]  # mypy models a property with a setter as an overload

    # set by a command whose work is writing files (`rewrite`): a reader that left (`2>&1 | head`)
    # then silences the console and the files are still written, as ruff's `--fix` writes them;
    # rich's own handler ended the run at the first progress line, nothing written, exit 0
    # (twenty-ninth read). `reader_left`: it happened (`cli.main` then leaves with the run's code)
    goes_on_without_a_reader = False
    reader_left = False

    def on_broken_pipe(self) -> None:
        if not PorterConsole.goes_on_without_a_reader:
            super().on_broken_pipe()
        self.quiet = True
        PorterConsole.reader_left = True

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """`Console.print`; a table the console cannot fit (a terminal's width, or `COLUMNS` off
        one: rich then squeezed columns to one character or none, and dropped their text) is
        drawn at its natural width; a progress bar
        another console draws is taken away first (`LIVE`)."""
        bars = [bar for bar in LIVE if bar.console.file is not self.file] if self.is_terminal else []
        for bar in bars:
            bar.stop()
        try:
            self._print(objects, kwargs)
        finally:
            for bar in bars:
                bar.start()

    def _print(self, objects: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        table = objects[0] if len(objects) == 1 and isinstance(objects[0], Table) else None
        if table is not None:
            fold(table)
        if table is None or _fits(self, table):
            super().print(*objects, **kwargs)
            return
        width = self._width
        self.width = min(Measurement.get(self, self.options.update_width(UNWRAPPED), table).maximum, UNWRAPPED)
        try:
            super().print(table, **kwargs)
        finally:
            self._width = width

    def render_str(self, text: str, **kwargs: Any) -> Any:
        """`Console.render_str` (every str printed or put in a table cell) of the text as the
        stream writes it (`escape_unencodable`)."""
        rendered = super().render_str(text, **kwargs)
        if isinstance(rendered, Text):
            escape_unencodable(rendered, self.encoding)
        return rendered

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # rich's one place where segments become the characters written: text segments are
        # made safe here, control segments (cursor moves) and styles pass as rich made them
        # made safe here, control segments (cursor moves) and styles pass as rich made them; and
        # no line is a CI log's command, however rich wrapped or folded the text (`inert`)
        return inert(
            super()._render_buffer(
                segment if segment.control else Segment(shown(segment.text), segment.style) for segment in buffer
            )
        )


def fold(table: Table) -> None:
    """A word wider than its column is folded over lines, never cut short with `…`."""
    for column in table.columns:
        column.overflow = "fold" if column.overflow == "ellipsis" else column.overflow


# the narrowest a column may be drawn: its longest word, or this many columns if that is longer
# (rich folds a longer word over lines)
NARROWEST = 8


def _fits(console: Console, table: Table) -> bool:
    """Whether `table` fits the console with each column at least its longest word wide, or
    `NARROWEST`: the edges and padding of every column, and a few characters of each."""
    wide = console.options.update_width(UNWRAPPED)

    def narrowest(column: Column) -> int:
        words = (Measurement.get(console, wide, c).minimum for c in (column.header, *column.cells))
        return min(NARROWEST, max(words, default=0))

    return 1 + sum(3 + narrowest(column) for column in table.columns) <= console.width


def on_a_terminal(console: Console) -> bool:
    """Whether `console` writes to a terminal, for what only a terminal gets: the live progress
    bar, a patch highlighted (escaped) rather than its bytes, the terminal's width, Markdown
    rendered. rich says so under `FORCE_COLOR`, which asks for colour alone: in a CI log that
    sets it, `rewrite --diff > fix.patch` wrote a highlighted text `git apply` refused, and the
    bar's 141 states (one log line each) filled the log (nineteenth read). A console made with
    `force_terminal`, or `TTY_COMPATIBLE=1`, is a terminal as rich says."""
    if not console.is_terminal:
        return False
    if getattr(console, "_force_terminal", None) is not None or _asked_colour(console) is None:
        return True
    if os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    isatty = getattr(console.file, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed file
        return False


def _asked_colour(console: Console) -> str | None:
    """The `FORCE_COLOR` the console reads (its own environment: `make_console`), or None."""
    return getattr(console, "_environ", os.environ).get("FORCE_COLOR")


def make_console(*, stderr: bool = False, **kwargs: object) -> PorterConsole:
    """The console a command prints through (stdout, or stderr with `stderr=True`). A non-empty
    `CLICOLOR_FORCE` (bixense.com/clicolors) asks for colour as `FORCE_COLOR` does, where that is
    not set, and `NO_COLOR` still wins (rich reads it), as ruff 0.17.6 reads them: porter did not
    read it (twenty-sixth read's leftover). Given to the console's own environment (rich's
    `_environ`), not set in porter's: that reaches the programs `trace record` and
    `parity-check` run."""
    kwargs.setdefault("highlight", False)
    kwargs.setdefault("emoji", False)  # `a:warning:b.py` is a name: rich showed it as `a⚠b.py`
    forced = clicolor_force()
    if forced:
        kwargs.setdefault("_environ", {**os.environ, "FORCE_COLOR": forced})
    return PorterConsole(stderr=stderr, **kwargs)  # type: ignore[arg-type]


def clicolor_force() -> str:
    """A non-empty `CLICOLOR_FORCE` where `FORCE_COLOR` is not set (which decides where it is),
    else "": colour asked for (`make_console`, and typer's console for `--help`)."""
    return os.environ.get("CLICOLOR_FORCE", "") if "FORCE_COLOR" not in os.environ else ""


# what is not text in a rendering: white space, the box-drawing characters of a panel or a table,
# and rich's mark of a word cut short
_FRAME = re.compile("[\\s\u2500-\u257f\u2026]")
# and rich's ASCII boxes (`+`, `-`, `|`), drawn on a stream that lacks the others
_ASCII_FRAME = re.compile("[\\s\u2500-\u257f\u2026+|-]")


def text_shown(console: Console, renderable: Any, width: int) -> int:
    """How many characters of text `renderable` shows at `width`, its frames not counted: counted,
    an ASCII stream's `-` frames grew with the width, and `porter lint --help | cat` under
    `PYTHONIOENCODING=ascii` was drawn 10,005 columns wide (twenty-fifth read)."""
    options = console.options.update_width(width)
    frame = _ASCII_FRAME if options.ascii_only else _FRAME
    lines = console.render_lines(renderable, options, pad=False)
    return sum(len(frame.sub("", segment.text)) for line in lines for segment in line if not segment.control)


def whole_width(console: Console, renderable: Any, width: int) -> int:
    """The narrowest width, at least `width`, at which `renderable` shows all its text. A panel or
    a table narrower than its frames and padding leaves its cells empty: on a terminal of 20
    columns `porter lint --help` lost the text of 15 options, below 16 nearly all of it, at 2 the
    whole help was an empty box; `porter explain` below 8 columns lost its code blocks' text
    (twenty-first read). Drawn wider, the terminal wraps its lines, and nothing is lost."""
    wide = max(width, Measurement.get(console, console.options.update_width(UNWRAPPED), renderable).maximum)
    whole = text_shown(console, renderable, wide)
    if text_shown(console, renderable, width) >= whole:  # the common case, in one rendering
        return width
    return narrowest(width, wide, lambda at: text_shown(console, renderable, at) >= whole)


def narrowest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The narrowest width from `low` to `high` that `fits` (`high` fits; a width wider than one
    that fits fits too), by bisection: each try renders the whole text."""
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid + 1, high)
    return high


def print_markdown(console: Console, text: str) -> None:
    """Markdown rendered on a terminal, no narrower than shows all of it; its source, as plain
    text, anywhere else."""
    if on_a_terminal(console):
        markdown = _folding_markdown()(text)
        width = whole_width(console, markdown, console.width)
        if width == console.width:
            console.print(markdown)
            return
        # its lines drawn at that width (rich's `print(width=)` draws no wider than the console)
        lines = console.render_lines(markdown, console.options.update_width(width), pad=False)
        console.print(SegmentLines(lines, new_lines=True), crop=False)
    else:
        # the source as written, past rich's text, which turns a tab into spaces: `porter explain
        # LCH008 | less` showed its Makefile example's recipe line indented by eight spaces, which
        # make reads as a variable's assignment, not a recipe (thirty-sixth read); still escaped
        # where the stream's encoding lacks a character, and made safe as all the console writes
        source = encodable(text.rstrip("\n"), console.encoding)
        console.print(Segments([Segment(source + "\n")]), crop=False)


def _folding_markdown() -> type:
    """rich's `Markdown` whose tables fold a word wider than its column over lines: rich cut it
    with `…` (`porter explain DEV001` at 20 columns showed the targets as `Torc…`: eighteenth
    read), as a table printed alone no longer does."""
    from rich.markdown import Markdown, TableElement

    class FoldingTable(TableElement):
        def __rich_console__(self, console: Console, options: Any) -> Any:
            for table in super().__rich_console__(console, options):
                if isinstance(table, Table):
                    fold(table)
                yield table

    class FoldingMarkdown(Markdown):
        elements = {**Markdown.elements, "table_open": FoldingTable}

    return FoldingMarkdown
