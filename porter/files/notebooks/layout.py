"""A notebook's JSON as written: its cells, where each cell's source is, and how it is written.

The notebook is read with porter.files.readers.jsonpos, so every string of a cell's `source`
has its place in the file. A changed cell gets its `source` written back in the file's own
style (one string per line, the same indentation, the same escaping); nothing else of the file
(outputs, metadata, markdown, key order, indentation) is touched.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from porter.core.reading import lines_of
from porter.files.readers.jsonpos import parse
from porter.files.readers.tree import Value
from porter.files.errors import Unreadable


@dataclass
class Cell:
    number: int  # 1-based, among all cells (as Jupyter lists them)
    kind: str  # "code", "markdown", "raw"
    source: Value | None  # the `source` value: an array of strings, or one string
    parts: list[Value]  # its strings, in order

    @property
    def text(self) -> str:
        return "".join(str(p.scalar) for p in self.parts)


@dataclass
class Notebook:
    root: Value
    cells: list[Cell]
    ascii: bool  # the file escapes non-ASCII characters (`\u00e9`): json.dumps' ensure_ascii


def read(text: str) -> Notebook:
    root = parse(text)
    cells_value = root.get("cells") if root.kind == "map" else None
    if cells_value is None or cells_value.kind != "seq":
        raise Unreadable("not a notebook: no list of cells")
    cells: list[Cell] = []
    escaped = False
    for i, cell in enumerate(cells_value.items, start=1):
        kind_value = cell.get("cell_type") if cell.kind == "map" else None
        kind = kind_value.scalar if kind_value is not None and isinstance(kind_value.scalar, str) else ""
        source = cell.get("source") if cell.kind == "map" else None
        parts: list[Value] = []
        if cell.kind != "map":
            raise Unreadable(f"not a notebook: cell {i} is not an object")
        if source is not None and source.kind == "seq":
            parts = [p for p in source.items if isinstance(p.scalar, str)]
            if len(parts) != len(source.items):
                raise Unreadable(f"not a notebook: the source of cell {i} is not a list of strings")
        elif source is not None and isinstance(source.scalar, str):
            parts = [source]
        elif source is not None:  # a number, null, an object: what Jupyter refuses to open
            raise Unreadable(f"not a notebook: the source of cell {i} is not text")
        for p in parts:
            raw = text[p.start + 1 : p.end - 1]
            if "\\u" in raw and any(ord(ch) > 127 for ch in str(p.scalar)):
                escaped = True
        cells.append(Cell(i, kind, source, parts))
    return Notebook(root, cells, escaped)


def raw_offset(text: str, cell: Cell, offset: int, ascii: bool) -> int:
    """The file offset of character `offset` of the cell's source text."""
    at = 0
    for part in cell.parts:
        value = str(part.scalar)
        if offset <= at + len(value) or part is cell.parts[-1]:
            k = min(offset - at, len(value))
            return part.start + 1 + len(json.dumps(value[:k], ensure_ascii=ascii)[1:-1])
        at += len(value)
    return cell.source.start if cell.source is not None else 0


def _cut_like(new: str, old_values: list[str]) -> list[str]:
    """`new` cut into source items the way the cell's old items are cut: where Python ends
    lines (`lines_of`: what a hand or a tool writing LF lines makes) or where str.splitlines
    does (Jupyter's nbformat, which also cuts at a form feed, \\x85 or U+2028), whichever keeps
    more of the old items; on a tie, Jupyter's. Cut always by str.splitlines, a line porter did
    not change that holds a U+2028 came back as three items."""
    jupyter = new.splitlines(keepends=True)
    python = lines_of(new)
    if python == jupyter:
        return jupyter

    def kept(lines: list[str]) -> int:
        matcher = difflib.SequenceMatcher(None, old_values, lines, autojunk=False)
        return sum(block.size for block in matcher.get_matching_blocks())

    return python if kept(python) > kept(jupyter) else jupyter


def source_text(text: str, cell: Cell, new: str, ascii: bool) -> str:
    """The cell's `source` value written for `new`, in the style of the one it replaces; lines
    that did not change keep the characters they were written with."""
    assert cell.source is not None
    if cell.source.kind != "seq":  # one string
        return json.dumps(new, ensure_ascii=ascii)
    items = cell.source.items
    old_values = [str(p.scalar) for p in items]
    old_raw = [text[p.start : p.end] for p in items]
    lines = _cut_like(new, old_values)
    if items:
        prefix = text[cell.source.start + 1 : items[0].start]
        sep = text[items[0].end : items[1].start] if len(items) > 1 else "," + (prefix or " ")
        suffix = text[items[-1].end : cell.source.end - 1]
    else:
        prefix, sep, suffix = "", ", ", ""
    encoded: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_values, lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            encoded.extend(old_raw[i1:i2])
        else:
            encoded.extend(json.dumps(line, ensure_ascii=ascii) for line in lines[j1:j2])
    if not encoded:
        return "[]"
    return "[" + prefix + sep.join(encoded) + suffix + "]"
