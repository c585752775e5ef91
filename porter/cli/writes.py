"""Writing ported files in place, for every command that does (`rewrite`, `lint --fix`).

One path for all of them: the write guard (`porter.cli.gitstate`) is asked first, then stale
temporaries from a killed run are removed (a run the guard refuses removes nothing either),
each file is replaced only while it still holds the bytes that were ported, and an interrupt
says exactly which files were written.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import typer

from porter.cli.common import EXIT_ERROR, err_console
from porter.cli.gitstate import check_writable
from porter.cli.interrupt import deferred, exit_code, said, signal_name
from porter.core.fileflags import refuse_a_flagged_replace
from porter.pipeline.runner import display_path
from porter.core.textsafe import plain
from porter.pipeline.writer import atomic_write, hard_links, remove_stale_temporaries


@dataclass
class Change:
    """One file to write: where, the bytes that were ported, and the new bytes."""

    path: Path
    original: bytes
    new: bytes


def clean_stale(paths: list[Path], quiet: bool) -> None:
    removed = remove_stale_temporaries(paths)
    if removed and not quiet:
        n = len(removed)
        err_console.print(
            f"note: removed {n} temporary file{'s' if n != 1 else ''} left by an interrupted porter run", soft_wrap=True
        )


def refuse_unless_allowed(changes: list[Change], *, allow_dirty: bool, allow_no_vcs: bool) -> None:
    """Exit 2, naming each file and why, when the guard refuses any of them (nothing is written)."""
    refused = check_writable([c.path for c in changes], allow_dirty=allow_dirty, allow_no_vcs=allow_no_vcs)
    if not refused:
        return
    err_console.print(
        f"[bold red]error:[/] porter would rewrite {len(refused)} file{'s' if len(refused) != 1 else ''} "
        "that version control could not give back; nothing was written:",
        soft_wrap=True,
    )
    for r in refused:
        err_console.print(f"  {plain(display_path(r.path))}: {plain(r.reason)}", soft_wrap=True)
    raise typer.Exit(EXIT_ERROR)


def write_in_place(changes: list[Change], problems: dict[Path, str] | None = None) -> tuple[list[Change], int]:
    """Write each change; (the ones written, how many failed). A failure is reported (and kept
    in `problems`, by path, where given) and the rest go on; an interrupt lists what was written
    and exits 130 (SIGINT) or 143 (SIGTERM)."""
    written: list[Change] = []
    failed = 0
    pending = Counter(_file_id(c.path) for c in changes)  # names of one file this run writes
    try:
        for change in changes:
            problem = unwritable(change.path)
            key = _file_id(change.path)
            pending[key] -= 1
            if problem is None:
                # the file's other names, less those this run rewrites too (each gets its own file)
                links = hard_links(change.path) - (pending[key] if key is not None else 0)
                try:
                    with deferred():  # the file is written and counted, or neither
                        atomic_write(change.path, change.new, expect=change.original)
                        written.append(change)
                    if links > 0:
                        err_console.print(
                            f"[yellow]warning:[/] {plain(display_path(change.path))}: has {links} other hard "
                            f"link{'s' if links != 1 else ''}, which keep{'s' if links == 1 else ''} the old content "
                            "(porter writes a new file and renames it over this name)",
                            soft_wrap=True,
                        )
                except OSError as exc:
                    problem = exc.strerror or str(exc)
                    problem = problem if problem.startswith("changed on disk") else f"cannot write: {problem}"
            if problem is not None:
                failed += 1
                if problems is not None:
                    problems[change.path] = problem
                err_console.print(
                    f"[yellow]warning:[/] {plain(display_path(change.path))}: {plain(problem)}; left unchanged",
                    soft_wrap=True,
                )
    except KeyboardInterrupt as exc:
        report_interrupt(exc, [c.path for c in written], len(changes))
    return written, failed


def _file_id(path: Path) -> tuple[int, int] | None:
    """The file a name stands for (device, inode), to tell a hard link this run also rewrites
    from one it leaves; None where the name cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def report_interrupt(exc: BaseException, written: list[Path], total: int) -> None:
    """Say what an interrupted run left behind, then exit 128 + the signal."""
    how = signal_name(exc)
    said()
    if not written:
        err_console.print(f"porter: interrupted ({how}); no file was written.", soft_wrap=True)
    else:
        err_console.print(
            f"porter: interrupted ({how}) after writing {len(written)} of {total} files: the tree is partly ported. "
            "Each file is whole (its original or its full port); run the same command again to finish. Written:",
            soft_wrap=True,
        )
        for path in written:
            err_console.print(f"  {plain(display_path(path))}", soft_wrap=True)
    raise typer.Exit(exit_code(exc))


def unwritable(path: Path) -> str | None:
    """Why porter will not replace `path` in place (a read-only file stays as it is), or None. A
    file or folder a flag forbids changing is said by its flag: an immutable file (`chattr +i`)
    was "no write permission (read-only file)" to root, whom its mode lets write it."""
    try:
        real = path.resolve()
        mode = real.stat().st_mode
        refuse_a_flagged_replace(real)
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    if not mode & 0o222 or not os.access(path, os.W_OK):
        return "no write permission (read-only file)"
    return None
