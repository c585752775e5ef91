"""The thirty-first read of the cache and the state porter reads back (cache): the line length a
monorepo package's own `pyproject.toml` hid from ruff's configuration above it; `lint --fix`'s SARIF
on a fix it could not write."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.helpers import write_files
from tests.safety.conftest import CUDA, committed_repo


@pytest.mark.parametrize(
    ("files", "want"),
    [
        # a package's pyproject.toml without [tool.ruff] is no configuration to ruff: 40 from the top
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": '[project]\nname = "p"\n'}, 40),
        # black stops at the package's pyproject.toml (its default); ruff reads the top's [tool.ruff]
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 50\n[tool.black]\nline-length = 60\n",
                "pkg/pyproject.toml": '[project]\nname = "p"\n',
            },
            50,
        ),
        # the package's own [tool.black] without a length: black's default, not the top's ruff length
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[tool.black]\n"}, None),
        # the package's own [tool.ruff] without a length: ruff's default there
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[tool.ruff.lint]\nselect = []\n"}, None),
        # a package's pyproject.toml that does not parse sets no limit (ruff refuses it)
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[project\n"}, None),
    ],
)
def test_a_package_pyproject_without_a_formatter_table_leaves_ruffs_length_above_it(tmp_path, files, want):
    """ruff 0.17.6 (`check --show-settings pkg/m.py`) reads on past a `pyproject.toml` without
    `[tool.ruff]` (a monorepo package's own `[project]`): 40 and 50 for the first two layouts. porter
    stopped at any `pyproject.toml`: no length, so `rewrite --diff` left
    `local_len = torch.zeros(n).to(torch_xla.device())` at 53 columns in a 40-column project (where
    it splits the call with the length read)."""
    from porter.config.line_length import forget, line_length

    write_files(tmp_path, {".git/HEAD": "", **files, "pkg/m.py": "x = 1\n"})
    forget()
    assert line_length(str(tmp_path / "pkg" / "m.py")) == want


def test_a_lint_fix_that_could_not_write_a_file_is_no_successful_execution_in_sarif(tmp_path, monkeypatch):
    """`lint --fix --output-format sarif` whose fix of `b.py` could not be written (a read-only
    file) left with 2 and said on stderr "cannot write", but its SARIF said `"executionSuccessful":
    true` with no notification: GitHub code scanning showed a run that went well. Now the run is
    not successful and a notification names the file and why (as for a file not checked)."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"a.py": CUDA, "b.py": CUDA})
    (repo / "b.py").chmod(0o444)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["lint", ".", "-t", "xla", "--fix", "--output-format", "sarif", "-o", "out.sarif"])
    assert result.exit_code == 2, result.output
    assert (repo / "b.py").read_bytes() == CUDA and (repo / "a.py").read_bytes() != CUDA
    [invocation] = json.loads((repo / "out.sarif").read_text())["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["message"]["text"] == "b.py: no write permission (read-only file); its fixes are not applied"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "b.py"


def test_a_lint_fix_that_could_not_write_a_file_does_not_pass_by_writing_a_baseline(tmp_path, monkeypatch):
    """`lint --fix --write-baseline FILE` ("fix what you can, record the rest") whose fix of `b.py`
    could not be written said so on stderr and left with 0, where `lint --fix` alone (and with
    `--exit-zero`) leaves with 2: a CI step passed over a tree it did not fix. The baseline is still
    written (b.py's findings as they are), and the exit is 2."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"a.py": CUDA, "b.py": CUDA})
    (repo / "b.py").chmod(0o444)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["lint", ".", "-t", "xla", "--fix", "--write-baseline", "base.json"])
    assert result.exit_code == 2, result.output
    assert {f["file"] for f in json.loads((repo / "base.json").read_text())["findings"]} == {"b.py"}


@pytest.mark.parametrize(
    ("text", "cupy"),
    [
        # pip (join_lines) takes the next line into the comment: it installs no cupy from this file
        ("torch==2.9.0  # pinned \\\ncupy-cuda12x\nnumpy\n", False),
        # the last line ends in a backslash: pip reads it all the same
        ("torch==2.9.0\nnumpy\ncupy-cuda12x \\\n", True),
    ],
    ids=["comment-then-backslash", "backslash-at-the-end"],
)
def test_requirement_lines_are_joined_as_pip_joins_them(tmp_path, text, cupy):
    """pip 23.2.1's own parser (`parse_requirements`) is the oracle: `torch  # pinned \\` makes the
    next line part of its comment, and a backslash on the last line is no requirement's text. porter
    read the first `cupy-cuda12x` as a requirement (DEP005 on a line pip ignores) and put the target's
    package inside the comment (`rewrite` inserted `torch-xla[tpu]==2.9.0` after line 1: pip then
    installed no torch-xla), and missed the second (no DEP005 on a package pip installs)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "requirements.txt").write_text(text)
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert ("DEP005" in {f.code for f in result.findings}) is cupy
    new = (result.new_source or b"").decode()
    assert "torch-xla" in new
    pip_reads = [ln.split("#")[0].strip() for ln in new.replace("\\\n", "").splitlines()]
    assert any(r.startswith("torch-xla") for r in pip_reads), new


@pytest.mark.parametrize(
    ("text", "cupy"),
    [
        # setuptools' build keeps a key's case (`optionxform = str`): no `Install_Requires` is read
        # (`read_configuration`, distutils' reader, lower-cases it; cache2's read: the build does not)
        ("[options]\nInstall_Requires =\n    torch\n    cupy-cuda12x\n", False),
        # configparser keeps a section name's spaces: setuptools knows no `[ options ]`
        ("[ options ]\ninstall_requires =\n    torch\n    cupy-cuda12x\n", False),
    ],
    ids=["key-case", "section-spaces"],
)
def test_setup_cfg_is_read_as_setuptools_reads_it(tmp_path, text, cupy):
    """setuptools 65.5's `read_configuration` is the oracle: it declares cupy-cuda12x for the first
    file and nothing for the second. porter matched keys by case (no DEP005 on a package setuptools
    declares) and stripped the section's name (a DEP005 on one it never reads)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "setup.cfg").write_text(text)
    results = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert any(f.code == "DEP005" for r in results for f in r.findings) is cupy
