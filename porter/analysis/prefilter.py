"""The bytes scan that decides whether a file is worth parsing.

Parsing costs ~1000x a bytes scan, and most files of a real repository have no CUDA code.
A file is parsed only if some rule enabled for the target could match it: one of the rule's
`tokens` occurs, and, where the rule (or its whole rules file) declares `requires = [...]`,
one of those too. `requires` anchors rules whose tokens are common words: every
`torch.cuda.*` rule needs the bytes `cuda` somewhere in the file (in the import or the
attribute), so `requires = ["cuda"]` keeps `seed`, `memory` or `Stream` from admitting files
that never touch CUDA. The scan is exact enough: a token in a comment admits a file that
then yields nothing, never the other way round.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from porter.analysis.kinds import CudaOnlyKind, CudaOnlyTag
from porter.analysis.program import ACTIONABLE
from porter.config.ruledata import Rule, all_rules, load_toml, rule_enabled, rules_dir
from porter.config.settings import Facts, Settings

PYTHON = "python"
NOTEBOOK = "notebook"  # its code cells are Python: Python's rules read it too

NOT_ADMITTED = "no CUDA-related token"  # the reason a file the scan turns away is skipped


@lru_cache(maxsize=1)
def _requires() -> dict[str, tuple[bytes, ...]]:
    """code -> the `requires` tokens of the rule (its own, else its file's); () if none."""
    out: dict[str, tuple[bytes, ...]] = {}
    for path in sorted(rules_dir().glob("*.toml")):
        data = load_toml(path.name)
        shared = tuple(t.encode() for t in data.get("requires", ()))
        for table in data.get("rule", []):
            own = table.get("requires")
            out[table["code"]] = tuple(t.encode() for t in own) if own is not None else shared
    return out


def _ordered(tokens: set[bytes]) -> tuple[bytes, ...]:
    # `bytes in bytes` per token is ~2.5x faster than one regex alternation of them all
    # (measured on the benchmark corpus); the order is fixed, so the answer never varies.
    # A token that holds another of the same set adds nothing to "one of them occurs" (`_cuda`
    # where `cuda` is looked for): it is left out, one pass fewer.
    ordered: list[bytes] = []
    for token in sorted(tokens, key=lambda t: (len(t), t)):
        if not any(shorter in token for shorter in ordered):
            ordered.append(token)
    return tuple(ordered)


def reads(rule: Rule, kind: str) -> bool:
    """Whether `rule` applies to files of `kind` (porter.core.kinds)."""
    return kind in rule.kinds or (kind == NOTEBOOK and PYTHON in rule.kinds)


@lru_cache(maxsize=64)
def _patterns(
    target: str, select: tuple[str, ...], ignore: tuple[str, ...], extend: tuple[str, ...], kind: str = PYTHON
) -> tuple[tuple[bytes, ...], list[tuple[tuple[bytes, ...], tuple[bytes, ...]]]]:
    """(unanchored tokens, [(requires tokens, their rules' tokens)]) for the settings and the
    kind of file."""
    free: set[bytes] = set()
    anchored: dict[tuple[bytes, ...], set[bytes]] = {}
    requires = _requires()
    for rule in all_rules().values():
        if not rule.tokens or not reads(rule, kind) or not rule_enabled(rule, target, select, ignore, extend):
            continue
        req = requires.get(rule.code, ())
        if req:
            anchored.setdefault(tuple(sorted(req)), set()).update(rule.tokens)
        else:
            free.update(rule.tokens)
    groups = [(_ordered(set(req)), _ordered(toks)) for req, toks in anchored.items()]
    return _ordered(free), groups


# Text the byte patterns cannot see: UTF-16/32 with a byte-order mark (pip, YAML and JSON readers
# take it). UTF-32 first: its little-endian mark begins with UTF-16's.
WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


# A file of at least this many bytes is looked at through its words first (`_Scan`): one `in`
# per token costs a pass over the file each (171 tokens: 7-10 s for 37 MiB of Python that holds
# none of them; seventeenth read)
WORDS_FROM = 1 << 20
_WORD_BYTES = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz") | frozenset(
    range(0x80, 0x100)
)
_TO_WORDS = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))  # every other byte a space
_RUNS = re.compile(rb"[0-9A-Za-z_\x80-\xff]+|[^0-9A-Za-z_\x80-\xff]+")
_CHUNK = 1 << 22  # the words are collected a chunk at a time (a list of every word would be ~15x the file)


@lru_cache(maxsize=4096)
def _pieces(token: bytes) -> tuple[tuple[bytes, ...], bool]:
    """What the distinct words of a file, each between NULs (`_words`), must hold for `token` to
    occur in it: each of its runs of word bytes, with a NUL on each side where the token shows the
    word's end (`.to(0` needs the whole word `to` and a word that begins with `0`); and whether
    that is also enough (a token of word bytes only occurs in a file exactly when it is part of
    one of its words)."""
    runs = _RUNS.findall(token)
    last = len(runs) - 1
    pieces = tuple(
        (b"\0" if i > 0 else b"") + run + (b"\0" if i < last else b"")
        for i, run in enumerate(runs)
        if run[0] in _WORD_BYTES
    )
    return pieces, len(runs) == 1 and bool(pieces)


