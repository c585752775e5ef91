"""Runs the user's Python command with porter's recorder installed, in one side's process:

    python .../porter/verify/launch.py JOB.json -- SCRIPT.py ARGS...   (or -m MODULE ARGS, -c CODE)

It chooses the device (CUDA, else the CPU through the CUDA shim, for the original; the target
or XLA:CPU emulation for the port), seeds Python, NumPy and torch, installs the recorder, runs
the command as `python` would (`runpy`, `__main__`, `sys.argv`, the script's folder first on
`sys.path`), and writes the trace when N optimizer steps are done or the script ends. When
user code raises it writes error.json and exits with status 3; phase.txt names the phase.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import os
import platform
import random
import runpy
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from porter.verify import OWN

EXIT_USER_ERROR = 3


class TimedOut(BaseException):
    """Raised by the side's own alarm shortly before porter's timeout: the trace is then
    written with what ran so far (the compiles and shape changes of a step that never ends)."""


def _alarm(job: dict) -> None:
    """The side's own alarm, in time awake: `signal.alarm` counts wall time, and a Ctrl-Z
    longer than the margin (porter's own wait does not count it) ended the side "timed out" on
    `fg` after 0.5 s awake under a 3 s alarm (thirty-third read's leftover). Porter writes the
    time it held the side stopped to `stopped_file` before it continues it (`procs.WorkerSet`)."""
    deadline = job.get("deadline_s")
    if not deadline:
        return
    awake_s = max(1, int(deadline - min(30.0, 0.1 * deadline)))
    began, held = time.monotonic(), _held_stopped(job.get("stopped_file"))  # (a stop before this is no part)

    def timed_out(signum, frame):
        left = awake_s - (time.monotonic() - began - (_held_stopped(job.get("stopped_file")) - held))
        if left >= 1:  # a fire early by the time stopped: the rest of the awake time
            signal.alarm(int(left))
            return
        raise TimedOut(f"no result after {deadline:g} s awake (time stopped not counted): the run ended at its timeout")

    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(awake_s)


def _held_stopped(path: str | None) -> float:
    """The seconds this side was held stopped (porter's Ctrl-Z, or a stop porter saw another make:
    `procs.WorkerSet._wait_awake`), 0 where porter said none."""
    try:
        return max(0.0, float(Path(path).read_text())) if path else 0.0
    except (OSError, ValueError):
        return 0.0


def _phase(out: Path, name: str) -> None:
    (out / "phase.txt").write_text(name)


def setup_device(job: dict):
    import torch

    from porter.verify import devices, shim

    mode = None
    root = str(Path.cwd().resolve())
    if job["role"] == "reference":
        side = devices.select_reference()
        if side.shim:
            mode = shim.install_cuda_shim(root)
    else:
        target = job["target"]
        side = devices.select_ported(target)
        if target in ("neuron", "tpu") and side.kind != target:
            assert side.device is not None  # select_ported names the device
            mode = shim.install_target_alias(target, side.device, side.sync)
    if mode is not None:
        mode.__enter__()  # for the rest of this process
        side.remap = mode
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        distributed(job, side)
    if job.get("eager"):

        def compile_off(model=None, *args, **kwargs):
            return model if model is not None else (lambda fn: fn)

        torch.compile = compile_off
        side.notes.append("torch.compile was turned off (--eager): the model ran eagerly")
    else:
        _note_compile(torch)
    return side


_COMPILED: list[bool] = []  # one entry once the program has called torch.compile: the hook is on


# The program's frames dynamo compiled (file, first line, name), porter's own left out: dynamo's
# own count holds each frame a graph break hands back to it, porter's hooks' (their sys._getframe
# breaks the graph) and the library frames they call, each recompile again (a 3-layer model
# compiled with "openxla", 2 steps: 149 "ok", 123 distinct codes; 1 compiled frame not porter's).
_FRAMES: set[tuple[str, int, str]] = set()


def _frame_compiled(code, out_code):
    """A dynamo bytecode hook: note a compiled frame of the program's (or its libraries') code."""
    if not code.co_filename.startswith(OWN):
        _FRAMES.add((code.co_filename, code.co_firstlineno, code.co_name))


def _note_compile(torch) -> None:
    """torch.compile, noting that the program called it (`_compile_note`) and, from its first
    call, which of the program's frames dynamo compiles (`_compiled_frames`)."""
    real = torch.compile

    @functools.wraps(real)
    def compile_noted(*args, **kwargs):
        if not _COMPILED:
            _COMPILED[:] = [_hook_frames()]
            _python_shape_guards()
        return real(*args, **kwargs)

    torch.compile = compile_noted


def _python_shape_guards() -> None:
    """Dynamo's symbolic-shape guards checked in Python, not compiled as C++: porter's forward
    hook, inlined into each compiled module call, recompiles with the input's sizes made
    dynamic, and torch 2.9 compiled that guard as C++ (`build_guards` 87.5 of 96.9 s of a 3-layer
    model's two calls; 3-6 s in Python, the recorded tensors equal: twenty-sixth read). A
    recording runs a few steps: its guards' cost per call is not what it measures. torch 2.13's
    default is already False; a torch without the setting is left as it is."""
    import torch._dynamo.config as config

    if hasattr(config, "enable_cpp_symbolic_shape_guards"):
        config.enable_cpp_symbolic_shape_guards = False


def _hook_frames() -> bool:
    """Register `_frame_compiled` with dynamo; False on a torch without bytecode hooks."""
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook

        register_bytecode_hook(_frame_compiled)
    except Exception:  # noqa: BLE001 — another torch: `_compiled_frames` reads dynamo's counter
        return False
    return True


def _compiled_frames() -> int | None:
    """How many distinct frames of the program's dynamo compiled in this process; None where the
    program never called torch.compile, or this torch keeps no such hook nor counter (without
    the hook: dynamo's count of frames, porter's own and repeats included)."""
    if not _COMPILED or "torch._dynamo" not in sys.modules:
        return None
    if _COMPILED[0]:
        return len(_FRAMES)
    try:
        from torch._dynamo.utils import counters

        return int(counters["frames"]["ok"])
    except Exception:  # noqa: BLE001 — a torch without these counters: nothing to say
        return None


def _compile_note(counting: bool) -> str | None:
    """What the trace must say of a program that called torch.compile when dynamo compiled no
    frame of it: its models ran eagerly, and the trace is of that run. Under porter's operator
    counting (a TorchDispatchMode) dynamo compiles nothing; the trace of an inductor program
    held eager's operators and outputs, bit for bit, and said nothing of it (nineteenth read's
    "untried")."""
    if _compiled_frames() != 0:
        return None
    why = (
        "porter's operator counting was on, and its TorchDispatchMode keeps dynamo from compiling: "
        "record with --no-count-ops to trace the compiled run"
        if counting
        else "dynamo was off, or nothing compiled was called"
    )
    return (
        "the program called torch.compile, but no frame was compiled: it ran eagerly, and this "
        f"trace is of that run ({why})"
    )


def distributed(job: dict, side) -> None:
    """A rank of a torchrun run: collectives on the host where the real backend cannot run
    here (porter.verify.collectives); on real hardware the program's own backend runs."""
    from porter.verify import collectives

    if side.shim == "cuda->cpu":
        collectives.install({"nccl"})
        collectives.ddp_on_cpu()
        side.notes.append("collectives: nccl ran as gloo on the host (no GPU), one process per rank")
    elif side.kind == "xla" and side.emulated:
        collectives.install({"xla", job["target"]}, {"xla://": "env://"})
        collectives.xla_runtime_world()
        side.notes.append(
            f"collectives: the '{job['target']}' backend (and xm's in-graph collectives) "
            "ran as gloo on the host, one XLA:CPU process per rank: XLA's CPU client "
            "cannot reduce across processes; a collective measured here is not a "
            "hardware one"
        )
    else:
        return
    side.collectives = collectives.COUNTS


def rank_paths(job: dict) -> tuple[Path, Path, int, int]:
    """(work folder, trace path, rank, world size) of this process."""
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    out, trace = Path(job["workdir"]), Path(job["trace"])
    if world > 1:
        out = out / f"rank{rank}"
        trace = trace.with_name(f"{trace.name.removesuffix('.safetensors')}.rank{rank}.safetensors")
    return out, trace, rank, world


def install_rng(job: dict, side, root: str, recorder):
    """Draws on a real device (the port's, or a GPU reference's) come from the CPU generator,
    or with `--device-rng` are only counted (porter.verify.rng). The CUDA shim's reference has
    no device: every draw there is a CPU draw already."""
    if side is None or side.kind == "cpu" or not job.get("record", True) or not job.get("rng_probe", True):
        return None
    from porter.verify.rng import DeviceRngMode

    rng = DeviceRngMode(
        root,
        redirect=job.get("rng_redirect", True),
        step=(lambda: recorder.step) if recorder is not None else (lambda: 0),
    )
    rng.install_inits()
    if rng.redirect:
        rng.install_generators({side.kind, job.get("target", side.kind)} - {"cpu"})
    rng.__enter__()  # below the recorder's modes: porter's own host copies are not counted
    return rng


def _program_seeds(root: str):
    """The program's own seedings, watched from porter's seeding on (`rng.ProgramSeeds`)."""
    from porter.verify.rng import ProgramSeeds

    seeds = ProgramSeeds(root)
    seeds.install()
    return seeds


def rng_summary(job: dict, side, rng) -> dict:
    if rng is not None:
        return rng.to_dict()
    redirect = job.get("rng_redirect", True)
    if side is not None and side.shim == "cuda->cpu":
        return {
            "redirected": redirect,
            "device_draws": None,
            "generator": "the CPU's default generator (the CUDA shim runs every draw on the CPU)",
        }
    return {
        "redirected": redirect,
        "device_draws": 0,
        "generator": "the CPU's default generator (this side ran on the CPU)",
    }


def device_requests(side) -> dict:
    """The device types the program asked for (the device arguments the side's shim saw)."""
    remap = getattr(side, "remap", None)
    return {"requested": dict(remap.requested) if remap is not None else None}


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)


