"""Script mode: run the user's training command in each tree, record both runs, compare.

    porter parity-check --original A --ported B [--steps N] -- python train.py --max-iters 20

Each side runs `porter.verify.launch` around the command in its own process group, its tree
as the working directory, under a timeout, with capped output (porter.verify.procs). The
reference may instead come from a trace recorded on another machine (`--reference-trace`).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from porter.core.reading import open_regular
from porter.verify.config import TARGETS
from porter.verify.listed import listed_prefixes
from porter.verify.procs import DEFAULT_MAX_OUTPUT, WorkerSet, log_tail, sweep_left
from porter.verify.sides import classify, read_record, side_env
from porter.verify.tracecmp import ScriptResult, compare_traces, side_summary, where
from porter.verify.tracefile import Trace, TraceError, merge_ranks, read_trace

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def python_of(command: list[str]) -> str:
    """The interpreter that starts the command; porter runs the rest inside it."""
    if not command:
        raise ValueError("no command given: put it after `--`, e.g. -- python train.py --max-iters 20")
    exe = command[0]
    if Path(exe).resolve() == Path(sys.executable).resolve() or _PYTHON.match(Path(exe).name):
        found = shutil.which(exe)
        if found is None:
            raise ValueError(f"{exe!r} is not on PATH")
        return found
    if Path(exe).name == "torchrun":
        found = shutil.which(exe)
        if found is None:
            raise ValueError(f"{exe!r} is not on PATH")
        line = _shebang(found)
        if line.startswith("#!") and line[2:].split() and _PYTHON.match(Path(line[2:].split()[0]).name):
            return line[2:].split()[0]  # torchrun's own interpreter (its shebang)
        return sys.executable
    raise ValueError(
        f"the command must start with a Python interpreter (python train.py …) or "
        f"torchrun, not {exe!r}: porter records from inside that interpreter. Other "
        "wrappers (bash scripts, accelerate launch) are not supported: run the training "
        "script with python or torchrun directly"
    )


# what a side's interpreter must hold: the recorder runs on torch, and the trace is a safetensors file
SIDE_NEEDS = ("torch", "safetensors")
SIDE_TEMPORARIES = "porter-side-"  # each side's TMPDIR, a folder of its own (`record`)
_FIND = "import importlib.util as u, sys; print(' '.join(m for m in sys.argv[1:] if u.find_spec(m) is None))"


def check_python(cfg: ScriptConfig, role: str) -> None:
    """ValueError (one line: the interpreter and what it lacks) when the command's python
    cannot run a side: a python without safetensors ran the whole program and failed at the
    writing of its trace, the run lost (twentieth read's leftover: TorchTPU's python). Found
    with `find_spec` in the side's environment (its PYTHONPATH counts), importing nothing; a
    probe that cannot run says nothing (the run itself says why)."""
    import subprocess

    try:
        probe = subprocess.run(
            [cfg.python, "-c", _FIND, *SIDE_NEEDS],
            env=side_env(role, cfg),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    missing = probe.stdout.split() if probe.returncode == 0 else []
    if missing:
        raise ValueError(
            f"{cfg.python} has no {' and no '.join(missing)}, which porter needs in the interpreter "
            f"that runs the command: install it there ({cfg.python} -m pip install {' '.join(missing)})"
        )


def command_stdin() -> tuple[Path | None, str | None]:
    """The command's standard input, and a line to say where porter drops one. A regular file
    (`< data.txt`) is given to every run of the command (the noise floor's, the port's) from its
    start, as the command alone would read it. Anything else cannot be read twice, so the runs get
    an empty one; where porter's input is a pipe or socket holding bytes, the line says they are
    not passed on: `echo 7 | porter trace record -- python train.py` recorded the command run
    with an empty input, unsaid (twenty-first read). A terminal or /dev/null: nothing said."""
    import os
    import stat

    try:
        fd = sys.stdin.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):  # no descriptor (a test runner's stdin, closed)
        return None, None
    if stat.S_ISREG(st.st_mode):
        try:
            path = Path(os.readlink(f"/proc/self/fd/{fd}"))
            with open(path, "rb") as again:  # (readable: a descriptor opened to write only is not)
                same = os.fstat(again.fileno())
            if (same.st_dev, same.st_ino) == (st.st_dev, st.st_ino):
                return path, None
        except OSError:
            pass
        return None, "its standard input is a file porter cannot open again: the command gets an empty one"
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        import array
        import fcntl
        import termios

        waiting = array.array("i", [0])
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.FIONREAD, waiting, True)
        if waiting[0] > 0:
            return None, (
                "its standard input is a pipe, which porter cannot give to each run of the command "
                "(the noise floor's, the port's): the command gets an empty one; give it a file (< FILE)"
            )
    return None, None


_SHEBANG_BYTES = 4096  # more than any kernel reads of a `#!` line (Linux: 256)


def _shebang(path: str) -> str:
    """The first line of the file `path` (its `#!` line), read as the kernel reads it: up to
    the first LF, from at most the first few kilobytes of a regular file ("" for anything
    else: a FIFO, a device, a file that cannot be read)."""
    try:
        fh, _ = open_regular(path, limit=None)
        with fh:
            head = fh.read(_SHEBANG_BYTES) or b""
    except OSError:
        return ""
    return head.split(b"\n", 1)[0].decode("utf-8", "replace")


@dataclass(frozen=True)
class Launch:
    """How the command starts its processes: one (`python SCRIPT`), or one per rank through
    torch's own launcher (`torchrun [OPTIONS] SCRIPT`, `python -m torch.distributed.run ...`)."""

    nproc: int  # processes on this node (1: no launcher)
    options: tuple[str, ...]  # the launcher's options, without the script
    script: tuple[str, ...]  # what follows `python`: SCRIPT ARGS, -m MODULE ARGS or -c CODE


