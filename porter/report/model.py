"""The report model: one description of a run that every renderer reads.

`ReportModel.from_run(results, summary, settings, kind=...)` turns what the runner produced into
plain data — per-rule counts, per-file readiness, the manual-work list and the line diffs — so
the terminal, HTML, Markdown and JSON views cannot disagree about a number. Other commands
(parity-check) add their own content through `sections` without touching the renderers.

Readiness is the share of CUDA-specific sites that porter ported automatically. A site is a
finding that asks for work (its rule's severity is warning or error); info findings (a guard
kept on CUDA by design, an `NCCL_*` variable that does nothing on the target) ask nothing of a
person, so they are not sites: each rule's `note_group` in rules/*.toml says under which heading
they are shown instead. For `rewrite` a site counts when its fix was applied; for `lint`, which
writes nothing, when `rewrite` with the same settings would apply it.
"""

from __future__ import annotations

import datetime as _dt
import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from porter import __version__
from porter.core.findings import Applicability, FileResult, FileStatus, Finding, Severity
from porter.config.ruledata import NOTE_GROUPS, Rule, all_rules
from porter.config.settings import Settings
from porter.core.reading import lines_of, not_read
from porter.core.textsafe import git_quoted, printable
from porter.files.sites import LINE_BREAK

SCHEMA_VERSION = 1
KINDS = ("rewrite", "lint", "parity-check")
CONTEXT_LINES = 3

# What happened to a site. "rewritten": the fix is in the output; "unapplied": a fix exists
# but is unsafe and was not requested; "manual": no automatic fix, a person has to act.
WORK = ("rewritten", "unapplied", "manual")
# What an info finding is shown as (not a site: nothing to do): the rule's note_group.
INFO = tuple(NOTE_GROUPS)  # "kept-on-cuda", "note"
INFO_TITLES = NOTE_GROUPS
OUTCOMES = WORK + INFO
# RuleSummary/Readiness attribute that counts each outcome
_COUNTER = {
    "rewritten": "rewritten",
    "unapplied": "unapplied",
    "manual": "manual",
    "kept-on-cuda": "kept",
    "note": "notes",
}


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


