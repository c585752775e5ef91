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


def _one_pass_per_token(source: bytes, settings: Settings) -> bool:
    """The scan as it was, the answer the words must give: `token in source` for each token of
    each enabled rule (and of its `requires`)."""
    return bool(admitting_rules(source, settings))


def _tokens(settings: Settings) -> list[bytes]:
    from porter.analysis.prefilter import _requires

    return [t for rule in all_rules().values() for t in (*rule.tokens, *_requires().get(rule.code, ()))]


@pytest.mark.parametrize("target", TARGETS)
def test_a_large_file_is_read_through_its_words_with_the_same_answers(monkeypatch, target):
    """A large file is looked at through its distinct words first (seventeenth read: one pass per
    token, 7-10 s for 37 MiB of token-free Python). The answers are those of one `in` per token:
    checked with every file of any size read the new way, on the sources above and on text made of
    the tokens' parts, cut and glued at every kind of boundary (inside a word, at punctuation, at
    the start and end of the file, across a line break)."""
    import random

    from porter.analysis import prefilter

    monkeypatch.setattr(prefilter, "WORDS_FROM", 0)
    settings = Settings(target=target)
    rng = random.Random(17)
    tokens = _tokens(settings)
    glue = [b"", b" ", b"\n", b".", b"(", b"_", b"x", b"0", b"\xc3\xa9", b'"', b"\t", b"\0"]
    texts = [source for _, source in _sources()]
    for _ in range(3000):
        parts = []
        for _ in range(rng.randrange(1, 6)):
            t = rng.choice(tokens)
            i, j = sorted(rng.sample(range(len(t) + 1), 2))
            parts.append(t[i:j] if rng.random() < 0.7 else t)
            parts.append(rng.choice(glue))
        texts.append(b"".join(parts))
    texts += [t + b"\n" for t in tokens] + [b"x" + t + b"x" for t in tokens] + [b"", b" ", b"\0" * 3]
    for text in texts:
        assert prefilter.admits(text, settings) == _one_pass_per_token(text, settings), text


def test_a_large_file_without_a_token_is_turned_away_in_a_few_passes():
    """37 MiB of `x = 1` lines (Python without a CUDA token) took 7.0 s, one `in` per token (171
    passes): now 0.8 s, the file's few distinct words and no pass for a token they lack. (Python's
    own library, token-free lines only, 37 MiB: 7.3 s -> 3.0 s, where more tokens' words are there.)
    Here 8 MiB, against the old scan in the same process."""
    import time

    from porter.analysis import prefilter

    settings = Settings(target="neuron")
    source = b"x = 1\n" * (8 * 2**20 // 6)
    assert not _one_pass_per_token(source, settings)

    def best(fn) -> float:
        took = []
        for _ in range(2):
            began = time.perf_counter()
            assert fn(source, settings) is False
            took.append(time.perf_counter() - began)
        return min(took)

    before, after = best(_one_pass_per_token), best(prefilter.admits)
    assert after < before / 4, (before, after)
