"""The candidate pass (porter.codemods.candidates) changes which files libcst parses, never
what porter says: each file is ported with the pass and without it (every admitted file
parsed), and the results must be the same, finding for finding and byte for byte. The corpus:
every rule's examples, the fixtures, and, where bench_lint_real.py has downloaded it, a sample of
its real library code (transformers, deepspeed, timm, ...)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

import porter.codemods.apply as apply
from porter.codemods.apply import port_python
from porter.config.ruledata import all_rules
from porter.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _check(files: list[tuple[str, bytes]], settings: list[Settings], monkeypatch) -> int:
    """Both paths on every file and settings; returns how many runs the pass spared libcst."""
    spared = 0
    parse = apply.cst.parse_module
    calls: list[int] = []

    def counting(*a, **k):
        calls.append(1)
        return parse(*a, **k)

    monkeypatch.setattr(apply.cst, "parse_module", counting)
    for name, source in files:
        for s in settings:
            out, parses = [], []
            for on in (True, False):
                monkeypatch.setattr(apply, "CANDIDATE_PASS", on)
                calls.clear()
                r = port_python(source, name, s)
                parses.append(len(calls))
                out.append(repr((r.status, r.reason, r.error_line, r.findings, r.suppressed, r.new_source)))
            assert out[0] == out[1], f"{name} ({s.target}, want_source={s.want_source}): the pass changed the result"
            spared += parses[0] < parses[1]
    return spared


def test_rule_examples_come_out_the_same(monkeypatch):
    files = []
    for rule in all_rules().values():
        for i, ex in enumerate(rule.examples):
            if ex.file:
                continue
            s = Settings(target=ex.target, unsafe_fixes=ex.unsafe_fixes, portable=ex.portable, select=(rule.code,))
            files.append((f"{rule.code}_{i}.py", ex.before.encode(), s))
    assert len(files) > 200
    for name, source, s in files:
        _check(
            [(name, source)],
            [s, replace(s, select=(), extend_select=(s.select[0],), want_source=False)],
            monkeypatch,
        )


def test_fixtures_come_out_the_same(monkeypatch):
    files = [
        (str(p.relative_to(ROOT)), p.read_bytes())
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if ".out." not in p.name and not {"__pycache__", "expected"} & set(p.parts)
    ]
    assert len(files) > 30
    settings = [Settings(target="neuron"), Settings(target="xla", want_source=False, extend_select=("PERF",))]
    _check(files, settings, monkeypatch)


def _corpus() -> Path | None:
    root = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    return root if (root / ".ok").exists() else None


@pytest.mark.skipif(_corpus() is None, reason="bench_lint_real.py's corpus is not downloaded")
def test_real_library_code_comes_out_the_same(monkeypatch):
    root = _corpus()
    assert root is not None
    paths = sorted(p for p in root.rglob("*.py") if p.is_file())[::58]
    files = [(str(p.relative_to(root)), p.read_bytes()) for p in paths]
    settings = [Settings(target="xla", want_source=False), Settings(target="neuron")]
    spared = _check(files, settings, monkeypatch)
    assert spared > len(files) // 10  # the pass does spare real files their parse
