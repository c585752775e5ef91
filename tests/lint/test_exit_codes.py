"""Exit codes 0 / 1 / 2, --exit-zero, --fail-on, --fix, --diff — as a CI job sees them."""

from __future__ import annotations

import pytest

from tests.lint.conftest import TRAIN, cli, sh, write


def test_subprocess_findings_exit_1_clean_exit_0(project):
    r = sh("lint", ".", "--target", "neuron", "--output-format", "concise", cwd=project)
    assert r.exit_code == 1, r.stderr
    assert "train.py:4:1: CUDA003" in r.stdout
    (project / "train.py").write_text("import torch\nx = torch.zeros(3)\n")
    r = sh("lint", ".", "--target", "neuron", cwd=project)
    assert r.exit_code == 0, r.stderr
    assert "All checks passed!" in r.stdout


def test_subprocess_usage_errors_exit_2(project):
    r = sh("lint", ".", "--target", "neuron", "--output-format", "xml", cwd=project)
    assert r.exit_code == 2 and "--output-format" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "."],  # no target anywhere
        ["lint", ".", "--target", "cuda"],
        ["lint", ".", "-t", "neuron", "--select", "NOPE999"],
        ["lint", "missing_dir", "-t", "neuron"],
        ["lint", ".", "-t", "neuron", "--fail-on", "fatal"],
        ["lint", ".", "-t", "neuron", "--fix", "--diff"],
        ["lint", ".", "-t", "neuron", "--baseline", "nothere.json"],
    ],
)
def test_usage_errors_exit_2(project, args):
    # (in-process; test_subprocess_usage_errors_exit_2 checks a real process exit status)
    r = cli(*args)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert "error" in r.stderr


def test_internal_error_exits_2(project, monkeypatch):
    import sys

    import porter.lint as lint_pkg

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(sys.modules["porter.cli.lint"], "run_lint", boom)
    r = cli("lint", ".", "-t", "neuron")
    assert r.exit_code == 2 and "kaput" in r.stderr
    assert lint_pkg.lint is not boom


def test_engine_bug_in_one_file_exits_2(project, monkeypatch):
    import porter.pipeline.port

    def broken(*a, **k):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(porter.pipeline.port, "port_source", broken)
    monkeypatch.setenv("PORTER_NO_CACHE", "1")
    monkeypatch.setenv("PORTER_JOBS", "1")
    r = cli("lint", ".", "-t", "neuron", "--exit-zero")
    assert r.exit_code == 2 and "engine bug" in r.stderr


def test_exit_zero(project):
    r = cli("lint", ".", "-t", "neuron", "--exit-zero")
    assert r.exit_code == 0 and "DEV001" in r.stdout


def test_fail_on_severity(tmp_path, monkeypatch):
    # DEV001 is an error; FLAG001 (cudnn.benchmark) is not
    write(tmp_path, {"flags.py": "import torch\ntorch.backends.cudnn.benchmark = True\n"})
    monkeypatch.chdir(tmp_path)
    data = cli("lint", "-t", "neuron", "--output-format", "json").json()
    severities = {d["severity"] for d in data}
    assert data and "error" not in severities, data
    assert cli("lint", "-t", "neuron").exit_code == 1
    assert cli("lint", "-t", "neuron", "--fail-on", "error").exit_code == 0
    write(tmp_path, {"train.py": TRAIN})
    assert cli("lint", "-t", "neuron", "--fail-on", "error").exit_code == 1


def test_unparsable_file_fails_the_run(project):
    write(project, {"broken.py": "import torch\nx = torch.zeros(3).cuda(\n"})
    (project / "train.py").write_text("x = 1\n")
    r = cli("lint", "-t", "neuron")
    assert r.exit_code == 1
    assert "broken.py" in r.stderr and "not checked" in r.stderr


