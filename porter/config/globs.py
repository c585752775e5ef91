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

import heapq
import re
import warnings
from operator import attrgetter
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TypeVar

_T = TypeVar("_T")
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


_FIXED = (_STAR, *_OPAQUE)
_FIXED_FIRST = frozenset(piece[0] for piece in _FIXED)


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
        # as in git, `[!a]` is one character of a part, never a `/`; the `/` goes last, since a
        # `]` first in the class is one of its characters (`[!]]`: `[^/]]` wanted a `]` after it)
        return token[:-1] + "/]", j + 1
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
        # (a fixed piece is looked for only where one starts: a long list's lines are tokenized)
        fixed = next((o for o in _FIXED if regex.startswith(o, i)), None) if regex[i] in _FIXED_FIRST else None
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
# PATH_MAX (4,096) bytes: a longer pattern is a config error, and a `.gitignore` line that
# needs more characters of a path than that is passed over (it names no path), as git reads it:
# without its trailing spaces, and with its runs of `*` squeezed (`_squeezed`)
MAX_PATTERN = 4096


# the regexes pathspec writes for a pattern without wildcards (`name`, `name/`, `/a/b`, `a/**`) or
# with one leading `*` (`*.log`), split into (how the pattern is anchored, its literal text, how
# it ends); such a pattern is looked up in a table by each of a path's parts instead of matched
# one by one (a `.gitignore` of 200,000 such lines cost a 50-file lint 57 s: every pattern was
# matched against every file and folder; seventeenth read)
_HEADS = (("^(?:.+/)?[^/]*", "suffix"), ("^(?:.+/)?", "part"), ("^", "path"))
_TAILS = (("(?:(?P<ps_d>/)|$)", "any"), ("(?P<ps_d>/)", "dir"), ("/", "tree"))
_LITERAL = re.compile(r"(?:[^.^$*+?{}\[\]|()\\]|\\.)+")
_ESCAPE = re.compile(r"\\(.)")


def _split_literal(regex: str) -> tuple[str, str, str] | None:
    """(anchor, literal, tail) of a regex pathspec wrote for a pattern `_HEADS` and `_TAILS`
    describe, or None."""
    head = next(((h, kind) for h, kind in _HEADS if regex.startswith(h)), None)
    tail = next(((t, kind) for t, kind in _TAILS if regex.endswith(t)), None)
    if head is None or tail is None or len(regex) <= len(head[0]) + len(tail[0]):
        return None
    middle = regex[len(head[0]) : len(regex) - len(tail[0])]
    if not _LITERAL.fullmatch(middle):
        return None
    literal = _ESCAPE.sub(r"\1", middle)
    if head[1] != "path" and "/" in literal:
        return None
    if tail[1] == "tree" and head[1] != "path":
        return None
    return head[1], literal, tail[1]


class _Wild:
    """A pattern with wildcards, read (`_read`) and compiled only when a path holds its text
    (`_text`): a `.gitignore` of 250,000 such lines cost 28 CPU s to compile before any
    file. `include`: what a leading `!` says; the line's own reading has the last word."""

    __slots__ = ("index", "number", "include", "line", "fold", "_state", "_regex", "_table")

    def __init__(self, index: int, number: int, include: bool, line: str, fold: bool) -> None:
        self.index, self.number, self.include, self.line, self.fold = index, number, include, line, fold
        self._state = 0  # 0: not read yet; 1: read; -1: the line holds no pattern (as `Spec` passes it over)
        self._regex: re.Pattern[str] | None = None
        self._table: Spec | None = None  # where git reads the line as a literal after all (`a\\ b`)

    def _resolve(self) -> bool:
        if self._state == 0:
            self._state = -1
            try:
                read = _read(self.line, self.fold)
            except (ValueError, re.error):  # GitIgnorePatternError is a ValueError
                read = None
            if read is not None:
                self._state = 1
                self.include, split, regex = read
                if regex is not None:
                    self._regex = _folded(regex) if self.fold else regex
                else:
                    assert split is not None
                    anchor, literal, tail = split
                    self._table = Spec((), fold=self.fold)
                    self._table._add_literal(0, 0, True, (anchor, _lower(literal) if self.fold else literal, tail))
        return self._state == 1

    def priority(self, path: str, given: int) -> int | None:
        """2 where the pattern matches `path` itself (3 where that is the folder a folder's path
        names), 1 where it matches a folder above it
        (among those past the first `given`), else None. `path`: as `Spec._path` makes it."""
        if not self._resolve():
            return None
        if self._table is not None:
            return self._table.verdict_rank(path, given)
        assert self._regex is not None
        match = self._regex.search(path)
        if match is None:
            return None
        if path.endswith("/") and not match.groupdict().get("ps_d"):
            # (a folder's path is matched with its `/`: `^a/`, `a/**`'s regex, matched `a/`, so
            # `a` then `!a/**` kept the folder `a`, which git leaves out; the folder is `a`)
            match = self._regex.search(path, 0, len(path) - 1)
            if match is None:
                return None
        if match.groupdict().get("ps_d"):
            at = match.start("ps_d")
            if path.count("/", 0, at) < given:
                match = self._below(path, given)
                if match is None:
                    return None
                if not match.groupdict().get("ps_d"):
                    return 2
                at = match.start("ps_d")
            return 3 if at == len(path) - 1 else 1  # (3: the folder the path names: `Spec.verdict`)
        return 2

    def _below(self, path: str, given: int) -> re.Match[str] | None:
        """A match of the pattern that starts past the first `given` folders of `path`, where
        its first named one of them: an anchored pattern's match is the deepest folder it
        names, but an unanchored one's (`*/`, `**/`: `(?P<ps_d>/)`) is the first (`*/` then
        `!src/` left `src/sub/` in, which `*/` leaves out for git)."""
        assert self._regex is not None
        if self._regex.pattern.startswith("^"):
            return None
        at = -1
        for _ in range(given + 1):
            at = path.find("/", at + 1)
            if at < 0:
                return None
        return self._regex.search(path, at)