def host_info() -> dict:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def run_user_command(argv: list[str]) -> None:
    """What `python ARGV...` does, in this process."""
    from porter.verify.entry import program_path

    if not argv:
        raise ValueError("no Python command to run")
    if argv[0] == "-m":
        if len(argv) < 2:
            raise ValueError("-m needs a module name")
        sys.argv = [argv[1], *argv[2:]]
        program_path(os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        if len(argv) < 2:
            raise ValueError("-c needs code")
        sys.argv = ["-c", *argv[2:]]
        program_path("")
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        script = os.path.abspath(argv[0])
        try:
            with open(script, "rb"):
                pass
        except OSError as exc:  # the program's file cannot be read (its mode, or its folder's)
            raise ProgramUnreadable(f"can't open file {argv[0]!r}: {exc.strerror or exc}") from None
        sys.argv = list(argv)
        program_path(os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")


class ProgramUnreadable(OSError):
    """The program named by the command cannot be read: said in one line, as `python` says it
    (with a user's rights, a program or its folder of mode 000 ended in the launcher's own
    traceback under the line, nineteenth read's leftover)."""


_REAL_EXIT = os._exit  # the process's own exit, before the hook below replaces it


class _Side:
    """One side's run in this process, and the one way it ends: its trace and its record
    written (`conclude`), whether the command returned, raised, or called `os._exit`."""

    def __init__(self, job: dict, user_argv: list[str]) -> None:
        self.job, self.user_argv = job, user_argv
        self.out, self.trace_path, self.rank, self.world = rank_paths(job)
        self.root = str(Path.cwd().resolve())
        self.started = time.time()
        self.recorder = None
        self.side = None
        self.rng = None
        self.seeds = None
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.owner: int | None = None
        import porter

        self.version = porter.__version__  # read now: the program's own `porter` may take the name
        self.package = Path(OWN)
        self.umask = os.umask(0o022)  # porter's, read (os.umask sets it: set back at once)
        os.umask(self.umask)

    def hook_exit(self) -> None:
        """`os._exit(N)` in the program (a script that ends with it to skip its data loaders'
        teardown) left no trace and no record: "exited with status 0 without writing a
        result". It now ends the side as the script's end does: the trace is written, and a
        status other than 0 is the run's error. A forked child's `os._exit` is its own."""

        def _exit(status: int) -> None:
            status = operator.index(status)  # what os._exit itself takes (a TypeError otherwise)
            if os.getpid() != self.pid:  # a forked child (a data loader's worker): not this side
                _REAL_EXIT(status)
            error = None
            if status != 0:
                error = _exit_record(status, self.out, self.root)
            stopped = f"the program called os._exit({status})"
            if threading.current_thread() is not threading.main_thread():
                stopped += f" in its thread {threading.current_thread().name!r}" + _at(
                    _program_line(sys._getframe(1), self.root)
                )
            self.conclude("error" if error else stopped, error)

        os._exit = _exit  # type: ignore[assignment]

    def conclude(self, stopped: str, error: dict | None) -> None:
        """Write the trace and the record, then end the process: once, by the first thread to
        get here (another thread's `os._exit` meanwhile waits for it; a second call from the
        thread already writing, as from a hook in the recorder's own code, exits at once)."""
        me = threading.get_ident()
        if self.owner == me:
            _REAL_EXIT(EXIT_USER_ERROR)
        if os.getpid() != self.pid:
            # a child the program forked that ended as a script does (`sys.exit(0)`, a return,
            # an exception): its end is its own. It wrote the side's phase, trace and record
            # (`done`), and when the side then died, its trace was the child's: no step, "script
            # ended", in the phase "writing the trace" (eighteenth read)
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            _REAL_EXIT(0 if error is None else 1)
        self.lock.acquire()  # another thread concluding ends the process while this one waits
        self.owner = me
        signal.alarm(0)
        if self.recorder is not None:
            # the recording stands still from here on: a hook running in another thread ends
            # first, and every thread's next hook or counted operator waits for the process's end
            self.recorder.lock.acquire()
            if me != threading.main_thread().ident and stopped != "error":
                stopped += "; " + self._main_thread_stands(self.recorder.lock.waiting)
        _finish(self, stopped, error)

    def _main_thread_stands(self, waiting: set[int], wait_s: float = 1.0) -> str:
        """Where the main thread stands when another thread ends the run: Python cannot pause
        it, so it runs on to its next hook or counted operator and waits there (the recorder's
        lock is held); this waits up to `wait_s` for it to get there and names its line in the
        program. The eighteenth and nineteenth reads left "it runs on to its next hook" unsaid:
        a program's lines after its other thread's `os._exit` ran or not, and no trace said."""
        main = threading.main_thread()
        joined = _joining(sys._current_frames().get(main.ident or -1), threading.current_thread())
        if joined is not None:  # it waits for this thread, which ends the process: no wait for it
            line = _program_line(joined, self.root)
            return f"the main thread waited{_at(line)} for that thread to end (a join), and ran nothing after it"
        deadline = time.monotonic() + wait_s
        while main.is_alive() and main.ident not in waiting and time.monotonic() < deadline:
            time.sleep(0.005)
        frame = sys._current_frames().get(main.ident or -1)
        if not main.is_alive() or frame is None:
            return "the main thread had ended"
        line = _program_line(frame, self.root)
        if main.ident in waiting:
            return f"the main thread stood at porter's next hook{_at(line)}, and ran nothing after it"
        return (
            f"the main thread was{_at(line) or ' outside the program'} when the trace was written, at no hook of "
            f"porter's (it came to none in {wait_s:g} s, and could run on until the process ended)"
        )


def _joining(frame, thread: threading.Thread):
    """The frame of a thread that waits, with no timeout, in `thread.join()` (None if it does
    not): it can run nothing until `thread` ends, and a thread that ends the process never does,
    so the second a main thread in `t.join()` was waited for after `t`'s `os._exit` (to come to a
    hook it could not reach) is not waited."""
    f = frame
    while f is not None:
        if f.f_code is threading.Thread.join.__code__:
            here = f.f_locals
            return frame if here.get("self") is thread and here.get("timeout") is None else None
        if f.f_code.co_filename != threading.__file__:
            return None  # blocked elsewhere (join's own helpers are threading's)
        f = f.f_back
    return None


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[1]).read_text())
    user_argv = argv[3:] if len(argv) > 2 and argv[2] == "--" else argv[2:]
    run = _Side(job, user_argv)
    run.out.mkdir(parents=True, exist_ok=True)
    _phase(run.out, "startup")
    stopped, error = "script ended", None
    try:
        _alarm(job)
        run.hook_exit()
        run.side = setup_device(job)
        if job.get("threads"):
            import torch

            torch.set_num_threads(int(job["threads"]))  # the noise-floor run: other rounding
        seed_everything(job["seed"] + run.rank)  # each rank its own stream, on both sides alike
        run.recorder = _recorder(job, run.side, run.root)
        run.rng = install_rng(job, run.side, run.root, run.recorder)
        run.seeds = _program_seeds(run.root)  # after rng's: it subclasses rng's torch.Generator
        if run.recorder is not None:
            run.recorder.install()
        _phase(run.out, "running the command")
        stopped = _run_command(user_argv)
    except BaseException as exc:  # user code can raise anything
        if os.getpid() != run.pid:  # a child the program forked, ending as Python ends it
            _child_exit(exc)
        error = _failure(exc, run.out, run.root)
        if run.recorder is not None:
            _compiled_failure(error, exc)
        stopped = "error"
        if error.get("kind") == "timeout":
            # written now as well: the runner's own deadline can fall while the trace is being
            # written (a loaded machine), and the record must still name the phase that ran out
            from porter.verify.sides import write_record

            write_record(run.out / "error.json", error)
    run.conclude(stopped, error)
    return EXIT_USER_ERROR  # not reached: conclude ends the process


