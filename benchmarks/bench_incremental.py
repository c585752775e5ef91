"""An edit followed by a lint, and a folder of projects: what the project index re-reads.

    python benchmarks/bench_incremental.py [--library transformers-4.26.1] [--target xla]
    python benchmarks/bench_incremental.py --projects accelerate-1.1.1 peft-0.13.2 kornia-0.7.4 timm-1.0.11 [--lint]

The first form copies one distribution of `bench_lint_real.py`'s corpus (downloaded and
checked there, cached under `$PORTER_BENCH_CACHE`) into a temporary folder and lints it with
an empty temporary cache: cold, warm (every file unchanged), then after an edit to one file
the project index reads (`ProjectIndex.wants`: a device value may flow through it), and
after an edit to one it does not read. Each line gives wall and CPU seconds (this process and
its workers), the files the project index parsed (`ast`), the files whose answers it worked
out (not kept from the last run: `index.answers`), and the files linted again (ported in a
worker: neither the stat index nor the cache had their result); the findings after each
edit are checked against a cold run's (exit 1 if they differ).

The second form checks that a folder holding several projects costs the sum of its projects:
the project index over the folder against the sum of the indexes over each project
(`--lint`: whole cold lints, slower), and that each project's answers in the folder are
the ones it has alone. Runs in-process with one worker (`--jobs 1`): run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_lint_real import corpus  # noqa: E402 - the corpus, downloaded and checked there

from porter.analysis.index import ProjectIndex  # noqa: E402
from porter.config.settings import Settings  # noqa: E402
from porter.pipeline import runner  # noqa: E402
from porter.pipeline.discover import discover  # noqa: E402


class Counts:
    """What a run did, counted in this process: files parsed by the project index, files handed
    to a worker to lint."""

    def __init__(self) -> None:
        self.indexed = 0
        self.answered = 0
        self.linted = 0

    def install(self) -> None:
        module = ProjectIndex.module

        def counted_module(index: ProjectIndex, path: str):  # type: ignore[no-untyped-def]
            if path not in index._parsed and path in index._sources:
                self.indexed += 1
            return module(index, path)

        own = ProjectIndex.own

        def counted_own(index: ProjectIndex, path: str):  # type: ignore[no-untyped-def]
            self.answered += 1
            return own(index, path)

        finish = runner._Serial.finish

        def counted_finish(serial, tag, result):  # type: ignore[no-untyped-def]
            if tag[2] is not None:  # neither the stat index, the cache nor the prefilter had it
                self.linted += 1
            return finish(serial, tag, result)

        ProjectIndex.module = counted_module  # type: ignore[method-assign]
        ProjectIndex.own = counted_own  # type: ignore[method-assign]
        runner._Serial.finish = counted_finish  # type: ignore[method-assign]


COUNTS = Counts()


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _measured(label: str, run: Callable[[], object]) -> object:
    COUNTS.indexed = COUNTS.answered = COUNTS.linted = 0
    wall, cpu = time.perf_counter(), _cpu()
    out = run()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    print(
        f"{label:<34} {wall:7.2f} s wall {cpu:7.2f} s CPU  indexed {COUNTS.indexed:5d}"
        f"  answered {COUNTS.answered:5d}  linted {COUNTS.linted:5d}"
    )
    return out


def _findings(paths: list[Path], target: str, cache: Path | None, jobs: int) -> dict[str, list[tuple]]:
    results, _ = runner.run(
        paths, Settings(target=target), jobs=jobs, cache=cache is not None, cache_dir=cache, file_timeout=0
    )
    return {
        r.path: sorted((f.code, f.start.line, f.start.column, f.message, f.replacement or "") for f in r.findings)
        for r in results
    }


def _pick(root: Path, wanted: bool) -> Path:
    """A Python file of the project the project index reads (or does not), the largest such."""
    files = [p for p in root.rglob("*.py") if p.is_file() and ProjectIndex.wants(p.read_bytes()) == wanted]
    return max(files, key=lambda p: (p.stat().st_size, str(p)))


def edits(a: argparse.Namespace) -> int:
    source = corpus() / a.library
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(source, work / a.library)
        cache = Path(tmp) / "cache"
        os.chdir(work)
        paths = [Path(a.library)]
        files = sum(1 for _ in Path(a.library).rglob("*.py"))
        print(f"{a.library}: {files} Python files, target {a.target}, --jobs {a.jobs}")
        _measured("cold (empty cache)", lambda: _findings(paths, a.target, cache, a.jobs))
        _measured("warm", lambda: _findings(paths, a.target, cache, a.jobs))
        failed = 0
        for wanted in (True, False):
            path = _pick(Path(a.library), wanted)
            with path.open("a") as fh:  # a new function at the end: no line above it moves
                body = "x.to(0)" if wanted else "x + 1"  # (one the index still does not read)
                fh.write(f"\n\ndef _porter_bench_edit(x):\n    return {body}\n")
            what = "an indexed" if wanted else "a non-indexed"
            warm = _measured(f"edit {what} file, lint", lambda: _findings(paths, a.target, cache, a.jobs))
            cold = _findings(paths, a.target, None, a.jobs)
            same = warm == cold
            failed += not same
            print(
                f"  edited {path} ({path.stat().st_size} bytes): findings {'identical to' if same else 'DIFFER from'} a cold run's"
            )
        return 1 if failed else 0


def _index(paths: list[Path], target: str) -> dict:
    cuda: list[str] = []
    cands = list(discover(paths, (), cuda_sources=cuda))
    return runner.project_index(cands, None, None, target, cuda, paths)


def folder(a: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "all"
        for name in a.projects:
            shutil.copytree(corpus() / name, work / name)
        os.chdir(work)
        alone: dict = {}
        cpu_each = wall_each = 0.0
        for name in a.projects:
            wall, cpu = time.perf_counter(), _cpu()
            alone.update(_index([Path(name)], a.target))
            wall_each += time.perf_counter() - wall
            cpu_each += _cpu() - cpu
        wall, cpu = time.perf_counter(), _cpu()
        together = _index([Path(".")], a.target)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        print(f"project index, {len(a.projects)} projects: sum of each {wall_each:.2f} s wall {cpu_each:.2f} s CPU")
        print(
            f"project index, one run over the folder: {wall:.2f} s wall {cpu:.2f} s CPU ({cpu / cpu_each:.2f}x the sum)"
        )
        print(f"  each project's answers as alone: {together == alone}")
        if a.lint:
            cpu_each = 0.0
            each: dict = {}
            for name in a.projects:
                cpu = _cpu()
                each.update(_findings([Path(name)], a.target, None, a.jobs))
                cpu_each += _cpu() - cpu
            cpu = _cpu()
            all_ = _findings([Path(".")], a.target, None, a.jobs)
            cpu = _cpu() - cpu
            print(f"cold lint: sum of each {cpu_each:.2f} s CPU, the folder {cpu:.2f} s CPU ({cpu / cpu_each:.2f}x)")
            print(f"  findings as alone: {all_ == each}")
        return 0 if together == alone else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default="transformers-4.26.1", help="a folder of the corpus (bench_lint_real.py)")
    ap.add_argument("--projects", nargs="+", help="corpus folders to put in one folder (the linearity check)")
    ap.add_argument("--lint", action="store_true", help="with --projects: whole cold lints too")
    ap.add_argument("--target", default="xla")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    COUNTS.install()
    raise SystemExit(folder(a) if a.projects else edits(a))


if __name__ == "__main__":
    main()
