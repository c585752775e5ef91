"""Worker processes that run user code, kept on a leash.

Each worker runs in its own session and process group (so a timeout or a signal ends
everything it started), with its output capped (a model that prints in a loop cannot fill the disk: past
`max_output` bytes only a rolling tail is kept), optionally under an address-space limit
(RLIMIT_AS). SIGINT/SIGTERM/SIGHUP to porter while workers run ends their process groups and removes
the work folders before porter exits. Ctrl-Z (SIGTSTP), which the terminal sends to porter's group only,
stops the workers' groups with porter and continues them on `fg`; the time stopped is not counted
against a worker's timeout.

User code can leave its process group (`setsid()`, a daemon's double fork): killing the
group misses it. On Linux porter is made a child subreaper while workers run, so anything a
worker leaves behind is handed to porter when its parent ends, and porter ends every such
process (a child of porter's in another session) once the worker is done. Where porter itself
is killed outright, a watchdog ends the worker's group and every process that inherited the
worker's mark (`WORKER_MARK`); one that cleared its environment is out of its reach.
"""

from __future__ import annotations

import collections
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

DEFAULT_MAX_OUTPUT = 4 * 2**20  # bytes of a worker's output kept in its log
_TAIL = 64 * 2**10


@dataclass
class ProcResult:
    returncode: int | None
    timed_out: bool
    dropped_bytes: int  # output beyond the cap that was not written


def _kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_PR_SET_CHILD_SUBREAPER = 36


def _subreaper(on: bool) -> bool:
    """Make this process the one orphans of its descendants are handed to (Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stray_children() -> list[int]:
    """This process's children that live in another session than its own: what user code
    left running (porter's own helpers, such as multiprocessing's, share its session)."""
    me, mine = os.getpid(), os.getsid(0)
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the name: state, ppid, pgrp, session
        if len(fields) > 3 and int(fields[1]) == me and int(fields[3]) != mine:
            out.append(int(entry))
    return out


# how often porter looks whether a worker it waits on is stopped (`WorkerSet._wait_awake`)
_LOOK_S = 0.2


def _state_of(pid: int) -> str | None:
    """A process's state letter from /proc (T: stopped, t: stopped by a tracer), None where unread."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


# the most of a worker's descendants porter reads each look (`_stopped_within`)
_MOST_DESCENDANTS = 256


