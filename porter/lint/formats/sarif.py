"""`sarif`: SARIF 2.1.0 with rule metadata (help text, and a help URI into porter's shipped docs),
for GitHub code scanning.

https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import quote

from porter.core.findings import Applicability, Finding, Severity
from porter.core.textsafe import name_bytes
from porter.lint.formats.jsonfmt import indented
from porter.lint.model import TOOL_NAME, LintRun, rule_info

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@cache  # a file's findings share its name: a result wrote it twice (location, fix), each time anew
def _uri(path: str) -> tuple[str, str | None]:
    """A URI reference (RFC 3986): `#`, `%`, spaces and the like percent-encoded; the bytes of
    a name that is not UTF-8 (shown as `\\xNN`) encoded as the bytes they are."""
    raw = name_bytes(Path(path).as_posix())
    if Path(path).is_absolute():
        return "file://" + quote(raw, safe="/"), None
    return quote(raw, safe="/"), "%SRCROOT%"


def _rule(code: str, target: str) -> dict:
    info = rule_info(code)
    # shortDescription is the one-sentence summary; the cases it covers lead the full description and help
    help_text = "\n\n".join(t for t in (info.covers, info.rationale) if t) or info.summary
    return {
        "id": code,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": help_text},
        "help": {
            "text": f"{help_text}\n\nRun `porter explain {code}` for the full rule "
            f"(porter's shipped docs: {info.doc_url}).",
            "markdown": f"{help_text}\n\nRun `porter explain {code}` for the full rule, "
            f"or read [{code} {info.name}]({info.doc_url}) in porter's shipped docs.",
        },
        "helpUri": info.doc_url,
        "defaultConfiguration": {"level": _LEVEL[info.severity]},
        "properties": {"tags": ["porter", info.family, f"target:{target}"]},
    }


def _region(f: Finding) -> dict:
    return {
        "startLine": f.start.line,
        "startColumn": f.start.column + 1,
        "endLine": f.end.line,
        "endColumn": f.end.column + 1,
    }


def _artifact(path: str) -> dict:
    uri, base = _uri(path)
    return {"uri": uri, "uriBaseId": base} if base else {"uri": uri}


def _location(f: Finding) -> dict:
    return {"physicalLocation": {"artifactLocation": _artifact(f.path), "region": _region(f)}}


def _notification(r) -> dict:
    physical: dict = {"artifactLocation": _artifact(r.path)}
    if r.error_line:
        physical["region"] = {"startLine": r.error_line}
    return {
        "level": "error",
        "message": {"text": f"{r.path}: {r.reason}"},
        "locations": [{"physicalLocation": physical}],
    }


def _fix_not_written(path: str, why: str) -> dict:
    """`lint --fix` could not write `path`: its findings are listed, as in the file, but the run
    did not do what it was asked ("executionSuccessful": true was said beside exit 2; thirty-first read)."""
    return {
        "level": "error",
        "message": {"text": f"{path}: its fixes were not written ({why}); its findings are the file's as it is"},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(path)}}],
    }


def _result(run: LintRun, f: Finding, index: int) -> dict:
    text = f.message
    if f.advice:
        text += f" — {f.advice}"
    result = {
        "ruleId": f.code,
        "ruleIndex": index,
        "level": _LEVEL[f.severity],
        "message": {"text": text},
        "locations": [_location(f)],
        "partialFingerprints": {"porterFingerprint/v1": run.fingerprint(f)},
        "properties": {"applicability": f.applicability.value, "fixable": f.applied},
    }
    if f.replacement is not None and f.applicability is not Applicability.MANUAL:
        artifact = _artifact(f.path)
        result["fixes"] = [
            {
                "description": {"text": f"{f.applicability.value} fix: {f.message}"},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact,
                        "replacements": [{"deletedRegion": _region(f), "insertedContent": {"text": f.replacement}}],
                    }
                ],
            }
        ]
    return result


def render(run: LintRun) -> str:
    codes = sorted({f.code for f in run.findings})
    index = {c: i for i, c in enumerate(codes)}
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": run.version,
                        "semanticVersion": run.version,
                        "rules": [_rule(c, run.settings.target) for c in codes],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": (_result(run, f, index[f.code]) for f in run.findings),
                "invocations": [
                    {
                        # a file not checked, or whose --fix could not be written (the run exits 2)
                        "executionSuccessful": not (run.unchecked or run.fixes_not_written),
                        "toolExecutionNotifications": [_notification(r) for r in run.unchecked]
                        + [_fix_not_written(path, why) for path, why in run.fixes_not_written.items()],
                    }
                ],
            }
        ],
    }
    # `json.dumps(indent=2)`'s bytes by the json format's encoder, each result's dict made as it
    # is written: json's own encoder, given an indent, is pure Python and listed ~100 chunks a
    # result, beside every result's dict (100,000 findings: 1.5 GB and 91 s against the json
    # format's 0.34 GB and 25 s: twenty-second read)
    return indented(doc) + "\n"