def _processes(nproc_per_node: str) -> int:
    """torchrun's `--nproc-per-node`, within what one trace holds (`MAX_TRACE_PROCESSES`)."""
    from porter.verify.tracefile import MAX_TRACE_PROCESSES

    try:
        nproc = int(nproc_per_node)
    except ValueError:
        raise ValueError(f"--nproc-per-node {nproc_per_node}: give the number of processes") from None
    if not 0 < nproc <= MAX_TRACE_PROCESSES:
        raise ValueError(f"--nproc-per-node {nproc}: porter records 1 to {MAX_TRACE_PROCESSES} processes")
    return nproc


def launch_of(command: list[str]) -> Launch:
    """Split a training command into the launcher's options and the script."""
    if Path(command[0]).name == "torchrun":
        options = list(command[1:])
    elif command[1:3] == ["-m", "torch.distributed.run"]:
        options = list(command[3:])
    elif command[1:3] == ["-m", "torch.distributed.launch"]:
        raise ValueError("torch.distributed.launch is deprecated and not supported: use torchrun")
    else:
        return Launch(1, (), tuple(command[1:]))
    from torch.distributed.run import get_args_parser  # torch's own parser for its own options

    try:
        ns = get_args_parser().parse_args(options)
    except SystemExit:
        raise ValueError(f"torchrun options not understood: {' '.join(options)}") from None
    if ns.no_python:
        raise ValueError("torchrun --no-python is not supported: porter records from inside Python")
    if str(ns.nnodes) not in ("1", "1:1"):
        raise ValueError(f"--nnodes {ns.nnodes}: porter runs one node (its ranks as local processes)")
    nproc = _processes(ns.nproc_per_node)
    tail = 1 + len(ns.training_script_args)
    opts = options[:-tail]
    if ns.module:
        opts = [o for o in opts if o not in ("-m", "--module")]
    if not (ns.standalone or ns.rdzv_endpoint or "--master-port" in " ".join(opts).replace("_", "-")):
        opts.append("--standalone")  # a free port on this host, not the default 29500
    script = (["-m"] if ns.module else []) + [ns.training_script, *ns.training_script_args]
    return Launch(nproc, tuple(opts), tuple(script))


