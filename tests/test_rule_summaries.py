"""A rule's summary is a title-length "what it finds" (ruff's rule pages are the model): one
sentence of at most 200 characters. It is SARIF's `shortDescription`, a finding's message where
its site gives none, a JUnit failure's message, a line of `porter rules` and of docs/rules.md's
index. Every case the rule handles goes in `covers`, shown by `porter explain` and docs/rules.md
right after "What it finds", and leading SARIF's `fullDescription` and help: a list a reader scans,
one case an item of at most 300 characters (written as one paragraph, BACK008's ran to 2,349).

A rule's rationale is not bounded: it is printed only where the rule's whole page is (`porter
explain`, docs/rules.md, SARIF's help, each once per rule), never by `porter rules` or a finding."""

import re

from porter.config.ruledata import all_rules

LIMIT = 200  # porter.config.ruledata.SUMMARY_MAX_CHARS


def _sentences(text: str) -> int:
    prose = re.sub(r"`[^`]*`", "x", text).replace("...", "").replace("e.g.", "eg").replace("i.e.", "ie")
    return 1 + len(re.findall(r"[.!?]\s+\S", prose))


def test_every_rule_summary_is_one_sentence_of_at_most_200_characters():
    too_long = {code: len(r.summary) for code, r in all_rules().items() if len(r.summary) > LIMIT}
    assert not too_long, f"summaries over {LIMIT} characters (move the cases into `covers`): {too_long}"
    several = [code for code, r in all_rules().items() if _sentences(r.summary) > 1]
    assert not several, f"summaries of more than one sentence: {several}"


def test_the_limit_is_declared_in_the_rule_data_and_enforced_when_rules_load():
    import pytest

    from porter.config import ruledata

    assert ruledata.SUMMARY_MAX_CHARS == LIMIT
    table = {"code": "ZZZ001", "name": "long", "summary": "A case, " * 30}
    with pytest.raises(ValueError, match="ZZZ001: summary: .* more than 200"):
        ruledata._rule_from_table("test", table)
    table["summary"] = "One thing. Another thing."
    with pytest.raises(ValueError, match="more than one sentence"):
        ruledata._rule_from_table("test", table)
    table["summary"] = "A call (`x.cuda()`, `torch.cuda.foo()`, ...) where e.g. the device is CUDA's."
    assert ruledata._rule_from_table("test", table).summary == table["summary"]


def test_the_cases_a_summary_left_out_are_in_covers_and_shown_by_explain_docs_and_sarif():
    from porter.config.ruledocs import rule_markdown
    from porter.lint.formats.sarif import _rule

    rule = all_rules()["BACK008"]
    assert "`x.is_cuda`" in rule.covers and "`x.is_cuda`" not in rule.summary
    page = rule_markdown(rule, heading="#")  # what `porter explain BACK008` prints
    assert page.index("**What it finds.**") < page.index("**What it covers.**\n\n" + rule.covers)
    sarif = _rule("BACK008", "neuron")
    assert sarif["shortDescription"]["text"] == rule.summary
    assert sarif["fullDescription"]["text"].startswith(rule.covers)
    assert rule.covers in sarif["help"]["markdown"]
    no_covers = next(r for r in all_rules().values() if not r.covers and r.rationale)
    assert "**What it covers.**" not in rule_markdown(no_covers)
    assert _rule(no_covers.code, "neuron")["fullDescription"]["text"] == no_covers.rationale


def test_every_rules_covers_is_a_list_of_short_cases():
    from porter.config import ruledata

    assert ruledata.COVERS_ITEM_MAX_CHARS == 300
    covered = {code: r.covers for code, r in all_rules().items() if r.covers}
    assert len(covered) >= 22
    for code, covers in covered.items():
        items = covers.split("\n")
        assert all(item.startswith("- ") for item in items), code
        assert max(len(item) - 2 for item in items) <= 300, code
    # the longest paragraphs of c17e310, every case kept
    assert len(covered["BACK008"].split("\n")) >= 10 and "`x.is_cuda`" in covered["BACK008"]
    assert "`rocm_aiter_moe.py`" in covered["GUARD004"]


def test_covers_must_be_a_list_of_cases_each_short():
    import pytest

    from porter.config import ruledata

    table = {"code": "ZZZ002", "name": "cases", "summary": "A case.", "covers": "one case, another case"}
    with pytest.raises(ValueError, match="ZZZ002: covers: a list of cases"):
        ruledata._rule_from_table("test", table)
    table["covers"] = ["short", "x" * 301]
    with pytest.raises(ValueError, match="ZZZ002: covers: a case of 301 characters, more than 300"):
        ruledata._rule_from_table("test", table)
    table["covers"] = ["one case", "another case"]
    assert ruledata._rule_from_table("test", table).covers == "- one case\n- another case"


def test_porter_rules_prints_no_rationale_and_explain_shows_the_cases_as_a_list():
    from typer.testing import CliRunner

    from porter.cli import app

    out = CliRunner().invoke(app, ["rules"]).output
    rationales = [r.rationale for r in all_rules().values() if r.rationale]
    assert not [r for r in rationales if r[:80] in out]
    page = CliRunner().invoke(app, ["explain", "GUARD004"]).output
    assert "**What it covers.**\n\n- A CUDA device named in a module" in page
