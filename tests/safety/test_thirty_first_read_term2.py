"""The thirty-first read of streams, timing and reports, second wave (term2, on 1bdd59f7): each test
failed there, but the `rewrite` case of the own-output test: the control that `rewrite`'s new refusal
of an input as `--report` spares a report of porter's own (it fails with that refusal alone)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.safety.conftest import CUDA, REPO, porter

# the worker's port of a00.py and the parent's read of a20.py each wait on a gate opened right
# after SIGCONT; a00.py then needs one second of its own
_TWO_GATES = """
import os, time
def _gated(real, marker, gate, then):
    def gated(*args, **kwargs):
        if not os.path.exists(gate):
            open(marker, "w").close()
            while not os.path.exists(gate):
                time.sleep(0.05)
            time.sleep(then)
        return real(*args, **kwargs)
    return gated
import porter.pipeline.parallel as p, porter.pipeline.runner as r
port_one, read_stat = p.port_one, r._read_stat
def worker(job):
    return (_gated(port_one, {w!r}, {gate!r}, 1.0) if job.name == "a00.py" else port_one)(job)
def parent(cand, *args, **kwargs):
    hit = cand.path.name == "a20.py"
    return (_gated(read_stat, {p!r}, {gate!r}, 0.0) if hit else read_stat)(cand, *args, **kwargs)
p.port_one, r._read_stat = worker, parent
"""


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="job control is POSIX's")
def test_a_job_stopped_while_porter_reads_the_next_files_does_not_fail_the_files_in_flight(tmp_path):
    # Ctrl-Z lands while porter's own process reads the next batch's files (not while it waits on
    # the workers): the stop was seen only by a late look in `Pool._wait`, so a file in flight since
    # before it was "took longer than 6 s to port ... left unchanged" after a 10 s stop
    for i in range(24):
        (tmp_path / f"a{i:02}.py").write_bytes(CUDA)
    hook, gate = tmp_path / "hook", tmp_path / "gate"
    markers = [tmp_path / "worker-in", tmp_path / "parent-in"]
    hook.mkdir()
    text = _TWO_GATES.format(w=str(markers[0]), p=str(markers[1]), gate=str(gate))
    (hook / "sitecustomize.py").write_text(text)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "NO_COLOR": "1", "XDG_CACHE_HOME": str(hook)}
    argv = ["lint", ".", "-t", "xla", "--no-cache", "--output-format", "concise", "--jobs", "2"]
    run = subprocess.Popen(
        [sys.executable, "-m", "porter", *argv, "--file-timeout", "6"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # (an orphaned group: SIGTSTP is discarded there, so SIGSTOP stands in)
    )
    try:
        end = time.monotonic() + 240
        while not all(m.exists() for m in markers) and run.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        os.killpg(run.pid, signal.SIGSTOP)
        time.sleep(10)  # stopped past the limit
        os.killpg(run.pid, signal.SIGCONT)
    finally:
        gate.touch()
    out, err = run.communicate(timeout=300)
    assert (run.returncode, b"took longer" in err) == (1, False), err
    assert out.count(b"DEV001") == 24, out


DS_CONFIG = b'{\n  "train_batch_size": 8,\n  "fp16": {"enabled": true}\n}\n'


@pytest.mark.parametrize("extra", [[], ["--diff"]])
def test_a_rewrite_report_named_as_a_json_config_the_run_reads_is_refused(tmp_path, extra):
    # every *.json is read as a config: `rewrite . --report ds_config.json` replaced the DeepSpeed
    # config with the report and left with 0 (`lint --report` refuses it, exit 2)
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "ds_config.json").write_bytes(DS_CONFIG)
    run = porter(
        "rewrite",
        ".",
        "-t",
        "xla",
        "--no-cache",
        "--allow-no-vcs",
        *extra,
        "--report",
        "ds_config.json",
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 2, run.stderr
    assert b"a file this run checks" in run.stderr
    assert ((tmp_path / "ds_config.json").read_bytes(), (tmp_path / "m.py").read_bytes()) == (DS_CONFIG, CUDA)


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("lint", ["--write-baseline", ".porter-baseline.json"]),
        ("lint", ["--output-format", "json", "-o", "lint.json"]),
        ("lint", ["--output-format", "json-lines", "-o", "lint.json"]),
        ("lint", ["--output-format", "gitlab", "-o", "lint.json"]),
        ("lint", ["--report", "r.json"]),
        ("rewrite", ["--diff", "--report", "r.json"]),
    ],
)
def test_porter_s_own_json_output_in_the_tree_is_replaced_on_the_next_run(tmp_path, command, option):
    # the last run's output, in the tree, is read by the next run as a JSON config: the refresh of
    # a baseline (`docs/ci.md`'s `.porter-baseline.json`) or of `-o lint.json` was refused, exit 2
    (tmp_path / "m.py").write_bytes(CUDA)
    argv = [command, ".", "-t", "xla", "--no-cache", *option]
    first = porter(*argv, cwd=tmp_path, timeout=300)
    written = (tmp_path / option[-1]).read_bytes()
    (tmp_path / "m.py").write_bytes(CUDA + b"y = torch.zeros(2).cuda()\n")  # (so that the output changes)
    second = porter(*argv, cwd=tmp_path, timeout=300)
    assert b"a file this run checks" not in second.stderr, second.stderr
    assert (first.returncode, second.returncode) in {(0, 0), (1, 1)}, (first.stderr, second.stderr)
    assert (tmp_path / option[-1]).read_bytes() != written


def test_porter_s_own_json_report_is_no_config_of_the_next_run(tmp_path):
    option = ["--report", "r.json"]
    # the last run's report in the tree was read as a JSON config: "r.json:34:7: CFG005
    # `kept_on_cuda` is a CUDA setting" four times, exit 1, on a tree with nothing left to port
    (tmp_path / "n.py").write_bytes(CUDA)
    porter("lint", ".", "-t", "xla", "--no-cache", *option, cwd=tmp_path, timeout=300)
    assert (tmp_path / option[-1]).is_file()
    (tmp_path / "n.py").write_bytes(b"import torch\nx = torch.randn(3)\n")
    # (a real config beside it is still read)
    (tmp_path / "ds_config.json").write_bytes(b'{"device": "cuda"}\n')
    run = porter("lint", ".", "-t", "xla", "--no-cache", "--output-format", "concise", cwd=tmp_path, timeout=300)
    assert option[-1].encode() + b":" not in run.stdout, run.stdout
    assert b"ds_config.json:" in run.stdout, run.stdout
