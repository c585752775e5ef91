"""`porter lint`: report what is left to port, in the formats CI systems read, and gate on it.

Exit codes (as ruff): 0 no finding at or above `--fail-on`, 1 findings (or files that could
not be checked), 2 usage, configuration or internal error.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
import sys
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO, NoReturn

import typer

from porter.cli.common import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    check_cache_dir,
    check_paths,
    console,
    effective_config,
    note_if_cache_full,
    note_if_git_unread,
    note_if_cache_off,
    not_an_input,
    err_console,
    settings_of,
    usage_error,
    work_outlives_the_reader,
)
from porter.cli.options import (
    AllowDirty,
    AllowNoVcs,
    CacheDir,
    ConfigFile,
    Exclude,
    ExtendSelect,
    FailOn,
    FileTimeout,
    Ignore,
    Isolated,
    Jobs,
    MigrationReport,
    NoCache,
    Portable,
    Select,
    Target,
    UnsafeFixes,
    read_file,
    written_or_stdout,
    written_file,
)
from porter.core.findings import FileStatus
from porter.analysis.prefilter import NOT_ADMITTED
from porter.lint import lint as run_lint
from porter.lint.baseline import BaselineError, Known, apply_baseline, read_baseline, write_baseline
from porter.lint.fingerprint import identity_path
from porter.lint.formats import FORMATS, TEXT_FORMATS, render
from porter.lint.formats.gitlab import unlocated
from porter.lint.statistics import STATISTICS_FORMATS, render_statistics
from porter.pipeline.writer import check_output, not_a_folder
from porter.core.textsafe import name_bytes, plain


def lint(
    paths: list[Path] = typer.Argument(
        None, help="Files or folders to check (default: the current folder).", show_default=False
    ),
    target: Target = None,
    output_format: str = typer.Option(
        None, "--output-format", help=f"One of {', '.join(FORMATS)} (default: full, or $PORTER_OUTPUT_FORMAT)."
    ),
    output_file: Path = typer.Option(
        None,
        "--output-file",
        "-o",
        parser=written_or_stdout,
        help="Write the output to FILE instead of stdout (`-`: stdout).",
    ),
    fail_on: FailOn = None,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
    statistics: bool = typer.Option(
        False, "--statistics", help="Print the number of findings per code instead of each one."
    ),
    fix: bool = typer.Option(
        False, "--fix", help="Apply the safe fixes (as `porter rewrite`) and report what is left."
    ),
    unsafe_fixes: UnsafeFixes = False,
    portable: Portable = None,
    diff: bool = typer.Option(False, "--diff", help="Print the fixes as a unified diff, write nothing; exit 1 if any."),
    select: Select = None,
    ignore: Ignore = None,
    extend_select: ExtendSelect = None,
    exclude: Exclude = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    jobs: Jobs = None,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    report: MigrationReport = None,
    report_unused_ignores: bool = typer.Option(
        False, "--report-unused-ignores", help="Report suppression comments that silence nothing (PORT100)."
    ),
    baseline: Path = typer.Option(
        None, "--baseline", parser=read_file, help="Report only findings not recorded in this baseline file."
    ),
    write_baseline_to: Path = typer.Option(
        None,
        "--write-baseline",
        parser=written_file,
        # (its exit 2 unsaid, the help told a CI author the step always passes: thirty-fourth read)
        help="Record today's findings in FILE and exit 0 (2 where FILE or a --fix could not be written).",
    ),
    allow_dirty: AllowDirty = False,
    allow_no_vcs: AllowNoVcs = False,
    file_timeout: FileTimeout = None,
) -> None:
    """Check files for CUDA-specific code (CI mode: formats, exit codes, baselines)."""
    paths = list(paths or [Path(".")])
    fmt = _output_format(output_format, fix=fix, diff=diff, baseline=baseline, write_baseline_to=write_baseline_to)
    _refuse_uncounted(output_format, statistics)
    _refuse_ignored({"--diff": diff, "--write-baseline": write_baseline_to}, output_file, statistics, output_format)
    check_paths(paths)
    check_cache_dir(cache_dir, paths, no_cache)
    work_outlives_the_reader(fix)
    eff = effective_config(
        paths,
        config=config,
        isolated=isolated,
        target=target,
        select=select,
        ignore=ignore,
        extend_select=extend_select,
        exclude=exclude,
        fail_on=fail_on,
        portable=portable,
    )
    settings = settings_of(eff, unsafe_fixes=unsafe_fixes)
    if not (fix or diff):
        settings = replace(settings, want_source=False)  # findings only: cheaper per file
    known = _read_known(baseline, settings.target, settings.portable)
    fingerprint_base = _fingerprint_base(baseline, write_baseline_to)
    _check_outputs({"--report": report, "--write-baseline": write_baseline_to, "--output-file": output_file})
    _one_file_each(
        {"--report": report, "--write-baseline": write_baseline_to, "--output-file": output_file},
        {"--baseline": baseline, "--config": config},
    )

    note_if_cache_off(no_cache, paths, cache_dir)
    run = _run(
        paths,
        settings,
        fix=fix,
        report_unused=report_unused_ignores,
        fingerprint_base=fingerprint_base,
        jobs=jobs,
        cache=False if no_cache else None,
        cache_dir=cache_dir,
        file_timeout=file_timeout if file_timeout is not None else eff.file_timeout,
        # only `full` shows a finding's line, and a report may quote the files
        lines=fmt == "full" or report is not None or diff,
    )
    note_if_cache_full()
    note_if_git_unread()
    _print_unread(run)
    read = [r.path for r in run.results]
    for option, named in (
        ("--report", report),
        ("--write-baseline", write_baseline_to),
        ("--output-file", output_file),
    ):
        not_an_input(option, named, read)  # before --fix writes anything (twenty-second read)
    write_failures = _write_fixes(run, paths, allow_dirty=allow_dirty, allow_no_vcs=allow_no_vcs) if fix else 0
    if report is not None:
        _write_migration_report(report, run, settings)
    if write_baseline_to is not None:
        _write_baseline_and_exit(
            write_baseline_to, run, settings.target, settings.portable, fingerprint_base, failed=write_failures > 0
        )
    if known is not None:
        run.findings, run.baselined, run.stale_baseline = apply_baseline(
            run.findings, run.fingerprints, known, _checked(run, fingerprint_base)
        )
    if diff:
        _print_diff_and_exit(run, exit_zero=exit_zero)

    text = render_statistics(run, fmt) if statistics else render(run, fmt)
    _emit(text, output_file, document=fmt not in TEXT_FORMATS and not statistics)
    if fmt == "gitlab" and not statistics:
        _note_unlocated(run)

    if write_failures or any((r.reason or "").startswith("internal error") for r in run.errors):
        raise typer.Exit(EXIT_ERROR)  # a porter bug, not a finding: never let it read as one
    if exit_zero:
        raise typer.Exit(EXIT_OK)
    failed = run.failing(eff.fail_on) or run.errors or run.unread  # as ruff's E902: not read is not a pass
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_OK)


def _output_format(
    output_format: str | None, *, fix: bool, diff: bool, baseline: Path | None, write_baseline_to: Path | None
) -> str:
    """The output format, after refusing the options that contradict each other (before any work)."""
    # an empty `--output-format` (`"$FORMAT"` unset in a CI step) is refused, as `config`'s and
    # `--fail-on`'s are: it chose `full`, into a file SARIF's upload then could not read
    # (twenty-fifth read); an empty variable is unset, as POSIX tools read one
    fmt = output_format if output_format is not None else os.environ.get("PORTER_OUTPUT_FORMAT") or "full"
    if fmt not in FORMATS:
        raise usage_error(f"unknown --output-format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fix and diff:
        raise usage_error("--fix and --diff do not go together (--diff writes nothing)")
    if baseline is not None and write_baseline_to is not None:
        raise usage_error("--baseline and --write-baseline do not go together")
    return fmt


def _refuse_uncounted(output_format: str | None, statistics: bool) -> None:
    """`--statistics` with an `--output-format` its counts are not printed in (SARIF, JUnit, GitHub,
    GitLab) is refused, as ruff 0.17.6 refuses it: the text table went to stdout or into `-o
    porter.sarif`, exit 1 or 0, for the upload after it to fail on (thirty-fourth read). A format
    from PORTER_OUTPUT_FORMAT is a default, not asked of this command: the counts print as text."""
    if statistics and output_format is not None and output_format not in STATISTICS_FORMATS:
        shown = ", ".join(STATISTICS_FORMATS)
        why = f"--statistics prints its counts in {shown}"
        raise usage_error(f"--statistics and --output-format {output_format} do not go together ({why})")


# the options after which lint prints no findings, and what they do instead
_PRINTS_NO_FINDINGS = {
    "--diff": "--diff prints the patch to stdout",
    "--write-baseline": "--write-baseline writes the baseline and exits",
}


def _refuse_ignored(
    given: dict[str, object], output_file: Path | None, statistics: bool, output_format: str | None
) -> None:
    """Refuse `-o`, `--statistics` or `--output-format` where the findings are not printed, and two
    such modes at once. `--diff -o p.patch` printed the patch and wrote no file, unsaid (twenty-seventh
    read; ruff 0.17.6 refuses `--diff --statistics` the same); `--write-baseline b.json -o lint.json`
    wrote the baseline and exited 0 with no `lint.json`, unsaid, for the CI step after it to upload
    (thirty-second read); `--write-baseline b.json --diff` wrote the baseline, printed no patch and
    exited 0 (ruff refuses `--diff --add-noqa`), and `--write-baseline b.json --output-format sarif`
    (or `--diff --output-format json`) printed no SARIF, unsaid (thirty-third read). A format from
    PORTER_OUTPUT_FORMAT is a default, not asked of this command: not refused."""
    named: dict[str, object] = {
        "--output-file": output_file,
        "--statistics": statistics or None,
        "--output-format": output_format,
    }
    named.update((mode, value or None) for mode, value in given.items())
    for mode, value in given.items():
        if not value:
            continue
        for option, other in named.items():
            if option != mode and other is not None:
                raise usage_error(f"{mode} and {option} do not go together ({_PRINTS_NO_FINDINGS[mode]})")


def _one_file_each(outputs: dict[str, Path | None], inputs: dict[str, Path | None]) -> None:
    """Exit 2, before the run, where two options name one file. `-o x.json --report x.json`
    wrote the report and then the findings over it, unsaid; `--baseline b.json -o b.json` (or
    `--report b.json`) replaced the baseline the run read with its output, exit 0 (thirty-second
    read). An output's name is replaced, not written through (`write_output`): it is the file of
    that name in its folder; an input is the file it leads to."""
    seen: dict[tuple[str, str], str] = {}
    named = [(o, p, True) for o, p in inputs.items()] + [(o, p, False) for o, p in outputs.items()]
    for option, path, read in named:
        if path is None:
            continue
        place = _file_place(path, follow=read)
        if place in seen:
            raise usage_error(f"{seen[place]} and {option} name the same file ({path}): choose another name for one")
        seen[place] = option


def _file_place(path: Path, *, follow: bool) -> tuple[str, str]:
    """The folder and name of the file `path` names: its links followed where it is read, its
    folder's alone where it is written (a link of its name is replaced)."""
    where = os.path.realpath(path) if follow else os.path.join(os.path.realpath(path.parent), path.name)
    return os.path.split(where)


