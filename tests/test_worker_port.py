"""How a worker ports one file (porter.pipeline.parallel.port_one).

With the cyclic collector paused: what a port builds lives until the file is done, so a
collection during it walked live objects only. The collector is back once the file is done, a
failed port included, and a caller that had it off finds it off.

Without the prefilter's second scan: a file the run's parent admitted (`Job.admitted`) is not
scanned again; any other is, and both come out as before."""

from __future__ import annotations

import gc

import porter.codemods.apply as apply
import porter.pipeline.port as port
from porter.config.settings import Settings
from porter.core.findings import FileStatus
from porter.pipeline import parallel
from porter.pipeline.parallel import Job

from pathlib import Path


def _job() -> Job:
    return Job(b"import torch\nx = torch.ones(2).cuda()\n", "f.py", Settings(target="xla", want_source=False))


def test_a_file_is_ported_with_the_collector_paused(monkeypatch):
    seen: list[bool] = []
    real = port.port_source

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(port, "port_source", spy)
    assert gc.isenabled()
    result = parallel.port_one(_job())
    assert result.findings  # ported as ever
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_back_after_a_failed_port(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(port, "port_source", broken)
    result = parallel.port_one(_job())
    assert result.status is FileStatus.ERROR and "a bug" in (result.reason or "")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        parallel.port_one(_job())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_same_results_with_the_collector_on(monkeypatch):
    """The pause changes when cycles are freed, never a result (the families key nodes by id
    only while they hold them: porter.codemods.composite)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "fixtures"
    jobs = [Job(p.read_bytes(), str(p), Settings(target="xla", want_source=False)) for p in sorted(root.rglob("*.py"))]
    assert len(jobs) > 20
    paused = [parallel.port_one(job) for job in jobs]
    monkeypatch.setattr(parallel.gc, "disable", lambda: None)
    ported = [parallel.port_one(job) for job in jobs]
    for a, b in zip(paused, ported):
        assert repr((a.status, a.findings, a.new_source)) == repr((b.status, b.findings, b.new_source))


def _counting_admits(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = apply.admits

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(apply, "admits", spy)
    return calls


def test_a_file_the_parent_admitted_is_not_scanned_again(monkeypatch):
    calls = _counting_admits(monkeypatch)
    job = _job()
    job.admitted = True
    admitted = parallel.port_one(job)
    assert calls == []
    asked = parallel.port_one(_job())  # (a job made elsewhere: `porter.lint`'s re-lint of fixes)
    assert calls == [1]
    assert repr((admitted.status, admitted.findings)) == repr((asked.status, asked.findings))


def test_the_runs_jobs_are_the_admitted_files(tmp_path, monkeypatch):
    """The runner marks a job admitted only after `admits_file` let it through: a file the
    prefilter turns away is still skipped, and no worker scans a file again (the serial run
    and the one that works the project index out beside the files)."""
    from porter.pipeline.runner import run

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "moves.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    (tree / "plain.py").write_text("def f(x):\n    return x + 1\n")
    for i in range(70):  # past the pool's and the overlapped index's thresholds
        (tree / f"m{i}.py").write_text(f"import torch\nt{i} = torch.zeros(1).to('cuda')\n")
    log = tmp_path / "scans"
    real = apply.admits

    def spy(*args, **kwargs):  # (in the workers: they write down each scan)
        with open(log, "a") as fh:
            fh.write("scan\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(apply, "admits", spy)
    for jobs in (1, 2):
        results, _ = run([tree], Settings(target="xla", want_source=False), jobs=jobs, cache=False)
        by_name = {Path(r.path).name: r for r in results}
        assert by_name["plain.py"].status is FileStatus.SKIPPED
        assert by_name["moves.py"].findings and all(by_name[f"m{i}.py"].findings for i in range(70))
        assert not log.exists(), jobs
