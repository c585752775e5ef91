"""The thirty-fifth read of the cache and the dependency readers (cache): the places pip is told a constraints
file besides a requirements file's `-c` and a Dockerfile's, shell script's or Makefile's command line, read
against pip 23.2.1 (`PIP_CONSTRAINT=pins pip install --dry-run`: "ERROR: Constraints cannot have extras")."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_second_read_cache import _pins_dep004_findings
from tests.safety.test_thirty_third_read_cache2 import _run

_PINS = {"requirements-pins.txt": "torch==2.9.0\n", "m.py": "import torch\nx = torch.zeros(2).cuda()\n"}

_NAMED_AS_CONSTRAINTS = {
    "dockerfile-env": (
        "Dockerfile",
        "FROM python:3.11\nCOPY requirements-pins.txt /app/\nWORKDIR /app\nENV PIP_CONSTRAINT=requirements-pins.txt\n"
        "RUN pip install torch\n",
        "Dockerfile:4 (PIP_CONSTRAINT)",
    ),
    "dockerfile-env-blank": (
        "Dockerfile",
        "FROM python:3.11\nENV PIP_CONSTRAINT /app/requirements-pins.txt\nRUN pip install torch\n",
        "Dockerfile:2 (PIP_CONSTRAINT)",
    ),
    "shell-export-list": (
        "run.sh",
        '#!/bin/sh\nexport PIP_CONSTRAINT="/app/base.txt /app/requirements-pins.txt"\npip install torch\n',
        "run.sh:2 (PIP_CONSTRAINT)",
    ),
    "compose-environment": (
        "compose.yml",
        "services:\n  app:\n    image: python:3.11\n    environment:\n      PIP_CONSTRAINT: requirements-pins.txt\n",
        "compose.yml:5 (PIP_CONSTRAINT)",
    ),
    "workflow-env": (
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n      UV_CONSTRAINT: requirements-pins.txt\n"
        "    steps:\n      - run: uv pip install --system torch\n",
        ".github/workflows/ci.yml:6 (UV_CONSTRAINT)",
    ),
    "compose-command": (
        "docker-compose.yml",
        "services:\n  app:\n    image: python:3.11\n    command: pip install -c requirements-pins.txt torch\n",
        "docker-compose.yml:4 names",
    ),
    "workflow-run": (
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: |\n          python -m pip install --constraint requirements-pins.txt torch\n",
        ".github/workflows/ci.yml:7 names",
    ),
}


@pytest.mark.parametrize("case", list(_NAMED_AS_CONSTRAINTS.values()), ids=list(_NAMED_AS_CONSTRAINTS))
def test_a_pins_file_pip_is_told_as_constraints_elsewhere_gets_no_edit_pip_would_refuse(tmp_path, case):
    """pip reads `PIP_CONSTRAINT` as `-c` (uv `UV_CONSTRAINT`), and a compose `command:` or a CI step's `run:`
    is a pip command line like a Dockerfile's `RUN`. porter's fix added `torch-xla[tpu]==2.9.0` to
    requirements-pins.txt, and pip 23.2.1 then stops: "Constraints cannot have extras" (seen with
    `PIP_CONSTRAINT`). Now the DEP004 is reported there with no edit, naming where the file is set."""
    name, text, where = case
    results = _run(tmp_path, {**_PINS, name: text}, target="xla")
    [found] = [f for f in results["requirements-pins.txt"].findings if f.code == "DEP004"]
    assert found.replacement is None, found
    assert where in (found.advice or ""), found.advice


def test_a_variable_of_another_name_or_a_pip_install_r_keeps_the_fix(tmp_path):
    """Guards: `PIP_CONSTRAINTS` (no pip option), a `$PIP_CONSTRAINT` read, and a compose `command:` that installs
    the file with `-r` name no constraints file: the DEP004 keeps its edit."""
    files = {
        **_PINS,
        "run.sh": "PIP_CONSTRAINTS=requirements-pins.txt pip install torch\necho $PIP_CONSTRAINT\n",
        "compose.yml": "services:\n  app:\n    command: pip install -r requirements-pins.txt\n",
    }
    [found] = [f for f in _run(tmp_path, files, target="xla")["requirements-pins.txt"].findings if f.code == "DEP004"]
    assert found.replacement, found


def test_a_warm_run_follows_a_compose_files_constraint_variable(tmp_path):
    """The cache: the pins file's own bytes do not change when a compose file starts or stops setting
    `PIP_CONSTRAINT` to it; each warm run still follows (the role is in the pins file's settings)."""
    for name, text in _PINS.items():
        (tmp_path / name).write_text(text)
    compose = tmp_path / "compose.yml"
    compose.write_text("services:\n  app:\n    environment:\n      PIP_CONSTRAINT: requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [False]
    compose.write_text("services:\n  app:\n    environment:\n      OTHER: requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [True]
    compose.write_text("services:\n  app:\n    command: pip install -c requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [False]


_ABBREVIATED_INDEX = {
    "extra-index": "--extra-index https://download.pytorch.org/whl/cu121\n",
    "index-equals": "--index=https://download.pytorch.org/whl/cu121\n",
    "pypi-url": "--pypi-url https://download.pytorch.org/whl/cu121\n",
    "find": "--find https://download.pytorch.org/whl/cu121/torch_stable.html\n",
}


@pytest.mark.parametrize("line", list(_ABBREVIATED_INDEX.values()), ids=list(_ABBREVIATED_INDEX))
def test_an_index_option_pip_reads_by_its_abbreviation_or_alias_is_reported(tmp_path, line):
    """pip 23.2.1 reads a requirements file's options with optparse, which takes a unique prefix of a long option
    (`parse_requirements`: `--extra-index URL` sets `extra_index_urls`), and `--pypi-url` is `--index-url`'s
    other name. porter knew the full names only: no DEP002 on PyTorch's CUDA index."""
    result = _run(tmp_path, {"requirements.txt": line + "torch\n"}, target="xla")["requirements.txt"]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", 1)]


def test_an_abbreviated_constraint_option_names_a_constraints_file(tmp_path):
    """`--constr requirements-pins.txt`: pip reads the pins as constraints (`parse_requirements` gives
    `constraint=True`), and refuses the extra porter's fix added there. Now no DEP004 there, as for `-c`;
    guards: an ambiguous prefix (`--re`, pip refuses it) and an unknown option stay as written."""
    from porter.files.deps.reqfile import Line, option

    results = _run(tmp_path, {**_PINS, "requirements.txt": "--constr requirements-pins.txt\ntorch\n"}, target="xla")
    assert [f for f in results["requirements-pins.txt"].findings if f.code == "DEP004"] == []
    for written, read in {
        "--re x": "--re",
        "--nope x": "--nope",
        "--requirem x": "--requirement",
        "-c x": "-c",
    }.items():
        assert option(Line(0, len(written), len(written), written)) == (read, "x")


def test_a_pip_command_lines_abbreviated_options_are_read_as_pip_reads_them(tmp_path):
    """`pip install --extra-index URL` (pip 23.2.1 `--dry-run`: "Looking in indexes: ..., URL") and
    `pip install --constr requirements-pins.txt`: the index gave no DEP002 and the pins file got the extra that
    pip refuses in a constraint. uv's parser takes no prefix (its command stays as written: no finding)."""
    results = _run(
        tmp_path,
        {
            **_PINS,
            "Dockerfile": "FROM python:3.11\nRUN pip install --extra-index https://download.pytorch.org/whl/cu121 torch\n"
            "RUN python -m pip install --constr requirements-pins.txt torch\n"
            "RUN uv pip install --extra-index https://download.pytorch.org/whl/cu118 torch\n",
        },
        target="xla",
    )
    assert [(f.code, f.start.line) for f in results["Dockerfile"].findings if f.code == "DEP002"] == [("DEP002", 2)]
    [found] = [f for f in results["requirements-pins.txt"].findings if f.code == "DEP004"]
    assert found.replacement is None and "Dockerfile:3 names this file" in (found.advice or ""), found


def test_pips_pypi_url_variable_naming_the_cuda_index_is_reported(tmp_path):
    """`ENV PIP_PYPI_URL=.../cu121`: pip 23.2.1 reads it as `--pypi-url`, `--index-url`'s other name
    (`pip install --dry-run`: "Looking in indexes: URL"); porter knew `PIP_INDEX_URL` only: "All checks passed!"."""
    text = "FROM python:3.11\nENV PIP_PYPI_URL=https://download.pytorch.org/whl/cu121\nRUN pip install torch\n"
    result = _run(tmp_path, {"Dockerfile": text}, target="xla")["Dockerfile"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP002", 2)]


def test_an_environment_yml_pip_option_pip_reads_by_its_prefix_is_reported(tmp_path):
    """conda writes an environment.yml's `pip:` list into a requirements file and runs `pip install -r` on it, so
    pip reads `--extra-index URL` there as `--extra-index-url`: porter said nothing on PyTorch's CUDA index."""
    text = (
        "name: e\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
        "    - --extra-index https://download.pytorch.org/whl/cu121\n    - torch\n"
    )
    result = _run(tmp_path, {"environment.yml": text}, target="xla")["environment.yml"]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", 6)]


def test_uvs_own_index_options_on_its_command_line_are_reported(tmp_path):
    """`uv pip install --default-index URL` and `--index NAME=URL`: uv 0.13.10 (`pip compile --offline -v`) asks
    `https://download.pytorch.org/whl/cu121/torch/` and `.../cu118/torch/`; porter knew pip's index options
    only: "All checks passed!". Now DEP002, the option removed; pip's `--index` stays pip's (`--index-url`)."""
    text = (
        "FROM python:3.11\nRUN uv pip install --system --default-index https://download.pytorch.org/whl/cu121 torch\n"
        "RUN uv pip install --system --index=pytorch=https://download.pytorch.org/whl/cu118 torch\n"
    )
    result = _run(tmp_path, {"Dockerfile": text}, target="xla")["Dockerfile"]
    found = [(f.code, f.start.line, f.fixable) for f in result.findings if f.code == "DEP002"]
    assert found == [("DEP002", 2, True), ("DEP002", 3, True)]
