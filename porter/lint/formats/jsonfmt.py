"""`json` (one array) and `json-lines` (one object a line) — `Finding.to_dict()` plus
`fixable` (a fix `--fix` applies under these settings) and `fingerprint` (baseline identity).
Columns are 0-based, as in every porter JSON output."""

from __future__ import annotations

import json

from porter.lint.model import LintRun


def _record(run: LintRun, f) -> dict:
    d = f.to_dict()
    d["fixable"] = f.applied
    d["fingerprint"] = run.fingerprint(f)
    return d


def render_json(run: LintRun) -> str:
    return json.dumps([_record(run, f) for f in run.findings], indent=2) + "\n"


def render_json_lines(run: LintRun) -> str:
    return "".join(json.dumps(_record(run, f)) + "\n" for f in run.findings)