def _checked(run, base: Path | None) -> Callable[[str], bool]:
    """Whether the run checked the file a baseline entry names (relative to `base`, the
    baseline's folder): it read it, or it is gone (its findings are fixed with it). A file it
    could not check (a syntax error, not UTF-8, over the size) is not: its entries were called
    "no longer found (fixed since)" and a rewrite from that run dropped them (twenty-sixth read)."""
    unchecked = {id(r) for r in run.unchecked}
    read = {identity_path(r.path, base) for r in run.results if id(r) not in unchecked}
    return lambda file: file in read or _entry_gone(base, file)


def _entry_gone(base: Path | None, file: str) -> bool:
    """Whether the file a baseline entry names is gone. The entry names it as every output shows
    it (`path_name`: a byte that is not UTF-8 as `\\xNN`, a backslash doubled): one holding either
    was "gone", its entries "fixed since", in a run of any other file (twenty-sixth read)."""
    try:
        name = os.fsdecode(name_bytes(file))
    except UnicodeEncodeError:  # a lone surrogate (written by hand: `path_name` writes none)
        name = file
    return not os.path.lexists(os.path.join(base or ".", name))


def _read_known(baseline: Path | None, target: str, portable: bool) -> Known | None:
    """The baseline's records, read before the run so that a bad file (or one of another
    target, or of the other `--portable` mode) is a usage error (exit 2)."""
    if baseline is None:
        return None
    try:
        return read_baseline(baseline, target, portable)
    except BaselineError as exc:
        raise usage_error(str(exc)) from None


