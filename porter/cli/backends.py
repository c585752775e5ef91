"""`porter backends PATH`: the project's per-device backend classes (CUDA's and its siblings),
and with `--scaffold DIR` a skeleton of the target's modelled on CUDA's."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from porter.cli.common import (
    KEPT,
    cell,
    check_output_folder,
    check_target,
    console,
    echo_document,
    err_console,
    usage_error,
    work_outlives_the_reader,
)
from porter.cli.options import AsJson, FileTimeout, Scaffold, Target
from porter.core.textsafe import json_inert, path_name, plain


def backends(
    path: Path = typer.Argument(Path("."), help="File or folder to scan."),
    target: Target = None,
    scaffold: Scaffold = None,
    as_json: AsJson = False,
    file_timeout: FileTimeout = None,
) -> None:
    """List per-device backend classes (one per device under one base) and CUDA's among them."""
    from porter.backends.scaffold import scan
    from porter.pipeline.bounded import limit_of

    target = check_target(target)
    if not path.exists():
        raise usage_error(f"{path}: no such file or directory")
    if scaffold is not None:
        check_output_folder("--scaffold", scaffold)
    work_outlives_the_reader(scaffold is not None)  # the skeletons are the work: written, with the run's code
    found = scan(path)
    if as_json:
        _print_json(found, target)
    else:
        _print_table(found, target)
    if scaffold is not None:
        # with --json, stdout is the one document: what was written is said on stderr (22nd read)
        _write_scaffolds(found, path, scaffold, target, limit_of(file_timeout), err_console if as_json else console)


def _print_json(found: list, target: str) -> None:
    """The families as JSON: each with its base, CUDA's class, the other devices' and the target's (or null)."""
    rows = [
        {
            "base": f.base,
            "cuda": {"class": f.cuda.name, "path": path_name(f.cuda.path)},
            "others": [{"device": c.device, "class": c.name, "path": path_name(c.path)} for c in f.others],
            "target": (lambda c: c and {"class": c.name, "path": path_name(c.path)})(f.for_target(target)),
        }
        for f in found
    ]
    echo_document(json_inert(json.dumps({"families": rows}, indent=2)))


def _print_table(found: list, target: str) -> None:
    """The families as a table, and how many there are."""
    table = Table()
    for col in ("base", "CUDA's class", "other devices", f"{target}'s"):
        table.add_column(col, overflow="fold")
    for f in found:
        own = f.for_target(target)
        # names and paths come from the tree: text, never markup
        table.add_row(
            cell(f.base),
            cell(f.cuda.name, path_name(f.cuda.path)),
            cell(*(f"{c.device}: {c.name}" for c in f.others)),
            cell(f"{own.name} ({path_name(own.path)})" if own else "none"),
        )
    console.print(table)
    console.print(f"{len(found)} per-device famil{'y' if len(found) == 1 else 'ies'}")


def _write_scaffolds(found: list, path: Path, scaffold: Path, target: str, limit: float | None, said: Console) -> None:
    """--scaffold: a skeleton for each family that has no class for the target; an existing file is
    kept, and a family porter cannot model is a note, not an error."""
    from porter.backends.scaffold import ScaffoldError, out_name, write_backend
    from porter.pipeline.writer import why_unwritable

    written: list[Path] = []
    taken: set[str] = set()  # the names given to the families before: each gets a file of its own
    holds: dict[Path, bool | None] = {}  # a kept file: whether it holds what porter writes now
    for f in found:
        if f.for_target(target) is not None:
            continue
        name = out_name(f, target, taken)
        try:
            made = write_backend(f, path, scaffold, target, name, limit, holds)
        except ScaffoldError as exc:
            err_console.print(f"note: {plain(exc)}", soft_wrap=True)
            continue
        except OSError as exc:
            raise usage_error(f"cannot write into --scaffold {scaffold}: {why_unwritable(scaffold, exc)}") from None
        if made is None:
            err_console.print(f"note: {plain(scaffold / name)} {KEPT[holds.get(scaffold / name)]}", soft_wrap=True)
        else:
            written.append(made)
            said.print(f"wrote {plain(made)}", soft_wrap=True)
    said.print(f"wrote {len(written)} file(s) under {plain(scaffold)}", soft_wrap=True)
