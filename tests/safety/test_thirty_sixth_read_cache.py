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


_WRAPPED = {
    # (file, text, the (code, line) due)
    "sudo-pip": ("run.sh", f"#!/bin/sh\nsudo -H pip install torch --index-url {_CUDA}\n", [("DEP002", 2)]),
    "env-option-pip": (
        "run.sh",
        f"#!/bin/sh\nenv PIP_NO_CACHE_DIR=1 pip install torch --index-url {_CUDA}\n",
        [("DEP002", 2)],
    ),
    "nohup-python-m-pip": ("run.sh", f"#!/bin/sh\nnohup python -m pip install torch -i {_CUDA}\n", [("DEP002", 2)]),
    "timeout-nice-pip": (
        "run.sh",
        f"#!/bin/sh\ntimeout -s KILL 600 nice -n 5 pip install torch -i {_CUDA}\n",
        [("DEP002", 2)],
    ),
    "env-sets-index": (
        "Dockerfile",
        f"FROM python:3.11\nRUN env PIP_INDEX_URL={_CUDA} pip install torch\n",
        [("DEP002", 2)],
    ),
    "sudo-sets-index": ("run.sh", f"#!/bin/sh\nsudo PIP_EXTRA_INDEX_URL={_CUDA} pip install torch\n", [("DEP002", 2)]),
    "env-visible-devices": (
        "run.sh",
        "#!/bin/sh\nexec env -u X CUDA_VISIBLE_DEVICES=0,1 python m.py\n",
        [("ENV001", 2)],
    ),
    "env-nccl": ("run.sh", "#!/bin/sh\nenv -i NCCL_DEBUG=INFO python m.py\n", [("ENV002", 2)]),
}


@pytest.mark.parametrize("case", list(_WRAPPED.values()), ids=list(_WRAPPED))
def test_a_command_another_runs_is_read_with_the_variables_set_for_it(tmp_path, case):
    """`sudo pip install torch --index-url .../cu121`, `env PIP_INDEX_URL=.../cu121 pip install torch`, `env
    CUDA_VISIBLE_DEVICES=0,1 python m.py`: coreutils' `env` and sudo run the command with the variables set (pip
    23.2.1 under `env PIP_INDEX_URL=URL`: "Looking in indexes: URL"); porter read a command named `sudo` or `env`
    and found nothing. Now the command is read as itself and `NAME=value` as an assignment."""
    name, text, due = case
    result = _run(tmp_path, {name: text})[name]
    codes = {code for code, _ in due}
    assert [(f.code, f.start.line) for f in result.findings if f.code in codes] == due


def test_a_wrapped_commands_index_is_edited_in_place(tmp_path):
    """The edit lands on the URL's characters (tpu takes torch's CPU build), as for the command standing alone."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\nsudo env PIP_EXTRA_INDEX_URL={_CUDA} pip install torch -i {_CUDA}\n")
    [result] = run([script], Settings(target="tpu"), jobs=1, cache=False)[0]
    assert result.new_source == (
        b"#!/bin/sh\nsudo env PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu pip install torch -i "
        b"https://download.pytorch.org/whl/cpu\n"
    )


_NOT_RUN = {
    # `env` with no command prints the environment; `sudo -l` lists; an expansion before the command is unknown;
    # `env -S` splits its string (not read); `command -v` prints where the command is
    "env-alone": "#!/bin/sh\nenv PIP_INDEX_URL=URL\n",
    "sudo-list": f"#!/bin/sh\nsudo -l pip install torch -i {_CUDA}\n",
    "env-split": f"#!/bin/sh\nenv -S 'pip install torch -i {_CUDA}'\n",
    "expansion-first": f"#!/bin/sh\nsudo $PIP install torch -i {_CUDA}\n",
}


@pytest.mark.parametrize("text", list(_NOT_RUN.values()), ids=list(_NOT_RUN))
def test_a_wrapper_that_runs_no_command_as_written_gives_no_index_finding(tmp_path, text):
    """The control: where the words are no command run as written, no DEP002 is made up."""
    result = _run(tmp_path, {"run.sh": text})["run.sh"]
    assert not [f for f in result.findings if f.code == "DEP002"], result.findings


_SPLIT_INDEX = {
    "spaced": "--extra-index-url https://download.pytorch.org/whl/\\\ncu121\ntorch\n",
    "equals": "--extra-index-url=https://download.pytorch.org/whl/\\\ncu121\ntorch\n",
    "quoted": "--index-url 'https://download.pytorch.org/whl/\\\ncu121'\ntorch\n",
}


@pytest.mark.parametrize("text", list(_SPLIT_INDEX.values()), ids=list(_SPLIT_INDEX))
def test_an_index_written_across_a_continuation_is_reported(tmp_path, text):
    """pip 23.2.1 joins `\\`-continued lines before reading options: `--extra-index-url https://download.pytorch.org/
    whl/\\` then `cu121` is PyTorch's CUDA index (`parse_requirements`: `extra_index_urls ['.../whl/cu121']`). porter
    looked for the joined URL whole in the text, found none: "All checks passed!". Now DEP002 on line 1, not edited
    where the join splits the URL (tpu); the option's two lines removed where the target takes PyPI's torch (xla)."""
    tpu = _run(tmp_path / "tpu", {"requirements.txt": text})["requirements.txt"]
    assert [(f.code, f.start.line) for f in tpu.findings if f.code == "DEP002"] == [("DEP002", 1)]
    assert tpu.new_source is None or b"cu121" in tpu.new_source  # (no edit inside the split URL)
    xla = _run(tmp_path / "xla", {"requirements.txt": text}, target="xla")["requirements.txt"]
    assert [(f.code, f.start.line) for f in xla.findings if f.code == "DEP002"] == [("DEP002", 1)]
    assert xla.new_source is not None and xla.new_source.startswith(b"torch\n")


def test_an_index_written_whole_on_a_continued_line_is_still_edited(tmp_path):
    """The control: a URL whole on one physical line of a continued option keeps its edit to the CPU index."""
    text = "--extra-index-url \\\n  https://download.pytorch.org/whl/cu121\ntorch\n"
    result = _run(tmp_path, {"requirements.txt": text})["requirements.txt"]
    assert result.new_source is not None
    assert result.new_source.startswith(text.replace("cu121", "cpu").encode()), result.new_source
