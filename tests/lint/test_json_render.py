"""The JSON output's own encoder writes exactly what `json.dumps(indent=2)` writes."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from porter.core.findings import Applicability, Finding, Position, Severity
from porter.lint.formats.jsonfmt import _record, indented, render_json

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_indented_is_json_dumps_indent_2(value):
    assert indented(value) == json.dumps(value, indent=2)


def test_a_finding_record():
    record = {
        "code": "DEV001",
        "message": '`.cuda()` in caf\u00e9 "q"\n\t\x01 \ud83d\ude00',
        "start": {"line": 3, "column": 4},
        "replacement": None,
        "applied": True,
        "fixable": False,
        "tuple": (1, 2),
    }
    assert indented([record, record]) == json.dumps([record, record], indent=2)


class _Run:
    """What `render_json` reads of a lint run: its findings and their fingerprints (and no file
    not checked)."""

    def __init__(self, findings):
        self.findings = findings
        self.fingerprints = {id(f): f"fp{i}\u00e9" for i, f in enumerate(findings)}

    def fingerprint(self, f):
        return self.fingerprints[id(f)]

    def unchecked_findings(self):
        return []  # (a file not checked: tests/lint/test_exit_codes.py)


_TEXT = st.text(max_size=12)
_FINDINGS = st.builds(
    lambda code, name, message, path, lines, severity, applicability, target, optional, applied: Finding(
        code,
        name,
        message,
        path,
        Position(lines[0], lines[1]),
        Position(lines[2], lines[3]),
        severity,
        applicability,
        target,
        *optional,
        applied=applied,
    ),
    _TEXT,
    _TEXT,
    _TEXT,
    _TEXT,
    st.tuples(*[st.integers(min_value=0, max_value=10**12)] * 4),
    st.sampled_from(Severity),
    st.sampled_from(Applicability),
    _TEXT,
    st.tuples(st.none() | _TEXT, st.none() | _TEXT),
    st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FINDINGS, max_size=4), st.none() | _TEXT, st.none() | _TEXT)
def test_the_json_format_is_json_dumps_of_each_record(findings, advice, doc):
    findings = [replace(f, advice=advice, doc_url=doc) for f in findings]
    run = _Run(findings)
    assert render_json(run) == json.dumps([_record(run, f) for f in findings], indent=2) + "\n"  # type: ignore[arg-type]


def test_a_finding_of_other_field_types_is_written_as_json_dumps_writes_it():
    """A field that is not what a finding holds (a str subclass, a bool line) goes through the
    generic walk, and still comes out as json.dumps writes it."""

    class Name(str):
        pass

    odd = Finding(
        "DEV001", Name("n"), "m", "a.py", Position(True, 0), Position(2, 3), Severity.INFO, Applicability.SAFE, "xla"
    )
    run = _Run([odd])
    assert render_json(run) == json.dumps([_record(run, odd)], indent=2) + "\n"  # type: ignore[arg-type]


def _many_findings(n: int):
    from porter.config.settings import Settings
    from porter.lint.model import LintRun

    findings = [
        Finding(
            "DEV001",
            "cuda-method",
            "`.cuda()` becomes `.to(torch_xla.device())`",
            f"m{i // 1000}.py",
            Position(i % 1000 + 2, 5),
            Position(i % 1000 + 2, 13),
            Severity.ERROR,
            Applicability.SAFE,
            "xla",
            "t.to(torch_xla.device())",
            "t.cuda()",
            True,
            "Move with `.to(device)`.",
        )
        for i in range(n)
    ]
    fingerprints = {id(f): f"{i:064x}" for i, f in enumerate(findings)}
    return LintRun(settings=Settings(target="xla"), results=[], findings=findings, fingerprints=fingerprints)


def test_sarif_and_gitlab_of_many_findings_take_memory_near_their_size():
    """SARIF and GitLab are `json.dumps(indent=2)`'s bytes, written by the json format's encoder
    one result at a time: json's own encoder, given an indent, is pure Python and held ~100
    chunks a result beside every result's dict (100,000 findings: SARIF peaked at 1.5 GB and
    took 91 s, the json format 0.34 GB and 25 s: twenty-second read). Each result's text is then
    copied once into the whole: the concatenations around each join copied it three times more,
    a peak of four times the output (20,000 findings: 145 MB for 36 MB; twenty-fourth read)."""
    import tracemalloc

    from porter.lint.formats import gitlab, sarif

    for render in (sarif.render, gitlab.render):
        render(_many_findings(2))  # the rules' data loaded once, not counted
        run = _many_findings(3000)
        tracemalloc.start()
        try:
            text = render(run)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert text == json.dumps(json.loads(text), indent=2) + "\n"  # the same document, byte for byte
        assert len(json.loads(text) if render is gitlab.render else json.loads(text)["runs"][0]["results"]) == 3000
        assert peak < 2.5 * len(text), (render.__module__, peak, len(text))  # 4.0 and 3.1 times on 9d8198a
