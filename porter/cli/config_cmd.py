"""`porter config`: the effective settings for a path, and where each value came from."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from porter.cli.common import console, effective_config, usage_error
from porter.cli.options import ConfigFile, Exclude, ExtendSelect, FailOn, Ignore, Isolated, Portable, Select, Target
from porter.config.files import KEYS
from porter.core.textsafe import json_inert, plain


def config(
    paths: list[Path] = typer.Argument(
        None, help="The path whose configuration to show (default: the current folder).", show_default=False
    ),
    target: Target = None,
    select: Select = None,
    ignore: Ignore = None,
    extend_select: ExtendSelect = None,
    exclude: Exclude = None,
    fail_on: FailOn = None,
    portable: Portable = None,
    config_file: ConfigFile = None,
    isolated: Isolated = False,
    output_format: str = typer.Option("text", "--output-format", help="text or json."),
) -> None:
    """Print the effective settings and where each came from (default, config file, command line)."""
    if output_format not in ("text", "json"):
        raise usage_error(f"unknown --output-format {output_format!r}: choose text or json")
    paths = list(paths or [Path(".")])
    eff = effective_config(
        paths,
        config=config_file,
        isolated=isolated,
        target=target,
        select=select,
        ignore=ignore,
        extend_select=extend_select,
        exclude=exclude,
        fail_on=fail_on,
        portable=portable,
    )
    cfg = str(eff.config.path) if eff.config.path else None
    if output_format == "json":
        data = {
            "config_file": cfg,
            "settings": {k: {"value": v.value, "source": v.source} for k, v in eff.values.items()},
        }
        typer.echo(json_inert(json.dumps(data, indent=2)))
        return
    console.print(f"Config file: {plain(cfg) if cfg else 'none found (defaults)'}")
    table = Table(show_lines=False)
    table.add_column("key")
    table.add_column("value")
    table.add_column("source")
    for key in KEYS:
        v = eff.values[key]
        table.add_row(key, plain(_show(key, v.value)), plain(v.source))
    console.print(table)


def _show(key: str, value) -> str:
    if value is None:
        return "(not set)"
    if key == "per-file-ignores":
        return ", ".join(f"{p} = {','.join(c)}" for p, c in value) or "[]"
    if isinstance(value, bool):
        return "true" if value else "false"  # as the config file spells it
    if isinstance(value, list):
        return ", ".join(value) if value else "[]"
    return str(value)
