"""A run without a cache works the project index out in a worker while the other workers
port the first files as if no cross-file fact applied (porter.pipeline.runner._overlapped).
Files the index then has facts for are ported again with them: the results must be exactly
those of a run that waits for the index first, in the same order."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline import runner
from porter.pipeline.runner import OVERLAP_MIN_FILES, run
from tests.flow.test_project_flow import MAIN, TRAINER, write
from tests.test_guards_cross_file import API, KERNELS

_real_index = runner.project_index


# a file that lets the late index go: made when the run first asks for the index's answer
GO = "OVERLAP_TEST_INDEX_GO"


def late_index(*args, **kwargs):
    """The project index, late: it is worked out only once every file has been prepared,
    when the run asks for it after its last file (module level: the pool hands it to a
    worker by name; the worker inherits GO from the test)."""
    go = Path(os.environ[GO])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _real_index(*args, **kwargs)


def _project(root: Path) -> None:
    files = {
        # facts from the index: an int device followed into trainer.py (no CUDA token there)
        "a/trainer.py": TRAINER,
        "a/main.py": MAIN.format(device=0),
        # facts from the CUDA-only pass: api.py imports a Triton launcher from kernels.py
        "pkg/__init__.py": "",
        "pkg/ep/__init__.py": "",
        "pkg/ep/kernels.py": KERNELS,
        "pkg/ep/api.py": API,
    }
    for i in range(OVERLAP_MIN_FILES):  # enough files for the overlapped run, with and without CUDA code
        body = (
            f"import torch\n\n\ndef f{i}(x):\n    return x.cuda()\n"
            if i % 3 == 0
            else f"def g{i}(x):\n    return x + {i}\n"
        )
        files[f"z/m{i:03}.py"] = body
    write(root, files)


def _results(
    root: Path, target: str, jobs: int
) -> list[tuple[str, str, list[tuple[str, int, str, bool]], bytes | None]]:
    results, _ = run([root], Settings(target=target), jobs=jobs, cache=False)
    return [
        (r.path, r.status.value, [(f.code, f.start.line, f.message, f.applied) for f in r.findings], r.new_source)
        for r in results
    ]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("guess_all", [False, True], ids=["wanted-files-wait", "every-file-guessed"])
@pytest.mark.parametrize("late", [False, True], ids=["index-as-it-comes", "index-late"])
@pytest.mark.parametrize("target", ["xla", "neuron"])
def test_overlapped_run_gives_the_results_of_a_run_that_waits_for_the_index(
    tmp_path, monkeypatch, target, late, guess_all
):
    _project(tmp_path / "p")
    waited = _results(tmp_path / "p", target, jobs=1)  # one worker: the index first, as before
    taken: list[int] = []
    real = runner._overlapped

    def spy(candidates, *args):
        taken.append(len(candidates))
        return real(candidates, *args)

    monkeypatch.setattr(runner, "_overlapped", spy)
    asked: list[bool] = []  # whether the index was known when the run asked for its answer
    if late:
        go = tmp_path / "index-may-go"
        real_index_of = runner._index_of

        def release(index, candidates, *rest):
            asked.append(index.done())
            go.touch()
            return real_index_of(index, candidates, *rest)

        monkeypatch.setenv(GO, str(go))
        monkeypatch.setattr(runner, "_index_of", release)
        monkeypatch.setattr(runner, "project_index", late_index)
    if guess_all:  # files the index follows values into are guessed too: they are ported twice
        monkeypatch.setattr(runner, "_may_have_facts", lambda source: False)
    overlapped = _results(tmp_path / "p", target, jobs=2)
    assert taken, "the run did not take the overlapped path"
    assert asked == ([False] if late else []), "the late index was known before every file was prepared"
    assert overlapped == waited
    # and the cross-file facts did reach their files
    by_path = {path: findings for path, _, findings, _ in overlapped}
    assert any(code == "DEV008" for code, *_ in by_path["p/a/trainer.py"])
    assert any(code == "KERN005" for code, *_ in by_path["p/pkg/ep/api.py"])
