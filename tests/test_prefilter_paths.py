"""The prefilter only saves time: a file it turns away would get no finding and no change from
a full parse (porter.analysis.prefilter). Checked on the rules' examples, the fixture cases,
and files the `requires` anchors of hf.toml and library_api.toml turn away."""

from __future__ import annotations

from pathlib import Path

import pytest

import porter.codemods.apply
from porter.analysis.prefilter import admits, admitting_rules
from porter.config.ruledata import all_rules
from porter.config.settings import TARGETS, Settings
from porter.pipeline.port import port_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"

# names a Hugging Face rule's tokens, not one of the libraries: the anchors turn these away
ANCHORED = {
    "generate.py": "out = model.generate(ids, attn_implementation='flash_attention_2', max_new_tokens=4)\n",
    "config.py": "cfg = Config(eval_strategy='steps', attn_implementation='flash_attention_2')\nrun(cfg, max_length=8)\n",
    "trainer.py": "class Trainer:\n    def fit(self, x):\n        return pipeline(x, dtype='auto')\n",
}


def _sources() -> list[tuple[str, bytes]]:
    out = [(name, text.encode()) for name, text in ANCHORED.items()]
    out += [(p.name, p.read_bytes()) for p in sorted(FIXTURES.glob("*.in.py"))]
    for rule in all_rules().values():
        if "python" in rule.kinds:
            out += [(f"{rule.code}_{i}.py", ex.before.encode()) for i, ex in enumerate(rule.examples)]
    return out


def _outcome(source: bytes, name: str, settings: Settings) -> tuple[list[dict], bytes | None]:
    result = port_source(source, name, settings)
    return [f.to_dict() for f in result.findings], result.new_source


@pytest.mark.parametrize("target", TARGETS)
def test_a_file_turned_away_gets_nothing_from_a_full_parse(target, monkeypatch):
    settings = Settings(target=target, want_source=True)
    everything = Settings(target=target, want_source=True, extend_select=("PERF", "API"))
    turned_away = 0
    for name, source in _sources():
        for s in (settings, everything):
            if admits(source, s):
                continue
            turned_away += 1
            with monkeypatch.context() as m:
                m.setattr(porter.codemods.apply, "admits", lambda *_: True)
                findings, new = _outcome(source, name, s)
            assert findings == [], f"{name} ({target}): the prefilter turned away a file with findings"
            assert new in (None, source), f"{name} ({target}): the prefilter turned away a file porter changes"
    assert turned_away >= 2 * len(ANCHORED)  # each anchored snippet, in both selections


def test_the_anchors_turn_away_what_names_no_library():
    def hf_rules(text: str) -> list[str]:
        return [c for c in admitting_rules(text.encode(), Settings(target="xla")) if c.startswith(("HF", "API"))]

    for name, text in ANCHORED.items():
        assert hf_rules(text) == [], name
        assert hf_rules("from transformers import AutoModel\n" + text), name
