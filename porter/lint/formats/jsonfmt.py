"""`json` (one array) and `json-lines` (one object a line) — `Finding.to_dict()` plus
`fixable` (a fix `--fix` applies under these settings) and `fingerprint` (baseline identity).
Columns are 0-based, as in every porter JSON output."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

from porter.lint.model import LintRun


def _record(run: LintRun, f) -> dict:
    d = f.to_dict()
    d["fixable"] = f.applied
    d["fingerprint"] = run.fingerprint(f)
    return d


def render_json(run: LintRun) -> str:
    return indented([_record(run, f) for f in run.findings]) + "\n"


def render_json_lines(run: LintRun) -> str:
    return "".join(json.dumps(_record(run, f)) + "\n" for f in run.findings)


_LITERALS = {True: "true", False: "false", None: "null"}


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
    if kind is list:
        if not value:
            return "[]"
        items = [indented(v, inner) for v in value]  # type: ignore[attr-defined]
        return "[\n" + inner + (",\n" + inner).join(items) + "\n" + indent + "]"
    return json.dumps(value, indent=2).replace("\n", "\n" + indent)


def _indented_dict(value: dict[str, Any], indent: str, inner: str) -> str:
    """A dict with string keys; its scalar values written inline here (the common case: a
    finding's fields), without a call per value."""
    parts = []
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
        parts.append(encode_basestring_ascii(k) + ": " + text)
    return "{\n" + inner + (",\n" + inner).join(parts) + "\n" + indent + "}"
