"""`full` (the default: each finding with its source line and help) and `concise`."""

from __future__ import annotations

import re
from itertools import accumulate

from porter.core.findings import Applicability, Finding
from porter.lint.model import LintRun
from porter.core.textsafe import (
    BIDI_CHARS,
    BLANK,
    INVISIBLE_CHARS,
    LONE_FILLERS,
    columns,
    escape_char,
    inert_at,
    printable,
)


def _mark(f: Finding) -> str:
    return "[*] " if f.applied else ""


def _head(f: Finding) -> str:
    # columns are shown 1-based, as editors and ruff show them
    # a name or message is shown, never obeyed: control characters come out escaped
    return f"{printable(f.path)}:{f.start.line}:{f.start.column + 1}: {f.code} {_mark(f)}{printable(f.message)}"


def render_concise(run: LintRun) -> str:
    lines = [_head(f) for f in run.findings]
    return "\n".join(lines) + ("\n" if lines else "") + summary(run)


def render_full(run: LintRun) -> str:
    out: list[str] = []
    for f in run.findings:
        out.append(_head(f))
        src = run.line_text(f.path, f.start.line)
        num = str(f.start.line)
        pad = " " * len(num)
        out.append(f"{pad} |")
        start = f.start.column
        end = f.end.column if f.end.line == f.start.line and f.end.column > start else len(src)
        shown, start, end = _window(src, start, end)
        shown, (start, end) = inert_at(_source(shown), start, end)  # a CI log reads no command in it
        out.append(f"{num} | {shown}")
        lead, width = columns(shown[:start]), columns(shown[start:end])
        out.append(f"{pad} | {' ' * lead}{'^' * max(1, width)} {f.code}")
        out.append(f"{pad} |")
        if f.replacement is not None and f.applicability is not Applicability.MANUAL:
            kind = "safe" if f.applicability is Applicability.SAFE else "unsafe"
            out.append(f"{pad} = fix ({kind}): `{_one_line(f.replacement)}`")
        if f.advice:
            out.append(f"{pad} = help: {_one_line(f.advice)}")
        out.append("")
    return "\n".join(out) + ("\n" if out and out[-1] != "" else "") + summary(run)


_PICTURES = {c: (" " if c == 9 else chr(0x2400 + c)) for c in range(0x20)} | {0x7F: "\u2421"}
_PICTURES |= {c: "\ufffd" for c in (*range(0x80, 0xA0), 0x2028, 0x2029, *map(ord, BIDI_CHARS + INVISIBLE_CHARS))}


def _source(line: str) -> str:
    """A source line for the terminal: each control character becomes one visible character
    (ESC is `␛`, a tab a space), so the carets below still line up and nothing in the file
    (a clear-screen, a hyperlink) is obeyed by the terminal."""
    return line.translate(_PICTURES)


# the characters drawn as blank columns (`textsafe.BLANK`, lone Hangul fillers): a picture of one
# column would hide which (U+3000 is two columns), so each is its escape, as in a name
_BLANKS = re.compile(f"[{BLANK}]|{LONE_FILLERS}")
_FILLERS = frozenset("\u115f\u1160")


MAX_SHOWN = 200  # columns of a long source line shown around a finding


