"""TOML configs (any *.toml but pyproject.toml): tomllib's values, placed in the text.

Each key is found after the one before it (and after its table's header), each string value by
porter.files.readers.tomlpos; a number or a boolean is where the key's `=` leads. A key porter
cannot place is still checked, and reported at its table.
"""

from __future__ import annotations

import re
from typing import Any

from porter.config.settings import Settings
from porter.files.configs import checks
from porter.files.readers.tomlpos import Locator, load
from porter.files.readers.tree import Value
from porter.files.sites import Site, Text

_SCALAR = re.compile(r"\s*=\s*([^\s#,\]}]+)")


class _Placer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.strings = Locator(text)
        self.cursor = 0

    def table(self, path: tuple[str, ...]) -> None:
        # TOML's whitespace is spaces and tabs: `^\s*` crossed blank lines and was quadratic on
        # a file of them (each line's start scanned every line after it: seventeenth read)
        dotted = r"[ \t]*\.[ \t]*".join(re.escape(p) for p in path)
        m = re.compile(r"^[ \t]*\[\[?[ \t]*" + dotted + r"[ \t]*\]\]?", re.MULTILINE).search(self.text, self.cursor)
        if m is not None:
            self.cursor = m.end()

    def key(self, key: str) -> tuple[int, int] | None:
        """The span from `key` (its quote, when quoted) to the `=` after it: the first place
        from the cursor where it stands as a key (at a line's start, or after `{` or `,`).
        Found with `str.find` and checked around (a regex compiled per key cost 0.5 ms a key:
        a TOML file of 100,000 keys took the whole per-file limit)."""
        text, n = self.text, len(key)
        at = text.find(key, self.cursor) if key else -1
        while at != -1:
            start, end = at, at + n
            if 0 < at and end < len(text) and text[at - 1] in "\"'" and text[end] == text[at - 1]:
                start, end = at - 1, end + 1
            before = start
            while before > 0 and text[before - 1].isspace():
                before -= 1
            keyed = before == 0 or text[before - 1] in "{," or "\n" in text[before:start]
            eq = end
            while eq < len(text) and text[eq].isspace():
                eq += 1
            if keyed and eq < len(text) and text[eq] == "=":
                self.cursor = eq + 1
                return start, eq
            at = text.find(key, at + 1)
        return None

    def build(self, data: Any, path: tuple[str, ...], at: int) -> Value:
        if isinstance(data, dict):
            node = Value("map", at, at + 1)
            if path:
                self.table(path)
            for k, v in data.items():
                span = self.key(k) if not isinstance(v, dict) else None
                child_at = span[1] if span else self.cursor
                node.entries.append((k, span or (at, at + 1), self.build(v, (*path, k), child_at)))
            return node
        if isinstance(data, list):
            return Value("seq", at, at + 1, items=[self.build(v, path, at) for v in data])
        if isinstance(data, str):
            token = self.strings.find(data, after=at)
            if token is not None:
                inner = (token.inner_start, token.inner_start + len(token.raw)) if token.plain else None
                return Value("scalar", token.start, token.end, scalar=data, inner=inner)
            return Value("scalar", at, at + 1, scalar=data)
        m = _SCALAR.match(self.text, at)
        if m is not None and not isinstance(data, (dict, list)):
            return Value("scalar", m.start(1), m.end(1), scalar=data, inner=(m.start(1), m.end(1)))
        return Value("scalar", at, at + 1, scalar=data if isinstance(data, (bool, int, float)) else str(data))


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    doc = load(text.text)
    root = _Placer(text.text).build(doc, (), 0)
    return checks.sites(root, text.text, settings.target, json_like=True)
