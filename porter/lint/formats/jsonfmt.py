"""`json` (one array) and `json-lines` (one object a line) — `Finding.to_dict()` plus
`fixable` (a fix `--fix` applies under these settings) and `fingerprint` (baseline identity).
Columns are 0-based, as in every porter JSON output."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from types import GeneratorType
from typing import Any

from porter.lint.model import LintRun


def _record(run: LintRun, f) -> dict:
    d = f.to_dict()
    d["fixable"] = f.applied
    d["fingerprint"] = run.fingerprint(f)
    return d


def render_json(run: LintRun) -> str:
    findings = run.findings + run.unchecked_findings()  # a file not checked is no pass
    if not findings:
        return "[]\n"
    return "[\n  " + ",\n  ".join(_finding_json(run, f) for f in findings) + "\n]\n"


def _finding_json(run: LintRun, f) -> str:
    """`indented(_record(run, f), "  ")`, character for character, written field by field: the
    generic walk over each finding's dict was most of a warm `--output-format json` run's
    rendering. A field of another type than a finding's (a str, an int, a bool or None) is
    written by the generic walk."""
    texts = (f.code, f.name, f.message, f.path, f.severity.value, f.applicability.value, f.target, run.fingerprint(f))
    optional = (f.replacement, f.original, f.advice, f.doc_url)
    numbers = (f.start.line, f.start.column, f.end.line, f.end.column)
    if not (
        set(map(type, texts)) == _STR
        and set(map(type, optional)) <= _OPTIONAL
        and set(map(type, numbers)) == _INT
        and type(f.applied) is bool
    ):
        return indented(_record(run, f), "  ")
    code, name, message, path, severity, applicability, target, fingerprint = map(encode_basestring_ascii, texts)
    replacement, original, advice, doc = ("null" if t is None else encode_basestring_ascii(t) for t in optional)
    line, column, end_line, end_column = map(int.__repr__, numbers)
    applied = _LITERALS[f.applied]
    return (
        f'{{\n    "code": {code},\n    "name": {name},\n    "message": {message},\n    "path": {path},'
        f'\n    "start": {{\n      "line": {line},\n      "column": {column}\n    }},'
        f'\n    "end": {{\n      "line": {end_line},\n      "column": {end_column}\n    }},'
        f'\n    "severity": {severity},\n    "applicability": {applicability},\n    "target": {target},'
        f'\n    "replacement": {replacement},\n    "original": {original},\n    "applied": {applied},'
        f'\n    "advice": {advice},\n    "doc_url": {doc},\n    "fixable": {applied},'
        f'\n    "fingerprint": {fingerprint}\n  }}'
    )


def render_json_lines(run: LintRun) -> str:
    return "".join(json.dumps(_record(run, f)) + "\n" for f in run.findings + run.unchecked_findings())


_LITERALS = {True: "true", False: "false", None: "null"}
_STR, _OPTIONAL, _INT = {str}, {str, type(None)}, {int}


def indented(value: object, indent: str = "") -> str:
    """`json.dumps(value, indent=2)`, character for character, twice as fast: with an indent
    the json module falls back to its pure-Python encoder, most of a warm run's rendering of
    thousands of findings. Strings, ints, bools, None, lists and dicts with string keys are
    written here (the scalars of a dict inline: the common case); anything else goes to
    `json.dumps`."""
    kind = type(value)
    if isinstance(value, str) and kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return int.__repr__(value)
    if value is None or kind is bool:
        return _LITERALS[value]  # type: ignore[index]
    inner = indent + "  "
    if kind is dict and all(type(k) is str for k in value):  # type: ignore[attr-defined]
        return _indented_dict(value, indent, inner) if value else "{}"  # type: ignore[arg-type]
    if kind is list or kind is GeneratorType:  # a generator's items are made and written one at a time
        pieces = ["[\n"]
        for v in value:  # type: ignore[attr-defined]
            pieces += (inner, indented(v, inner), ",\n")
        return _closed(pieces, indent, "]") if len(pieces) > 1 else "[]"
    return json.dumps(value, indent=2).replace("\n", "\n" + indent)


def _closed(pieces: list[str], indent: str, bracket: str) -> str:
    """`pieces` (an opening bracket, then each member's indent, text and `,\\n`) joined once,
    its last comma made the closing bracket: a member's text (SARIF's results, 1.8 KB each) is
    copied once into the whole, where the concatenations around a join copied it three times
    more (100,000 findings: a peak of four times the output; twenty-fourth read)."""
    pieces[-1] = "\n"
    pieces += (indent, bracket)
    return "".join(pieces)


def _indented_dict(value: dict[str, Any], indent: str, inner: str) -> str:
    """A dict with string keys; its scalar values written inline here (the common case: a
    finding's fields), without a call per value."""
    pieces = ["{\n"]
    for k, v in value.items():
        t = type(v)
        if t is str:
            text = encode_basestring_ascii(v)
        elif t is int:
            text = int.__repr__(v)
        elif v is None or t is bool:
            text = _LITERALS[v]
        else:
            text = indented(v, inner)
        pieces += (inner, encode_basestring_ascii(k), ": ", text, ",\n")
    return _closed(pieces, indent, "}")