# -- diffs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One changed region: old lines [old_start, old_start+len(before)) became `after` (1-based)."""

    old_start: int
    new_start: int
    before: tuple[str, ...]
    after: tuple[str, ...]

    def to_dict(self) -> dict:
        return {
            "old_start": self.old_start,
            "old_lines": len(self.before),
            "new_start": self.new_start,
            "new_lines": len(self.after),
            "before": list(self.before),
            "after": list(self.after),
        }


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side diff. `kind`: equal, replace, delete, insert.

    `old_no`/`new_no` are 1-based line numbers, None where that side has no line.
    """

    kind: str
    old_no: int | None
    old: str | None
    new_no: int | None
    new: str | None


@dataclass(frozen=True)
class Hunk:
    rows: tuple[Row, ...]

    @property
    def old_start(self) -> int:
        return next((r.old_no for r in self.rows if r.old_no is not None), 0)

    @property
    def new_start(self) -> int:
        return next((r.new_no for r in self.rows if r.new_no is not None), 0)


def _opcodes(old: list[str], new: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def _rows(old: list[str], new: list[str]) -> list[Row]:
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag == "equal":
            rows.extend(Row("equal", i1 + k + 1, old[i1 + k], j1 + k + 1, new[j1 + k]) for k in range(i2 - i1))
            continue
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            o = i1 + k if i1 + k < i2 else None
            w = j1 + k if j1 + k < j2 else None
            kind = "replace" if o is not None and w is not None else ("delete" if o is not None else "insert")
            rows.append(
                Row(
                    kind,
                    None if o is None else o + 1,
                    None if o is None else old[o],
                    None if w is None else w + 1,
                    None if w is None else new[w],
                )
            )
    return rows


def _hunks(rows: list[Row], marks: set[int], context: int) -> list[Hunk]:
    """Hunks around changed rows and around rows whose old line is in `marks` (manual sites)."""
    keep = [r.kind != "equal" or (r.old_no in marks) for r in rows]
    wanted = [False] * len(rows)
    for i, k in enumerate(keep):
        if k:
            for j in range(max(0, i - context), min(len(rows), i + context + 1)):
                wanted[j] = True
    hunks: list[Hunk] = []
    cur: list[Row] = []
    for r, w in zip(rows, wanted):
        if w:
            cur.append(r)
        elif cur:
            hunks.append(Hunk(tuple(cur)))
            cur = []
    if cur:
        hunks.append(Hunk(tuple(cur)))
    return hunks


# -- rules and files -----------------------------------------------------------------------


@dataclass
class RuleSummary:
    code: str
    name: str
    family: str
    summary: str
    doc_url: str | None
    advice: str | None  # the one-line advice for this rule on the target
    rewritten: int = 0
    unapplied: int = 0
    manual: int = 0
    kept: int = 0  # info: kept on CUDA by design
    notes: int = 0  # info: noted, nothing to do

    @property
    def found(self) -> int:
        return self.rewritten + self.unapplied + self.manual + self.kept + self.notes

    @property
    def info(self) -> int:
        """Findings that ask nothing of a person (not counted in readiness)."""
        return self.kept + self.notes

    def count(self, outcome: str) -> int:
        """Sites of this rule with `outcome` (one of OUTCOMES)."""
        n: int = getattr(self, _COUNTER[outcome])
        return n

    @property
    def anchor(self) -> str:
        """The docs/rules.md anchor (`#dev001-cuda-method`)."""
        return f"{self.code.lower()}-{self.name}"

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "family": self.family,
            "summary": self.summary,
            "doc_url": self.doc_url,
            "advice": self.advice,
            "found": self.found,
            "rewritten": self.rewritten,
            "unapplied": self.unapplied,
            "manual": self.manual,
            "kept_on_cuda": self.kept,
            "notes": self.notes,
        }


@dataclass
class Readiness:
    """Sites that need work and how many porter did; info findings are counted beside them."""

    sites: int = 0
    ported: int = 0
    unapplied: int = 0
    manual: int = 0
    kept: int = 0  # info findings kept on CUDA by design: not sites
    notes: int = 0  # other info findings: not sites

    @property
    def info(self) -> int:
        return self.kept + self.notes

    @property
    def left(self) -> int:
        """Sites a person still has to look at (manual plus unsafe fixes not applied)."""
        return self.sites - self.ported

    @property
    def share(self) -> float | None:
        """Ported / sites, in [0, 1]; None when there are no CUDA-specific sites."""
        return None if self.sites == 0 else self.ported / self.sites

    @property
    def nothing_automatic(self) -> bool:
        """Sites are left, and none of them is one porter could port (all manual): a tree
        ported already, or code porter has no fix for. A share of 0 % would read as "nothing
        done" there, which a second run over a port is not."""
        return self.sites > 0 and self.ported == 0 and self.unapplied == 0

    def percent(self) -> str:
        s = self.share
        if s is None:
            return "n/a"
        if self.nothing_automatic:
            return "—"
        # never round a port with work left up to 100 %, nor one with progress down to 0 %
        pct = s * 100
        if 0 < pct < 1:
            return "<1%"
        if 99 < pct < 100:
            return ">99%"
        return f"{pct:.0f}%"

    def add(self, outcome: str) -> None:
        if outcome == "kept-on-cuda":
            self.kept += 1
            return
        if outcome == "note":
            self.notes += 1
            return
        self.sites += 1
        if outcome == "rewritten":
            self.ported += 1
        elif outcome == "unapplied":
            self.unapplied += 1
        else:
            self.manual += 1

    def to_dict(self) -> dict:
        return {
            "sites": self.sites,
            "ported": self.ported,
            "unapplied": self.unapplied,
            "manual": self.manual,
            "share": None if self.share is None else round(self.share, 4),
            "kept_on_cuda": self.kept,
            "notes": self.notes,
        }


@dataclass
class Site:
    """A finding with what became of it in this run."""

    finding: Finding
    outcome: str  # one of OUTCOMES
    family: str

    def to_dict(self) -> dict:
        d = self.finding.to_dict()
        d["outcome"] = self.outcome
        d["family"] = self.family
        return d


