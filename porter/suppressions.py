"""Inline suppressions: `# porter: ignore[CODE,...]`, `# noqa: CODE`, `# porter: ignore-file`.

A plain `# noqa` without codes is left to the tools it was written for (flake8, ruff): it
does not silence porter, since a blanket noqa for a line length would hide a CUDA call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PRAGMA = re.compile(
    rb"#\s*(?:porter:\s*ignore(?P<file>-file)?(?:\[(?P<codes>[A-Za-z0-9_, ]*)\])?"
    rb"|noqa:\s*(?P<noqa>[A-Za-z0-9_]+(?:[ ,]+[A-Za-z0-9_]+)*))"
)
_QUICK = (b"porter:", b"noqa:")
ALL = "*"


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # line -> codes or {"*"}
    ignore_file: bool = False
    file_codes: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.by_line) or self.ignore_file

    def matching(self, code: str, lines: tuple[int, ...]) -> tuple[int, str] | None:
        """The (line, pattern) that silences `code` on any of `lines`, if one does."""
        for line in lines:
            for pattern in self.by_line.get(line, ()):
                if pattern == ALL or code.startswith(pattern):
                    return line, pattern
        return None


def scan(source: bytes) -> Suppressions:
    result = Suppressions()
    if not any(q in source for q in _QUICK):
        return result
    for lineno, line in enumerate(source.splitlines(), start=1):
        if b"#" not in line:
            continue
        for m in _PRAGMA.finditer(line):
            raw = m.group("codes") if m.group("noqa") is None else m.group("noqa")
            codes = {c.decode().upper() for c in re.split(rb"[ ,]+", raw or b"") if c}
            if m.group("file"):
                if codes:
                    result.file_codes |= codes
                else:
                    result.ignore_file = True
                continue
            result.by_line.setdefault(lineno, set()).update(codes or {ALL})
    return result
