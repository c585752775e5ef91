"""The keys a git configuration file sets, read as git reads them (`config.c`, `git_parse_source`),
so that a file that merely holds the word `include` or `excludesFile` (in a value, a comment, a
user's e-mail) need not make each repository ask git (`discover._words_named`).

Hand-written: no library in porter's dependencies reads git's syntax (Python's `configparser`
reads another: no `;`/`#` comment after a value, no `\\` at a line's end joining the next, no
key on a section header's line). Only what git accepts is read; anything git rejects (a bad
line, an unknown escape, a quote left open) is None, and git is asked, as before.
"""

from __future__ import annotations

import re

_SPACE = b" \t\n\r"  # (git's `isspace`: ASCII, not a vertical tab or form feed)
_BOM = b"\xef\xbb\xbf"


def _alpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _keychar(c: int) -> bool:
    return _alpha(c) or 48 <= c <= 57 or c == 45  # (alnum or `-`)


class _Reader:
    """git's reading of one file, character by character (`get_next_char`: CR LF is LF, the end
    reads as a last LF)."""

    def __init__(self, data: bytes) -> None:
        self.data = data[len(_BOM) :] if data.startswith(_BOM) else data
        self.at = 0
        self.eof = False

    def next(self) -> int:
        if self.at >= len(self.data):
            self.eof = True
            return 10
        c = self.data[self.at]
        self.at += 1
        if c == 13 and self.data[self.at : self.at + 1] == b"\n":
            self.at += 1
            return 10
        return c


def keys(data: bytes) -> list[str] | None:
    """The keys (`section[.subsection].name`, section and name in lower case) the configuration
    `data` sets, in order, as `git config -f FILE --no-includes --list --name-only` lists them;
    None where git would refuse the file."""
    reader, section = _Reader(data), ""
    out: list[str] = []
    comment = False
    while True:
        c = reader.next()
        if c == 10:
            if reader.eof:
                return out
            comment = False
        elif comment or c in _SPACE:
            continue
        elif c in b"#;":
            comment = True
        elif c == 91:  # `[`
            header = _section(reader)
            if not header:
                return None
            section = header
        elif not _alpha(c):
            return None
        else:
            name = _key(reader, c)
            if name is None:
                return None
            out.append(f"{section}.{name}" if section else name)  # (git reads a key before any section)


def _section(reader: _Reader) -> str | None:
    """A section header after its `[` (`get_base_var`): `[name]`, `[name "subsection"]` (case
    kept), `[name.sub]` (lower case)."""
    name = bytearray()
    while True:
        c = reader.next()
        if reader.eof:
            return None
        if c == 93:  # `]`
            return name.decode("latin-1") or None
        if c == 10:
            return None
        if c in _SPACE:
            return _subsection(reader, name.decode("latin-1"))
        if not _keychar(c) and c != 46:
            return None
        name.append(c | 32 if _alpha(c) else c)


def _subsection(reader: _Reader, name: str) -> str | None:
    """`"subsection"]` after a section's name and a space (`get_extended_base_var`)."""
    c = reader.next()
    while c in b" \t\r":
        c = reader.next()
    if c != 34 or not name:  # `"`
        return None
    sub = bytearray()
    while True:
        c = reader.next()
        if c == 10:
            return None
        if c == 34:
            break
        if c == 92:  # `\\`: the next character as it is
            c = reader.next()
            if c == 10:
                return None
        sub.append(c)
    if reader.next() != 93:
        return None
    return f"{name}.{sub.decode('utf-8', 'surrogateescape')}"


def _key(reader: _Reader, first: int) -> str | None:
    """A variable's name (lower case) from its first letter, its value read and checked
    (`get_value`); None where git refuses the line."""
    name = bytearray([first | 32])
    c = reader.next()
    while not reader.eof and _keychar(c):
        name.append(c | 32 if _alpha(c) else c)
        c = reader.next()
    while c in b" \t":
        c = reader.next()
    if c != 10 and (c != 61 or not _value(reader)):  # (`=`)
        return None
    return name.decode("latin-1")


def _value(reader: _Reader) -> bool:
    """Read a value after its `=` up to its line's end (`parse_value`): `"` quotes, `;`/`#` out
    of quotes start a comment, `\\` escapes `n t b \\ "` or joins the next line; False where
    git refuses it (another escape, a quote open at the line's end)."""
    quote = comment = False
    while True:
        c = reader.next()
        if c == 10:
            return not quote
        if comment or (c in b" \t\r" and not quote):
            continue
        if c in b";#" and not quote:
            comment = True
        elif c == 92:
            if reader.next() not in b'\ntbn\\"':
                return False
        elif c == 34:
            quote = not quote


# a number as git reads one for a boolean (`git_parse_int`: `strtoimax` in base 0, which skips
# leading white space and reads `0x` hex and a leading-0 octal, then a unit k, m or g)
_NUMBER = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgG]?)")
_UNIT = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}
_INT_MAX = 2**31 - 1


def boolean(value: str | None) -> bool | None:
    """A boolean setting's value (as `git config --get` gives it; None: a key without `=`) as git
    reads it (`git_parse_maybe_bool`): `true`/`yes`/`on`, `false`/`no`/`off`/empty in any case,
    else an int of C's `int` range other than 0; None where git refuses it (`fatal: bad boolean
    config value`). Python's `int(word, 0)` read `0k` and `0G` (git: 0, false) as not numbers,
    so true, and `1_0`, `0b1` or `maybe` (git stops) as true in silence."""
    if value is None:
        return True
    word = value.lower()
    if word in ("true", "yes", "on"):
        return True
    if word in ("", "false", "no", "off"):
        return False
    number = _NUMBER.fullmatch(value.lstrip(" \t\n\v\f\r"))
    if number is None:
        return None
    digits, unit = number.groups()
    base = 16 if digits[:2] in ("0x", "0X") else 8 if digits.startswith("0") else 10
    magnitude = int(digits[2:] if base == 16 else digits, base)
    return None if magnitude > _INT_MAX // _UNIT[unit.lower()] else magnitude != 0
