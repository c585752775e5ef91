"""`porter rewrite`: port files in place, to a copy of the tree, or show the diff."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from porter.cli.common import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    check_cache_dir,
    check_output_folder,
    check_paths,
    console,
    effective_config,
    note_if_cache_full,
    note_if_git_unread,
    note_if_cache_off,
    err_console,
    not_an_input,
    settings_of,
    usage_error,
    work_outlives_the_reader,
)
from porter.cli.options import (
    AllowDirty,
    AllowNoVcs,
    CacheDir,
    Exclude,
    FileTimeout,
    Ignore,
    Jobs,
    MigrationReport,
    NoCache,
    Portable,
    Select,
    Target,
    UnsafeFixes,
    written_path,
)
from porter.cli.writes import Change, clean_stale, refuse_unless_allowed, report_interrupt, write_in_place
from porter.core.findings import FileResult, FileStatus
from porter.report import ReportModel, port_not_written, report_format, series, write_report
from porter.report.progress import RunProgress, count_files
from porter.report.terminal import print_diff, print_report
from porter.pipeline.runner import display_path, relative_name, run
from porter.core.textsafe import plain
from porter.core.reading import Unreadable
from porter.pipeline.writer import (
    check_output,
    copy_tree,
    copy_under,
    mode_of,
    write_under,
    why_unwritable,
)


def rewrite(
    paths: list[Path] = typer.Argument(..., help="Files or folders to port.", show_default=False),
    target: Target = None,
    diff: bool = typer.Option(
        False,
        "--diff",
        help="Print a unified diff (a patch: the summary goes to stderr), write nothing; exit 1 if anything would "
        "change. With --out-dir: print the diff of the copy.",
    ),
    out_dir: Path = typer.Option(
        None,
        "--out-dir",
        parser=written_path,
        help="Write a ported copy of the tree here (a new or empty folder outside the inputs); the originals stay "
        "untouched.",
    ),
    split: Path = typer.Option(
        None,
        "--split",
        parser=written_path,
        help="Write the port as an ordered series of patches into this folder, one per area and kind of change, "
        "each applying on top of the ones before (with index.md); the originals stay untouched.",
        show_default=False,
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="With --out-dir: write into a folder that is not empty, replacing files of the same names. With "
        "--split: replace the series already there.",
    ),
    allow_dirty: AllowDirty = False,
    allow_no_vcs: AllowNoVcs = False,
    select: Select = None,
    ignore: Ignore = None,
    exclude: Exclude = None,
    unsafe_fixes: UnsafeFixes = False,
    annotate: bool = typer.Option(False, "--annotate", help="Leave a `# porter[CODE]: …` comment at each manual site."),
    portable: Portable = None,
    report: MigrationReport = None,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only errors (and the diff with --diff)."),
    jobs: Jobs = None,
    no_cache: NoCache = False,
    cache_dir: CacheDir = None,
    file_timeout: FileTimeout = None,
) -> None:
    """Rewrite CUDA-specific code for the target."""
    check_paths(paths)
    check_cache_dir(cache_dir, paths, no_cache)
    # [tool.porter] / porter.toml apply as in `porter lint`; the command line overrides them
    eff = effective_config(
        paths,
        config=None,
        isolated=False,
        target=target,
        select=select,
        ignore=ignore,
        extend_select=None,
        exclude=exclude,
        portable=portable,
    )
    settings = settings_of(eff, unsafe_fixes=unsafe_fixes, annotate=annotate)
    _check_outputs(paths, out_dir=out_dir, split=split, report=report, force=force, diff=diff)
    # (`--diff --report`: the report is work, as `trace compare --report`'s; it was lost with the patch)
    work_outlives_the_reader(out_dir is not None or split is not None or report is not None or not diff)
    # with --diff, stdout carries the patch and nothing else
    out = err_console if diff else console

    collect = _Collector(split=split is not None, diff=diff, quiet=quiet)
    timeout = file_timeout if file_timeout is not None else eff.file_timeout
    if not quiet:
        note_if_cache_off(no_cache, paths, cache_dir)
    try:
        with RunProgress(err_console, total=None if quiet else count_files(paths, settings), quiet=quiet) as progress:
            results, summary = run(
                paths,
                settings,
                on_result=progress.wrap(collect),
                jobs=jobs,
                cache=not no_cache,
                cache_dir=cache_dir,
                file_timeout=timeout,
            )
    except KeyboardInterrupt as exc:
        report_interrupt(exc, [], 0)
    if not quiet:
        note_if_cache_full()
        note_if_git_unread()
    # before a file is written: `rewrite . --report ds_config.json` replaced the DeepSpeed config
    # the run had just read (or ported) with the report, exit 0, where `lint` refuses it
    not_an_input("--report", report, [r.path for r in results])
    model = ReportModel.from_run(results, summary, settings, kind="rewrite")
    changed = collect.changed

    # a file that could not be read or ported fails the run, as in `ruff format`: a CI step
    # that checked nothing must not pass (the other files are still ported and written)
    unread = _print_not_read(results)  # too large to read: not ported, not checked, as `lint` says
    unported = bool(summary.errors) or unread
    if diff and out_dir is None:
        _finish(out, model, "would change", report=report, quiet=quiet)
        raise typer.Exit(EXIT_ERROR if unported else EXIT_FINDINGS if changed else EXIT_OK)

    if split is not None:
        _finish(out, model, _write_series(split, collect.ported, settings.target, force), report=report, quiet=quiet)
        raise typer.Exit(EXIT_ERROR if unported else EXIT_OK)

    if out_dir is not None:
        failed = _write_out_dir(paths, out_dir, changed)
        wrote = f"ported into {plain(out_dir)}"
    else:
        # the guard first: a run it refuses writes nothing and removes nothing
        refuse_unless_allowed(changed, allow_dirty=allow_dirty, allow_no_vcs=allow_no_vcs)
        clean_stale(paths, quiet)
        problems: dict[Path, str] = {}
        _, failed = write_in_place(changed, problems)
        wrote = "rewritten"
        if failed:
            # a file left unchanged (warned above) is not rewritten, nor are its sites: the
            # summary, the readiness and the report say it failed (a full disk read "100% ported")
            marked = collect.unwritten(results, problems)
            model = ReportModel.from_run(marked, summary, settings, kind="rewrite")
            model.not_written = [new.path for old, new in zip(results, marked) if new is not old]
    _finish(out, model, wrote, report=report, quiet=quiet)
    raise typer.Exit(EXIT_ERROR if failed or unported else EXIT_OK)


class _Collector:
    """Called with each file's result as the run goes: keeps the changes to write (and, for
    --split, every file with changes or findings), prints the diff with --diff, and warns
    about the files that could not be ported while the run is still on screen."""

    def __init__(self, *, split: bool, diff: bool, quiet: bool) -> None:
        self.split, self.diff, self.quiet = split, diff, quiet
        self.changed: list[Change] = []
        self.ported: list[series.PortedFile] = []
        self.result_of: dict[int, FileResult] = {}  # id of a change -> the result it came from

    def __call__(self, cand, result) -> None:
        if self.split and (result.status is FileStatus.CHANGED or result.findings):
            original = result.original_source or b""
            new = result.new_source if result.status is FileStatus.CHANGED else original
            self.ported.append(
                series.PortedFile(relative_name(cand.path), original, new or original, tuple(result.findings))
            )
        if result.status is FileStatus.CHANGED:
            self.changed.append(Change(cand.path, result.original_source, result.new_source))
            self.result_of[id(self.changed[-1])] = result
            if self.diff:  # the diff is the output asked for: --quiet only drops the rest
                print_diff(console, result, relative_name(cand.path))
        elif result.status is FileStatus.ERROR:
            where = f"{result.path}:{result.error_line}" if result.error_line else result.path
            err_console.print(f"[yellow]warning:[/] {plain(where)}: {plain(result.reason)}", soft_wrap=True)
        elif cand.problem is not None and not self.quiet:
            err_console.print(f"note: {plain(result.path)}: {plain(result.reason)}", soft_wrap=True)

    def unwritten(self, results: list[FileResult], problems: dict[Path, str]) -> list[FileResult]:
        """`results`, each file whose change could not be written (`problems`: why, by path)
        failed: its port is not on disk, so no site of it is ported."""
        why = {id(self.result_of[id(c)]): problems[c.path] for c in self.changed if c.path in problems}
        return [port_not_written(r, why[id(r)]) if id(r) in why else r for r in results]


def _check_outputs(
    paths: list[Path], *, out_dir: Path | None, split: Path | None, report: Path | None, force: bool, diff: bool
) -> None:
    """Usage errors (exit 2) about where the port goes, before any work."""
    if out_dir is not None:
        _check_out_dir(paths, out_dir, force)
    if split is not None:
        _check_split_dir(split, force, diff=diff, out_dir=out_dir)
    if report is not None:
        _check_report(report)
    copied = _copied_at(paths, out_dir, report) if out_dir is not None and report is not None else None
    if copied is not None:
        raise usage_error(f"--report {report} is where --out-dir copies {copied}: choose another name for the report")
    if split is not None and report is not None and _replaces_the_series(split, report):
        raise usage_error(f"--report {report} is a file --split writes in {split}: choose another name for the report")


def _finish(out, model: ReportModel, wrote: str, *, report: Path | None, quiet: bool) -> None:
    """The summary (unless --quiet) and the migration report, once everything is written."""
    if not quiet:
        print_report(out, model, wrote=wrote)
    if report is not None:
        try:
            write_report(report, model)
        except (OSError, ValueError) as exc:
            # the reason, as -o says it: not `[Errno 13] …: '.r.md.x1y2.tmp'`, a file never made
            raise usage_error(f"cannot write --report {report}: {getattr(exc, 'strerror', None) or exc}") from None
        if not quiet:
            out.print(f"Report written to {plain(report)}", soft_wrap=True)


def _write_out_dir(paths: list[Path], out_dir: Path, changed: list[Change]) -> int:
    """--out-dir: the ported copy; says which files it could not copy. The number of files the
    copy should hold and does not."""
    failed = 0
    try:
        passed = _write_copy(paths, out_dir, changed)
    except KeyboardInterrupt as exc:
        err_console.print(f"note: {plain(out_dir)} holds a partial copy", soft_wrap=True)
        report_interrupt(exc, [], 0)
    except OSError as exc:
        _say_partial_copy(out_dir)
        raise usage_error(f"cannot write into --out-dir {out_dir}: {why_unwritable(out_dir, exc)}") from None
    for path, why in passed:
        label = "note:" if why.skipped else "[yellow]warning:[/]"
        failed += not why.skipped  # a copy missing a file it should hold
        err_console.print(
            f"{label} {plain(display_path(path))}: {plain(why.reason)}; not copied into {plain(out_dir)}",
            soft_wrap=True,
        )
    return failed


def _say_partial_copy(out_dir: Path) -> None:
    """A copy that failed part way holds the tree copied as it was and some of the ports: said, as
    an interrupted one is. It was only "cannot write into --out-dir", a folder that held every file,
    the first ported and the rest still CUDA code (thirtieth cache2 read)."""
    try:
        with os.scandir(out_dir) as entries:
            started = next(entries, None) is not None
    except OSError:
        return
    if started:
        err_console.print(
            f"note: {plain(out_dir)} holds a partial copy: some of its files are not ported", soft_wrap=True
        )


def _check_report(report: Path) -> None:
    """--report's name, before the run: a folder is said as lint's `--report` and `-o` say it
    (it was "must end in .html, .md or .json" for `--report out`; twenty-eighth read)."""
    if report.is_dir():
        raise usage_error(f"cannot write --report {report}: is a folder")
    try:
        report_format(report)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    try:
        check_output(report)  # (a folder porter cannot write was said after the whole run)
    except OSError as exc:
        raise usage_error(f"cannot write --report {report}: {exc.strerror or exc}") from None


def _check_out_dir(paths: list[Path], out_dir: Path, force: bool) -> None:
    """Usage errors (exit 2) before any work: an out-dir that is a file, that overlaps an
    input either way (inside it, or holding it), or that is not empty without --force."""
    check_output_folder("--out-dir", out_dir)
    out = out_dir.resolve()
    for p in paths:
        src = p.resolve()
        if out == src or src in out.parents:
            raise usage_error(f"--out-dir {out_dir} lies inside the input {p}: choose a folder outside the inputs")
        if out in src.parents:
            raise usage_error(
                f"--out-dir {out_dir} holds the input {p}: the copy would overwrite it; "
                "choose a folder outside the inputs"
            )
    if out_dir.is_dir() and not force and any(os.scandir(out_dir)):
        raise usage_error(
            f"--out-dir {out_dir} is not empty: name a new or empty folder, or pass --force to write into it"
        )


def _check_split_dir(split: Path, force: bool, *, diff: bool, out_dir: Path | None) -> None:
    """Usage errors (exit 2) before any work: --split with --diff or --out-dir, a folder that is
    a file, or one that is not empty, unless --force (which replaces the series there)."""
    if diff or out_dir is not None:
        raise usage_error("--split writes the port as patches: use it without --diff and --out-dir")
    check_output_folder("--split", split, "the series ")
    if split.is_dir() and not force and any(os.scandir(split)):
        raise usage_error(
            f"--split {split} is not empty: name a new or empty folder, or pass --force to replace the series in it"
        )


def _write_series(folder: Path, ported: list[series.PortedFile], target: str, force: bool) -> str:
    """Write the series; the words for the summary line (`… N patches in DIR`)."""
    planned = series.plan(sorted(ported, key=lambda f: f.name))
    done: list[str] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if force:  # a previous series with more patches must not leave its tail behind
            for old in folder.iterdir():
                if series.written_by_porter(old.name):
                    old.unlink()
        series.write(folder, planned, f"porter rewrite --target {target}", done)
    except KeyboardInterrupt as exc:
        # each file of the series is whole; say how far it got (no input file is written)
        n = len(planned.patches) + 2
        err_console.print(
            f"note: --split {plain(folder)} holds {len(done)} of the series' {n} files (no index.md yet: "
            "run the command again with --force)"
            if "index.md" not in done
            else f"note: --split {plain(folder)} holds {len(done)} of the series' {n} files",
            soft_wrap=True,
        )
        report_interrupt(exc, [], 0)
    except OSError as exc:
        raise usage_error(f"cannot write the series into --split {folder}: {why_unwritable(folder, exc)}") from None
    n = len(planned.patches)
    return f"written as {n} patch{'es' if n != 1 else ''} in {plain(folder)}"


def _copy_roots(paths: list[Path], root: Path) -> list[tuple[Path, Path, Path]]:
    """Each input, resolved, and where `--out-dir` (resolved: `root`) copies it: several paths keep
    their layout below their common folder."""
    resolved = [p.resolve() for p in paths]
    common = Path(os.path.commonpath([r if r.is_dir() else r.parent for r in resolved]))
    return [
        (
            p,
            real,
            root
            if len(paths) == 1 and p.is_dir()
            else root / (real.relative_to(common) if real != common else real.name),
        )
        for p, real in zip(paths, resolved)
    ]


def _replaces_the_series(split: Path, report: Path) -> bool:
    """Whether `report` names a file of the series `--split` writes: `--split ../sp --report
    ../sp/index.md` wrote the series, then the report over its index (the order to apply the
    patches in), exit 0 (thirty-second read, second wave). A link of the report's name is replaced."""
    place = Path(os.path.realpath(report.parent)) / report.name
    return place.parent == Path(os.path.realpath(split)) and series.written_by_porter(place.name)


