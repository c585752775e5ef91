"""The thirty-seventh read's helper on the dependency/container/shell leftovers (cdleft): the job's variables a step
writes to `$GITHUB_ENV` with a here-document or `tee`, the script a shell reads from a here-string or from a
here-document handed through a wrapper, and `sudo -s`/`-i` with a command. Each case was run by bash 5.2 with a
`pip` on PATH that logs its words and GitHub's `NAME=value` file format read back
(docs/reads/55-cdleft-tools/later_oracle.py.txt)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_third_read_cache2 import _run

_CUDA = "https://download.pytorch.org/whl/cu121"
_CPU = "https://download.pytorch.org/whl/cpu"
_SCRIPT = "ci/env.sh"  # (a script a workflow's step runs, `run: ci/env.sh`; a workflow's own `run: |` block is read
# a line at a time, a here-document's lines as commands: docs/reads/55-cdleft-attempts.md, Left)


def _dep002(result):
    return [f for f in result.findings if f.code == "DEP002"]


def _fixed(tmp_path, name):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run as porter_run

    [fixed] = porter_run([tmp_path / name], Settings(target="tpu"), jobs=1, cache=False)[0]
    new = fixed.new_source
    return new.decode() if isinstance(new, bytes) else new


# GitHub Actions reads `$GITHUB_ENV` a line at a time, `NAME=value`, after the step: these set PIP_INDEX_URL (or
# PIP_EXTRA_INDEX_URL) to CUDA's index for the later `pip install torch` (bash wrote each line to the file)
_LATER_STEPS = {
    "cat-append": f'cat >> "$GITHUB_ENV" <<EOF\nPIP_INDEX_URL={_CUDA}\nEOF',
    "cat-heredoc-first": f"cat <<'EOF' >> $GITHUB_ENV\nCUDA_NOTE=1\nPIP_EXTRA_INDEX_URL={_CUDA}\nEOF",
    "tee-append": f"tee -a ${{GITHUB_ENV}} <<EOF >/dev/null\nPIP_INDEX_URL={_CUDA}\nEOF",
    "echo-tee": f'echo "PIP_INDEX_URL={_CUDA}" | tee -a "$GITHUB_ENV"',
    "group": f'{{ echo "PIP_INDEX_URL={_CUDA}"; echo DONE=1; }} >> "$GITHUB_ENV"',
    "subshell": f'( echo "PIP_INDEX_URL={_CUDA}" ) >> "$GITHUB_ENV"',
}


@pytest.mark.parametrize("script", list(_LATER_STEPS.values()), ids=list(_LATER_STEPS))
def test_an_index_written_to_github_env_otherwise_is_reported_and_edited(tmp_path, script):
    """A step's script `cat >> "$GITHUB_ENV" <<EOF` / `tee -a` / `echo ... | tee -a`: the job's later steps take
    CUDA's torch; porter read only `echo NAME=value >> $GITHUB_ENV`: nothing said. Now DEP002 at the line, the URL
    edited in place."""
    text = f"#!/bin/bash\n{script}\n"
    result = _run(tmp_path, {_SCRIPT: text})[_SCRIPT]
    line = 2 + next(i for i, part in enumerate(script.split("\n")) if _CUDA in part)
    assert [(f.code, f.start.line) for f in _dep002(result)] == [("DEP002", line)], result.findings
    assert _fixed(tmp_path, _SCRIPT) == text.replace(_CUDA, _CPU)


_NOT_LATER_STEPS = {
    "github-output": f'cat >> "$GITHUB_OUTPUT" <<EOF\nPIP_INDEX_URL={_CUDA}\nEOF',
    "stderr": f'cat 2>> "$GITHUB_ENV" <<EOF\nPIP_INDEX_URL={_CUDA}\nEOF',
    "multi-line-value": f"cat >> $GITHUB_ENV <<'EOF'\nNOTE<<ZZ\nPIP_INDEX_URL={_CUDA}\nZZ\nEOF",
    "quotes-kept": f'cat >> $GITHUB_ENV <<EOF\nPIP_INDEX_URL="{_CUDA}"\nEOF',
    "expansion": f"cat >> $GITHUB_ENV <<EOF\nPIP_INDEX_URL=$BASE{_CUDA}\nEOF",
    "tee-other-file": f'echo "PIP_INDEX_URL={_CUDA}" | tee -a env.txt',
    "cat-a-file": f'cat notes.txt >> "$GITHUB_ENV" <<EOF\nPIP_INDEX_URL={_CUDA}\nEOF',
    "echo-stderr": f'echo "PIP_INDEX_URL={_CUDA}" 2>> "$GITHUB_ENV"',
    "group-stderr": f'{{ echo "PIP_INDEX_URL={_CUDA}" >&2; }} >> "$GITHUB_ENV"',
}


@pytest.mark.parametrize("script", list(_NOT_LATER_STEPS.values()), ids=list(_NOT_LATER_STEPS))
def test_a_write_that_sets_no_later_steps_index_is_not_reported(tmp_path, script):
    """Control: a step's outputs, standard error, a multi-line value's lines (the value of `NOTE`), a value GitHub
    keeps its quotes in, one bash expands (`$BASE`), another file, `cat` of a file (the here-document unread): bash
    writes no `PIP_INDEX_URL=https://...cu121` line to `$GITHUB_ENV`. No DEP002. (`echo ... 2>> "$GITHUB_ENV"`
    writes its line to the terminal: porter read it as written to the file, DEP002 and an edit, before.)"""
    result = _run(tmp_path, {_SCRIPT: f"#!/bin/bash\n{script}\n"})[_SCRIPT]
    assert not _dep002(result), result.findings


# the shell runs the here-string's value (and a newline) as its script, or the here-document a wrapper hands it;
# `sudo -s`/`-i` hand the words to the shell's `-c` escaped (sudo 1.9's manual): pip gets `--index-url .../cu121`
_SCRIPTS = {
    "here-string": f"bash <<< 'pip install torch --index-url {_CUDA}'",
    "here-string-s": f'sh -s <<< "pip install torch --index-url {_CUDA}"',
    "sudo-heredoc": f"sudo bash <<EOF\npip install torch --index-url {_CUDA}\nEOF",
    "env-here-string": f"env A=1 bash <<< 'pip install torch --index-url {_CUDA}'",
    "sudo-Es": f"sudo -Es pip install torch --index-url {_CUDA}",
    "sudo-i": f"sudo -i pip install torch --index-url {_CUDA}",
}


@pytest.mark.parametrize("script", list(_SCRIPTS.values()), ids=list(_SCRIPTS))
def test_a_script_a_shell_reads_otherwise_is_reported_and_edited(tmp_path, script):
    """bash runs `pip install torch --index-url .../cu121` from a here-string, a wrapper's here-document, or sudo's
    shell; porter read no command there (a here-string, a wrapper's stdin, sudo's `-s`/`-i` a stop). Now DEP002,
    the URL edited in place."""
    text = f"#!/bin/bash\n{script}\n"
    result = _run(tmp_path, {"run.sh": text})["run.sh"]
    line = 2 + next(i for i, part in enumerate(script.split("\n")) if _CUDA in part)
    assert [(f.code, f.start.line) for f in _dep002(result)] == [("DEP002", line)], result.findings
    assert _fixed(tmp_path, "run.sh") == text.replace(_CUDA, _CPU)


_NOT_SCRIPTS = {
    "cat-here-string": f"cat <<< 'pip install torch --index-url {_CUDA}'",
    "script-operand": f"bash x.sh <<< 'pip install torch --index-url {_CUDA}'",
    "other-descriptor": f"bash 3<<< 'pip install torch --index-url {_CUDA}'",
    "xargs-heredoc": f"xargs bash <<EOF\npip install torch --index-url {_CUDA}\nEOF",
    "sudo-s-dollar": f"sudo -s pip install torch --index-url '$X{_CUDA}'",
    "sudo-list": f"sudo -l pip install torch --index-url {_CUDA}",
}


@pytest.mark.parametrize("script", list(_NOT_SCRIPTS.values()), ids=list(_NOT_SCRIPTS))
def test_a_string_no_shell_runs_as_its_script_is_not_reported(tmp_path, script):
    """Control: `cat`'s input; a script operand's input; descriptor 3; xargs' argument list (its command's input is
    not the here-document); sudo's shell expanding `$X` (the URL unknown); `sudo -l` lists, runs nothing. No
    DEP002."""
    result = _run(tmp_path, {"run.sh": f"#!/bin/bash\n{script}\n"})["run.sh"]
    assert not _dep002(result), result.findings


# numactl 2.0.16 run for real with a `pip` on PATH (docs/reads/55-cdleft-tools/numactl_oracle.sh.txt): `-c`/
# `--cpubind` and `--shmid` take a value, then pip runs; a shared-memory option makes numactl exit with a command
_NUMACTL_RUNS = ["-c 0", "--cpubind 0", "--shmid 1", "-a -c0"]
_NUMACTL_EXITS = ["--huge", "-u", "--touch", "-d", "--dump-nodes", "--verify", "--length 1g", "--shm k"]


@pytest.mark.parametrize("options", _NUMACTL_RUNS)
def test_numactl_options_that_take_a_value_run_the_command_after_it(tmp_path, options):
    """`numactl -c 0 pip install torch --index-url .../cu121`: numactl binds to CPU node 0 and runs pip; porter read
    `-c` as a flag and `0` as the command: nothing said. Now DEP002, edited."""
    text = f"#!/bin/bash\nnumactl {options} pip install torch --index-url {_CUDA}\n"
    result = _run(tmp_path, {"run.sh": text})["run.sh"]
    assert [(f.code, f.start.line) for f in _dep002(result)] == [("DEP002", 2)], result.findings
    assert _fixed(tmp_path, "run.sh") == text.replace(_CUDA, _CPU)


@pytest.mark.parametrize("options", _NUMACTL_EXITS)
def test_numactl_shared_memory_options_run_no_command(tmp_path, options):
    """`numactl --huge pip install ...`: numactl says "shm related option --huge for process" and runs nothing;
    porter said DEP002 on a pip that never runs and edited its line. Now nothing (as `numactl --show`)."""
    result = _run(tmp_path, {"run.sh": f"#!/bin/bash\nnumactl {options} pip install torch --index-url {_CUDA}\n"})
    assert not _dep002(result["run.sh"]), result["run.sh"].findings


def test_numactl_policy_options_still_run_the_command(tmp_path):
    """Control: `numactl -N 0 -m 0 pip ...` (numactl 2.0.16 runs pip): DEP002 as before."""
    text = f"#!/bin/bash\nnumactl -N 0 -m 0 pip install torch --index-url {_CUDA}\n"
    result = _run(tmp_path, {"run.sh": text})["run.sh"]
    assert [f.code for f in _dep002(result)] == ["DEP002"], result.findings