def _fingerprint_base(baseline: Path | None, write_to: Path | None) -> Path | None:
    """The folder the fingerprints are relative to: a baseline's own. One read is where porter
    wrote it (a link to it followed); one written lands in the folder named, as a link of its
    name is replaced, not followed (`write_output`). `Path.resolve` followed that link: the
    baseline, fingerprinted from the link's target's folder, passed no finding on the next run
    (and a link loop ended the run in a RuntimeError traceback, Python < 3.13; twenty-fifth read).
    A folder the baseline cannot be written in (a loop) is said before the run, as after it; a
    missing one is made by the write."""
    if baseline is not None:
        return Path(os.path.realpath(baseline)).parent
    if write_to is None:
        return None
    try:
        return Path(os.path.realpath(write_to.parent, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(write_to.parent))
    except OSError as exc:
        why = not_a_folder(write_to) if isinstance(exc, NotADirectoryError) else exc
        raise usage_error(f"cannot write --write-baseline {write_to}: {why.strerror or why}") from None


def _check_outputs(named: dict[str, Path | None]) -> None:
    """The files the run is to write, each tried before it (`check_output`): a folder porter
    cannot write was said after the whole run."""
    for option, path in named.items():
        if path is None:
            continue
        try:
            check_output(path)
        except OSError as exc:
            why = not_a_folder(path) if isinstance(exc, NotADirectoryError) else exc
            raise usage_error(f"cannot write {option} {path}: {why.strerror or why}") from None


def _run(paths: list[Path], settings, **kwargs):
    """The lint run; an interrupt is reported as such, and an internal error exits 2, never 0 or 1."""
    try:
        return run_lint(paths, settings, **kwargs)
    except KeyboardInterrupt as exc:
        from porter.cli.writes import report_interrupt

        report_interrupt(exc, [], 0)
    except Exception as exc:  # noqa: BLE001 - an internal error must exit 2, never 0 or 1
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:  # the user's `ulimit -f`: said by `cli.main`
            raise
        err_console.print(f"[bold red]internal error:[/] {plain(type(exc).__name__)}: {plain(exc)}", soft_wrap=True)
        raise typer.Exit(EXIT_ERROR) from None


def _note_unlocated(run) -> None:
    """GitLab's report gives a file whose name is not UTF-8 its folder as `location.path`: say so."""
    for shown in unlocated(run):
        err_console.print(
            f"note: {plain(shown)}: GitLab's location.path cannot name a file whose name is not UTF-8:"
            " its issues give the file's folder, their description names the file",
            soft_wrap=True,
        )


def _print_unread(run) -> None:
    """Files the walk found and did not read, and files that could not be checked, on stderr."""
    for r in run.results:  # a file the walk found and did not read (a FIFO, a device, a link out of the tree)
        if r.status is FileStatus.SKIPPED and r.reason and r.reason != NOT_ADMITTED:
            err_console.print(f"note: {plain(r.path)}: {plain(r.reason)}", soft_wrap=True)
    for r in run.errors:
        where = f"{r.path}:{r.error_line}" if r.error_line else r.path
        err_console.print(f"[bold red]error:[/] {plain(where)}: {plain(r.reason or '')} (not checked)", soft_wrap=True)


def _write_fixes(run, paths: list[Path], *, allow_dirty: bool, allow_no_vcs: bool) -> int:
    """--fix: write the fixed files (with rewrite's checks on the working tree); the failures."""
    if not run.pending:
        return 0
    from porter.cli.writes import Change, clean_stale, refuse_unless_allowed, write_in_place

    changes = [Change(*p) for p in run.pending]
    refuse_unless_allowed(changes, allow_dirty=allow_dirty, allow_no_vcs=allow_no_vcs)  # refused: nothing removed
    clean_stale(paths, quiet=False)
    problems: dict[Path, str] = {}
    written, write_failures = write_in_place(changes, problems)
    if write_failures:
        from porter.lint import not_written

        not_written(run, problems)
    return write_failures


def _write_migration_report(report: Path, run, settings) -> None:
    """--report: the migration report of what lint found. A file whose fix --fix could not write is
    failed there, "not written" (its fix's diff was shown as the file's change, nothing said)."""
    from porter.report import ReportModel, port_not_written, write_report

    failed = dict(run.write_failures)
    results = [port_not_written(r, failed[r.path]) if r.path in failed else r for r in run.results]
    model = ReportModel.from_run(results, None, settings, kind="lint")
    model.not_written = [r.path for r in results if r.path in failed]
    try:
        write_report(report, model)
    except (ValueError, OSError) as exc:
        # the reason, as -o says it: not `[Errno 13] …: '.r.md.x1y2.tmp'`, a file never made
        raise usage_error(f"cannot write --report {report}: {getattr(exc, 'strerror', None) or exc}") from None


def _write_baseline_and_exit(
    write_baseline_to: Path, run, target: str, portable: bool, base: Path | None, *, failed: bool = False
) -> NoReturn:
    """--write-baseline: record today's findings and exit 0 (the baseline accepts them); 2 where
    `--fix` could not write a file (`failed`): `lint --fix --write-baseline` left with 0 over a fix
    it could not write, a CI step that passed with the tree unfixed (thirty-first read)."""
    try:
        write_baseline(write_baseline_to, target, run.findings, run.fingerprints, run.version, portable, base)
    except OSError as exc:
        raise usage_error(f"cannot write --write-baseline {write_baseline_to}: {exc.strerror or exc}") from None
    n = len(run.findings)
    err_console.print(
        f"Wrote {n} finding{'s' if n != 1 else ''} to baseline {plain(write_baseline_to)}",
        soft_wrap=True,
    )
    raise typer.Exit(EXIT_ERROR if failed else EXIT_OK)


def _print_diff_and_exit(run, *, exit_zero: bool) -> NoReturn:
    """--diff: print the fixes, write nothing; exit 1 when anything would change (unless --exit-zero)."""
    from porter.report.terminal import print_diff

    changed = [r for r in run.results if r.status is FileStatus.CHANGED]
    for r in changed:
        print_diff(console, r)  # the names are display names: see `rewrite --diff` for raw ones
    n = sum(1 for r in changed for f in r.findings if f.applied)
    err_console.print(
        f"Would fix {n} finding{'s' if n != 1 else ''} in {len(changed)} file{'s' if len(changed) != 1 else ''}."
    )
    raise typer.Exit(EXIT_FINDINGS if changed and not exit_zero else EXIT_OK)


def _emit(text: str, output_file: Path | None, document: bool = False) -> None:
    """The rendered findings, to --output-file (written whole) or stdout. A `document` (every
    format but full and concise) is UTF-8 on stdout too, whatever the locale: JUnit declares
    UTF-8 and GitHub's runner reads it, and under `PYTHONIOENCODING=latin-1` a JUnit report of
    `é.py` was not well-formed XML (eighteenth read)."""
    if output_file is not None:
        try:
            from porter.pipeline.writer import write_output

            write_output(output_file, text)  # whole; a link of that name is replaced, not written through
        except OSError as exc:
            raise usage_error(f"cannot write --output-file {output_file}: {exc.strerror or exc}") from None
    elif document and hasattr(sys.stdout, "buffer"):
        sys.stdout.flush()
        _write_whole(sys.stdout.buffer, text.encode("utf-8", "backslashreplace"))
    else:
        # in pieces its buffer holds (4 kB on a pipe; an escaped character is 10 bytes at most),
        # each flushed: a flush writes all or raises, where one large write lost the rest as
        # `_write_whole` says; the stream's own encoder keeps its byte-order-mark rule (utf-16/32)
        for at in range(0, len(text), 256):
            sys.stdout.write(text[at : at + 256])
            sys.stdout.flush()


def _write_whole(stream: BinaryIO, data: bytes) -> None:
    """All of `data`, or an error: where the pipe's reader left mid-write (`| head -c 1` on a
    200 kB JSON), write(2) returns what went in and CPython's buffered write returns that count,
    the rest dropped with no error: lint left with 1, "findings found", where ruff sees the
    broken pipe (twenty-eighth read). The rest is written again, which raises it."""
    view = memoryview(data)
    while view:
        n = stream.write(view)
        if not n:
            raise OSError(errno.EIO, "the output took no bytes")
        view = view[n:]
    stream.flush()