_KEY = 6  # the most characters of a pattern's text that key it (`_text`)


def _text(line: str) -> str | None:
    """The longest run of plain characters (no wildcard, bracket expression or `/`) in a
    gitignore line (trimmed, without its `!`), which every path the line matches holds, at
    most `_KEY` of them; None where it has none, a `.`/`..` part, or a bracket git does not
    close (the line matches nothing)."""
    if any(part in (".", "..") for part in line.split("/")):
        return None
    runs: list[str] = []
    run: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in "/*?[":
            runs.append("".join(run))
            run = []
            if c == "[":
                i = _closing(line, i)
                if i < 0:
                    return None
        elif c == "\\":
            if i + 1 >= n or line[i + 1] == "/":
                return None
            i += 1
            run.append(line[i])
        else:
            run.append(c)
        i += 1
    runs.append("".join(run))
    best = max(runs, key=len)
    return best[:_KEY] or None


def _closing(line: str, i: int) -> int:
    """Where the bracket expression at `line[i]` ends (its `]`), as `_bracket` reads it, or -1.
    One that names a `/` is read so too (`_rooted`), and the line is keyed by its text: such
    lines were each tried on every path (10,000 of them: 0.52 CPU s for 500 files, six times
    as long as brackets without a `/`; twenty-fourth read)."""
    end = _bracket_end(line, i)
    if end >= 0:
        return end
    cls, after = _bracket(line, i)
    return -1 if cls is None else after - 1


def _squeezed(line: str) -> str | None:
    """A gitignore line (trimmed: `_trim`) with each run of three or more unescaped `*` made
    `**` and each `**/` that follows another at a part's start dropped, which match what they
    matched (git's wildmatch reads any run of two or more as `**`, and `**/` may match no
    folder), and a last `**/` that starts a part made `*/`; None where what is left needs
    more than `MAX_PATTERN` characters of a path (one for each character but a `*`, a `/`
    after a `**` that starts a part, and a bracket expression's others). A line longer than
    any path was passed over as naming none, but
    git trims trailing spaces and matches `***...` as one `**`: `a.py` followed by 5,000
    spaces, or 5,000 `*` then `b.py`, left out a file for git and none for porter."""
    if len(line) <= MAX_PATTERN and "***" not in line and "**/**" not in line and not line.endswith("**/"):
        return line  # (nothing to squeeze: most lines)
    out: list[str] = []
    need = 0
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "*":
            j = i
            while j < n and line[j] == "*":
                j += 1
            starts = i == 0 or line[i - 1] == "/" or (i == 1 and line[0] == "!")
            if j - i >= 2 and starts and line[j : j + 1] == "/":
                if "".join(out[-2:]) == "**/" and (len(out) == 2 or out[-3] in ("/", "!")):
                    i = j + 1  # (a second `**/` in a row)
                    continue
                out += ["**", "/"]
                i = j + 1
                continue
            out.append("**" if j - i >= 2 else "*")
            i = j
            continue
        if c == "\\" and i + 1 < n:
            out.append(line[i : i + 2])
            i += 2
        elif c == "[" and (end := _bracket_end(line, i)) >= 0:
            out.append(line[i : end + 1])
            i = end + 1
        else:
            out.append(c)
            i += 1
        need += 1
    if "".join(out[-2:]) == "**/" and (len(out) == 2 or out[-3] in ("/", "!")):
        # a last `**/` is any folder below the one before it (`a/**/`: `a/b/`, `a/b/c/`, never
        # `a/` itself, as git reads it; `/**/` and `**/`: every folder): pathspec read it as that
        # folder, and hid `a/e.py`; then as `a/*/`, and `!a/**/` after `a/**` kept no folder
        # past the first (the twenty-second read)
        head = "".join(out[:-2])
        out = [head[:1] if head in ("!", "!/") else "", "*/"] if head in ("", "!", "/", "!/") else [head, "**/*/"]
    return None if need > MAX_PATTERN + 2 else "".join(out)


def _bracket_end(line: str, i: int) -> int:
    """Where the bracket expression at `line[i]` (a `[`) ends (its `]`), as git reads it
    (a `]` first, or after `!`/`^`, is a member; `[:name:]` a class); -1 where it does not
    end within its part."""
    n = len(line)
    i += 1
    if i < n and line[i] in "!^":
        i += 1
    if i < n and line[i] == "]":
        i += 1
    while i < n and line[i] != "]":
        if line[i] == "/":
            return -1
        if line[i] == "[" and line[i + 1 : i + 2] == ":":
            end = line.find(":]", i + 2)
            if end < 0:
                return -1
            i = end + 2
            continue
        i += 2 if line[i] == "\\" else 1
    return i if i < n else -1


