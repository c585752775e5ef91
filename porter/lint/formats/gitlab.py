"""`gitlab`: GitLab Code Quality (a Code Climate subset), a JSON array of issues.

https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
"""

from __future__ import annotations

import posixpath

from porter.core.findings import Finding, Severity
from porter.lint.fingerprint import identity_path
from porter.lint.formats.jsonfmt import indented
from porter.lint.model import LintRun
from porter.core.textsafe import located_name

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _location_path(shown: str) -> str:
    """`location.path` (required) for the file `shown`: its name where it is UTF-8, else the
    nearest folder whose name is (`.` at the top): no text names those bytes, and `shown`
    (`b\\xfe.py`) is the name of another file, the one whose name holds a backslash."""
    name = located_name(shown)
    while name is None:
        shown = posixpath.dirname(shown)
        name = located_name(shown)
    return name or "."


def unlocated(run: LintRun) -> list[str]:
    """The files whose issues cannot give their own `location.path` (names not UTF-8)."""
    return sorted({f.path for f in run.findings if located_name(identity_path(f.path)) is None})


def _description(f: Finding) -> str:
    """The finding's text, led by its file as the text formats show it where `location.path`
    cannot name that file (twenty-third read)."""
    text = f"{f.code}: {f.message}"
    if located_name(identity_path(f.path)) is None:
        return f"{f.path}:{f.start.line}:{f.start.column + 1}: {text}"
    return text


def render(run: LintRun) -> str:
    issues = (
        {
            "type": "issue",
            "check_name": f.code,
            "description": _description(f),
            "categories": ["Compatibility"],
            "severity": _SEVERITY[f.severity],
            "fingerprint": run.fingerprint(f),
            "location": {
                "path": _location_path(identity_path(f.path)),
                "lines": {"begin": f.start.line, "end": f.end.line},
            },
        }
        for f in run.findings + run.unchecked_findings()  # a file not checked is a "major" issue, as an error
    )
    return indented(issues) + "\n"  # `json.dumps(indent=2)`'s bytes, each issue made as written (as sarif)
