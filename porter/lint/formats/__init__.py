"""Output formats for `porter lint --output-format`: one module each, `render(run) -> str`.

A format's module is imported when that format is asked for (junit's ElementTree and sarif's
tables are no part of a `--output-format json` run)."""

from __future__ import annotations

import importlib

from porter.core.textsafe import json_inert
from porter.lint.model import LintRun

# format -> (module under porter.lint.formats, its function)
FORMATS: dict[str, tuple[str, str]] = {
    "full": ("text", "render_full"),
    "concise": ("text", "render_concise"),
    "json": ("jsonfmt", "render_json"),
    "json-lines": ("jsonfmt", "render_json_lines"),
    "sarif": ("sarif", "render"),
    "github": ("github", "render"),
    "gitlab": ("gitlab", "render"),
    "junit": ("junit", "render"),
}

TEXT_FORMATS = ("full", "concise")
JSON_FORMATS = ("json", "json-lines", "sarif", "gitlab")


def render(run: LintRun, output_format: str) -> str:
    module, function = FORMATS[output_format]
    text: str = getattr(importlib.import_module(f"{__name__}.{module}"), function)(run)
    # a JSON document's `##vso[` (a name's, a message's) as `\u0023#vso[`: the same data to a
    # reader, and no command to a CI log that shows it (nineteenth read)
    return json_inert(text) if output_format in JSON_FORMATS else text
