"""The codes lint's formats emit that are no rule (PORT001, PORT100): declared once here, below
both the rule docs (`ruledocs`, which list them in docs/rules.md) and lint's formats
(`porter.lint.model`), so `porter rules`, `porter explain`, docs/rules.md and SARIF read the same
data."""

from __future__ import annotations

from dataclasses import dataclass

from porter.config.ruledata import doc_uri
from porter.core.findings import Severity

UNUSED_CODE = "PORT100"
UNUSED_NAME = "unused-suppression"
NOT_CHECKED_CODE = "PORT001"  # a file no rule checked, in the formats that are lists of findings
NOT_CHECKED_NAME = "not-checked"


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    rationale: str
    severity: Severity
    doc_url: str
    family: str
    covers: str = ""  # every case the rule finds (the summary is one sentence)


_META = {
    UNUSED_CODE: RuleInfo(
        code=UNUSED_CODE,
        name=UNUSED_NAME,
        summary="A suppression comment that silences no finding",
        rationale=(
            "A `# porter: ignore[...]` or `# noqa: CODE` comment whose codes match no finding on "
            "its line hides nothing today and would hide a new CUDA call tomorrow. Remove the "
            "stale code (or the whole comment). Reported with `--report-unused-ignores`."
        ),
        severity=Severity.WARNING,
        doc_url=doc_uri("ci.md", "suppressing-a-finding"),
        family="meta",
    ),
    NOT_CHECKED_CODE: RuleInfo(
        code=NOT_CHECKED_CODE,
        name=NOT_CHECKED_NAME,
        summary="A file no rule checked (a syntax error, unreadable, or past the size porter parses)",
        rationale=(
            "A file porter could not check fails the run (exit 1), as ruff's E902: its CUDA code is "
            "neither reported nor ported. Fix the file, or exclude it if it is generated."
        ),
        severity=Severity.ERROR,
        doc_url=doc_uri("ci.md", "exit-codes"),
        family="meta",
    ),
}


def meta_info(code: str) -> RuleInfo | None:
    """A code the formats emit that is no rule (PORT001, PORT100), or None: `porter explain` and the
    SARIF help that names it read the same data."""
    return _META.get(code)


def meta_codes() -> list[RuleInfo]:
    """Every meta code, by code: `porter rules` and docs/rules.md list them after the rules."""
    return sorted(_META.values(), key=lambda info: info.code)


def meta_codes_named(bad: list[str]) -> tuple[list[str], str]:
    """Of the codes no rule has (`ruledata.unknown_codes`), those that name meta codes only, and
    what a usage error says of them. `porter rules` lists PORT001 and PORT100 after the rules, so
    "unknown rule code or prefix: PORT100 (see `porter rules`)" sent the reader to a list that
    holds it (twenty-seventh read)."""
    meta = [b for b in bad if b and any(code.startswith(b.upper()) for code in _META)]
    named = sorted({code for b in meta for code in _META if code.startswith(b.upper())})
    pages = " and ".join(f"`porter explain {code}`" for code in named)
    verb = "say" if len(named) > 1 else "says"
    said = f"meta code, not a rule: no rule option takes it ({pages} {verb} when lint reports it)"
    return meta, f"{', '.join(meta)}: {said}"
