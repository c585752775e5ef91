"""libcst's parse without its check of each node it builds (porter.codemods.apply._unchecked):
the trees are the checked parse's, every port comes out the same, and the check is back for
every node built after the parse (the families' fixes), a failed parse included."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest

import porter.codemods.apply as apply
from porter.codemods import cstwalk
from porter.config.settings import Settings
from porter.core.findings import FileResult, FileStatus
from tests.helpers import rule_example_files

ROOT = Path(__file__).resolve().parents[2]


def _corpus() -> Path | None:
    root = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    return root if (root / ".ok").exists() else None


def _files() -> list[tuple[str, bytes]]:
    """The fixtures, every rule's examples and every 23rd corpus file (where downloaded)."""
    files = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "fixtures").rglob("*.py"))]
    files += [(name, source) for name, source, _ in rule_example_files()]
    root = _corpus()
    if root is not None:
        paths = sorted(p for p in root.rglob("*.py") if p.is_file())[::23]
        files += [(str(p.relative_to(root)), p.read_bytes()) for p in paths]
    return files


def _parsed(source: bytes) -> cst.Module | FileResult:
    return apply._parse(FileResult(path="f.py", status=FileStatus.UNCHANGED), source)


def test_the_parse_checks_no_node_it_builds(monkeypatch):
    """The point of the change: not one node's `_validate` runs while libcst parses a file
    (on main each node the parser built ran its own)."""
    assert cstwalk.KNOWN_LIBCST  # the installed libcst is the one the walk was made for
    checked: list[str] = []
    for cls in (cst.Name, cst.SimpleWhitespace, cst.Attribute, cst.Call):
        own = cls._validate

        def spy(self, own=own):
            checked.append(type(self).__name__)
            own(self)

        monkeypatch.setattr(cls, "_validate", spy)
    module = _parsed(b"import torch\n\nx = torch.ones(2).to('cuda')  # moved\n")
    assert isinstance(module, cst.Module)
    assert checked == []
    cst.Name("built")  # a node built after the parse is checked, as always
    assert checked == ["Name"]


def test_no_node_class_has_a_post_init_of_its_own():
    """`_unchecked` swaps `CSTNode.__post_init__`: it reaches every node only where no class
    below it defines its own."""
    seen: set[type] = set()
    todo = [cst.CSTNode]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    assert len(seen) > 100
    assert [c.__name__ for c in seen if "__post_init__" in c.__dict__] == []


def test_the_check_is_back_after_a_parse_and_after_a_failed_one():
    original = cst.CSTNode.__post_init__
    for source in (b"x = 1\n", b"def f(:\n", b"x = (\n"):
        _parsed(source)
        assert cst.CSTNode.__post_init__ is original
        with pytest.raises(cst.CSTValidationError):
            cst.Name("not a name")


def test_the_trees_are_the_checked_parses(monkeypatch):
    """Over the fixtures, the rule examples and real library code: the unchecked tree equals
    the checked one node for node and prints the same text; a file that does not parse fails
    with the same error."""
    files = _files()
    assert len(files) > 200
    for name, source in files:
        out = []
        for on in (True, False):
            monkeypatch.setattr(apply, "UNCHECKED_PARSE", on)
            out.append(_parsed(source))
        unchecked, checked = out
        if isinstance(checked, FileResult):
            assert isinstance(unchecked, FileResult), name
            assert (unchecked.status, unchecked.reason, unchecked.error_line) == (
                checked.status,
                checked.reason,
                checked.error_line,
            ), name
            continue
        assert isinstance(unchecked, cst.Module), name
        assert unchecked.deep_equals(checked), name
        assert unchecked.bytes == checked.bytes, name


def test_every_port_comes_out_the_same(monkeypatch):
    """Lint and rewrite of every file, with the check and without it: the same result."""
    settings = [Settings(target="neuron"), Settings(target="xla", want_source=False)]
    for name, source in _files()[::5]:
        for s in settings:
            out = []
            for on in (True, False):
                monkeypatch.setattr(apply, "UNCHECKED_PARSE", on)
                r = apply.port_python(source, name, s)
                out.append(repr((r.status, r.reason, r.error_line, r.findings, r.suppressed, r.new_source)))
            assert out[0] == out[1], f"{name} ({s.target})"
