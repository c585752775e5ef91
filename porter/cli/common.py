"""The plumbing every command shares: consoles, exit codes, usage errors, and the checks and
configuration that options go through. Command modules import from here (`options` for the
options they share, `writes` for writing files), never from each other."""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from porter.config.files import FAIL_ON, PASSED_OVER, ConfigError, Effective, resolve, shown
from porter.config.metacodes import meta_codes_named
from porter.config.ruledata import unknown_codes
from porter.config.settings import TARGETS, Settings
from porter.core.kinds import OUTPUT_HEAD, is_porter_output
from porter.core.textsafe import encodable, plain, printable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.text import Text
    from porter.report.console import PorterConsole


class _Console:
    """A command's console, made on its first use: a run that prints nothing through it (a
    warm `lint --output-format json`) does not import rich."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._made: PorterConsole | None = None

    def _console(self) -> PorterConsole:
        if self._made is None:
            from porter.report.console import make_console

            self._made = make_console(stderr=self._stderr)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console(), name)

    # Python looks the context protocol up on the type, never through `__getattr__`, and rich's
    # live display (the progress bar) enters its console: without these every run on a terminal
    # that lasted past the bar's delay ended in "'_Console' object does not support the context
    # manager protocol", its cursor hidden and nothing written (sixteenth read)
    def __enter__(self) -> Any:
        return self._console().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._console().__exit__(*exc)


console = cast("PorterConsole", _Console(stderr=False))
err_console = cast("PorterConsole", _Console(stderr=True))

# a file `--scaffold` kept, by whether it holds what porter writes now (None: a link, a folder,
# unread): `kernels` and `backends` say it in one wording (twenty-sixth read)
KEPT = {
    None: "exists (or is a link): kept, not overwritten",
    True: "exists, as porter writes it: kept",
    False: "exists: kept, not overwritten, and differs from what porter writes now (edited, or its source changed)",
}

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def cell(*lines: str) -> Text:
    """A table cell of lines from the tree (names, paths, source text): each shown as text, its
    control characters escaped before rich lays the table out. Given raw, rich dropped BEL,
    backspace, CR, VT and FF from the cell (`a<BEL>b.cu` and `ab.cu` were both `ab.cu`) and
    measured the text before the console's escapes widened it (a row ran past the border:
    seventeenth read). And as stdout's encoding writes it (`encodable`): on an ASCII stream a
    `k_é` kernel ran its row 5 columns past the border (twenty-fifth read)."""
    from rich.text import Text

    return Text(encodable("\n".join(printable(line) for line in lines), console.encoding))


def not_an_input(option: str, path: Path | None, inputs: Iterable[str]) -> None:
    """Exit 2 when the output file `path` is one of the files the run read (`inputs`): `porter
    lint src -o src/model.py`, a slip of the hand, replaced the model's code with the findings
    in JSON (twenty-first read). The same file however it is named (`./`, a hard link, a link
    to it among the inputs); an output that is itself a link is replaced, not written through, so
    it harms no input."""
    if path is None:
        return
    try:
        out = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(out.st_mode):
        return
    for name in inputs:
        try:
            read = os.stat(name)
        except OSError:
            continue
        if (read.st_dev, read.st_ino) == (out.st_dev, out.st_ino) and not _porter_output(path):
            raise usage_error(f"{option} {path} is {name}, a file this run checks: writing it would replace its code")


def _porter_output(path: Path) -> bool:
    """Whether `path` holds what porter wrote (`kinds.is_porter_output`): the last run's `-o
    lint.json`, `--write-baseline .porter-baseline.json` or `--report r.json` in the tree, which
    the next run then refused to replace ("writing it would replace its code", exit 2: no
    baseline could be refreshed; thirty-first read, second wave)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(OUTPUT_HEAD)
    except OSError:
        return False
    return is_porter_output(head)


def usage_error(message: str) -> typer.Exit:
    """Exit 2 with one line: `message` is printed as text (it may hold user paths)."""
    err_console.print(f"[bold red]error:[/] {plain(message)}", soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def check_output_folder(option: str, folder: Path, what: str = "") -> None:
    """A usage error, before any work, where output folder `option FOLDER` (`--out-dir`,
    `--split`, `--scaffold`) cannot be a folder: a name on the way is a file
    (`writer.first_not_folder`). For `--scaffold` the write said it, and with no family or kernel
    to write nothing was tried: `backends --scaffold f/out` said "wrote 0 file(s)", exit 0
    (twenty-sixth read's leftover)."""
    from porter.pipeline.writer import first_not_folder

    if (blocked := first_not_folder(folder)) is not None:
        raise usage_error(f"cannot write {what}into {option} {folder}: {blocked} is not a folder")


def check_target(target: str | None) -> str:
    if target is None:
        raise usage_error(f"--target is required: one of {', '.join(TARGETS)}")
    if target not in TARGETS:
        raise usage_error(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    return target


MAX_FILE_TIMEOUT = 10**6  # seconds: what the config file accepts too (`file-timeout`)


def check_file_timeout(value: float | None) -> float | None:
    """`--file-timeout`: a finite number of seconds, 0 (no limit) up to a million; anything
    else (inf, nan, 1e20: numbers no clock can wait for) is a usage error."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0 <= value < MAX_FILE_TIMEOUT:
        raise typer.BadParameter(
            f"{value!r}: a number of seconds from 0 (no limit) to {MAX_FILE_TIMEOUT:,}", param_hint="'--file-timeout'"
        )
    return value


def split_codes(values: list[str] | None, option: str = "--select") -> tuple[str, ...]:
    """The codes of a list option. An empty one (`--select ""`, `"$A,$B"` with B unset) is a usage
    error, as in ruff: read as not given, `--select ""` ran every rule and `--ignore ""` none."""
    codes: list[str] = []
    for v in values or []:
        pieces = [c.strip().upper() for c in v.split(",")]
        if "" in pieces:
            raise usage_error(f"{option} {shown(v)}: an empty rule code (an unset variable?)")
        codes.extend(pieces)
    bad = unknown_codes(tuple(codes))
    meta, said = meta_codes_named(bad)
    if meta:
        raise usage_error(f"{option} {said}")
    if bad:
        raise usage_error(f"unknown rule code or prefix: {', '.join(bad)} (see `porter rules`)")
    return tuple(codes)


def effective_config(
    paths: list[Path],
    *,
    config: Path | None,
    isolated: bool,
    target: str | None,
    select: list[str] | None,
    ignore: list[str] | None,
    extend_select: list[str] | None,
    exclude: list[str] | None,
    fail_on: str | None = None,
    portable: bool | None = None,
) -> Effective:
    """Config file + command line, or a usage error (exit 2) naming what is wrong."""
    if isolated and config is not None:  # (the file named was passed over, unsaid; ruff 0.17.6 refuses the pair)
        raise usage_error(f"--isolated and --config do not go together (--isolated reads no config file, {config} too)")
    if target is not None and target not in TARGETS:
        raise usage_error(f"unknown target {target!r}: choose one of {', '.join(TARGETS)}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise usage_error(f"--fail-on {fail_on!r}: choose one of {', '.join(FAIL_ON)}")
    try:
        return resolve(
            paths,
            config_file=config,
            isolated=isolated,
            target=target,
            select=split_codes(select) or None,
            ignore=split_codes(ignore, "--ignore"),
            extend_select=split_codes(extend_select, "--extend-select"),
            exclude=tuple(exclude or ()),
            fail_on=fail_on,
            portable=portable,
        )
    except ConfigError as exc:
        raise usage_error(str(exc)) from None
    finally:
        for passed in PASSED_OVER:
            err_console.print(
                f"note: {plain(str(passed))} is passed over: it belongs to another user and lies above the "
                "project (name it with --config to use it)",
                soft_wrap=True,
            )


def note_if_cache_off(no_cache: bool, paths: list[Path], cache_dir: Path | None) -> None:
    """Say once, on stderr, why the cache cannot be used (its key is missing or not the user's
    own, its folder cannot be written): a run then works as with --no-cache, never fails for
    it. A default cache folder left unwritable (root's, by an older `sudo porter`) made every
    run cold with no word."""
    if _cache_off(no_cache):
        return
    from porter.pipeline.cache import Cache, named_dir, seen_by_git

    cache = Cache.for_paths(paths, named_dir(cache_dir))
    problem = cache.problem if cache.problem is not None or not cache.enabled else seen_by_git(cache.directory)
    if problem is not None:
        err_console.print(f"note: {plain(problem)} (--no-cache silences this note)", soft_wrap=True)


def note_if_cache_full() -> None:
    """Say once, on stderr, after the run, that its new results were not kept: a write of the
    cache failed for want of space (a full disk, a quota). The run's results are as without
    the cache; before, a full cache disk made every run cold for what changed, unsaid."""
    from porter.pipeline.cache import NOT_KEPT

    for why in NOT_KEPT:
        err_console.print(f"note: {plain(why)} (--no-cache silences this note)", soft_wrap=True)


def note_if_git_unread() -> None:
    """Say once, on stderr, after the run, what of git's ignore settings the walk could not
    ask git for (git not installed, its configuration unreadable): then the files a
    `core.excludesFile` names were linted, where `git status` leaves them out."""
    from porter.pipeline.discover import NOTES

    for why in NOTES:
        err_console.print(f"note: {plain(why)}", soft_wrap=True)


_CACHE_OWN = re.compile(r"\.gitignore|CACHEDIR\.TAG|v\d+")  # what porter's cache folder holds
_CACHE_MARKS = re.compile(r"\.gitignore|CACHEDIR\.TAG")  # ... before porter marked it its own


def _porter_made(folder: Path) -> bool:
    """Whether porter's cache marked `folder` its own: its `.gitignore`, or its `CACHEDIR.TAG`
    (written beside a `.gitignore` of the user's, which the cache keeps: a user's `*`, as for
    ruff's cache, made the first run's `v3/` "not porter's cache" to every later run, exit 2;
    twenty-fifth read)."""
    from porter.pipeline.cache import MARKER_HEAD, TAG, begins

    return begins(folder / ".gitignore", MARKER_HEAD) or begins(folder / "CACHEDIR.TAG", TAG)


def _cache_off(no_cache: bool) -> bool:
    return no_cache or os.environ.get("PORTER_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def check_cache_dir(cache_dir: Path | None, paths: list[Path], no_cache: bool) -> None:
    """A usage error when the cache folder (`--cache-dir`, else `PORTER_CACHE_DIR`) is an input
    or holds one: the cache marks its folder ignored (a `.gitignore` of `*`, as ruff's does),
    so `--cache-dir .` or an empty `--cache-dir ""` hid the whole project from the run (and
    from git) and lint said "All checks passed"."""
    if _cache_off(no_cache):
        return
    named = "--cache-dir"
    if cache_dir is None:
        env = os.environ.get("PORTER_CACHE_DIR")
        if not env:
            return
        cache_dir, named = Path(env), "PORTER_CACHE_DIR"
    # (`os.path.realpath`, not `Path.resolve`: on Python < 3.13 that raises RuntimeError at a
    # link loop, and a cache folder or an input that was one ended the run in a traceback)
    where = Path(os.path.realpath(cache_dir))
    for p in paths:
        src = Path(os.path.realpath(p))
        if where == src or where in src.parents:
            raise usage_error(
                f"{named} {cache_dir} holds the input {p}: the cache marks its folder ignored, "
                "so nothing would be checked; choose a folder of its own"
            )
    try:
        names = [e.name for e in os.scandir(where)] if where.is_dir() else []
    except OSError:
        names = []  # a folder that cannot be listed cannot hold the cache either: off, as before
    from porter.pipeline.cache import only_entries

    # `v1`, `v2` are the cache's entry folders only beside the marks porter writes with them:
    # without either they are a project's (an API's versioned packages, api/v1/m.py)
    porters = _porter_made(where) or only_entries(where)  # (the latter: a `v3/` made on a full disk)
    own = _CACHE_OWN if porters else _CACHE_MARKS
    others = [name for name in names if not own.fullmatch(name)]
    if not porters and {".gitignore", "CACHEDIR.TAG"} <= set(names):
        others.append(".gitignore")  # (the cache can mark it with neither: its `v3/` is refused from the next run)
    if others:
        raise usage_error(
            _marks_unread(where, f"{named} {cache_dir}")
            or f"{named} {cache_dir} holds files that are not porter's cache ({plain(others[0])}, ...): the cache "
            "marks its folder ignored, which would hide them; choose a folder of its own"
        )


def _marks_unread(folder: Path, named: str) -> str | None:
    """The error where a mark of the cache's in `folder` cannot be read by this user: an older
    porter wrote them for their writer only, and a teammate sharing the folder was told "holds
    files that are not porter's cache" (twenty-eighth read; they are for everyone to read now)."""
    for name in (".gitignore", "CACHEDIR.TAG"):
        mark = folder / name
        try:
            info = mark.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and not os.access(mark, os.R_OK):
            return (
                f"{named}: its {name} cannot be read (user {info.st_uid}'s, mode {stat.S_IMODE(info.st_mode):o}), "
                "so whether the folder is porter's cache is not known: that user can `chmod a+r` its .gitignore "
                "and CACHEDIR.TAG (an older porter, or a umask of 077, made them theirs only), or choose a "
                "folder of its own"
            )
    return None


def check_paths(paths: list[Path]) -> None:
    """A usage error naming every path given that does not exist."""
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise usage_error(f"no such file or directory: {', '.join(str(p) for p in missing)}")


def settings_of(eff: Effective, **extra: Any) -> Settings:
    """The run's settings from the effective configuration, or a usage error."""
    try:
        return eff.settings(**extra)
    except ValueError as exc:  # a ConfigError, or a combination Settings refuses
        raise usage_error(str(exc)) from None


def command_stdin(command: str):
    """The command's standard input for a script-mode run (`porter.verify.script.command_stdin`),
    with the line that says where porter's own is not passed on written to stderr."""
    from porter.verify.script import command_stdin as given

    stdin, dropped = given()
    if dropped is not None:
        typer.echo(f"porter {command}: {dropped}", err=True)
    return stdin


def work_outlives_the_reader(writes: bool) -> None:
    """Where the command writes files (`rewrite` but `--diff` alone, `lint --fix`, a `--report` of
    `trace compare`, `trace ops`, `parity-check`, and `trace record`'s trace): a reader of its
    output that leaves (`2>&1 | head -1`) stops the output, not the writes
    (`PorterConsole.on_broken_pipe`). rich's handler ended the run at its first line, nothing
    written, exit 0; ruff's `--fix` writes every fix (twenty-ninth read)."""
    if writes:
        from porter.report.console import PorterConsole  # (rich: only for a command that writes)

        PorterConsole.goes_on_without_a_reader = True


def echo_document(text: str) -> None:
    """A document (`--json`) to stdout, past the console but under its rule for a reader that
    left (`PorterConsole.on_broken_pipe`): `kernels --scaffold DIR --json | head -1` ended at the
    broken pipe, no scaffold written, exit 0 (thirtieth read, second wave)."""
    try:
        typer.echo(text)
    except BrokenPipeError:
        console.on_broken_pipe()
