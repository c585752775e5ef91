"""The thirty-fourth read of terminal and report output, second wave (term2, on 862af2d1): the new
findings' messages through the formats, and lint's refused option pairs against docs/ci.md."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import click
import pytest
import typer.main

from porter.cli import app
from porter.lint.formats import FORMATS
from tests.lint.conftest import cli

_ROOT = Path(__file__).resolve().parents[2]
_DOCKERFILE = "FROM python\nWORKDIR /app\nRUN pip install -c requirements.txt -r requirements.txt\n"


def _tree(root: Path, folders: list[str]) -> None:
    for folder in folders:
        (root / folder).mkdir()
        (root / folder / "Dockerfile").write_text(_DOCKERFILE)
        (root / folder / "requirements.txt").write_text("torch==2.1.0\n")


def _advice(root: Path, monkeypatch) -> dict[str, str]:
    monkeypatch.chdir(root)
    r = cli("lint", ".", "-t", "xla", "--no-cache", "--select", "DEP004", "--output-format", "json")
    assert r.exit_code == 1, r.stderr
    return {f["path"]: f["advice"] for f in json.loads(r.stdout)}


def test_the_constraint_advice_names_the_dockerfile_of_its_own_folder(tmp_path, monkeypatch):
    # every requirements.txt of the tree was told the first folder's Dockerfile names it with `-c`
    _tree(tmp_path, ["a", "b", "c"])
    advice = _advice(tmp_path, monkeypatch)
    assert sorted(advice) == ["a/requirements.txt", "b/requirements.txt", "c/requirements.txt"]
    for folder in "abc":
        assert advice[f"{folder}/requirements.txt"].startswith(f"{folder}/Dockerfile:3 names this file with `-c`")


def test_the_constraint_advice_shows_the_naming_files_name_as_a_name(tmp_path, monkeypatch):
    # a newline in the folder's name: the text format's help line read `a b/Dockerfile:3`, another file
    _tree(tmp_path, ["a\nb"])
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "xla", "--no-cache", "--select", "DEP004")
    assert r.exit_code == 1, r.stderr
    help_lines = [line for line in r.stdout.splitlines() if "= help:" in line]
    assert len(help_lines) == 1 and "= help: a\\x0ab/Dockerfile:3 names this file" in help_lines[0], r.stdout


def test_a_hatch_uv_torch_backend_is_advised_by_the_name_written(tmp_path, monkeypatch):
    # the advice said "Remove `torch-backend`", which hatch.toml does not hold
    hatch = '[envs.default]\ninstaller = "uv"\ndependencies = ["torch"]\n[envs.default.env-vars]\nUV_TORCH_BACKEND = "cu121"\n'
    (tmp_path / "hatch.toml").write_text(hatch)
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "xla", "--no-cache", "--select", "DEP", "--output-format", "json")
    (finding,) = [f for f in json.loads(r.stdout) if f["code"] == "DEP002"]
    assert finding["advice"] == "Remove `UV_TORCH_BACKEND` for the target (uv then takes torch from PyPI)."


@pytest.mark.parametrize(
    ("name", "text", "select"),
    [
        (
            "hatch.toml",
            '[envs.default]\ninstaller = "uv"\n[envs.default.env-vars]\nUV_TORCH_BACKEND = "cu121"\n',
            "DEP002",
        ),
        ("uv.toml", '[pip]\ntorch-backend = "cu121"\n', "DEP002"),
    ],
)
def test_a_torch_backend_alone_is_read(tmp_path, monkeypatch, name, text, select):
    # `--select DEP002`: the prefilter knew no DEP002 token of either (`cu1` is DEP006's), the file was not read
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "xla", "--no-cache", "--select", select, "--output-format", "json")
    assert [f["code"] for f in json.loads(r.stdout)] == ["DEP002"], r.stderr
    assert r.exit_code == 1


def test_pixis_cuda_value_is_quoted_on_one_line_and_bounded(tmp_path, monkeypatch):
    # a TOML string's `\n` and its 5,000 characters went into DEP005's message whole
    (tmp_path / "pixi.toml").write_text('[system-requirements]\ncuda = "12\\n' + "x" * 5000 + '"\n')
    monkeypatch.chdir(tmp_path)
    r = cli("lint", ".", "-t", "xla", "--no-cache", "--output-format", "json")
    (finding,) = json.loads(r.stdout)
    assert finding["code"] == "DEP005" and "\n" not in finding["message"] and len(finding["message"]) < 300


def test_write_baselines_help_says_its_exit_2():
    lint = click.Context(typer.main.get_command(app)).command.get_command(None, "lint")  # type: ignore[attr-defined]
    (option,) = [p for p in lint.params if "--write-baseline" in p.opts]
    assert "exit 0" in option.help and "2 where" in option.help


# lint's options that take part in a refusal, or might: each with a value it takes
_FLAGS = ["--fix", "--diff", "--statistics", "--exit-zero", "--report-unused-ignores"]
_VALUED = {"--output-file": "out.txt", "--write-baseline": "b.json", "--baseline": "b.json", "--report": "r.md"}
_OPTIONS = [[f] for f in _FLAGS] + [[o, v] for o, v in _VALUED.items()] + [["--output-format", f] for f in FORMATS]


def _shown(option: list[str]) -> str:
    """An option as the table names it: a file's by its name alone, a format with it."""
    return " ".join(option) if option[0] == "--output-format" else option[0]


def _documented_pairs() -> set[frozenset[str]]:
    """The pairs of docs/ci.md's "Options that do not go together" table (`--output-format` with any
    format where it names none)."""
    text = (_ROOT / "docs" / "ci.md").read_text()
    section = text.split("### Options that do not go together", 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    pairs = set()
    for row in section.splitlines()[2:]:
        cells = row.strip("|").split("|")
        option = cells[0].strip().strip("`")
        for refused in re.findall(r"`([^`]+)`", cells[1]):
            named = [f"{refused} {f}" for f in FORMATS] if refused == "--output-format" else [refused]
            pairs.update(frozenset({option, n}) for n in named)
    return pairs


def test_the_docs_table_of_refused_pairs_is_the_codes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PORTER_OUTPUT_FORMAT", raising=False)
    refused = set()
    for one, other in itertools.combinations(_OPTIONS, 2):
        if one[0] == other[0]:
            continue
        r = cli("lint", "no-such-path", "-t", "xla", *one, *other)
        assert r.exit_code == 2, (one, other, r.stdout)
        if "do not go together" in r.stderr:
            refused.add(frozenset({_shown(one), _shown(other)}))
        else:
            assert "no such file" in r.stderr, (one, other, r.stderr)
    assert refused == _documented_pairs()
