"""Info findings (a guard kept on CUDA by design, an NCCL_* variable) are not work left: readiness
leaves them out and every renderer shows them under their own heading, with the same numbers."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from porter.config.ruledata import NOTE_GROUPS, _rule_from_table, all_rules
from porter.core.findings import Severity
from porter.report.html import render_html
from porter.report.jsonreport import render_json
from porter.report.markdown import render_markdown
from porter.report.terminal import print_report

from tests.report.conftest import build, write_project

# a guard that keeps a Triton kernel away from other devices (GUARD001, info, kept on CUDA),
# the kernel itself (KERN002: real work), an NCCL variable (DIST004, info, a note) and a
# `.cuda()` porter rewrites (DEV001)
GUARDED = """import os
import torch
import triton

os.environ.setdefault("NCCL_P2P_DISABLE", "1")


@triton.jit
def _add_kernel(x_ptr, n):
    pass


def add_one(x):
    if not x.is_cuda:
        return x + 1
    _add_kernel[(1,)](x, x.numel())
    return x


def main():
    return add_one(torch.zeros(3).cuda())
"""
# a correct port of a device-generic file: nothing but a guard kept on CUDA
GENERIC = """import torch
import triton


@triton.jit
def _k(x_ptr):
    pass


def f(x):
    if x.is_cuda:
        _k[(1,)](x)
        return x
    return x * 2
"""


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    root = write_project(tmp_path_factory.mktemp("guarded"), {"g.py": GUARDED})
    return build(root, target="neuron")


def _codes(model, outcome):
    return sorted(s.finding.code for f in model.files for s in f.sites if s.outcome == outcome)


def test_info_rules_declare_their_group_in_the_data():
    rules = all_rules()
    info = {c for c, r in rules.items() if r.severity is Severity.INFO}
    assert {"GUARD001", "DIST004", "FW003"} <= info
    assert rules["GUARD001"].note_group == "kept-on-cuda" and rules["DIST004"].note_group == "note"
    assert all(not r.needs_action for c, r in rules.items() if c in info)
    assert all(r.needs_action for c, r in rules.items() if c not in info)
    assert set(NOTE_GROUPS) == {"kept-on-cuda", "note"}


def test_note_group_is_refused_on_a_rule_that_asks_for_work():
    base = {"code": "X001", "name": "x", "summary": "s"}
    with pytest.raises(ValueError, match="info rules only"):
        _rule_from_table("x", {**base, "severity": "warning", "note_group": "kept-on-cuda"})
    with pytest.raises(ValueError, match="note_group"):
        _rule_from_table("x", {**base, "severity": "info", "note_group": "later"})


def test_readiness_counts_only_work(guarded):
    r = guarded.readiness
    assert _codes(guarded, "kept-on-cuda") == ["GUARD001"]
    assert _codes(guarded, "note") == ["DIST004"]
    assert "KERN002" in _codes(guarded, "manual") and "DEV001" in _codes(guarded, "rewritten")
    assert (r.kept, r.notes) == (1, 1)
    work = [s for f in guarded.files for s in f.sites if s.finding.severity is not Severity.INFO]
    assert r.sites == len(work) and r.sites == r.ported + r.unapplied + r.manual
    assert all(s.finding.code not in ("GUARD001", "DIST004") for _, s in guarded.manual_work())
    by = {x.code: x for x in guarded.rules}
    assert (by["GUARD001"].kept, by["GUARD001"].manual, by["GUARD001"].found) == (1, 0, 1)
    assert (by["DIST004"].notes, by["DIST004"].manual) == (1, 0)


def test_a_device_generic_file_is_not_unfinished(tmp_path):
    model = build(write_project(tmp_path, {"k.py": GENERIC}), target="neuron")
    r = model.readiness
    kern = [s for f in model.files for s in f.sites if s.finding.code == "KERN002"]
    # the kernel itself is still work (a target kernel to write); the guard is not
    assert r.kept == 1 and kern and r.sites == r.manual == len(kern)
    assert {s.finding.code for _, s in model.manual_work()} == {"KERN002"}


def test_renderers_agree(guarded):
    r = guarded.readiness
    data = json.loads(render_json(guarded))
    assert data["summary"]["readiness"]["kept_on_cuda"] == r.kept == 1
    assert data["summary"]["readiness"]["notes"] == r.notes == 1
    assert data["summary"]["readiness"]["sites"] == r.sites
    outcomes = {f["code"]: f["outcome"] for f in data["files"][0]["findings"]}
    assert outcomes["GUARD001"] == "kept-on-cuda" and outcomes["DIST004"] == "note"
    rules = {x["code"]: x for x in data["summary"]["rules"]}
    assert rules["GUARD001"]["kept_on_cuda"] == 1 and rules["GUARD001"]["manual"] == 0

    sentence = guarded.readiness_text()
    assert "Not counted, no action needed: 1 kept on CUDA by design, 1 note." in sentence

    md = render_markdown(guarded)
    manual_md = md.split("### Left for a person", 1)[1].split("###", 1)[0]
    assert "GUARD001" not in manual_md and "DIST004" not in manual_md and "KERN002" in manual_md
    assert "### Kept on CUDA by design (1)" in md and "### Notes (1)" in md
    assert "kept on CUDA by design, 1 note" in md

    page = render_html(guarded)
    manual_html = page.split('<section id="manual">', 1)[1].split("</section>", 1)[0]
    assert "GUARD001" not in manual_html and "KERN002" in manual_html
    assert f"Left for a person ({r.manual + r.unapplied})" in manual_html
    assert '<section id="kept-on-cuda"><h2>Kept on CUDA by design (1)</h2>' in page
    assert '<section id="note"><h2>Notes (1)</h2>' in page
    assert "kept on CUDA by design, 1 note" in page

    buf = io.StringIO()
    print_report(Console(file=buf, width=300, color_system=None), guarded)
    out = buf.getvalue()
    left = out.split("Left for a person", 1)[1].split("Kept on CUDA by design", 1)[0]
    assert "KERN002" in left and "GUARD001" not in left
    assert "Kept on CUDA by design (no action needed" in out and "Notes (no action needed" in out
    assert "kept on CUDA by design, 1 note" in out
