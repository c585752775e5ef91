"""IPython's escapes in code cells: shell (`!cmd`, `%%bash`), `%env`, `%pip`, and other magics.

A line IPython reads itself is no Python: it is kept out of the codemods (the Python of the cell
sees an inert placeholder in its place) and read as what it is: a shell command by the shell
porter, `%env NAME=value` by the environment-variable checks, `%pip install` as a pip command.
`%time stmt` and `%timeit stmt` run Python: the statement goes through the codemods.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from porter.files.shell import env as envvars
from porter.files.sites import Site

# cell magics whose body is Python, and those whose body is shell
PYTHON_CELLS = frozenset({"time", "timeit", "capture", "prun", "debug"})
SHELL_CELLS = frozenset({"bash", "sh", "script", "system"})
_ASSIGNED = re.compile(r"\s*[A-Za-z_][\w.]*\s*=\s*(!|%sx\s|%system\s)")
_ENV = re.compile(r"%(?:env|set_env)\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*|\s+)(.*?)\s*$")
_TIMED = re.compile(r"(%time(?:it)?)\s+(?!-)")


@dataclass(frozen=True)
class Line:
    """How one line of a code cell is read: `kind` is "python", "shell" (from `code_at`),
    "pip" (`%pip`, from `code_at`), "env", "timed" (Python after `code_at`), "other", or "continued" (a line the
    escaped line before it continues: `continued`)."""

    kind: str
    code_at: int = 0  # where the shell command or the Python statement starts in the line


def cell_magic(first_line: str) -> str | None:
    """The name of a cell magic (`bash` for `%%bash`), or None."""
    m = re.match(r"\s*%%([A-Za-z_]\w*)", first_line)
    return m.group(1) if m else None


def classify(line: str) -> Line:
    stripped = line.lstrip()
    indent = len(line) - len(stripped)
    if stripped.startswith("!!"):
        return Line("shell", indent + 2)
    if stripped.startswith("!"):
        return Line("shell", indent + 1)
    m = _ASSIGNED.match(line)
    if m is not None:
        return Line("shell", m.end())
    if stripped.startswith(("%pip ", "%conda ", "%mamba ")):
        return Line("pip", indent + 1)
    if stripped.startswith(("%sx ", "%system ")):
        return Line("shell", indent + len(stripped.split(None, 1)[0]) + 1)
    if stripped.startswith(("%env ", "%set_env ")):
        return Line("env")
    t = _TIMED.match(stripped)
    if t is not None:
        return Line("timed", indent + t.end())
    if stripped.startswith("%") or stripped.endswith("?") and not stripped.startswith("#"):
        return Line("other")
    return Line("python")


def continued(lines: list[str], reading: list[Line]) -> list[Line]:
    """`reading` with the lines an escaped line continues marked "continued": IPython joins a `!cmd`, `%pip ...` or
    other `%` line that ends in a `\\` and a line feed with the next, however many `\\` come before it (IPython 9's
    `find_end_of_continued_line`: `!pip install --index-url \\` then `  URL torch` is one command), so the next line
    is no Python of the cell (it was read as Python: the cell "did not parse", its Python was not ported, and the
    command's options were never read)."""
    out = list(reading)
    for i in range(1, len(lines)):
        if out[i - 1].kind not in ("python", "timed") and lines[i - 1].endswith("\\\n"):
            out[i] = Line("continued")
    return out


def env_sites(line: str, start: int, text: str, target: str) -> list[Site]:
    """`%env NAME=value` / `%set_env NAME value`: an assignment of `NAME` (offsets: `start` is
    where the line starts in `text`)."""
    m = _ENV.match(line.strip())
    if m is None:
        return []
    lead = len(line) - len(line.lstrip())
    name_span = (start + lead + m.start(1), start + lead + m.end(1))
    value_span = (start + lead + m.start(2), start + lead + m.end(2)) if m.group(2) else None
    value = m.group(2) or None
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return envvars.assignment(text, target, m.group(1), name_span, value, value_span)
