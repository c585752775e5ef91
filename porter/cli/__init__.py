"""The `porter` command line (typer + rich). Each command lives in a module of its own.

A run imports only the module of the command it runs: `porter lint` on a warm cache is over
in well under a second, and every other command's imports (rich's markdown, the report
templates, libcst through rewrite) would otherwise be a large part of it. `app` (every
command, for `--help`, an unknown command and the tests) is made on first use.
"""

from __future__ import annotations

import codecs
import errno
import gc
import importlib
import inspect
import io
import os
import sys
from functools import cache
from typing import Any, NoReturn

import typer

from porter import __version__
from porter.cli.interrupt import INTERRUPTED, ending, exit_code
from porter.cli.interrupt import install as install_sigterm
from porter.core.hangup import TerminalHungUp

# command name -> (module, attribute): a function registered with `app.command`, or a Typer
# added with `app.add_typer` (name ends the list: `porter --help` lists them in this order)
COMMANDS: dict[str, tuple[str, str]] = {
    "rewrite": ("porter.cli.rewrite", "rewrite"),
    "targets": ("porter.cli.info", "targets"),
    "rules": ("porter.cli.info", "rules"),
    "explain": ("porter.cli.info", "explain"),
    "kernels": ("porter.cli.kernels", "kernels"),
    "backends": ("porter.cli.backends", "backends"),
    "lint": ("porter.cli.lint", "lint"),
    "config": ("porter.cli.config_cmd", "config"),
    "parity-check": ("porter.cli.parity", "parity_check"),
    "trace": ("porter.cli.trace", "trace_app"),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"porter {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """porter ports CUDA-specific PyTorch code and says plainly what it could not port."""


def build(only: str | None = None) -> typer.Typer:
    """The command line with every command, or with `only` that one (what `main` runs)."""
    app = typer.Typer(
        name="porter",
        help="Move PyTorch code off NVIDIA: port CUDA-specific code to TorchNeuron, TorchTPU or PyTorch/XLA.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    for name, (module, attribute) in COMMANDS.items():
        if only is not None and name != only:
            continue
        command = getattr(importlib.import_module(module), attribute)
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
            for info in command.registered_commands:
                info.short_help = info.short_help or _summary(info.callback)
        else:
            app.command(name, short_help=_summary(command))(command)
    return app


def _summary(command: object) -> str | None:
    """A command's line in `porter --help`: its help's first paragraph as one paragraph (typer's
    rich help kept the docstring's line breaks, so parity-check's line ended at `and`, `port's`,
    `each` and went on under itself: nineteenth read)."""
    doc = getattr(command, "__doc__", None)
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else None


@cache
def _full() -> typer.Typer:
    return build()


def __getattr__(name: str) -> Any:
    if name == "app":
        return _full()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    _names_as_utf8()
    install_sigterm()  # SIGTERM and SIGHUP clean up as Ctrl-C does (workers, temporaries, a summary)
    # a run holds many small long-lived objects (the stat index's records, every finding): at
    # the default thresholds (700, 10) the collector scanned them over and over, a sixth of a
    # warm lint's CPU on the 1.2M-line corpus; young cycles are still collected, less often
    gc.set_threshold(10_000, 50)
    _settle_terminal()
    _escape_usage_errors()
    _help_at_natural_width()
    # `porter CMD ...` needs CMD alone; options before it, `--help` or a typo get every command
    first = sys.argv[1] if len(sys.argv) > 1 else None
    try:
        # (a signal while the command's modules import, a second or more on a busy host, is one
        # too: it was a traceback and exit 1; twenty-ninth read)
        app = build(first) if first in COMMANDS else _full()
        app()
    except KeyboardInterrupt as exc:
        _leave(*ending(exit_code(exc)))
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            _leave(*_when_the_reader_left(exc))
        if exc.errno not in _OUTPUT_LOST and not (exc.errno == errno.EBADF and _a_stream_is_read_only()):
            raise
        if exc.errno == errno.EFBIG:
            _leave(2, _over_the_size_limit(exc))
        # stdout on a full disk (`> /dev/full`) or gone: one line, as coreutils say it
        _leave(2, f"porter: cannot write the output: {exc.strerror or exc}")
    except SystemExit as exc:
        if exc.code in INTERRUPTED:
            _leave(*ending(exc.code))
        if isinstance(exc.__context__, BrokenPipeError):  # typer's handler: exit 1, silent
            _leave(*_when_the_reader_left(exc.__context__))
        if _reader_left_the_work_done():  # the run's own code; what is still buffered is dropped
            _leave(exc.code if isinstance(exc.code, int) else int(exc.code is not None))
        raise


def _over_the_size_limit(exc: OSError) -> str:
    """The line for a write past the file size limit (`ulimit -f`): the user's limit, named. Under
    1 KB the worker pool's shared memory failed before any output, and `lint` said "internal error:
    OSError: [Errno 27] File too large" (thirty-fifth term read's leftover)."""
    import resource  # on the error path only; POSIX, as EFBIG

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    limit = "" if soft == resource.RLIM_INFINITY else f" ({soft} bytes)"
    return f"porter: cannot write a file: {exc.strerror or exc}: over the file size limit, `ulimit -f`{limit}"


def _reader_left_the_work_done() -> bool:
    """Whether a reader left while a command that writes files went on (`PorterConsole`): its
    output's last piece is still buffered, and Python's flush at exit would say
    "Exception ignored … BrokenPipeError" and leave with 120."""
    shown = sys.modules.get("porter.report.console")  # not imported: no console, no reader left
    return shown is not None and shown.PorterConsole.reader_left


def _when_the_reader_left(error: BaseException | None) -> tuple[int, str | None]:
    """The exit code of a run whose output's reader left (`porter rules | head -1`): 0, said
    nothing, as ruff and ripgrep; typer's own handler left with 1, lint's "findings found", for
    every command (twenty-eighth read). A usage error keeps its 2 where saying it is what broke
    (`porter lint --bogus 2>&1 | true`; ruff too). A terminal that hung up is no reader that
    chose to stop: the output is lost, 2 (`TerminalHungUp`), the line for a stderr elsewhere."""
    while error is not None:
        if isinstance(error, TerminalHungUp):
            return 2, f"porter: cannot write the output: {error.strerror}"
        code = getattr(error, "exit_code", None)  # click's usage error, typer's own fork of it
        if isinstance(code, int):
            return code, None
        error = error.__context__
    return 0, None


def _a_stream_is_read_only() -> bool:
    """Whether stdout or stderr is open for reading only (`1</etc/hostname`): each write there
    is EBADF, and porter printed a traceback and left with 1, lint's "findings found", where a
    full disk is one line and 2 (twenty-eighth read). Any other EBADF is porter's own bug."""
    try:
        import fcntl  # on the error path only; POSIX
    except ImportError:
        return False
    for fd in (1, 2):
        try:
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
                return True
        except OSError:  # closed: Python's stream is None and drops what is written
            continue
    return False


def _names_as_utf8() -> None:
    """Under a locale whose encoding is not UTF-8 (`LANG=de_DE.ISO-8859-1`, `ja_JP.EUC-JP`),
    Python reads every file name in that encoding: `a<RLM>b.py` (UTF-8 bytes E2 80 8F) became
    `aâ\\x80\\x8fb.py`, so `rewrite --diff` wrote headers for files that do not exist (`git apply`:
    "No such file or directory" for each name past ASCII) and the JSON, SARIF and GitHub
    documents named them so (twentieth read). A name is its bytes, shown as UTF-8 (`\\xNN` where
    they are not) whatever the locale: porter runs again in Python's UTF-8 mode, its text output
    still in the locale's encoding (`PYTHONIOENCODING`, unless set)."""
    if sys.flags.utf8_mode or sys.getfilesystemencoding().lower().replace("-", "") == "utf8":
        return
    os.environ.setdefault("PYTHONIOENCODING", sys.getfilesystemencoding())
    argv = [sys.executable, "-X", "utf8", *sys.orig_argv[1:]]
    try:
        os.execv(sys.executable, argv)
    except OSError:  # no interpreter to run again: names as the locale reads them
        return


# errors of a write to stdout or stderr that no retry mends (the run's own files say theirs)
_OUTPUT_LOST = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)
# what rich and typer read as the terminal's size: a value that is not a positive decimal
# (`0` drew nothing at all; `²` passes str.isdigit and then int() raised) is not a size, nor is
# one past the largest a terminal can have (the kernel's `struct winsize` holds an unsigned
# short): `COLUMNS=99999999` on a terminal made `explain` and a usage error run for minutes
# without a line and `--help` write 500 MB of padding (twentieth read)
_SIZES = ("COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES")
_LARGEST_SIZE = 0xFFFF


