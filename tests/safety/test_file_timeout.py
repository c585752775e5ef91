"""Contract 3 (time): `--file-timeout` bounds a file over all its attempts, not each attempt;
a run in which a file could not be ported says so in its exit status; a limit that is not a
finite number of seconds is a usage error."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline import parallel
from porter.core.findings import FileResult, FileStatus
from porter.pipeline.parallel import Job, Pool
from tests.safety.conftest import CUDA, committed_repo, porter
from tests.safety.test_isolation import STALL


def _slow_port(log: Path):
    """A stand-in for the engine that logs each start and never ends for files named slow*
    (the workers are forked: they run it)."""

    def port_one(job: Job) -> FileResult:
        with open(log, "a") as fh:
            fh.write(job.name + "\n")
        if job.name.startswith("slow"):
            while True:
                time.sleep(0.05)
        return FileResult(path=job.name, status=FileStatus.UNCHANGED)

    return port_one


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the stand-in reaches the workers by fork")
def test_a_file_past_its_limit_is_not_tried_again(tmp_path, monkeypatch):
    """Each file has one budget: the one that ran out of time in its batch is reported, not
    started again with a fresh limit; the files it shared a batch with are ported alone."""
    log = tmp_path / "starts.log"
    monkeypatch.setattr(parallel, "port_one", _slow_port(log))
    settings = Settings(target="xla")
    jobs = [(name, Job(b"x", name, settings)) for name in ("slow1.py", "good1.py", "slow2.py", "good2.py")]
    results = dict(Pool(1, file_timeout=0.5).map(jobs))
    assert {n: r.status for n, r in results.items()} == {
        "slow1.py": FileStatus.ERROR,
        "good1.py": FileStatus.UNCHANGED,
        "slow2.py": FileStatus.ERROR,
        "good2.py": FileStatus.UNCHANGED,
    }
    assert "longer than 0.5 s" in results["slow1.py"].reason
    starts = log.read_text().splitlines()
    assert starts.count("slow1.py") == 1 and starts.count("slow2.py") == 1, starts


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the stand-in reaches the workers by fork")
def test_a_file_cut_short_for_another_keeps_its_time(tmp_path, monkeypatch):
    """Two workers: when one file runs out of time every worker is killed; the file the other
    worker was porting is not charged for that and is ported on its own."""
    log = tmp_path / "starts.log"

    def port_one(job: Job) -> FileResult:
        with open(log, "a") as fh:
            fh.write(job.name + "\n")
        deadline = time.monotonic() + (100 if job.name.startswith("slow") else 0.6)
        while time.monotonic() < deadline:
            time.sleep(0.02)
        return FileResult(path=job.name, status=FileStatus.UNCHANGED)

    monkeypatch.setattr(parallel, "port_one", port_one)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)  # one file a batch: both workers busy at once
    settings = Settings(target="xla")
    jobs = [(name, Job(b"x", name, settings)) for name in ("slow.py", "steady.py")]
    results = dict(Pool(2, file_timeout=1.0).map(jobs))
    assert results["slow.py"].status is FileStatus.ERROR
    assert results["steady.py"].status is FileStatus.UNCHANGED, results["steady.py"].reason


def test_a_run_whose_only_file_failed_exits_2(tmp_path):
    """A CI step that checked nothing must not pass: rewrite exits 2 when a file could not be
    ported (as `ruff format` does), after porting and writing the others."""
    repo = committed_repo(tmp_path / "repo", {"chain.py": STALL})
    out = porter("rewrite", ".", "--target", "xla", "--jobs", "1", "--file-timeout", "1", cwd=repo)
    assert out.returncode == 2, out.stderr.decode()
    assert "chain.py" in out.stderr.decode() and "longer than 1 s" in out.stderr.decode()
    diff = porter("rewrite", ".", "--target", "xla", "--diff", "--jobs", "1", "--file-timeout", "1", cwd=repo)
    assert diff.returncode == 2, diff.stderr.decode()
    (repo / "broken.py").write_bytes(b"import torch\nx = torch.zeros(1).cuda(\n")  # does not parse
    (repo / "good.py").write_bytes(CUDA)
    both = porter("rewrite", "broken.py", "good.py", "--target", "xla", "--allow-dirty", cwd=repo)
    assert both.returncode == 2, both.stderr.decode()
    assert b".cuda()" not in (repo / "good.py").read_bytes()  # the others are still written


@pytest.mark.parametrize("value", ["inf", "1e20", "nan", "-1", "1000000"])
def test_a_limit_that_is_not_a_finite_number_of_seconds_is_a_usage_error(tmp_path, value):
    (tmp_path / "m.py").write_bytes(CUDA)
    for command in ("rewrite", "lint"):
        out = porter(
            command,
            ".",
            "--target",
            "xla",
            "--file-timeout",
            value,
            "--diff" if command == "rewrite" else "--exit-zero",
            cwd=tmp_path,
        )
        err = out.stderr.decode()
        assert out.returncode == 2, (command, value, err)
        assert "Traceback" not in err and "OverflowError" not in err and "--file-timeout" in err, err
