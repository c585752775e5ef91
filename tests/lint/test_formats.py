"""Every --output-format, checked against its published schema or a real consumer's parser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from tests.lint.conftest import SCHEMAS, TRAIN, cli, write

FORMATS = ["full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reports_the_findings_and_exits_1(project, fmt):
    r = cli("lint", ".", "--target", "neuron", "--output-format", fmt)
    assert r.exit_code == 1, r.stdout + r.stderr
    for code in ("DEV001", "CUDA003", "DEV002"):
        assert code in r.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_on_a_clean_tree_exits_0(tmp_path, monkeypatch, fmt):
    write(tmp_path, {"ok.py": "import torch\nx = torch.zeros(3)\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "tpu", "--output-format", fmt)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "DEV" not in r.stdout


@pytest.mark.parametrize("env", ["", "sarif"])
def test_an_empty_output_format_is_a_usage_error_not_the_default(project, monkeypatch, env):
    # `--output-format "$FORMAT"` with FORMAT unset in a CI step wrote the `full` text, into a
    # file the SARIF upload then could not read (`config --output-format ""` and `--fail-on ""`
    # were refused); an empty PORTER_OUTPUT_FORMAT is unset (twenty-fifth read)
    monkeypatch.setenv("PORTER_OUTPUT_FORMAT", env)
    r = cli("lint", ".", "-t", "neuron", "--output-format", "", "-o", "out.sarif")
    assert r.exit_code == 2 and "unknown --output-format ''" in r.stderr, (r.exit_code, r.stdout + r.stderr)
    assert not (project / "out.sarif").exists()
    monkeypatch.setenv("PORTER_OUTPUT_FORMAT", "")
    assert "train.py:3:5: DEV001 [*]" in cli("lint", ".", "-t", "neuron").stdout


def test_full_shows_source_caret_and_fix_marker(project):
    out = cli("lint", ".", "-t", "neuron").stdout
    assert "train.py:3:5: DEV001 [*]" in out  # 1-based column, [*] = fix --fix applies
    assert "3 | x = torch.zeros(3).cuda()" in out
    assert "^^^^^^^^^^^^^^^^^^^^^ DEV001" in out
    assert "Found 3 findings." in out and "[*] 3 fixable with `porter lint --fix`." in out


def test_full_shows_line_1_of_a_file_with_a_bom_without_it_carets_under_the_call(tmp_path, monkeypatch):
    # the column is the tokenizer's, which skips a UTF-8 BOM (ruff 0.17.6 shows `1 | x = …` with
    # the carets at column 5); `full` showed the BOM as `\ufffd` and every caret of line 1 a
    # column left of the call (twenty-eighth read)
    (tmp_path / "m.py").write_bytes(b"\xef\xbb\xbfx = torch.zeros(1).cuda()\n")
    monkeypatch.chdir(tmp_path)
    out = cli("lint", "-t", "xla", "--no-cache").stdout
    assert "m.py:1:5: DEV001" in out, out
    assert "1 | x = torch.zeros(1).cuda()\n  |     ^^^^^^^^^^^^^^^^^^^^^ DEV001" in out, out


def test_concise_is_one_line_per_finding(project):
    lines = cli("lint", "-t", "neuron", "--output-format", "concise").stdout.splitlines()
    heads = [line for line in lines if re.match(r"^train\.py:\d+:\d+: [A-Z]+\d+ ", line)]
    assert [h.split()[1] for h in heads] == ["DEV001", "CUDA003", "DEV002"]


def test_output_file(project):
    r = cli("lint", "-t", "neuron", "--output-format", "json", "--output-file", "out/porter.json")
    assert r.exit_code == 1 and r.stdout == ""
    data = json.loads((project / "out/porter.json").read_text())
    assert {d["code"] for d in data} == {"DEV001", "CUDA003", "DEV002"}


def test_output_file_dash_is_stdout(project):
    # `-o -` wrote a file named `-` (nineteenth read); the convention is standard output, and
    # `./-` still names that file
    r = cli("lint", "-t", "neuron", "--output-format", "json", "-o", "-")
    assert r.exit_code == 1 and {d["code"] for d in r.json()} == {"DEV001", "CUDA003", "DEV002"}
    assert not (project / "-").exists()
    r = cli("lint", "-t", "neuron", "--output-format", "json", "-o", "./-")
    assert r.exit_code == 1 and r.stdout == "" and json.loads((project / "-").read_text())


def test_json_records(project):
    data = cli("lint", "-t", "neuron", "--output-format", "json").json()
    first = data[0]
    assert first["code"] == "DEV001" and first["path"] == "train.py"
    assert first["start"] == {"line": 3, "column": 4}
    assert first["applicability"] == "safe" and first["fixable"] is True
    assert re.fullmatch(r"[0-9a-f]{64}", first["fingerprint"])
    lines = cli("lint", "-t", "neuron", "--output-format", "json-lines").stdout.splitlines()
    assert [json.loads(line) for line in lines] == data


def test_unsafe_fix_is_not_marked_fixable_without_unsafe_fixes(tmp_path, monkeypatch):
    write(tmp_path, {"amp.py": "import torch\nwith torch.autocast('cuda', dtype=torch.float16):\n    pass\n"})
    monkeypatch.chdir(tmp_path)
    data = cli("lint", "-t", "tpu", "--output-format", "json").json()
    unsafe = [d for d in data if d["applicability"] == "unsafe"]
    assert unsafe and all(d["fixable"] is False for d in unsafe)
    data2 = cli("lint", "-t", "tpu", "--output-format", "json", "--unsafe-fixes").json()
    assert all(d["fixable"] for d in data2 if d["applicability"] == "unsafe")


def test_sarif_validates_against_the_sarif_2_1_0_schema(project):
    # a manual finding too, and an unused suppression (a rule that is not in rules/*.toml)
    write(project, {"more.py": "import torch\nt = torch.zeros(2).cuda()  # porter: ignore[CUDA003]\n"})
    doc = cli("lint", "-t", "neuron", "--output-format", "sarif", "--report-unused-ignores").json()
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert "PORT100" in ids and "DEV001" in ids
    for rule in rules:  # what GitHub code scanning shows: help text and a help URI
        assert f"porter explain {rule['id']}" in rule["help"]["text"]
        page = rule["helpUri"].split("#")[0]
        assert page.startswith("file://") and Path(page[len("file://") :]).is_file()  # porter's own docs
        assert rule["shortDescription"]["text"]
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert res["partialFingerprints"]
    dev001 = next(r for r in run["results"] if r["ruleId"] == "DEV001")
    assert dev001["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "more.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert dev001["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"].endswith(
        '.to("neuron")'
    )


def test_sarif_schema_rejects_a_broken_document(project):
    """The schema check can fail: a result without a message is not SARIF."""
    doc = cli("lint", "-t", "neuron", "--output-format", "sarif").json()
    del doc["runs"][0]["results"][0]["message"]
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(doc)


_GITHUB = re.compile(
    r"^::(error|warning|notice) title=porter \((?P<code>[A-Z]+\d+)\),file=(?P<file>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"endLine=\d+,endColumn=\d+::(?P<msg>.+)$"
)


def test_github_annotations(project):
    out = cli("lint", "-t", "neuron", "--output-format", "github").stdout
    lines = out.splitlines()
    assert len(lines) == 3
    for line in lines:
        m = _GITHUB.match(line)
        assert m, line
        assert m["file"] == "train.py" and m["msg"].startswith(m["code"])
    assert _GITHUB.match(lines[0])["line"] == "3" and _GITHUB.match(lines[0])["col"] == "5"


def test_github_escapes_properties_and_data(tmp_path, monkeypatch):
    write(tmp_path, {"a,b:c.py": "import torch\nx = torch.zeros(1).cuda()\n"})
    monkeypatch.chdir(tmp_path)
    out = cli("lint", "-t", "neuron", "--output-format", "github").stdout
    assert "file=a%2Cb%3Ac.py," in out


@pytest.mark.parametrize(
    ("line", "col", "end"),
    [
        ("x =\ttorch.cuda.is_available()", 5, 30),  # a tab: one column (a code point)
        ("字 = 1; x = torch.cuda.is_available()", 12, 37),  # wide: one column
        ('s = "😀"; x = torch.cuda.is_available()', 14, 39),  # astral: one column (a code point)
        ("e\u0301 = 1; x = torch.cuda.is_available()", 13, 38),  # a combining mark: a column of its own
    ],
)
def test_github_columns_are_code_points_and_only_for_a_finding_on_one_line(tmp_path, monkeypatch, line, col, end):
    """GitHub's annotations take `col`/`endColumn` only where `line` and `endLine` are the same
    ("cannot be sent when startLine and endLine are different values": the Checks API and
    @actions/core); porter wrote them for a finding over several lines too (twenty-fifth read).
    GitHub names no unit: porter counts code points, as its other formats and SARIF's
    `columnKind` do, the same column the text formats show."""
    write(tmp_path, {"m.py": f"import torch\n{line}\ny = torch.cuda.is_available(\n)\n"})
    monkeypatch.chdir(tmp_path)
    out = cli("lint", "-t", "xla", "--output-format", "github").stdout
    one, several = out.splitlines()
    assert f",line=2,col={col},endLine=2,endColumn={end}::" in one, one
    assert ",line=3,endLine=4::" in several and "col=" not in several and "endColumn=" not in several, several
    concise = cli("lint", "-t", "xla", "--output-format", "concise").stdout
    assert f"m.py:2:{col}: CUDA001" in concise


def test_gitlab_code_quality(project):
    issues = cli("lint", "-t", "neuron", "--output-format", "gitlab").json()
    assert isinstance(issues, list) and len(issues) == 3
    fps = set()
    for issue in issues:
        # the fields GitLab's Code Quality report requires
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str) and issue["check_name"]
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == "train.py"
        assert isinstance(issue["location"]["lines"]["begin"], int)
        fps.add(issue["fingerprint"])
    assert len(fps) == len(issues)  # GitLab drops issues with duplicate fingerprints


def test_junit_parses_with_junitparser(project):
    write(project, {"pkg/two.py": 'import torch\na = torch.ones(1).to("cuda")\nb = torch.ones(1).to("cuda")\n'})
    r = cli("lint", "-t", "neuron", "--output-format", "junit", "-o", "report.xml")
    assert r.exit_code == 1
    xml = JUnitXml.fromfile(str(project / "report.xml"))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"train.py", "pkg/two.py"}
    two = suites["pkg/two.py"]
    cases = list(two)
    # one test case per finding group: both DEV002 sites of pkg/two.py are one case
    assert [c.name for c in cases] == ["DEV002 cuda-device-string"]
    (failure,) = [res for res in cases[0].result if isinstance(res, Failure)]
    assert "2 DEV002 findings" in failure.message
    assert failure.text.count("pkg/two.py:") == 2
    assert suites["train.py"].tests == 3 and suites["train.py"].failures == 3


def test_junit_clean_run_is_one_passing_case(tmp_path, monkeypatch):
    write(tmp_path, {"ok.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("lint", "-t", "xla", "--output-format", "junit", "-o", "r.xml")
    assert r.exit_code == 0
    xml = JUnitXml.fromfile(str(tmp_path / "r.xml"))
    cases = [c for s in xml for c in s]
    assert len(cases) == 1 and cases[0].is_passed


def test_statistics(project):
    write(project, {"b.py": 'import torch\ny = "cuda"\n'})
    r = cli("lint", "-t", "neuron", "--statistics")
    assert r.exit_code == 1
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows[0][0] == "2" and rows[0][1].strip() == "DEV002" and rows[0][2] == "[*] cuda-device-string"
    assert sorted(row[1].strip() for row in rows) == ["CUDA003", "DEV001", "DEV002"]
    stats = cli("lint", "-t", "neuron", "--statistics", "--output-format", "json").json()
    assert stats[0] == {"code": "DEV002", "name": "cuda-device-string", "count": 2, "fixable": 2, "severity": "error"}


def test_statistics_count_the_files_not_checked_as_the_json_lists_them(project):
    from porter.core.reading import MAX_PARSE_BYTES

    write(
        project, {"bad.py": "import torch\nx = torch.zeros(3).cuda(\n", "big.py": TRAIN + "#" * MAX_PARSE_BYTES + "\n"}
    )
    listed = cli("lint", "-t", "neuron", "--output-format", "json").json()
    want: dict[str, int] = {}
    for f in listed:
        want[f["code"]] = want.get(f["code"], 0) + 1
    assert want.get("PORT001") == 2  # the syntax error and the file past the size
    for fmt in ("json", "json-lines"):
        r = cli("lint", "-t", "neuron", "--statistics", "--output-format", fmt)
        rows = r.json() if fmt == "json" else [json.loads(line) for line in r.stdout.splitlines()]
        assert r.exit_code == 1 and {row["code"]: row["count"] for row in rows} == want, fmt
    text = cli("lint", "-t", "neuron", "--statistics").stdout
    assert any(line.split("\t")[:2] == ["2", "PORT001"] for line in text.splitlines()), text


def test_lint_writes_the_shared_report(tmp_path):
    """`porter lint --report` renders the same report model as rewrite (kind "lint")."""
    import json
    import subprocess
    import sys

    (tmp_path / "m.py").write_text(
        "import torch\nx = torch.zeros(2).cuda()\nmajor, _ = torch.cuda.get_device_capability()\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "porter", "lint", ".", "--target", "neuron", "--report", "r.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["kind"] == "lint"
    codes = {f["code"] for file in data["files"] for f in file["findings"]}
    assert {"DEV001", "CUDA007"} <= codes