def _settle_terminal() -> None:
    """The environment the output is written to, made safe to print to before anything prints:
    a terminal size that is not a positive decimal a terminal can have is ignored (POSIX leaves
    such a `COLUMNS` unspecified), so is an empty `FORCE_COLOR`, text the stream's encoding
    lacks (an ASCII locale, PYTHONIOENCODING) is written as `\\uXXXX` rather than raised, a
    closed stdout or stderr (`>&-`) takes the output away as Python's print does, and a
    non-blocking one is waited on when full, and a stderr whose reader left is dropped (`streams`)."""
    for var in _SIZES:
        value = os.environ.get(var)
        if value is not None and not (value.isascii() and value.isdigit() and 0 < int(value) <= _LARGEST_SIZE):
            del os.environ[var]
    # force-color.org: only a `FORCE_COLOR` "present and not an empty string" asks for colour (as
    # ruff reads it); rich read an empty one as "not a terminal", and on a terminal `explain`
    # printed its Markdown source, `rewrite` drew no bar, nothing had colour (twenty-sixth read)
    if os.environ.get("FORCE_COLOR") == "":
        del os.environ["FORCE_COLOR"]
    from porter.cli.streams import settled
    from porter.core.textsafe import UNENCODABLE, unencodable_escaped

    codecs.register_error(UNENCODABLE, unencodable_escaped)
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115  # lives as long as the process
        elif isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=UNENCODABLE)
            setattr(sys, name, settled(stream, stderr=name == "stderr"))  # a full or a left pipe (`streams`)


