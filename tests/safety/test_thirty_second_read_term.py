"""The thirty-second read of terminal and report output (term, on 138fe441): each test failed there."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import time

import pytest

from tests.safety.conftest import CUDA, REPO, porter


_BASELINE = b'{"version": 1, "tool": "porter", "target": "xla", "portable": false, "findings": []}\n'


@pytest.mark.parametrize(
    "named",
    [
        ["--output-format", "json", "-o", "x.json", "--report", "x.json"],  # the report lost under -o
        ["--baseline", "b.json", "-o", "b.json"],  # the baseline replaced by the findings, exit 0
        ["--baseline", "b.json", "--report", "./b.json"],  # the baseline replaced by the report
        ["--config", "porter.toml", "-o", "porter.toml"],  # the config replaced by the findings
    ],
)
def test_two_options_naming_one_file_are_refused_before_the_run(tmp_path, named):
    (tmp_path / "m.py").write_bytes(CUDA)
    kept = {"b.json": _BASELINE, "porter.toml": b'target = "xla"\n'}
    for name, text in kept.items():
        (tmp_path / name).write_bytes(text)
    run = porter("lint", "m.py", "-t", "xla", *named, cwd=tmp_path, timeout=300)
    assert (run.returncode, (tmp_path / "x.json").exists()) == (2, False), run.stderr
    assert b"name the same file" in run.stderr, run.stderr
    assert {name: (tmp_path / name).read_bytes() for name in kept} == kept


def test_write_baseline_with_an_output_file_is_refused_not_left_unwritten(tmp_path):
    # `--write-baseline b.json -o lint.json` wrote the baseline and exited 0 with no lint.json,
    # unsaid (the CI step after it uploads an old file or none)
    (tmp_path / "m.py").write_bytes(CUDA)
    run = porter(
        "lint", "m.py", "-t", "xla", "--write-baseline", "b.json", "-o", "lint.json", cwd=tmp_path, timeout=300
    )
    assert (run.returncode, (tmp_path / "b.json").exists()) == (2, False), run.stderr
    assert b"--write-baseline and --output-file do not go together" in run.stderr, run.stderr


_GATE = """
import os, time
import porter.cli.lint as lint
real = lint.render
def gated(*args, **kwargs):
    open({marker!r}, "w").close()
    while not os.path.exists({gate!r}):
        time.sleep(0.05)
    return real(*args, **kwargs)
lint.render = gated
"""


def _wait_until_full_or_ended(run: subprocess.Popen[bytes], read: int) -> None:
    """Until porter has ended, or has written to its stdout pipe and sleeps (`S` in /proc: waiting for room, nothing
    else it does after the gate sleeps): the pipe is then full to porter. (A second's sleep stood here: where porter had
    not written by then, the test's read emptied the pipe as porter filled it, and a porter that drops what a full pipe
    will not take could pass.)"""
    while run.poll() is None:
        unread = struct.unpack("i", fcntl.ioctl(read, termios.FIONREAD, b"\0" * 4))[0]
        with open(f"/proc/{run.pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[0]
        if unread and state == b"S":
            return
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="a pipe's size is set on Linux")
def test_stdout_a_pipe_made_non_blocking_mid_run_loses_no_byte(tmp_path):
    # a process sharing porter's stdout pipe sets O_NONBLOCK after porter started (a blocking pipe
    # then): CPython's stream dropped what the full pipe would not take, exit 1, unsaid
    (tmp_path / "m.py").write_bytes(b"import torch\n" + b"x = torch.randn(3).cuda()\n" * 40)
    hook, marker, gate = tmp_path / "hook", tmp_path / "in", tmp_path / "gate"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_GATE.format(marker=str(marker), gate=str(gate)))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "NO_COLOR": "1", "XDG_CACHE_HOME": str(hook)}
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    argv = [sys.executable, "-m", "porter", "lint", "m.py", "-t", "xla"]  # full: 12 kB
    run = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=write, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 240
        while not marker.exists() and run.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        os.set_blocking(write, False)  # the open file is shared: porter's stdout is non-blocking now
    finally:
        gate.touch()
        os.close(write)
    _wait_until_full_or_ended(run, read)
    with os.fdopen(read, "rb") as got:
        out = got.read()
    err = run.stderr.read() if run.stderr else b""
    assert (run.wait(timeout=300), out.count(b"DEV001")) == (1, 80), err


def test_a_report_named_as_a_file_the_out_dir_copy_writes_is_refused(tmp_path):
    # `rewrite src --out-dir out --report out/ds_config.json`: the copy of the tree's DeepSpeed
    # config was written, then the report over it, exit 0: the ported tree had lost its config
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_bytes(CUDA)
    (src / "ds_config.json").write_bytes(b'{\n  "train_batch_size": 8\n}\n')
    run = porter(
        "rewrite", "src", "-t", "xla", "--out-dir", "out", "--report", "out/ds_config.json", cwd=tmp_path, timeout=300
    )
    assert (run.returncode, (tmp_path / "out").exists()) == (2, False), run.stderr
    assert b"is where --out-dir copies" in run.stderr, run.stderr
    kept = porter(
        "rewrite", "src", "-t", "xla", "--out-dir", "out", "--report", "out/r.json", cwd=tmp_path, timeout=300
    )
    assert (kept.returncode, sorted(p.name for p in (tmp_path / "out").iterdir())) == (
        0,
        ["ds_config.json", "m.py", "r.json"],
    ), kept.stderr
