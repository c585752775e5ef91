"""porter.codemods.cstwalk stands for libcst's own walks: its children are `node.children`, node for
node and in order, and its read-only visit makes a visitor's `on_visit` / `on_leave` calls in
`node.visit`'s order, over the fixtures, every rule's examples and, where bench_lint_real.py
has downloaded it, a sample of real library code."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest

from porter.codemods import cstwalk as walk
from porter.config.ruledata import all_rules

ROOT = Path(__file__).resolve().parents[2]


def _sources() -> list[tuple[str, bytes]]:
    files = [
        (str(p.relative_to(ROOT)), p.read_bytes())
        for p in sorted((ROOT / "fixtures").rglob("*.py"))
        if ".out." not in p.name and "__pycache__" not in p.parts
    ]
    for rule in all_rules().values():
        files += [(f"{rule.code}_{i}.py", ex.before.encode()) for i, ex in enumerate(rule.examples)]
    corpus = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    if (corpus / ".ok").exists():
        files += [(str(p), p.read_bytes()) for p in sorted(corpus.rglob("*.py"))[::40]]
    return files


def _module(source: bytes) -> cst.Module | None:
    try:
        return cst.parse_module(source)
    except Exception:  # noqa: BLE001 - a file libcst cannot parse has no tree to compare
        return None


class _Recorder(cst.CSTVisitor):
    """Every call libcst's visit makes, and a subtree skipped (a visit_ returning False)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.calls.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)  # ... and a subtree skipped

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.calls.append(("leave", id(original_node)))


def test_the_fields_are_the_installed_libcsts():
    """FIELDS is regenerated (python -m porter.codemods.cstwalk) when libcst changes its walk."""
    if walk._libcst_version() != walk.LIBCST_VERSION:
        pytest.skip(f"libcst {walk._libcst_version()} installed, FIELDS made from {walk.LIBCST_VERSION}: libcst's path")
    assert walk.fields_from_libcst() == walk.FIELDS
    assert walk._ORDER  # the fast path is on


def test_children_and_visit_are_libcsts():
    checked = calls = 0
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            ours, theirs = list(walk.children(node)), list(node.children)
            assert [id(n) for n in ours] == [id(n) for n in theirs], f"{name}: {type(node).__name__}"
            stack.extend(theirs)
            checked += 1
        a, b = _Recorder(), _Recorder()
        module.visit(a)
        walk.visit(module, b)
        assert a.calls == b.calls, name
        for cls in (_Plain, _PlainWithCommas):
            c, d = cls(), cls()
            module.visit(c)
            walk.visit(module, d)
            assert c.calls == d.calls, name
            calls += len(c.calls)
    assert checked > 10_000 and calls > 1_000


class _Plain(cst.CSTVisitor):
    """libcst's own on_visit / on_leave, with a few methods (and a subtree skipped)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.calls.append(("Name", id(node)))

    def leave_Call(self, original_node: cst.Call) -> None:
        self.calls.append(("Call", id(original_node)))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.calls.append(("Lambda", id(node)))
        return False


class _PlainWithCommas(_Plain):
    """... and a method for a node inside the punctuation the walk otherwise leaves out."""

    def visit_Comment(self, node: cst.Comment) -> None:
        self.calls.append(("Comment", id(node)))


def test_the_trivia_hold_only_trivia():
    """The subtrees `visit` leaves out for a visitor with no method for them hold no other node."""
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
        while stack:
            node, inside = stack.pop()
            assert not inside or type(node) in walk._TRIVIA, f"{name}: {type(node).__name__} in trivia"
            stack.extend((c, inside or type(c) in walk._TRIVIA) for c in node.children)


class _Hooked(cst.CSTVisitor):
    def __init__(self) -> None:
        self.funcs = 0

    def visit_Call_func(self, node: cst.Call) -> None:
        self.funcs += 1


def test_a_visitor_with_attribute_hooks_takes_libcsts_path():
    hooked = _Hooked()
    walk.visit(cst.parse_module("f(g(1))\n"), hooked)
    assert hooked.funcs == 2
    assert not walk._plain(_Hooked) and walk._plain(_Recorder) and not walk._plain(cst.CSTTransformer)
