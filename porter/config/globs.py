"""gitignore-style patterns (`.gitignore`, `exclude`, `per-file-ignores`, `--exclude`) that match in
time linear in a path's length per wildcard.

pathspec turns each `*` into `[^/]*` of a Python regex, which backtracks: `*a*a*a*a*b` (a
repository's `.gitignore` or `pyproject.toml` chooses it) against a file name of 250 `a`s tries
every placement of every `*`, O(n^k): 6 s for four wildcards, hours for ten, in porter's own
process before any file is ported. git's own matcher gives up early on such patterns. Here a `*`
followed by more of the same path part matches up to the *first* place where the text after it
matches, and never tries another: `(?>[^/]*?CHUNK)`. That is what glob matching means (a
later placement of CHUNK leaves the rest of the part less room, never more, since the rest
begins with another `*`), so each pattern matches exactly the paths it matched before, but
for one correction: pathspec's `[!a]` also matched a `/`, git's never does (nor does it here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a pattern is read: a run with none never loads it
    import pathspec

_STAR = "[^/]*"
# what pathspec writes around and between path parts (`**`, a directory's tail, the anchors):
# each ends a part's chunk, and is kept as it is
_OPAQUE = (
    "^(?:.+/)?",
    "[^/]+",
    "(?:/.+)?/",
    "(?:(?P<ps_d>/)|$)",
    "(?P<ps_d>/)",
    "(?:/.*)?$",
    "/.*$",
    ".*",
    "^",
    "$",
    "/",
)


def _class_token(regex: str, i: int) -> tuple[str | None, int]:
    """The character class that starts at `regex[i]` (a `[`), as git reads it, and where it ends;
    None where it cannot stay within one path part."""
    j = i + 1
    if j < len(regex) and regex[j] in "^!":
        j += 1
    if j < len(regex) and regex[j] == "]":
        j += 1
    while j < len(regex) and regex[j] != "]":
        j += 2 if regex[j] == "\\" else 1
    if j >= len(regex):
        return None, j
    token = regex[i : j + 1]
    if token == "[^/]":  # `?`
        return token, j + 1
    if token.startswith("[^"):
        return "[^/" + token[2:], j + 1  # as in git, `[!a]` is one character of a part, never a `/`
    if "/" in token:
        return None, j + 1  # a class that names `/`: not within one part
    return token, j + 1


def _tokens(regex: str) -> list[str] | None:
    """`regex` as pathspec writes a pattern: stars, classes, escapes, literal characters and its
    fixed pieces (`_OPAQUE`); None where it holds anything else (then left as it is)."""
    out: list[str] = []
    i = 0
    token: str | None
    while i < len(regex):
        fixed = next((o for o in (_STAR, *_OPAQUE) if regex.startswith(o, i)), None)
        if fixed is not None:
            token, i = fixed, i + len(fixed)
        elif regex[i] == "[":
            token, i = _class_token(regex, i)
        elif regex[i] == "\\":
            token, i = (regex[i : i + 2] if i + 1 < len(regex) else None), i + 2
        elif regex[i] in "()|.+?*{}$^":
            return None
        else:
            token, i = regex[i], i + 1
        if token is None:
            return None
        out.append(token)
    return out


def _linear(regex: str) -> str:
    """`regex` with each `[^/]*CHUNK` that another `*` of the same part follows made atomic and
    lazy: `(?>[^/]*?CHUNK)`."""
    tokens = _tokens(regex)
    if tokens is None:
        return regex
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] != _STAR:
            out.append(tokens[i])
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and tokens[j] != _STAR and tokens[j] not in _OPAQUE:
            j += 1
        chunk = "".join(tokens[i + 1 : j])
        if chunk and j < len(tokens) and tokens[j] == _STAR:
            out.append(f"(?>[^/]*?{chunk})")
        else:
            out.append(_STAR + chunk)
        i = j
    return "".join(out)


# the longest pattern read. pathspec translates a pattern in time quadratic in its length (a
# 400,000-character `.gitignore` line: 11 s of a lint before any file; a 3-million-character
# `per-file-ignores` pattern ran past four minutes; seventeenth read), and a path is at most
# PATH_MAX (4,096) bytes: a longer pattern is a config error, and a longer `.gitignore` line is
# passed over (what it could name, it does not hide: a lint sees more, never less, but for a
# negation of that length)
MAX_PATTERN = 4096


def spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """pathspec's GitIgnoreSpec of `lines`, each pattern's regex made linear (`_linear`); a line
    longer than `MAX_PATTERN` is passed over."""
    import pathspec

    built = pathspec.GitIgnoreSpec.from_lines(line for line in lines if len(line) <= MAX_PATTERN)
    for pattern in built.patterns:
        regex = getattr(pattern, "regex", None)
        if isinstance(regex, re.Pattern):
            new = _linear(regex.pattern)
            if new != regex.pattern:
                pattern.regex = re.compile(new, regex.flags)
    return built


__all__ = ["spec"]
