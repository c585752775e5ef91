"""The suite's own rules (tests/conftest.py, tests/deps.py): porter's default cache is a folder
of this test process, never the user's `~/.cache/porter`, and no test skips for a missing
dependency."""

from __future__ import annotations

import os
from pathlib import Path

from porter.pipeline.cache import Cache
from porter.pipeline.runner import run
from porter.config.settings import Settings
from tests.deps import INSTALLING


def test_default_cache_is_outside_the_users_home(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    where = Cache.for_paths([tmp_path]).directory
    base = Path(os.environ["XDG_CACHE_HOME"]) / "porter"
    assert where.is_relative_to(base), where
    assert not where.is_relative_to(Path.home() / ".cache"), where
    run([tmp_path], Settings(target="xla"), jobs=1, cache=True)
    assert any(where.rglob("*.json")), "the run wrote no cache entry where porter was told to"


def test_the_cache_key_is_outside_the_users_home():
    from porter.pipeline.cache import key_path

    assert key_path().is_relative_to(Path(os.environ["XDG_CONFIG_HOME"]))
    assert not key_path().is_relative_to(Path.home() / ".config")


def test_the_shells_porter_settings_do_not_reach_the_tests():
    kept = ("PORTER_TPU_PYTHON", "PORTER_REALPROG_CACHE", INSTALLING)  # where things are, not settings
    assert not [n for n in os.environ if n.startswith("PORTER_") and n not in kept]


def test_no_test_skips_for_a_missing_dependency():
    """A skip for a missing package turns a broken install step into a green run: tests use
    tests/deps.py (`require`, `need`), which fail with the command that installs it."""
    here = Path(__file__).resolve().parent
    found = [
        f"{p.relative_to(here)}:{n}"
        for p in sorted(here.rglob("*.py"))
        if p.name != "test_suite_isolation.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "importorskip(" in line
    ]
    assert not found, found