@dataclass
class FileReport:
    path: str
    status: str  # FileStatus value
    sites: list[Site]
    readiness: Readiness
    original: str | None = None
    new: str | None = None
    reason: str | None = None
    error_line: int | None = None
    suppressed: int = 0
    _rows: list[Row] | None = field(default=None, repr=False)

    @property
    def changed(self) -> bool:
        return self.status == FileStatus.CHANGED.value and self.new is not None

    @property
    def families(self) -> list[str]:
        return sorted({s.family for s in self.sites})

    @property
    def manual_sites(self) -> list[Site]:
        """Sites a person has to act on (no fix, or an unsafe fix not applied)."""
        return [s for s in self.sites if s.outcome in ("unapplied", "manual")]

    @property
    def info_sites(self) -> list[Site]:
        """Info findings: kept on CUDA by design, or notes."""
        return [s for s in self.sites if s.outcome in INFO]

    @property
    def marked_sites(self) -> list[Site]:
        """Sites the diff views mark at their line: every finding whose fix is not in the output.
        A file with no new text (a lint run writes none) holds no fix: its auto-fixable sites were
        left out, and a lint report showed each file as an empty block (twenty-third read)."""
        return [s for s in self.sites if s.outcome != "rewritten" or self.new is None]

    def old_lines(self) -> list[str]:
        return _lines(self.original or "")

    def new_lines(self) -> list[str]:
        return _lines(self.new if self.new is not None else self.original or "")

    def rows(self) -> list[Row]:
        if self._rows is None:
            self._rows = _rows(self.old_lines(), self.new_lines()) if self.original is not None else []
        return self._rows

    def hunks(self, context: int = CONTEXT_LINES) -> list[Hunk]:
        """Changed regions plus the lines of sites not rewritten (work and notes), with context."""
        marks = {s.finding.start.line for s in self.marked_sites}
        return _hunks(self.rows(), marks, context)

    def edits(self) -> list[Edit]:
        if not self.changed:
            return []
        old, new = self.old_lines(), self.new_lines()
        return [
            Edit(i1 + 1, j1 + 1, tuple(old[i1:i2]), tuple(new[j1:j2]))
            for tag, i1, i2, j1, j2 in _opcodes(old, new)
            if tag != "equal"
        ]

    def line_counts(self) -> tuple[int, int]:
        """(added, removed) lines."""
        added = removed = 0
        for r in self.rows():
            if r.kind in ("replace", "delete"):
                removed += 1
            if r.kind in ("replace", "insert"):
                added += 1
        return added, removed

    def status_bits(self) -> list[str]:
        """What a file's summary line says after its line counts: its readiness and what is
        left, where there is any (the HTML and Markdown reports show the same)."""
        rd = self.readiness
        bits = [f"readiness {rd.percent()}"] if rd.sites else []
        if rd.left:
            bits.append(f"{rd.left} left")
        if rd.info:
            bits.append(f"{rd.info} info")
        return bits

    def unified_diff(self, context: int = CONTEXT_LINES) -> str:
        if not self.changed:
            return ""
        before = lines_of(self.original or "")
        after = lines_of(self.new or "")
        name = self.path.lstrip("/")
        text = "".join(_ended(line) for line in patch_lines(before, after, name, context))
        if name.endswith(".ipynb"):  # each hunk named by the notebook cell it changes
            from porter.files.notebooks.diffs import label_hunks

            text = label_hunks(text, self.original or "")
        return text

    def to_dict(self, include_sources: bool = False) -> dict:
        added, removed = self.line_counts()
        d: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "reason": self.reason,
            "error_line": self.error_line,
            "readiness": self.readiness.to_dict(),
            "lines_added": added,
            "lines_removed": removed,
            "suppressed": self.suppressed,
            "findings": [s.to_dict() for s in self.sites],
            "edits": [e.to_dict() for e in self.edits()],
        }
        if include_sources:
            d["original"] = self.original
            d["new"] = self.new
        return d


# -- extra content -------------------------------------------------------------------------


