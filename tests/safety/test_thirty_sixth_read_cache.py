"""The thirty-sixth read of the cache and the dependency readers (cache): where else pip and uv read what porter's
readers read, each asked directly (pip 23.2.1 `pip install --dry-run`: "Looking in indexes: ...", uv 0.13.10 `pip
compile --offline -v`: "Sending fresh GET request for: ...")."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_third_read_cache2 import _run

_CUDA = "https://download.pytorch.org/whl/cu121"

# pip 23.2.1 reads each `PIP_` name's rest lower-cased, `_` as `-`, a leading `--` dropped
# (`Configuration._normalized_keys`): every one of these is `--extra-index-url` (or `--index-url`) to pip
_PIP_SPELLINGS = {
    "dockerfile-lower": (
        "Dockerfile",
        f"FROM python:3.11\nENV PIP_extra_index_url={_CUDA}\nRUN pip install torch\n",
        2,
    ),
    "dockerfile-mixed": ("Dockerfile", f"FROM python:3.11\nENV PIP_Index_Url={_CUDA}\nRUN pip install torch\n", 2),
    "dockerfile-dashes": (
        "Dockerfile",
        f'FROM python:3.11\nENV PIP_EXTRA-INDEX-URL={_CUDA}\nRUN ["pip", "install", "torch"]\n',
        2,
    ),
    "dockerfile-leading-dashes": (
        "Dockerfile",
        f"FROM python:3.11\nENV PIP___FIND_LINKS={_CUDA}\nRUN pip install torch\n",
        2,
    ),
    "shell-export": ("run.sh", f"#!/bin/sh\nexport PIP_Extra_Index_Url={_CUDA}\npip install torch\n", 2),
    "compose-environment": (
        "compose.yml",
        f"services:\n  app:\n    image: python:3.11\n    environment:\n      PIP_Extra-Index-Url: {_CUDA}\n"
        "    command: pip install torch\n",
        5,
    ),
    "workflow-env": (
        ".github/workflows/ci.yml",
        f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n      PIP_extra_index_url: {_CUDA}\n"
        "    steps:\n      - run: pip install torch\n",
        6,
    ),
    "hatch-env-vars": (
        "pyproject.toml",
        f'[project]\nname = "a"\nversion = "1"\n[tool.hatch.envs.default.env-vars]\nPIP_Extra_Index_Url = "{_CUDA}"\n',
        5,
    ),
}


@pytest.mark.parametrize("case", list(_PIP_SPELLINGS.values()), ids=list(_PIP_SPELLINGS))
def test_a_pip_variable_spelled_as_pip_reads_it_is_reported(tmp_path, case):
    """`ENV PIP_extra_index_url=.../cu121` (or `PIP_Index_Url`, `PIP_EXTRA-INDEX-URL`, `PIP___FIND_LINKS`): pip
    23.2.1 takes PyTorch's CUDA index from each ("Looking in indexes: https://pypi.org/simple, URL"); porter knew
    the upper-case names only: "All checks passed!". Now DEP002 on the URL, as for `PIP_EXTRA_INDEX_URL`."""
    name, text, line = case
    result = _run(tmp_path, {name: text})[name]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", line)]


_NOT_READ = {
    # pip reads the `PIP_` prefix as written (`pip_EXTRA_INDEX_URL`: PyPI only), and no option `--extra--index-url`
    "pip-lower-prefix": ("Dockerfile", f"FROM python:3.11\nENV pip_EXTRA_INDEX_URL={_CUDA}\nRUN pip install torch\n"),
    "pip-double-underscore": (
        "Dockerfile",
        f"FROM python:3.11\nENV PIP_EXTRA__INDEX_URL={_CUDA}\nRUN pip install torch\n",
    ),
    # uv 0.13.10 reads `UV_EXTRA_INDEX_URL` as written: `UV_extra_index_url` asks PyPI only
    "uv-lower": (
        "Dockerfile",
        f"FROM python:3.11\nENV UV_extra_index_url={_CUDA}\nRUN uv pip install --system torch\n",
    ),
}


@pytest.mark.parametrize("case", list(_NOT_READ.values()), ids=list(_NOT_READ))
def test_a_variable_the_installers_do_not_read_stays_unreported(tmp_path, case):
    """The control: names pip and uv do not read as an index stay without DEP002 (seen with pip 23.2.1, uv 0.13.10)."""
    name, text = case
    result = _run(tmp_path, {name: text})[name]
    assert not [f for f in result.findings if f.code == "DEP002"], result.findings