class Spec:
    """gitignore-style patterns, matched as pathspec's GitIgnoreSpec matches them (the last
    pattern that matches a path as a file decides, else the last that matches a folder above
    it), in time that does not grow with the number of patterns a path's text cannot match:
    literal patterns are found in tables by a path's parts (`_split_literal`); the others by
    a run of their plain text (`_text`) the path must hold, then as regexes tried from the
    last one back (those with no such text always). A line pathspec cannot read (`!`, a lone
    `\\`, `[z-a]`) is passed over, as git passes it over (it ended every lint in an internal
    error)."""

    def __init__(self, lines: Iterable[str], *, fold: bool = False) -> None:
        from pathspec.util import normalize_file

        self._normalize = normalize_file  # (imported once here, not on every `match_file`)
        # `fold`: letters match either case, as git matches in a repository whose
        # `core.ignoreCase` is true (ASCII letters only, as git's `tolower`)
        self._fold = fold
        # (anchor, tail) -> literal -> (index, include) of the last pattern of that text
        self._tables: dict[tuple[str, str], dict[str, tuple[int, bool]]] = {}
        # (anchor, tail) -> literal -> the line numbers of every pattern of that text (`hits`)
        self._every: dict[tuple[str, str], dict[str, list[int]]] = {}
        self._suffix_lengths: dict[str, set[int]] = {"any": set(), "dir": set()}
        # the patterns with wildcards: by their text (`_text`, in ASCII lower case where
        # `fold`), in order; those without, last first; every one, in order (`hits`)
        self._keyed: dict[str, list[_Wild]] = {}
        self._key_lengths: set[int] = set()
        self._unkeyed: list[_Wild] = []
        self._wild: list[_Wild] = []
        index = 0
        for number, line in enumerate(lines):
            raw = _squeezed(_slashes(_trim(_bytes(line))))
            if raw is None:
                continue
            trimmed = raw
            body = trimmed[1:] if trimmed.startswith("!") else trimmed
            if body and not trimmed.startswith("#") and _plain(body) is None:
                wild = _Wild(index, number, not trimmed.startswith("!"), raw, fold)
                text = _text(body)
                if text is None:
                    self._unkeyed.append(wild)
                else:
                    self._keyed.setdefault(_lower(text) if fold else text, []).append(wild)
                    self._key_lengths.add(len(text))
                self._wild.append(wild)
                index += 1
                continue
            try:
                read = _read(raw)
            except (ValueError, re.error):  # GitIgnorePatternError is a ValueError
                continue
            if read is None:
                continue
            include, split, _ = read
            assert split is not None  # (a line `_plain` reads)
            self._add_literal(index, number, include, (split[0], _lower(split[1]), split[2]) if fold else split)
            index += 1
        self._unkeyed.reverse()
        self._lengths = sorted(self._key_lengths)
        self._key_search, prefixed = _key_search(self._keyed)
        self._with_prefixes = {text: _grouped(wilds, fold) for text, wilds in prefixed.items()}
        last_first = _last_of_each(self._keyed, self._wild)
        self._last_first = {text: _grouped(wilds[::-1], fold) for text, wilds in last_first.items()}
        self._textless = _grouped(_last_of_each({"": self._unkeyed}, self._wild)[""], fold)

    def _add_literal(self, index: int, number: int, include: bool, split: tuple[str, str, str]) -> None:
        anchor, literal, tail = split
        self._tables.setdefault((anchor, tail), {})[literal] = (index, include)
        if include:
            self._every.setdefault((anchor, tail), {}).setdefault(literal, []).append(number)
        if anchor == "suffix":
            self._suffix_lengths[tail].add(len(literal))

    def _candidates(self, path: str) -> Iterable[_Wild]:
        """The patterns with wildcards that may match `path`, last first: those whose text
        it holds, and those without one; of identical lines, the last (an earlier one never
        decides: the last that matches does, and they match alike). Each text's patterns are
        kept last first, and merged lazily: `verdict` stops at the first that names the path.
        A `.gitignore` of 250,000 lines sharing one text (`[ab][cd]*.py`, or one line
        250,000 times) sorted them all for each path, and tried every copy (500 files: 33 and
        61 CPU s; twenty-second read). A long run of them is tried in groups (`_Group`)."""
        text = _lower(path) if self._fold else path
        if not self._keyed:
            runs = [self._textless]
        elif self._key_search is not None:
            runs = [self._with_prefixes[t] for t in {m.group(1) for m in self._key_search(text)}]
        else:
            held = {text[i : i + n] for n in self._lengths for i in range(len(text) - n + 1)}
            runs = [self._last_first[t] for t in held if t in self._last_first]
        if self._keyed and self._textless:
            runs.append(self._textless)
        lists = [run.holding(path) if isinstance(run, _Grouped) else run for run in runs]
        if len(lists) < 2:
            return lists[0] if lists else ()
        return _each_once(heapq.merge(*lists, key=_BY_INDEX, reverse=True))

    def match_file(self, path: str) -> bool:
        """Whether the patterns leave `path` out (a folder's path ends in `/`)."""
        return self.verdict(path) is True

    def verdict(self, path: str, given: int = 0) -> bool | None:
        """True where the patterns leave `path` out, False where a negation keeps it, None
        where no pattern matches it (a `.gitignore` of a folder above then decides). `given`:
        how many of the folders `path` begins with no folder pattern leaves it out by: the walk
        tried each folder as it entered it, and a folder given to the run is walked whatever a
        `.gitignore` above it says."""
        path = self._path(path)
        # the last pattern that matches as a file (priority 2), and as a folder above (1)
        best = self._literal_best(path, given)
        for wild in self._candidates(path):
            if wild.index < best[2][0]:
                break
            rank = wild.priority(path, given)
            if rank is None:
                continue
            if wild.index > best[rank][0]:
                best[rank] = (wild.index, wild.include)
            if rank == 2:
                break
        if best[3][0] > max(best[2][0], best[1][0]):
            best[2] = best[3]  # (the last to match, and not below a folder a later one names)
        elif best[3][0] > best[1][0]:
            best[1] = best[3]
        decided = best[2] if best[2][0] >= 0 else best[1]
        return decided[1] if decided[0] >= 0 else None

    def _literal_best(self, path: str, given: int) -> dict[int, tuple[int, bool]]:
        """The last literal pattern that matches `path` as a file (priority 2), as a folder
        above it past the first `given` (1), and as the folder a folder's path names (3): a
        folder's path ends in `/`, and a pattern that names that folder names the path itself
        (its last part), not a folder above it: `!**` then `gen` kept `gen/`, which git leaves
        out (the last pattern that matches it decides)."""
        best = {3: (-1, False), 2: (-1, False), 1: (-1, False)}
        itself = path.count("/") - 1 if path.endswith("/") else -1
        for found, priority, part in self._table_hits(path, self._tables):
            if priority == 1 and part == itself:
                priority = 3
            if found[0] > best[priority][0] and (priority == 2 or part >= given):
                best[priority] = found
        return best

    def verdict_rank(self, path: str, given: int) -> int | None:
        """For a Spec of one literal pattern (`_Wild`): 2 where it names `path`, 3 where it
        names the folder a folder's path names, 1 where a folder above it past the first
        `given`, else None."""
        itself = path.count("/") - 1 if path.endswith("/") else -1
        ranks = {
            p if p == 2 or part != itself else 3
            for _, p, part in self._table_hits(path, self._tables)
            if p == 2 or part >= given
        }
        return next((r for r in (2, 3, 1) if r in ranks), None)

    def hits(self, path: str) -> set[int]:
        """The line numbers of the patterns each of which, alone, leaves `path` out (matches
        it, or a folder above it): `spec((line,)).match_file(path)` for every line at once. A
        negation alone leaves nothing out. The literal ones are found in tables by the path's
        parts, whatever their number; the ones with wildcards are each tried (per-file-ignores
        tried a Spec of its own per pattern: 20,000 patterns cost 55 ms a file; twentieth
        read)."""
        path = self._path(path)
        out = {number for numbers, _, _ in self._table_hits(path, self._every) for number in numbers}
        out.update(w.number for w in self._wild if w.priority(path, 0) is not None and w.include)
        return out

    def _path(self, path: str) -> str:
        """`path` as the patterns are matched against it: its UTF-8 bytes (`_bytes`)."""
        return _bytes(self._normalize(path))

    def _table_hits(
        self, path: str, tables: Mapping[tuple[str, str], Mapping[str, _T]]
    ) -> Iterator[tuple[_T, int, int]]:
        """The literal patterns that match `path`: (what `tables` holds for it (`_tables`:
        (index, include)), priority, the index of the part that matched)."""
        if self._fold:
            path = _lower(path)  # (the tables' keys are lower case then; a regex folds itself)
        parts = path.split("/")
        last = len(parts) - 1
        for (anchor, tail), table in tables.items():
            if anchor == "path":
                keys = [(path, 2, last)] if tail == "any" else []
                # (`a/**` names what `a/` holds, never `a/` itself: `a` then `!a/**` leaves `a/` out)
                inner = last if tail != "tree" or parts[-1] else last - 1
                keys += [("/".join(parts[:k]), 2 if tail == "tree" else 1, k - 1) for k in range(1, inner + 1)]
            else:
                keys = [
                    (key, 2 if k == last else 1, k)
                    for k, part in enumerate(parts)
                    # (`(?:.+/)?` needs a character before a part's `/`)
                    if not (tail == "dir" and k == last) and not (k == 1 and not parts[0])
                    for key in self._keys(anchor, tail, part)
                ]
            for key, priority, part in keys:
                found = table.get(key)
                if found is not None:
                    yield found, priority, part

    def _keys(self, anchor: str, tail: str, part: str) -> list[str]:
        if anchor == "part":
            return [part]
        return [part[len(part) - n :] for n in self._suffix_lengths[tail] if n <= len(part)]


