"""Reports: one model of a run, several renderers (terminal, HTML, Markdown, JSON).

    from porter.report import ReportModel, write_report
    model = ReportModel.from_run(results, summary, settings, kind="lint")
    write_report(Path("port.html"), model)   # renderer chosen by suffix: .html .md .json

A command with content of its own (parity-check) adds `Section`s to the model; every
renderer shows them.
"""

from __future__ import annotations

from pathlib import Path

from porter.pipeline.writer import write_output
from porter.report.model import SCHEMA_VERSION, FileReport, ReportModel, Section, port_not_written

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


def report_format(path: Path | str) -> str:
    """The format a report path asks for, by how its name ends; ValueError naming the choices
    otherwise. (`Path.suffix` of `.html` is empty, a hidden file's name: `--report .html` was
    refused as "must end in .html", thirty-fifth read.)"""
    try:
        return FORMATS[name_suffix(path)]
    except KeyError:
        raise ValueError(f"report file {str(path)!r} must end in .html, .md or .json") from None


def name_suffix(path: Path | str) -> str:
    """How a file's name ends, from its last dot, lower-cased: `.html` for `.html` itself, where
    `Path.suffix` is empty (a hidden file's name)."""
    name = Path(path).name.lower()
    return name[name.rfind(".") :] if "." in name else ""


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
    """Render `model` in the format the suffix names and write it (UTF-8) as every file the user
    names for output is (`write_output`); returns the path. Its own temporary-and-rename replaced
    a FIFO (`mkfifo r.md`: the reader waited for good), made a 0600 report 0644 and could not write
    a name of 245 bytes or more, where `-o` writes into the FIFO, keeps the bits, cuts the
    temporary's name (thirty-first read)."""
    path = Path(path)
    if path.is_dir():  # first: a folder is not a file of another suffix (as `-o`; twenty-eighth read)
        raise IsADirectoryError(21, "is a folder", str(path))
    write_output(path, render(model, report_format(path)))
    return path


__all__ = [
    "FORMATS",
    "SCHEMA_VERSION",
    "FileReport",
    "ReportModel",
    "Section",
    "port_not_written",
    "render",
    "report_format",
    "write_report",
]
