"""The script a shell word hands to `sh -c`, with where each of its characters is written.

bash's quoting: `'...'` is taken as written; `$'...'` decodes ANSI-C escapes (`\\n`, `\\'`, `\\x41`, `\\101`,
`\\u00e9`, `\\cA`, ...); in `"..."` a `\\` before `$`, `` ` ``, `"`, `\\` or a newline escapes it (a newline: both
go) and any other `\\` stays; unquoted, `\\X` is `X` (a newline: both go). What the outer shell expands (`$V`,
`${...}`, `$(...)`, `` `...` ``) is kept as written, an expansion still to the script's reader. `sh -c 'it'\\''s;
pip install ...'` and `bash -c $'...'` were never read (thirty-sixth read).
"""

from __future__ import annotations

_DOUBLE_ESCAPES = frozenset('$`"\\\n')
_ANSI_C = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ANSI_C.update({c: c for c in "\\'\"?"})
_CLOSING = {"(": ")", "{": "}"}


class _Unread(Exception):
    """A word this reader does not decode (an unterminated quote or expansion)."""


def script_value(raw: str) -> tuple[str, list[int]] | None:
    """(the word's value, the offset in `raw` each character of it is written at); None where it cannot be read."""
    out: list[tuple[str, int]] = []
    try:
        i = 0
        while i < len(raw):
            i = _segment(raw, i, out)
    except (_Unread, RecursionError):  # (`"$("$("$(...`: each quote inside an expansion a call deeper)
        return None
    return "".join(c for c, _ in out), [at for _, at in out]


def _segment(raw: str, i: int, out: list[tuple[str, int]]) -> int:
    """Decode the quoted part, escape or character at `i` into `out`; the offset after it."""
    c = raw[i]
    if c == "'":
        end = _find(raw, "'", i + 1)
        out.extend((raw[k], k) for k in range(i + 1, end))
        return end + 1
    if raw.startswith("$'", i):
        return _ansi_c(raw, i + 2, out)
    if c == '"':
        return _double(raw, i + 1, out)
    if c == "\\":
        if i + 1 >= len(raw):
            raise _Unread
        if raw[i + 1] != "\n":
            out.append((raw[i + 1], i + 1))
        return i + 2
    return _expansion(raw, i, out)


def _find(raw: str, char: str, start: int) -> int:
    end = raw.find(char, start)
    if end < 0:
        raise _Unread
    return end


def _double(raw: str, i: int, out: list[tuple[str, int]]) -> int:
    """A double-quoted string from after its `"`: the offset after its closing `"`."""
    while i < len(raw):
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in _DOUBLE_ESCAPES:
            if raw[i + 1] != "\n":
                out.append((raw[i + 1], i + 1))
            i += 2
        else:
            i = _expansion(raw, i, out)
    raise _Unread


def _expansion(raw: str, i: int, out: list[tuple[str, int]]) -> int:
    """`$(...)`, `${...}` or `` `...` `` at `i` kept as written (a nested quote is the expansion's); any other
    character taken as it is."""
    if raw.startswith(("$(", "${"), i):
        end = _balanced(raw, i + 2, _CLOSING[raw[i + 1]])
    elif raw[i] == "`":
        end = i + 1
        while (end := _find(raw, "`", end)) and raw[end - 1] == "\\":
            end += 1
        end += 1
    else:
        end = i + 1
    out.extend((raw[k], k) for k in range(i, end))
    return end


def _balanced(raw: str, i: int, closing: str) -> int:
    """The offset after the `closing` that ends an expansion opened before `i`, past nested quotes and expansions."""
    depth, opening = 1, "(" if closing == ")" else "{"
    while i < len(raw):
        c = raw[i]
        if c in "'\"" or raw.startswith("$'", i):
            i = _segment(raw, i, [])
            continue
        if c == "\\":
            i += 2
            continue
        depth += (c == opening) - (c == closing)
        i += 1
        if depth == 0:
            return i
    raise _Unread


def _ansi_c(raw: str, i: int, out: list[tuple[str, int]]) -> int:
    """A `$'...'` string from after its `'`: the offset after its closing `'`."""
    while i < len(raw):
        c = raw[i]
        if c == "'":
            return i + 1
        if c != "\\":
            out.append((c, i))
            i += 1
            continue
        value, end = _ansi_c_escape(raw, i + 1)
        out.extend((v, i) for v in value)
        i = end
    raise _Unread


def _ansi_c_escape(raw: str, i: int) -> tuple[str, int]:
    """The characters of the escape whose letter is at `i` and the offset after it (bash's `ansicstr`)."""
    if i >= len(raw):
        raise _Unread
    c = raw[i]
    if c in _ANSI_C:
        return _ANSI_C[c], i + 1
    if c in "01234567":
        digits = _run_of(raw, i, "01234567", 3)
        return chr(int(digits, 8) & 0xFF), i + len(digits)
    limits = {"x": 2, "u": 4, "U": 8}
    if c in limits:
        digits = _run_of(raw, i + 1, "0123456789abcdefABCDEF", limits[c])
        if digits and int(digits, 16) > 0x10FFFF:
            raise _Unread
        return (chr(int(digits, 16)) if digits else "\\" + c), i + 1 + len(digits)
    if c == "c" and i + 1 < len(raw):
        return chr(ord(raw[i + 1]) & 0x1F), i + 2
    return "\\" + c, i + 1


def _run_of(raw: str, i: int, allowed: str, limit: int) -> str:
    end = i
    while end < len(raw) and end - i < limit and raw[end] in allowed:
        end += 1
    return raw[i:end]
