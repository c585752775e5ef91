"""The project index's cold work, cut without a change to what it finds.

- `_Collector` walks a file as `ast.NodeVisitor` does: its own `visit` (the method looked up
  once per node type) and `generic_visit` make the same calls in the same order, so a
  module's scopes, calls, sites and bindings are the same.
- `answers` with no earlier state does not work out what is stale (nothing is kept to test).
- The walk passes over the leaves (names, constants, contexts, operators): nothing is there.
- A run without a cache keys nothing: the scan works out no sha256 or part of a file
  (`cuda_only_index.reads`); with one the CUDA-only pass keeps the scan's part of bytes that
  did not change. The same answers as the keyed run on the paths as they were (`_slow`), over
  the fixtures and two libraries of the bench corpus; `benchmarks/bench_index.py --baseline`
  compares every answer over the whole corpus with another checkout's.
- The probes of the CUDA-only pass: whole words found by their names (`names_word`), import
  lines matched alone (`extensions.search_lines`), each what the pattern it replaced finds.
- `answers` cuts the cycles of what it parsed (`ProjectIndex.release`)."""

from __future__ import annotations

import ast
import gc
import hashlib
import os
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from porter.analysis import cuda_only_index, extensions, fused_flags, index
from porter.analysis.index import _Collector
from porter.analysis.program import ModuleInfo, Scope
from porter.pipeline import runner
from porter.pipeline.cache import Cache
from porter.pipeline.discover import discover

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """
import torch
from . import helper as h

class Net(torch.nn.Module):
    def __init__(self, dev="cuda", *, n=2):
        self.a.weight = self.b.weight
        self.dev: str = dev
        x, *rest = h.setup(dev)
        for i in range(n):
            self.layers[i].to(dev)
        for name, p in self.named_parameters():
            p.infshape = 1
        with torch.cuda.device(0) as d:
            y = lambda q: q.cuda()
        n += 1
        return [t.to(x) for t in rest], None, 1.5, b"x", ...

async def run(m):
    async with m as c:
        await c.to("cuda:0")
    m.to(torch.float16)
    torch.cuda.set_device(0)
    torch.optim.SGD(m.parameters(), lr=0.1)
"""