def _finish(run: _Side, stopped: str, error: dict | None) -> None:
    # the side's files get porter's permission bits, not the program's: a program that set its
    # own umask (`os.umask(0o777)`) left a trace of mode 000, and its record, that its user
    # could not read back (root reads them anyway)
    os.umask(run.umask)
    with _cpu_default():
        _write(run, stopped, error)


@contextlib.contextmanager
def _cpu_default():
    """The trace's own tensors made on the CPU whatever default the program left
    (`torch.set_default_device("meta")` at its end: "Cannot copy out of meta tensor; no data!",
    the trace lost)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with contextlib.suppress(Exception):
        torch.set_default_device(None)
    with torch.device("cpu"):
        yield


def _source(package: Path) -> str | None:
    """The digest of the porter code that records (`tracefile.source_digest`); None where its
    files cannot be read (then no trace claims to tell two porters apart)."""
    from porter.verify.tracefile import source_digest

    try:
        return source_digest(package)
    except OSError:
        return None


def _write(run: _Side, stopped: str, error: dict | None) -> None:
    from porter.verify.devices import libraries_recorded

    job, out, side, rng = run.job, run.out, run.side, run.rng
    _phase(out, "writing the trace")
    manifest, tensors, trace_error = _finish_recording(run.recorder, run.root, describe=error is None)
    if trace_error is not None and error is None:
        error, stopped = trace_error, "error"
    libraries, left = libraries_recorded()
    for note in (_compile_note(getattr(run.recorder, "op_counter", None) is not None), left):
        if note is not None and manifest:
            manifest["notes"] = [*manifest.get("notes", []), note]
    if side is not None:
        manifest["devices"] = dict(manifest.get("devices") or {}, **device_requests(side))
    manifest["rng"] = rng_summary(job, side, rng)
    if run.seeds is not None:
        manifest["program_seeds"] = run.seeds.finish()
    manifest["compiled_frames"] = _compiled_frames()  # whose draws no mode redirects (`causes.compiled_draws`)
    if "torch" in sys.modules:
        manifest["threads"] = sys.modules["torch"].get_num_threads()
    manifest.update(
        {
            "porter": run.version,
            "porter_source": _source(run.package),
            "libraries": libraries,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(run.started)),
            "role": job["role"],
            "target": job.get("target"),
            "command": job.get("command") or run.user_argv,
            "tree": Path(run.root).name,
            "host": host_info(),
            "side": side.to_dict() if side is not None else None,
            "seed": job["seed"] + run.rank,
            "rank": run.rank,
            "world_size": run.world,
            "steps_requested": job["steps"],
            "stopped": stopped,
            "error": error,
            "wall_s": time.time() - run.started,
        }
    )
    from porter.verify.tracefile import write_trace

    try:
        write_trace(run.trace_path, manifest, tensors)
    except Exception as exc:  # noqa: BLE001 — a full disk, a quota, an interpreter without safetensors:
        # said as the side's error (its own error first), never the launcher's traceback
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        error = error or {
            "kind": "exception",
            "type": type(exc).__name__,
            "message": f"cannot write the trace {run.trace_path}: {why}",
            "location": None,
            "phase": "writing the trace",
        }
    if error is not None:
        from porter.verify.sides import write_record

        write_record(out / "error.json", error)
    else:
        (out / "done").write_text(stopped)
    # the program's streams, whatever it made them (`sys.stderr = None`: the flush raised after
    # the trace was written, and the side "exited with status 1 … without writing a result")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # os._exit: user threads (data loaders) must not keep the process alive
    _REAL_EXIT(EXIT_USER_ERROR if error is not None else 0)


def _child_exit(exc: BaseException) -> None:
    """End a child the program forked (it came back through the launcher) on `exc` as Python
    ends a process on it: `sys.exit(N)` is status N, `sys.exit("text")` prints the text and is 1,
    an exception prints its traceback and is 1, a KeyboardInterrupt ends it by SIGINT. Its
    status was 0 or 1 whatever it asked for (eighteenth read's leftover): a parent that waits
    for its child's status read another."""
    status = 1
    if isinstance(exc, SystemExit):
        if exc.code is None:
            status = 0
        elif isinstance(exc.code, int):
            status = exc.code & 0xFF  # what the system keeps of any status, as for `exit()`
        else:
            with contextlib.suppress(Exception):
                print(exc.code, file=sys.stderr)
    else:
        with contextlib.suppress(Exception):
            traceback.print_exception(exc)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    if isinstance(exc, KeyboardInterrupt):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 128 + signal.SIGINT  # (where the signal is blocked)
    _REAL_EXIT(status)


def _program_line(frame, root: str) -> str | None:
    """`file:line` of the innermost frame from `frame` out that is in the program's tree."""
    top = root.rstrip("/") + "/"
    while frame is not None:
        if frame.f_code.co_filename.startswith(top):
            return f"{os.path.relpath(frame.f_code.co_filename, root)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _at(line: str | None) -> str:
    return f" at {line}" if line else ""


def _exit_record(status: int, out: Path, root: str) -> dict:
    """The error record of `os._exit(status)` with a status other than 0, at the program's
    line that called it, as `sys.exit(status)` is described."""
    frames = traceback.extract_stack(sys._getframe(2))
    user = [f for f in frames if f.filename.startswith(root.rstrip("/") + "/")]
    return {
        "kind": "exception",
        "type": "os._exit",
        "message": f"the program called os._exit({status})",
        "location": f"{os.path.relpath(user[-1].filename, root)}:{user[-1].lineno}" if user else None,
        "in_user_code": bool(user),
        "phase": (out / "phase.txt").read_text() if (out / "phase.txt").is_file() else "?",
    }


def _recorder(job: dict, side, root: str):
    """The recorder the job asks for (None: the run records nothing, only its outcome)."""
    from porter.verify.recorder import Recorder

    if not job.get("record", True):
        return None
    return Recorder(
        job["steps"],
        side,
        root,
        warmup=job.get("warmup", 2),
        sample=job.get("sample"),
        module_calls=job.get("module_calls"),
        ops=job.get("ops", True),
        syncs=job.get("syncs", True),
        perturb=job.get("perturb", False),
        reference_shapes=job.get("reference_shapes"),
        reference_listed=job.get("reference_listed"),
    )


def _run_command(user_argv: list[str]) -> str:
    """Run the user's command; how it stopped. Reaching the steps asked for stops it (StopRun),
    and so does a clean sys.exit; any other exit status is an error (raised)."""
    from porter.verify.recorder import StopRun

    try:
        run_user_command(user_argv)
    except StopRun:
        return "steps reached"
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
    return "script ended"


def _failure(exc: BaseException, out: Path, root: str) -> dict:
    """The error record of a run that raised (the phase it was in; a timeout says so), with
    the traceback printed to the run's stderr."""
    from porter.verify.worker import describe_exception

    error = describe_exception(exc, root)
    error["phase"] = (out / "phase.txt").read_text() if (out / "phase.txt").is_file() else "?"
    if isinstance(exc, TimedOut):
        error["kind"] = "timeout"
    with contextlib.suppress(Exception):  # to the run's log; the program may have closed its stderr
        if isinstance(exc, ProgramUnreadable):  # no line of it ran: nothing of porter's to show
            print(f"python: {exc}", file=sys.stderr)
        else:
            traceback.print_exc()
    return error


# where torch_xla's torch.compile backend ("openxla") runs: dynamo's graph bridge
_XLA_DYNAMO = f"{os.sep}torch_xla{os.sep}_dynamo{os.sep}"


def _compiled_failure(error: dict, exc: BaseException) -> None:
    """The error of a recorded run that raised inside torch_xla's torch.compile bridge: said as
    that, not as the program's line. Porter's module hooks run inside the compiled model (dynamo
    traces global hooks); a port whose `torch.compile(backend="openxla")` ran alone failed under
    `trace record` in the bridge's CPU-fallback step ("Executable expected parameter 1 of size 1
    but got buffer with incompatible size 4"), and the error named the program's call of the
    model (twenty-third read; the cause, porter's hook on the graph modules the bridge runs, is
    gone since the twenty-fourth: `recorder._compilers_graph`)."""
    if not _COMPILED or not any(_XLA_DYNAMO in f.filename for f in traceback.extract_tb(exc.__traceback__)):
        return
    called = error.get("location")
    error["message"] = (
        "porter's recording of a torch.compile'd model failed inside torch_xla's compile bridge "
        f"(torch_xla/_dynamo), not at the program's line{f' ({called} called the model)' if called else ''}: "
        "porter's module hooks run inside the compiled model. Record with --eager (torch.compile "
        "returns the model uncompiled); a port that fails there too, or without porter, is at "
        f"fault itself. torch_xla said: {error.get('message', '')}"
    )[:2000]
    error["location"], error["in_user_code"] = None, False


def _finish_recording(recorder, root: str, *, describe: bool) -> tuple[dict, dict, dict | None]:
    """The trace's manifest and tensors; when writing them fails, empty ones and (when the run
    had no error of its own to report: `describe`) the error."""
    try:
        manifest, tensors = recorder.finish() if recorder is not None else ({}, {})
        return manifest, tensors, None
    except BaseException as exc:
        if not describe:
            return {}, {}, None
        from porter.verify.worker import describe_exception

        error = describe_exception(exc, root)
        error["phase"] = "writing the trace"
        return {}, {}, error


if __name__ == "__main__":
    from porter.verify.entry import own_entry  # porter's root is on PYTHONPATH (porter.verify.sides.side_env)

    own_entry()
    sys.exit(main(sys.argv))
