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
from porter.codemods.family import walk as family_walk
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
        order = [id(n) for n in family_walk(module)]  # family.walk: a node, then its last child's subtree first
        stack, expected = [module], []
        while stack:
            node = stack.pop()
            expected.append(id(node))
            stack.extend(node.children)
        assert order == expected, name
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


def test_code_nodes_are_the_walk_less_trivia():
    """family.code_nodes (the backends family's scans that ask for calls, assigns, `if`s ...)
    reads only the fields that may hold a node outside the trivia (cstwalk.CODE_ORDER): it must
    give `family.walk`'s nodes less the trivia, in the same order, from a module, from each
    statement and from each expression statement's value."""
    from porter.codemods.family import code_nodes

    def expected(node: cst.CSTNode) -> list[int]:
        return [id(n) for n in family_walk(node) if type(n) not in walk.TRIVIA]

    checked = 0
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        roots: list[cst.CSTNode] = [module]
        roots += [n for n in family_walk(module) if isinstance(n, (cst.BaseStatement, cst.BaseSmallStatement))]
        roots += [n.value for n in family_walk(module) if isinstance(n, cst.Expr)]
        roots += [n.whitespace_before_args for n in family_walk(module) if isinstance(n, cst.Call)][:3]
        for root in roots:
            assert [id(n) for n in code_nodes(root)] == expected(root), f"{name}: {type(root).__name__}"
            checked += 1
    assert checked > 1000
    # a field annotated as whitespace only is not read; one that may hold code is
    assert walk.CODE_ORDER[cst.Call] == ("func", "args")
    assert "whitespace_after_arg" not in walk.CODE_ORDER[cst.Arg]
    assert walk.CODE_ORDER[cst.Name] == ()


def test_unconditional_nodes_are_the_old_walk_less_trivia():
    """backends._unconditional_nodes (what _kept_streams reads attributes from) skips the
    trivia: it gives what its walk of every child gave, less the trivia, in the same order,
    for every function and class of the fixtures, the rule examples and the corpus sample."""
    from porter.codemods.backends import _CONDITIONAL, _unconditional_nodes

    def every_child(node: cst.CSTNode) -> list[int]:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(c for c in walk.children(n) if not isinstance(c, _CONDITIONAL))
        return [id(n) for n in out if type(n) not in walk.TRIVIA]

    checked = 0
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        for node in family_walk(module):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                assert [id(n) for n in _unconditional_nodes(node)] == every_child(node), name
                checked += 1
    assert checked > 500  # 590 from the fixtures and rule examples alone (a fresh machine has no corpus)


class _TriviaFree(_Recorder):
    ignores_trivia = True


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (corpus strings read with `\\s` in them)
def test_a_visitor_that_ignores_trivia_gets_libcsts_calls_less_trivia():
    """A visitor with its own on_visit / on_leave that says it does nothing with whitespace,
    punctuation and operators (`ignores_trivia`) gets libcst's calls on every other node, in
    the same order; the CUDA-only facts (guards._Scan, such a visitor) come out the same."""
    import dataclasses

    from porter.analysis.resolve import ImportTable
    from porter.codemods import guards

    def dump(facts) -> list:
        def plain(v):
            if isinstance(v, cst.CSTNode):
                return id(v)
            if isinstance(v, guards._Unit):
                return ("unit", id(v.node))
            if isinstance(v, (set, frozenset)):
                return sorted(map(repr, v))
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            if isinstance(v, dict):
                return [(k, plain(x)) for k, x in v.items()]
            return v

        units = [[(f.name, plain(getattr(u, f.name))) for f in dataclasses.fields(u)] for u in facts._units.values()]
        return [facts.names, facts.running, units, [id(u.node) for u in facts._top]]

    checked = 0
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        theirs, ours = _Recorder(), _TriviaFree()
        module.visit(theirs)
        walk.visit(module, ours)
        inside = _inside(module, walk.TRIVIA)
        assert ours.calls == [c for c in theirs.calls if c[1] not in inside], name
        imports = ImportTable.from_module(module)
        found = []
        for ignores in (False, True):
            guards._Scan.ignores_trivia = ignores
            try:
                found.append(dump(guards.CudaOnly(module, imports, target="neuron")))
            finally:
                guards._Scan.ignores_trivia = True
        assert found[0] == found[1], name
        assert _guard_scans(module, imports, False) == _guard_scans(module, imports, True), name
        checked += 1
    assert checked > 100


