"""JSON with the place of every value: the standard library's decoder, piece by piece.

`json` gives values without places. Here the document is walked by JSON's grammar (RFC 8259),
and every string is decoded by the standard library's own `json.decoder.scanstring`, every
number and literal by `json.loads`: what a value is stays the library's call; only where it is
is worked out here. Notebooks (porter.files.notebooks) read their cells with it too.

What is JSON is what Python's `json.loads` reads from the file's bytes: a leading UTF-8 byte
order mark (read as `utf-8-sig`), and `NaN`, `Infinity` and `-Infinity` (which `json.dumps`
writes for such floats: a notebook's metadata or a config written by Python may hold them).
The mark stays part of the text: every place is an offset into the text as it was read.
"""

from __future__ import annotations

import json
import re
import json.decoder

from porter.files.readers.tree import Value
from porter.files.errors import Unreadable

scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # (public, documented in its module, not in the stubs)

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": float("nan"),
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}
BOM = "\ufeff"
MAX_DEPTH = 500


def parse(text: str) -> Value:
    """The document's root value; Unreadable when it is not JSON."""
    try:
        value, end = _value(text, _skip(text, 1 if text.startswith(BOM) else 0), 0)
    except (ValueError, IndexError) as exc:
        raise Unreadable(f"not valid JSON: {exc}") from None
    if _skip(text, end) != len(text):
        raise Unreadable(f"not valid JSON: extra data at character {end}")
    return value


def _skip(text: str, at: int) -> int:
    m = _WS.match(text, at)
    return m.end() if m else at


def _value(text: str, at: int, depth: int) -> tuple[Value, int]:
    # (one frame per level of nesting, so that MAX_DEPTH, not Python's recursion limit, is what
    # a deep document meets: the pieces of an object and an array are read by leaf functions)
    if depth > MAX_DEPTH:
        raise ValueError("nested too deep")
    c = text[at]
    if c == "{":
        node = Value("map", at, at)
        at = _skip(text, at + 1)
        closed = text[at] == "}"
        while not closed:
            key, key_span, at = _key(text, at)
            child, at = _value(text, at, depth + 1)
            node.entries.append((key, key_span, child))
            at, closed = _after_item(text, at, "}")
        node.end = at + 1
        return node, at + 1
    if c == "[":
        node = Value("seq", at, at)
        at = _skip(text, at + 1)
        closed = text[at] == "]"
        while not closed:
            child, at = _value(text, at, depth + 1)
            node.items.append(child)
            at, closed = _after_item(text, at, "]")
        node.end = at + 1
        return node, at + 1
    return _scalar(text, at)


def _key(text: str, at: int) -> tuple[str, tuple[int, int], int]:
    """An object member's key at `at`: its value, its span (quotes included), and where the
    member's value starts (after the `:`)."""
    if text[at] != '"':
        raise ValueError(f"expected a key at character {at}")
    key, key_end = scanstring(text, at + 1)
    key_span = (at, key_end)
    at = _skip(text, key_end)
    if text[at] != ":":
        raise ValueError(f"expected ':' at character {at}")
    return key, key_span, _skip(text, at + 1)


def _after_item(text: str, at: int, close: str) -> tuple[int, bool]:
    """After an object's member or an array's item: where the next one starts and False (a
    `,`), or where the closing `close` is and True."""
    at = _skip(text, at)
    if text[at] == ",":
        return _skip(text, at + 1), False
    if text[at] == close:
        return at, True
    raise ValueError(f"expected ',' or '{close}' at character {at}")


def _scalar(text: str, at: int) -> tuple[Value, int]:
    """A string, a literal (`true`, `null`, `NaN` ...) or a number at `at`, and where it ends."""
    if text[at] == '"':
        s, end = scanstring(text, at + 1)
        inner = (at + 1, end - 1) if text[at + 1 : end - 1] == s else None  # its characters are its value
        return Value("scalar", at, end, scalar=s, inner=inner), end
    for word, literal in _LITERALS.items():
        if text.startswith(word, at):
            return Value("scalar", at, at + len(word), scalar=literal, inner=(at, at + len(word))), at + len(word)
    m = _NUMBER.match(text, at)
    if m is None:
        raise ValueError(f"unexpected {text[at]!r} at character {at}")
    return Value("scalar", at, m.end(), scalar=json.loads(m.group(0)), inner=(at, m.end())), m.end()
