"""The terminal view of a run: diffs and the summary table."""

from __future__ import annotations

import difflib

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from porter.findings import FileResult
from porter.ruledata import all_rules
from porter.runner import Summary


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def unified_diff(result: FileResult) -> str:
    assert result.original_source is not None and result.new_source is not None
    before = _text(result.original_source).splitlines(keepends=True)
    after = _text(result.new_source).splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, f"a/{result.path.lstrip('/')}", f"b/{result.path.lstrip('/')}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def print_diff(console: Console, result: FileResult) -> None:
    text = unified_diff(result)
    if console.is_terminal:
        console.print(Syntax(text, "diff", theme="ansi_dark", background_color="default", word_wrap=False))
    else:
        console.out(text, end="", highlight=False)


def print_summary(console: Console, summary: Summary, *, wrote: str) -> None:
    rules = all_rules()
    skipped = sum(summary.skipped.values())
    console.print(
        f"[bold]Files[/]: {summary.scanned} scanned, {summary.changed} {wrote}, "
        f"{summary.unchanged} unchanged, {skipped} skipped, {len(summary.errors)} failed"
    )
    for reason, n in sorted(summary.skipped.items()):
        console.print(f"  skipped {n}: {reason}")
    for err in summary.errors:
        where = f"{err.path}:{err.error_line}" if err.error_line else err.path
        console.print(f"  [red]failed[/] {where}: {err.reason}")
    codes = sorted(set(summary.rewritten) | set(summary.manual) | set(summary.unapplied))
    if not codes:
        console.print("No CUDA-specific sites found.")
        return
    table = Table(title="Sites by rule", title_justify="left")
    table.add_column("code")
    table.add_column("rule")
    table.add_column("rewritten", justify="right")
    table.add_column("fix not applied", justify="right")
    table.add_column("manual", justify="right")
    for code in codes:
        rule = rules.get(code)
        table.add_row(
            code,
            rule.name if rule else "",
            str(summary.rewritten.get(code, 0)),
            str(summary.unapplied.get(code, 0)),
            str(summary.manual.get(code, 0)),
        )
    table.add_section()
    table.add_row(
        "",
        "total",
        str(sum(summary.rewritten.values())),
        str(sum(summary.unapplied.values())),
        str(sum(summary.manual.values())),
    )
    console.print(table)
    if summary.unapplied:
        console.print(
            f"{sum(summary.unapplied.values())} fixes are unsafe and were not applied: "
            "review them with `porter lint`, apply them with `--unsafe-fixes`."
        )
