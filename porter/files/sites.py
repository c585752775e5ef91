"""From the sites a porter found to a result: findings, the fixes the settings allow, new bytes.

A porter of a file kind never edits text itself: it names sites (a span of the file, a rule,
and the replacement where one is a documented fact). Here, as for Python, the settings decide
what is reported (`--select`/`--ignore`), what a comment silences, which fixes are applied
(safe ones, unsafe ones with `--unsafe-fixes`), and the new bytes are the old ones with those
spans replaced: nothing outside a site changes. What comes out must parse again as the kind's
format (`porter.files.verify`), or nothing is written.
"""

from __future__ import annotations

import re

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from porter.config.ruledata import Rule, all_rules, rule_enabled
from porter.config.settings import Settings
from porter.core.findings import Applicability, FileResult, FileStatus, Finding, Position
from porter.core.suppressions import Suppressions


@dataclass(frozen=True)
class Site:
    """One thing a porter found: characters [start, end) of the file's text."""

    code: str
    start: int
    end: int
    replacement: str | None = None  # the new text for the span, when the fix is a documented fact
    message: str | None = None  # default: the rule's summary
    advice: str | None = None  # default: the rule's advice for the target
    applicability: Applicability | None = None  # default: the rule's for the target
    unedited: str | None = None  # the message where a reader drops the replacement (default: `message`, less REMOVED)


# the words a removal's message ends with (DEP002's index option, DEP005's requirement): said only of a site that
# still removes its span; a site reported, not edited (a script bash decodes, a line split by a continuation, a
# shell text that does not parse) said it of a file left as it was (thirty-sixth read, term2)
REMOVED = ": removed"


def message(site: Site, rule: Rule) -> str:
    """The site's message: the rule's summary by default; the removal's words only while it has its edit."""
    text = site.message or rule.summary
    if site.replacement is not None:
        return text
    return site.unedited or text.removesuffix(REMOVED)


LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """`LINE_BREAK.split(text)`: the lines as Python numbers them (CR LF, CR, LF); a text
    without a CR is split at its LFs, several times faster than the pattern."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


def normalised_text(lines: list[str], finding: Finding) -> str:
    """The whitespace-normalised text of the finding's lines: what its fingerprint hashes
    (`porter.lint.fingerprint`)."""
    first, last = finding.start.line, max(finding.end.line, finding.start.line)
    chunk = lines[first - 1 : last] if first >= 1 else []
    return " ".join(" ".join(chunk).split())


def finding_texts(findings: list[Finding], source: bytes | None) -> list[str]:
    """`normalised_text` of each finding (in the order given) in `source`, decoded as lint
    decodes it: what the stat index keeps so that a warm run fingerprints a file it does not read."""
    lines = split_lines((source or b"").decode("utf-8", "replace"))
    spans: dict[tuple[int, int], str] = {}
    out = []
    for f in findings:
        span = (f.start.line, f.end.line)
        text = spans.get(span)
        if text is None:
            text = spans[span] = normalised_text(lines, f)
        out.append(text)
    return out


class Text:
    """A file's text, decoded so that encoding it gives back the very same bytes, with the
    offsets of its lines (positions are 1-based lines, 0-based columns in code points)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.text = source.decode("utf-8", "surrogateescape")
        # lines end as str.splitlines ends them for these files (pip, YAML, editors): CRLF, LF, or
        # a lone CR
        starts, breaks = [0], []
        for brk in LINE_BREAK.finditer(self.text):
            breaks.append(brk.start())
            starts.append(brk.end())
        self.line_starts, self._breaks = starts, breaks

    def position(self, offset: int) -> Position:
        line = bisect_right(self.line_starts, offset)
        return Position(line, offset - self.line_starts[line - 1])

    def offset(self, line: int, column: int = 0) -> int:
        """The offset of (1-based line, 0-based column)."""
        return self.line_starts[line - 1] + column

    def line_span(self, line: int) -> tuple[int, int]:
        """[start, end) of a 1-based line without its line break."""
        start = self.line_starts[line - 1]
        end = self._breaks[line - 1] if line < len(self.line_starts) else len(self.text)
        return start, end

    def encode(self, text: str) -> bytes:
        return text.encode("utf-8", "surrogateescape")


