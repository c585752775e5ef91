"""The thirty-first read of streams, timing and reports, second wave (term2, on 1bdd59f7): each test
failed there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.safety.conftest import CUDA, REPO

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
