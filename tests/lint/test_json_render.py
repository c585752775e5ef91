"""The JSON output's own encoder writes exactly what `json.dumps(indent=2)` writes."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from porter.lint.formats.jsonfmt import indented

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
