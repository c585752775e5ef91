"""porter's rule data against the targets' real APIs (rules/api/*.json, built from the packages).

Every spelling porter emits for a target, and every API its advice names, must exist in that
target's records; a tpu port must never emit one of TorchTPU's internal twins. When porter's
rule data and the records disagree, one of these fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from porter.apidata import TARGET_RECORDS, load_record, target_api
from porter.codemods.cuda_api import api_table
from porter.config.ruledata import all_rules
from porter.config.targets import all_targets

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("neuron", "tpu", "xla")
_ALIASES = {
    "{xm}": "torch_xla.core.xla_model",
    "{xr}": "torch_xla.runtime",
    "{torch_xla}": "torch_xla",
    "{torch}": "torch",
    "{pl}": "torch_xla.distributed.parallel_loader",
}
_NAMESPACES = {
    "neuron": ("torch.accelerator", "torch.neuron", "torch_neuronx"),
    "tpu": ("torch.accelerator", "torch.tpu", "torch_tpu"),
    "xla": ("torch_xla",),
}
_DOTTED = re.compile(r"\b(torch(?:_xla|_neuronx|_tpu)?(?:\.\w+)+)")


def _spellings(text: str) -> list[str]:
    for alias, module in _ALIASES.items():
        text = text.replace(alias, module)
    return _DOTTED.findall(text)


def _ours(name: str, target: str) -> bool:
    return name.startswith(_NAMESPACES[target])


def _emitted(target: str) -> set[str]:
    """The dotted names the cuda_api table writes for `target`."""
    out: set[str] = set()
    for row in api_table().values():
        for action in (row.actions.get(target, ""), row.device_position.get(target, "")):
            if action.split(" ", 1)[0] in ("rename", "expr", "stmts"):
                out.update(_spellings(action.split(" ", 1)[1]))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_every_emitted_spelling_exists(target):
    api = target_api(target)
    emitted = _emitted(target)
    assert emitted
    unknown = sorted(n for n in emitted if api.lookup(n) is None or not api.exists(n))
    assert not unknown, f"{target}: porter emits names its records do not have: {unknown}"


def test_tpu_never_emits_an_internal_twin():
    twins = target_api("tpu").twins
    assert "torch.tpu.synchronize" in twins and "torch.tpu.is_available" in twins
    assert not sorted(_emitted("tpu") & set(twins))


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module, docstrings left out (they describe, not emit)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_the_codemods_name_only_real_target_apis(target):
    """String spellings inside the codemods' own code (`ctx.ref("torch.accelerator.X")`)."""
    api = target_api(target)
    bad = []
    for path in sorted((ROOT / "porter" / "codemods").glob("*.py")):
        for name in _spellings("\n".join(_code_strings(path))):
            if _ours(name, target) and api.lookup(name) is not None and not api.exists(name):
                bad.append(f"{path.name}: {name}")
    assert not bad


@pytest.mark.parametrize("target", TARGETS)
def test_advice_names_only_real_target_apis(target):
    api = target_api(target)
    bad = []
    for rule in all_rules().values():
        if target not in rule.targets or rule.family == "target-api":
            continue
        texts = [rule.advice_for(target) or "", *(v for k, v in rule.advice.items() if k == target)]
        for row in api_table().values():
            if row.code == rule.code:
                texts.append(row.advice.get(target) or row.advice.get("*") or "")
        for name in {n for t in texts for n in _spellings(t)}:
            if _ours(name, target) and (api.lookup(name) is None or not api.exists(name)):
                bad.append(f"{rule.code}: {name}")
    assert not bad, bad


@pytest.mark.parametrize("target", TARGETS)
def test_target_profile_matches_the_records(target):
    t = all_targets()[target]
    api = target_api(target)
    assert t.device_type in api.device_types
    assert t.compile_backend in api.compile_backends
    assert t.dist_backend in api.dist_backends
    if t.tensor_is_attr:
        assert t.tensor_is_attr in api.tensor_attrs
    assert api.exists(t.autocast_dtype)
    if t.device_expr:
        assert api.exists(t.device_expr.removesuffix("()"))


def test_records_say_where_they_come_from():
    for stems in TARGET_RECORDS.values():
        for stem in stems:
            source = load_record(stem)["source"]
            assert source["package"] and source["version"] and source["how"] and source["generated"]
    assert "parmoham-aws/test-repo-parmoham" in load_record("torch_neuronx")["source"]["origin"]


def test_positional_only_devices_are_recorded():
    """targets.md: these take the device positionally only in torch 2.9 and 2.13."""
    for target in TARGETS:
        api = target_api(target)
        for fn in (
            "synchronize",
            "memory_allocated",
            "max_memory_allocated",
            "memory_stats",
            "reset_peak_memory_stats",
            "current_stream",
        ):
            (param,) = api.lookup(f"torch.accelerator.{fn}").member.signature.parameters.values()
            assert param.kind is param.POSITIONAL_ONLY, (target, fn)
        assert api.lookup("torch.accelerator.device_index").member.int_only("device")
