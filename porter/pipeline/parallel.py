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
worker ends as an error result naming it and every other file is ported.

The time limit (`file_timeout`) bounds a file, not an attempt: a worker notes in shared
memory when it starts each file, and a file is stopped once its own time, over every attempt,
reaches the limit. Its batch's workers are then killed (a running task cannot be stopped any
other way), the file is reported, and the batch's other files are retried alone; a file whose
attempt was cut short because another file was stopped is not charged for it.

Workers ignore SIGINT and SIGHUP and never outlive porter: Ctrl-C, SIGTERM or SIGHUP stops the parent, which
kills them; if the parent dies without cleaning up (SIGKILL), the kernel kills them
(PR_SET_PDEATHSIG on Linux) or a watcher thread notices the parent is gone.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import contextmanager
from concurrent.futures import BrokenExecutor, CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from porter.core.findings import FileResult, FileStatus
from porter.config.settings import Settings

if TYPE_CHECKING:
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

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
    # True: the prefilter let it through with these settings (`admits_file`, in the parent):
    # the worker does not scan it again
    admitted: bool = False


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def port_one(job: Job) -> FileResult:
    from porter.pipeline.port import port_source

    # the cyclic collector waits while the file is ported: what a port builds (libcst's tree,
    # the `ast` of the candidate pass, the families' facts) lives until the file is done, so
    # each collection during it walked live objects only (~2 of a cold lint's ~78 CPU s on
    # the 1.2M-line corpus); they are freed by their counts as the file ends, and the next
    # collection, once the collector is back, finds the file's few cycles
    collecting = gc.isenabled()
    gc.disable()
    try:
        return port_source(job.source, job.name, job.settings, admitted=job.admitted)
    except Exception as exc:  # noqa: BLE001 - a bug must not stop the run; it is reported
        return FileResult(
            path=job.name,
            status=FileStatus.ERROR,
            original_source=job.source,
            reason=f"internal error in porter: {type(exc).__name__}: {exc}; left unchanged",
        )
    finally:
        if collecting:
            gc.enable()


# when each file in flight started, in `time.monotonic()` seconds (system-wide on Linux and
# macOS, so the parent can read a worker's clock), by slot: 0 not started, -1 done
_STARTS: Any = None


def _port_batch(batch: list[tuple[int, Job]]) -> list[FileResult]:
    out = []
    for slot, job in batch:
        if _STARTS is not None:
            _STARTS[slot] = time.monotonic()
        result = port_one(job)
        if _STARTS is not None:
            _STARTS[slot] = -1.0
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


def _init_worker(parent: int, starts: Any = None) -> None:
    global _STARTS
    _STARTS = starts
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "SIGHUP"):  # a closed terminal's SIGHUP: the parent ends the run, as on SIGINT
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    _die_with_parent(parent)
    import porter.codemods.apply  # noqa: F401 - import once per worker, not per batch


def _context() -> multiprocessing.context.BaseContext:
    # imported here, as ProcessPoolExecutor in `_pool`: a warm run starts no worker and would
    # pay ~0.02 s for the imports alone
    import multiprocessing

    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")  # the parent's imports come for free
    return multiprocessing.get_context("spawn")


class Flush:
    """An item of `Pool.map` that hands on the batch gathered so far: its source is about to
    wait (for the project index), and the workers should not wait with it."""


FLUSH = Flush()


def _batches(
    jobs: Iterable[tuple[T, Job | None, int] | Flush],
) -> Iterator[list[tuple[T, Job | None, int]]]:
    batch: list[tuple[T, Job | None, int]] = []
    size = files = 0
    for item in jobs:
        if isinstance(item, Flush):
            if batch:
                yield batch
                batch, size, files = [], 0, 0
            continue
        batch.append(item)
        if item[1] is not None:
            size += len(item[1].source)
            files += 1
        if size >= BATCH_BYTES or files >= BATCH_FILES or len(batch) >= 256:
            yield batch
            batch, size, files = [], 0, 0
    if batch:
        yield batch


