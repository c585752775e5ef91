"""Reports: one model of a run, several renderers (terminal, HTML, Markdown, JSON).

    from porter.report import ReportModel, write_report
    model = ReportModel.from_run(results, summary, settings, kind="lint")
    write_report(Path("port.html"), model)   # renderer chosen by suffix: .html .md .json

A command with content of its own (parity-check) adds `Section`s to the model; every
renderer shows them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from porter.core.fileflags import refuse_a_flagged_replace
from porter.pipeline.writer import make_parent, removed_on_error
from porter.report.model import SCHEMA_VERSION, FileReport, ReportModel, Section

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


def report_format(path: Path | str) -> str:
    """The format a report path asks for; ValueError naming the choices otherwise."""
    suffix = Path(path).suffix.lower()
    try:
        return FORMATS[suffix]
    except KeyError:
        raise ValueError(f"report file {str(path)!r} must end in .html, .md or .json") from None


def render(model: ReportModel, fmt: str) -> str:
    if fmt == "html":
        from porter.report.html import render_html

        return render_html(model)
    if fmt == "markdown":
        from porter.report.markdown import render_markdown

        return render_markdown(model)
    if fmt == "json":
        from porter.report.jsonreport import render_json

        return render_json(model)
    raise ValueError(f"unknown report format {fmt!r}")


def write_report(path: Path | str, model: ReportModel) -> Path:
    """Render `model` in the format the suffix names and write it (UTF-8); returns the path."""
    path = Path(path)
    if path.is_dir():  # first: a folder is not a file of another suffix (as `-o`; twenty-eighth read)
        raise IsADirectoryError(21, "is a folder", str(path))
    text = render(model, report_format(path))
    make_parent(path)
    refuse_a_flagged_replace(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with removed_on_error(tmp):
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as a plain open() would have made it
        os.replace(tmp, path)
    return path


__all__ = [
    "FORMATS",
    "SCHEMA_VERSION",
    "FileReport",
    "ReportModel",
    "Section",
    "render",
    "report_format",
    "write_report",
]
