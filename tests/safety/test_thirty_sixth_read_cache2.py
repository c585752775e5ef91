"""The thirty-sixth read's second helper on the cache read's leftovers (cache2): `PIP_CONSTRAINT` as pip 23.2.1 reads
its name, and the commands other commands run (each wrapper run for real with a `pip` on PATH that prints its words:
docs/reads/54-cache2-tools/wrappers_oracle.sh.txt)."""

from __future__ import annotations

import pytest

from porter.files.deps.constraint_files import _CONSTRAINT_VARIABLE, CONSTRAINT_VARIABLES
from porter.files.deps.indexes import installer_variable
from tests.safety.test_thirty_fifth_read_cache import _PINS
from tests.safety.test_thirty_second_read_cache import _pins_dep004_findings
from tests.safety.test_thirty_third_read_cache2 import _run

_CUDA = "https://download.pytorch.org/whl/cu121"

# pip 23.2.1's `Configuration._normalized_keys`: each is `--constraint` ("Constraints cannot have extras")
_CONSTRAINT_SPELLINGS = {
    "lower": ("Dockerfile", "FROM python:3.11\nENV PIP_constraint=requirements-pins.txt\nRUN pip install torch\n"),
    "mixed": ("Dockerfile", "FROM python:3.11\nENV PIP_Constraint requirements-pins.txt\nRUN pip install torch\n"),
    "leading-dashes": ("run.sh", "#!/bin/sh\nexport PIP___CONSTRAINT=requirements-pins.txt\npip install torch\n"),
    "compose": (
        "compose.yml",
        "services:\n  app:\n    environment:\n      PIP_constraint: requirements-pins.txt\n"
        "    command: pip install torch\n",
    ),
}


@pytest.mark.parametrize("case", list(_CONSTRAINT_SPELLINGS.values()), ids=list(_CONSTRAINT_SPELLINGS))
def test_pip_constraint_spelled_as_pip_reads_it_names_a_constraints_file(tmp_path, case):
    """`ENV PIP_constraint=requirements-pins.txt`: pip reads it as `PIP_CONSTRAINT`; porter matched the upper-case
    name only and added `torch-xla[tpu]==2.9.0` to the pins, which pip then refuses. Now no edit, said where."""
    name, text = case
    results = _run(tmp_path, {**_PINS, name: text}, target="xla")
    [found] = [f for f in results["requirements-pins.txt"].findings if f.code == "DEP004"]
    assert found.replacement is None, found
    assert "names this file" in (found.advice or ""), found.advice


def test_a_name_pip_reads_as_another_option_keeps_the_fix(tmp_path):
    """Control: `PIP_CONSTRAINTX`, `PIP____CONSTRAINT` (three `_`: `-constraint`), `MY_PIP_constraint`: no option
    pip has; the pins keep the edit."""
    files = {
        **_PINS,
        "run.sh": "export PIP_constraintx=requirements-pins.txt PIP____CONSTRAINT=requirements-pins.txt\n"
        "export MY_PIP_constraint=requirements-pins.txt\npip install torch\n",
    }
    [found] = [f for f in _run(tmp_path, files, target="xla")["requirements-pins.txt"].findings if f.code == "DEP004"]
    assert found.replacement, found


@pytest.mark.parametrize(
    "name",
    ["PIP_CONSTRAINT", "PIP_constraint", "PIP_cOnStRaInT", "PIP___CONSTRAINT", "PIP_--constraint", "PIP_-_constraint"]
    + ["PIP____CONSTRAINT", "PIP_CONSTRAINTS", "PIP_CONSTRAIN", "UV_constraint", "UV_CONSTRAINT", "PIP_INDEX_URL"],
)
def test_the_constraint_variables_read_are_those_installer_variable_reads(name):
    """The names `constraint_files` reads as `-c` are those `installer_variable` reads as `PIP_CONSTRAINT` or
    `UV_CONSTRAINT` (uv's as written), each set as `NAME=path`."""
    found = _CONSTRAINT_VARIABLE.fullmatch(f"{name}=pins.txt")
    assert (found is not None and found.group(1) == name) == (installer_variable(name) in CONSTRAINT_VARIABLES)