def _escape_usage_errors() -> None:
    """click's own usage errors quote the command line (`No such option: --x`, `Got unexpected
    extra argument(s) (x)`, a bad value): a file named `--x<RLO>.py` in a list of a
    repository's files (`porter lint $(git ls-files)`) reached the terminal with its bidi
    controls raw. Their messages show control characters as porter's own messages do."""
    from porter.core.textsafe import controls_escaped

    def escaping(format_message: Any) -> Any:
        def shown(self: Exception) -> str:
            return controls_escaped(str(format_message(self)), keep="\n")

        shown.porter_escapes = True  # type: ignore[attr-defined]
        return shown

    # typer raises the exceptions of the click it carries (`typer._click`), not click's own
    clicks = [sys.modules.get(m) for m in ("typer._click.exceptions", "click.exceptions")]
    roots: list[type[Exception]] = [m.ClickException for m in clicks if m is not None]
    # the exception's own class and its subclasses, and the base that defines the method
    # (typer's `TyperException`)
    todo = [*roots, *(c for r in roots for c in r.__mro__[1:] if "format_message" in vars(c))]
    while todo:
        cls = todo.pop()
        if issubclass(cls, tuple(roots)):
            todo.extend(cls.__subclasses__())
        own = vars(cls).get("format_message")
        if own is not None and not getattr(own, "porter_escapes", False):
            cls.format_message = escaping(own)  # type: ignore[attr-defined]


def _help_at_natural_width() -> None:
    """typer draws `--help` and a usage error in panels as wide as its console, which is
    `COLUMNS` wide off a terminal too: `porter --help > h.txt` under `COLUMNS=1000` wrote 45 KB,
    lines of 1,000 columns of padding, and a usage error in a CI log as much (issue 24 item 12:
    plain text at natural width off a terminal; twentieth read). Off a terminal each panel and
    paragraph is drawn at its natural width, at most the console's (so `COLUMNS`, or rich's 80,
    still wraps). typer's console is made on first use, in a module imported only then (a warm
    lint imports no rich): the module is patched as it is imported. (The finder is any object
    with `find_spec`: `importlib.abc` and `importlib.util`, ~5 ms, are imported only when typer's
    module is, not on every run.)"""
    module_name = "typer.rich_utils"

    class Patch:
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name != module_name:
                return None
            import importlib.util

            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module: Any) -> None:
                run(module)
                from porter.report.console import clicolor_force

                if module.FORCE_TERMINAL is None and clicolor_force():
                    module.FORCE_TERMINAL = True  # (typer reads `FORCE_COLOR`; the help was plain)
                made = module._get_rich_console
                module._get_rich_console = lambda stderr=False: _HelpConsole.of(made(stderr=stderr))

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    if module_name not in sys.modules:
        sys.meta_path.insert(0, Patch())


