"""`gitlab`: GitLab Code Quality (a Code Climate subset), a JSON array of issues.

https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
"""

from __future__ import annotations

from porter.core.findings import Severity
from porter.lint.fingerprint import identity_path
from porter.lint.formats.jsonfmt import indented
from porter.lint.model import LintRun
from porter.core.textsafe import located

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def render(run: LintRun) -> str:
    issues = (
        {
            "type": "issue",
            "check_name": f.code,
            "description": f"{f.code}: {f.message}",
            "categories": ["Compatibility"],
            "severity": _SEVERITY[f.severity],
            "fingerprint": run.fingerprint(f),
            "location": {
                "path": located(identity_path(f.path)),
                "lines": {"begin": f.start.line, "end": f.end.line},
            },
        }
        for f in run.findings
    )
    return indented(issues) + "\n"  # `json.dumps(indent=2)`'s bytes, each issue made as written (as sarif)
