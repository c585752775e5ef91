"""Notebooks (.ipynb): the code cells through the Python codemods, the IPython lines through the
shell and environment checks, everything else of the file left as it is.

1. layout.read: the cells and where each `source` string is in the file;
2. virtual.plan/join: the code cells as one module, IPython's lines masked;
3. the module through the Python pipeline (porter.codemods.apply.port_python), each masked line
   through porter.files.shell (per line, in the cell's characters);
4. findings moved to the file's lines and columns, named by cell and line in the cell;
5. each changed cell's `source` written back in the file's style (layout.source_text).
Outputs, metadata, markdown and the JSON's layout are never rewritten: a byte outside a
changed cell's `source` stays as it was.
"""

from __future__ import annotations

import json
from dataclasses import replace

from porter.config.settings import Settings
from porter.files.notebooks import layout, magics, virtual
from porter.files.shell.parse import available
from porter.files.shell.script import shell_sites
from porter.files.sites import Site, Text, apply, result
from porter.core.findings import FileResult, FileStatus, Finding
from porter.analysis.prefilter import admits
from porter.core.suppressions import scan


def port(source: bytes, path: str, settings: Settings) -> FileResult:
    text = Text(source)
    nb = layout.read(text.text)
    out = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=source)
    plans = [virtual.plan(c) for c in nb.cells if c.kind == "code" and c.parts]
    magic_lines, findings, suppressed, changed = _ipython_lines(text, nb, plans, path, settings)
    try:
        found, hidden, edited, new_cells = _code_cells(text, nb, plans, magic_lines, path, settings)
    except _CellsFailed as exc:
        out.status, out.reason = exc.status, exc.reason
        return out
    findings += found
    suppressed += hidden
    changed |= edited
    for k, p in enumerate(plans):
        if not p.parses:
            findings += _not_python(text, nb, p, path, settings)
        if k not in new_cells and "".join(magic_lines[k]) != p.text:
            new_cells[k] = "".join(magic_lines[k])

    # notebook metadata: a Colab runtime with a GPU
    findings += _metadata(text, nb, path, settings)

    findings.sort(key=Finding.sort_key)
    out.findings, out.suppressed = findings, suppressed
    edits = [
        (p.cell.source.start, p.cell.source.end, layout.source_text(text.text, p.cell, new_cells[k], nb.ascii))
        for k, p in enumerate(plans)
        if k in new_cells and new_cells[k] != p.text and p.cell.source is not None
    ]
    return _written(out, text, edits, changed, settings)


