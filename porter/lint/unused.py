"""`--report-unused-ignores`: suppression comments that silenced nothing in this run.

The engine records every finding a comment silenced (`FileResult.suppressed`); a code in a
comment that matched none of them is reported as PORT100. A `# noqa:` comment is shared with
other linters, so only its porter codes are checked (`# noqa: E501` is flake8's business).
File-level `# porter: ignore-file[...]` pragmas are not checked.
"""

from __future__ import annotations

from porter.core.findings import Applicability, FileResult, FileStatus, Finding, Position, Severity
from porter.config.metacodes import UNUSED_CODE, UNUSED_NAME, meta_codes_named
from porter.lint.model import rule_info
from porter.config.ruledata import all_rules, rule_enabled, unknown_codes
from porter.config.settings import Settings
from porter.core.suppressions import ALL, scan


def _enabled_prefix(code: str, settings: Settings) -> bool:
    return any(
        rule.code.startswith(code)
        and rule_enabled(rule, settings.target, settings.select, settings.ignore, settings.extend_select)
        for rule in all_rules().values()
    )


def unused_suppressions(result: FileResult, settings: Settings) -> list[Finding]:
    source = result.original_source
    if source is None or result.status is FileStatus.ERROR:
        return []
    sup = scan(source)
    if sup.ignore_file or not sup.comments:
        return []
    used = _used(result, sup)
    out: list[Finding] = []
    for c in sup.comments:
        if c.file_level:
            continue
        for message in _problems(c, used, settings):
            out.append(
                Finding(
                    code=UNUSED_CODE,
                    name=UNUSED_NAME,
                    message=message[0].upper() + message[1:],
                    path=result.path,
                    start=Position(c.line, c.column),
                    end=Position(c.line, c.end_column),
                    severity=Severity.WARNING,
                    applicability=Applicability.MANUAL,
                    target=settings.target,
                    advice="Remove the stale code from the comment, or the comment itself.",
                    doc_url=rule_info(UNUSED_CODE).doc_url,
                )
            )
    return out


def _used(result: FileResult, sup) -> set[tuple[int, str]]:
    """(line, pattern) of every suppression that silenced a finding (on its first or last line)."""
    used: set[tuple[int, str]] = set()
    for f in result.suppressed:
        lines = {f.start.line, f.end.line}
        for line in lines:
            for pattern in sup.by_line.get(line, ()):
                if pattern == ALL or f.code.startswith(pattern):
                    used.add((line, pattern))
    return used


def _problems(c, used: set[tuple[int, str]], settings: Settings) -> list[str]:
    """What is wrong with one suppression comment: blanket and unused, or each code it names
    that is unknown (porter's own comments only: a `# noqa` code may be another tool's), not
    enabled for the target, or silences nothing."""
    label = "`# porter: ignore`" if c.kind == "porter" else "`# noqa`"
    problems: list[str] = []
    if not c.codes:
        if (c.line, ALL) not in used:
            problems.append(f"unused blanket {label} suppression (it silences nothing on this line)")
    for code in c.codes:
        known = not unknown_codes((code,))
        if not known:
            if c.kind == "noqa":
                continue  # another tool's code
            meta = meta_codes_named([code])[0]  # (PORT100 is no rule, but not unknown: twenty-seventh read)
            problems.append(
                f"{label} names {code}, a meta code, not a rule" if meta else f"{label} names unknown rule code {code}"
            )
        elif (c.line, code) in used:
            continue
        elif not _enabled_prefix(code, settings):
            problems.append(f"{label} names {code}, which is not enabled for target {settings.target}")
        else:
            problems.append(f"unused {label} code {code} (no {code} finding on this line)")
    return problems