def _guard_scans(module: cst.Module, imports, ignores: bool) -> list:
    """What guards' other trivia-free visitors find: the call sites of the module (and the
    uses of `torch`), and for each function (20 a module) whether it uses CUDA, checks or tests
    the device."""
    from porter.codemods import guards

    kinds = (guards._CudaUse, guards._DeviceChecks, guards._DeviceTests, guards._CallSites)
    own = {kind: "ignores_trivia" in vars(kind) for kind in kinds}
    for kind in kinds:
        kind.ignores_trivia = ignores
    try:
        out: list = []
        for name in (None, "torch"):
            sites = guards._CallSites(name)
            walk.visit(module, sites)
            out.append([(k, [[id(n) for n in stack] for stack in v]) for k, v in sites.found.items()])
        for fn in [n for n in family_walk(module) if isinstance(n, cst.FunctionDef)][:20]:
            for kind in kinds[:3]:
                scan = kind(imports)
                walk.visit(fn, scan)
                out.append(scan.found)
        return out
    finally:
        for kind in kinds:
            if own[kind]:
                kind.ignores_trivia = True
            else:
                del kind.ignores_trivia  # (inherited)


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


class _Changer(cst.CSTTransformer):
    """Replaces, removes and splits nodes (every kind of result a leave_ can give), and records
    each call with the text of the `updated` node a statement line was handed."""

    def __init__(self, skip: frozenset[type] = frozenset()) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, str]] = []
        self.skip = skip
        self._printer = cst.Module(body=[])

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.calls.append(("visit", id(node), ""))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        text = self._printer.code_for_node(updated_node) if type(original_node) is cst.SimpleStatementLine else ""
        self.calls.append(("leave", id(original_node), text))
        kind = type(original_node)
        if kind is cst.Name and updated_node.value == "cuda":
            return updated_node.with_changes(value="xla")
        if kind is cst.Pass:
            return cst.RemovalSentinel.REMOVE  # (its line, left empty, goes too)
        if kind is cst.Arg and updated_node.keyword is not None and updated_node.keyword.value == "device":
            return cst.RemovalSentinel.REMOVE
        if kind is cst.SimpleStatementLine and any(type(s) is cst.Return for s in updated_node.body):
            return cst.FlattenSentinel([updated_node, updated_node])
        return updated_node

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


def test_transform_is_libcsts_walk():
    """`transform` makes libcst's calls, hands each leave the same `updated` text, builds the
    same tree, and hands a node nothing below replaced as itself; with `skip`, the calls
    outside the skipped subtrees are the same."""
    if not walk._ORDER:
        pytest.skip("another libcst than FIELDS's: transform is libcst's walk")
    files = calls = kept = 0
    for name, source in _sources():
        module = _module(source)
        if module is None:
            continue
        theirs = _Changer()
        expected = module.visit(theirs)
        for skip in (frozenset(), walk.TRIVIA):
            ours = _Changer(skip)
            got = walk.transform(module, ours.on_visit, ours.on_leave, skip)
            assert isinstance(got, cst.Module) and got.code == expected.code, name
            inside = _inside(module, skip)
            assert ours.calls == [c for c in theirs.calls if c[1] not in inside], name
        same = _Same()
        walk.transform(module, same.on_visit, same.on_leave)
        assert same.handed_copy == 0, name
        files += 1
        calls += len(theirs.calls)
        kept += same.kept
    assert files > 100 and calls > 100_000 and kept > 10_000


class _Same(cst.CSTTransformer):
    """Replaces nothing: every node is handed to its leave as itself."""

    def __init__(self) -> None:
        super().__init__()
        self.kept = self.handed_copy = 0

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        if updated_node is original_node:
            self.kept += 1
        else:
            self.handed_copy += 1
        return updated_node


def _inside(module: cst.Module, skip: frozenset[type]) -> set[int]:
    """The ids of the nodes in a subtree rooted at a node of a `skip` type."""
    out: set[int] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    while stack:
        node, under = stack.pop()
        under = under or type(node) in skip
        if under:
            out.add(id(node))
        stack.extend((c, under) for c in walk.children(node))
    return out
