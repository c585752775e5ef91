"""The thirty-sixth read's helper on real packages' leftovers (rpleft): the pool's per-file limit under
load. A batch broken because an earlier batch's pool was stopped (a file past its limit) stopped, when
it was looked at, the pool then running newer batches: their files were killed mid-file and retried
alone, and so were the next ones, batch after batch, each charged until its batch's turn (attn-gym's
files reported "took longer than 60 s" in a loaded lint although each takes a second alone; 53-pkleft).
Counted, not timed: which files were retried alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.core.findings import FileResult, FileStatus
from porter.pipeline import parallel
from porter.pipeline.parallel import Job, Pool


def _port(log: Path):
    """A stand-in for the engine (the workers are forked: they run it): files named slow* never end,
    the others take a moment."""

    def port_one(job: Job) -> FileResult:
        with open(log, "a") as fh:
            fh.write(job.name + "\n")
        if job.name.startswith("slow"):
            while True:
                time.sleep(0.05)
        time.sleep(0.3)
        return FileResult(path=job.name, status=FileStatus.UNCHANGED)

    return port_one


def _retried_alone(monkeypatch) -> list[str]:
    alone: list[str] = []
    isolated = Pool._isolated

    def spy(self, job, slot):
        alone.append(job.name)
        return isolated(self, job, slot)

    monkeypatch.setattr(Pool, "_isolated", spy)
    return alone


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the stand-in reaches the workers by fork")
def test_a_batch_broken_by_an_earlier_stop_leaves_the_newer_batches_running(tmp_path, monkeypatch):
    """One worker, one file a batch, four batches in flight: the slow file's pool is stopped with the
    three batches queued behind it in it; those three are retried alone, and the batches handed to the
    new pool meanwhile run there to their end (on c5b375fb every later file was killed and retried
    alone)."""
    monkeypatch.setattr(parallel, "port_one", _port(tmp_path / "starts.log"))
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    alone = _retried_alone(monkeypatch)
    settings = Settings(target="xla")
    names = ["slow.py", *(f"f{i}.py" for i in range(1, 9))]
    results = dict(Pool(1, file_timeout=3.0).map([(n, Job(b"x", n, settings)) for n in names]))
    assert results["slow.py"].status is FileStatus.ERROR and "longer than 3 s" in results["slow.py"].reason
    assert {n: results[n].status for n in names[1:]} == dict.fromkeys(names[1:], FileStatus.UNCHANGED)
    assert alone == ["f1.py", "f2.py", "f3.py"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the stand-in reaches the workers by fork")
def test_a_worker_that_dies_still_has_its_batch_retried_alone(tmp_path, monkeypatch):
    """The control: a batch whose own pool broke (a worker died) still stops that pool and has each of
    its files ported alone, the crash said at the file that crashes alone."""

    def port_one(job: Job) -> FileResult:
        if job.name == "crash.py":
            os._exit(3)
        return FileResult(path=job.name, status=FileStatus.UNCHANGED)

    monkeypatch.setattr(parallel, "port_one", port_one)
    alone = _retried_alone(monkeypatch)
    settings = Settings(target="xla")
    names = ["a.py", "crash.py", "b.py"]
    results = dict(Pool(1, file_timeout=30.0).map([(n, Job(b"x", n, settings)) for n in names]))
    assert results["crash.py"].status is FileStatus.ERROR and "crashed" in results["crash.py"].reason
    assert results["a.py"].status is FileStatus.UNCHANGED and results["b.py"].status is FileStatus.UNCHANGED
    assert sorted(alone) == ["a.py", "b.py", "crash.py"]