_BY_INDEX = attrgetter("index")
# up to this many pattern texts are found in a path by one regex (`_key_search`); past it (a
# generated `.gitignore`), by a lookup of each of the path's substrings of their lengths
_SEARCHED_KEYS = 256


def _key_search(
    keyed: dict[str, list[_Wild]],
) -> tuple[Callable[[str], Iterator[re.Match[str]]] | None, dict[str, list[_Wild]]]:
    """A search for the texts of `keyed` in a path, one match (the longest text) where any
    starts, and for each text the patterns of every text it starts with (those match there
    too). Looking up each of a path's substrings cost twice the whole walk's matching with a
    common Python `.gitignore` (16 patterns with wildcards: ~240 lookups a path)."""
    if not keyed or len(keyed) > _SEARCHED_KEYS:
        return None, {}
    texts = sorted(keyed, key=len, reverse=True)
    search = re.compile("(?=(" + "|".join(map(re.escape, texts)) + "))").finditer
    every = [w for ws in keyed.values() for w in ws]
    prefixed = {t: [w for other in texts if t.startswith(other) for w in keyed[other]] for t in texts}
    return search, {t: sorted(ws, key=_BY_INDEX, reverse=True) for t, ws in _last_of_each(prefixed, every).items()}


def _last_of_each(lists: dict[str, list[_Wild]], every: list[_Wild]) -> dict[str, list[_Wild]]:
    """`lists` without the patterns an identical later line of `every` (all of them, in
    order) outranks: it matches wherever they do, and the last that matches decides."""
    last = {w.line: w for w in every}
    if len(last) == len(every):
        return lists
    return {key: [w for w in ws if last[w.line] is w] for key, ws in lists.items()}


def _each_once(merged: Iterable[_Wild]) -> Iterator[_Wild]:
    """`merged` (last first) without repeats: a pattern whose text starts another's is in both
    lists (`_key_search`), and is tried once."""
    previous = None
    for wild in merged:
        if wild is not previous:
            yield wild
        previous = wild


# a text's (or the textless) patterns past this many are tried in groups of it (`_Group`)
_GROUP = 256


