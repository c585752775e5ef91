"""Porting many files on every core: a bounded process pool whose results stream back in order.

The parent reads, hashes and prefilters (cheap, and it needs the bytes for the cache); only
files worth parsing travel to the workers, in small batches, with the frozen `Settings`. A
worker imports the engine itself and sends back plain `FileResult`s (no codemod object ever
crosses a process boundary). At most `window` batches are in flight, so memory stays flat
however large the tree; results come back in submission order.

A worker that dies (a crash in a native parser) breaks only its batch: the pool is remade
and the batch's files are retried one at a time, so the file that kills a worker ends as an
error result naming it and every other file is ported. Workers ignore SIGINT: Ctrl-C stops
the parent, which cancels what is queued.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from porter.findings import FileResult, FileStatus
from porter.settings import Settings

# below this many files to parse, a pool costs more than it saves
MIN_PARALLEL_FILES = 8
BATCH_BYTES = 256 * 1024
BATCH_FILES = 16


@dataclass
class Job:
    """One file to port: its bytes, displayed name, and the settings that apply to it."""

    source: bytes
    name: str
    settings: Settings


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def port_one(job: Job) -> FileResult:
    from porter.engine import port_source

    try:
        return port_source(job.source, job.name, job.settings)
    except Exception as exc:  # noqa: BLE001 - a bug must not stop the run; it is reported
        return FileResult(
            path=job.name,
            status=FileStatus.ERROR,
            original_source=job.source,
            reason=f"internal error in porter: {type(exc).__name__}: {exc}; left unchanged",
        )


def _port_batch(batch: list[Job]) -> list[FileResult]:
    out = []
    for job in batch:
        result = port_one(job)
        result.original_source = None  # the parent has the bytes: do not send them back
        out.append(result)
    return out


def _init_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import porter.engine  # noqa: F401 - import once per worker, not per batch


def _context():
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")  # the parent's imports come for free
    return multiprocessing.get_context("spawn")


def _batches(jobs: Iterable[tuple[object, Job | None]]) -> Iterator[list[tuple[object, Job | None]]]:
    batch: list[tuple[object, Job | None]] = []
    size = files = 0
    for item in jobs:
        batch.append(item)
        if item[1] is not None:
            size += len(item[1].source)
            files += 1
        if size >= BATCH_BYTES or files >= BATCH_FILES or len(batch) >= 256:
            yield batch
            batch, size, files = [], 0, 0
    if batch:
        yield batch


class Pool:
    """`map` over (tag, Job | None) pairs: yields (tag, FileResult | None) in order."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.workers, mp_context=_context(), initializer=_init_worker)
        return self._executor

    def close(self, cancel: bool = False) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=not cancel, cancel_futures=cancel)
            self._executor = None

    def _submit(self, batch: list[tuple[object, Job | None]]) -> Future | None:
        jobs = [j for _, j in batch if j is not None]
        return self._pool().submit(_port_batch, jobs) if jobs else None

    def _collect(self, batch, future: Future | None) -> list[tuple[object, FileResult | None]]:
        if future is None:
            return [(tag, None) for tag, _ in batch]
        try:
            results = iter(future.result())
        except (BrokenProcessPool, CancelledError):
            self.close(cancel=True)
            results = iter([self._isolated(j) for _, j in batch if j is not None])
        out = []
        for tag, job in batch:
            if job is None:
                out.append((tag, None))
            else:
                result = next(results)
                result.original_source = job.source
                out.append((tag, result))
        return out

    def _isolated(self, job: Job) -> FileResult:
        """Retry one file alone in a fresh pool: a crash now is this file's."""
        try:
            result = self._pool().submit(_port_batch, [job]).result()[0]
        except BrokenProcessPool:
            self.close(cancel=True)
            return FileResult(
                path=job.name,
                status=FileStatus.ERROR,
                reason="porter's parser crashed on this file (a worker process died); left unchanged",
            )
        return result

    def map(self, items: Iterable[tuple[object, Job | None]], window: int | None = None) -> Iterator[tuple[object, FileResult | None]]:
        window = window or 2 * self.workers + 2
        pending: deque = deque()
        try:
            for batch in _batches(items):
                pending.append((batch, self._submit(batch)))
                while len(pending) >= window:
                    yield from self._collect(*pending.popleft())
            while pending:
                yield from self._collect(*pending.popleft())
        except BaseException:
            self.close(cancel=True)
            raise
        self.close()
