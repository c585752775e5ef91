"""TOML documents with the place of each string: tomllib's values, and where each string is.

tomllib (the standard library's reader) gives values without places, and the style-keeping
editors (tomlkit) rewrite through their own model; an edit that changes only a string's
characters needs the string's span. So strings are found here by TOML's lexical rules (basic
"...", literal '...', their triple-quoted forms, `#` comments outside them), each decoded by
tomllib itself, and matched to the values tomllib read, in document order.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from porter.files.errors import Unreadable


@dataclass(frozen=True)
class StringToken:
    start: int  # the opening quote
    end: int  # after the closing quote
    inner_start: int  # the first character of the value
    raw: str  # the characters between the quotes
    literal: bool  # '...' (no escapes)

    @property
    def plain(self) -> bool:
        """Its characters are its value (no escape sequence): an offset in the value is one in the file."""
        return self.literal or "\\" not in self.raw


def load(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise Unreadable(f"not valid TOML: {exc}", line) from None


def strings(text: str) -> list[StringToken]:
    """Every string literal of the document, in order (keys included)."""
    out: list[StringToken] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            nl = text.find("\n", i)
            i = n if nl == -1 else nl
            continue
        if c not in "\"'":
            i += 1
            continue
        triple = text.startswith(c * 3, i)
        quote = c * 3 if triple else c
        j = i + len(quote)
        k = j
        while True:
            k = text.find(quote, k)
            if k == -1:
                return out  # unterminated: tomllib has said so already
            if c == '"' and _escaped(text, j, k):
                k += 1
                continue
            break
        if triple:  # up to two quotes may end the content: `""""a"""" ` is `"a"` plus quotes
            while text.startswith(c, k + 3):
                k += 1
        out.append(StringToken(i, k + len(quote), j, text[j:k], c == "'"))
        i = k + len(quote)
    return out


def _escaped(text: str, start: int, at: int) -> bool:
    """Whether the quote at `at` is escaped (an odd run of backslashes before it)."""
    run = 0
    while at - run - 1 >= start and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def value(token: StringToken, text: str) -> str:
    if token.plain and not text.startswith(('"""', "'''"), token.start):
        return token.raw
    try:
        got = tomllib.loads("x = " + text[token.start : token.end])["x"]
    except tomllib.TOMLDecodeError:
        return token.raw
    return got if isinstance(got, str) else token.raw


# a key's part: bare or quoted (`pytorch-cuda`, `"torch"`)
_KEY_PART = r"""(?:"[^"\\\n]*"|'[^'\n]*'|[A-Za-z0-9_-]+)"""
_DOTTED = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
# a line that sets a key, dotted or not (`pytorch-cuda = ...`, `dependencies.pytorch-cuda = ...`), and a table's
# header (`[tool.pixi.dependencies.pytorch]`)
_KEY_LINE = re.compile(rf"^[ \t]*({_DOTTED})[ \t]*=", re.MULTILINE)
_HEADER_LINE = re.compile(rf"^[ \t]*\[\[?[ \t]*({_DOTTED})[ \t]*\]", re.MULTILINE)
_ONE_PART = re.compile(_KEY_PART)


class Locator:
    """Finds the string token of each value asked for, in document order: the first token
    with that value not handed out yet."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = strings(text)
        # each value's tokens not handed out yet, in document order (made on the first `find`:
        # a scan of every token per value asked for made a TOML file of 100,000 strings
        # quadratic, past the per-file limit)
        self._by_value: dict[str, list[int]] | None = None
        self._key_lines: dict[str, list[tuple[int, int]]] | None = None  # a key: where its lines' values are
        self._entry_from: dict[tuple[str, str], int] = {}  # (key, value): its first entry that may hold one free

    def find(self, wanted: str, after: int = 0, before: int | None = None) -> StringToken | None:
        if self._by_value is None:
            self._by_value = {}
            for i, token in enumerate(self.tokens):
                self._by_value.setdefault(value(token, self.text), []).append(i)
        free = self._by_value.get(wanted)
        if not free:
            return None
        k = bisect_left(free, after, key=lambda i: self.tokens[i].start)
        if k == len(free) or (before is not None and self.tokens[free[k]].start >= before):
            return None
        return self.tokens[free.pop(k)]

    def find_in_entry(self, key: str, wanted: str) -> StringToken | None:
        """The token of `wanted` in the first entry of `key` (`_key_entries`) that holds one not handed out yet,
        else as `find`: a table's value asked for by its key, where the tables are read in another order
        than the document's (pixi's `"*"` under `[tool.pixi.dependencies]`, read after its PyPI table,
        took the PyPI lines' `"*"`: `pytorch-cuda`'s DEP005 was shown on `requests = "*"`)."""
        if self._key_lines is None:
            self._key_lines = _key_entries(self.text)
        entries = self._key_lines.get(key, [])
        # (an entry with no free `wanted` never gets one again: each (key, value) walks its entries once, not
        # from the first at each call, which was quadratic in 8,000 features' `pytorch-cuda = "*"`)
        first = self._entry_from.get((key, wanted), 0)
        for i in range(first, len(entries)):
            token = self.find(wanted, *entries[i])
            if token is not None:
                self._entry_from[(key, wanted)] = i
                return token
        self._entry_from[(key, wanted)] = len(entries)
        return self.find(wanted)


def _key_entries(text: str) -> dict[str, list[tuple[int, int]]]:
    """Each key's entries, in document order, as spans: a line setting a key (up to the next key's line or
    header), under each part of a dotted key (`dependencies.pytorch-cuda = "*"`: `pytorch-cuda`'s too, whose
    `"*"` went to the first free one, another key's), and a header's table under its last part (up to the
    next header)."""
    marks = sorted(
        [(m.start(), m.end(), m.group(1), False) for m in _KEY_LINE.finditer(text)]
        + [(m.start(), m.end(), m.group(1), True) for m in _HEADER_LINE.finditer(text)]
    )
    next_mark, next_header = [len(text)] * len(marks), [len(text)] * len(marks)  # (a walk back, not a scan each)
    for i in range(len(marks) - 2, -1, -1):
        next_mark[i] = marks[i + 1][0]
        next_header[i] = marks[i + 1][0] if marks[i + 1][3] else next_header[i + 1]
    out: dict[str, list[tuple[int, int]]] = {}
    for i, (_, end, key, header) in enumerate(marks):
        parts = [p.strip("\"'") for p in _ONE_PART.findall(key)]
        for name in dict.fromkeys(parts[-1:] if header else parts):
            out.setdefault(name, []).append((end, next_header[i] if header else next_mark[i]))
    return out


def alone_on_line(text: str, token: StringToken) -> tuple[int, int] | None:
    """The span of the token's whole line (with its line break) when the line holds only the
    token, a comma after it, and a comment: an array item porter may remove; else None."""
    start = text.rfind("\n", 0, token.start) + 1
    if text[start : token.start].strip():
        return None
    nl = text.find("\n", token.end)
    end = len(text) if nl == -1 else nl
    rest = text[token.end : end].strip()
    if rest.startswith(","):
        rest = rest[1:].strip()
    if rest and not rest.startswith("#"):
        return None
    return start, (end + 1 if nl != -1 else end)
