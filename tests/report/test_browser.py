"""The HTML report in a real browser: renders, runs its script without errors, filters."""

from __future__ import annotations

import re


from porter.report import write_report
from porter.report.html import render_html

from tests.report.browser import dump_dom, screenshot, script_errors


def _details(dom: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in re.finditer(r'<details class="file" id="(f\d+)"[^>]*>', dom)}


def test_report_renders_in_chromium(model, tmp_path):
    page = write_report(tmp_path / "report.html", model)
    dom, log, _ = dump_dom(page)
    assert not script_errors(log), script_errors(log)
    assert 'data-ready="1"' in dom, "the report's script did not finish"
    assert "<b>50%</b>" in dom and "Sites by rule" in dom
    assert "2 of 2 files shown" in dom  # written by the script
    assert 'id="f0-L7"' in dom and "torch.cuda.get_device_capability()" in dom
    png = tmp_path / "report.png"
    proc, _ = screenshot(page, png)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a blank page is a few KB


def test_family_filter_and_line_links(model, tmp_path):
    page = tmp_path / "closed.html"
    page.write_text(render_html(model, open_rows=0))  # every file starts collapsed
    dom, log, _ = dump_dom(page, "?families=device#f1-L4")
    assert not script_errors(log), script_errors(log)
    assert 'data-ready="1"' in dom
    files = _details(dom)
    # pkg/b.py (f1) has only a cuda-api site: filtered out; pkg/a.py has device sites
    assert "hidden" in files["f1"] and "hidden" not in files["f0"]
    assert "1 of 2 files shown" in dom
    live = re.sub(r"<template>.*?</template>", "", dom, flags=re.S)  # f0's diff is not built yet
    assert "<template>" in dom
    rows = re.findall(r'<tr (?:class="note" )?data-family="([\w-]+)"( hidden(?:="")?)?>', live)
    assert rows and all(bool(h) == (fam != "device") for fam, h in rows)
    # following a link to a line opens the collapsed file that holds it
    assert " open" in files["f1"]
    assert " open" not in files["f0"]


def test_a_malformed_escape_in_a_link_leaves_the_report_working(model, tmp_path):
    # `decodeURIComponent` threw on `?families=%` (or a hash `#%E0%A4%A`) and the rest of the
    # script never ran: no count of the files shown, no buttons (eighteenth read)
    page = write_report(tmp_path / "report.html", model)
    for query in ("?families=%", "#%E0%A4%A", "?families=%E0%A4%A,device"):
        dom, log, _ = dump_dom(page, query)
        assert not script_errors(log), (query, script_errors(log))
        assert 'data-ready="1"' in dom and " of 2 files shown" in dom, query