@dataclass(frozen=True)
class ScriptConfig:
    ported: Path | None
    command: tuple[str, ...]
    original: Path | None = None
    reference_trace: Path | None = None
    steps: int = 10
    target: str = "xla"
    timeout: float = 600.0
    seed: int = 0
    warmup: int = 2
    rtol: float | None = None
    atol: float | None = None
    report: Path | None = None
    eager: bool = False
    ops: bool = True  # count ATen operators until the first step ends (TorchDispatchMode)
    syncs: bool = True  # count host syncs over the run (TorchFunctionMode)
    record: bool = True  # False: device setup and seeding only (to measure what recording costs)
    noise_floor: bool = True  # run the reference twice to measure the program's own noise
    device_rng: bool = False  # True: each device draws from its own generator (no redirection)
    rng_probe: bool = True  # False: no random-draw mode at all (to measure what it costs)
    max_output: int = DEFAULT_MAX_OUTPUT
    memory_limit: int | None = None  # bytes of address space per side (RLIMIT_AS)
    python: str = field(default="")
    launch: Launch | None = None  # derived from the command
    stdin: Path | None = None  # the command's standard input, a regular file (`command_stdin`)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}: choose one of {', '.join(TARGETS)}")
        if self.steps < 1:
            raise ValueError("--steps must be >= 1")
        if self.timeout <= 0:
            raise ValueError("--timeout must be > 0")
        object.__setattr__(self, "command", tuple(self.command))
        object.__setattr__(self, "python", self.python or python_of(list(self.command)))
        object.__setattr__(self, "launch", self.launch or launch_of(list(self.command)))
        for name in ("original", "ported"):
            path = getattr(self, name)
            if path is not None:
                if not Path(path).is_dir():
                    raise ValueError(f"--{name} {str(path)!r} is not a directory")
                object.__setattr__(self, name, Path(path).resolve())

    def to_dict(self) -> dict:
        data = asdict(self)
        for k in ("original", "ported", "reference_trace", "report"):
            data[k] = None if data[k] is None else str(data[k])
        data["command"] = list(self.command)
        data.pop("python")
        data["processes"] = self.launch.nproc if self.launch else 1
        data.pop("launch")
        data["mode"] = "script"
        return data


@dataclass
class Recorded:
    role: str
    status: str
    trace: Trace | None
    error: dict | None
    wall_s: float
    log_tail: str
    dropped_output: int = 0


