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
from porter.pipeline import parallel, runner
from porter.pipeline.runner import OVERLAP_MIN_FILES, run
from tests.flow.test_project_flow import MAIN, TRAINER, write
from tests.test_guards_cross_file import API, KERNELS

_real_index = runner.index_part


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
        monkeypatch.setattr(runner, "index_part", late_index)
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


# a folder where a file per project lets that project's part of the index go: made when the
# run first asks for the part
PARTS_GO = "OVERLAP_TEST_PARTS_GO"
PROJECTS = ("alpha", "beta")


def _project_of(candidates) -> str:
    return next(p for p in PROJECTS if f"/{p}/" in candidates[0].path.as_posix())


def late_part(candidates, *args):
    """One part of the project index, worked out only once the run asks for it, so that no
    part is known before every file has been read (module level, as `late_index`)."""
    go = Path(os.environ[PARTS_GO]) / _project_of(candidates)
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _real_index(candidates, *args)


def _projects(root: Path) -> None:
    """A folder of two projects, each with files the index has facts for."""
    for name in PROJECTS:
        _project(root / name)
        (root / name / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n")


@pytest.mark.parametrize("guess_all", [False, True], ids=["wanted-files-wait", "every-file-guessed"])
def test_a_project_s_files_go_to_the_workers_once_its_own_part_of_the_index_is_known(tmp_path, monkeypatch, guess_all):
    """The index of a folder of projects is worked out one part per project, all at once in the
    workers; a project's files that wait for the index go to the workers once its part is
    known, while a later project's part is still being worked out (one index for the whole
    run held every waiting file until the last project was indexed, and one worker worked it
    out alone while the others ran out of files)."""
    _projects(tmp_path / "f")
    waited = _results(tmp_path / "f", "xla", jobs=1)
    parts: list[list[list[str]]] = []  # each time the index is split: the projects of each part
    real_parts = runner.index_parts

    def spy_parts(*args):
        found = real_parts(*args)
        parts.append([sorted({c.path.relative_to(tmp_path / "f").parts[0] for c in group}) for group, _ in found])
        return found

    submitted: list[str] = []  # the files handed to the workers, in order
    real_submit = parallel.Pool._submit

    def spy_submit(self, batch):
        submitted.extend(job.name for _, job, _ in batch if job is not None)
        return real_submit(self, batch)

    go = tmp_path / "parts-may-go"
    go.mkdir()
    asked: dict[str, list[str]] = {}  # project -> the files handed on before its part was asked for
    real_index_of = runner._index_of

    def release(index, candidates, *rest):
        project = _project_of(candidates)
        assert not index.done(), "a part was known before the run asked for it"
        asked[project] = list(submitted)
        (go / project).touch()
        return real_index_of(index, candidates, *rest)

    monkeypatch.setattr(runner, "index_parts", spy_parts)
    monkeypatch.setattr(parallel.Pool, "_submit", spy_submit)
    monkeypatch.setattr(runner, "_index_of", release)
    monkeypatch.setattr(runner, "index_part", late_part)
    monkeypatch.setenv(PARTS_GO, str(go))
    if guess_all:  # every file is ported at once, and those with facts again once they are known
        monkeypatch.setattr(runner, "_may_have_facts", lambda source: False)
    overlapped = _results(tmp_path / "f", "xla", jobs=2)
    assert overlapped == waited
    assert parts[0] == [["alpha"], ["beta"]], "one part of the index per project"
    assert list(asked) == ["alpha", "beta"]
    # every parse of an alpha file went to the workers before beta's part was asked for
    alpha = [name for name in submitted if name.startswith("f/alpha/")]
    assert sorted(name for name in asked["beta"] if name.startswith("f/alpha/")) == sorted(alpha)
    assert alpha.count("f/alpha/a/trainer.py") == (2 if guess_all else 1)  # guessed, then with its facts
    # and beta's files that wait for the index had not gone yet
    assert asked["beta"].count("f/beta/a/trainer.py") == (1 if guess_all else 0)
    by_path = {path: findings for path, _, findings, _ in overlapped}
    for project in PROJECTS:
        assert any(code == "DEV008" for code, *_ in by_path[f"f/{project}/a/trainer.py"])
        assert any(code == "KERN005" for code, *_ in by_path[f"f/{project}/pkg/ep/api.py"])


def test_a_flush_hands_on_the_batch_gathered_so_far():
    job = parallel.Job(b"x = 1\n", "m.py", Settings(target="xla"))
    items = [("a", job, 0), ("b", None, -1), parallel.FLUSH, parallel.FLUSH, ("c", job, 1)]
    assert [[tag for tag, _, _ in batch] for batch in parallel._batches(items)] == [["a", "b"], ["c"]]


def test_a_cold_run_with_a_cache_works_the_index_s_parts_out_in_the_workers_at_once(tmp_path, monkeypatch):
    """With a cache, the files wait for the whole index (its answers are in their keys), so
    on a cold run the index's analyses (device values and CUDA-only facts, per project) are
    worked out at once in the workers; a warm run starts no worker, and after an edit the
    project's index starts from its last state here, as before. Findings are a cold run's."""
    _projects(tmp_path / "f")
    waited = _results(tmp_path / "f", "xla", jobs=1)
    called: list[str] = []  # what the workers were asked for beside the files
    real_call = parallel.Pool.call

    def spy_call(self, fn, *args):
        called.append(fn.__name__)
        return real_call(self, fn, *args)

    monkeypatch.setattr(parallel.Pool, "call", spy_call)
    cache = tmp_path / "cache"

    def cached() -> list:
        results, _ = run([tmp_path / "f"], Settings(target="xla"), jobs=2, cache=True, cache_dir=cache)
        return [
            (r.path, r.status.value, [(f.code, f.start.line, f.message, f.applied) for f in r.findings], r.new_source)
            for r in results
        ]

    assert cached() == waited
    assert sorted(called) == ["_answered", "_answered", "_cuda_only", "_cuda_only"]
    called.clear()
    assert cached() == waited  # warm
    assert called == []
    # an edit in alpha, to an import line and a body: both its analyses are worked out again,
    # its device values from their last state, in this process
    trainer = tmp_path / "f" / "alpha" / "a" / "trainer.py"
    trainer.write_text("import os\n" + trainer.read_text() + "\n\ndef h(x):\n    return x.to(0)\n")
    answered: list[object] = []  # the state each index of device values started from
    real_answered = runner._answered

    def spy_answered(wanted, previous):
        answered.append(previous)
        return real_answered(wanted, previous)

    edited = _results(tmp_path / "f", "xla", jobs=1)
    monkeypatch.setattr(runner, "_answered", spy_answered)
    assert cached() == edited
    assert called == []
    assert len(answered) == 1 and answered[0] is not None