@dataclass
class Section:
    """Extra content a command adds to its report (parity-check results, timings …).

    Every renderer shows `title`, then `text` (plain prose; Markdown renders it as is), then
    `rows` as a table with `columns` as its header. `data` goes into the JSON report only.
    """

    id: str
    title: str
    text: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "columns": list(self.columns),
            "rows": [[c if isinstance(c, (int, float, bool)) or c is None else str(c) for c in r] for r in self.rows],
            "data": self.data,
        }


# -- the model -----------------------------------------------------------------------------


@dataclass
class ReportModel:
    kind: str
    target: str
    settings: dict[str, Any]
    files: list[FileReport]
    rules: list[RuleSummary]
    readiness: Readiness
    counts: dict[str, int]  # scanned, changed, unchanged, skipped, errors
    skipped: dict[str, int]  # reason -> files
    sections: list[Section] = field(default_factory=list)
    # the files no rule checked (a failed file, a Python file past the size porter parses): the
    # readiness counts none of them, so the headline says so (twenty-fourth read)
    not_checked: list[str] = field(default_factory=list)
    # those of them that were checked and ported, but whose port could not be written (`rewrite`)
    not_written: list[str] = field(default_factory=list)
    generated_at: str = ""
    version: str = __version__

    @classmethod
    def from_run(
        cls,
        results: Iterable[FileResult],
        summary: Any = None,
        settings: Settings | None = None,
        kind: str = "rewrite",
        sections: Iterable[Section] = (),
    ) -> ReportModel:
        """Build the model from the runner's output.

        `summary` (a `porter.pipeline.runner.Summary`) is optional: every count is recomputed from the
        results, so a caller that filtered results gets consistent numbers.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown report kind {kind!r}: one of {', '.join(KINDS)}")
        if settings is None:
            raise ValueError("settings are required (the target decides the advice)")
        rules = all_rules()
        target = settings.target
        by_code: dict[str, RuleSummary] = {}
        files: list[FileReport] = []
        total = Readiness()
        counts: Counter = Counter()
        skipped: Counter = Counter()
        results = list(results)
        # a file passed over for its size fails the run (`not_read`): named, as a failed file is
        # ("skipped 1: 3.8 MiB: larger than porter parses" named none: twenty-fourth read)
        unread = {id(r) for r in not_read(results)}
        for res in results:
            counts["scanned"] += 1
            counts[
                {"changed": "changed", "unchanged": "unchanged", "skipped": "skipped", "error": "errors"}[
                    res.status.value
                ]
            ] += 1
            if res.status is FileStatus.SKIPPED:
                skipped[f"{printable(res.path)}: {res.reason}" if id(res) in unread else res.reason or "skipped"] += 1
            sites: list[Site] = []
            ready = Readiness()
            for f in sorted(res.findings, key=Finding.sort_key):
                rule = rules.get(f.code)
                outcome = _outcome(f, kind, settings, rule)
                family = rule.family if rule else f.code.rstrip("0123456789").lower()
                sites.append(Site(f, outcome, family))
                ready.add(outcome)
                total.add(outcome)
                rs = by_code.get(f.code)
                if rs is None:
                    rs = by_code[f.code] = RuleSummary(
                        code=f.code,
                        name=rule.name if rule else f.name,
                        family=family,
                        summary=rule.summary if rule else f.message,
                        doc_url=(rule.doc_url if rule else f.doc_url),
                        advice=(rule.advice_for(target) if rule else None) or f.advice,
                    )
                attr = _COUNTER[outcome]
                setattr(rs, attr, getattr(rs, attr) + 1)
            keep_text = res.status in (FileStatus.CHANGED, FileStatus.UNCHANGED) and (res.changed or sites)
            files.append(
                FileReport(
                    path=res.path,
                    status=res.status.value,
                    sites=sites,
                    readiness=ready,
                    original=_text(res.original_source) if keep_text and res.original_source is not None else None,
                    new=_text(res.new_source) if res.changed and res.new_source is not None else None,
                    reason=res.reason,
                    error_line=res.error_line,
                    suppressed=len(res.suppressed),
                )
            )
        for k in ("scanned", "changed", "unchanged", "skipped", "errors"):
            counts.setdefault(k, 0)
        return cls(
            kind=kind,
            target=target,
            settings=_settings_dict(settings),
            files=files,
            rules=sorted(by_code.values(), key=lambda r: (r.family, r.code)),
            readiness=total,
            counts=dict(counts),
            skipped=dict(sorted(skipped.items())),
            sections=list(sections),
            not_checked=[r.path for r in results if r.status is FileStatus.ERROR or id(r) in unread],
            generated_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        )

    # -- views the renderers share ---------------------------------------------------------

    @property
    def counts_files(self) -> bool:
        """False for a report about no ported files (parity-check): no readiness to show."""
        return self.kind != "parity-check" or bool(self.files)

    def add_section(self, section: Section) -> None:
        self.sections.append(section)

    @property
    def families(self) -> list[str]:
        return sorted({r.family for r in self.rules})

    @property
    def changed_files(self) -> list[FileReport]:
        return [f for f in self.files if f.changed]

    @property
    def files_with_sites(self) -> list[FileReport]:
        return [f for f in self.files if f.sites]

    @property
    def error_files(self) -> list[FileReport]:
        return [f for f in self.files if f.status == FileStatus.ERROR.value]

    def manual_work(self) -> list[tuple[FileReport, Site]]:
        """Every site a person still has to act on, in path/line order."""
        return [(f, s) for f in self.files for s in f.manual_sites]

    def info_findings(self, group: str) -> list[tuple[FileReport, Site]]:
        """The info findings shown under `group` (one of INFO), in path/line order."""
        return [(f, s) for f in self.files for s in f.info_sites if s.outcome == group]

    def shown_files(self) -> list[FileReport]:
        """Files worth a diff view: changed, or with sites a person has to look at."""
        return [f for f in self.files if f.changed or (f.sites and f.original is not None)]

    def readiness_text(self, listed: str = "below") -> str:
        """The readiness sentence, plain (each renderer adds its own emphasis). A run that
        checked less than the tree says so in it: "Readiness: 100%" over a failed file or one
        past the size porter parses read as a full pass (twenty-fourth read). A file whose port
        could not be written is said as such, not as "not checked" (it was); `listed`: where the
        renderer lists them, from the sentence ("below" was said under a terminal's list)."""
        text = self._readiness_sentence()
        unwritten = len(self.not_written)
        unchecked = len(self.not_checked) - unwritten
        if not unchecked and not unwritten:
            return text
        counts = {"checked": unchecked, "written": unwritten}
        files = ", ".join(f"{n} file{'s' if n != 1 else ''} not {what}" for what, n in counts.items() if n)
        of = "checked and written" if unwritten else "checked"
        if text.startswith("Readiness:"):
            head, rest = text.split(" — ", 1)
            return f"{head} of the files {of} ({files}, listed {listed}) — {rest}"
        return f"{text[:-1]} in the files {of}; {files} (listed {listed})."

    def _readiness_sentence(self) -> str:
        r = self.readiness
        info = info_counts(r.kept, r.notes)
        if r.sites == 0:
            if info:
                return f"Nothing left to port: no CUDA-specific site needs work ({info}; no action needed)."
            return "No CUDA-specific sites found."
        verb = "ported automatically" if self.kind == "rewrite" else "portable automatically"
        tail = f" Not counted, no action needed: {info}." if info else ""
        if r.nothing_automatic:
            return (
                "Nothing left that porter can port automatically: "
                f"{r.manual} manual site{'s' if r.manual != 1 else ''} left for a person.{tail}"
            )
        left = f"{r.manual} manual site{'s' if r.manual != 1 else ''} left"
        if r.unapplied:
            left += f", {r.unapplied} unsafe fix{'es' if r.unapplied != 1 else ''} not applied"
        return f"Readiness: {r.percent()} — {r.ported} of {r.sites} CUDA-specific sites {verb}; {left}.{tail}"

    @property
    def ported_label(self) -> str:
        """What the "rewritten" outcome is called for this kind of run."""
        return "rewritten" if self.kind == "rewrite" else "auto-fixable"

    @property
    def title(self) -> str:
        return f"porter {self.kind} report — target {self.target}"

    def to_dict(self, include_sources: bool = False) -> dict:
        return {
            "schema": "porter-report",
            "schema_version": SCHEMA_VERSION,
            "porter_version": self.version,
            "kind": self.kind,
            "generated_at": self.generated_at,
            "target": self.target,
            "settings": self.settings,
            "summary": {
                "files": dict(self.counts),
                "skipped": dict(self.skipped),
                "not_checked": list(self.not_checked),
                "not_written": list(self.not_written),
                "readiness": self.readiness.to_dict(),
                "rules": [r.to_dict() for r in self.rules],
            },
            "files": [f.to_dict(include_sources) for f in self.files],
            "sections": [s.to_dict() for s in self.sections],
        }


def port_not_written(result: FileResult, problem: str) -> FileResult:
    """A file whose port could not be written (read-only, changed on disk) as the report shows it:
    failed, with why; none of its sites ported, its diff not shown (it is not on disk)."""
    return replace(result, status=FileStatus.ERROR, findings=[], new_source=None, reason=f"{problem}; left unchanged")


def info_counts(kept: int, notes: int) -> str:
    """ "3 kept on CUDA by design, 1 note" (empty when both are 0): shared by the renderers."""
    bits = []
    if kept:
        bits.append(f"{kept} kept on CUDA by design")
    if notes:
        bits.append(f"{notes} note{'s' if notes != 1 else ''}")
    return ", ".join(bits)


def _outcome(f: Finding, kind: str, settings: Settings, rule: Rule | None) -> str:
    if f.severity is Severity.INFO and not f.applied:
        # nothing for a person to do: shown under the rule's heading, never counted as work
        return rule.note_group if rule is not None else "note"
    if kind == "rewrite":
        if f.applied:
            return "rewritten"
        return "unapplied" if f.fixable else "manual"
    # lint (and anything else that writes nothing): what rewrite would do with these settings
    if f.applied:
        return "rewritten"
    if f.applicability is Applicability.SAFE or (f.applicability is Applicability.UNSAFE and settings.unsafe_fixes):
        return "rewritten"
    return "unapplied" if f.fixable else "manual"


def _settings_dict(settings: Settings) -> dict[str, Any]:
    return {
        "target": settings.target,
        "select": list(settings.select),
        "ignore": list(settings.ignore),
        "extend_select": list(settings.extend_select),
        "unsafe_fixes": settings.unsafe_fixes,
        "annotate": settings.annotate,
        "exclude": list(settings.exclude),
        "portable": settings.portable,
    }


# lines are cut as findings number them (CRLF, LF, a lone CR), not by str.splitlines (which also
# ends one at a form feed or U+2028): a report then quoted another line than the finding's, and
# marked each line of a CR-only file "No newline at end of file"


def _lines(text: str) -> list[str]:
    """`text`'s lines without their ends (as str.splitlines gives them, cut where findings are)."""
    parts = LINE_BREAK.split(text)
    if parts[-1] == "":
        parts.pop()
    return parts


def patch_lines(before: list[str], after: list[str], name: str, context: int = CONTEXT_LINES) -> list[str]:
    """The unified diff of `name`'s two versions, its headers as git writes them: a name with a
    control character or a newline quoted (one header line, never a terminal escape), and one
    holding a space ended by a tab (`patch -p1` reads a name up to white space but for the tab,
    and found no file `a/sub` for `a/sub dir/m.py`: nineteenth read)."""
    lines = list(difflib.unified_diff(before, after, git_quoted(f"a/{name}"), git_quoted(f"b/{name}"), n=context))
    if " " in name and lines:
        lines[0], lines[1] = lines[0][:-1] + "\t\n", lines[1][:-1] + "\t\n"
    return lines


def _ended(line: str) -> str:
    """A line of a unified diff, ended by LF (a lone CR's line too); a last line without an end
    gets diff's marker."""
    if line.endswith("\n"):
        return line
    if line.endswith("\r"):
        return line[:-1] + "\n"
    return line + "\n\\ No newline at end of file\n"
