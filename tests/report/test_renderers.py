"""Each format rendered from the same model says the same numbers."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from porter.report import Section, render, report_format, write_report
from porter.report.html import render_html
from porter.report.jsonreport import render_json, schema
from porter.report.markdown import render_markdown
from porter.report.terminal import print_report

from tests.report.conftest import big_model, build

ROOT = Path(__file__).resolve().parents[2]


# -- terminal ------------------------------------------------------------------------------


def test_terminal_table_readiness_and_advice(model):
    con = Console(record=True, width=200, force_terminal=False)
    print_report(con, model, wrote="would change", diffs=True)
    out = con.export_text()
    assert "Files: 4 scanned, 1 would change, 1 unchanged, 1 skipped, 1 failed" in out
    # the failed file is not counted, and the headline says so (twenty-fourth read)
    # ("above": its "failed" line is printed before it; thirty-first read)
    head = "Readiness: 50% of the files checked (1 file not checked, listed above)"
    assert f"{head} — 3 of 6 CUDA-specific sites ported automatically; 3 manual sites left." in out
    assert re.search(r"CUDA007 .*cuda-device-properties .*cuda-api .*2 .*0 .*0 .*2", out)
    assert "CUDA007 cuda-device-properties — 2 sites: Gate on the target" in out
    assert "porter explain CUDA006" in out  # the shipped explanation, not a web page
    assert re.search(r"pkg/a\.py .*5 .*3 .*2 .*60%", out)
    assert re.search(r"pkg/b\.py .*1 .*0 .*1 .*—", out)
    assert re.search(r"overall .*6 .*3 .*3 .*50%", out)
    assert "+    x = torch.randn(3).to(torch_xla.device())" in out  # the diff came first
    assert out.index("--- a/pkg/a.py") < out.index("Sites by rule")


def test_terminal_no_sites(tmp_path):
    (tmp_path / "x.py").write_text("print(1)\n")
    con = Console(record=True, width=120)
    print_report(con, build(tmp_path), wrote="changed")
    assert "No CUDA-specific sites found." in con.export_text()


# -- JSON ----------------------------------------------------------------------------------


def test_json_validates_and_carries_findings(model):
    data = json.loads(render_json(model))
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    assert data["schema"] == "porter-report" and data["schema_version"] == 1
    assert data["summary"]["readiness"] == {
        "sites": 6,
        "ported": 3,
        "unapplied": 0,
        "manual": 3,
        "share": 0.5,
        "kept_on_cuda": 0,
        "notes": 0,
    }
    assert data["summary"]["files"]["errors"] == 1
    files = {f["path"]: f for f in data["files"]}
    a = files["pkg/a.py"]
    assert {f["code"] for f in a["findings"]} == {"DEV001", "DEV002", "CUDA003", "CUDA006", "CUDA007"}
    assert {f["outcome"] for f in a["findings"] if f["code"] == "CUDA007"} == {"manual"}
    assert a["edits"] and a["edits"][0]["old_start"] >= 1
    assert files["pkg/b.py"]["edits"] == []
    # a broken report must fail the schema
    data["summary"]["readiness"]["share"] = 2
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema())


def test_schema_doc_names_every_field():
    doc = (ROOT / "docs" / "report-schema.md").read_text()
    sch = schema()
    assert "schema_version" in doc and "report-v1.json" in doc
    for name in sch["required"]:
        assert f"`{name}`" in doc, name
    for name in (
        sch["$defs"]["finding"]["required"] + sch["$defs"]["file"]["required"] + sch["$defs"]["readiness"]["required"]
    ):
        assert f"`{name}`" in doc, name


# -- Markdown ------------------------------------------------------------------------------


def test_markdown_pr_comment(model):
    md = render_markdown(model)
    head = "**Readiness: 50% of the files checked (1 file not checked, listed below)**"
    assert f"{head} — 3 of 6 CUDA-specific sites ported automatically; 3 manual sites left." in md
    # no link into the local install (file:///...): a PR comment is read elsewhere
    assert "| CUDA007 | `cuda-device-properties` | cuda-api | 2 | 0 | 0 | 2 |" in md and "file://" not in md
    assert "- [ ] `pkg/a.py:7` **CUDA007** `cuda-device-properties`" in md and "- [ ] `pkg/b.py:4`" in md
    assert md.count("<details>") == 2 and md.count("</details>") == 2
    assert "```diff\n--- a/pkg/a.py" in md
    assert "-    torch.cuda.synchronize()" in md
    assert "| **overall** | **6** | **3** | **3** | **50%** |" in md
    assert len(md) < 65_536


def test_markdown_fits_a_comment_for_a_big_port(tmp_path):
    big = big_model(files=30, blocks=40)
    md = render_markdown(big)
    assert len(md) <= 60_000
    assert "**Readiness:" in md and "more files left out to fit a comment" in md
    assert md.count("<details>") == md.count("</details>") >= 1


# -- HTML ----------------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.assets, self.tags = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag in ("link", "img", "iframe") or (tag == "script" and "src" in a):
            self.assets.append((tag, a))


def test_html_self_contained_and_linked(model):
    page = render_html(model)
    p = _Links()
    p.feed(page)
    assert not p.assets, p.assets  # nothing fetched: inline style and script only
    assert "default-src 'none'" in page
    local = [h[1:] for h in p.hrefs if h.startswith("#")]
    assert local and all(h in p.ids for h in local), set(local) - p.ids
    assert "f0-L7" in local and "f1-L4" in local  # manual work links to its line
    assert "rule-CUDA007" in p.ids and "rule-CUDA006" in p.ids  # explanation inlined
    # no link into the local install (file:///...): the report is read elsewhere
    assert not [h for h in p.hrefs if h.startswith("file:")] and "porter explain CUDA007" in page
    assert "docs/rules.md#cuda007-cuda-device-properties" in page
    details = [a for t, a in p.tags if t == "details"]
    assert [d["id"] for d in details] == ["f0", "f1"]
    assert details[0]["data-families"] == "cuda-api device"
    fams = sorted(a["value"] for t, a in p.tags if t == "input" and a.get("class") == "fam")
    assert fams == ["cuda-api", "device"]
    assert '<div class="card" id="readiness"><b>50%</b>' in page
    assert "Left for a person (3)" in page
    assert 'd = torch.device(&quot;<span class="x">cuda</span>&quot;)' in page  # word-level change highlight
    assert 'd = torch.device(&quot;<span class="x">xla</span>&quot;)' in page


def test_html_escapes_source(tmp_path):
    (tmp_path / "x.py").write_text('import torch\nx = "</script><b>".cuda()\ny = torch.zeros(1).cuda()  # <i>\n')
    page = render_html(build(tmp_path))
    assert "</script><b>" not in page and "&lt;/script&gt;&lt;b&gt;" in page
    assert "# &lt;i&gt;" in page


def test_html_big_port_collapses_later_files(tmp_path):
    big = big_model(files=40, blocks=30)
    changed = sum(sum(f.line_counts()) for f in big.files)
    assert changed > 4000
    page = render_html(big)
    opened = page.count(" open><summary>")
    assert 1 <= opened < 40  # past the row budget files start closed
    assert page.count("<details") == 40
    assert page.count('<tr class="note"') == 40 * 30  # every manual site has its note
    assert "show all 1200 sites" in page and '<template id="manual-more">' in page


def test_sections_render_everywhere(model):
    model.add_section(
        Section(
            id="parity", title="Numerical parity", text="all close", columns=["model", "max abs"], rows=[["cnn", 1e-6]]
        )
    )
    assert "Numerical parity" in render_html(model) and 'id="sec-parity"' in render_html(model)
    assert "### Numerical parity" in render_markdown(model) and "| cnn | 1e-06 |" in render_markdown(model)
    con = Console(record=True, width=120)
    print_report(con, model)
    assert "Numerical parity" in con.export_text()


def test_write_report_by_suffix(model, tmp_path):
    for name, probe in (
        ("r.html", "<!DOCTYPE html>"),
        ("r.md", "## porter rewrite report"),
        ("r.json", '"schema": "porter-report"'),
    ):
        out = write_report(tmp_path / "sub" / name, model)
        assert probe in out.read_text()
    with pytest.raises(ValueError, match=r"\.html, \.md or \.json"):
        report_format("r.txt")
    assert json.loads(render(model, "json"))["kind"] == "rewrite"
