"""`porter rewrite --report` and progress output."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from porter.cli import app
from porter.report.progress import RunProgress

from tests.report.conftest import A, B, write_project


@pytest.fixture
def proj(tmp_path, monkeypatch):
    root = write_project(tmp_path / "p", {"a.py": A, "b.py": B})
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("name", ["r.json", "r.md", "r.html"])
def test_rewrite_diff_writes_report(proj, tmp_path, name):
    out = tmp_path / name
    res = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["rewrite", ".", "--target", "xla", "--diff", "--report", str(out)]
    )
    assert res.exit_code == 1, res.output
    assert "Readiness: 50% — 3 of 6" in res.output and f"Report written to {out}" in res.output
    text = out.read_text()
    if name.endswith(".json"):
        assert json.loads(text)["summary"]["readiness"]["manual"] == 3
    else:
        assert "CUDA007" in text and "a.py" in text
    assert (proj / "a.py").read_text() == A  # --diff wrote nothing


@pytest.mark.parametrize("name", ["r.md", "r.html"])
def test_a_lint_report_shows_the_lines_of_auto_fixable_sites(tmp_path, monkeypatch, name):
    """A lint run writes no fix, and its report keeps no new text: a file whose every site was
    auto-fixable was shown as an empty block (Markdown) or an empty table (HTML), its
    findings' lines nowhere in the report (twenty-third read)."""
    root = write_project(tmp_path / "p", {"m.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"})
    monkeypatch.chdir(root)
    out = tmp_path / name
    res = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["lint", ".", "--target", "xla", "--report", str(out)])
    assert res.exit_code == 1, res.output
    text = out.read_text()
    assert "auto-fixable" in text
    assert "model = torch.nn.Linear(2, 2).cuda()" in text, text[text.find("m.py") :]


@pytest.mark.parametrize("name", ["r.md", "r.html"])
def test_a_report_names_a_file_past_the_size_porter_parses(tmp_path, monkeypatch, name):
    """Such a file fails the run (not read, exit 1), yet the report counted it among the skipped
    by its reason alone ("skipped 1: 3.8 MiB: larger than porter parses"): which file, only
    stderr said (twenty-fourth read)."""
    from porter.core.reading import MAX_PARSE_BYTES

    big = "import torch\nx = torch.zeros(1).cuda()\n" + "#" * MAX_PARSE_BYTES + "\n"
    root = write_project(tmp_path / "p", {"m.py": "import torch\n", "hugeone.py": big})
    monkeypatch.chdir(root)
    out = tmp_path / name
    res = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["lint", ".", "--target", "xla", "--report", str(out)])
    assert res.exit_code == 1, res.output
    text = out.read_text()
    assert "larger than porter parses" in text and "hugeone.py" in text, text[:2000]


@pytest.mark.parametrize("name", ["r.md", "r.html", "r.json"])
def test_a_report_that_checked_less_than_the_tree_is_no_full_pass(tmp_path, monkeypatch, name):
    """Its headline read "Readiness: 100%" (its card "100%") over a file past the size porter
    parses and a failed one, neither counted: a report that checked less than the tree read as
    a full pass (twenty-fourth read)."""
    from porter.core.reading import MAX_PARSE_BYTES

    big = "import torch\nx = torch.zeros(1).cuda()\n" + "#" * MAX_PARSE_BYTES + "\n"
    files = {
        "m.py": "import torch\nx = torch.zeros(1).cuda()\n",
        "hugeone.py": big,
        "bad.py": "import torch\ndef (:\n  x.cuda()\n",
    }
    root = write_project(tmp_path / "p", files)
    monkeypatch.chdir(root)
    out = tmp_path / name
    res = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["lint", ".", "--target", "xla", "--report", str(out)])
    assert res.exit_code == 1, res.output
    text = out.read_text()
    if name == "r.json":
        assert sorted(json.loads(text)["summary"]["not_checked"]) == ["bad.py", "hugeone.py"]
        return
    assert "100% of the files checked (2 files not checked" in text, text[:3000]
    if name == "r.html":
        assert 'id="unchecked-card"><b>2</b><span>files not checked' in text


def test_rewrite_in_place_report_and_quiet(proj, tmp_path):
    out = tmp_path / "r.json"
    res = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["rewrite", ".", "--target", "xla", "--allow-dirty", "--allow-no-vcs", "-q", "--report", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert res.output == ""  # quiet: no summary, no progress
    data = json.loads(out.read_text())
    assert data["summary"]["files"]["changed"] == 1 and "torch_xla" in (proj / "a.py").read_text()


def test_bad_report_suffix_is_a_usage_error(proj, tmp_path):
    res = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["rewrite", ".", "--target", "xla", "--diff", "--report", str(tmp_path / "r.txt")]
    )
    assert res.exit_code == 2 and ".html, .md or .json" in res.output


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_plain_progress_lines_off_a_terminal():
    buf = io.StringIO()
    clock = Clock()
    with RunProgress(Console(file=buf, width=100), total=10, tty=False, every=1.0, clock=clock) as p:
        for _ in range(10):
            clock.t += 0.6
            p.advance("x.py")
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("porter: porting 2/10 files (20%)")
    assert lines[-1].startswith("porter: done 10/10 files (100%)")
    assert len(lines) == 1 + 5  # one every second of work, and the last


def test_plain_progress_lines_on_a_dumb_terminal():
    # TERM=dumb (Emacs' shell): rich draws no live bar there, and a long run showed no progress
    buf = io.StringIO()
    clock = Clock()
    console = Console(file=buf, width=100, force_terminal=True, force_interactive=False)
    with RunProgress(console, total=4, every=1.0, clock=clock) as p:
        for _ in range(4):
            clock.t += 1.0
            p.advance("x.py")
    assert buf.getvalue().splitlines()[-1].startswith("porter: done 4/4 files (100%)"), buf.getvalue()


def test_short_runs_and_quiet_print_nothing():
    for quiet, tty in ((True, True), (True, False), (False, False)):
        buf = io.StringIO()
        with RunProgress(Console(file=buf), total=3, quiet=quiet, tty=tty, clock=Clock()) as p:
            for _ in range(3):
                p.advance()
        assert buf.getvalue() == "", (quiet, tty)


def test_bar_on_a_terminal():
    buf = io.StringIO()
    clock = Clock()
    con = Console(file=buf, force_terminal=True, width=100)
    with RunProgress(con, total=4, tty=True, delay=0.5, clock=clock) as p:
        for _ in range(4):
            clock.t += 1
            p.advance("pkg/a.py")
        assert p._bar is not None
    assert "porting" in buf.getvalue() and "4/4" in buf.getvalue(), buf.getvalue()


@pytest.mark.parametrize("command", ["rewrite", "lint"])
@pytest.mark.parametrize("name", ["out", "out.html"])
def test_a_report_named_as_a_folder_is_said_as_output_file_says_it(proj, command, name):
    # `--report out` with `out/` a folder said "report file 'out' must end in .html, .md or
    # .json" where `lint -o out` says "is a folder"; rewrite's `--report out.html` another line
    # again (twenty-eighth read)
    (proj / name).mkdir()
    extra = ["--diff"] if command == "rewrite" else []
    res = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(
        app, [command, "a.py", "--target", "xla", *extra, "--report", name]
    )
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines()[-1] == f"error: cannot write --report {name}: is a folder", res.stderr
    if command == "lint":
        res = CliRunner(env={"NO_COLOR": "1"}).invoke(app, ["lint", "a.py", "--target", "xla", "-o", name])
        assert res.stderr.strip().splitlines()[-1] == f"error: cannot write --output-file {name}: is a folder"