_POLL_S = 1.0  # how often a batch none of whose files has started yet is looked at again
# a look that comes this much later than asked: porter did not run meanwhile (stopped by Ctrl-Z
# or SIGSTOP, or starved), and neither, counted, did the files in flight
_PAUSE_S = 1.0
_TICK_S = 0.25  # how often `_Stops` looks at the clock


class _Stops:
    """The times porter's process did not run (stopped by Ctrl-Z or SIGSTOP, then `fg`; or
    starved), seen by a thread of its own that looks at the clock every `_TICK_S`: a look later
    than that by more than `_PAUSE_S` is a pause. Wherever the stop lands: seen only by a late look
    of `Pool._wait`, a stop while porter read the next batch's files (not waiting on the workers)
    was charged to the files in flight, "took longer than 6 s" after a 10 s stop (thirty-first
    read, second wave)."""

    def __init__(self) -> None:
        self._pauses: list[tuple[float, float]] = []  # (when it ended, how long)
        self._last = time.monotonic()  # the thread's last look
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="porter-stop-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(_TICK_S):
            now = time.monotonic()
            late = now - self._last - _TICK_S
            if late > _PAUSE_S:
                self._pauses.append((now, late))
            self._last = now  # (after the append: `since` reads it first)

    def since(self, started: float, now: float) -> float:
        """The seconds porter did not run between `started` and `now`, a stop it is only now
        coming out of included (its thread may not have looked yet)."""
        last = self._last  # first: a pause recorded meanwhile is counted twice for a moment, never missed
        pending = now - last - _TICK_S
        seen = sum(length for end, length in self._pauses if end > started)
        return seen + (pending if pending > _PAUSE_S else 0.0)

    def close(self) -> None:
        self._done.set()


