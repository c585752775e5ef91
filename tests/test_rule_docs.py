"""docs/rules.md is generated from the rule data; it must not be out of date."""

from pathlib import Path

from porter.config.ruledocs import rules_markdown
from porter.config.ruledata import all_rules

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def test_rules_doc_is_current():
    assert DOC.read_text(encoding="utf-8") == rules_markdown(), "run: python -m porter.config.ruledocs"


def test_every_rule_is_documented_with_an_anchor():
    text = DOC.read_text(encoding="utf-8")
    for rule in all_rules().values():
        assert f"### {rule.code} `{rule.name}`" in text
        assert f"(#{rule.code.lower()}-{rule.name})" in text
