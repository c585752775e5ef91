"""setup.py: Python, ported as Python, and the requirement strings it hands to `setup()`.

The Python goes through the codemods like any other file. The string literals of the
`install_requires`, `setup_requires`, `tests_require` and `extras_require` arguments of a call
to `setup` (or of module-level lists they name) are read with `ast` and checked like any
requirement; they are reported, not edited (the Python port owns the file's text).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Mapping

from porter.config.settings import Settings
from porter.files.deps import requirement
from porter.files.deps.target_packages import missing_lines, reported
from porter.files.facts import canonical
from porter.files.sites import Site, Text, result
from porter.core.findings import FileResult, FileStatus, Finding
from porter.analysis.prefilter import admits
from porter.core.suppressions import scan

_ARGS = ("install_requires", "setup_requires", "tests_require", "extras_require")


def _strings(node: ast.AST, assigned: Mapping[str, ast.AST]) -> list[ast.Constant]:
    """The string constants of a requirement argument: a list, a dict of lists, a name bound
    to one at module level."""
    if isinstance(node, ast.Name) and node.id in assigned:
        node = assigned[node.id]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(node, ast.Dict):
        return [s for v in node.values if v is not None for s in _strings(v, assigned)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    return []


def requirement_sites(text: Text, settings: Settings) -> list[Site]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the Python port reports the file
    assigned = {
        t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    ctx = requirement.Context(settings.target, None)
    out: list[Site] = []
    names: list[str] = []
    torch: tuple[int, int, str] | None = None
    for const in _setup_requirements(tree, assigned):
        value = str(const.value)
        place, length = _place(text, const, value)
        out.extend(requirement.sites(value, place, ctx))
        parsed = requirement.parse(value)
        if parsed is not None:
            names.append(parsed.name)
            if canonical(parsed.name) == "torch" and torch is None:
                torch = (place.start, place.start + length, value)
    if torch is not None:
        lines = missing_lines(requirement.parse(torch[2]), names, [], settings.target, pip_options=False)
        if lines is not None:
            out.append(reported(torch, lines, settings.target, f"to `extras_require` under `{settings.target!r}`"))
    return out


def _setup_requirements(tree: ast.Module, assigned: Mapping[str, ast.AST]) -> list[ast.Constant]:
    """The string constants of every `setup(...)` call's requirement arguments (`_ARGS`), in the
    order `ast.walk` meets them; an argument that is a name assigned at the top is read through it."""
    out: list[ast.Constant] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called != "setup":
            continue
        for kw in node.keywords:
            if kw.arg in _ARGS:
                out.extend(_strings(kw.value, assigned))
    return out


def _place(text: Text, const: ast.Constant, value: str) -> tuple[requirement.Place, int]:
    """Where a requirement string's sites go, and its length there: inside the quotes where the
    characters are the value's, else (escapes, a prefix) the whole literal. Python's strings are
    reported, never edited (`editable=False`)."""
    start = text.offset(const.lineno, _column(text, const))
    raw = text.text[start : text.offset(const.end_lineno or const.lineno, _end_column(text, const))]
    quote = len(raw) - len(raw.lstrip("rRbBuU"))
    inner = start + quote + (3 if raw[quote : quote + 3] in ('"""', "'''") else 1)
    plain = text.text[inner : inner + len(value)] == value
    place = requirement.Place(inner if plain else start, None, editable=False)
    return place, len(value) if plain else len(raw)


def _line(text: Text, lineno: int) -> str:
    """The text of line `lineno` up to its `\n` (found from the line's start: slicing the rest
    of the file and splitting it made a setup.py of 50,000 strings quadratic, 55 s)."""
    start = text.line_starts[lineno - 1]
    end = text.text.find("\n", start)
    return text.text[start : end if end >= 0 else len(text.text)]


def _column(text: Text, node: ast.expr) -> int:
    """`col_offset` is in UTF-8 bytes: the column in characters."""
    line = _line(text, node.lineno)
    return len(line.encode("utf-8", "surrogateescape")[: node.col_offset].decode("utf-8", "surrogateescape"))


def _end_column(text: Text, node: ast.expr) -> int:
    lineno = node.end_lineno or node.lineno
    line = _line(text, lineno)
    end = node.end_col_offset if node.end_col_offset is not None else len(line)
    return len(line.encode("utf-8", "surrogateescape")[:end].decode("utf-8", "surrogateescape"))


def port(source: bytes, path: str, settings: Settings) -> FileResult:
    from porter.codemods.apply import port_python

    python = port_python(source, path, settings)
    if (
        python.status is FileStatus.ERROR
        or python.status is FileStatus.SKIPPED
        and python.reason == "`# porter: ignore-file`"
    ):
        return python
    if not admits(source, settings, "setup-py"):
        return python
    text = Text(source)
    deps = result(text, requirement_sites(text, settings), path, settings, suppressions=scan(source))
    if not deps.findings and not deps.suppressed:
        return python
    merged: list[Finding] = sorted([*python.findings, *deps.findings], key=Finding.sort_key)
    if python.status is FileStatus.SKIPPED:
        python.status, python.reason = FileStatus.UNCHANGED, None
    python.findings = merged
    python.suppressed = [*python.suppressed, *deps.suppressed]
    python.original_source = source
    return python
