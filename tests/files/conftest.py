"""Helpers for the files around the Python: port one file by name, as a run would."""

from __future__ import annotations

from porter.config.settings import Settings
from porter.core.findings import FileResult
from porter.pipeline.port import port_source


def port_file(name: str, text: str | bytes, target: str = "neuron", **settings) -> FileResult:
    data = text.encode() if isinstance(text, str) else text
    return port_source(data, name, Settings(target=target, **settings))


def ported(name: str, text: str | bytes, target: str = "neuron", **settings) -> str:
    """The new text (the old one when nothing changed); fails on an error result."""
    r = port_file(name, text, target, **settings)
    assert r.status.value != "error", r.reason
    data = r.new_source if r.new_source is not None else (text.encode() if isinstance(text, str) else text)
    return data.decode()


def codes(result: FileResult) -> list[str]:
    return [f.code for f in result.findings]


def outside_edits_unchanged(old: str, new: str) -> bool:
    """Every line that is not one of the changed lines is byte-identical, in order (a line diff
    with no change outside its hunks: what "bytes outside a changed line stay" means)."""
    import difflib

    sm = difflib.SequenceMatcher(None, old.splitlines(keepends=True), new.splitlines(keepends=True), autojunk=False)
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag == "equal")
    changed = sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag != "equal")
    return kept + changed == len(old.splitlines(keepends=True))
