"""`--statistics`: how many findings of each code, most frequent first (as ruff prints it)."""

from __future__ import annotations

import json
from collections import Counter

from porter.lint.model import LintRun, rule_info

# the output formats the counts are printed in: text, or JSON. ruff 0.17.6 refuses the others
# ("Unsupported serialization format for statistics: Sarif"); porter printed its text table into
# `-o porter.sarif`, unsaid (thirty-fourth read)
STATISTICS_FORMATS = ("full", "concise", "json", "json-lines")


def statistics(run: LintRun) -> list[dict]:
    """Rows per code, the files not checked among them as PORT001 (as ruff counts its syntax errors):
    the json format lists them, so the counts agree with it (a run that failed on one counted
    nothing, twenty-fourth read)."""
    findings = run.findings + run.unchecked_findings()
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if f.applied)
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        info = rule_info(code)
        rows.append(
            {"code": code, "name": info.name, "count": n, "fixable": fixable[code], "severity": info.severity.value}
        )
    return rows


def render_statistics(run: LintRun, output_format: str) -> str:
    rows = statistics(run)
    if output_format in ("json", "json-lines"):
        if output_format == "json":
            return json.dumps(rows, indent=2) + "\n"
        return "".join(json.dumps(r) + "\n" for r in rows)
    if not rows:
        return ""
    width = max(len(str(r["count"])) for r in rows)
    code_w = max(len(r["code"]) for r in rows)
    lines = []
    for r in rows:
        mark = "[*]" if r["fixable"] == r["count"] else ("[-]" if r["fixable"] else "   ")
        lines.append(f"{r['count']:>{width}}\t{r['code']:<{code_w}}\t{mark} {r['name']}")
    return "\n".join(lines) + "\n"
