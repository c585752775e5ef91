"""`github`: GitHub Actions workflow commands, one annotation per finding.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

from porter.core.findings import FileResult, Finding, Severity
from porter.lint.model import LintRun
from porter.core.textsafe import controls_escaped, located_name

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


def _file_property(name: str | None) -> str | None:
    """`name` as a `file` property the runner reads back as the name, or None where no escape
    carries it: a workflow command has escapes for `%`, CR, LF, `:` and `,` only, and a control
    character, `##[` (a command anywhere in a line) or a bidirectional control is shown
    escaped (`\\x09`, `\\x23#`), which names no file; nor does any text a name that is not
    UTF-8 (`name` None)."""
    if name is None:
        return None
    escaped = _escaped(name).replace(":", "%3A").replace(",", "%2C")
    return escaped if controls_escaped(escaped) == escaped else None


def _place(f: Finding) -> list[str]:
    """`line`, `col`, `endLine`, `endColumn` (1-based; columns counted in code points, as porter's
    columns and its SARIF's `columnKind` are: GitHub names no unit) of a finding on one line; no
    columns for one over several lines, which GitHub's annotations do not take ("cannot be sent
    when startLine and endLine are different values", the Checks API and @actions/core say):
    they were written for every finding (twenty-fifth read)."""
    start, end = f.start, f.end
    if start.line != end.line:
        return [f"line={start.line}", f"endLine={end.line}"]
    return [f"line={start.line}", f"col={start.column + 1}", f"endLine={end.line}", f"endColumn={end.column + 1}"]


def _annotation(f: Finding, fix: str) -> str:
    where = _file_property(located_name(f.path))
    message = f"{f.code} {f.message}{fix}"
    props = [f"title={escape_property(f'porter ({f.code})')}"]
    if where is None:
        # (no `file`: the annotation names its file in its text, as the text formats show it;
        # a `file` it could not carry attached it to no file: twenty-second read's leftover)
        message = f"{f.path}:{f.start.line}:{f.start.column + 1}: {message}"
    else:
        props += [f"file={where}", *_place(f)]
    return f"::{_LEVEL[f.severity]} {','.join(props)}::{escape_data(message)}"


def _not_checked(result: FileResult) -> str:
    """A file no rule checked fails the run (exit 1) as a finding does, so it is an annotation
    too: a step that failed on one showed no annotation, only stderr's line (twenty-fourth read)."""
    props = [f"title={escape_property('porter (not checked)')}"]
    where = _file_property(located_name(result.path))
    if where is not None:
        props.append(f"file={where}")
        props += [f"line={result.error_line}"] if result.error_line else []
    message = f"{result.path}: {result.reason or 'not checked'} (not checked)"
    return f"::error {','.join(props)}::{escape_data(message)}"


def render(run: LintRun) -> str:
    lines = [_annotation(f, " [fix available]" if f.applied else "") for f in run.findings]
    lines += [_not_checked(r) for r in run.unchecked]
    return "".join(line + "\n" for line in lines)