def test_a_warm_run_follows_a_constraint_variables_spelling(tmp_path):
    """The cache: the pins' bytes stay; the compose file's spelling alone changes, and each warm run follows."""
    for name, text in _PINS.items():
        (tmp_path / name).write_text(text)
    compose = tmp_path / "compose.yml"
    compose.write_text("services:\n  app:\n    environment:\n      PIP_constraintx: requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [True]
    compose.write_text("services:\n  app:\n    environment:\n      PIP_constraint: requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [False]
    compose.write_text("services:\n  app:\n    environment:\n      PIP_constraintx: requirements-pins.txt\n")
    assert [f.fixable for f in _pins_dep004_findings(tmp_path)] == [True]


_WRAPPED = {
    "exec-form-env": ("Dockerfile", f'FROM python:3.11\nCMD ["env", "PIP_INDEX_URL={_CUDA}", "pip", "install", "x"]\n'),
    "quoted-env": ("run.sh", f'#!/bin/sh\nenv "PIP_INDEX_URL={_CUDA}" pip install torch\n'),
    "command": ("run.sh", f"#!/bin/sh\ncommand pip install torch -i {_CUDA}\n"),
    "time-p": ("run.sh", f"#!/bin/sh\ntime -p pip install torch -i {_CUDA}\n"),
    "xargs-rn": ("run.sh", f"#!/bin/sh\nxargs -rn 1 pip install -i {_CUDA} < pkgs.txt\n"),
    "xargs-I": ("run.sh", f"#!/bin/sh\nxargs -I {{}} pip install {{}} -i {_CUDA} < pkgs.txt\n"),
    "stdbuf-o-L": ("run.sh", f"#!/bin/sh\nstdbuf -o L pip install torch -i {_CUDA}\n"),
    "chrt-other": ("run.sh", f"#!/bin/sh\nchrt --other 0 pip install torch -i {_CUDA}\n"),
    "ionice": ("run.sh", f"#!/bin/sh\nionice -c 2 -n 0 pip install torch -i {_CUDA}\n"),
    "taskset-list": ("run.sh", f"#!/bin/sh\ntaskset -c 0,1 pip install torch -i {_CUDA}\n"),
    "taskset-mask": ("run.sh", f"#!/bin/sh\ntaskset 0x3 pip install torch -i {_CUDA}\n"),
    "numactl": ("run.sh", f"#!/bin/sh\nnumactl -N 0 --membind=0 pip install torch -i {_CUDA}\n"),
    "doas-u": ("run.sh", f"#!/bin/sh\ndoas -n -u app pip install torch -i {_CUDA}\n"),
    "runuser-u": ("run.sh", f"#!/bin/sh\nrunuser -u app -- pip install torch -i {_CUDA}\n"),
    "sudo-Hu": ("run.sh", f"#!/bin/sh\nsudo -Hu app pip install torch -i {_CUDA}\n"),
    "su-c": ("run.sh", f"#!/bin/sh\nsu - root -c 'pip install torch -i {_CUDA}'\n"),
    "runuser-c": ("run.sh", f"#!/bin/sh\nrunuser -l app -c 'pip install torch -i {_CUDA}'\n"),
}


@pytest.mark.parametrize("case", list(_WRAPPED.values()), ids=list(_WRAPPED))
def test_a_command_another_runs_is_read(tmp_path, case):
    """Each wrapper runs `pip install ... -i .../cu121` (seen: the `pip` on PATH printed its words; `su -c`, `runuser
    -c`: the script); porter read a command named `time`, `taskset`, ... (or `root` for `sudo -Hu root`, and no
    `env` assignment in an exec form's JSON strings): nothing said. Now DEP002 on the index."""
    name, text = case
    result = _run(tmp_path, {name: text})[name]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", 2)]


_NOT_RUN = {
    # `command -v` prints a path; `-p PID` changes a running process; `runuser USER args` hands the words to a shell
    # as a script file's name (`sh pip ...`); `doas -s` runs a shell; `chrt -p` a PID's policy
    "command-v": f"#!/bin/sh\ncommand -v pip install torch -i {_CUDA}\n",
    "taskset-p": f"#!/bin/sh\ntaskset -p 0x1 pip install torch -i {_CUDA}\n",
    "ionice-p": f"#!/bin/sh\nionice -c 3 -p 1 pip install torch -i {_CUDA}\n",
    "runuser-no-u": f"#!/bin/sh\nrunuser app pip install torch -i {_CUDA}\n",
    "doas-s": f"#!/bin/sh\ndoas -s pip install torch -i {_CUDA}\n",
    "chrt-p": f"#!/bin/sh\nchrt -p 10 pip install torch -i {_CUDA}\n",
    "xargs-show-limits": f"#!/bin/sh\nxargs --show-limits pip install torch -i {_CUDA}\n",
}


@pytest.mark.parametrize("text", list(_NOT_RUN.values()), ids=list(_NOT_RUN))
def test_a_wrapper_that_runs_no_command_as_written_is_not_read_as_one(tmp_path, text):
    """Control: no DEP002 made up where the words are no command run."""
    result = _run(tmp_path, {"run.sh": text})["run.sh"]
    assert not [f for f in result.findings if f.code == "DEP002"], result.findings


_WORKFLOW = (
    "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {}\n      - run: pip install torch\n"
)
_LATER_STEPS = {
    "plain": f'echo "PIP_INDEX_URL={_CUDA}" >> $GITHUB_ENV',
    "braced-quoted": f'echo PIP_EXTRA_INDEX_URL={_CUDA} >> "${{GITHUB_ENV}}"',
}


@pytest.mark.parametrize("run", list(_LATER_STEPS.values()), ids=list(_LATER_STEPS))
def test_an_index_variable_written_to_github_env_is_reported_and_edited(tmp_path, run):
    """`echo "PIP_INDEX_URL=.../cu121" >> $GITHUB_ENV`: GitHub Actions sets it for the job's later steps, whose `pip
    install torch` then takes CUDA's torch; porter read an `echo`: nothing said. Now DEP002, the URL edited in place
    (the YAML still loads, with the CPU index)."""
    import yaml

    from porter.config.settings import Settings
    from porter.pipeline.runner import run as porter_run

    name = ".github/workflows/ci.yml"
    text = _WORKFLOW.format(run)
    result = _run(tmp_path, {name: text})[name]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", 6)]
    [fixed] = porter_run([tmp_path / name], Settings(target="tpu"), jobs=1, cache=False)[0]
    steps = yaml.safe_load(fixed.new_source)["jobs"]["t"]["steps"]
    assert steps[0]["run"] == run.replace("/whl/cu121", "/whl/cpu"), steps


_NOT_LATER_STEPS = {
    "github-output": f'echo "PIP_INDEX_URL={_CUDA}" >> $GITHUB_OUTPUT',
    "two-words": f"echo NOTE PIP_INDEX_URL={_CUDA} >> $GITHUB_ENV",
    "other-file": f'echo "PIP_INDEX_URL={_CUDA}" >> env.txt',
}


@pytest.mark.parametrize("run", list(_NOT_LATER_STEPS.values()), ids=list(_NOT_LATER_STEPS))
def test_a_line_that_sets_no_later_steps_index_is_not_reported(tmp_path, run):
    """Control: `$GITHUB_OUTPUT` is a step's outputs; `echo NOTE PIP_INDEX_URL=...` writes the line of a name
    `NOTE PIP_INDEX_URL` (the runner splits at the first `=`); another file is no environment. No DEP002."""
    name = ".github/workflows/ci.yml"
    result = _run(tmp_path, {name: _WORKFLOW.format(run)})[name]
    assert not [f for f in result.findings if f.code == "DEP002"], result.findings
