"""The JSON report: findings, edits and summary, under a versioned schema.

The schema lives in `porter/report/schema/report-v1.json` and is described in
docs/report-schema.md. `schema_version` changes only when a field is removed or changes
meaning; new optional fields may appear within a version.
"""

from __future__ import annotations

import json
from importlib import resources

from porter.core.textsafe import json_document
from porter.report.model import SCHEMA_VERSION, ReportModel


def render_json(model: ReportModel, *, include_sources: bool = False, indent: int | None = 2) -> str:
    return (
        json_document(json.dumps(model.to_dict(include_sources=include_sources), indent=indent, ensure_ascii=False))
        + "\n"
    )


def schema(version: int = SCHEMA_VERSION) -> dict:
    """The JSON Schema (draft 2020-12) of report version `version`."""
    text = (resources.files("porter.report") / "schema" / f"report-v{version}.json").read_text("utf-8")
    return json.loads(text)