def _words(source: bytes) -> bytes | None:
    """The distinct words of `source` (maximal runs of `_WORD_BYTES`), each between NULs; None
    when they are not much fewer than its bytes (a vocabulary of unique names), where looking a
    token up in them would cost about what it saves."""
    text = source.translate(_TO_WORDS)
    seen: set[bytes] = set()
    size, start, end = 0, 0, len(text)
    while start < end:
        stop = min(end, start + _CHUNK)
        if stop < end:  # cut at a space, never inside a word
            cut = text.rfind(b" ", start, stop)
            if cut > start:
                stop = cut
            else:
                cut = text.find(b" ", stop)
                stop = cut if cut >= 0 else end
        words = set(text[start:stop].split())
        words -= seen
        size += sum(map(len, words)) + len(words)
        if size > len(source) // 4:
            return None
        seen |= words
        start = stop
    return b"\0" + b"\0".join(seen) + b"\0"


class _Scan:
    """`token in source`, for many tokens: in a large file, first in the file's distinct words,
    where a token whose words the file lacks is answered without a pass over it (and a token of
    word bytes only is answered there whole); the same answers as `in` (seventeenth read: 37 MiB
    of token-free Python took 7-10 s, one pass per token; now its words, and a pass for each token
    whose words are all there and that holds other bytes)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.words: bytes | None = None
        self.pending = len(source) >= WORDS_FROM
        self.seen: dict[bytes, bool] = {}  # piece -> whether the words hold it (tokens share pieces)

    def __contains__(self, token: bytes) -> bool:
        if self.pending:
            self.pending = False
            self.words = _words(self.source)
        if self.words is not None:
            pieces, whole = _pieces(token)
            if not all(self._held(piece) for piece in pieces):
                return False
            if whole:
                return True
        return token in self.source

    def _held(self, piece: bytes) -> bool:
        held = self.seen.get(piece)
        if held is None:
            assert self.words is not None
            held = self.seen[piece] = piece in self.words
        return held


def launches_imported(flow: Facts, source: bytes) -> bool:
    """Whether the file may launch a Triton kernel it imports from a module of the project
    (`ops.scale[(1,)](...)`, KERN002): the index's `kernel` fact, its name before a `[` in the
    text (a file spelling no token of Triton was not parsed, its launch not reported)."""
    return any(
        f[2] == CudaOnlyKind.IMPORTED and CudaOnlyTag.KERNEL in f[3][1:] and _subscripted(f[1].encode(), source)
        for f in flow
    )


def decorated_imported(flow: Facts, source: bytes) -> bool:
    """Whether the file may define a Triton kernel under a decorator a module of the project binds
    (`from .tu import jit`, `@jit`; KERN002): the index's `binds` fact, and a `@` in the text (a
    file spelling no token of Triton was read by neither lint nor `porter kernels`)."""
    prefix = CudaOnlyTag.BINDS.value + ":"
    return b"@" in source and any(
        f[2] == CudaOnlyKind.IMPORTED and any(str(part).startswith(prefix) for part in f[3][1:]) for f in flow
    )


def triton_imported(flow: Facts, source: bytes) -> bool:
    """Whether the file may hold Triton code only the project index shows (`launches_imported`,
    `decorated_imported`)."""
    return launches_imported(flow, source) or decorated_imported(flow, source)


def _subscripted(name: bytes, source: bytes) -> bool:
    """Whether `name` is followed by a `[` in the file's code, spaces or a line's continuation between
    too (`scale [grid](...)` was not admitted); one in a comment or a one-line string is passed over
    (`# ops.scale [grid]` cost the file a parse that found nothing: twenty-fourth read's leftover).
    Read line by line from the hits only (`_Line`), no tokenizer: a hit a string may hold that the
    line does not show (a triple quote before it, a continued line) counts as code, and a notebook's
    JSON, all strings, is read as text."""
    if name not in source:
        return False
    hits = re.finditer(re.escape(name) + rb"[\s\\]*\[", source)
    if _NOTEBOOK_TEXT.match(source):
        return next(hits, None) is not None
    line: _Line | None = None
    for hit in hits:
        if line is None or hit.start() > line.end:
            line = _Line(source, hit.start())
        if line.code_at(hit.start()):
            return True
    return False


_NOTEBOOK_TEXT = re.compile(rb"\s*\{")  # (a notebook's JSON; a Python file rarely starts so, and is then read as text)
_QUOTES = frozenset(b"'\"")
_TRIPLES = (b"'''", b'"""')


class _Line:
    """One line of Python read left to right for what is a comment or in a one-line string, from
    its start to each offset asked for (ascending): linear in the line, however many hits it has."""

    def __init__(self, source: bytes, at: int) -> None:
        self.source = source
        start = max(source.rfind(b"\n", 0, at), source.rfind(b"\r", 0, at)) + 1  # (Python ends a line at either)
        ends = [e for e in (source.find(b"\n", at), source.find(b"\r", at)) if e >= 0]
        self.end = min(ends, default=len(source))
        self.at, self.quote, self.comment = start, 0, False
        # a continued line: a string may run into it
        self.unknown = source[max(0, start - 3) : start].rstrip(b"\r\n").endswith(b"\\")

    def code_at(self, offset: int) -> bool:
        """Whether `offset` of this line is code, or may be."""
        while self.at < offset and not (self.comment or self.unknown):
            self._step()
        return self.unknown or (not self.comment and not self.quote)

    def _step(self) -> None:
        c = self.source[self.at]
        if self.quote:
            self.at += 2 if c == 0x5C else 1  # (a backslash escapes the next)
            self.quote = 0 if c == self.quote else self.quote
            return
        if c == 0x23:  # `#`
            self.comment = True
        elif c in _QUOTES:
            prefix = self.source[max(0, self.at - 2) : self.at].lower()
            # a triple quote (the line may close a string), or an f-string (code in its braces)
            self.unknown = self.source[self.at : self.at + 3] in _TRIPLES or b"f" in prefix
            self.quote = c
        self.at += 1


def admits(source: bytes, settings: Settings, kind: str = PYTHON) -> bool:
    if source.startswith(WIDE_BOMS):
        return True  # its reader says it cannot read it, rather than passing it in silence
    if settings.flow and any(fact[2] in ACTIONABLE for fact in settings.flow):
        return True  # the project index found a device site here that no token shows
    free, groups = _patterns(settings.target, settings.select, settings.ignore, settings.extend_select, kind)
    scan = _Scan(source)
    if any(t in scan for t in free):
        return True
    if any(any(r in scan for r in req) and any(t in scan for t in toks) for req, toks in groups):
        return True
    # (last: a file a token admits is not read for these)
    return triton_imported(settings.flow or (), source)


def admits_file(source: bytes, name: str, settings: Settings) -> bool:
    """`admits` for the kind of file `name` is: setup.py is Python and a dependency file; a
    notebook's tokens are looked for in its decoded strings too."""
    from porter.core.kinds import SETUP_PY, kind_of

    kind = kind_of(name) or PYTHON
    if kind == SETUP_PY:
        return admits(source, settings) or admits(source, settings, SETUP_PY)
    return admits_kind(source, settings, kind)


def admits_kind(source: bytes, settings: Settings, kind: str) -> bool:
    """`admits`, and for a notebook whose bytes show no token, `admits` of its decoded strings."""
    if admits(source, settings, kind):
        return True
    if kind != NOTEBOOK:
        return False
    decoded = notebook_strings(source)
    return decoded is not None and admits(decoded, settings, kind)


def notebook_strings(source: bytes) -> bytes | None:
    """The strings of a notebook that porter reads (each cell's `source` joined, as Jupyter
    joins it, and the notebook's and the cells' metadata), JSON's `\\u` escapes decoded, one a
    line; None if the file is not JSON. Its bytes can hide what a cell holds: a source split
    into one-character strings, or every character written `\\u0063`. Outputs are not read
    (no rule reads them; a notebook is mostly outputs)."""
    import json

    try:
        data = json.loads(source)
    except (ValueError, RecursionError):
        return None  # its reader says why (a file that is not JSON holds no cell to port)
    if not isinstance(data, dict):
        return None
    cells = data.get("cells")
    todo: list[object] = [data.get("metadata")]
    for cell in cells if isinstance(cells, list) else ():
        if isinstance(cell, dict):
            todo += [cell.get("source"), cell.get("metadata")]
    out: list[str] = []
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            if item and all(isinstance(part, str) for part in item):
                out.append("".join(item))  # a cell's `source`: one text
            else:
                todo.extend(item)
    return "\n".join(out).encode("utf-8", "surrogatepass")


def rules_admit(codes: Iterable[str], enabled: Callable[[str], bool], source: bytes) -> bool:
    """Whether one of the rules `codes` that is `enabled` may have a site in `source` by its
    declared `tokens`; True where one of them declares no tokens (nothing is known of its
    sites). Not by `requires`: an anchor that keeps common words from admitting files, not a
    condition of every site (CUDA013's `"nvidia-smi"` needs no `cuda` in the file)."""
    rules = all_rules()
    for code in codes:
        rule = rules[code]
        if not reads(rule, PYTHON) or not enabled(code):
            continue
        if not rule.tokens or any(t in source for t in rule.tokens):
            return True
    return False


def admitting_rules(source: bytes, settings: Settings) -> list[str]:
    """The enabled rules whose tokens admit `source` (for the benchmark and `--verbose`)."""
    requires = _requires()
    out = []
    for rule in all_rules().values():
        if (
            not rule.tokens
            or not reads(rule, PYTHON)
            or not rule_enabled(rule, settings.target, settings.select, settings.ignore, settings.extend_select)
        ):
            continue
        req = requires.get(rule.code, ())
        if any(t in source for t in rule.tokens) and (not req or any(t in source for t in req)):
            out.append(rule.code)
    return out