def _overlaps(taken: tuple[list[int], list[int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps an applied site: one that starts before `end` and ends after
    `start` (sites come in order of start, so a bisection and the largest end so far answer it;
    a scan of every applied site made a file of 200,000 fixes quadratic)."""
    starts, ends = taken
    k = bisect_left(starts, end)
    return k > 0 and ends[k - 1] > start


def result(
    text: Text,
    sites: list[Site],
    path: str,
    settings: Settings,
    *,
    suppressions: Suppressions | None = None,
    check: Callable[[bytes], str | None] | None = None,
) -> FileResult:
    """The file's result: one finding per enabled, unsilenced site; the new bytes with the
    applied sites' replacements (when the settings want the source), read back by `check`
    (`porter.files.verify.problem` for the file's kind: why they do not parse, or None)."""
    out = FileResult(path=path, status=FileStatus.UNCHANGED, original_source=text.source)
    rules = all_rules()
    target = settings.target
    edits: list[tuple[int, int, str]] = []
    taken: tuple[list[int], list[int]] = ([], [])  # the applied sites' starts, the largest end so far
    for site in sorted(sites, key=lambda s: (s.start, s.end, s.code)):
        rule = rules[site.code]
        if not rule_enabled(rule, target, settings.select, settings.ignore, settings.extend_select):
            continue
        applicability, applied = _applicability(site, rule, settings)
        if applied and _overlaps(taken, site.start, site.end):
            applied = False  # another fix already rewrites these characters
        start, end = text.position(site.start), text.position(site.end)
        finding = Finding(
            code=rule.code,
            name=rule.name,
            message=message(site, rule),
            path=path,
            start=start,
            end=end,
            severity=rule.severity,
            applicability=applicability,
            target=target,
            replacement=site.replacement,
            original=text.text[site.start : site.end] if site.replacement is not None else None,
            applied=applied,
            advice=site.advice or rule.advice_for(target),
            doc_url=rule.doc_url,
        )
        if suppressions is not None and suppressions.by_line:
            lines = (start.line,) if start.line == end.line else (start.line, end.line)
            if suppressions.matching(rule.code, lines) is not None:
                out.suppressed.append(_unapplied(finding))
                continue
        if suppressions is not None and rule.code in suppressions.file_codes:
            continue
        if applied:
            assert site.replacement is not None
            edits.append((site.start, site.end, site.replacement))
            taken[0].append(site.start)
            taken[1].append(max(site.end, taken[1][-1]) if taken[1] else site.end)
        out.findings.append(finding)
    out.findings.sort(key=Finding.sort_key)
    return _rewritten(out, text, edits, settings, check)


def _applicability(site: Site, rule: Rule, settings: Settings) -> tuple[Applicability, bool]:
    """How safe the site's fix is (the site's own word, else the rule's for the target; MANUAL
    where there is no replacement), and whether the settings apply it (SAFE, or UNSAFE with
    --unsafe-fixes)."""
    applicability = site.applicability or rule.applicability_for(settings.target)
    if site.replacement is None:
        applicability = Applicability.MANUAL
    applied = applicability is Applicability.SAFE or (applicability is Applicability.UNSAFE and settings.unsafe_fixes)
    return applicability, applied


def _rewritten(
    out: FileResult,
    text: Text,
    edits: list[tuple[int, int, str]],
    settings: Settings,
    check: Callable[[bytes], str | None] | None,
) -> FileResult:
    """`out` with the edits made: CHANGED where they change the text, with the new bytes when the
    settings want the source, unless `check` finds they do not parse (then an ERROR, no findings)."""
    if not edits:
        return out
    new_text = apply(text.text, edits)
    if new_text == text.text:
        return out
    out.status = FileStatus.CHANGED
    if not settings.want_source:
        return out
    new = text.encode(new_text)
    if check is not None:
        why = check(new)
        if why is not None:
            out.status = FileStatus.ERROR
            out.reason = f"internal error: the rewritten file does not parse ({why}); left unchanged"
            out.findings = []
            return out
    out.new_source = new
    return out


def _unapplied(f: Finding) -> Finding:
    from dataclasses import replace

    return replace(f, applied=False)


def apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new) span replaced; spans do not overlap."""
    parts: list[str] = []
    at = 0
    for start, end, new in sorted(edits):
        parts.append(text[at:start])
        parts.append(new)
        at = end
    parts.append(text[at:])
    return "".join(parts)