class _CellsFailed(Exception):
    """The code cells' port failed, or was skipped, or its text could not be cut back into the
    cells: the notebook's result is this status and reason, with no findings."""

    def __init__(self, status: FileStatus, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def _ipython_lines(
    text: Text, nb: layout.Notebook, plans: list[virtual.Plan], path: str, settings: Settings
) -> tuple[list[list[str]], list[Finding], list[Finding], bool]:
    """The IPython lines of each cell, line by line (`_magic_lines`): each cell's lines as the
    checks leave them, the findings and the silenced ones in the file's places, and whether a
    line changed."""
    magic_lines: list[list[str]] = []
    findings: list[Finding] = []
    suppressed: list[Finding] = []
    changed = False
    for p in plans:
        lines, found, hidden, edited = _magic_lines(p, path, settings)
        magic_lines.append(lines)
        findings += [
            _moved(f, text, nb, p, f.start.line - 1, f.start.column, f.end.line - 1, f.end.column) for f in found
        ]
        suppressed += [
            _moved(f, text, nb, p, f.start.line - 1, f.start.column, f.end.line - 1, f.end.column) for f in hidden
        ]
        changed |= edited
    return magic_lines, findings, suppressed, changed


def _code_cells(
    text: Text,
    nb: layout.Notebook,
    plans: list[virtual.Plan],
    magic_lines: list[list[str]],
    path: str,
    settings: Settings,
) -> tuple[list[Finding], list[Finding], bool, dict[int, str]]:
    """The Python of the cells, as one module, through the Python port: its findings and the
    silenced ones in the file's places, whether it changed, and each changed cell's new text
    (by its plan's index). _CellsFailed where the port failed or was skipped."""
    module = virtual.join(plans)
    if not module.text or not admits(module.text.encode("utf-8", "surrogateescape"), settings):
        return [], [], False, {}
    from porter.codemods.apply import port_python

    python = port_python(module.text.encode("utf-8", "surrogateescape"), path, replace(settings, flow=None))
    if python.status is FileStatus.ERROR:
        raise _CellsFailed(FileStatus.ERROR, f"code cells: {python.reason}")
    if python.status is FileStatus.SKIPPED:  # larger than porter parses: said, never "no findings"
        raise _CellsFailed(FileStatus.SKIPPED, f"code cells: {python.reason}")
    findings = [_from_module(f, text, nb, module) for f in python.findings]
    suppressed = [_from_module(f, text, nb, module) for f in python.suppressed]
    changed = python.status is FileStatus.CHANGED
    if python.new_source is None:
        return findings, suppressed, changed, {}
    new_module = python.new_source.decode("utf-8", "surrogateescape")
    return findings, suppressed, changed, _cut_back(module, plans, magic_lines, new_module)


def _cut_back(
    module: virtual.Module, plans: list[virtual.Plan], magic_lines: list[list[str]], new_module: str
) -> dict[int, str]:
    """The ported module cut back into cells, each cell's IPython lines put back in: the new
    text of each cell the port changed. _CellsFailed where the module or a cell cannot be."""
    parts = virtual.split(module, new_module)
    if parts is None:
        raise _CellsFailed(
            FileStatus.ERROR,
            "internal error: the port of the code cells could not be cut back into cells; left unchanged",
        )
    new_cells: dict[int, str] = {}
    for k, lines in parts.items():
        new = virtual.restore(plans[k], lines, magic_lines[k])
        if new is None:
            raise _CellsFailed(
                FileStatus.ERROR,
                f"internal error: cell {plans[k].cell.number} could not be put back together; left unchanged",
            )
        new_cells[k] = new
    return new_cells


def _written(
    out: FileResult, text: Text, edits: list[tuple[int, int, str]], changed: bool, settings: Settings
) -> FileResult:
    """`out` with the cells' edits made: CHANGED where a port changed something (no edits where the
    new text was not made), the new bytes when the settings want the source, unless they are no
    JSON (then an ERROR with no findings)."""
    if not edits:
        if changed:
            out.status = FileStatus.CHANGED  # findings only: the new text was not made
        return out
    out.status = FileStatus.CHANGED
    if not settings.want_source:
        return out
    new_text = apply(text.text, edits)
    try:
        json.loads(new_text.removeprefix("\ufeff"))  # (a byte order mark is kept, as every byte outside the cells)
    except ValueError as exc:
        out.status, out.reason, out.findings = (
            FileStatus.ERROR,
            f"internal error: the rewritten notebook is no JSON ({exc}); left unchanged",
            [],
        )
        return out
    out.new_source = text.encode(new_text)
    return out


def _magic_lines(
    p: virtual.Plan, path: str, settings: Settings
) -> tuple[list[str], list[Finding], list[Finding], bool]:
    """Each IPython line of the cell as the shell and environment checks leave it, the findings
    (in the cell's lines and columns), the silenced ones, and whether a line changed."""
    lines = list(p.lines)
    findings: list[Finding] = []
    hidden: list[Finding] = []
    edited = False
    shell_ok = available()
    for i, (line, how) in enumerate(zip(p.lines, p.reading)):
        sites: list[Site] = []
        body = line.rstrip("\r\n")
        if how.kind in ("shell", "pip") and shell_ok:
            # (`%pip install x` is the shell command `pip install x` after its `%`)
            body = _command(p, i)  # (only a command's first line looks ahead: each line is read once)
            sites = shell_sites(body[how.code_at :], how.code_at, body, settings.target)
        elif how.kind == "env":
            body = _command(p, i)
            sites = magics.env_sites(body, 0, body, settings.target)
        if not sites:
            continue
        if body != line.rstrip("\r\n"):  # a command the next lines continue: said, not edited (one line is)
            sites = [replace(s, replacement=None) for s in sites]
        line_text = Text(body.encode("utf-8", "surrogateescape"))
        got = result(line_text, sites, path, settings, suppressions=scan(line_text.source))
        findings += [_on_line(f, i) for f in got.findings]
        hidden += [_on_line(f, i) for f in got.suppressed]
        if got.status is FileStatus.CHANGED:
            edited = True
            if got.new_source is not None:
                lines[i] = got.new_source.decode("utf-8", "surrogateescape") + line[len(body) :]
    return lines, findings, hidden, edited


def _command(p: virtual.Plan, i: int) -> str:
    """Line `i` of the cell without its end, with the lines that continue it (`magics.continued`): the command IPython
    runs, its `\\`-newlines left for the shell to read."""
    last = i + 1
    while last < len(p.reading) and p.reading[last].kind == "continued":
        last += 1
    return "".join(p.lines[i:last]).rstrip("\r\n")


def _on_line(f: Finding, i: int) -> Finding:
    """`f`, found in a command that starts at line `i` of the cell (0-based), in the cell's lines."""
    return replace(f, start=replace(f.start, line=i + f.start.line), end=replace(f.end, line=i + f.end.line))


def _cell_offset(p: virtual.Plan, line: int, column: int) -> int:
    """The character offset in the cell's text of (0-based line, column)."""
    line = max(0, min(line, len(p.lines) - 1))
    return sum(len(x) for x in p.lines[:line]) + min(column, len(p.lines[line].rstrip("\r\n")) if p.lines else 0)


def _moved(
    f: Finding, text: Text, nb: layout.Notebook, p: virtual.Plan, line: int, col: int, end_line: int, end_col: int
) -> Finding:
    """A finding in the cell's lines and columns, moved to the file's, named by cell and line."""
    start = text.position(layout.raw_offset(text.text, p.cell, _cell_offset(p, line, col), nb.ascii))
    end = text.position(layout.raw_offset(text.text, p.cell, _cell_offset(p, end_line, end_col), nb.ascii))
    one_string = start.line == end.line
    return replace(
        f,
        start=start,
        end=end,
        message=f"{f.message} (cell {p.cell.number}, line {line + 1})",
        # a fix stays a fix the file can take where it lies within one JSON string
        replacement=json.dumps(f.replacement, ensure_ascii=nb.ascii)[1:-1]
        if f.replacement is not None and one_string
        else None,
        original=json.dumps(f.original, ensure_ascii=nb.ascii)[1:-1] if f.original is not None and one_string else None,
    )


def _from_module(f: Finding, text: Text, nb: layout.Notebook, module: virtual.Module) -> Finding:
    def where(line: int, col: int) -> tuple[int, int, int]:
        index = max(0, min(line - 1, len(module.origin) - 1))
        while module.origin[index] is None and index + 1 < len(module.origin):
            index += 1  # a marker line: the cell after it
        k, j = module.origin[index] or (0, 0)
        p = module.plans[k]
        shift = p.shift.get(j, 0)
        indent = len(p.lines[j]) - len(p.lines[j].lstrip()) if j < len(p.lines) else 0
        return k, j, col + shift if col >= indent else col

    k, j, col = where(f.start.line, f.start.column)
    k2, j2, col2 = where(f.end.line, f.end.column)
    if k2 != k:
        j2, col2 = j, col
    return _moved(f, text, nb, module.plans[k], j, col, j2, col2)


def _not_python(text: Text, nb: layout.Notebook, p: virtual.Plan, path: str, settings: Settings) -> list[Finding]:
    at = layout.raw_offset(text.text, p.cell, 0, nb.ascii)
    site = Site(
        "NB001",
        at,
        at,
        None,
        message="the cell does not parse as Python (its IPython lines aside): its Python is not ported"
        f" (cell {p.cell.number}, line 1)",
    )
    return result(text, [site], path, settings).findings


def _metadata(text: Text, nb: layout.Notebook, path: str, settings: Settings) -> list[Finding]:
    meta = nb.root.get("metadata") if nb.root.kind == "map" else None
    if meta is None:
        return []
    sites: list[Site] = []
    accelerator = meta.get("accelerator")
    if accelerator is not None and accelerator.text == "GPU":
        sites.append(
            Site("NB002", accelerator.start, accelerator.end, None, message="the notebook asks Colab for a GPU runtime")
        )
    colab = meta.get("colab")
    gpu = colab.get("gpuType") if colab is not None and colab.kind == "map" else None
    if gpu is not None:
        sites.append(Site("NB002", gpu.start, gpu.end, None, message=f"the notebook asks Colab for a {gpu.text} GPU"))
    return result(text, sites, path, settings).findings