class Pool:
    """`map` over (tag, Job | None) pairs: yields (tag, FileResult | None) in order (a `FLUSH`
    among the pairs hands on the batch gathered so far)."""

    def __init__(self, workers: int, file_timeout: float | None = None) -> None:
        self.workers = workers
        self.file_timeout = file_timeout if file_timeout and file_timeout > 0 else None
        self._executor: ProcessPoolExecutor | None = None
        # one slot per file in flight (more than a full window of batches holds), in shared
        # memory the workers write into: when each file started (`_port_batch`)
        self._slots = max(64, (2 * workers + 4) * BATCH_FILES * 2) if self.file_timeout is not None else 0
        self._starts: Any = None  # made with the workers (a run that parses nothing makes neither)
        self._spent: dict[int, float] = {}  # slot -> seconds its file has been charged so far
        self._stops: _Stops | None = None  # watched while `map` runs under a file limit
        self._spared: set[int] = set()  # slots whose attempt was cut short for another file
        # the pool each batch in flight was handed to: a batch broken because an earlier batch's
        # pool was stopped does not stop the pool running newer batches (`_collect`)
        self._owners: dict[Future[list[FileResult]], tuple[ProcessPoolExecutor, list[int]]] = {}

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = _context()
            if self._slots and self._starts is None:
                self._starts = context.RawArray("d", self._slots)
            from concurrent.futures import ProcessPoolExecutor

            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(), self._starts)
            )
        return self._executor

    @property
    def started(self) -> bool:
        """Whether the workers are running (they start with the first task)."""
        return self._executor is not None

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
        """Run `fn(*args)` in a worker, ahead of the files mapped after it (a part of the project
        index)."""
        return self._pool().submit(fn, *args)

    # -- time ----------------------------------------------------------------------------------

    def _started(self, slot: int) -> float:
        """When the file in `slot` started its current attempt (0: not yet, -1: done)."""
        return float(self._starts[slot]) if self._starts is not None else 0.0

    def _left(self, slot: int) -> float:
        assert self.file_timeout is not None
        return self.file_timeout - self._spent.get(slot, 0.0)

    def _paused_since(self, started: float, now: float) -> float:
        """The seconds porter was stopped (Ctrl-Z, then `fg`) since `started`: not the file's
        time. `time.monotonic()` runs on while a job is stopped, and a file that needed a moment
        was "took longer than 60 s", left unchecked, after a job stopped for a minute (thirty-first
        read)."""
        return self._stops.since(started, now) if self._stops is not None else 0.0

    def _charge(self, slot: int, now: float) -> None:
        """Add the time of the attempt that just ended to the file's account (unless it was
        cut short for another file)."""
        started = self._started(slot)
        if started > 0 and slot not in self._spared:
            self._spent[slot] = self._spent.get(slot, 0.0) + max(0.0, now - started - self._paused_since(started, now))
        self._spared.discard(slot)
        if self._starts is not None:
            self._starts[slot] = 0.0

    def _timed_out(self, job: Job) -> FileResult:
        return FileResult(
            path=job.name,
            status=FileStatus.ERROR,
            reason=f"took longer than {self.file_timeout:g} s to port (the per-file limit, --file-timeout); "
            "left unchanged",
            transient=True,
        )

    def _stop_all(self, charged: Container[int], now: float) -> None:
        """Kill every worker because of the files in `charged` (one past its limit, or a batch
        whose worker died); the files other workers were in the middle of are spared the time,
        and their attempt ends here: a batch of theirs looked at later is not timed from it (a
        file killed for another was "took longer than 60 s" once the isolated retries before
        its batch's turn had taken that long; thirty-sixth read)."""
        spared = []
        if self._starts is not None:
            spared = [
                slot
                for pool, slots in self._owners.values()
                if pool is self._executor
                for slot in slots
                if slot not in charged and self._starts[slot] > 0
            ]
            self._spared.update(spared)
        self.close(cancel=True)
        for slot in spared:  # (the workers are gone: none writes a start now)
            self._starts[slot] = 0.0

    # -- batches ---------------------------------------------------------------------------------

    def _submit(self, batch: list[tuple[T, Job | None, int]]) -> Future[list[FileResult]] | None:
        jobs = [(slot, j) for _, j, slot in batch if j is not None]
        if not jobs:
            return None
        if self._starts is not None:
            for slot, _ in jobs:
                self._starts[slot] = 0.0
        pool = self._pool()
        future = pool.submit(_port_batch, jobs)
        self._owners[future] = (pool, [slot for slot, _ in jobs])
        return future

    def _wait(self, future: Future[list[FileResult]], slots: list[int]) -> tuple[list[FileResult] | None, int | None]:
        """(the batch's results, None), or (None, the slot of a file that ran out of time),
        or (None, None) when the pool broke."""
        if self.file_timeout is None:
            try:
                return future.result(), None
            except (BrokenExecutor, CancelledError):
                return None, None
        while True:
            now = time.monotonic()
            running = [(slot, self._started(slot)) for slot in slots if self._started(slot) > 0]
            if running:
                slot, started = running[0]
                deadline = started + self._left(slot) + self._paused_since(started, now)
                if now >= deadline:
                    return None, slot
                wait = min(deadline - now, _POLL_S)  # (looked at often: a pause `_Stops` sees moves it on)
            else:
                # queued behind other batches: no clock runs for these files yet; looked at again
                # within the limit, so that a file cannot start and finish unseen past it
                wait = min(_POLL_S, self.file_timeout / 2)
            try:
                return future.result(timeout=wait), None
            except FutureTimeout:
                continue
            except (BrokenExecutor, CancelledError):
                return None, None

    def _collect(
        self, batch: list[tuple[T, Job | None, int]], future: Future[list[FileResult]] | None
    ) -> list[tuple[T, FileResult | None]]:
        if future is None:
            return [(tag, None) for tag, _, _ in batch]
        slots = [slot for _, j, slot in batch if j is not None]
        results, late = self._wait(future, slots)
        owner = self._owners.pop(future, (None, []))[0]
        if results is not None:
            if self._starts is not None:
                for slot in slots:
                    self._starts[slot] = 0.0
            done = iter(results)
        else:
            now = time.monotonic()
            stale = late is None and owner is not self._executor
            if late is not None:
                self._stop_all({late}, now)
            elif not stale:
                self._stop_all(set(slots), now)  # a worker died: every file it may have been on is a suspect
            # (stale: its pool was stopped already, for an earlier batch; the pool now running
            # newer batches is theirs, and this batch's files are retried in one of their own)
            for slot in slots:
                self._charge(slot, now)
            done = iter(self._retried(batch, late, stale))
        out: list[tuple[T, FileResult | None]] = []
        for tag, job, _ in batch:
            if job is None:
                out.append((tag, None))
            else:
                result = next(done)
                result.original_source = job.source
                out.append((tag, result))
        return out

    def _retried(self, batch: list[tuple[T, Job | None, int]], late: int | None, stale: bool) -> list[FileResult]:
        """The results of a broken batch's files: the late one's time out, the others are
        ported alone; for a `stale` batch in a pool apart, the running one left to its files."""
        running, self._executor = (self._executor, None) if stale else (None, self._executor)
        try:
            return [
                self._timed_out(j) if slot == late else self._isolated(j, slot) for _, j, slot in batch if j is not None
            ]
        finally:
            if stale:
                self.close(cancel=True)
                self._executor = running

    def _isolated(self, job: Job, slot: int) -> FileResult:
        """Retry one file alone in a fresh pool: a crash now is this file's, and so is the time
        it has left (the worker is started first: its start-up does not count against the file)."""
        if self.file_timeout is not None and self._left(slot) <= 0:
            return self._timed_out(job)
        try:
            self._pool().submit(_ready).result()
            future = self._submit([(None, job, slot)])
            assert future is not None
            results, late = self._wait(future, [slot])
            self._owners.pop(future, None)
            if results is not None:
                if self._starts is not None:
                    self._starts[slot] = 0.0
                return results[0]
            now = time.monotonic()
            if late is not None:
                self._stop_all({late}, now)
                self._charge(slot, now)
                return self._timed_out(job)
            raise BrokenExecutor("the worker died")
        except (BrokenExecutor, CancelledError):
            self.close(cancel=True)
            if self._starts is not None:
                self._starts[slot] = 0.0
            return FileResult(
                path=job.name,
                status=FileStatus.ERROR,
                reason="porter's parser crashed on this file (a worker process died); left unchanged",
                transient=True,
            )

    def map(
        self, items: Iterable[tuple[T, Job | None] | Flush], window: int | None = None
    ) -> Iterator[tuple[T, FileResult | None]]:
        window = window or 2 * self.workers + 2
        pending: deque[tuple[list[tuple[T, Job | None, int]], Future[list[FileResult]] | None]] = deque()
        counter = 0

        def numbered() -> Iterator[tuple[T, Job | None, int] | Flush]:
            nonlocal counter
            for item in items:
                if isinstance(item, Flush):
                    yield item
                    continue
                tag, job = item
                slot = -1
                if job is not None:
                    slot = counter % self._slots if self._slots else counter
                    counter += 1
                    self._spent.pop(slot, None)
                    self._spared.discard(slot)
                yield tag, job, slot

        try:
            with self._watched():
                for batch in _batches(numbered()):
                    pending.append((batch, self._submit(batch)))
                    while len(pending) >= window:
                        yield from self._collect(*pending.popleft())
                while pending:
                    yield from self._collect(*pending.popleft())
        except BaseException:
            self.close(cancel=True)
            raise
        self.close()

    @contextmanager
    def _watched(self) -> Iterator[None]:
        """Stops watched for (`_Stops`) while files are in flight under a file limit."""
        self._stops = _Stops() if self.file_timeout is not None else None
        try:
            yield
        finally:
            if self._stops is not None:
                self._stops.close()
            self._stops = None
