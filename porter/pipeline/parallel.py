"""Porting many files on every core: a bounded process pool whose results stream back in order.

The parent reads, hashes and prefilters (cheap, and it needs the bytes for the cache); only
files worth parsing travel to the workers, in small batches, with the frozen `Settings`. A
worker imports the engine itself and sends back plain `FileResult`s (no codemod object ever
crosses a process boundary). At most `window` batches are in flight, so memory stays flat
however large the tree; results come back in submission order.

Every file is parsed in a worker, never in porter's own process (even with `--jobs 1`): a
file that crashes libcst's native parser (thousands of chained calls) or stalls it (a huge
one-line file) costs that file, not the run. A worker that dies breaks only its batch: the
pool is remade and the batch's files are retried one at a time, so the file that kills a
worker ends as an error result naming it and every other file is ported. A batch that runs
past its time limit (`file_timeout` seconds a file) is treated the same way: its workers are
killed and its files retried alone, each under the limit.

Workers ignore SIGINT and never outlive porter: Ctrl-C or SIGTERM stops the parent, which
kills them; if the parent dies without cleaning up (SIGKILL), the kernel kills them
(PR_SET_PDEATHSIG on Linux) or a watcher thread notices the parent is gone.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TypeVar

from porter.pipeline.findings import FileResult, FileStatus
from porter.config.settings import Settings

T = TypeVar("T")  # the caller's tag for each item, handed back with its result
R = TypeVar("R")

# below this many files to parse, a pool costs more than it saves
MIN_PARALLEL_FILES = 8
BATCH_BYTES = 256 * 1024
BATCH_FILES = 16
# seconds one file may take to port before it is reported and left unchanged (0: no limit)
DEFAULT_FILE_TIMEOUT = 60.0
_PR_SET_PDEATHSIG = 1


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
    from porter.pipeline.port import port_source

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


def _die_with_parent(parent: int) -> None:
    """Make sure this worker ends when `parent` does, however the parent ends."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError, ImportError):
        armed = False
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the signal was armed

    if not armed:  # no prctl (macOS, BSD): watch for the parent to go

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="porter-parent-watch", daemon=True).start()


def _ready() -> bool:
    return True


def _init_worker(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    import porter.pipeline.port  # noqa: F401 - import once per worker, not per batch


def _context() -> multiprocessing.context.BaseContext:
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")  # the parent's imports come for free
    return multiprocessing.get_context("spawn")


def _batches(jobs: Iterable[tuple[T, Job | None]]) -> Iterator[list[tuple[T, Job | None]]]:
    batch: list[tuple[T, Job | None]] = []
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

    def __init__(self, workers: int, file_timeout: float | None = None) -> None:
        self.workers = workers
        self.file_timeout = file_timeout if file_timeout and file_timeout > 0 else None
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=_context(), initializer=_init_worker, initargs=(os.getpid(),)
            )
        return self._executor

    def close(self, cancel: bool = False) -> None:
        """Wait for the workers to finish; with `cancel`, kill them now (an interrupt, a
        crash or a file past its time limit) so that none outlives the run."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if not cancel:
            executor.shutdown(wait=True)
            return
        # ProcessPoolExecutor has no public way to stop a running task (3.14 adds
        # kill_workers); its process table is the one handle on them
        workers = list((getattr(executor, "_processes", None) or {}).values())
        manager = getattr(executor, "_executor_manager_thread", None)  # shutdown() forgets it
        for proc in workers:
            try:
                proc.kill()
            except (OSError, ValueError, AttributeError):
                pass
        executor.shutdown(wait=False, cancel_futures=True)
        for proc in workers:
            try:
                proc.join(timeout=5)
            except (OSError, ValueError, AttributeError, AssertionError):
                pass
        # let the executor's manager thread finish closing its wake-up pipe: left running,
        # it races concurrent.futures' exit hook, which then writes to the closed pipe and
        # prints an EBADF traceback as porter exits
        if manager is not None:
            manager.join(timeout=5)
            # and keep the exit hook away from that pipe altogether (Python < 3.14)
            from concurrent.futures import process as cf_process

            getattr(cf_process, "_threads_wakeups", {}).pop(manager, None)

    def call(self, fn: Callable[..., R], *args: object) -> Future[R]:
        """Run `fn(*args)` in a worker beside the files (the project index while the first
        files are ported)."""
        return self._pool().submit(fn, *args)

    def _limit(self, files: int) -> float | None:
        return self.file_timeout * files if self.file_timeout is not None else None

    def _submit(self, batch: list[tuple[T, Job | None]]) -> Future[list[FileResult]] | None:
        jobs = [j for _, j in batch if j is not None]
        return self._pool().submit(_port_batch, jobs) if jobs else None

    def _collect(self, batch: list[tuple[T, Job | None]], future: Future[list[FileResult]] | None) -> list[tuple[T, FileResult | None]]:
        if future is None:
            return [(tag, None) for tag, _ in batch]
        files = sum(1 for _, j in batch if j is not None)
        try:
            results = iter(future.result(timeout=self._limit(files)))
        except (BrokenProcessPool, CancelledError, FutureTimeout):
            self.close(cancel=True)
            results = iter([self._isolated(j) for _, j in batch if j is not None])
        out: list[tuple[T, FileResult | None]] = []
        for tag, job in batch:
            if job is None:
                out.append((tag, None))
            else:
                result = next(results)
                result.original_source = job.source
                out.append((tag, result))
        return out

    def _isolated(self, job: Job) -> FileResult:
        """Retry one file alone in a fresh pool: a crash now is this file's, and so is the time
        (the worker is started first: its start-up does not count against the file)."""
        try:
            self._pool().submit(_ready).result()
            result = self._pool().submit(_port_batch, [job]).result(timeout=self._limit(1))[0]
        except (BrokenProcessPool, CancelledError):
            self.close(cancel=True)
            return FileResult(
                path=job.name,
                status=FileStatus.ERROR,
                reason="porter's parser crashed on this file (a worker process died); left unchanged",
                transient=True,
            )
        except FutureTimeout:
            self.close(cancel=True)
            return FileResult(
                path=job.name,
                status=FileStatus.ERROR,
                reason=f"took longer than {self.file_timeout:g} s to port (the per-file limit, --file-timeout); left unchanged",
                transient=True,
            )
        return result

    def map(self, items: Iterable[tuple[T, Job | None]], window: int | None = None) -> Iterator[tuple[T, FileResult | None]]:
        window = window or 2 * self.workers + 2
        pending: deque[tuple[list[tuple[T, Job | None]], Future[list[FileResult]] | None]] = deque()
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
