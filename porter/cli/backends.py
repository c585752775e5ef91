"""`porter backends PATH`: the project's per-device backend classes (CUDA's and its siblings),
and with `--scaffold DIR` a skeleton of the target's modelled on CUDA's."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from porter.cli.common import check_target, console
from porter.cli.options import AsJson, Scaffold, Target


def backends(
    path: Path = typer.Argument(Path("."), help="File or folder to scan."),
    target: Target = None,
    scaffold: Scaffold = None,
    as_json: AsJson = False,
) -> None:
    """List per-device backend classes (one per device under one base) and CUDA's among them."""
    from porter.backends.scaffold import scan, write_backend

    target = check_target(target)
    if not path.exists():
        console.print(f"[red]error:[/red] {path}: no such file or directory")
        raise typer.Exit(2)
    found = scan(path)
    if as_json:
        rows = [
            {
                "base": f.base,
                "cuda": {"class": f.cuda.name, "path": f.cuda.path},
                "others": [{"device": c.device, "class": c.name, "path": c.path} for c in f.others],
                "target": (lambda c: c and {"class": c.name, "path": c.path})(f.for_target(target)),
            }
            for f in found
        ]
        typer.echo(json.dumps({"families": rows}, indent=2))
    else:
        table = Table()
        for col in ("base", "CUDA's class", "other devices", f"{target}'s"):
            table.add_column(col, overflow="fold")
        for f in found:
            own = f.for_target(target)
            table.add_row(
                f.base,
                f"{f.cuda.name}\n{f.cuda.path}",
                "\n".join(f"{c.device}: {c.name}" for c in f.others),
                f"{own.name} ({own.path})" if own else "none",
            )
        console.print(table)
        console.print(f"{len(found)} per-device famil{'y' if len(found) == 1 else 'ies'}")
    if scaffold is not None:
        written = [p for f in found if f.for_target(target) is None and (p := write_backend(f, path, scaffold, target)) is not None]
        for p in written:
            console.print(f"wrote {p}")
        console.print(f"wrote {len(written)} file(s) under {scaffold}")
