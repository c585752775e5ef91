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
            _reporters_are_candidates(name, source, s, r.findings)
    return spared


def _reporters_are_candidates(name: str, source: bytes, settings: Settings, findings) -> None:
    """Each family that reported in the file held a candidate there: its own condition, not
    only the union the pass asks (a family answering True for every file hides the others).
    XLA005's switch for a move another family ported needs that family's site (its docstring)."""
    from porter.codemods import FAMILIES
    from porter.codemods.candidates import Gate
    from porter.codemods.xla_params import MOVES
    from porter.core.suppressions import scan

    gate = Gate(name, settings, scan(source), source)
    owner = {code: cls for cls in FAMILIES for code in cls.codes()}
    applied = {f.code for f in findings if f.applied}
    for code in {f.code for f in findings}:
        cls = owner.get(code)
        if cls is None or (code == "XLA005" and applied & MOVES):
            continue
        assert cls.wanted(gate, source) and cls.candidate(gate, source), (
            f"{name}: {code} reported, {cls.__name__} held no candidate"
        )


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


# files in which only the device family (and the xla-params family it moves modules for)
# could have a site: its candidate reads strings, names, int devices, loads and the project
# index's facts (porter.codemods.device.DeviceFamily.candidate)
_DEVICE_SITES = {
    "ints.py": "def f(x, y):\n    return x.to(0), torch.ones(2, device=1), y.to(non_blocking=True)\n",
    "pieces.py": 'dev = ("cuda"\n       ":0")\nname = "kernels_" "cuda"\nm.to(dev)\n',
    "doc.py": '"""Moves tensors to cuda when asked."""\nimport torch\nx = t.to(device)\n',
    "fstring.py": 'def place(m, rank):\n    return m.to(f"cuda:{rank}")\n',
    "legacy.py": "from torch.cuda import FloatTensor\nimport torch as T\n\nok = isinstance(x, FloatTensor) or isinstance(x, T.cuda.HalfTensor)\ndevice = None\n",
    "loads.py": "from torch import load as L\nimport torch\n\nsd = L(path, where)\nsd2 = torch.load(path, map_location=loc)\ndevice = None\n",
    "load_rest.py": "import torch\n\nsd = torch.load(path, *rest).to(dev)\n",
    "is_cuda.py": "def f(x, device):\n    if x.is_cuda:\n        return x.to(device)\n",
    "vocabulary.py": 'import argparse\n\np = argparse.ArgumentParser()\np.add_argument("--gpu_arch", default="cuda", choices=["cuda", "rocm"])\n',
    "enum.py": 'import enum\n\n\nclass Kind(enum.Enum):\n    CUDA = "cuda"\n    XLA = "xla"\n',
    "origin.py": 'import os\n\ndef place(model, distributed):\n    if distributed:\n        device = int(os.environ["LOCAL_RANK"])\n    else:\n        device = "cpu"\n    return model.to(device)\n',
    "tied.py": "from torch import nn\n\nclass GPT(nn.Module):\n    def __init__(self, v, d):\n        super().__init__()\n        self.wte = nn.Embedding(v, d)\n        self.head = nn.Linear(d, v)\n        self.wte.weight = self.head.weight\n\nmodel = GPT(5, 7)\nmodel.to(device)\n",
    "stale.py": "import torch\nmodel = Net()\nopt = torch.optim.AdamW(model.parameters())\nmodel.to(device)\n",
}
# ... and files in which it has none (its tokens `.to(`, `device=` show): spared
_NO_DEVICE_SITE = {
    "moves.py": "def f(model, x, device):\n    model.to(device)\n    return torch.zeros(2, device=device), x.to(x.dtype)\n",
    "cpu_load.py": 'import torch\n\ndef f(path, device):\n    return torch.load(path, map_location="cpu").to(device)\n',
    "comment.py": "# runs on the gpu or the cpu\ndef f(t, device):\n    return t.to(device=device)\n",
}


def _settings(name: str, source: bytes) -> list[Settings]:
    """xla (also without XLA005, which otherwise keeps tied and taken parameters in place of
    DEV011/DEV013) and neuron, with the file's own index (flow None), with it handed on as the
    project index's facts, and with no facts (flow ())."""
    from porter.analysis.index import ProjectIndex

    facts = ProjectIndex.build([(name, source)]).facts(name)
    out = []
    for flow in (None, facts, ()):
        out.append(Settings(target="xla", flow=flow))
        out.append(Settings(target="xla", flow=flow, ignore=("XLA005",), want_source=False))
        out.append(Settings(target="neuron", flow=flow))
    return out


def test_device_family_sites_come_out_the_same(monkeypatch):
    for name, text in _DEVICE_SITES.items():
        source = text.encode()
        _check([(name, source)], _settings(name, source), monkeypatch)
    for name, text in _NO_DEVICE_SITE.items():
        source = text.encode()
        settings = _settings(name, source)
        assert _check([(name, source)], settings, monkeypatch) == len(settings), name


def test_device_facts_from_another_file_keep_the_parse(monkeypatch):
    """`model.to(r)` shows no device token of its own: the project index's fact (an int
    handed on by another module) is the family's only reason to parse the file."""
    from porter.analysis.index import ProjectIndex

    caller = b'import os\nfrom b import place\n\ndef main(model):\n    rank = int(os.environ["LOCAL_RANK"])\n    place(model, rank)\n'
    callee = b"def place(model, r):\n    return model.to(r)\n"
    facts = ProjectIndex.build([("a.py", caller), ("b.py", callee)]).facts("b.py")
    assert facts and {f[2] for f in facts} == {"index"}
    with_facts = [Settings(target=t, flow=facts) for t in ("xla", "neuron")]
    assert _check([("b.py", callee)], with_facts, monkeypatch) == 0
    assert port_python(callee, "b.py", with_facts[0]).findings[0].code == "DEV008"
    # (on neuron no rule's token admits the file without the fact: the prefilter skips it)
    assert _check([("b.py", callee)], [Settings(target="xla", flow=())], monkeypatch) == 1
