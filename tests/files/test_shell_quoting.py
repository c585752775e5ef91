"""porter.files.shell.quoting: the script a shell word hands to `sh -c`, against bash 5.2's values (the random
comparison is docs/reads/54-cdleft-tools/quoting36.py)."""

from __future__ import annotations

import pytest

from porter.files.shell.quoting import script_value


def test_each_character_is_at_the_offset_it_is_written_at():
    value, at = script_value("'a'\\''b'$'\\x41\\n'\"c\\$\\q\"")
    assert value == "a'bA\nc$\\q"
    assert at == [1, 4, 6, 10, 14, 18, 20, 21, 22]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('"$(printf "%s" x) y"', '$(printf "%s" x) y'),
        ("`echo \\`x\\``z", "`echo \\`x\\``z"),
        ("${A:-'b'}c", "${A:-'b'}c"),
        ("$'\\101\\u00e9\\cA\\q'", "A\u00e9\x01\\q"),
        ('"a\\\nb"', "ab"),
    ],
)
def test_expansions_stay_as_written_and_escapes_are_bashs(raw, value):
    assert script_value(raw)[0] == value


@pytest.mark.parametrize("raw", ["'open", '"$(x "y")', "$'\\", "a\\", "$(", "`x"])
def test_an_unterminated_word_is_not_read(raw):
    assert script_value(raw) is None


def test_a_deeply_nested_word_is_not_read_and_does_not_fail():
    """`"$("$("$(...` three thousand deep: each quote inside an expansion is a call deeper; not read, no error."""
    assert script_value('"$(' * 3000 + "x" + ')"' * 3000) is None