def record(
    role: str,
    tree: Path,
    cfg: ScriptConfig,
    trace_path: Path,
    workdir: Path,
    workers: WorkerSet,
    job_extra: dict | None = None,
    env_extra: dict | None = None,
) -> Recorded:
    """Run the command in `tree` as one side and read back its trace."""
    workdir.mkdir(parents=True, exist_ok=True)
    job = {
        "role": role,
        "target": cfg.target,
        "workdir": str(workdir),
        "trace": str(trace_path),
        "steps": cfg.steps,
        "seed": cfg.seed,
        "warmup": cfg.warmup,
        "eager": cfg.eager,
        "ops": cfg.ops,
        "syncs": cfg.syncs,
        "record": cfg.record,
        "rng_redirect": not cfg.device_rng,
        "rng_probe": cfg.rng_probe,
        "command": list(cfg.command),
        "deadline_s": cfg.timeout,
        "stopped_file": str(workdir / "stopped_s.txt"),  # (the side's alarm: `procs.WorkerSet.run`)
        **(job_extra or {}),
    }
    job_path = workdir / "job.json"
    job_path.write_text(json.dumps(job, indent=1))
    log_path = workdir / "log.txt"
    env = side_env(role, cfg)
    env.update(env_extra or {})
    # the run's temporaries in a folder of their own, removed when it ends: a worker ends by
    # `os._exit` (no program's finalizer can hang it), which skipped torch's own (`torch.distributed.nn`
    # makes a `tempfile.TemporaryDirectory()` at import), left in TMPDIR at every run. Not in the work
    # folder, whose path can be long: multiprocessing's sockets are made under TMPDIR (`pymp-*/listener-*`,
    # by which a DataLoader's workers hand over their tensors), past AF_UNIX's 107 bytes the worker's
    # bind failed and the loader waited until the run's deadline (the lead's review of the thirty-second read)
    # Locked while porter lives and swept as the work folders are: a porter killed outright (kill -9)
    # left `porter-side-*` in the user's TMPDIR for good, the program's temporaries in it
    sweep_left(SIDE_TEMPORARIES)
    temporaries = workers.add_temp_dir(Path(tempfile.mkdtemp(prefix=SIDE_TEMPORARIES)))
    env["TMPDIR"] = str(temporaries)
    launch = cfg.launch or Launch(1, (), tuple(cfg.command[1:]))
    # the launcher by its file path: `-m porter.verify.launch` was looked up in the command's
    # folder first, and a project with its own `porter` shadowed it (porter.verify.launch)
    launcher = ["-m", "torch.distributed.run", *launch.options] if launch.nproc > 1 else []
    t0 = time.perf_counter()
    try:
        res = workers.run(
            [cfg.python, *launcher, str(Path(__file__).with_name("launch.py")), str(job_path), "--", *launch.script],
            cwd=tree,
            env=env,
            log_path=log_path,
            timeout=cfg.timeout,
            max_output=cfg.max_output,
            memory_limit=cfg.memory_limit,
            stdin=cfg.stdin,
            stopped_file=Path(job["stopped_file"]),
        )
    finally:
        shutil.rmtree(temporaries, ignore_errors=True)
    wall = time.perf_counter() - t0
    sides = []
    for rank in range(launch.nproc):
        rdir, rtrace = (
            (workdir, trace_path)
            if launch.nproc == 1
            else (
                workdir / f"rank{rank}",
                trace_path.with_name(f"{trace_path.name.removesuffix('.safetensors')}.rank{rank}.safetensors"),
            )
        )
        sides.append(_read_side(res, rdir, rtrace, cfg.timeout))
    failed = [(r, s) for r, s in enumerate(sides) if s[0] != "ok"]
    # the rank whose own code raised, before ranks the launcher stopped because of it
    failed.sort(key=lambda rs: (rs[1][0] != "error", rs[0]))
    status, error, trace = ("ok", None, sides[0][2]) if not failed else (*failed[0][1][:2], sides[0][2])
    if failed and launch.nproc > 1 and error is not None:
        error["message"] = f"rank {failed[0][0]}: " + (error.get("message") or "")
    if launch.nproc > 1 and not failed:
        try:
            trace = merge_ranks([s[2] for s in sides], trace_path)
        except OSError as exc:  # a full disk: the side's error, as the launcher says its own
            trace, status = None, "crashed"
            error = _unwritten(trace_path, exc)
    if error is not None and res.dropped_bytes:
        error["message"] = (error.get("message") or "") + f" (output capped: {res.dropped_bytes} bytes dropped)"
    return Recorded(role, status, trace, error, wall, log_tail(log_path), res.dropped_bytes)


def _read_side(res, workdir: Path, trace_path: Path, timeout: float):
    """(status, error, trace) of one process's run, from what it left in `workdir`."""
    phase = (workdir / "phase.txt").read_text().strip() if (workdir / "phase.txt").is_file() else "startup"
    error = read_record(workdir / "error.json")
    completed = res.returncode == 0 and (workdir / "done").is_file()
    own_alarm = error is not None and error.get("kind") == "timeout"  # the side stopped itself
    if error is not None and own_alarm:
        phase = error.get("phase") or phase
    status, error = classify(res.returncode, res.timed_out, completed, error, phase, timeout)
    if own_alarm:
        status = "timeout"
    trace = None
    if trace_path.is_file():
        try:
            trace = read_trace(trace_path)
        except TraceError as exc:
            if error is None:
                status, error = (
                    "crashed",
                    {"kind": "crashed", "phase": phase, "type": "TraceError", "message": str(exc), "location": None},
                )
    if status == "ok" and trace is None:
        status, error = (
            "crashed",
            {
                "kind": "crashed",
                "phase": phase,
                "type": "no trace",
                "message": "the side finished without writing its trace",
                "location": None,
            },
        )
    return status, error, trace


# a second run that stopped at what its first run left: a FileExistsError, or "already exists" /
# "file exists" in its message (any "exist" also read "operator doesn't exist for this backend"
# as left outputs, and gave that advice for a sparse parameter's NotImplementedError)
_LEFT_OUTPUTS = re.compile(r"FileExistsError|\b(?:already|file) exists\b", re.IGNORECASE)


