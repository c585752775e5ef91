"""Every example in rules/*.toml runs as a test: the docs cannot drift from the behaviour."""

from __future__ import annotations

import pytest

from porter.config.ruledata import all_rules
from tests.helpers import conformance, port

EXAMPLES = [
    pytest.param(rule, ex, id=f"{rule.code}-{ex.target}-{i}")
    for rule in all_rules().values()
    for i, ex in enumerate(rule.examples)
]


@pytest.mark.parametrize("rule,example", EXAMPLES)
def test_example(rule, example):
    before = example.before.lstrip("\n")
    after = example.after.lstrip("\n")
    extra = {"extend_select": (rule.code,)} if not rule.default else {}
    if example.portable:
        extra["portable"] = True
    if rule.code != "XLA005":
        # the file-level XLA005 line would stand in every xla example: each shows its own rule
        extra["ignore"] = ("XLA005",)
    if example.imported_after_port is not None:
        extra["imported_after_port"] = example.imported_after_port
    path = example.file or "example.py"
    new, findings = port(before, example.target, unsafe=example.unsafe_fixes, path=path, **extra)
    assert rule.code in {f.code for f in findings}, f"{rule.code} not reported"
    assert new == after
    if after != before and not example.file:
        assert not conformance(new, example.target), "porter emitted what its own target-API lint rejects"
    if after == before:
        assert not any(f.code == rule.code and f.applied for f in findings)
    # idempotent: the port of the port is the port
    again, _ = port(new, example.target, unsafe=example.unsafe_fixes, path=path, **extra)
    assert again == new


def test_every_rule_has_an_example_per_behaviour():
    for rule in all_rules().values():
        assert rule.examples, f"{rule.code} has no example"
        assert rule.summary and rule.name == rule.name.lower()


@pytest.mark.parametrize("rule,example", EXAMPLES)
def test_example_alone(rule, example):
    """`--select CODE` alone reports the rule on its own example: no prefilter token of another
    rule (or the file's shared `requires`) is needed for the file to be read."""
    extra = {"portable": True} if example.portable else {}
    if rule.code != "XLA005":
        extra["ignore"] = ("XLA005",)  # as test_example: its move would be XLA005's (DEV011, DEV013)
    if example.imported_after_port is not None:
        extra["imported_after_port"] = example.imported_after_port
    before = example.before.lstrip("\n")
    _, findings = port(
        before,
        example.target,
        unsafe=example.unsafe_fixes,
        path=example.file or "example.py",
        select=(rule.code,),
        **extra,
    )
    assert rule.code in {f.code for f in findings}, f"{rule.code} not reported with --select {rule.code}"


@pytest.mark.parametrize("rule,example", EXAMPLES)
def test_example_with_other_rules_selected(rule, example):
    """`--select` of other rules changes the file only by their fixes: the families that give
    them facts (every family a run without `--select` runs) change no node, add no import."""
    extra = {"portable": True} if example.portable else {}
    if example.imported_after_port is not None:
        extra["imported_after_port"] = example.imported_after_port
    before = example.before.lstrip("\n")
    for select in (("API",), ("CUDA002",), ("DEV001",), ("GUARD001",), ("BACK005",)):
        new, findings = port(
            before,
            example.target,
            unsafe=example.unsafe_fixes,
            path=example.file or "example.py",
            select=select,
            **extra,
        )
        if not any(f.applied for f in findings):
            assert new == before, f"--select {select[0]} changed the file with no fix applied"
