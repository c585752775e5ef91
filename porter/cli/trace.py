"""`porter trace`: record a training run on one machine, compare it with a run on another,
and read which of its operators a target runs natively before renting the hardware."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import typer

from porter.cli.common import command_stdin, console, work_outlives_the_reader
from porter.cli.options import (
    Atol,
    CountOps,
    DeviceRng,
    Eager,
    MaxMemory,
    MaxOutput,
    NoiseFloor,
    ParityReport,
    Rtol,
    RunTarget,
    Seed,
    Steps,
    Target,
    Timeout,
    written_file,
)
from porter.core.textsafe import lines_printable, printable

trace_app = typer.Typer(
    help="Record a training run as a portable trace, compare two traces, check a trace's operators against a target.",
    no_args_is_help=True,
)


def _write_report(report: Path, text: str) -> None:
    """`text` into the file named by --report; a name that cannot be written (its folder a
    file, /proc) is one line, exit 2 (it was an OSError traceback in `trace ops`)."""
    from porter.pipeline.writer import write_output

    try:
        write_output(report, text)
    except OSError as exc:
        raise _fail(f"cannot write --report {report}: {exc.strerror or exc}") from None


def _not_an_input(report: Path | None, *traces: Path) -> None:
    """A --report that names one of the traces read (the same path, a link to it, a hard
    link) is refused before anything is written: a trace named `run.json` or `run.md` was
    overwritten by its own report (a recorded run lost)."""
    from porter.verify.tracefile import report_names_a_trace

    trace = report_names_a_trace(report, *traces)
    if trace is not None:
        raise _fail(f"--report {report} is the trace {trace} itself: choose another name")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"porter trace: {printable(message)}", err=True)  # a manifest's text is shown, never obeyed
    return typer.Exit(2)


def _output(output: Path) -> Path:
    """`trace record -o`'s file, checked before the command runs. The name as given, made
    absolute, never resolved: a link of that name is replaced, not written through (its target
    was written); a name that cannot be written is said before the command runs, not after it;
    and a file there is replaced only when it is a trace (`-o train.py` overwrote the script it
    ran, after the run: seventeenth read)."""
    from porter.pipeline.writer import check_output
    from porter.verify.tracefile import holds_a_trace

    dest = Path(os.path.abspath(output))
    if dest.is_dir():
        raise _fail(f"-o {output}: is a folder")
    if dest.exists() and not dest.is_symlink() and not holds_a_trace(dest):
        raise _fail(f"-o {output}: exists and is not a porter trace (it is replaced only when it is one)")
    try:
        # (as given: the line names its folder as the user did) a folder porter cannot write in is
        # said now: it was said after the whole run, its trace lost (nineteenth read's leftover)
        check_output(Path(output))
    except OSError as exc:
        raise _fail(f"cannot write -o {output}: {exc.strerror or exc}") from None
    return dest


@trace_app.command("record")
def record_cmd(
    output: Path = typer.Option(
        ..., "-o", "--output", parser=written_file, help="The trace file to write (.safetensors)."
    ),
    side: str = typer.Option(
        "original",
        "--side",
        help="original: CUDA code (CUDA, else the CPU "
        "through porter's CUDA shim); ported: the port on --target (or XLA:CPU).",
    ),
    target: RunTarget = None,
    steps: Steps = None,
    seed: Seed = 0,
    timeout: Timeout = None,
    eager: Eager = False,
    max_output: MaxOutput = 4.0,
    max_memory: MaxMemory = None,
    count_ops: CountOps = True,
    noise_floor: NoiseFloor = True,
    device_rng: DeviceRng = False,
    command: list[str] = typer.Argument(
        ..., help="After `--`: the training command, run in the current folder, e.g. -- python train.py --max-iters 20."
    ),
) -> None:
    """Run COMMAND once and write what it did (loss, grad norm, learning rate, step time per
    step; module statistics, initial weights and ATen operators at the first step; the
    performance probes; where it ran) to one trace file. EXECUTES the command. Exit 0 when
    the trace was written from a run that finished, 2 otherwise (the trace still says why)."""
    import tempfile

    from porter.verify.procs import WorkerSet, sweep_left
    from porter.verify.script import ScriptConfig, attach_floor, check_python, noise_run, record

    if side not in ("original", "ported"):
        raise _fail("--side must be original or ported")
    dest = _output(output)
    work_outlives_the_reader(True)  # the trace is the work: written, with its own code
    role = "reference" if side == "original" else "ported"
    stdin = command_stdin("trace")
    try:
        cfg = ScriptConfig(
            stdin=stdin,
            ported=None,
            command=tuple(command),
            steps=steps or 10,
            target=target or "xla",
            timeout=timeout or 600.0,
            seed=seed,
            eager=eager,
            ops=count_ops,
            max_output=int(max_output * 2**20),
            memory_limit=int(max_memory * 2**30) if max_memory else None,
            noise_floor=noise_floor,
            device_rng=device_rng,
        )
        check_python(cfg, role)  # before the run, not at the writing of its trace
    except (ValueError, TypeError) as exc:
        raise _fail(str(exc)) from None
    sweep_left("porter-trace-")  # what a porter killed outright (kill -9) left
    with tempfile.TemporaryDirectory(prefix="porter-trace-") as tmp, WorkerSet() as workers:
        workers.add_temp_dir(Path(tmp))
        # the run writes its trace in porter's own folder, and porter writes it at -o once,
        # whole, with its noise floor, when the run is over: written at -o by the run and read
        # back from there, a second `trace record -o` of the same name running meanwhile had
        # each report, and add its noise floor to, the other's trace (twenty-second read)
        rec = record(role, Path.cwd(), cfg, Path(tmp) / "trace.safetensors", Path(tmp), workers)
        if role == "reference" and rec.status == "ok" and rec.trace is not None:
            try:
                floor = (
                    noise_run(Path.cwd(), cfg, rec, Path(tmp) / "noise", workers)
                    if noise_floor
                    else {"measured": False, "why": "recorded with --no-noise-floor"}
                )
            except (KeyboardInterrupt, SystemExit) as exc:
                _floor_interrupted(exc, rec, dest)
                raise
            attach_floor(rec, floor, None)
        _placed(rec, dest)
    from rich.text import Text

    if rec.trace is not None:
        m = rec.trace.manifest
        console.print(Text(_wrote(output, output.stat().st_size, m)))
    if rec.status != "ok":
        e = rec.error or {}
        # the user's exception text, its controls shown (rich drops a BEL, backspace or CR from a Text)
        console.print(
            Text(printable(f"the run did not finish: {e.get('type', '')}: {e.get('message', '')}"), style="red")
        )
        if rec.log_tail:  # its lines as the terminal showed them, its other controls shown as escapes
            console.print(Text(lines_printable(rec.log_tail[-1500:])))
        raise typer.Exit(2)


def _wrote(output: Path, size: int, m: dict) -> str:
    """The line `trace record` ends with, shown as text: the -o name, and the side's label and
    how the run stopped (from the manifest the user's run wrote). Given to a `Text` raw, rich
    dropped a CR, BEL, BS, VT or FF in them (`-o $'a\\rb.pt'` was said as `ab.pt`: twenty-fifth
    read); the console escapes the other controls."""
    from porter.verify.iterations import iterations_spanned

    spanned = iterations_spanned(m)
    return printable(
        f"wrote {output} ({size / 1024:.1f} KiB): "
        f"{m.get('steps_recorded', 0)} step(s) on {(m.get('side') or {}).get('label')}, "
        f"{len(m.get('modules', []))} module outputs, {len(m.get('ops', []))} operator "
        f"entries; stopped: {m.get('stopped')}" + (f"; {spanned}" if spanned else "")
    )


def _placed(rec, dest: Path) -> None:
    """The run's trace written at `dest` whole (a link there replaced, never written through);
    one that cannot be written is one line, exit 2, and the file there is kept."""
    from porter.verify.tracefile import write_trace

    if rec.trace is None:  # the run wrote none (killed before it could): -o is left as it was
        return
    try:
        write_trace(dest, rec.trace.manifest, rec.trace.tensors)
    except OSError as exc:
        raise _fail(f"cannot write the trace {dest}: {exc.strerror or exc}") from None


def _floor_interrupted(exc: BaseException, rec, dest: Path) -> None:
    """SIGINT or SIGTERM while the noise floor's second run went on: the trace at `dest` is the
    run's, whole, without its floor. That is written into it (a comparison says "noise floor not
    measured" and why) and said in the line that says the run was interrupted; it was only
    "porter: interrupted (SIGINT)." (eighteenth read's leftover)."""
    from rich.text import Text

    from porter.cli.common import err_console
    from porter.cli.interrupt import INTERRUPTED, deferred, said, signal_name
    from porter.verify.script import attach_floor

    code = exc.code if isinstance(exc, SystemExit) else None
    if isinstance(exc, SystemExit) and code not in INTERRUPTED:
        _placed(rec, dest)
        return  # not a signal: ends as it would have
    how = signal.Signals(code - 128).name if isinstance(code, int) else signal_name(exc)
    with deferred():
        attach_floor(rec, {"measured": False, "why": f"its run was interrupted ({how})"}, None)
        try:
            _placed(rec, dest)
            left = f"{dest} holds the run's trace without its noise floor (it says so)."
        except typer.Exit:  # said in its line
            left = f"{dest} was not written."
    said()
    err_console.print(
        Text(printable(f"porter: interrupted ({how}) during the noise floor's run: {left}")), soft_wrap=True
    )


@trace_app.command("compare")
def compare_cmd(
    reference: Path = typer.Argument(..., help="The trace of the original run."),
    ported: Path = typer.Argument(..., help="The trace of the ported run."),
    target: RunTarget = None,
    rtol: Rtol = None,
    atol: Atol = None,
    report: ParityReport = None,
) -> None:
    """Compare two traces made anywhere: loss curves, learning rate and gradient norm per
    step, the first diverging module, initial weights, tying, performance gaps. Exit 0
    parity holds, 1 it fails, 2 error."""
    from porter.verify.scriptreport import print_terminal, write_report
    from porter.verify.tracecmp import compare_traces
    from porter.verify.tracefile import MALFORMED, TraceError, read_trace

    _not_an_input(report, reference, ported)
    work_outlives_the_reader(report is not None)  # the report is written, the verdict kept
    try:
        ref, port = read_trace(reference), read_trace(ported)
    except TraceError as exc:
        raise _fail(str(exc)) from None
    try:
        result = compare_traces(
            ref,
            port,
            rtol=rtol,
            atol=atol,
            config={
                "mode": "trace compare",
                "target": target or _recorded_for(port),
                "reference_trace": str(reference),
                "ported_trace": str(ported),
            },
        )
        print_terminal(result, console)  # its tables read the traces' fields too (made whole, then printed)
    except MALFORMED as exc:  # past what read_trace checks: still the files', never a traceback
        raise _fail(_malformed(reference, ported, exc)) from None
    if report is not None:
        try:
            write_report(result, report)
        except OSError as exc:
            raise _fail(f"cannot write --report {report}: {exc.strerror or exc}") from None
        except MALFORMED as exc:  # (a ValueError of its own: the file name's suffix)
            raise _fail(str(exc) if str(exc).startswith("--report") else _malformed(reference, ported, exc)) from None
    raise typer.Exit(result.exit_code)


def _recorded_for(port) -> str:
    """Without --target, the target the port's trace was recorded for (xla where it names none)."""
    from porter.verify.devices import TARGET_KINDS

    recorded = port.manifest.get("target")
    return recorded if recorded in TARGET_KINDS else "xla"


def _malformed(reference: Path, ported: Path, exc: BaseException) -> str:
    return (
        f"cannot compare {reference} and {ported}: a field is not what porter writes "
        f"({type(exc).__name__}: {str(exc)[:200]})"
    )


@trace_app.command("ops")
def ops_cmd(
    trace: Path = typer.Argument(..., help="A trace file (porter trace record)."),
    target: Target = None,
    report: Path | None = typer.Option(None, "--report", parser=written_file, help="Write the table: .json or .md."),
) -> None:
    """Per ATen operator the run executed: native, CPU fallback, unsupported, host (ran on
    CPU tensors by design) or unknown, with the evidence. Exit 1 when an operator falls
    back or is unsupported, 0 otherwise (unknown operators are listed, not passed)."""
    import json

    from porter.verify.opsupport import classify, summary
    from porter.verify.report import print_sections
    from porter.verify.tracecmp import unread
    from porter.verify.tracefile import MALFORMED, TraceError, read_trace

    if target not in ("neuron", "tpu", "xla"):
        raise _fail(
            "--target is required: one of neuron, tpu or xla"
            if target is None
            else f"--target {target!r}: choose one of neuron, tpu or xla"
        )
    _not_an_input(report, trace)
    work_outlives_the_reader(report is not None)
    try:
        t = read_trace(trace)
    except TraceError as exc:
        raise _fail(str(exc)) from None
    try:
        rows, data = classify(t, target)
    except MALFORMED as exc:
        raise _fail(f"{trace}: a field is not what porter writes ({type(exc).__name__}: {str(exc)[:200]})") from None
    counts = summary(rows)
    said = unread(t, "the trace")  # its tensors no manifest entry names: not read here either
    side = (t.manifest.get("side") or {}).get("label", "?")
    notes = [
        ", ".join(f"{k}: {v}" for k, v in counts.items()),
        f"scope: {t.manifest.get('ops_scope', '?')}",
        f"caveat: {data.get('caveat', '')}",
        *said,
    ]
    notes += [
        f"source: {s['what']} — {s['where']} (read {s['read']}; used for: {s['used_for']})"
        for s in data.get("sources", [])
    ]
    print_sections(
        f"{target}: operators of {trace.name} (recorded on {side})",
        "fail" if counts["cpu_fallback"] or counts["unsupported"] else "pass",
        [
            (
                "Operators",
                ["operator", "calls", "dtypes", "devices", "status", "evidence"],
                [[r.op, str(r.count), ",".join(r.dtypes), ",".join(r.devices), r.status, r.evidence] for r in rows],
                notes,
            )
        ],
        console,
    )
    if report is not None:
        payload = {
            "schema": "porter.trace-ops/1",
            "target": target,
            "trace": str(trace),
            "recorded_on": side,
            "summary": counts,
            "scope": t.manifest.get("ops_scope"),
            "sources": data.get("sources", []),
            "caveat": data.get("caveat"),
            "unread": said,
            "ops": [r.__dict__ for r in rows],
        }
        from porter.report import name_suffix

        suffix = name_suffix(report)  # (`--report .json`: `Path.suffix` is empty)
        if suffix == ".json":
            _write_report(report, json.dumps(payload, indent=2))
        elif suffix in (".md", ".markdown"):
            from porter.core.textsafe import markdown_text
            from porter.report.markdown import _cell, _code_cell, _inline

            # operator names, dtypes, the side's label and the file name come from the trace
            # (another machine's): escaped as the Markdown report escapes, one line each
            lines = [
                f"# {_inline(target)}: operators of {_inline(trace.name)}",
                "",
                _inline(f"Recorded on {side}. " + ", ".join(f"{k}: {v}" for k, v in counts.items())),
                "",
                "| operator | calls | dtypes | status | evidence |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {_code_cell(r.op)} | {_cell(r.count)} | {_cell(', '.join(r.dtypes))} | {_cell(r.status)} | "
                f"{_cell(r.evidence)} |"
                for r in rows
            ]
            lines += ["", _inline(f"Caveat: {data.get('caveat', '')}"), *(f"\n{_inline(u)}" for u in said)]
            _write_report(report, markdown_text("\n".join(lines) + "\n"))  # (a noncharacter: no page holds it)
        else:
            raise _fail(f"--report {report}: use a .json or .md file name")
    raise typer.Exit(1 if counts["cpu_fallback"] or counts["unsupported"] else 0)


__all__ = ["trace_app"]
