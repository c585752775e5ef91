"""Output formats for `porter lint --output-format`: one module each, `render(run) -> str`."""

from __future__ import annotations

from collections.abc import Callable

from porter.lint.formats import github, gitlab, jsonfmt, junit, sarif, text
from porter.lint.model import LintRun

FORMATS: dict[str, Callable[[LintRun], str]] = {
    "full": text.render_full,
    "concise": text.render_concise,
    "json": jsonfmt.render_json,
    "json-lines": jsonfmt.render_json_lines,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
    "junit": junit.render,
}

TEXT_FORMATS = ("full", "concise")


def render(run: LintRun, output_format: str) -> str:
    return FORMATS[output_format](run)
