"""A result the run decided, not the file (the per-file time limit, a worker that died), is
never cached: the next run, with a longer limit, ports the file."""

from __future__ import annotations

from pathlib import Path

from porter.config.settings import Settings
from porter.core.findings import FileStatus
from porter.pipeline.runner import iter_results

# ~1.5 s to port here (the chain's cost grows with its square), far more than the first limit
SLOW = b"import torch\nx = torch.zeros(1)" + b".cuda()" * 200 + b"\n"


def _result(tmp_path: Path, limit: float):
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "chain.py").write_bytes(SLOW)
    results = list(
        iter_results(
            [tmp_path / "src"],
            Settings(target="xla", want_source=False),
            jobs=1,
            cache=True,
            cache_dir=tmp_path / "cache",
            file_timeout=limit,
        )
    )
    [(_, result)] = results
    return result


def test_a_timed_out_file_is_ported_by_the_next_run(tmp_path):
    first = _result(tmp_path, 0.05)
    assert first.status is FileStatus.ERROR and "longer than 0.05 s" in first.reason
    second = _result(tmp_path, 600)
    assert second.status is FileStatus.CHANGED, second.reason
    assert len(second.findings) == 200
    third = _result(tmp_path, 600)  # a result of the file itself is cached as before
    assert third.status is FileStatus.CHANGED and len(third.findings) == 200
