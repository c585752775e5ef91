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


def test_the_meta_codes_are_documented_with_an_anchor():
    """PORT001 and PORT100 (emitted by lint's formats, explained by `porter explain`) had no entry in
    docs/rules.md (twenty-fifth read): each has a row and a page, marked as a meta code."""
    from porter.lint.model import rule_info

    text = DOC.read_text(encoding="utf-8")
    for meta in map(rule_info, ("PORT001", "PORT100")):
        assert f"| [{meta.code}](#{meta.code.lower()}-{meta.name}) | {meta.name} | meta |" in text
        assert f"### {meta.code} `{meta.name}`" in text and "A meta code, not a rule" in text


def test_compiled_rule_data_is_current():
    """rules/compiled.json (every run's rule data, as JSON) holds each rule file as it is."""
    from porter.config.ruledata import COMPILED, compiled_rules, rules_dir

    assert (rules_dir() / COMPILED).read_text(encoding="utf-8") == compiled_rules(), (
        "run: python -m porter.config.ruledocs"
    )


def test_a_rule_file_is_read_from_its_compiled_form_only_while_its_bytes_match(tmp_path, monkeypatch):
    """The compiled form answers for the very bytes it was made from; an edited rule file
    is parsed itself, never answered by the stale copy."""
    import json
    import shutil

    from porter.config import ruledata

    folder = tmp_path / "rules"
    folder.mkdir()
    shutil.copy(ruledata.rules_dir() / "hf.toml", folder / "hf.toml")
    monkeypatch.setattr(ruledata, "rules_dir", lambda: folder)
    (folder / ruledata.COMPILED).write_text(ruledata.compiled_rules(), encoding="utf-8")
    compiled = json.loads((folder / ruledata.COMPILED).read_text(encoding="utf-8"))
    compiled["hf.toml"][1]["marker"] = "from the compiled form"
    (folder / ruledata.COMPILED).write_text(json.dumps(compiled), encoding="utf-8")
    for fn in (ruledata.load_toml, ruledata._compiled):
        fn.cache_clear()
    try:
        assert ruledata.load_toml("hf.toml")["marker"] == "from the compiled form"
        (folder / "hf.toml").write_bytes(b'edited = "yes"\n' + (folder / "hf.toml").read_bytes())
        ruledata.load_toml.cache_clear()
        data = ruledata.load_toml("hf.toml")
        assert data["edited"] == "yes" and "marker" not in data
    finally:
        for fn in (ruledata.load_toml, ruledata._compiled):
            fn.cache_clear()
