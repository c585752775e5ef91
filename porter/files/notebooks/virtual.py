"""A notebook's code cells as one Python module, and back.

Jupyter runs the cells of a notebook in one namespace, so they are ported as one module: an
import in the first cell resolves a name in the fifth, and the codemods add an import once. The
cells are joined with a marker statement between them (`__porter_cell__(k)`, an unknown call no
codemod touches, so it survives every rewrite as a statement of its own), and each line IPython
reads itself is replaced by a placeholder statement at its indentation (`__porter_masked__(i)`).
After the port the text is cut at the markers and the placeholders are put back. A cell that
does not parse as Python (after its escapes are masked) stays out of the module.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

from porter.core.reading import lines_of
from porter.files.notebooks.layout import Cell
from porter.files.notebooks.magics import PYTHON_CELLS, SHELL_CELLS, Line, cell_magic, classify, continued

MARK = "__porter_cell__"
MASK = "__porter_masked__"
TIMED = "__porter_timed__"
_MARK_LINE = re.compile(rf"^{MARK}\((\d+)\)\r?\n?$")
_MASK_LINE = re.compile(rf"^(\s*){MASK}\((\d+)\)\r?\n?$")
_TIMED_TAG = re.compile(rf"  # {TIMED}\((\d+)\)(?=\r?\n?$)")


@dataclass
class Plan:
    """One code cell: its lines, how each is read, and what the module holds for each."""

    cell: Cell
    lines: list[str]  # the cell's source, line by line (line breaks kept)
    reading: list[Line]
    python: list[str]  # per line: what the module holds (the line, a placeholder, a statement)
    shell_body: bool = False  # a `%%bash` cell: lines after the first are shell
    parses: bool = True
    shift: dict[int, int] = field(default_factory=dict)  # timed line -> characters of its magic (`%time `)

    @property
    def text(self) -> str:
        return "".join(self.lines)


def plan(cell: Cell) -> Plan:
    # cut where Python cuts (str.splitlines also cuts at a form feed or U+2028: a U+2028 in a
    # comment made the cell "not Python", a line ending `\f\n` gained a blank line after it)
    lines = lines_of(cell.text)
    reading = [classify(line) for line in lines]
    magic = cell_magic(lines[0]) if lines else None
    p = Plan(cell, lines, reading, [])
    if magic is not None and magic not in PYTHON_CELLS:
        p.reading = [Line("other")] + [Line("shell" if magic in SHELL_CELLS else "other") for _ in lines[1:]]
        p.shell_body = magic in SHELL_CELLS
    elif magic is not None:
        p.reading[0] = Line("other")
    else:
        p.reading = continued(lines, reading)
    # a cell magic's body is no Python (IPython passes it whole to the magic: `run_cell_magic`): its placeholders
    # are not indented as its lines are (an indented line of a `%%bash` loop or a `%%writefile`d function made the
    # cell "not parse as Python", NB001); a continued line's placeholder takes its command's indent
    whole = magic is not None and magic not in PYTHON_CELLS
    indent = ""
    for i, (line, how) in enumerate(zip(lines, p.reading)):
        if how.kind != "continued" and not whole:
            indent = line[: len(line) - len(line.lstrip())]
        body = line.rstrip("\r\n")
        end = line[len(body) :] or "\n"  # the line's own end (a lone CR stays one)
        if how.kind == "python":
            p.python.append(body + end)
        elif how.kind == "timed":
            # the statement, tagged with a comment that stays on its line through a rewrite
            stmt = line[how.code_at :].rstrip("\r\n")
            p.python.append(f"{indent}{stmt}  # {TIMED}({i}){end}")
            p.shift[i] = how.code_at - len(indent)
        else:
            p.python.append(f"{indent}{MASK}({i})\n")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse("".join(p.python))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        p.parses = False
    return p


@dataclass
class Module:
    text: str
    # per line of the module: (index of the plan, line of its cell) or None (a marker)
    origin: list[tuple[int, int] | None]
    plans: list[Plan]


def join(plans: list[Plan]) -> Module:
    """The module of the cells that parse (plans that do not are left out)."""
    parts: list[str] = []
    origin: list[tuple[int, int] | None] = []
    first = True
    for k, p in enumerate(plans):
        if not p.parses:
            continue
        if not first:
            parts.append(f"{MARK}({k})\n")
            origin.append(None)
        first = False
        for j, line in enumerate(p.python):
            parts.append(line)
            origin.append((k, j))
    return Module("".join(parts), origin, plans)


def split(module: Module, new: str) -> dict[int, list[str]] | None:
    """The new lines of each plan's module part (placeholders still in), or None when the
    markers did not come through the port in order (the port is then not used)."""
    wanted = [k for k, p in enumerate(module.plans) if p.parses]
    if not wanted:
        return {}
    out: dict[int, list[str]] = {k: [] for k in wanted}
    current = wanted[0]
    seen = [current]
    for line in lines_of(new):
        m = _MARK_LINE.match(line)
        if m is not None:
            current = int(m.group(1))
            if current not in out:
                return None
            seen.append(current)
            continue
        out[current].append(line)
    return out if seen == wanted else None


def restore(p: Plan, new_lines: list[str], magic_lines: list[str]) -> str | None:
    """The cell's new text: the ported Python, its IPython lines (as the magic checks left
    them) back in place; None when a placeholder or a tag did not come through."""
    out: list[str] = []
    used: set[int] = set()
    for line in new_lines:
        m = _MASK_LINE.match(line)
        if m is not None:
            i = int(m.group(2))
            if i >= len(magic_lines) or i in used:
                return None
            used.add(i)
            out.append(magic_lines[i])
            continue
        t = _TIMED_TAG.search(line)
        if t is not None:
            i = int(t.group(1))
            if i in used or i not in p.shift:
                return None
            used.add(i)
            original = p.lines[i]
            indent = original[: len(original) - len(original.lstrip())]
            head = original[len(indent) : len(indent) + p.shift[i]]
            line = line[: t.start()] + line[t.end() :]
            out.append(line[: len(indent)] + head + line[len(indent) :])
            continue
        out.append(line)
    expected = {i for i, how in enumerate(p.reading) if how.kind != "python"}
    if used != expected:
        return None
    text = "".join(out)
    if not p.text.endswith("\n") and text.endswith("\n"):
        text = text[:-1]
    return text
