"""Reports from the sample projects in fixtures/projects (skipped until they exist)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from porter.report import ReportModel
from porter.report.html import render_html
from porter.report.jsonreport import render_json, schema
from porter.report.markdown import render_markdown
from porter.pipeline.runner import run
from porter.config.settings import Settings

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
SRCS = sorted(p for p in PROJECTS.glob("*/src") if p.is_dir())
assert SRCS, f"no fixture projects in {PROJECTS}"


@pytest.mark.parametrize("target", ["xla", "neuron"])
def test_fixture_projects_report(target, monkeypatch):
    monkeypatch.chdir(PROJECTS)
    settings = Settings(target=target)
    results, summary = run([p.relative_to(PROJECTS) for p in SRCS], settings)
    model = ReportModel.from_run(results, summary, settings)
    data = json.loads(render_json(model))
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    r = model.readiness
    # the numbers agree with the runner's own summary
    assert r.ported == sum(summary.rewritten.values())
    assert r.manual == sum(summary.manual.values()) and r.unapplied == sum(summary.unapplied.values())
    assert r.info == sum(summary.info.values())
    assert model.counts["changed"] == summary.changed > 0
    assert sum(f.readiness.sites for f in model.files) == r.sites > 0
    md = render_markdown(model)
    page = render_html(model)
    for rule in model.rules:
        assert rule.code in md and f'id="rule-{rule.code}"' in page
    for f in model.changed_files:
        assert f"<code>{f.path}</code>" in md and f.path in page
    assert len(md) < 65_536
