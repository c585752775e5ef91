"""What one `porter lint` run found, in the shape every output format reads."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from porter import __version__
from porter.core.findings import Applicability, FileResult, Finding, Position, Severity
from porter.config.metacodes import NOT_CHECKED_CODE, NOT_CHECKED_NAME, RuleInfo, meta_info
from porter.config.ruledata import all_rules, doc_uri
from porter.config.settings import Settings
from porter.files.sites import split_lines
from porter.lint.fingerprint import identity_path

TOOL_NAME = "porter"


def rule_info(code: str) -> RuleInfo:
    if (meta := meta_info(code)) is not None:
        return meta
    rule = all_rules().get(code)
    if rule is None:  # a code from a newer rule file than this process loaded
        return RuleInfo(code, code.lower(), code, "", Severity.WARNING, doc_uri("rules.md"), "unknown")
    return RuleInfo(
        rule.code, rule.name, rule.summary, rule.rationale, rule.severity, rule.doc_url, rule.family, rule.covers
    )


@dataclass
class LintRun:
    """Findings to report (after --fix and --baseline), and what the run did besides."""

    settings: Settings
    results: list[FileResult]
    findings: list[Finding]  # what is left to report, sorted by path and position
    fixed: list[Finding] = field(default_factory=list)  # applied by --fix
    pending: list[tuple] = field(default_factory=list)  # --fix: (path, ported bytes, new bytes) to write
    # --fix: pending path -> (first result, its settings, report_unused, fingerprint base), to
    # report the file as it is when its fix cannot be written (porter.lint.not_written)
    unwritten: dict = field(default_factory=dict, repr=False, compare=False)
    # --fix: each file whose fixes could not be written -> why (its findings are the file's as it is)
    fixes_not_written: dict[str, str] = field(default_factory=dict)
    baselined: int = 0  # findings hidden because the baseline already has them
    stale_baseline: int = 0  # baseline entries no longer found (fixed since)
    fix: bool = False
    sources: dict[str, bytes] = field(default_factory=dict)  # path -> the text positions refer to
    fingerprints: dict[int, str] = field(default_factory=dict)  # id(finding) -> fingerprint
    version: str = __version__
    _unchecked_findings: list[Finding] | None = field(default=None, repr=False, compare=False)
    _lines: dict[str, list[str]] = field(
        default_factory=dict, repr=False, compare=False
    )  # path -> its lines, once split

    @property
    def errors(self) -> list[FileResult]:
        from porter.core.findings import FileStatus

        return [r for r in self.results if r.status is FileStatus.ERROR]

    @property
    def unread(self) -> list[FileResult]:
        """Python files and notebooks passed over for their size (porter.core.reading.not_read)."""
        from porter.core.reading import not_read

        return not_read(self.results)

    @property
    def unchecked(self) -> list[FileResult]:
        """The files no rule checked: errors (unreadable, a syntax error) and those passed over
        for their size. Each fails the run (exit 1), so each format that can say a file was not
        checked says it (JUnit's error, SARIF's notification): a file over the size said "no
        findings" there, a pass (twenty-fourth read)."""
        return self.errors + self.unread

    def unchecked_findings(self) -> list[Finding]:
        """Each file `unchecked` names as a PORT001 finding (at its syntax error's line, else line 1),
        with a fingerprint of its code and path: for the formats whose documents are lists of
        findings (json, json-lines, gitlab), where a run that failed on such a file read `[]`, a
        pass, and only stderr named it (twenty-fourth read)."""
        made = self._unchecked_findings
        if made is None:
            made = self._unchecked_findings = [_not_checked(r, self.settings.target) for r in self.unchecked]
            for f in made:
                key = f"{NOT_CHECKED_CODE}\0{identity_path(f.path)}".encode("utf-8", "surrogateescape")
                self.fingerprints[id(f)] = hashlib.sha256(key).hexdigest()
        return made

    def failing(self, fail_on: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity.rank >= fail_on.rank]

    def fingerprint(self, finding: Finding) -> str:
        return self.fingerprints[id(finding)]

    def line_text(self, path: str, line: int) -> str:
        lines = self._lines.get(path)
        if lines is None:
            src = self.sources.get(path)
            if src is None:
                return ""
            # split once per file, not once per finding: `full` shows a line of each
            # lines end where Python's tokenizer ends them (CR LF, CR, LF), not at the form
            # feeds and separators `str.splitlines` also splits at: the finding's line is the
            # one shown; a UTF-8 BOM is not part of line 1, as for the tokenizer that counts the
            # columns (it was shown as `�`, every caret of line 1 a column left: twenty-eighth read)
            lines = self._lines[path] = split_lines(src.decode("utf-8-sig", "replace"))
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def fixable_now(self, finding: Finding) -> bool:
        """A fix `--fix` would apply under these settings (safe, or unsafe with --unsafe-fixes)."""
        return finding.applied

    def hidden_unsafe(self) -> int:
        from porter.core.findings import Applicability

        return sum(1 for f in self.findings if f.applicability is Applicability.UNSAFE and not f.applied)


def _not_checked(result: FileResult, target: str) -> Finding:
    info = rule_info(NOT_CHECKED_CODE)
    at = Position(result.error_line or 1, 0)
    reason = result.reason or "not checked"
    return Finding(
        code=NOT_CHECKED_CODE,
        name=NOT_CHECKED_NAME,
        message=f"{reason} (not checked)",
        path=result.path,
        start=at,
        end=at,
        severity=Severity.ERROR,
        applicability=Applicability.MANUAL,
        target=target,
        advice=info.rationale,
        doc_url=info.doc_url,
    )
