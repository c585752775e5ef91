"""The `porter` command line (typer + rich). Each command lives in a module of its own."""

from __future__ import annotations

import typer

from porter import __version__
from porter.cli.config_cmd import config
from porter.cli.info import explain, rules, targets
from porter.cli.kernels import kernels
from porter.cli.lint import lint
from porter.cli.rewrite import rewrite
from porter.cli.interrupt import exit_code
from porter.cli.interrupt import install as install_sigterm

app = typer.Typer(
    name="porter",
    help="Move PyTorch code off NVIDIA: port CUDA-specific code to TorchNeuron, TorchTPU or PyTorch/XLA.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"porter {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """porter ports CUDA-specific PyTorch code and says plainly what it could not port."""


app.command()(rewrite)
app.command()(targets)
app.command()(rules)
app.command()(explain)
app.command("kernels")(kernels)
app.command()(lint)
app.command("config")(config)
from porter.cli.parity import parity_check  # noqa: E402
app.command("parity-check")(parity_check)
from porter.cli.trace import trace_app  # noqa: E402
app.add_typer(trace_app, name="trace")


def main() -> None:
    install_sigterm()  # SIGTERM cleans up as Ctrl-C does (workers, temporaries, a summary)
    try:
        app()
    except KeyboardInterrupt as exc:
        raise SystemExit(exit_code(exc)) from None