def noise_run(tree: Path, cfg: ScriptConfig, ref: Recorded, workdir: Path, workers: WorkerSet) -> dict:
    """Run the original once more, changing only floating-point rounding, and measure how far
    the program drifts from itself (porter.verify.noise). Another thread count on the CPU; on a
    GPU, the CPU through the CUDA shim. Ops and host syncs are not counted in this run."""
    from porter.verify import noise

    assert ref.trace is not None
    side = ref.trace.manifest.get("side") or {}
    if side.get("kind") == "cuda":
        how = f"the original run again on the CPU (CUDA shim) instead of {side.get('label')}"
        job, env = {}, {"CUDA_VISIBLE_DEVICES": ""}
    else:
        threads = int(ref.trace.manifest.get("threads") or 1)
        other = 1 if threads > 1 else 2
        how = f"the original run again with {other} CPU thread(s) instead of {threads}"
        job, env = {"threads": other}, {"OMP_NUM_THREADS": str(other), "MKL_NUM_THREADS": str(other)}
    how += ", every module output scaled by 1 ± 2^-17 and every parameter one ulp off before each optimizer step"
    job.update(ops=False, syncs=False, perturb=True)
    again = record(
        "reference", tree, cfg, workdir / "noise.trace.safetensors", workdir, workers, job_extra=job, env_extra=env
    )
    if again.status != "ok" or again.trace is None:
        why = f"the second run of the original did not finish: {_describe(again)}"
        if _LEFT_OUTPUTS.search(why):
            why += (
                " (a program that will not run where its first run left its outputs cannot run "
                "twice in one tree: remove them first, or give --no-noise-floor)"
            )
        return {"how": how, "measured": False, "why": why}
    if again.trace.world_size != ref.trace.world_size:
        return {"how": how, "measured": False, "why": "the second run had another number of ranks"}
    floors = []
    for r in range(ref.trace.world_size):
        floor = noise.measure(ref.trace.rank(r), again.trace.rank(r), how)
        floor.update(measured=True, wall_s=again.wall_s)
        floors.append(floor)
    return floors[0] if len(floors) == 1 else {"measured": True, "ranks": floors}


def attach_floor(rec: Recorded, floor: dict, path: Path | None) -> str | None:
    """The floor belongs to the reference: it travels in its trace, each rank's in its own
    manifest (so `--reference-trace` and `trace compare` judge with it too). A trace file that
    cannot be written again (a full disk) is said (the message), never porter's traceback: the
    file keeps the trace the run wrote, without its floor."""
    from porter.verify.tracefile import write_trace

    assert rec.trace is not None
    per_rank = floor.get("ranks") or [floor] * rec.trace.world_size
    for manifest, f in zip(rec.trace.rank_manifests(), per_rank):
        manifest["noise_floor"] = f
    if path is not None and path.is_file():
        try:
            write_trace(path, rec.trace.manifest, rec.trace.tensors)
        except OSError as exc:
            return _unwritten(path, exc)["message"]
    return None


def _unwritten(path: Path, exc: OSError) -> dict:
    return {
        "kind": "exception",
        "type": type(exc).__name__,
        "message": f"cannot write the trace {path}: {exc.strerror or exc}",
        "location": None,
        "phase": "writing the trace",
    }


def reference_shapes(trace: Trace | None) -> list[tuple[str, list[list[int]], str | None]]:
    """The reference's module keys, output shapes and module types at step 1: the port records
    an output it padded further (a program that pads to a fixed length on XLA) on the region of
    the call of its own key (`Recorder._regions`)."""
    if trace is None:
        return []
    return [(m["key"], [o["shape"] for o in m["outputs"]], m.get("type")) for m in trace.manifest.get("modules", [])]


def reference_listed(trace: Trace | None) -> dict[str, str]:
    """The reference's roots' prefixes in the naming of the `ModuleList` it walks (`model_listed`):
    the port keys a padded output's region by that naming where both sides walk one (`Recorder._regions`)."""
    return listed_prefixes(trace) if trace is not None else {}


def _summary(rec: Recorded):
    s = side_summary(rec.trace, rec.role, rec.status, rec.error, rec.wall_s, rec.log_tail)
    if rec.dropped_output:
        s.notes.append(
            f"its output was over the cap: {rec.dropped_output} bytes were dropped "
            "from the log (the start and the end are kept)"
        )
    return s


