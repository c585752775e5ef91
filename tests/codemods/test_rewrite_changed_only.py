"""A rewrite requotes the strings porter wrote inside an f-string (`apply._requoted`) by walking
only the statements the families replaced, and tells that a file no step changed is unchanged
without printing its tree (`apply.REWRITE_CHANGED_ONLY`). Each file is ported with the shortcut
and without it (both whole trees walked, the whole module printed, as before), and the results
must be the same byte for byte. The corpus: every rule's examples, the fixtures, f-strings
porter writes into (snippets modelled on real code), and, where `library_hunks.py` has
downloaded them, a sample of the frameworks `bench_rewrite_real.py` times."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import porter.codemods.apply as apply
from porter.codemods.apply import port_python
from porter.config.settings import Settings
from tests.helpers import rule_example_files

ROOT = Path(__file__).resolve().parents[2]


def _both(name: str, source: bytes, settings: Settings, monkeypatch) -> tuple[str, str]:
    out = []
    for on in (True, False):
        monkeypatch.setattr(apply, "REWRITE_CHANGED_ONLY", on)
        r = port_python(source, name, settings)
        out.append(repr((r.status, r.reason, r.error_line, r.findings, r.suppressed, r.new_source)))
    return out[0], out[1]


def _check(files: list[tuple[str, bytes, Settings]], monkeypatch) -> None:
    for name, source, settings in files:
        fast, full = _both(name, source, settings, monkeypatch)
        assert fast == full, f"{name} ({settings.target}): the shortcut changed the rewrite"


# strings porter writes inside an f-string's braces take the quote the f-string does not use
# (the f-string forms of colossalai's and deepspeed's device strings), and a file that nests an
# f-string's quote itself (3.12 only) is left as it is
_FSTRINGS = {
    "inside.py": "import torch\n\ndef f(x):\n    print(f\"{x.cuda()} on {torch.device('cuda')}\")\n",
    "device_in_braces.py": "import torch\n\ndef f(m, rank):\n    return f'{m.to(torch.device(\"cuda\", rank))}'\n",
    "nested_312.py": 'import torch\n\nx = f"{"a"}"\ny = torch.cuda.is_available()\nz = f"{torch.cuda.current_device()}"\n',
    "untouched_fstring.py": 'import torch\n\nname = f"{x!r} {y:>{w}}"\ntorch.cuda.synchronize()\n',
    "no_change.py": 'name = f"{x}"\nprint(name)\n',
    "triple.py": 'import torch\n\ndoc = f"""{torch.cuda.get_device_name()} \'q\' {"s"}"""\n',
    "in_class.py": 'import torch\n\nclass A:\n    def f(self):\n        return f"{torch.cuda.memory_allocated() / 2**20:.1f} MiB"\n',
}


def test_fstrings_porter_writes_into_come_out_the_same(monkeypatch):
    files = [
        (name, src.encode(), Settings(target=target, portable=portable))
        for name, src in _FSTRINGS.items()
        for target, portable in (("neuron", ()), ("xla", ()), ("neuron", ("device",)), ("tpu", ("device",)))
    ]
    _check(files, monkeypatch)


def test_rule_examples_come_out_the_same(monkeypatch):
    files = rule_example_files()
    assert len(files) > 200
    _check(files, monkeypatch)


def test_fixtures_come_out_the_same(monkeypatch):
    files = [
        (str(p.relative_to(ROOT)), p.read_bytes(), Settings(target=target))
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if ".out." not in p.name and not {"__pycache__", "expected"} & set(p.parts)
        for target in ("neuron", "xla")
    ]
    assert len(files) > 60
    _check(files, monkeypatch)


def _frameworks() -> list[Path]:
    root = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "library-corpus"
    return [root / label for label in ("colossalai-0.5.0", "deepspeed-0.19.8") if (root / label / ".ok").exists()]


@pytest.mark.skipif(not _frameworks(), reason="library_hunks.py's corpus is not downloaded")
def test_framework_code_comes_out_the_same(monkeypatch):
    files = []
    for root in _frameworks():
        # every 15th file that names cuda and has an f-string: the files the shortcut is for
        paths = [p for p in sorted(root.rglob("*.py")) if b"cuda" in (b := p.read_bytes()) and apply._FSTRING.search(b)]
        files += [(str(p.relative_to(root)), p.read_bytes(), Settings(target="neuron")) for p in paths[::15]]
    assert len(files) > 10
    _check(files, monkeypatch)


def test_the_whole_trees_are_walked_only_where_a_replaced_statement_needs_it(monkeypatch):
    calls: list[str] = []
    full = apply._requoted

    def counting(module, new):
        calls.append("requoted")
        return full(module, new)

    monkeypatch.setattr(apply, "_requoted", counting)
    s = Settings(target="neuron")
    for on, name, want in (
        (True, "untouched_fstring.py", 0),
        (False, "untouched_fstring.py", 1),
        (True, "inside.py", 1),
    ):
        monkeypatch.setattr(apply, "REWRITE_CHANGED_ONLY", on)
        calls.clear()
        r = port_python(_FSTRINGS[name].encode(), name, s)
        assert r.new_source is not None and len(calls) == want, (name, on, calls)


def test_the_read_only_probe_finds_the_clashes_the_requoting_walk_finds():
    import libcst as cst

    sources = [src.encode() for src in _FSTRINGS.values()]
    sources += [b'x = f"{"a"}"\n', b"x = f'{f\"{y!r}\"}'\n", b'x = f"""{"a"}"""\n', b"x = f'''{'''a'''}'''\n"]
    sources += [
        p.read_bytes()
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if b"f'" in p.read_bytes() or b'f"' in p.read_bytes()
    ]
    seen = set()
    for source in sources:
        module = cst.parse_module(source)
        walk, probe = apply._NestedQuotes(), apply._QuoteClash()
        module.visit(walk)
        apply.cstwalk.visit(module, probe)
        assert probe.clashed == walk.clashed, source[:200]
        seen.add(walk.clashed)
    assert seen == {True, False}