class _HelpConsole:
    """typer's console for `--help` and usage errors. Every table in what it prints folds a word
    wider than its column over lines: typer's help cut them with `…`, on an 80-column terminal
    `optimizer_facto…`, `--no-noise-flo…` in parity-check's, at 40 the options' own names
    (`--tar…`, `--out…`; twentieth read). Off a terminal each renderable is printed at its
    natural width, at most the console's; on a terminal at the console's; either no narrower
    than shows all its text. rich's `force_terminal` (typer sets it under
    `GITHUB_ACTIONS` or `FORCE_COLOR`) asks for colour: a stream is a terminal when it says so
    (or `TTY_COMPATIBLE=1`)."""

    def __init__(self, console: Any, terminal: bool) -> None:
        self._console = console
        self._terminal = terminal

    @classmethod
    def of(cls, console: Any) -> Any:
        isatty = getattr(console.file, "isatty", None)
        try:
            terminal = os.environ.get("TTY_COMPATIBLE") == "1" or bool(isatty is not None and isatty())
        except ValueError:  # a closed stream
            terminal = False
        return cls(console, terminal)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        console = self._console
        width = console.width
        for renderable in objects:
            _folding(renderable, console.encoding)
        if len(objects) == 1:  # no narrower than shows all its text (a terminal wraps its lines)
            from porter.report.console import whole_width

            # off a terminal from its natural width: under a small `COLUMNS` (`COLUMNS=30 porter
            # lint --help > h.txt`) the options' panel was an empty box, every option's text
            # lost, as on a terminal before the twenty-first read (twenty-second read)
            at = width if self._terminal else self._natural(objects[0], width)
            console.width = whole_width(console, objects[0], at)
        try:
            console.print(*objects, **kwargs)
        finally:
            console.width = width

    def _natural(self, renderable: Any, width: int) -> int:
        """The narrowest width at which `renderable` takes no more lines than at `width` (rich
        measures an option's help, `Columns`, and so its panel, as the whole width: measured,
        not drawn, the options panel kept its 1,000 columns)."""
        from rich.measure import Measurement

        from porter.report.console import narrowest, text_shown

        console = self._console
        options = console.options.update_width(width)

        def lines(at: int) -> int:
            return len(console.render_lines(renderable, options.update_width(at), pad=False))

        high = max(1, min(Measurement.get(console, options, renderable).maximum, width))
        most, whole = lines(high), text_shown(console, renderable, high)
        # and all the text: narrower than the names' columns (each as wide as its widest word)
        # rich cut them into fewer lines, and the help column was drawn 1 wide (twenty-fifth read)
        return narrowest(1, high, lambda at: lines(at) <= most and text_shown(console, renderable, at) >= whole)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)


def _parts(renderable: Any) -> list[Any]:
    """`renderable` and every renderable inside it (panels, tables' cells, groups)."""
    from rich.table import Table

    found, todo = [], [renderable]
    while todo:
        item = todo.pop()
        found.append(item)
        if isinstance(item, Table):
            todo.extend(cell for column in item.columns for cell in column.cells)
        else:
            todo.extend(getattr(item, "renderables", ()))
            inner = getattr(item, "renderable", None)
            todo.extend([inner] if inner is not None else [])
    return found


def _folding(renderable: Any, encoding: str) -> None:
    """`renderable`'s tables, and the text in them, fold a word wider than its column over lines
    (a table that rich makes as it draws, `Columns`' grid, takes its items' own overflow); the
    text as a stream in `encoding` writes it."""
    from rich.table import Table
    from rich.text import Text

    from porter.report.console import escape_unencodable, fold

    for item in _parts(renderable):
        if isinstance(item, Table):
            fold(item)
            _names_unwrapped(item)
        elif isinstance(item, Text):
            item.overflow = "fold" if item.overflow in (None, "ellipsis") else item.overflow
            escape_unencodable(item, encoding)


def _names_unwrapped(table: Any) -> None:
    """Each column of `table` before the last (the help's) as wide as its widest word, the
    help's taking what is left; typer's empty columns (secondary short names,
    the required mark) dropped. rich narrowed the names with the help, so an 80-column options
    panel folded `--report-unused-ignores`, and kept whole it was 92 wide (twenty-fifth read)."""
    from dataclasses import replace

    from rich.cells import cell_len

    kept = [column for column in table.columns if any(str(cell) for cell in column.cells)]
    # rich pads a column by its place (`_index`: no edge padding at the first and the last)
    table.columns[:] = [replace(column, _index=at) for at, column in enumerate(kept or table.columns)]
    for column in table.columns[:-1]:  # `<int range> [x>=1]` may wrap at its space
        column.width = max((cell_len(word) for cell in column.cells for word in str(cell).split()), default=0)
    table.columns[-1].ratio = 1


def _leave(code: int, line: str | None = None) -> NoReturn:
    """Exit at once after an interrupt: the workers are gone and the temporaries removed, and
    tearing the interpreter down (freeing the project index of a large tree) would keep the
    CPU busy for seconds after porter said it stopped. `line`: what to say if the command
    did not."""
    from porter.cli.streams import stop_waiting

    stop_waiting()  # (a full pipe nobody reads held the flush below for ever)
    if line is not None:
        try:
            print(line, file=sys.stderr)
        except (OSError, ValueError):
            pass
    for stream in (sys.stderr, sys.stdout):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