def _error_result(cfg: ScriptConfig, recs: list[Recorded], reasons: list[str]) -> ScriptResult:
    sides = {r.role: _summary(r) for r in recs}
    res = ScriptResult(
        "error",
        reasons,
        cfg.to_dict(),
        sides.get("reference"),
        sides.get("ported"),
        where={r.role: where(r.trace) for r in recs},
    )
    from porter.verify.gaps import collect_gaps

    # what the sides measured before they stopped (a port that timed out in a recompile storm
    # still names the line)
    res.gaps = collect_gaps([sides.get("reference"), sides.get("ported")], cfg.target, None)
    return res


def _describe(rec: Recorded) -> str:
    e = rec.error or {}
    what = {"timeout": "timed out", "out_of_memory": "ran out of memory", "crashed": "crashed"}.get(
        e.get("kind", ""), "raised"
    )
    loc = f" at {e['location']}" if e.get("location") else ""
    msg = (e.get("message") or "").strip().splitlines()
    return f"{rec.role} side {what} in phase '{e.get('phase', '?')}'{loc}: {e.get('type', '')}: {msg[0] if msg else ''}"


def run_script(cfg: ScriptConfig, keep: bool = False) -> ScriptResult:
    """Both sides (or the ported side against --reference-trace), compared. The work folder
    (logs, job files, both traces) is removed unless `keep`."""
    t0 = time.perf_counter()
    sweep_left("porter-script-")  # what a porter killed outright (kill -9) left
    base = Path(tempfile.mkdtemp(prefix="porter-script-"))
    try:
        with WorkerSet() as workers:
            if not keep:
                workers.add_temp_dir(base)  # removed if porter is interrupted
            result = _run(cfg, base, workers)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    result.wall_s = time.perf_counter() - t0
    result.workdir = str(base) if keep else None
    return result


def _run(cfg: ScriptConfig, base: Path, workers: WorkerSet) -> ScriptResult:
    if cfg.reference_trace is not None:
        try:
            ref_trace = read_trace(cfg.reference_trace)
        except TraceError as exc:
            return _error_result(cfg, [], [f"--reference-trace: {exc}"])
        err = ref_trace.manifest.get("error")
        ref = Recorded(
            "reference", "error" if err else "ok", ref_trace, err, float(ref_trace.manifest.get("wall_s") or 0.0), ""
        )
    elif cfg.original is None:
        return _error_result(cfg, [], ["give --original DIR or --reference-trace FILE"])
    else:
        ref = record("reference", cfg.original, cfg, base / "reference.trace.safetensors", base / "reference", workers)
    if ref.status != "ok":
        return _error_result(
            cfg, [ref], [_describe(ref), "the ported side was not run: there is no reference to compare with"]
        )
    if cfg.reference_trace is None and cfg.original is not None:
        floor = (
            noise_run(cfg.original, cfg, ref, base / "noise", workers)
            if cfg.noise_floor
            else {"measured": False, "why": "--no-noise-floor"}
        )
        attach_floor(ref, floor, base / "reference.trace.safetensors")
    elif ref.trace is not None and "noise_floor" not in ref.trace.manifest:
        attach_floor(
            ref,
            {
                "measured": False,
                "why": "the reference trace was recorded without it "
                "(porter trace record --no-noise-floor, or an older porter)",
            },
            None,
        )
    assert cfg.ported is not None  # parity-check requires --ported
    port = record(
        "ported",
        cfg.ported,
        cfg,
        base / "ported.trace.safetensors",
        base / "ported",
        workers,
        job_extra={"reference_shapes": reference_shapes(ref.trace), "reference_listed": reference_listed(ref.trace)},
    )
    if port.status != "ok":
        return _error_result(cfg, [ref, port], [_describe(port)])
    assert ref.trace is not None and port.trace is not None  # both sides recorded ("ok")
    result = compare_traces(
        ref.trace,
        port.trace,
        rtol=cfg.rtol,
        atol=cfg.atol,
        config=cfg.to_dict(),
        ref_side=_summary(ref),
        port_side=_summary(port),
    )
    if cfg.reference_trace is not None and result.reference is not None:
        result.reference.notes.append(f"recorded earlier, elsewhere: {cfg.reference_trace}")
    return result


__all__ = ["ScriptConfig", "run_script", "record", "python_of", "check_python", "Recorded"]
