"""Which rule family owns which code is declared once, in the rule data (`family` in
rules/*.toml): every code has exactly one owner, and a family reports only codes it owns."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import pytest

from porter.codemods import FAMILIES
from porter.codemods.context import PortContext
from porter.codemods.cuda_api import api_table
from porter.codemods.family import Family
from porter.config.ruledata import all_rules
from porter.files import FAMILIES as FILE_FAMILIES
from tests.helpers import port

ROOT = Path(__file__).resolve().parents[2]
OWNERS = [f for f in FAMILIES if f.serves is None]
HELPERS = [f for f in FAMILIES if f.serves is not None]
BY_NAME = {f.name: f for f in FAMILIES}


def test_family_names_are_their_modules():
    """A rule's `family` names the module that implements it: porter/codemods/<family>.py."""
    for fam in FAMILIES:
        module = sys.modules[fam.__module__]
        assert fam.name == Path(module.__file__).stem.replace("_", "-"), fam
    assert len(BY_NAME) == len(FAMILIES), "two families share a name"


def test_every_code_has_exactly_one_owner():
    """A Python rule's code has one codemod family; the rules of the files around the Python
    (dependencies, Dockerfiles, scripts, configs, notebooks) belong to a porter of porter/files."""
    for code, rule in all_rules().items():
        owners = [f for f in OWNERS if code in f.codes()]
        if rule.family in FILE_FAMILIES:
            assert not owners, f"{code} (family {rule.family!r}) is a file porter's, yet owned by {owners}"
            assert "python" not in rule.kinds, f"{code} reads Python files, but no codemod family owns it"
            continue
        assert len(owners) == 1, f"{code} (family {rule.family!r}) is owned by {owners}"
        assert owners[0].name == rule.family


def test_file_families_are_their_folders():
    """A file family names the folder of porter/files that implements it."""
    import importlib

    for module in FILE_FAMILIES.values():
        assert importlib.import_module(module).__file__
    assert {r.family for r in all_rules().values() if "python" not in r.kinds} <= set(FILE_FAMILIES)


def test_owner_and_helper_families():
    """An owning family owns a code at least; a helper owns none and serves an owner."""
    for fam in OWNERS:
        assert fam.codes(), f"{fam.__name__} owns no code: is its `family` in rules/*.toml spelled {fam.name!r}?"
    for fam in HELPERS:
        assert fam.codes() == (), f"{fam.__name__} serves {fam.serves.__name__} and may own nothing"
        assert fam.serves in OWNERS


def test_cuda_api_table_codes():
    """A row of the torch.cuda table reports its code unless it hands its names to another
    family (`delegate` for every target), whose code it then names."""
    for name, row in api_table().items():
        rule = all_rules()[row.code]
        delegated = row.actions and all(a == "delegate" for a in row.actions.values())
        if delegated:
            assert rule.family != "cuda-api", f"row {name!r} delegates its own family's code {row.code}"
        else:
            assert rule.family == "cuda-api", f"row {name!r} reports {row.code}, the {rule.family} family's"


# -- a family reports only what it owns --------------------------------------------------


def _read_only(tree: ast.AST) -> set[int]:
    """ids of the code literals a module only reads: the argument of `ctx.enabled(...)`, or a
    constant set intersected with `ctx.applied_codes()` (which fixes applied in the file)."""
    ids: set[int] = set()
    sets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "enabled":
            ids.update(id(a) for a in node.args)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            sides = (node.left, node.right)
            if any(
                isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "applied_codes"
                for x in sides
            ):
                sets.update(x.id for x in sides if isinstance(x, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in sets for t in node.targets):
            ids.update(id(n) for n in ast.walk(node.value))
    return ids


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_code_literals_are_owned_or_read(fam):
    """Any code a family's module spells (`self._manual("LIB001", ...)`, a table keyed by
    code) is its own, unless the module only reads it from another family's selection or
    applied fixes."""
    tree = ast.parse(inspect.getsource(sys.modules[fam.__module__]))
    reads = _read_only(tree)
    foreign = [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and n.value in all_rules() and n.value not in fam.codes() and id(n) not in reads
    ]
    assert not foreign, f"{fam.__module__} spells codes the {fam.name} family does not own: {foreign}"


def test_the_scan_tells_reads():
    src = "MOVES = {'DEV001'}\nOTHER = {'DEV002'}\ndef f(ctx):\n    return ctx.applied_codes() & MOVES or ctx.enabled('XLA005')\n"
    tree = ast.parse(src)
    reads = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) in _read_only(tree)}
    assert reads == {"DEV001", "XLA005"}


LEGACY = """import torch
from torch.cuda import FloatTensor as FT
a = torch.cuda.FloatTensor(3)
b = FT([1, 2])
c = x.type(torch.cuda.LongTensor)
ok = isinstance(x, torch.cuda.FloatTensor)
d = torch.cuda.HalfTensor(n)
"""


def _corpus() -> list[tuple[str, str, dict]]:
    """(source, target, settings) for every rule example and fixture case, every rule on."""
    out = []
    for rule in all_rules().values():
        for ex in rule.examples:
            if not ex.file:  # (the files around the Python have no codemod family)
                out.append((ex.before, ex.target, {"portable": ex.portable}))
    for case in sorted((ROOT / "fixtures" / "cases").glob("*.in.py")):
        for target in ("neuron", "tpu", "xla"):
            out.append((case.read_text(encoding="utf-8"), target, {}))
    for target in ("neuron", "tpu", "xla"):
        out.append((LEGACY, target, {}))
    return out


def test_families_report_only_owned_codes_at_run_time(monkeypatch):
    """Every finding of a run over the examples and fixtures, with every rule on, comes from
    the family that owns its code (the reporting family is the `self` up the call stack)."""
    seen: dict[tuple[str, str], int] = {}
    report = PortContext.report

    def recording(self, code, *args, **kwargs):
        frame = sys._getframe(1)
        while frame is not None and not isinstance(frame.f_locals.get("self"), Family):
            frame = frame.f_back
        fam = type(frame.f_locals["self"]).name if frame is not None else "(no family)"
        seen[(fam, code)] = seen.get((fam, code), 0) + 1
        return report(self, code, *args, **kwargs)

    monkeypatch.setattr(PortContext, "report", recording)
    for source, target, extra in _corpus():
        port(source, target, unsafe=True, select=("ALL",), **extra)
    wrong = {k: n for k, n in seen.items() if k[0] not in BY_NAME or k[1] not in BY_NAME[k[0]].codes()}
    assert not wrong, f"(family, code) reported by a family that does not own the code: {wrong}"
    # the run exercised most of the rules: a corpus that reports nothing would prove nothing
    assert len({code for _, code in seen}) >= 0.8 * sum("python" in r.kinds for r in all_rules().values())