def _plain(value: Any) -> Any:
    if isinstance(value, Scope):
        return ("scope", value.qual)
    if isinstance(value, ast.AST):
        return ast.dump(value, include_attributes=True)
    if isinstance(value, dict):
        return [(k, _plain(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _collected(source: str, collector: type[_Collector]) -> Any:
    tree = ast.parse(source)
    info = ModuleInfo("pkg.mod", "pkg/mod.py")
    collector(info, tree).visit(tree)
    scopes = [
        (
            q,
            s.cls,
            s.params,
            *(
                _plain(getattr(s, f))
                for f in ("node", "defaults", "assigns", "returns", "calls", "sites", "assigned", "param_refs")
            ),
        )
        for q, s in info.scopes.items()
    ]
    rest = [_plain(getattr(info, f)) for f in ("classes", "imports", "ties", "moves", "param_attributes")]
    return scopes, rest


class _Reference(_Collector):
    """`_Collector` walked by `ast.NodeVisitor`'s own `visit` and `generic_visit`."""

    visit = ast.NodeVisitor.visit  # type: ignore[assignment]
    generic_visit = ast.NodeVisitor.generic_visit  # type: ignore[assignment]


def _sources() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.py"))


def test_snippet_collected_as_node_visitor_does() -> None:
    fast = _collected(SNIPPET, _Collector)
    assert fast == _collected(SNIPPET, _Reference)
    assert any(s[0] == "Net.__init__" and s[6] for s in fast[0])  # (calls were collected)


@pytest.mark.parametrize("path", _sources()[::7], ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture_collected_as_node_visitor_does(path: Path) -> None:
    try:
        source = path.read_text(encoding="utf-8")
        ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        pytest.skip("not a Python file ast reads")
    assert _collected(source, _Collector) == _collected(source, _Reference)


def test_cold_answers_do_not_work_out_what_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [
        ("pkg/mod.py", SNIPPET.encode()),
        ("pkg/helper.py", b"import torch\n\ndef setup(dev):\n    return torch.device(dev), 1\n"),
    ]
    facts, state, redone = index.answers(files)
    assert redone == ["pkg/mod.py", "pkg/helper.py"]

    def stale(*args: object) -> set[str]:
        raise AssertionError("worked out with no state")

    monkeypatch.setattr(index, "_stale", stale)
    assert index.answers(files) == (facts, state, redone)
    with pytest.raises(AssertionError, match="no state"):  # (with a state it is still asked)
        index.answers(files, state)


# -- a run without a cache keys nothing; the CUDA-only pass's scans (issue 25, h2-index) ----------


def _corpus() -> Path | None:
    root = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    return root if (root / ".ok").exists() else None


def _real_sources(every: int) -> list[bytes]:
    """The fixtures' Python files, and every `every`-th file of the bench corpus where it is here."""
    sources = [p.read_bytes() for p in sorted((ROOT / "fixtures").rglob("*.py"))]
    corpus = _corpus()
    if corpus is not None:
        sources += [p.read_bytes() for p in sorted(corpus.rglob("*.py"))[::every]]
    return sources


def _whole_word(names: list[bytes]) -> Callable[[bytes], bool]:
    """`cuda_only_index.names_word` as it was: the pattern, searched."""
    pattern = re.compile(rb"\b(?:%s)\b" % b"|".join(re.escape(n) for n in names))
    return lambda source: pattern.search(source) is not None


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's paths as they were before: every node walked, the probes' patterns searched,
    every line start tried, the parsed modules left to the cyclic collector."""
    monkeypatch.setattr(index, "_LEAVES", frozenset())
    monkeypatch.setattr(cuda_only_index, "names_word", _whole_word)
    monkeypatch.setattr(
        extensions, "search_lines", lambda pattern, source, word=b"import": bool(pattern.search(source))
    )
    monkeypatch.setattr(index.ProjectIndex, "release", lambda self: None)


def _parts(where: Path, given: list[Path], store: Cache | None) -> list[tuple[Any, Any, Any]]:
    """(device values, CUDA-only facts, every file's answers) of each project under `given`."""
    cuda_sources: list[str] = []
    candidates = list(discover(given, cuda_sources=cuda_sources))
    out = []
    for group, cu in runner.index_parts(candidates, cuda_sources, given):
        part = runner._Part(group, store, None, "xla", cu)
        facts = part.facts()
        out.append((part.values, part.extra, facts))
    return out


def _projects() -> list[Any]:
    out = [pytest.param(ROOT, [Path("fixtures")], id="fixtures")]
    corpus = _corpus()
    if corpus is not None:  # two whole libraries of the bench corpus (bench_index.py --baseline: all of it)
        out.append(pytest.param(corpus, [Path("peft-0.13.2"), Path("accelerate-1.1.1")], id="corpus"))
    return out


@pytest.mark.parametrize(("where", "given"), _projects())
def test_a_run_without_a_cache_finds_what_the_keyed_slow_paths_find(
    where: Path, given: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no cache nothing keys the answers: the scan works out no sha256 and no part of a
    file (the CUDA-only pass's scans of every file, twice, were a quarter of the index's CPU),
    and the answers are those of a run that keys them, on the index's paths as they were."""
    monkeypatch.chdir(where)
    real_part = cuda_only_index.part
    calls: list[int] = []

    def counted(source: bytes) -> bytes:
        calls.append(1)
        return real_part(source)

    monkeypatch.setattr(cuda_only_index, "part", counted)
    fast = _parts(where, given, None)
    assert calls == []  # no part of any file worked out
    with monkeypatch.context() as m:
        _slow(m)
        slow = _parts(where, given, Cache(tmp_path / "cache"))
    assert calls  # (the keyed run did)
    assert fast == slow
    assert any(extra for _, extra, _ in fast) and any(values for values, _, _ in fast)


def test_reads_is_whether_a_file_has_a_part() -> None:
    """`cuda_only_index.reads`: whether the CUDA-only pass reads a file, without its part's scans."""
    sources = [
        b"",
        b"x = 1\n",
        b"import os\n",
        b"class CudaBackend:\n    pass\n",
        b"def f(device):\n    return device == 'cuda'\n",
        b"x = 'cuda'\n",
    ]
    sources += _real_sources(13)
    found = [cuda_only_index.reads(s) for s in sources]
    assert found == [bool(cuda_only_index.part(s)) for s in sources]
    assert not all(found) and any(found)


def test_the_cuda_only_key_keeps_the_scanned_parts_of_unchanged_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cache the CUDA-only facts are keyed by the bytes they read: the part the scan
    worked out is taken for a file whose bytes are the same, worked out again for one that
    changed since; the key is the one every part worked out again gives."""
    files = {
        "a.py": b"import torch\n\ndef f(x):\n    return x.cuda()\n",
        "b.py": b"from a import f\nimport triton\n",
        "c.py": b"x = 1\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    importing = [(name, tmp_path / name) for name in files]
    scanned = {name: (hashlib.sha256(data).digest(), cuda_only_index.part(data)) for name, data in files.items()}
    fresh = runner._cuda_only(importing, "xla", [], [], {})
    real_part = cuda_only_index.part
    calls: list[bytes] = []

    def counted(source: bytes) -> bytes:
        calls.append(source)
        return real_part(source)

    monkeypatch.setattr(cuda_only_index, "part", counted)
    assert runner._cuda_only(importing, "xla", [], [], scanned) == fresh
    assert calls == []
    (tmp_path / "a.py").write_bytes(b"import torch\n")  # saved since the scan
    again = runner._cuda_only(importing, "xla", [], [], {})
    assert again[1] != fresh[1]
    calls.clear()
    assert runner._cuda_only(importing, "xla", [], [], scanned) == again
    assert calls == [b"import torch\n"]
    assert runner._cuda_only(importing, "xla", [], [], None) == (again[0], "")  # no cache: no key


_LINES = [
    b"import x_C",
    b"x = 1\nimport  _C",
    b"  from . import _C\n",
    b"import_C",
    b"ximport a_C",
    b"import\n_C",
    b"from a import (\n _C)",
    b"\nimport a._C as b",
    b"a_Cimport _C\n",
    b"import a" * 2000 + b" _C",
    b"#import _C\n",
    b"import \xc3\xa9_C",
    b"from .ops import x\nimport ops\n",
    b"x = ops\nfrom y import z  # ops\n",
]


def test_search_lines_finds_what_the_pattern_finds() -> None:
    """`extensions.search_lines` matches only the lines holding `import`, each alone: what the
    pattern's search over the whole file finds (for `IMPORT_HINT` and the CUDA-only modules'
    probe of `_module_attributes`)."""
    probe = re.compile(rb"^(?=([^\n]*?\bimport\b))\1[^\n]*\b(?:ops|layers)\b", re.MULTILINE)
    sources = [*_LINES, *_real_sources(7)]
    for pattern in (extensions.IMPORT_HINT, probe):
        found = [extensions.search_lines(pattern, s) for s in sources]
        assert found == [pattern.search(s) is not None for s in sources]
        assert any(found) and not all(found)
    assert [extensions.hints_import(s) for s in _LINES] == [bool(extensions.IMPORT_HINT.search(s)) for s in _LINES]


def test_names_word_finds_what_the_whole_word_pattern_finds() -> None:
    """`cuda_only_index.names_word` looks for the names and checks the byte before: what
    `\\b(?:names)\\b` finds, for names of word bytes and others (which it searches as it was)."""
    rng = random.Random(25)
    alphabet = b"ab_1 .\n(\xc3\xa9"
    lists = [[b"a"], [b"ab", b"b"], [b"a", b"ab"], [b"b_1", b"ab"], [b"\xc3\xa9"], [b"a\xc3\xa9", b"b"], [b"a.b"]]
    texts = [bytes(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(3000)]
    texts += [b"", b"a", b"ab", b"xab", b"ab_", b"(ab)", b"b a", b"aab ab"]
    for names in lists:
        fast, slow = cuda_only_index.names_word(names), _whole_word(names)
        assert [fast(t) for t in texts] == [slow(t) for t in texts], names


def test_the_index_leaves_no_cyclic_garbage() -> None:
    """`answers` cuts the cycles of the modules it parsed (a scope names its module): they are
    freed as it returns, not left for the cyclic collector to walk every node of (the index
    turns it back on as it returns; its next run walked ~3M objects of the bench corpus)."""
    files = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "fixtures").rglob("*.py"))]
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        facts, _, _ = index.answers(files)
        assert gc.collect() < 100
    finally:
        if collecting:
            gc.enable()
    assert any(facts.values())


def _parameter_loop_by_events(source: bytes) -> bool:
    """`index.parameter_loop` as it was: every line end an event, sorted with the parts'."""
    if b"parameters(" not in source:
        return False
    parts = [re.compile(rb"(?=(%s))" % part) for part in (rb"for\s", rb"\sin\s", rb"parameters\(", rb"\n")]
    events = sorted((m.start(), kind) for kind, part in enumerate(parts) for m in part.finditer(source))
    fors: list[int] = []
    ins: list[int] = []
    for at, kind in events:
        if kind == 0:
            fors.append(at + 4)
        elif kind == 1 and fors and fors[0] <= at:
            ins.append(at + 4)
        elif kind == 2 and ins and ins[0] <= at:
            return True
        elif kind == 3:
            fors = [s for s in fors if s > at]
            ins = [s for s in ins if s > at]
    return False


def test_parameter_loop_finds_what_the_events_of_every_line_end_found() -> None:
    """`parameter_loop` looks for the line ends between one part's place and the next: what it
    found with each line end an event, on random text of its parts and over the fixtures and
    the corpus."""
    rng = random.Random(25)
    pieces = [b"for", b" ", b"\n", b"in", b"parameters(", b"x", b"\t", b"f", b"or "]
    texts = [b"".join(rng.choice(pieces) for _ in range(rng.randrange(14))) + b"parameters(" for _ in range(20000)]
    texts += _real_sources(5)
    found = [index.parameter_loop(t) for t in texts]
    assert found == [_parameter_loop_by_events(t) for t in texts]
    assert any(found) and not all(found)


def test_the_index_s_searches_behind_a_word_find_what_the_patterns_find() -> None:
    """`_compares_cuda` and `fused_flags.names_fused` search their pattern only where a word
    every match holds is (a quote then `cuda`; `fused`): what the pattern finds alone."""
    sources = [
        b"if d == 'cuda':\n",
        b'if "cuda" != d:\n',
        b"x = 'cuda'\n",
        b"if d in ('cuda',):\n",
        b"if 'cuda' in d:\n",
        b"if d == cuda:\n",
        b"SGD(p, fused=True)\n",
        b"SGD(p, fused =x)\n",
        b"unfused = 1\n",
        b"fused\n= 1\n",
    ]
    sources += _real_sources(3)
    for fast, pattern in ((index._compares_cuda, index._COMPARED), (fused_flags.names_fused, fused_flags.FUSED_TOKEN)):
        found = [fast(s) for s in sources]
        assert found == [pattern.search(s) is not None for s in sources]
        assert any(found) and not all(found)
