"""`porter kernels PATH`: every custom kernel, where it is defined and called, and (with
`--scaffold DIR`) a reference op, a target kernel skeleton and a parity test for each."""

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
    effective_config,
    err_console,
    usage_error,
    work_outlives_the_reader,
)
from porter.cli.options import AsJson, FileTimeout, Scaffold, Target
from porter.core.textsafe import json_inert, path_name, plain


def kernels(
    path: Path = typer.Argument(Path("."), help="File or folder to scan."),
    target: Target = None,
    scaffold: Scaffold = None,
    as_json: AsJson = False,
    file_timeout: FileTimeout = None,
) -> None:
    """List custom kernels (Triton, cpp_extension, .cu sources) with their call sites."""
    from porter.kernels.inventory import scan
    from porter.pipeline.bounded import limit_of

    limit = limit_of(file_timeout)
    if not path.exists():
        raise usage_error(f"{path}: no such file or directory")
    scaffold_target = _scaffold_target(path, target) if scaffold is not None else None
    if scaffold is not None:
        check_output_folder("--scaffold", scaffold)
    work_outlives_the_reader(scaffold is not None)  # the skeletons are the work: written, with the run's code
    if scaffold is None and target is not None:
        check_target(target)
    inv = scan(path, limit)
    if as_json:
        # with the table's reference column: it was in no field of the document (twenty-sixth read)
        kernels = [k.to_dict() | {"reference": ref} for k, ref in zip(inv.kernels, _references(inv, limit))]
        document = {"kernels": kernels, "registered": [r.to_dict() for r in inv.registered], "problems": inv.problems}
        echo_document(json_inert(json.dumps(document, indent=2)))
    else:
        _print_table(inv, limit)
    for problem in inv.problems:
        err_console.print(f"note: {plain(problem)}", soft_wrap=True)
    if scaffold is not None and scaffold_target is not None:
        # with --json, stdout is the one document: what was written is said on stderr (22nd read)
        _write_scaffolds(inv, scaffold, scaffold_target, limit, err_console if as_json else console)
    raise typer.Exit(1 if inv.kernels else 0)


def _scaffold_target(path: Path, target: str | None) -> str:
    """The target the skeletons are written for: as rewrite and lint, the command line, else
    `target` in [tool.porter] / porter.toml, else a usage error (listing needs none)."""
    eff = effective_config(
        [path],
        config=None,
        isolated=False,
        target=target,
        select=None,
        ignore=None,
        extend_select=None,
        exclude=None,
    )
    return check_target(eff.target)


def _references(inv, limit: float | None) -> list[str]:
    """Whether each kernel's reference op can be derived: "derived", or "TODO" (a Triton kernel's: and why not)."""
    from porter.kernels.triton_ref import why_not
    from porter.pipeline.bounded import Failed, bounded

    refs = []
    for k in inv.kernels:
        if k.kind == "triton":
            try:
                reason = bounded(why_not, k.source, k.name, limit=limit)
            except Failed as exc:
                reason = str(exc)
            refs.append("derived" if reason is None else f"TODO: {reason}")
        else:
            refs.append("TODO")
    return refs


def _print_table(inv, limit: float | None) -> None:
    """The kernels as a table (with whether a reference op can be derived), and how many."""
    table = Table()
    for col in ("kernel", "kind", "defined", "calls (arguments)", "reference"):
        table.add_column(col, overflow="fold")
    for k, ref in zip(inv.kernels, _references(inv, limit)):
        # names, paths, arguments and reasons come from the tree: text, never markup or control
        table.add_row(
            cell(k.name),
            cell(k.kind, *([k.detail] if k.detail else [])),
            cell(k.where),  # a name that is not UTF-8 as `\\xNN`, as everywhere
            cell(*said) if (said := [c.describe() for c in k.calls] + _unread(k)) else cell("-"),
            cell(ref),
        )
    console.print(table)
    # the notes are of unread files and of launches, imports and branches porter cannot follow: "file(s)
    # not read" counted a launch note as a file (twenty-seventh read)
    notes = f"; {len(inv.problems)} note(s) on stderr" if inv.problems else ""
    console.print(f"{len(inv.kernels)} kernel(s){notes}")
    if inv.registered:
        _print_registered(inv.registered)


def _print_registered(registered) -> None:
    """The ops the C++/CUDA sources register with torch and the device of each implementation, as
    lint reads them for its CUDA-only ops: a host `.cpp`'s were listed nowhere (twenty-seventh read)."""
    table = Table()
    for col in ("registered op", "device", "in"):
        table.add_column(col, overflow="fold")
    for r in registered:
        table.add_row(cell(r.name), cell(r.device), cell(path_name(r.path)))
    console.print(table)
    console.print(f"{len(registered)} op registration(s)")


_UNREAD_SAID = 3  # a kernel's launches porter cannot read, said one by one in the table (then counted)


def _unread(k) -> list[str]:
    """The launches that run `k` and whose arguments porter cannot read (`cudaLaunchKernel`, a dict of
    kernels): the table said "-" of such a kernel, as of one never launched, and `--json` nothing
    (twenty-sixth read); its scaffold's TODO said them."""
    more = len(k.unresolved) - _UNREAD_SAID
    return k.unresolved[:_UNREAD_SAID] + ([f"and {more} more such launches"] if more > 0 else [])


def _write_scaffolds(inv, scaffold: Path, target: str, limit: float | None, said: Console) -> None:
    """--scaffold: the reference ops, skeletons and parity tests; existing files are kept."""
    from porter.kernels.scaffold import ScaffoldError, unlisted_scaffolds, write_scaffolds
    from porter.pipeline.writer import why_unwritable

    kept: list[Path] = []
    passed: list[str] = []
    holds: dict[Path, bool | None] = {}
    try:
        written = write_scaffolds(inv, scaffold, target, kept, passed, limit, holds)
    except ScaffoldError as exc:  # a porter bug: say so, write nothing more
        err_console.print(f"[bold red]internal error:[/] {plain(exc)}", soft_wrap=True)
        raise typer.Exit(2) from None
    except OSError as exc:
        raise usage_error(f"cannot write into --scaffold {scaffold}: {why_unwritable(scaffold, exc)}") from None
    said.print(f"wrote {len(written)} file(s) under {plain(scaffold)}", soft_wrap=True)
    for path in kept:
        err_console.print(f"note: {plain(path)} {KEPT[holds.get(path)]}", soft_wrap=True)
    for problem in passed:
        err_console.print(f"note: {plain(problem)}", soft_wrap=True)
    for path in unlisted_scaffolds(inv, scaffold):
        stem = path.name.removesuffix("_op.py")
        err_console.print(
            f"note: {plain(path)}: scaffolded by porter for a kernel this tree no longer lists (renamed or"
            f" removed?): kept, as are its {plain(stem)}_<target>.py and test_{plain(stem)}_<target>_parity.py",
            soft_wrap=True,
        )