@pytest.mark.parametrize("big", [False, True])
def test_a_file_not_checked_is_no_pass_in_junit_sarif_or_github(project, big):
    # a Python file past the size porter parses fails the run (exit 1) as a syntax error does,
    # but JUnit said "no findings" (a pass) and SARIF `executionSuccessful: true` with no
    # notification: the CI's test view was green on a red step; and the github format gave
    # neither file an annotation (twenty-fourth read)
    import xml.etree.ElementTree as ET

    from porter.core.reading import MAX_PARSE_BYTES

    (project / "train.py").write_text("x = 1\n")
    text = "import torch\nx = torch.zeros(3).cuda(\n" if not big else TRAIN + "#" * MAX_PARSE_BYTES + "\n"
    (project / "broken.py").write_text(text)
    junit = cli("lint", "-t", "neuron", "--output-format", "junit")
    assert junit.exit_code == 1
    root = ET.fromstring(junit.stdout)
    errors = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert root.get("errors") == "1" and [c.get("file") for c in errors] == ["broken.py"], junit.stdout
    assert not [c for c in root.iter("testcase") if c.get("name") == "no findings"], junit.stdout
    sarif = cli("lint", "-t", "neuron", "--output-format", "sarif")
    assert sarif.exit_code == 1
    invocation = sarif.json()["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False, invocation
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"].startswith("broken.py: "), note
    uri = note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "broken.py", note
    github = cli("lint", "-t", "neuron", "--output-format", "github")
    assert github.exit_code == 1
    [line] = github.stdout.splitlines()
    assert line.startswith("::error title=porter (not checked),file=broken.py") and "broken.py: " in line, line


@pytest.mark.parametrize("fmt", ["json", "json-lines", "gitlab"])
@pytest.mark.parametrize("big", [False, True])
def test_a_file_not_checked_is_no_pass_in_json_json_lines_or_gitlab(project, big, fmt):
    # those documents are lists of findings/issues: a run that failed (exit 1) on a syntax error
    # or a file past the size porter parses wrote `[]` (json-lines: nothing), a pass to a CI
    # consumer that reads the document; only stderr named the file (twenty-fourth read)
    import json

    from porter.core.reading import MAX_PARSE_BYTES

    (project / "train.py").write_text("x = 1\n")
    text = "import torch\nx = 1\nx = torch.zeros(3).cuda(\n" if not big else TRAIN + "#" * MAX_PARSE_BYTES + "\n"
    (project / "broken.py").write_text(text)
    r = cli("lint", "-t", "neuron", "--output-format", fmt)
    assert r.exit_code == 1
    [entry] = [json.loads(line) for line in r.stdout.splitlines()] if fmt == "json-lines" else json.loads(r.stdout)
    line = 1 if big else 3
    if fmt == "gitlab":
        assert entry["check_name"] == "PORT001" and entry["severity"] == "major", entry
        assert entry["location"] == {"path": "broken.py", "lines": {"begin": line, "end": line}}, entry
        assert len(entry["fingerprint"]) == 64 and "(not checked)" in entry["description"], entry
    else:
        assert (entry["code"], entry["path"], entry["severity"]) == ("PORT001", "broken.py", "error"), entry
        assert entry["start"]["line"] == line and entry["message"].endswith("(not checked)"), entry
        assert entry["fixable"] is False and len(entry["fingerprint"]) == 64, entry


def test_fix_applies_safe_fixes_and_reports_what_is_left(project):
    write(
        project,
        {"left.py": "import torch\ntorch.cuda.set_per_process_memory_fraction(0.5)\ny = torch.ones(1).cuda()\n"},
    )
    before = cli("lint", "-t", "neuron", "--output-format", "json").json()
    manual = [d for d in before if not d["fixable"]]
    r = cli("lint", "-t", "neuron", "--fix", "--allow-no-vcs", "--output-format", "concise")
    assert "fixed" in r.stdout
    assert (
        (project / "train.py").read_text()
        == 'import torch\n\nx = torch.zeros(3).to("neuron")\ntorch.accelerator.synchronize()\ndev = "neuron"\n'
    )
    assert '.to("neuron")' in (project / "left.py").read_text()
    after = cli("lint", "-t", "neuron", "--output-format", "json").json()
    assert len(after) == len(manual)
    assert r.exit_code == (1 if manual else 0)
    if not manual:
        assert cli("lint", "-t", "neuron").exit_code == 0


def test_fix_with_only_safe_fixes_exits_0(project):
    r = cli("lint", "-t", "neuron", "--fix", "--allow-no-vcs")
    assert r.exit_code == 0, r.stdout
    assert "Found 3 findings (3 fixed, 0 remaining)." in r.stdout
    assert cli("lint", "-t", "neuron").exit_code == 0


def test_diff_shows_fixes_and_writes_nothing(project):
    r = cli("lint", "-t", "neuron", "--diff")
    assert r.exit_code == 1
    assert "-x = torch.zeros(3).cuda()" in r.stdout
    assert '+x = torch.zeros(3).to("neuron")' in r.stdout
    assert (project / "train.py").read_text() == TRAIN
    (project / "train.py").write_text("x = 1\n")
    assert cli("lint", "-t", "neuron", "--diff").exit_code == 0


@pytest.mark.parametrize(
    ("extra", "option"), [(["-o", "p.patch"], "--output-file"), (["--statistics"], "--statistics")]
)
def test_diff_refuses_an_option_it_would_ignore(project, extra, option):
    # `--diff -o p.patch` printed the patch to stdout and wrote no file, saying nothing; ruff
    # 0.17.6 refuses `--diff --statistics` (twenty-seventh read)
    r = cli("lint", "-t", "neuron", "--diff", *extra)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"--diff and {option} do not go together" in r.stderr and not r.stdout
    assert not (project / "p.patch").exists() and (project / "train.py").read_text() == TRAIN
    assert cli("lint", "-t", "neuron", "--diff", "-o", "-").exit_code == 1  # `-`: stdout, where the patch goes


def test_lint_reports_the_same_findings_as_rewrite(project):
    """One truth: lint's findings are the engine's findings for the same settings."""
    from pathlib import Path

    from porter.pipeline.runner import run
    from porter.config.settings import Settings

    results, _ = run([Path(".")], Settings(target="neuron"))
    engine = sorted((f.path, f.start.line, f.start.column, f.code) for r in results for f in r.findings)
    data = cli("lint", ".", "-t", "neuron", "--output-format", "json").json()
    linted = sorted((d["path"], d["start"]["line"], d["start"]["column"], d["code"]) for d in data)
    assert linted == engine and len(engine) == 3
