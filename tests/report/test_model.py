from porter.core.findings import FileStatus
from porter.report import Section
from porter.report.model import Readiness

from tests.report.conftest import A, build, write_project


def test_counts_and_readiness(model):
    assert model.counts == {"scanned": 4, "changed": 1, "unchanged": 1, "skipped": 1, "errors": 1}
    by_code = {r.code: r for r in model.rules}
    assert by_code["DEV001"].rewritten == 1 and by_code["DEV002"].rewritten == 1
    assert by_code["CUDA003"].rewritten == 1
    assert by_code["CUDA007"].manual == 2 and by_code["CUDA007"].found == 2
    assert by_code["CUDA006"].manual == 1
    r = model.readiness
    assert (r.sites, r.ported, r.manual, r.unapplied) == (6, 3, 3, 0)
    assert r.percent() == "50%"
    files = {f.path: f for f in model.files}
    a, b = files["pkg/a.py"], files["pkg/b.py"]
    assert a.changed and (a.readiness.sites, a.readiness.ported, a.readiness.left) == (5, 3, 2)
    # its one site is manual: nothing automatic to measure, not "0 % done"
    assert b.status == FileStatus.UNCHANGED.value and b.readiness.percent() == "—"
    assert files["bad.py"].status == "error" and files["bad.py"].reason
    assert [f.path for f in model.shown_files()] == ["pkg/a.py", "pkg/b.py"]
    # the advice for a manual group is the rule's advice on the target
    assert "capabilit" in by_code["CUDA007"].advice
    assert by_code["CUDA007"].doc_url.endswith("#cuda007-cuda-device-properties")


def test_hunks_cover_manual_sites(model):
    b = next(f for f in model.files if f.path == "pkg/b.py")
    hunks = b.hunks()
    assert len(hunks) == 1 and any(r.old_no == 4 for r in hunks[0].rows)
    assert all(r.kind == "equal" for r in hunks[0].rows)
    a = next(f for f in model.files if f.path == "pkg/a.py")
    lines = {r.old_no for h in a.hunks() for r in h.rows}
    assert {7, 8} <= lines  # the two manual sites
    added, removed = a.line_counts()
    assert added > removed > 0
    edits = a.edits()
    assert edits and any("torch.cuda.synchronize()" in "".join(e.before) for e in edits)


def test_lint_kind_counts_what_rewrite_would_do(tmp_path):
    root = write_project(tmp_path, {"a.py": A})
    lint = build(root, kind="lint")
    assert lint.readiness.ported == 3 and lint.readiness.manual == 2
    assert lint.ported_label == "auto-fixable"


def test_a_report_cuts_lines_where_findings_number_them(tmp_path):
    """A report quotes and marks the finding's line: its lines were cut by str.splitlines, which
    also ends one at a form feed or U+2028, so the Markdown report quoted "here" (part of line 2)
    as line 4, and marked each line of a CR-only file "No newline at end of file" (adversarial
    read 12)."""
    from porter.report.markdown import file_details

    write_project(
        tmp_path, {"m.py": "import torch\n# a note \u2028 more and \x0c here\nx = 1\nimport pycuda.autoinit\ny = 2\n"}
    )
    (tmp_path / "cr.py").write_bytes(b"import torch\rx = torch.zeros(1).cuda()\ry = 2\r")
    files = {f.path: f for f in build(tmp_path, target="neuron").files}
    assert "    4  import pycuda.autoinit\n" in file_details(files["m.py"])
    diff = files["cr.py"].unified_diff()
    assert "No newline" not in diff and '+x = torch.zeros(1).to("neuron")\n' in diff, diff
    assert [r.old_no for h in files["m.py"].hunks() for r in h.rows if r.old_no == 4]


def test_sections_hook(model):
    model.add_section(
        Section(
            id="parity", title="Numerical parity", text="max abs diff", columns=["model", "ok"], rows=[["cnn", True]]
        )
    )
    d = model.to_dict()
    assert d["sections"][0]["id"] == "parity" and d["sections"][0]["rows"] == [["cnn", True]]


def test_readiness_percent_never_rounds_to_done():
    r = Readiness(sites=1000, ported=999)
    assert r.percent() == ">99%"
    assert Readiness(sites=1000, ported=1).percent() == "<1%"
    assert Readiness().percent() == "n/a" and Readiness().share is None
