"""`github`: GitHub Actions workflow commands, one annotation per finding.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

from porter.core.findings import Severity
from porter.lint.model import LintRun
from porter.core.textsafe import controls_escaped, located

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escaped(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_data(text: str) -> str:
    # control characters other than CR and LF would reach the log, which renders ANSI escapes
    return controls_escaped(_escaped(text))


def escape_property(text: str) -> str:
    # `:` and `,` the runner's way before `controls_escaped`, whose line-start `::` escape read
    # `::x.py` as `\x3a:x.py` (`\x3a%3Ax.py`: an annotation on no file; twentieth read)
    return controls_escaped(_escaped(text).replace(":", "%3A").replace(",", "%2C"))


def render(run: LintRun) -> str:
    lines = []
    for f in run.findings:
        props = ",".join(
            f"{k}={escape_property(str(v))}"
            for k, v in (
                ("title", f"porter ({f.code})"),
                ("file", located(f.path)),
                ("line", f.start.line),
                ("col", f.start.column + 1),
                ("endLine", f.end.line),
                ("endColumn", f.end.column + 1),
            )
        )
        fix = " [fix available]" if f.applied else ""
        lines.append(f"::{_LEVEL[f.severity]} {props}::{escape_data(f'{f.code} {f.message}{fix}')}")
    return "".join(line + "\n" for line in lines)
