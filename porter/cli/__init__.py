"""The `porter` command line (typer + rich). Each command lives in a module of its own.

A run imports only the module of the command it runs: `porter lint` on a warm cache is over
in well under a second, and every other command's imports (rich's markdown, the report
templates, libcst through rewrite) would otherwise be a large part of it. `app` (every
command, for `--help`, an unknown command and the tests) is made on first use.
"""

from __future__ import annotations

import importlib
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
        else:
            app.command(name)(command)
    return app


@cache
def _full() -> typer.Typer:
    return build()


def __getattr__(name: str) -> Any:
    if name == "app":
        return _full()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    install_sigterm()  # SIGTERM cleans up as Ctrl-C does (workers, temporaries, a summary)
    # `porter CMD ...` needs CMD alone; options before it, `--help` or a typo get every command
    first = sys.argv[1] if len(sys.argv) > 1 else None
    app = build(first) if first in COMMANDS else _full()
    try:
        app()
    except KeyboardInterrupt as exc:
        _leave(*ending(exit_code(exc)))
    except SystemExit as exc:
        if exc.code in _INTERRUPTED:
            _leave(*ending(exc.code))
        raise


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
