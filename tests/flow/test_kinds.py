"""The index's fact kinds are enums written as their text: the bytes of facts in cache keys
(the settings' repr), the index cache (JSON) and messages (f-strings) are those of the plain
strings, on every Python porter supports (format() of mixed-in enums changed in 3.12)."""

import json
import pickle
from dataclasses import astuple

import pytest

from porter.analysis import kinds
from porter.analysis.kinds import FusedKind, Kind, MoveKind, ValueKind
from porter.config.settings import Settings

FAMILIES = [c for c in vars(kinds).values() if isinstance(c, type) and issubclass(c, Kind) and c is not Kind]


@pytest.mark.parametrize("member", [m for family in FAMILIES for m in family], ids=str)
def test_a_kind_is_written_as_its_text(member: Kind) -> None:
    text = member.value
    assert type(text) is str
    assert member == text and hash(member) == hash(text)
    assert (str(member), f"{member}", f"{member:>20}", "%s" % member, repr(member)) == (
        text,
        text,
        f"{text:>20}",
        text,
        repr(text),
    )
    assert json.dumps([member]) == json.dumps([text])
    assert pickle.loads(pickle.dumps(member)) is member


def test_kinds_are_distinct_across_families() -> None:
    texts = [m.value for family in FAMILIES for m in family]
    assert len(texts) == len(set(texts))


def test_the_cache_key_of_a_fact_with_an_enum_kind_is_the_plain_strings() -> None:
    facts = (("f", "x", ValueKind.MAYBE, ("a",)), ("f", "m", MoveKind.TIED, ()), (None, "g", FusedKind.KEEP, ()))
    plain = tuple((s, e, k.value, c) for s, e, k, c in facts)
    assert repr(astuple(Settings(target="xla", flow=facts))) == repr(astuple(Settings(target="xla", flow=plain)))
