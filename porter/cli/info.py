"""`porter targets`, `porter rules`, `porter explain`: what porter knows, from its data."""

from __future__ import annotations

import typer
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from porter.cli.common import check_target, console, usage_error
from porter.cli.options import Target
from porter.config.ruledocs import meta_markdown, rule_markdown
from porter.report.console import on_a_terminal, print_markdown
from porter.config.ruledata import all_rules
from porter.config.targets import all_targets
from porter.core.textsafe import plain
from porter.config.metacodes import meta_codes, meta_info


def targets() -> None:
    """List the targets, their device and backends, and whether their runtime is installed here."""
    table = Table()
    for col in ("target", "runtime", "device", "compile backend", "distributed backend", "installed here"):
        table.add_column(col)
    for t in all_targets().values():
        device = t.device_expr or f'"{t.device_type}"'
        table.add_row(
            *(
                plain(cell)
                for cell in (t.name, f"{t.display} ({t.package})", device, t.compile_backend, t.dist_backend)
            ),
            "yes" if t.runtime_installed() else "no",
        )
    console.print(table)


def rules(target: Target = None) -> None:
    """List every rule: code, name, fix per target, summary (with --target: the rules that apply to it);
    then the meta codes lint emits (PORT001, PORT100)."""
    if target is not None:
        check_target(target)
    header = ("code", "name", "neuron", "tpu", "xla", "summary")
    rows = []
    for rule in all_rules().values():
        if target is not None and target not in rule.targets:
            continue
        fixes = [rule.applicability_for(t).value if t in rule.targets else "-" for t in ("neuron", "tpu", "xla")]
        name = rule.name if rule.default else f"{rule.name} (opt-in)"
        rows.append((rule.code, name, *fixes, rule.summary))
    # the codes lint's formats emit that are no rule, for every target: `porter explain` explains them
    rows += [(m.code, f"{m.name} (meta code)", "-", "-", "-", m.summary) for m in meta_codes()]
    if not on_a_terminal(console):
        _print_lines(header, rows)
        return
    table = Table()
    for col in header:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*map(plain, row))  # text, never markup: `kernel[grid]`
    console.print(table)


def _print_lines(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """One line a row, its columns aligned, the last unpadded: as a table, off a terminal every
    row was padded to the longest summary (143 rows of 2,358 columns: 373 KB for `porter rules |
    less`, twenty-first read)."""
    widths = [max(cell_len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    for row in (header, *rows):
        cells = [cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths, strict=False)]
        console.print(Text("  ".join((*cells, row[-1]))), soft_wrap=True)


def explain(
    code: str = typer.Argument(..., help="A rule code, e.g. DEV001 (or PORT001, PORT100 from lint's output)."),
) -> None:
    """Explain one rule: what it finds, why, the fix per target, examples."""
    # stripped as `--select` and the config file's lists read a code (`--select " DEV001"` ran
    # DEV001 where `explain " DEV001"` was unknown: twenty-seventh read)
    key = code.strip().upper()
    rule, meta = all_rules().get(key), meta_info(key)
    if rule is not None:
        page = rule_markdown(rule, heading="#")
    elif meta is not None:
        page = meta_markdown(meta, heading="#")
    else:
        raise usage_error(f"unknown rule code {code!r} (see `porter rules`)")
    print_markdown(console, page)