class _Group:
    """Up to `_GROUP` patterns with wildcards (a slice of one text's, last first), and one regex
    that searches a path wherever any of theirs does (`_union`): a path it does not find skips
    them all. 250,000 different lines sharing a text that no path matched (`[ab][cd]*.py`) were
    each compiled and tried on each path: 500 files cost 64.5 CPU s (git 6.9 s)."""

    __slots__ = ("wilds", "_fold", "_regex", "_built")

    def __init__(self, wilds: list[_Wild], fold: bool) -> None:
        self.wilds, self._fold = wilds, fold
        self._regex: re.Pattern[str] | None = None  # (None once built: a line the regex cannot stand for)
        self._built = False

    def may_match(self, path: str) -> bool:
        """Whether one of the patterns may match `path` (False only where none does)."""
        if not self._built:
            self._regex, self._built = _union([w.line for w in self.wilds], self._fold), True
        return self._regex is None or self._regex.search(path) is not None


def _union(lines: list[str], fold: bool) -> re.Pattern[str] | None:
    """One regex whose search finds a match wherever one of `lines`' regexes (`_read`) does: their
    alternation, with the pieces they all begin and end with written once (`_factored`); None
    where a line is matched otherwise (a literal: `a\\ b`). A line that reads as no pattern
    matches nothing."""
    sources = []
    for line in lines:
        try:
            read = _source(line, fold)
        except (ValueError, re.error):
            continue
        if read is None:
            continue
        if read[2] is None:
            return None
        sources.append(read[2])
    head, middles, tail = _factored(sources) if sources else ("", ["(?!)"], "")
    regex = f"{head}(?:{'|'.join(middles)}){tail}".replace("(?P<ps_d>", "(?:")  # (a name may be used once)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return re.compile(regex, re.DOTALL | (re.IGNORECASE | re.ASCII if fold else 0))


def _factored(sources: list[str]) -> tuple[str, list[str], str]:
    """(the tokens (`_tokens`) every regex of `sources` begins with, what is left of each, the
    tokens each ends with): `H(?:A|B)T` finds a match where `HAT` or `HBT` does, and a generated
    list's lines differ in a few tokens (`[ab][cd]*.py`: compiling the whole of each was 4/5 of
    the group's cost). Sources `_tokens` cannot split are left whole."""
    split = [_tokens(s) for s in sources]
    whole = [t for t, s in zip(split, sources) if t is not None and "".join(t) == s]
    if len(whole) < len(sources):
        return "", sources, ""
    first, shortest = whole[0], min(map(len, whole))
    k = next((i for i in range(shortest) if any(t[i] != first[i] for t in whole)), shortest)
    m = next((i for i in range(shortest - k) if any(t[-1 - i] != first[-1 - i] for t in whole)), shortest - k)
    return "".join(first[:k]), ["".join(t[k : len(t) - m]) for t in whole], "".join(first[len(first) - m :])


class _Grouped:
    """A long run of patterns (last first) in `_Group`s."""

    __slots__ = ("groups",)

    def __init__(self, wilds: list[_Wild], fold: bool) -> None:
        self.groups = [_Group(wilds[i : i + _GROUP], fold) for i in range(0, len(wilds), _GROUP)]

    def holding(self, path: str) -> Iterator[_Wild]:
        """The patterns, last first, but for those of a group that cannot match `path`."""
        for group in self.groups:
            if group.may_match(path):
                yield from group.wilds


def _grouped(wilds: list[_Wild], fold: bool) -> list[_Wild] | _Grouped:
    return _Grouped(wilds, fold) if len(wilds) > _GROUP else wilds


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    """`text` with its ASCII letters in lower case (a byte above 127 is not a letter to git)."""
    return text.translate(_ASCII_LOWER)


