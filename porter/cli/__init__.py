"""The `porter` command line (typer + rich). Each command lives in a module of its own.

A run imports only the module of the command it runs: `porter lint` on a warm cache is over
in well under a second, and every other command's imports (rich's markdown, the report
templates, libcst through rewrite) would otherwise be a large part of it. `app` (every
command, for `--help`, an unknown command and the tests) is made on first use.
"""

from __future__ import annotations

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
from porter.cli.interrupt import ending, exit_code
from porter.cli.interrupt import install as install_sigterm

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
    install_sigterm()  # SIGTERM cleans up as Ctrl-C does (workers, temporaries, a summary)
    # a run holds many small long-lived objects (the stat index's records, every finding): at
    # the default thresholds (700, 10) the collector scanned them over and over, a sixth of a
    # warm lint's CPU on the 1.2M-line corpus; young cycles are still collected, less often
    gc.set_threshold(10_000, 50)
    _settle_terminal()
    _escape_usage_errors()
    # `porter CMD ...` needs CMD alone; options before it, `--help` or a typo get every command
    first = sys.argv[1] if len(sys.argv) > 1 else None
    app = build(first) if first in COMMANDS else _full()
    try:
        app()
    except KeyboardInterrupt as exc:
        _leave(*ending(exit_code(exc)))
    except OSError as exc:
        if exc.errno not in _OUTPUT_LOST:
            raise
        # stdout on a full disk (`> /dev/full`) or gone: one line, as coreutils say it
        _leave(2, f"porter: cannot write the output: {exc.strerror or exc}")
    except SystemExit as exc:
        if exc.code in _INTERRUPTED:
            _leave(*ending(exc.code))
        raise


# errors of a write to stdout or stderr that no retry mends (the run's own files say theirs)
_OUTPUT_LOST = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)
# what rich and typer read as the terminal's size: a value that is not a positive decimal
# (`0` drew nothing at all; `²` passes str.isdigit and then int() raised) is not a size
_SIZES = ("COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES")


def _settle_terminal() -> None:
    """The environment the output is written to, made safe to print to before anything prints:
    a terminal size that is not a positive decimal is ignored (POSIX leaves such a `COLUMNS`
    unspecified), text the stream's encoding lacks (an ASCII locale, PYTHONIOENCODING) is
    written as `\\uXXXX` rather than raised, and a closed stdout or stderr (`>&-`) takes the
    output away as Python's print does."""
    for var in _SIZES:
        value = os.environ.get(var)
        if value is not None and not (value.isascii() and value.isdigit() and int(value) > 0):
            del os.environ[var]
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115  # lives as long as the process
        elif isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


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


# 128 + SIGINT / SIGTERM: the run was interrupted and has said what it left
_INTERRUPTED = (130, 143)


def _leave(code: int, line: str | None = None) -> NoReturn:
    """Exit at once after an interrupt: the workers are gone and the temporaries removed, and
    tearing the interpreter down (freeing the project index of a large tree) would keep the
    CPU busy for seconds after porter said it stopped. `line`: what to say if the command
    did not."""
    if line is not None:
        try:
            print(line, file=sys.stderr)
        except (OSError, ValueError):
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
