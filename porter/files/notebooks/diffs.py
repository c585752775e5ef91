"""A notebook's diff, readable per cell: each hunk header names the cell it changes.

The diff is the file's own (a patch `git apply` takes: only the changed lines of a cell's
`source` array differ); the cell's number goes after the second `@@`, where a patch carries a
section name (git puts a function's name there), so a reviewer reads `@@ -40,7 +40,7 @@ cell 3`.
"""

from __future__ import annotations

import re

from porter.files.errors import Unreadable
from porter.files.notebooks.layout import read
from porter.files.sites import Text

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def label_hunks(diff: str, original: str) -> str:
    """`diff` (of the notebook whose text was `original`) with each hunk named by its cell."""
    try:
        nb = read(original)
    except (Unreadable, ValueError, IndexError):
        return diff
    text = Text(original.encode("utf-8", "surrogateescape"))
    ranges = []
    for cell in nb.cells:
        if cell.source is not None:
            ranges.append((text.position(cell.source.start).line, text.position(cell.source.end).line, cell.number))
    # cut where the diff was made (each line ends at LF): str.splitlines also cuts at U+2028,
    # \x85 or a form feed inside a line, and the count of lines to the change went wrong
    lines = _LINE.findall(diff)
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        old = int(m.group(1))
        j = i + 1
        while j < len(lines) and not lines[j].startswith(("-", "+", "@@")):
            old += 1
            j += 1
        number = next((n for a, b, n in ranges if a <= old <= b), None)
        header = lines[i].rstrip("\n")
        out.append(f"{header} cell {number}\n" if number is not None and header.endswith("@@") else lines[i])
        i += 1
    return "".join(out)
