"""`porter rewrite`: port files in place, to a copy of the tree, or show the diff."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from porter.cli.common import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, check_target, console, err_console, split_codes, usage_error
from porter.cli.lint import effective_config
from porter.findings import FileStatus
from porter.gitstate import dirty_files
from porter.report import ReportModel, report_format, write_report
from porter.report.progress import RunProgress, count_files
from porter.report.terminal import print_diff, print_report
from porter.runner import display_path, run
from porter.settings import Settings
from porter.writer import atomic_write, copy_tree


def rewrite(
    paths: list[Path] = typer.Argument(..., help="Files or folders to port.", show_default=False),
    target: str = typer.Option(None, "--target", "-t", help="neuron, tpu or xla."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff, write nothing; exit 1 if anything would change. With --out-dir: print the diff of the copy."),
    out_dir: Path = typer.Option(None, "--out-dir", help="Write a ported copy of the tree here; the originals stay untouched."),
    allow_dirty: bool = typer.Option(False, "--allow-dirty", help="Rewrite files with uncommitted changes in place."),
    select: list[str] = typer.Option(None, "--select", help="Only these rule codes or prefixes (comma-separated)."),
    ignore: list[str] = typer.Option(None, "--ignore", help="Skip these rule codes or prefixes."),
    exclude: list[str] = typer.Option(None, "--exclude", help="Gitignore-style pattern of files to leave out."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Apply unsafe fixes too (fp16→bf16, GradScaler removal, …)."),
    annotate: bool = typer.Option(False, "--annotate", help="Leave a `# porter[CODE]: …` comment at each manual site."),
    portable: bool = typer.Option(False, "--portable", help="One codebase for CUDA, the CPU and the target: port through torch.accelerator (neuron, tpu; see docs/portable.md)."),
    report: Path = typer.Option(None, "--report", help="Also write a report: FILE.html, FILE.md or FILE.json (by suffix)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only errors (and the diff with --diff)."),
    jobs: int = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: one per core; 1 = in this process)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Parse every file again; neither read nor write .porter_cache/."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Keep the cache here instead of .porter_cache/ at the project root."),
) -> None:
    """Rewrite CUDA-specific code for the target."""
    # [tool.porter] / porter.toml apply as in `porter lint`; the command line overrides them
    eff = effective_config(paths, config=None, isolated=False, target=target, select=select, ignore=ignore, extend_select=None, exclude=exclude)
    try:
        settings = eff.settings(unsafe_fixes=unsafe_fixes, annotate=annotate, portable=portable)
    except ValueError as exc:  # a ConfigError, or a combination Settings refuses
        raise usage_error(str(exc)) from None
    if out_dir is not None:
        _check_out_dir(paths, out_dir)
    if report is not None:
        try:
            report_format(report)
        except ValueError as exc:
            raise usage_error(str(exc)) from None

    changed: list[tuple[Path, bytes]] = []

    def collect(cand, result) -> None:
        if result.status is FileStatus.CHANGED:
            changed.append((cand.path, result.new_source))
            if diff:  # the diff is the output asked for: --quiet only drops the rest
                print_diff(console, result)
        elif result.status is FileStatus.ERROR:
            where = f"{result.path}:{result.error_line}" if result.error_line else result.path
            err_console.print(f"[yellow]warning:[/] {where}: {result.reason}")
        elif cand.problem is not None and not quiet:
            err_console.print(f"note: {result.path}: {result.reason}")

    with RunProgress(err_console, total=None if quiet else count_files(paths, settings), quiet=quiet) as progress:
        results, summary = run(
            paths, settings, on_result=progress.wrap(collect), jobs=jobs, cache=not no_cache, cache_dir=cache_dir
        )
    model = ReportModel.from_run(results, summary, settings, kind="rewrite")

    def finish(wrote: str) -> None:
        if not quiet:
            print_report(console, model, wrote=wrote)
        if report is not None:
            write_report(report, model)
            if not quiet:
                console.print(f"Report written to {report}", soft_wrap=True)

    if diff and out_dir is None:
        finish("would change")
        raise typer.Exit(EXIT_FINDINGS if changed else EXIT_OK)

    if out_dir is not None:
        _write_copy(paths, out_dir, changed)
        wrote = f"ported into {out_dir}"
    else:
        if not allow_dirty:
            dirty = dirty_files([p for p, _ in changed])
            if dirty:
                err_console.print("[bold red]error:[/] these files have uncommitted changes; commit or stash them, or pass --allow-dirty:")
                for p in dirty:
                    err_console.print(f"  {p}")
                raise typer.Exit(EXIT_ERROR)
        failed = 0
        for path, data in changed:
            problem = _unwritable(path)
            if problem is None:
                try:
                    atomic_write(path, data)
                except OSError as exc:
                    problem = f"cannot write: {exc.strerror or exc}"
            if problem is not None:
                failed += 1
                err_console.print(f"[yellow]warning:[/] {display_path(path)}: {problem}; left unchanged")
        wrote = "rewritten"
    finish(wrote)
    raise typer.Exit(EXIT_ERROR if out_dir is None and failed else EXIT_OK)


def _unwritable(path: Path) -> str | None:
    """Why porter will not replace `path` in place (a read-only file stays as it is), or None."""
    try:
        mode = path.resolve().stat().st_mode
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    if not mode & 0o222 or not os.access(path, os.W_OK):
        return "no write permission (read-only file)"
    return None


def _check_out_dir(paths: list[Path], out_dir: Path) -> None:
    out = out_dir.resolve()
    for p in paths:
        src = p.resolve()
        if out == src or src in out.parents:
            raise usage_error(f"--out-dir {out_dir} lies inside {p}: choose a folder outside the tree")


def _write_copy(paths: list[Path], out_dir: Path, changed: list[tuple[Path, bytes]]) -> None:
    """Every file of each tree into out_dir; several paths keep their layout below their
    common folder, so two folders both named `src` do not collide."""
    roots: list[tuple[Path, Path]] = []
    resolved = [p.resolve() for p in paths]
    common = Path(os.path.commonpath([r if r.is_dir() else r.parent for r in resolved]))
    for p, real in zip(paths, resolved):
        if len(paths) == 1 and p.is_dir():
            dest = out_dir
        else:
            dest = out_dir / (real.relative_to(common) if real != common else real.name)
        if p.is_dir():
            copy_tree(p, dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(p.read_bytes())
        roots.append((p.resolve(), dest))
    for path, data in changed:
        real = path.resolve() if not path.is_symlink() else path.absolute()
        for src, dest in roots:
            if real == src:
                atomic_write(dest, data)
                break
            if src in real.parents:
                target = dest / real.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, data)
                break
