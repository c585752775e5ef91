"""Options and checks shared by the commands."""

from __future__ import annotations

import typer
from rich.console import Console

from porter.ruledata import unknown_codes
from porter.settings import TARGETS

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def usage_error(message: str) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}")
    return typer.Exit(EXIT_ERROR)


def check_target(target: str | None) -> str:
    if target is None:
        raise usage_error(f"--target is required: one of {', '.join(TARGETS)}")
    if target not in TARGETS:
        raise usage_error(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    return target


def split_codes(values: list[str] | None) -> tuple[str, ...]:
    codes: list[str] = []
    for v in values or []:
        codes.extend(c.strip().upper() for c in v.split(",") if c.strip())
    bad = unknown_codes(tuple(codes))
    if bad:
        raise usage_error(f"unknown rule code or prefix: {', '.join(bad)} (see `porter rules`)")
    return tuple(codes)
