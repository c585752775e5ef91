"""The project index's cold work, cut without a change to what it finds.

- `_Collector` walks a file as `ast.NodeVisitor` does: its own `visit` (the method looked up
  once per node type) and `generic_visit` make the same calls in the same order, so a
  module's scopes, calls, sites and bindings are the same.
- `answers` with no earlier state does not work out what is stale (nothing is kept to test)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from porter.analysis import index
from porter.analysis.index import _Collector
from porter.analysis.program import ModuleInfo, Scope

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
