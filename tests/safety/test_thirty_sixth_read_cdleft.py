"""The thirty-sixth read's dependency leftovers (cdleft): what the thirty-fifth read's cache, cache2 and cdleft
helpers left, each read against the tool that runs it (bash 5.2's quoting for `sh -c`, the Dockerfile reference's
`WORKDIR` with a shell's `cd`, pip 23.2.1's `PIP_CONSTRAINT`, a path from the working folder)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_third_read_cache2 import _run

_CU121 = "https://download.pytorch.org/whl/cu121"


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


@pytest.mark.parametrize(
    "line",
    [
        # (bash: `echo 'hi'; pip install ...`, the single-quoted string's `'\''` a quote)
        f"sh -c 'echo '\\''hi'\\''; pip install torch --index-url {_CU121}'",
        # (`$'...'`: ANSI-C quoting, `\\'` a quote, `\\n` a line break)
        f"bash -c $'echo \\'hi\\'\\npip install torch --index-url {_CU121}'",
        # (a command substitution with its own quotes inside the double-quoted script)
        f'sh -c "echo $(printf "%s" x); pip install torch --index-url {_CU121}"',
    ],
    ids=["single-quoted-escape", "ansi-c", "nested-quotes"],
)
def test_a_c_script_written_with_quotes_bash_decodes_is_read(tmp_path, line):
    """bash hands `sh -c` the decoded string: `'echo '\\''hi'\\''; pip install ...'`, `$'...\\n...'`, and `"$(printf
    "%s" x); ..."` each run `pip install torch --index-url .../cu121`. porter read only a script whose characters
    are its value (or a double-quoted one with simple escapes): "All checks passed!". Now DEP002, at the URL as
    written, reported, not edited (the escapes moved the value's characters)."""
    results = _run(tmp_path, {"run.sh": line + "\n"})
    [found] = _codes(results["run.sh"], "DEP002")
    assert found.replacement is None, found
    assert line[found.start.column :].startswith(_CU121), (line, found)


def test_quoted_words_that_hold_no_such_script_are_left_alone(tmp_path):
    """Guards: `python -c $'...'` is Python, a script that only echoes the URL in quotes runs no pip, and a plain
    single-quoted script is still edited in place (as the thirty-fifth read made it)."""
    text = (
        f"python -c $'import os\\nos.system(\"pip install torch --index-url {_CU121}\")'\n"
        f"sh -c 'echo '\\''pip install torch --index-url {_CU121}'\\'''\n"
        f"sh -c 'pip install torch --index-url {_CU121}'\n"
    )
    results = _run(tmp_path, {"run.sh": text})
    [found] = _codes(results["run.sh"], "DEP002")
    assert found.start.line == 3 and found.replacement == "https://download.pytorch.org/whl/cpu", found


def test_a_cd_in_the_run_is_not_followed_as_its_workdir(tmp_path):
    """`WORKDIR /app`, `COPY . .`, `RUN cd sub && pip install -c pins/requirements-pins.txt torch`: pip reads
    sub/pins/requirements-pins.txt (the path is from the shell's folder after `cd`). porter followed the
    `WORKDIR` only: pins/'s file was told "Dockerfile:4 names this file with `-c`", and sub/pins/'s, the
    constraints file pip reads, took `torch-xla[tpu]==2.9.0`, an extra pip refuses there ("Constraints cannot have
    extras"). Now a RUN that changes folder is not followed: both are reported, neither edited."""
    results = _run(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11\nWORKDIR /app\nCOPY . .\n"
            "RUN cd sub && pip install -c pins/requirements-pins.txt torch\n",
            "pins/requirements-pins.txt": "torch==2.9.0\n",
            "sub/pins/requirements-pins.txt": "torch==2.9.0\n",
            "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
        },
        target="xla",
    )
    for name in ("pins/requirements-pins.txt", "sub/pins/requirements-pins.txt"):
        [found] = _codes(results[name], "DEP004")
        assert found.replacement is None, (name, found)
        assert "names `pins/requirements-pins.txt` with `-c`, which may be this file" in found.advice, found.advice


def test_a_pip_constraint_variable_is_followed_through_workdir_and_copy(tmp_path):
    """`WORKDIR /app`, `COPY other/requirements-pins.txt deps/`, `ENV PIP_CONSTRAINT=deps/requirements-pins.txt`,
    `RUN pip install torch`: pip reads /app/deps/requirements-pins.txt, which is other/'s file. The variable was
    matched by file name only: deps/'s file (not in the image there) was told "Dockerfile:4 (PIP_CONSTRAINT)
    names this file" and not given the target's packages. Now the path is followed at each RUN after the `ENV`,
    as a `-c` path is: other/'s file is the one, deps/'s gets the target's packages."""
    results = _run(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11\nWORKDIR /app\nCOPY other/requirements-pins.txt deps/\n"
            "ENV PIP_CONSTRAINT=deps/requirements-pins.txt\nRUN pip install torch\n",
            "deps/requirements-pins.txt": "torch==2.9.0\n",
            "other/requirements-pins.txt": "torch==2.9.0\n",
            "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
        },
        target="xla",
    )
    [named] = _codes(results["other/requirements-pins.txt"], "DEP004")
    [free] = _codes(results["deps/requirements-pins.txt"], "DEP004")
    assert named.replacement is None and "Dockerfile:4 (PIP_CONSTRAINT) names this file" in named.advice, named
    assert free.replacement is not None and "names" not in (free.advice or ""), free


@pytest.mark.parametrize(
    "tail",
    [
        # (a later stage may inherit the variable, from another folder)
        "RUN pip install torch\nFROM base AS two\nWORKDIR /srv\nRUN pip install torch\n",
        # (a RUN after it changes folder)
        "RUN cd /tmp && pip install torch\n",
    ],
    ids=["later-stage", "cd"],
)
def test_a_pip_constraint_variable_that_cannot_be_followed_keeps_both_files_reported(tmp_path, tail):
    """Guards: where a RUN that reads the variable is not at the stage's `WORKDIR`, every file of that name is
    reported, none edited (the safe side, as before)."""
    results = _run(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11 AS base\nWORKDIR /app\nCOPY . .\n"
            "ENV PIP_CONSTRAINT=deps/requirements-pins.txt\n" + tail,
            "deps/requirements-pins.txt": "torch==2.9.0\n",
            "other/requirements-pins.txt": "torch==2.9.0\n",
            "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
        },
        target="xla",
    )
    for name in ("deps/requirements-pins.txt", "other/requirements-pins.txt"):
        [found] = _codes(results[name], "DEP004")
        assert found.replacement is None and "(PIP_CONSTRAINT) names" in found.advice, (name, found)