def _copied_at(paths: list[Path], out_dir: Path, report: Path) -> Path | None:
    """The input file `--out-dir` copies to `report`'s name: `rewrite . --out-dir ../out --report
    ../out/ds_config.json` wrote the copy, then the report over it, exit 0: the ported tree had lost
    its DeepSpeed config (thirty-second read). A link of the report's name is replaced, not followed."""
    place = Path(os.path.realpath(report.parent)) / report.name
    for _, real, dest in _copy_roots(paths, out_dir.resolve()):
        if real.is_dir() and dest in place.parents:
            source = real / place.relative_to(dest)
        elif place == dest:
            source = real
        else:
            continue
        if os.path.lexists(source):
            return source
    return None


def _write_copy(paths: list[Path], out_dir: Path, changed: list[Change]) -> list[tuple[Path, Unreadable]]:
    """Every file of each tree into out_dir; several paths keep their layout below their
    common folder, so two folders both named `src` do not collide. Nothing is written
    outside out_dir: links found there are replaced, never followed. Returns the files not
    copied (a FIFO, a device, one that cannot be read), each with the reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = out_dir.resolve()
    clean_stale([root], quiet=True)
    roots: list[tuple[Path, Path]] = []
    passed: list[tuple[Path, Unreadable]] = []
    for p, real, dest in _copy_roots(paths, root):
        if p.is_dir():
            passed.extend(copy_tree(p, dest, root=root))
        else:
            try:
                copy_under(root, dest, p)
            except Unreadable as exc:
                passed.append((p, exc))
        roots.append((real, dest))
    for change in changed:
        path = change.path
        real = path.resolve() if not path.is_symlink() else path.absolute()
        for src, dest in roots:
            if real == src:
                write_under(root, dest, change.new, mode_of(path))
                break
            if src in real.parents:
                write_under(root, dest / real.relative_to(src), change.new, mode_of(path))
                break
    return passed


def _print_not_read(results) -> bool:
    """Say which Python files and notebooks were too large to read (not ported, not checked:
    the run fails, as for a file that could not be read); whether there were any."""
    from porter.core.reading import not_read

    unread = not_read(results)
    for r in unread:
        err_console.print(f"[bold red]error:[/] {plain(r.path)}: {plain(r.reason or '')} (not ported)", soft_wrap=True)
    return bool(unread)