def _window(line: str, start: int, end: int) -> tuple[str, int, int]:
    """The part of a line shown for a finding at [start, end), each character drawn as a blank
    column as its escape (`\\xa0`: `x<NBSP>=<U+3000>1` read as `x = 1`, another line; twenty-third
    read), and where the finding is in it: at most `MAX_SHOWN` columns, cut ends marked `…`.
    Every finding on a 5 MB one-line file printed the whole line: 3,000 findings on an 84 KB
    line were 380 MB of output. The columns are counted after the escapes, which are never cut:
    200 NBSPs were 800 columns (twenty-fourth read)."""
    if line.isascii() and len(line) <= MAX_SHOWN:  # (a character a column: most lines)
        return line, start, end
    lo = max(0, min(start - MAX_SHOWN // 4, len(line) - MAX_SHOWN))
    hi = min(len(line), lo + MAX_SHOWN)
    pieces = list(line[lo:hi])
    if not line.isascii():
        # (read on the window alone: a run of fillers at a cut stands beside the `…` shown there,
        # not beside the letter jamo cut off, so it is lone; read with the character past the cut,
        # it was shown raw, blank columns after the `…`; twenty-fifth read)
        for m in _BLANKS.finditer(line[lo:hi]):
            pieces[m.start() : m.end()] = map(escape_char, m.group())
    left, right = _kept(pieces, min(start, hi) - lo)
    while not line.isascii() and _escape_cut_fillers(pieces, left, right, lo + left > 0, lo + right < len(line)):
        left, right = _kept(pieces, min(start, hi) - lo)  # (the escapes are wider: cut again)
    head = "…" if lo + left > 0 else ""
    at = list(accumulate(map(len, pieces[left:right]), initial=len(head)))  # (where each piece is shown)
    shown = head + "".join(pieces[left:right]) + ("…" if lo + right < len(line) else "")
    return shown, at[min(max(start - lo, left), right) - left], at[min(max(end - lo, left), right) - left]


def _escape_cut_fillers(pieces: list[str], left: int, right: int, cut_left: bool, cut_right: bool) -> bool:
    """Escape the raw Hangul fillers that `_kept`'s cuts leave at either end of what is shown;
    whether any was. Beside the `…` of a cut they are lone, whatever was cut off."""
    ends = [range(left, right)] * cut_left + [range(right - 1, left - 1, -1)] * cut_right
    changed = False
    for end in ends:
        for k in end:
            if pieces[k] not in _FILLERS:
                break
            pieces[k], changed = escape_char(pieces[k]), True
    return changed


def _kept(pieces: list[str], at: int) -> tuple[int, int]:
    """The pieces [left, right) shown around the one at `at`: `MAX_SHOWN // 4` columns before it
    at most, then as many after as `MAX_SHOWN` allows, then before again."""
    width = [1] * len(pieces) if "".join(pieces).isascii() and len(pieces) == len("".join(pieces)) else None
    width = width or [columns(_source(p)) for p in pieces]
    left, right, used = at, at, 0
    while left > 0 and used + width[left - 1] <= MAX_SHOWN // 4:
        left, used = left - 1, used + width[left - 1]
    while right < len(pieces) and used + width[right] <= MAX_SHOWN:
        right, used = right + 1, used + width[right]
    while left > 0 and used + width[left - 1] <= MAX_SHOWN:
        left, used = left - 1, used + width[left - 1]
    return left, right


def _one_line(text: str, limit: int = 200) -> str:
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    suffix = "es" if word.endswith(("x", "s")) else "s"
    return f"{n} {word}{'' if n == 1 else suffix}"


def _headline(run: LintRun) -> list[str]:
    """The findings' line: "All checks passed!" only when every file found was checked."""
    n = len(run.findings)
    unchecked = run.errors or run.unread
    if run.fix:
        fixed = len(run.fixed)
        if n == 0 and fixed == 0 and not unchecked:
            return ["All checks passed!"]
        return [f"Found {_plural(n + fixed, 'finding')} ({fixed} fixed, {n} remaining)."]
    if n == 0:
        return ["No findings."] if unchecked else ["All checks passed!"]
    fixable = sum(1 for f in run.findings if f.applied)
    return [f"Found {_plural(n, 'finding')}."] + (
        [f"[*] {fixable} fixable with `porter lint --fix`."] if fixable else []
    )


def _unchecked(run: LintRun) -> list[str]:
    """Files not checked: those that could not be read or parsed, those too large to be."""
    lines = []
    if run.errors:
        lines.append(f"{_plural(len(run.errors), 'file')} could not be checked (see the errors above).")
    if run.unread:
        was = "was" if len(run.unread) == 1 else "were"
        lines.append(
            f"{_plural(len(run.unread), 'file')} {was} not read (larger than porter reads: see the notes above)."
        )
    return lines


def summary(run: LintRun) -> str:
    lines = _headline(run) + _unchecked(run)
    hidden = run.hidden_unsafe()
    if hidden:
        lines.append(f"({_plural(hidden, 'hidden fix')} can be enabled with `--unsafe-fixes`.)")
    if run.baselined:
        lines.append(f"{_plural(run.baselined, 'finding')} already in the baseline not shown.")
    if run.stale_baseline:
        stale = _plural(run.stale_baseline, "baseline entry").replace("entrys", "entries")
        lines.append(f"{stale} no longer found (fixed since): rewrite the baseline to drop them.")
    return "\n".join(lines) + "\n"