def _children(pid: int) -> list[int]:
    """`pid`'s children, from each of its threads' /proc `children` list (empty where unread)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                out.extend(int(child) for child in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def _stopped_within(pid: int) -> bool:
    """Whether the worker `pid` or a process it started (a launcher's `python`, a DataLoader's
    worker: its children, theirs, ...) is stopped (T or t): the worker waiting on a child a stranger
    stopped was counted awake, and the side's alarm ended it "no result after 4 s awake" after
    0.5 s of work (thirty-sixth term read)."""
    todo, seen = [pid], 0
    while todo and seen < _MOST_DESCENDANTS:
        here = todo.pop()
        seen += 1
        if _state_of(here) in ("T", "t"):
            return True
        todo.extend(_children(here))
    return False


# the variable each worker's environment holds (a value of its own), inherited by whatever it
# starts, even outside its process group: what the watchdog finds them by after porter's kill -9
WORKER_MARK = "PORTER_WORKER_MARK"
# the watchdog's shell (`WorkerSet._watchdog`; $0 the group, $1 the mark): the group first, then
# every process whose environment holds the mark, twice (one may have been forking)
_WATCHDOG = (
    'read -r _; kill -s KILL -- "-$0"; for _ in 1 2; do '
    'for e in $(grep -lsxzF -- "$1" /proc/[0-9]*/environ); do p=${e#/proc/}; kill -s KILL "${p%/environ}"; done; '
    "done"
)

# the signals that end the workers and remove the work folders: SIGHUP too (a closed terminal: its
# folders were left to the next run's sweep; twenty-ninth read), unless whoever started porter ignores it
_ENDS_WORKERS = (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []))
# Ctrl-Z where the platform has job control: it reaches porter's process group, not the workers' own
_STOP = getattr(signal, "SIGTSTP", None)


class WorkerSet:
    """Context manager: the workers and temporary folders of one porter command."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        self.temp_dirs: list[Path] = []
        self._reaping = False
        self._alive: list[int] = []  # the lock each temporary folder holds while porter lives (`_hold`)
        self._old: dict[int, Callable[[int, FrameType | None], Any] | int | signal.Handlers | None] = {}
        self._running: list[subprocess.Popen] = []  # the workers waited on now (`_wait_awake`)
        self._stopped_s = 0.0  # how long porter has been stopped by Ctrl-Z (`_stop_with_porter`)
        self._told: dict[int, tuple[Path, float]] = {}  # a worker's pid: where to say its time stopped, from when
        self._stranger_s: dict[int, float] = {}  # a worker's pid: the time it was stopped by another (`_wait_awake`)

    def __enter__(self) -> WorkerSet:
        if threading.current_thread() is threading.main_thread():
            for sig in _ENDS_WORKERS:
                if sig != getattr(signal, "SIGHUP", None) or signal.getsignal(sig) is not signal.SIG_IGN:  # (`nohup`)
                    self._old[sig] = signal.signal(sig, self._on_signal)
            if _STOP is not None and signal.getsignal(_STOP) is not signal.SIG_IGN:  # (no job control)
                self._old[_STOP] = signal.signal(_STOP, self._stop_with_porter)
        self._reaping = _subreaper(True)
        return self

    def __exit__(self, *exc) -> None:
        self.kill_all()
        if self._reaping:
            _subreaper(False)
            self._reaping = False
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old.clear()
        for fd in self._alive:
            os.close(fd)
        self._alive.clear()

    def add_temp_dir(self, path: Path) -> Path:
        self.temp_dirs.append(Path(path))
        self._alive.append(_hold(Path(path)))
        return Path(path)

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                _kill_group(proc)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.end_strays()

    def end_strays(self) -> None:
        """End what the finished workers left running outside their process groups: each is
        killed with its own group, and reaped; its children, handed to porter in turn, next."""
        if not self._reaping:
            return
        live = {p.pid for p in self.procs if p.returncode is None}
        for _ in range(100):
            strays = [pid for pid in _stray_children() if pid not in live]
            if not strays:
                return
            for pid in strays:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
            for pid in strays:
                try:
                    os.waitpid(pid, 0)
                except (ChildProcessError, OSError):
                    pass

    def _on_signal(self, signum, frame) -> None:
        if signum == getattr(signal, "SIGHUP", None):  # (a closed terminal: `core.hangup`)
            from porter.core.hangup import drop_a_hung_up_terminal

            drop_a_hung_up_terminal()
        self.kill_all()
        for d in self.temp_dirs:
            shutil.rmtree(d, ignore_errors=True)
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old.clear()
        raise SystemExit(128 + signum)

    def _stop_with_porter(self, signum, frame) -> None:
        """Ctrl-Z: stop the running workers' process groups, then porter as without a handler
        (or by the handler this one replaced: a progress bar's), and continue the groups on `fg`.
        Each worker is in its own session, out of the terminal's reach: porter stopped and the
        user's program ran on, its counter 1 -> 30 while the shell said "Stopped" (thirty-third
        read, second wave)."""
        live = [p for p in self._running if p.returncode is None]
        for proc in live:
            _kill_group(proc, signal.SIGSTOP)
        began = time.monotonic()
        before = self._old.get(signum)
        try:
            if callable(before):
                before(signum, frame)
            else:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)  # stopped here until SIGCONT
        finally:
            signal.signal(signum, self._stop_with_porter)
            self._stopped_s += time.monotonic() - began
            for proc in live:
                self._tell_stopped(proc)
                _kill_group(proc, signal.SIGCONT)

    def _tell_stopped(self, proc: subprocess.Popen) -> None:
        """Write the seconds `proc` was held stopped, before it continues: a side's own alarm
        (`launch._alarm`) counts wall time and reads them to leave them out, as porter's wait does."""
        if proc.pid in self._told:
            path, since = self._told[proc.pid]
            held = self._stopped_s - since + self._stranger_s.get(proc.pid, 0.0)
            with contextlib.suppress(OSError):  # whole (a rename): the side may read it as it continues
                part = path.with_name(path.name + ".part")
                part.write_text(f"{held:.3f}")
                os.replace(part, path)

    def _wait_awake(self, proc: subprocess.Popen, timeout: float) -> int:
        """`proc.wait(timeout)` with the time the worker was stopped not counted: porter's Ctrl-Z (its
        workers with it), and a stop porter did not make (`kill -STOP` of the worker, a debugger), read
        from /proc and said to the side as porter's own (`_tell_stopped`): its alarm counted it and
        ended the side "porter stopped the run" on SIGCONT after 0.5 s awake (thirty-fifth term read's
        leftover). A stranger's stop counts at most `timeout` more: a worker that stops itself ends."""
        start, stopped = time.monotonic(), self._stopped_s
        self._running.append(proc)
        self._stranger_s[proc.pid] = 0.0
        since: float | None = None  # when the stranger's stop now seen began
        try:
            while True:
                held = self._stopped_s - stopped + self._stranger_s[proc.pid]
                left = timeout - (time.monotonic() - start - held)
                try:
                    return proc.wait(timeout=min(max(left, 0.0), _LOOK_S))
                except subprocess.TimeoutExpired:
                    since = self._note_stranger_stop(proc, since, timeout)
                    held = self._stopped_s - stopped + self._stranger_s[proc.pid]
                    if timeout - (time.monotonic() - start - held) <= 0:
                        raise
        finally:
            self._running.remove(proc)
            self._stranger_s.pop(proc.pid, None)

    def _note_stranger_stop(self, proc: subprocess.Popen, since: float | None, cap: float) -> float | None:
        """Count the time `proc`, or a process it started, is seen stopped (state T or t in /proc)
        while porter is not (`_stopped_within`): its stopped time so far said to the side at each
        look. The start of the stop now seen, else None."""
        now = time.monotonic()
        if not _stopped_within(proc.pid):
            return None
        if since is not None:
            self._stranger_s[proc.pid] = min(cap, self._stranger_s[proc.pid] + now - since)
            self._tell_stopped(proc)
        return now

    def _watchdog(self, group: int, mark: str) -> tuple[subprocess.Popen, int] | None:
        """A shell that kills the worker's process group when porter ends outright: the
        parent-death signal (`_before_exec`) reaches the worker alone, so what it started (a
        launcher's `python`) ran on after a kill -9 (twenty-eighth trace2 read). It waits on a
        pipe only porter can write to, at whose end (porter gone: the kernel closes it) it kills
        the group, then every process whose environment holds the worker's `mark`
        (`WORKER_MARK`): a child that left the group (`setsid()`, a daemon) ran on, handed to
        init (twenty-eighth trace2 read's leftover). In its own session, so the group's kill
        misses it. Called off when the worker is done (`_call_off`), before the pipe is closed."""
        r, w = os.pipe()  # (neither inherited by the workers)
        try:
            dog = subprocess.Popen(
                ["/bin/sh", "-c", _WATCHDOG, str(group), mark],
                stdin=r,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:  # no shell: the worker's own parent-death signal only
            os.close(w)
            return None
        finally:
            os.close(r)
        self.procs.append(dog)  # (a worker's, not a stray)
        return dog, w

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict,
        log_path: Path,
        timeout: float,
        max_output: int = DEFAULT_MAX_OUTPUT,
        memory_limit: int | None = None,
        stdin: Path | None = None,
        stopped_file: Path | None = None,
    ) -> ProcResult:
        """Run one worker to completion (or its timeout); its output goes to `log_path`; its
        standard input is the file `stdin`, read from its start (each run the same bytes), else
        empty. Its environment holds its own `WORKER_MARK` (what the watchdog finds it by). The
        time it is held stopped by a Ctrl-Z is written to `stopped_file` (`_tell_stopped`)."""
        mark = f"{WORKER_MARK}={secrets.token_hex(8)}"
        if stopped_file is not None:
            with contextlib.suppress(OSError):
                stopped_file.write_text("0")  # (not a run's before it in this folder)
        with open(stdin, "rb") if stdin is not None else contextlib.nullcontext(subprocess.DEVNULL) as given:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, WORKER_MARK: mark.partition("=")[2]},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=given,
                start_new_session=True,
                preexec_fn=_before_exec(memory_limit),
            )
        self.procs.append(proc)
        dog = self._watchdog(proc.pid, mark)
        stdout = proc.stdout
        assert stdout is not None  # stdout=PIPE
        pump = _Pump(stdout, log_path, max_output)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        timed_out = False
        if stopped_file is not None:
            self._told[proc.pid] = (stopped_file, self._stopped_s)
        try:
            rc = self._wait_awake(proc, timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            rc = proc.wait()
        _kill_group(proc)  # anything the worker left running in its group
        self._told.pop(proc.pid, None)
        _call_off(dog)
        self.end_strays()  # and anything it moved out of the group
        reader.join(timeout=10)
        return ProcResult(rc, timed_out, pump.dropped)


# a file in each temporary folder of a live porter, locked (flock) while it lives: the kernel
# lets the lock go when porter ends, even killed outright, so the next run knows the folder left
ALIVE = ".porter-alive"


def _hold(folder: Path) -> int:
    """Lock `folder`'s ALIVE file for as long as porter lives (the fd is not inherited: a worker
    does not hold it). Locked under another name, then renamed: never seen unlocked."""
    import fcntl

    fd = os.open(folder / f"{ALIVE}.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(folder / f"{ALIVE}.new", folder / ALIVE)
    return fd


def sweep_left(prefix: str, where: str | None = None) -> list[Path]:
    """Remove the folders `prefix`* a porter killed outright left in the temporary folder (a
    kill -9 runs no handler: `porter-trace-*` stayed, the side's trace in it; twenty-eighth
    trace read's leftover): this user's own, no link, whose ALIVE lock no live porter holds.
    shutil.rmtree does not follow links inside (its fd-based walk on Linux)."""
    import fcntl
    import stat
    import tempfile

    removed = []
    base = Path(where or tempfile.gettempdir())
    for folder in base.glob(f"{prefix}*"):
        try:
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue
            fd = os.open(folder / ALIVE, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # (no lock file: kept with --keep, or not porter's)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live porter's
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _call_off(dog: tuple[subprocess.Popen, int] | None) -> None:
    """End a watchdog (`WorkerSet._watchdog`), then close its pipe: closed first, it would kill
    the group it watched, whose number may be another's by then."""
    if dog is not None:
        dog[0].kill()
        dog[0].wait()
        os.close(dog[1])


_PR_SET_PDEATHSIG = 1


def _before_exec(limit: int | None) -> Callable[[], None]:
    """What the child runs before exec: it is killed when porter ends, even killed outright (a
    kill -9 runs no handler: the side ran on, its trace written to a folder nobody reads,
    until its own alarm minutes later; twenty-eighth read), and its address space is capped
    at `limit` bytes. The C library is opened here, in porter, not in the forked child. (The
    signal comes when the thread that started the child ends: porter waits for each worker in
    the thread that started it.)"""
    import resource

    parent = os.getpid()
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def setup() -> None:  # runs in the child, before exec
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # porter ended before the line above
                os._exit(1)
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return setup


class _Pump:
    """Copies a worker's output into its log as it comes (so a pipe never fills and blocks the
    worker): the first `max_output` bytes, then only a rolling tail, written at the end after a
    line saying how much was dropped."""

    def __init__(self, stdout: Any, log_path: Path, max_output: int) -> None:
        self.stdout, self.log_path, self.max_output = stdout, log_path, max_output
        self.written = 0
        self.dropped = 0
        self.tail: collections.deque = collections.deque()
        self.tail_len = 0

    def __call__(self) -> None:
        stdout = self.stdout
        with open(self.log_path, "wb") as log:
            while True:
                chunk = stdout.read1(65536) if hasattr(stdout, "read1") else stdout.read(65536)
                if not chunk:
                    break
                room = self.max_output - self.written
                if room > 0:
                    log.write(chunk[:room])
                    self.written += min(room, len(chunk))
                    chunk = chunk[room:]
                if chunk:  # over the cap: keep a rolling tail only
                    self._keep_tail(chunk)
            if self.dropped:
                kept = b"".join(self.tail)[-_TAIL:]
                self.dropped -= len(kept)
                log.write(
                    f"\n[porter: output over {self.max_output} bytes; {self.dropped} "
                    "bytes dropped; the last part follows]\n".encode()
                )
                log.write(kept)

    def _keep_tail(self, chunk: bytes) -> None:
        self.dropped += len(chunk)
        self.tail.append(chunk)
        self.tail_len += len(chunk)
        while self.tail_len - len(self.tail[0]) >= _TAIL:
            self.tail_len -= len(self.tail.popleft())


def log_tail(path: Path, limit: int = 4000) -> str:
    """The end of a run's log, as a terminal showed it (`as_a_terminal_shows`: a progress
    bar's carriage returns leave its last state, not a hundred states run together)."""
    from porter.core.textsafe import as_a_terminal_shows

    try:
        with open(path, "rb") as fh:  # the end only: a log is up to --max-output long
            size = fh.seek(0, 2)
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return ""
    return as_a_terminal_shows(data.decode("utf-8", "replace"))


__all__ = ["WorkerSet", "ProcResult", "DEFAULT_MAX_OUTPUT", "log_tail"]
