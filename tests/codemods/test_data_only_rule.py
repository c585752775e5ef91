"""A rule added to the rule data alone (here a row of the torch.cuda table and its rule, no
Python) is selected, ignored and configured like every other rule: the family's codes come
from the data, so `--select` cannot silently drop it."""

from __future__ import annotations

import shutil
import sys
from functools import _lru_cache_wrapper

import pytest

import porter.analysis.prefilter
import porter.config.ruledata
from porter.cli.common import split_codes
from porter.config.files import resolve
from tests.helpers import port

RULE = """
[[api]]
names = ["porter_data_only"]
code = "CUDA099"
neuron = "manual"
tpu = "manual"
xla = "manual"

[[rule]]
code = "CUDA099"
name = "data-only"
summary = "A rule that exists only in the rule data."
severity = "warning"
tokens = ["cuda"]
fix = { neuron = "manual", tpu = "manual", xla = "manual" }
"""
SOURCE = "import torch\ntorch.cuda.porter_data_only()\n"


def _clear_caches() -> None:
    """Every cache of porter's that may hold rule data read from the old folder."""
    for name, module in list(sys.modules.items()):
        if name == "porter" or name.startswith("porter."):
            for value in list(vars(module).values()):
                if isinstance(value, _lru_cache_wrapper):
                    value.cache_clear()


@pytest.fixture
def data_only_rule(tmp_path, monkeypatch):
    rules = tmp_path / "rules"
    shutil.copytree(porter.config.ruledata.rules_dir(), rules)
    with open(rules / "cuda_api.toml", "a", encoding="utf-8") as fh:
        fh.write(RULE)
    monkeypatch.setattr(porter.config.ruledata, "rules_dir", lambda: rules)
    monkeypatch.setattr(porter.analysis.prefilter, "rules_dir", lambda: rules)
    _clear_caches()
    yield
    monkeypatch.undo()
    _clear_caches()


def _codes(**settings) -> set[str]:
    _, findings = port(SOURCE, "neuron", **settings)
    return {f.code for f in findings}


def test_selected_by_code_and_prefix(data_only_rule):
    assert "CUDA099" in _codes()
    assert _codes(select=("CUDA099",)) == {"CUDA099"}
    assert _codes(select=("CUDA09",)) == {"CUDA099"}
    assert _codes(select=("DEV",)) == set()


def test_ignored(data_only_rule):
    assert "CUDA099" not in _codes(ignore=("CUDA099",))
    assert _codes(select=("CUDA",), ignore=("CUDA099",)) == set()


def test_selected_by_command_line_and_config(data_only_rule, tmp_path):
    assert split_codes(["CUDA099"]) == ("CUDA099",)  # not refused as an unknown code
    project = tmp_path / "project"
    project.mkdir()
    (project / "porter.toml").write_text('target = "neuron"\nselect = ["CUDA099"]\n', encoding="utf-8")
    settings = resolve([project]).settings()
    assert settings.select == ("CUDA099",)
    assert _codes(select=settings.select) == {"CUDA099"}
