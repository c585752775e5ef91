"""Inline suppressions: `# porter: ignore[CODE,...]`, `# noqa: CODE`, `# porter: ignore-file`.

A plain `# noqa` without codes is left to the tools it was written for (flake8, ruff): it
does not silence porter, since a blanket noqa for a line length would hide a CUDA call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PRAGMA = re.compile(
    # a code list holds at least one code; a bracket that holds none, or more than codes, makes
    # no suppression (it was read as the blanket `# porter: ignore`: a typo silenced its line)
    rb"#\s*(?:porter:\s*ignore(?P<file>-file)?(?:\[(?P<codes>[ ,]*[A-Za-z0-9_][A-Za-z0-9_, ]*)\]|(?![\w-]|\s*\[))"
    rb"|noqa:\s*(?P<noqa>[A-Za-z0-9_]+(?:[ ,]+[A-Za-z0-9_]+)*))"
)
_QUICK = (b"porter:", b"noqa:")
ALL = "*"


@dataclass(frozen=True)
class Comment:
    """One suppression comment as written (for reporting the ones that silence nothing)."""

    line: int
    column: int  # 0-based, where the `#` is
    end_column: int
    kind: str  # "porter" (`# porter: ignore…`) or "noqa"
    codes: tuple[str, ...]  # as written, upper-cased; () = every code
    file_level: bool = False


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # line -> codes or {"*"}
    ignore_file: bool = False
    file_codes: set[str] = field(default_factory=set)
    comments: list[Comment] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.by_line) or self.ignore_file

    def may_silence(self, code: str) -> bool:
        """Whether a comment on some line could silence `code` (`matching` on some lines): when
        none could, the caller need not work out where its node is."""
        return any(pattern == ALL or code.startswith(pattern) for found in self.by_line.values() for pattern in found)

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
            ordered = tuple(dict.fromkeys(c.decode().upper() for c in re.split(rb"[ ,]+", raw or b"") if c))
            codes = set(ordered)
            result.comments.append(
                Comment(
                    line=lineno,
                    column=len(line[: m.start()].decode("utf-8", "replace")),
                    end_column=len(line[: m.end()].decode("utf-8", "replace")),
                    kind="noqa" if m.group("noqa") is not None else "porter",
                    codes=ordered,
                    file_level=bool(m.group("file")),
                )
            )
            if m.group("file"):
                if codes:
                    result.file_codes |= codes
                else:
                    result.ignore_file = True
                continue
            result.by_line.setdefault(lineno, set()).update(codes or {ALL})
    return result
