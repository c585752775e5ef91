"""The terminal view of a run: syntax-highlighted diffs, the per-rule table, readiness."""

from __future__ import annotations


from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from porter.core.findings import FileResult
from porter.report.model import INFO, INFO_TITLES, FileReport, ReportModel, patch_lines
from porter.report.console import on_a_terminal
from porter.core.textsafe import framed_for_a_log, lines_printable, name, plain

MAX_FILE_ROWS = 25  # per-file readiness rows before "… N more files"


def text_of(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def lines_of(text: str) -> list[str]:
    # split on "\n" only: `str.splitlines` also splits on form feeds and other separators
    # that `patch` and `git apply` take as part of a line
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(result: FileResult, path: str | None = None) -> str:
    """A unified diff `git apply` and `patch -p1` accept; `path` is the file's real relative
    name when the displayed one differs (a name that is not UTF-8)."""
    assert result.original_source is not None and result.new_source is not None
    return diff_text(text_of(result.original_source), text_of(result.new_source), path or result.path)


def diff_text(before: str, after: str, path: str) -> str:
    """The unified diff of one file's two texts, named `path` (a/ and b/ prefixed, git-quoted)."""
    where = path.lstrip("/")
    lines = patch_lines(lines_of(before), lines_of(after), where)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    if where.endswith(".ipynb"):  # each hunk named by the notebook cell it changes
        from porter.files.notebooks.diffs import label_hunks

        text = label_hunks(text, before)
    return text


def _print_diff_text(console: Console, text: str) -> None:
    if not text:
        return
    if on_a_terminal(console):
        # each line whole, for the terminal to wrap (as `git diff` leaves it): rich cut a line at
        # the terminal's width, so a change past it (`.cuda()` at column 90 of an 80-column
        # terminal) showed `-` and `+` lines alike (nineteenth read)
        syntax = Syntax(lines_printable(text), "diff", theme="ansi_dark", background_color="default", word_wrap=False)
        console.print(syntax, soft_wrap=True)
        return
    # a patch is bytes: the file's own bytes go out as they are, whatever their encoding
    # (rich would drop form feeds and carriage returns); a recording console gets text
    raw = getattr(console.file, "buffer", None)
    text = framed_for_a_log(text)  # a CI log reads no command out of the file's own lines
    if console.record:
        console.out(name(text), end="", highlight=False)
        return
    # written past the console, so a reader that left is the console's to handle (`on_broken_pipe`):
    # where the command writes files (`rewrite --diff --out-dir`) the run goes on without the patch;
    # the BrokenPipeError ended it, no copy written, exit 0 (twenty-ninth read, second wave)
    try:
        if raw is None:  # a text stream: the patch's text as it is (a console would escape CRs)
            console.file.write(name(text))
            console.file.flush()
            return
        console.file.flush()
        raw.write(text.encode("utf-8", "surrogateescape"))
        raw.flush()
    except BrokenPipeError:
        console.on_broken_pipe()


def print_diff(console: Console, result: FileResult | FileReport, path: str | None = None) -> None:
    """The unified diff of one file (highlighted on a terminal, plain text otherwise)."""
    text = result.unified_diff() if isinstance(result, FileReport) else unified_diff(result, path)
    _print_diff_text(console, text)


def print_diffs(console: Console, model: ReportModel) -> None:
    for f in model.changed_files:
        print_diff(console, f)


def _file_line(model: ReportModel, *, wrote: str) -> str:
    c = model.counts
    return (
        f"[bold]Files[/]: {c['scanned']} scanned, {c['changed']} {wrote}, "
        f"{c['unchanged']} unchanged, {c['skipped']} skipped, {c['errors']} failed"
    )


def readiness_line(model: ReportModel) -> str:
    text = model.readiness_text(listed="above")  # (the failed files are printed before it)
    return text.replace("Readiness:", "[bold]Readiness[/]:", 1) if text.startswith("Readiness:") else text


def print_report(console: Console, model: ReportModel, *, wrote: str = "changed", diffs: bool = False) -> None:
    """Summary, per-rule table with advice, per-file and overall readiness (and the diffs)."""
    if diffs:
        print_diffs(console, model)
    console.print(_file_line(model, wrote=wrote))
    for reason, n in model.skipped.items():
        console.print(f"  skipped {n}: {plain(reason)}", soft_wrap=True)
    for err in model.error_files:
        where = f"{err.path}:{err.error_line}" if err.error_line else err.path
        console.print(f"  [red]failed[/] {plain(where)}: {plain(err.reason)}", soft_wrap=True)
    if not model.rules:
        console.print(readiness_line(model))  # with the files not checked, where there are any
        _print_sections(console, model)
        return
    console.print(_rules_table(model))
    _print_rule_advice(console, model)
    if model.files_with_sites:
        console.print(_files_table(model))
    console.print(readiness_line(model))
    tot = model.readiness
    if tot.unapplied and model.kind == "rewrite":
        console.print(
            f"{tot.unapplied} fixes are unsafe and were not applied: "
            "review them with `porter lint`, apply them with `--unsafe-fixes`."
        )
    _print_sections(console, model)


def _rules_table(model: ReportModel) -> Table:
    """Sites by rule, with a total row that matches the readiness figures."""
    table = Table(title="Sites by rule", title_justify="left")
    table.add_column("code", no_wrap=True)
    table.add_column("rule", overflow="fold")
    table.add_column("family", overflow="fold")
    table.add_column("found", justify="right")
    table.add_column(model.ported_label, justify="right")
    table.add_column("unsafe, not applied", justify="right")
    table.add_column("manual", justify="right")
    table.add_column("info (no action)", justify="right")
    for r in model.rules:
        table.add_row(
            plain(r.code),
            plain(r.name),
            plain(r.family),
            str(r.found),
            str(r.rewritten),
            _n(r.unapplied, "yellow"),
            _n(r.manual, "red"),
            str(r.info),
        )
    table.add_section()
    tot = model.readiness
    table.add_row(
        "",
        "total",
        "",
        str(tot.sites + tot.info),
        str(tot.ported),
        _n(tot.unapplied, "yellow"),
        _n(tot.manual, "red"),
        str(tot.info),
    )
    return table


def _print_rule_advice(console: Console, model: ReportModel) -> None:
    """Per rule, what a person has to do (the work left), then the information findings (no action)."""
    manual_rules = [r for r in model.rules if r.manual or r.unapplied]
    if manual_rules:
        console.print("[bold]Left for a person[/] (per rule, with what to do):")
        for r in manual_rules:
            n = r.manual + r.unapplied
            # advice is text (`x[i]`, `[tool.porter]`), never markup
            console.print(
                f"  [bold]{plain(r.code)}[/] {plain(r.name)} — {n} site{'s' if n != 1 else ''}: "
                f"{plain(r.advice or r.summary)}",
                soft_wrap=True,
            )
            console.print(f"    porter explain {r.code}", style="dim", highlight=False, soft_wrap=True)
    for group in INFO:
        info_rules = [r for r in model.rules if r.count(group)]
        if info_rules:
            console.print(f"[bold]{INFO_TITLES[group]}[/] (no action needed, not counted in readiness):")
            for r in info_rules:
                n = r.count(group)
                console.print(
                    f"  [bold]{plain(r.code)}[/] {plain(r.name)} — {n} site{'s' if n != 1 else ''}: {plain(r.summary)}",
                    soft_wrap=True,
                )


def _files_table(model: ReportModel) -> Table:
    """Readiness by file, most work left first (what a lead wants to see), the tail summed in one row."""
    tot = model.readiness
    ft = Table(title="Readiness by file", title_justify="left")
    ft.add_column("file", overflow="fold")
    ft.add_column("sites", justify="right")
    ft.add_column(model.ported_label, justify="right")
    ft.add_column("left", justify="right")
    ft.add_column("readiness", justify="right")
    ordered = sorted(model.files_with_sites, key=lambda f: (-f.readiness.left, f.path))
    for f in ordered[:MAX_FILE_ROWS]:
        rd = f.readiness
        ft.add_row(plain(f.path), str(rd.sites), str(rd.ported), _n(rd.left, "red"), rd.percent())
    if len(ordered) > MAX_FILE_ROWS:
        rest = ordered[MAX_FILE_ROWS:]
        ft.add_row(
            f"… {len(rest)} more files",
            str(sum(f.readiness.sites for f in rest)),
            str(sum(f.readiness.ported for f in rest)),
            str(sum(f.readiness.left for f in rest)),
            "",
        )
    ft.add_section()
    ft.add_row("overall", str(tot.sites), str(tot.ported), _n(tot.left, "red"), tot.percent())
    return ft


def _print_sections(console: Console, model: ReportModel) -> None:
    for sec in model.sections:
        console.print(f"[bold]{plain(sec.title)}[/]")
        if sec.text:
            # (its controls shown: given raw, rich drops a CR, BEL, BS, VT or FF from the text of
            # a section, a run's reasons with the user's exception text; twenty-fifth read)
            console.print(lines_printable(sec.text), highlight=False, markup=False)
        if sec.rows:
            t = Table()
            for c in sec.columns:
                t.add_column(plain(c))
            for row in sec.rows:
                t.add_row(*("" if c is None else plain(c) for c in row))
            console.print(t)


def _n(n: int, colour: str) -> str:
    return f"[{colour}]{n}[/]" if n else "0"
