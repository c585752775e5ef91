"""`porter parity-check`: prove the port computes what the original computes, and measure
what will make it slow. Registered in porter/cli/__init__.py as
`app.command("parity-check")(parity_check)`."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

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
    Timeout,
)
from porter.core.textsafe import plain, printable


def parity_check(
    original: Path | None = typer.Option(None, "--original", help="The original (CUDA) source tree."),
    ported: Path | None = typer.Option(None, "--ported", help="The ported source tree."),
    entry: str | None = typer.Option(
        None, "--entry", help="MODULE:FACTORY; FACTORY() returns the model, or (model, loss_fn, optimizer_factory)."
    ),
    inputs: str | None = typer.Option(
        None, "--inputs", help="MODULE:FN; FN() returns example inputs (default: example_inputs next to the factory)."
    ),
    target: RunTarget = None,
    train_steps: int | None = typer.Option(
        None, "--train-steps", help="Compare the loss curve over N optimizer steps."
    ),
    dtype: str | None = typer.Option(
        None, "--dtype", help="float32 (default), bfloat16 or float16 (both sides under autocast)."
    ),
    rtol: Rtol = None,
    atol: Atol = None,
    report: ParityReport = None,
    timeout: Timeout = None,
    repeats: int | None = typer.Option(None, "--repeats", help="Timed steps per side (default 5)."),
    warmup: int | None = typer.Option(None, "--warmup", help="Warm-up steps before timing (default 2)."),
    explain: bool | None = typer.Option(
        None, "--explain/--no-explain", help="Look for graph breaks with torch._dynamo.explain."
    ),
    keep: bool = typer.Option(False, "--keep", help="Keep the work folder (logs, tensors) and print its path."),
    steps: Steps = None,
    reference_trace: Path | None = typer.Option(
        None,
        "--reference-trace",
        help="Script mode: compare against this trace (porter trace record) instead of running --original.",
    ),
    eager: Eager = False,
    seed: Seed = 0,
    max_output: MaxOutput = 4.0,
    max_memory: MaxMemory = None,
    count_ops: CountOps = True,
    noise_floor: NoiseFloor = True,
    device_rng: DeviceRng = False,
    command: list[str] | None = typer.Argument(
        None, help="Script mode: after `--`, the training command, e.g. -- python train.py --max-iters 20."
    ),
) -> None:
    """Run the original and the ported model in separate processes on the same weights and
    inputs; compare outputs, per-layer outputs, gradients and losses; measure the port's
    performance gaps. Script mode (a command after `--`): run the training script in each
    tree and compare the two runs step by step. This EXECUTES the code in both trees.
    Exit 0 parity holds, 1 it fails, 2 error."""
    from porter.verify import build_config, run_parity
    from porter.verify.report import print_terminal, write_report

    if not command and (
        steps is not None or reference_trace is not None or not count_ops or not noise_floor or device_rng
    ):
        typer.echo(
            "porter parity-check: --steps, --reference-trace, --no-count-ops, --no-noise-floor "
            "and --device-rng are for script mode: give the training command after `--`",
            err=True,
        )
        raise typer.Exit(2)
    _check_report(report)
    work_outlives_the_reader(report is not None)  # the report is written, the verdict kept
    if command:
        _script_mode(
            original,
            ported,
            target,
            steps,
            reference_trace,
            rtol,
            atol,
            report,
            timeout,
            eager,
            seed,
            max_output,
            max_memory,
            count_ops,
            keep,
            command,
            noise_floor,
            device_rng,
        )

    cli = {
        "original": original,
        "ported": ported,
        "entry": entry,
        "inputs": inputs,
        "target": target,
        "train_steps": train_steps,
        "dtype": dtype,
        "rtol": rtol,
        "atol": atol,
        "report": report,
        "timeout": timeout,
        "repeats": repeats,
        "warmup": warmup,
        "explain": explain,
    }
    try:
        cfg = build_config(cli)
    except (ValueError, TypeError) as exc:
        typer.echo(f"porter parity-check: {printable(exc)}", err=True)
        raise typer.Exit(2) from None
    result = run_parity(cfg, keep=keep)
    print_terminal(result, console)
    if keep:
        _say_work_folder(result.workdir)
    if cfg.report is not None:
        try:
            write_report(result, cfg.report)
        except (ValueError, OSError) as exc:
            typer.echo(f"porter parity-check: {_report_error(cfg.report, exc)}", err=True)
            raise typer.Exit(2) from None
    raise typer.Exit(result.exit_code)


def _script_mode(
    original,
    ported,
    target,
    steps,
    reference_trace,
    rtol,
    atol,
    report,
    timeout,
    eager,
    seed,
    max_output,
    max_memory,
    count_ops,
    keep,
    command,
    noise_floor,
    device_rng,
) -> None:
    from porter.verify.script import ScriptConfig, check_python, run_script
    from porter.verify.scriptreport import print_terminal, write_report
    from porter.verify.tracefile import MALFORMED

    if ported is None:
        typer.echo("porter parity-check: script mode needs --ported DIR", err=True)
        raise typer.Exit(2)
    from porter.verify.tracefile import report_names_a_trace

    if report_names_a_trace(report, reference_trace) is not None:  # (the recorded run was overwritten)
        typer.echo(
            f"porter parity-check: --report {printable(report)} is the trace {printable(reference_trace)} itself: "
            "choose another name",
            err=True,
        )
        raise typer.Exit(2)
    stdin = command_stdin("parity-check")
    try:
        cfg = ScriptConfig(
            stdin=stdin,
            original=original,
            ported=ported,
            command=tuple(command),
            reference_trace=reference_trace,
            steps=steps or 10,
            target=target or "xla",
            timeout=timeout or 600.0,
            seed=seed,
            rtol=rtol,
            atol=atol,
            report=report,
            eager=eager,
            max_output=int(max_output * 2**20),
            ops=count_ops,
            memory_limit=int(max_memory * 2**30) if max_memory else None,
            noise_floor=noise_floor,
            device_rng=device_rng,
        )
        check_python(cfg, "ported")  # before either side runs, not at the writing of a trace
    except (ValueError, TypeError) as exc:
        typer.echo(f"porter parity-check: {printable(exc)}", err=True)
        raise typer.Exit(2) from None
    try:
        result = run_script(cfg, keep=keep)
        print_terminal(result, console)  # its tables read the traces' fields (made whole, then printed)
    except MALFORMED as exc:
        _malformed_reference(reference_trace, exc)
    if keep:
        _say_work_folder(result.workdir)
    if report is not None:
        try:
            write_report(result, report)
        except (ValueError, OSError) as exc:  # (a ValueError of its own: the file name's suffix)
            if reference_trace is not None and isinstance(exc, ValueError) and not str(exc).startswith("--report"):
                _malformed_reference(reference_trace, exc)
            typer.echo(f"porter parity-check: {_report_error(report, exc)}", err=True)
            raise typer.Exit(2) from None
        except MALFORMED as exc:
            _malformed_reference(reference_trace, exc)
    raise typer.Exit(result.exit_code)


def _say_work_folder(workdir: str | None) -> None:
    """--keep's line, on the console as the tables before it: a reader that left
    (`parity-check --keep --report r.md | head -1`) is the console's to handle. `typer.echo`
    wrote past it, and its broken pipe ended the run before the report: none written, exit 0
    ("parity holds") where parity failed (thirtieth read, second wave)."""
    console.print(f"work folder: {plain(workdir)}", soft_wrap=True, highlight=False)


def _malformed_reference(reference_trace: Path | None, exc: BaseException) -> NoReturn:
    """A --reference-trace FILE (recorded elsewhere) whose field, past what the trace reader
    checks, is not what porter writes: one line naming the file, as `trace compare` says it (it
    was a traceback). Traces made in this run are porter's own: an error there is raised."""
    if reference_trace is None:
        raise exc
    typer.echo(
        f"porter parity-check: cannot compare with --reference-trace {printable(reference_trace)}: a field is not "
        f"what porter writes ({type(exc).__name__}: {printable(str(exc)[:200])})",
        err=True,
    )
    raise typer.Exit(2) from None


def _check_report(report: Path | None) -> None:
    """A --report porter cannot write is said before the run (`check_output`), not after it."""
    from porter.pipeline.writer import check_output

    if report is None:
        return
    try:
        check_output(report)
    except OSError as exc:
        typer.echo(f"porter parity-check: {_report_error(report, exc)}", err=True)
        raise typer.Exit(2) from None


def _report_error(report: Path, exc: Exception) -> str:
    """The one line for a --report that cannot be written, naming it as lint's and trace's do
    (a folder on the way that is a file said only "f is not a folder"); a ValueError (the
    suffix) names it already."""
    if isinstance(exc, OSError):
        return printable(f"cannot write --report {report}: {exc.strerror or exc}")
    return printable(exc)