@lru_cache(maxsize=2**17)
def _folded(regex: re.Pattern[str]) -> re.Pattern[str]:
    """`regex` matching ASCII letters of either case (`[[:upper:]]` a lower one too, as git's
    wildmatch does with WM_CASEFOLD)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return re.compile(regex.pattern, (regex.flags & ~re.UNICODE) | re.IGNORECASE | re.ASCII)


def _bytes(text: str) -> str:
    """`text` as its UTF-8 bytes, one character each (latin-1): git matches a pattern byte by
    byte, so `?` is one byte and `é` two (`?.py` does not leave out `é.py`; porter's `?` took
    the whole `é` and hid a file git lists). An undecodable byte (surrogateescape) is itself."""
    return text if text.isascii() else text.encode("utf-8", "surrogateescape").decode("latin-1")


@lru_cache(maxsize=2**17)
def _read(line: str, fold: bool = False) -> tuple[bool, tuple[str, str, str] | None, re.Pattern[str] | None] | None:
    """(include, the literal's `_split_literal`, else the compiled regex) of a gitignore line, or
    None where git reads no pattern; raises (ValueError, re.error) where pathspec cannot read
    it. Kept for the process: a run reads its `exclude` patterns three times (checked, then
    matched on the walk and on given files), and 100,000 of them cost 7.9 CPU s read each time.
    `fold`: as git reads it where a repository's `core.ignoreCase` folds case."""
    read = _source(line, fold)
    if read is None or read[2] is None:
        return None if read is None else (read[0], read[1], None)
    # (DOTALL: pathspec's `.` in `(?:.+/)?` did not cross a line break in a folder's name, so
    # `m.py` left out `x/m.py` but not `a<LF>b/m.py`, which git leaves out)
    with warnings.catch_warnings():  # (a "possible nested set" FutureWarning reached the terminal)
        warnings.simplefilter("ignore")
        return read[0], None, re.compile(read[2], re.DOTALL)


def _source(line: str, fold: bool = False) -> tuple[bool, tuple[str, str, str] | None, str | None] | None:
    """`_read`, with the regex's text instead of the compiled regex (`_union` joins many of
    them without compiling each). A bracket expression is read as git reads it (`_brackets`)."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    line = _trim(line)
    if line.startswith("!"):
        # a negation matches what its pattern matches (pathspec read `!/` as every path below a
        # folder, where `/` is no pattern: git keeps nothing by it); a `!` or `#` after it is text
        body = line[1:]
        inner = _source("\\" + body if body[:1] in ("!", "#") else body, fold)
        return None if inner is None else (False, inner[1], inner[2])
    line = _slashes(line)
    plain = _plain(line)
    if plain is not None:
        return True, plain, None
    line, stars = _prefix_stars(line)
    marked, classes = _brackets(line, fold)
    if marked is None:
        return None  # (a bracket git cannot close, or an unknown `[:name:]`: the line matches nothing)
    regex, include = GitIgnoreSpecPattern.pattern_to_regex(marked)
    if regex is None or include is None:
        return None
    for i, cls in enumerate(classes):
        regex = regex.replace(chr(_MARK + i), cls)
    split = None if stars else _split_literal(regex)
    if split is not None:
        return include, split, None  # (no wildcard, no class: a regex that cannot fail)
    if regex.count(_STAR) > 1 or "[^" in regex.replace("[^/]", ""):
        regex = _linear(regex)  # (and `[!a]` never matches a `/`)
    if stars:
        # (a `*` that is a whole part after `**/` may be empty: `a**/*` leaves out a file `a`)
        regex = regex.replace(_FOLDERS + "/[^/]+", "(?:.*/)?[^/]*").replace(_FOLDERS + "/", "(?:.*/)?")
        regex = regex.replace(_ANY, ".*")
    return include, None, regex


# what `_prefix_stars` puts for a `**` git reads after a pattern's plain prefix, then replaces in
# the regex: `**/` (any folders, or none, and the `/` too) and a last `**` (anything)
_FOLDERS, _ANY = "\uf8fe", "\uf8ff"


def _prefix_stars(line: str) -> tuple[str, bool]:
    """`line` (a pattern with a `/` before its end, which git matches against the whole path)
    with a `**` that directly follows its plain prefix (`a**/*`, `x/b**`) marked (`_FOLDERS`,
    `_ANY`), and whether it was. git compares that prefix (up to its first `*?[\\`) as a string,
    then matches the rest from its start, where a `**` starts a part: `**/` may match no
    folder, or any, and a last `**` anything, `/` too (dir.c `match_pathname`, wildmatch.c).
    So git leaves out `a.py` under `a**/*` and `bb.py` under `b**/**`, and `x/ab/c/d.py`
    under `x/a**` whatever a later `!x/ab/` says; pathspec read each such `**` as `*` (the
    rule for a `**` inside a part, which git follows elsewhere). A line already holding a
    marker is left as it is."""
    body = line[:-1] if line.endswith("/") else line
    start = 1 if body.startswith("/") else 0
    if "/" not in body or _FOLDERS in line or _ANY in line:
        return line, False
    end = next((i for i in range(start, len(body)) if body[i] in "*?[\\"), len(body))
    if end == start or body[end - 1] == "/" or not body.startswith("**", end):
        return line, False
    rest = end
    while rest < len(body) and body[rest] == "*":
        rest += 1
    if rest < len(body) and body[rest] != "/":
        return line, False  # (`a**b`: git's `*`, as pathspec reads it)
    head = "/" + body[start:end]  # (rooted, as git matches it: the whole path)
    tail = body[rest + 1 :]
    while tail.startswith("**/"):  # (`**/` again: no more folders than the first)
        tail = tail[3:]
    if tail.strip("*") == "" and tail != "*":  # (`a**`, `a**/**`: anything after `a`)
        return head + _ANY + line[len(body) :], True
    return head + _FOLDERS + "/" + tail + line[len(body) :], True


# git's character classes (wildmatch.c, ASCII): `[[:alpha:]]` and the others, as ranges
_POSIX = {
    "alnum": ("09", "AZ", "az"),
    "alpha": ("AZ", "az"),
    "blank": ("  ", "\t\t"),
    "cntrl": ("\x00\x1f", "\x7f\x7f"),
    "digit": ("09",),
    "graph": ("!~",),
    "lower": ("az",),
    "print": (" ~",),
    "punct": ("!/", ":@", "[`", "{~"),
    "space": ("  ", "\t\t", "\n\n", "\r\r"),
    "upper": ("AZ",),
    "xdigit": ("09", "AF", "af"),
}
_MARK = 0xE000  # private-use characters stand for the line's bracket expressions while pathspec reads it
_NOTHING = "[^\\s\\S]"  # a class that matches no character


def _member(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


def _bracket(line: str, i: int, fold: bool = False) -> tuple[str | None, int]:
    """The regex class of the bracket expression at `line[i]` (a `[`) as git's wildmatch reads
    it, and where it ends; None where git reads no expression there (unclosed, or an unknown
    `[:name:]`: then the whole pattern matches nothing). `]` first is a member, `\\` escapes,
    `a-z` is a range, `[:alpha:]` a class; no class ever matches a `/`. `fold`: an upper-case
    letter that is a member alone matches nothing (`_UPPER`), as git compares it."""
    j = i + 1
    negated = j < len(line) and line[j] in "!^"
    j += negated
    ranges: list[str] = []  # (lowest, highest) as two characters
    prev: str | None = None
    while True:
        found, j, prev = _bracket_member(line, j, prev)
        if found is None:
            return None, j
        if not (fold and prev is not None and prev in _UPPER):  # (`prev`: a member alone)
            ranges.extend(found)
        j += 1
        if j >= len(line):
            return None, j
        if line[j] == "]":
            break
    if not negated:  # (a negated class gets the `/` among what it does not match)
        ranges = [part for r in ranges for part in (r[0] + min(r[1], "."), max(r[0], "0") + r[1]) if part[0] <= part[1]]
    body = "".join(_member(r[0]) if r[0] == r[1] else f"{_member(r[0])}-{_member(r[1])}" for r in ranges)
    if negated:
        return f"[^{body}/]", j + 1
    return (f"[{body}]" if body else _NOTHING), j + 1


def _escaped(line: str, j: int) -> tuple[str | None, int, bool]:
    """The character at `line[j]`, or the one after it where it is a `\\`; None at the end;
    where it ends; whether it was escaped."""
    escaped = j < len(line) and line[j] == "\\"
    j += escaped
    return (line[j] if j < len(line) else None), j, escaped


def _bracket_member(line: str, j: int, prev: str | None) -> tuple[tuple[str, ...] | None, int, str | None]:
    """(the ranges of the member at `line[j]`, where it ends, the character a `-` after it
    ranges from); None ranges where git gives up on the whole pattern."""
    c, j, escaped = _escaped(line, j)
    if c is None:
        return None, j, None
    if c == "-" and not escaped and prev is not None and j + 1 < len(line) and line[j + 1] != "]":
        hi, j, _ = _escaped(line, j + 1)
        if hi is None:
            return None, j, None
        return ((prev + hi,) if prev <= hi else ()), j, None
    if c == "[" and not escaped and line.startswith(":", j + 1):
        end = line.find("]", j + 2)
        if end < 0:
            return None, j, None
        name = line[j + 2 : end]
        if name.endswith(":"):
            return _POSIX.get(name[:-1]), end, None
    return (c + c,), j, c


def _brackets(line: str, fold: bool = False) -> tuple[str | None, list[str]]:
    """`line` with each bracket expression replaced by a private-use character (`_MARK` + i),
    and the regex class each stands for; (None, []) where git's reading of a bracket makes the
    line match nothing. pathspec reads brackets otherwise: `[[:alpha:]]` as the class `[:alph`
    and a `]`, `[\\]]` as a `\\` and a `]`. A line that holds a private-use character is left
    as it is; one with a bracket naming a `/` is anchored (`_rooted`). `fold`: an escaped
    upper-case letter (`_UPPER`) makes the line match nothing, as git compares it."""
    if ("[" not in line and not (fold and "\\" in line)) or any(_MARK <= ord(c) < _MARK + 0x1000 for c in line):
        return line, []
    out: list[str] = []
    classes: list[str] = []
    slashed = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            if fold and line[i + 1] in _UPPER:
                return None, []
            out.append(line[i : i + 2])
            i += 2
            continue
        if c != "[":
            out.append(c)
            i += 1
            continue
        cls, end = _bracket(line, i, fold)
        if cls is None:
            return None, []
        if len(classes) >= 0x1000:
            return line, []
        slashed = slashed or "/" in line[i:end]
        out.append(chr(_MARK + len(classes)))
        classes.append(cls)
        i = end
    return _rooted("".join(out), slashed), classes


def _rooted(marked: str, slashed: bool) -> str:
    """`marked` (`_brackets`) made anchored where a bracket it replaced named a `/`: git reads
    any `/` before a line's last character as making it a path from the `.gitignore`'s folder
    (dir.c `parse_path_pattern`), one in a bracket too, and its wildmatch never matches a `/`
    by a class (`_bracket`). pathspec, given the line as written, split it at that `/`: `[/a]*`
    and `x[a/B]*` left out no file, where git leaves out `a1.py` and `xB2.py` at the top
    (twenty-third read, leftover: with `core.ignoreCase` their capitals took either case)."""
    body = marked[:-1] if marked.endswith("/") else marked
    return "/" + marked if slashed and "/" not in body else marked


# where a repository folds case (`core.ignoreCase`), git's wildmatch lowers a path's letter and
# the pattern's, but not an escaped one (`\\A`) nor a bracket's member (`[A]`, `[!A]`): those
# match no letter (a range, `[A-C]`, takes either case). Read as any case, `\\A*` and `[A]*`
# left out `a1.py`, which git lists, and `[!A]*` kept it (twenty-third read)
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _slashes(line: str) -> str:
    """`line` with each escaped `/` (`\\/`) but a first or last one written `/`: git's wildmatch
    compares an escaped character as itself, and a `/` anywhere makes the line a path (dir.c
    `parse_path_pattern`). pathspec refused `a\\/b.py`: a `.gitignore` line that leaves out
    `a/b.py` for git was passed over, and an `exclude` pattern refused (twenty-fourth read). A
    first one names a path that starts with `/` (none), a last one a folder `a\\`: git matches
    nothing, and pathspec's refusal is kept. After a `**` that starts a part or ends the plain
    prefix, git reads it as `/` but without the `**/` that may match no folder: `*/**/`; after
    any other `**`, as after a `*`."""
    if "\\/" not in line:
        return line
    start = 1 if line.startswith("!") else 0
    out: list[str] = []  # (one character, or an escape and the character after it)
    prefix = -1  # (the tokens before the first `*?[\\`: the plain prefix)
    i = 0
    while i < len(line):
        raw = line[i : i + 2] if line[i] == "\\" else line[i]
        if prefix < 0 and raw[0] in "*?[\\":
            prefix = len(out)
        out.append(_escaped_slash(out, start, prefix) if raw == "\\/" and start < i < len(line) - 2 else raw)
        i += len(raw)
    return "".join(out)


def _escaped_slash(out: list[str], start: int, prefix: int) -> str:
    """What an escaped `/` after `out` (`_slashes`' tokens) is: `*/**/` in place of a run of two
    or more `*` before it that starts a part or follows a plain prefix (dir.c `simple_length`),
    where git's wildmatch reads the `**` as any folders, one at least; else `/`."""
    run = len(out)
    while run > 0 and out[run - 1] == "*":
        run -= 1
    if len(out) - run < 2:
        return "/"
    if run not in (start, prefix) and out[run - 1] != "/":
        del out[run + 1 :]  # (a `**` inside a part is a `*`, and dir.c's prefix is not this one)
        return "/"
    del out[run:]
    return "*/**/"


def _trim(line: str) -> str:
    """`line` with its trailing spaces removed as git removes them (`trim_trailing_spaces`: the
    unescaped spaces at its end, nothing else), and any other white space left at its end kept
    from pathspec, which strips it all: `a.py<TAB>` hid a.py, which git lists (the tab is part
    of git's pattern), and a name ending in `à` (bytes C3 A0, `\\xa0` a space to Python) lost
    its last byte."""
    last_space = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            last_space = i if last_space is None else last_space
        else:
            last_space = None
            if c == "\\":
                i += 1
                if i >= len(line):
                    return line  # (a lone `\\` at the end: git stops, pathspec refuses it)
        i += 1
    if last_space is not None:
        line = line[:last_space]
    end = len(line)
    while end and line[end - 1].isspace() and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    # (each as a one-character bracket, which pathspec keeps and `_brackets` reads)
    return line[:end] + "".join(f"[{c}]" for c in line[end:])


def check(line: str) -> None:
    """Raise (ValueError, re.error) where gitignore syntax cannot read `line` (`[z-a]`, a lone
    `\\`), as pathspec's `GitIgnoreSpec.from_lines([line])` raises: an `exclude` pattern of the
    user's own is checked (a `.gitignore` line git cannot read is passed over, `Spec`)."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    line = _slashes(line)
    if _plain(line) is not None:
        return
    why = _matches_nothing(line)
    if why is not None:
        raise ValueError(why)
    bracket = _reversed_range(line)
    if bracket is not None:
        raise ValueError(f"a bracket expression with a range whose ends are reversed: {bracket}")
    marked, _ = _brackets(line)  # (the brackets as git reads them: pathspec checks the rest)
    regex, include = GitIgnoreSpecPattern.pattern_to_regex(line if marked is None else marked)
    if regex is not None and include is not None and _split_literal(regex) is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(regex)


_TOKEN = re.compile(r"\\.?|.", re.DOTALL)  # (a character, or an escape and the one it escapes)


def _matches_nothing(line: str) -> str | None:
    """Why git, reading `line` (`_slashes`' output), matches no path by it, where pathspec refuses
    it; else None. git reads these lines without a word; a pattern of the user's that leaves out
    nothing is refused with the reason (pathspec's "Invalid git pattern" named only the line, and
    a bracket in it as porter's private mark, U+E000: twenty-fifth read)."""
    tokens = _TOKEN.findall(line)
    first = tokens[1:2] if tokens[:1] == ["!"] else tokens[:1]
    if first == ["\\/"]:
        return "an escaped `/` first matches no path for git (no path starts with `/`): write `/name` to anchor"
    if tokens[-1:] == ["\\/"]:
        return "an escaped `/` last matches no path for git (it reads a folder whose name ends in `\\`): write `name/`"
    if tokens[-1:] == ["\\"]:
        return "a `\\` at the end escapes nothing: git matches no path by the line"
    return None


def _reversed_range(line: str) -> str | None:
    """The first bracket expression of `line`, as git delimits it (`_bracket`), that holds a
    range whose ends are reversed (`[z-a]`, `[/z-a]`), or None. pathspec, asked as written,
    refused `[\\-!]` (an escaped `-`: git's member) and split `[/z-a]` at its `/` and took it
    (twenty-fourth read)."""
    i = 0
    while i < len(line):
        if line[i] != "[":
            i += 2 if line[i] == "\\" else 1
            continue
        j, prev, reversed_ = i + 1 + (line[i + 1 : i + 2] in ("!", "^")), None, False
        while True:
            found, j, prev = _bracket_member(line, j, prev)
            if found is None or j + 1 >= len(line):
                return None  # (git reads no bracket here: the line matches nothing)
            reversed_ = reversed_ or found == ()
            j += 1
            if line[j] == "]":
                break
        if reversed_:
            return line[i : j + 1]
        i = j + 1
    return None


# a line of names and `/` alone: no wildcard, class, escape, negation, comment or space
_PLAIN = re.compile(r"[^*?\[\]\\!#\s]+")


def _plain(line: str) -> tuple[str, str, str] | None:
    """`_split_literal` of the regex pathspec writes for `line`, read from the line itself where
    it holds only names and `/` (`gen/x.py`, `/build/`, `name`): pathspec translates a line
    character by character (1.6 CPU s for 100,000 `exclude` patterns). None for any other line,
    and for `.`, `..` or an empty part, which pathspec normalizes."""
    if not _PLAIN.fullmatch(line):
        return None
    parts = line.split("/")
    rooted, folder = parts[0] == "", parts[-1] == ""
    names = parts[int(rooted) : len(parts) - int(folder)]
    if not names or any(n in ("", ".", "..") for n in names):
        return None
    anchor = "path" if rooted or len(names) > 1 else "part"
    return anchor, "/".join(names), "dir" if folder else "any"


def spec(lines: Iterable[str], *, fold: bool = False) -> Spec:
    """The patterns of `lines` (`Spec`); a line longer than `MAX_PATTERN` is passed over.
    `fold`: letters match either case (a repository's `core.ignoreCase`)."""
    return Spec(lines, fold=fold)


__all__ = ["MAX_PATTERN", "Spec", "check", "spec"]
