"""Linting the sample projects gives exactly the findings rewrite reports for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.pipeline.runner import run
from porter.config.settings import TARGETS, Settings
from tests.lint.conftest import REPO, cli

PROJECTS = sorted(p for p in (REPO / "fixtures/projects").glob("*/src") if p.is_dir())
assert PROJECTS, "no sample projects in fixtures/projects"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("src", PROJECTS, ids=lambda p: p.parent.name)
def test_lint_findings_equal_rewrite_findings(src: Path, target: str, monkeypatch):
    monkeypatch.chdir(REPO)
    rel = src.relative_to(REPO)
    results, _ = run([rel], Settings(target=target))
    rewrite = sorted(
        (f.path, f.start.line, f.start.column, f.code, f.applicability.value) for r in results for f in r.findings
    )
    r = cli("lint", str(rel), "--isolated", "-t", target, "--output-format", "json", "--exit-zero")
    assert r.exit_code == 0, r.stderr
    linted = sorted(
        (d["path"], d["start"]["line"], d["start"]["column"], d["code"], d["applicability"]) for d in r.json()
    )
    assert linted == rewrite
    assert rewrite, "a sample project with no CUDA-specific site tests nothing"
