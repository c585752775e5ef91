"""A run over many files: discover, read, port, and count. Shared by rewrite and lint.

Bad input never stops a run: a file that cannot be read becomes an error result naming the
reason, and the run goes on with the rest.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import posixpath
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import BrokenExecutor, CancelledError, Future
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar


from porter.config import globs
from porter.analysis import cuda_only_index, native_ops
from porter.pipeline.cache import NOT_KEPT, Cache, named_dir
from porter.core.kinds import REQUIREMENTS, is_python, kind_of
from porter.files.deps.build_read import read_by_build
from porter.files.deps.constraint_files import COMMAND_KINDS, constraint_roles
from porter.files.deps.tox_ini import NAMES as NAMING_FILES, PIP_CONFIGS
from porter.files.deps.imports import ImportsAfterPort, imports_cuda_only, named_modules, wants_imports
from porter.analysis.kinds import BackendKind, ModuleKind
from porter.config.cuda_packages import package_heads
from porter.pipeline import discover as discovery
from porter.pipeline.discover import Candidate, discover
from porter.core.findings import FileResult, FileStatus, Severity
from porter.analysis.generic import keeps_generic_selection, project_selects_generically
from porter.analysis.index import ProjectIndex, answers as index_answers
from porter.pipeline import projects
from porter.pipeline.parallel import DEFAULT_FILE_TIMEOUT, FLUSH, MIN_PARALLEL_FILES, Flush, Job, Pool, default_jobs
from porter.analysis.prefilter import NOT_ADMITTED, admits_file
from porter.core.reading import (
    MAX_PARSE_BYTES,
    Unreadable,
    folder_is_package,
    lf_line_ends,
    read_regular,
    read_regular_stat,
)
from porter.config import line_length as formatter
from porter.config.settings import Facts, Settings
from porter.pipeline.statindex import StatIndex, context_key
from porter.core.textsafe import path_name as utf8_name


def relative_name(path: Path) -> str:
    """The path relative to the working folder as the file system spells it (a name that is
    not UTF-8 keeps its surrogate escapes): what a patch header must name."""
    # the folder is resolved, the name is not: a link is shown under its own name
    try:
        return (_resolved(path.parent) / path.name).relative_to(_resolved(Path.cwd())).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=4096)
def _resolved_cached(folder: Path, cwd: str) -> Path:
    return folder.resolve()


def _resolved(folder: Path) -> Path:
    """`folder.resolve()`, once per folder and working folder in a run (a realpath per file
    cost more than the rest of a warm run)."""
    return _resolved_cached(folder, os.getcwd())


def display_path(path: Path | str) -> str:
    """The name every result and report carries: valid UTF-8 (undecodable bytes as `\\xNN`)."""
    return _display(os.fspath(path), os.getcwd())


@lru_cache(maxsize=65536)
def _display(path: str, cwd: str) -> str:
    return utf8_name(relative_name(Path(path)))


def _name(cand: Candidate) -> str:
    """`display_path` of the candidate's path (discover works it out for the files it walks)."""
    return cand.name if cand.name is not None else display_path(cand.path)


def forget_paths() -> None:
    """Drop what this process remembers of the file system's paths (once per run: a folder
    may have become a link since the last run in the same process), and of git's settings."""
    discovery.forget()
    _display.cache_clear()
    _resolved_cached.cache_clear()
    formatter.forget()


class _FileIgnores:
    """A `per-file-ignores` table compiled once: the patterns that do not start with `/` in one
    `Spec`, those that do (anchored at the file system root: config files write their patterns
    that way, resolved against the config's folder) in another, each asked at once for every
    pattern that matches a file (`Spec.hits`). A pattern starting with `!` applies to the files
    it does not match, as in ruff (alone in a gitignore-style list, a negation matched nothing:
    `"!tests/**" = ["DEV"]` ignored DEV nowhere, in silence). Each pattern was its own Spec,
    tried on each file: 20,000 patterns cost 55 ms a file (twentieth read); a cache of the last
    256 patterns was refilled for every file before that (eighteenth read)."""

    def __init__(self, table: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        self.codes = [codes for _, codes in table]
        bodies = [pattern.removeprefix("!") for pattern, _ in table]
        self.negated = [i for i, (pattern, _) in enumerate(table) if pattern.startswith("!")]
        anchored = [body.startswith("/") for body in bodies]
        # (a pattern of the other kind is an empty line in each: no pattern, same numbering)
        self.relative = globs.spec(b if not a else "" for b, a in zip(bodies, anchored, strict=True))
        self.absolute = (
            globs.spec(b if a else "" for b, a in zip(bodies, anchored, strict=True)) if any(anchored) else None
        )

    def applying(self, path: Path | str, name: str) -> list[int]:
        """The table's entries that apply to the file, in the table's order."""
        matched = self.relative.hits(name)
        if self.absolute is not None:
            matched |= self.absolute.hits(Path(path).resolve().as_posix())
        if self.negated:
            matched.symmetric_difference_update(self.negated)
        return sorted(matched)


_ignores: list[tuple[tuple[tuple[str, tuple[str, ...]], ...], _FileIgnores]] = []


def _file_ignores(table: tuple[tuple[str, tuple[str, ...]], ...]) -> _FileIgnores:
    """The run's table compiled, once: known by its identity, then by its value (an lru_cache
    hashed the whole table for every file, which grew with it as the matching did)."""
    for known, compiled in _ignores:
        if known is table:
            return compiled
    found = next((compiled for known, compiled in _ignores if known == table), None)
    compiled = found if found is not None else _FileIgnores(table)
    _ignores[:] = [(table, compiled), *_ignores[:7]]
    return compiled


def file_settings(settings: Settings, path: Path | str, name: str | None = None) -> Settings:
    """The settings for one file: `per-file-ignores` entries that match it add to ignore."""
    if not settings.per_file_ignores:
        return settings
    name = name if name is not None else display_path(path)
    ignores = _file_ignores(settings.per_file_ignores)
    extra: list[str] = []
    for i in ignores.applying(path, name):
        extra.extend(c for c in ignores.codes[i] if c not in extra)
    if not extra:
        return settings
    return replace(settings, ignore=settings.ignore + tuple(extra))


def excluded(settings: Settings, path: Path | str) -> bool:
    """Root-anchored exclude patterns (from a config file) apply to files given by name too,
    and so do their negations (`!gen/keep.py` after `gen/*`)."""
    spec = _absolute_excludes(settings.exclude)
    return spec is not None and spec.match_file(Path(path).resolve().as_posix())


_absolute: list[tuple[tuple[str, ...], globs.Spec | None]] = []


def _absolute_excludes(exclude: tuple[str, ...]) -> globs.Spec | None:
    """The root-anchored patterns of `exclude`, compiled once a run: the run's one tuple is known
    by its identity (an lru_cache hashed the whole tuple, and picked the anchored patterns out of
    it, for every file: 100,000 patterns cost each file a tenth of a second)."""
    if _absolute and _absolute[0][0] is exclude:
        return _absolute[0][1]
    absolute = tuple(p for p in exclude if p.removeprefix("!").startswith("/"))
    spec = globs.spec(absolute) if absolute else None  # (a repository's config chooses them: linear matching)
    _absolute[:] = [(exclude, spec)]
    return spec


def _read(cand: Candidate, settings: Settings) -> tuple[str, Settings, bytes | None, FileResult | None]:
    """(name, settings for the file, its bytes or None, the result when it cannot be read)."""
    name, settings, _, source, failed = _read_stat(cand, settings)
    return name, settings, source, failed


def _problem(cand: Candidate, name: str) -> FileResult:
    assert cand.problem is not None
    status = FileStatus.ERROR if "broken" in cand.problem or "no such" in cand.problem else FileStatus.SKIPPED
    return FileResult(path=name, status=status, reason=cand.problem)


def _read_stat(
    cand: Candidate, settings: Settings
) -> tuple[str, Settings, os.stat_result | None, bytes | None, FileResult | None]:
    """`_read`, with the `stat` taken before the bytes were read (what the stat index keys on)."""
    name = _name(cand)
    settings = file_settings(settings, cand.where, name)
    if cand.problem is not None:
        return name, settings, None, None, _problem(cand, name)
    try:
        st, source = read_regular_stat(cand.where)
    except Unreadable as exc:
        reason = "a directory named like a Python file" if exc.reason.startswith("a directory") else exc.reason
        status = FileStatus.SKIPPED if exc.skipped else FileStatus.ERROR
        return name, settings, None, None, FileResult(path=name, status=status, reason=reason)
    return name, settings, st, source, None


def project_index(
    candidates: list[Candidate],
    store: Cache | None = None,
    stats: StatIndex | None = None,
    target: str | None = None,
    cuda_sources: Sequence[str] = (),
    given: Sequence[Path] = (),
    pool: Pool | None = None,
) -> dict[str, Facts]:
    """Each file's answers from one index of device values per project of the run: `given`
    (the paths the run was given) tells a folder holding several projects, each indexed on
    its own (`porter.pipeline.projects`); without it, or with one project, one index.

    `pool`: where a project indexed for the first time (no answers cached, no earlier state
    to start from: a cold run) is worked out, its two analyses at once, each handed on as soon
    as its project's files are scanned; after an edit the index is worked out here, from its
    last state."""
    parts: list[_Part] = []
    running: list[tuple[_Part, str, Future[Any]]] = []
    try:
        for group, cu in index_parts(candidates, cuda_sources, given):
            part = _Part(group, store, stats, target, cu)
            parts.append(part)
            if pool is not None and part.values is None and part.previous is None:
                running.extend((part, kind, pool.call(*part.task(kind))) for kind in part.missing())
        for part, kind, future in running:
            part.answered(kind, _here_if_lost(future, *part.task(kind)))
    except BaseException:
        if pool is not None:
            pool.close(cancel=True)  # no worker outlives an interrupted run
        raise
    out: dict[str, Facts] = {}
    for part in parts:
        out.update(part.facts())
    return out


def index_parts(
    candidates: list[Candidate], cuda_sources: Sequence[str] = (), given: Sequence[Path] = ()
) -> list[tuple[list[Candidate], list[str]]]:
    """The project index's independent parts: (a project's candidates, its .cu files), in the
    order each project's first file comes. No part's answers depend on another's, so they may
    be worked out apart (at once, in several workers: `_overlapped`)."""
    groups = projects.split(candidates, given) if given else []
    if len(groups) <= 1:
        return [(candidates, list(cuda_sources))]
    shown = {folder: display_path(folder) for folder, _ in groups if folder is not None}
    parts: list[tuple[list[Candidate], list[str]]] = []
    for folder, group in groups:
        if folder is None:  # the files in no project: the .cu files in none either
            cu = [c for c in cuda_sources if not any(_inside(c, s) for s in shown.values())]
        else:
            cu = [c for c in cuda_sources if _inside(c, shown[folder])]
        parts.append((group, cu))
    return parts


def index_part(candidates: list[Candidate], target: str | None, cuda_sources: Sequence[str]) -> dict[str, Facts]:
    """One part's answers (`index_parts`), worked out without a cache (in a worker)."""
    return _project_facts(candidates, None, None, target, cuda_sources)


def _inside(name: str, folder: str) -> bool:
    """Whether the displayed `name` lies in the folder displayed as `folder`."""
    return folder in ("", ".") or name.startswith(folder.rstrip("/") + "/")


def _project_facts(
    candidates: list[Candidate],
    store: Cache | None,
    stats: StatIndex | None,
    target: str | None,
    cuda_sources: Sequence[str],
) -> dict[str, Facts]:
    """Each file's answers from one index of device values over one project (`_Part`), the
    analyses the cache has no answers for worked out here."""
    return _Part(candidates, store, stats, target, cuda_sources).facts()


_VALUES, _CUDA_ONLY = "values", "cuda-only"


class _Part:
    """One project's index (`porter.analysis.index`): its files scanned, and its two analyses'
    answers, from the cache or still to be worked out (`missing`, `task`, `answered`).

    A bytes scan picks the files that may carry a device value; they are hashed, and when
    none changed since the last run the answers come from the cache, so a warm run parses
    nothing. Otherwise those files are read again and indexed with `ast` (no libcst).
    A file the stat index vouches for is not read: its hash and scan come from there.
    `target` and `cuda_sources` (the project's .cu files) decide what is CUDA-only. The two
    analyses are cached apart: an edit to a body re-runs the device-value index only, an edit
    to an import line of a file it does not read the CUDA-only pass only. With no cache
    (`store` None) nothing is keyed: the scan works out no hash or part of a file, only whether
    each analysis reads it."""

    def __init__(
        self,
        candidates: list[Candidate],
        store: Cache | None,
        stats: StatIndex | None,
        target: str | None,
        cuda_sources: Sequence[str],
    ) -> None:
        self.candidates = candidates
        self.store = store
        self.target = target
        self.cuda_sources = list(cuda_sources)
        self.wanted: list[tuple[str, Path | str]] = []
        # files with imports, for names imported from CUDA-only code (GUARD001), and what of each
        # the CUDA-only facts depend on (kept in the stat index, so a warm run reads none of them)
        self.importing: list[tuple[str, Path | str]] = []
        # each importing file's (sha256, part) as scanned: `_cuda_only` keys its answers by the
        # part of the bytes it reads, the scanned one where they are the same (None: no cache)
        self.scanned: dict[str, tuple[bytes, bytes]] | None = {} if store is not None else None
        parts: list[tuple[str, bytes]] = []
        digest = hashlib.sha256()
        for cand in candidates:
            if cand.problem is not None:
                continue
            name = _name(cand)
            # a requirements file, a notebook ...: no Python module of the project
            scanned = _scanned(cand, name, stats, keyed=self.scanned is not None) if is_python(name) else None
            if scanned is None:
                continue
            wants, sha, imports = scanned
            if imports:
                self.importing.append((name, cand.where))
                if self.scanned is not None:
                    self.scanned[name] = (sha, imports)
                    parts.append((name, imports))
            if wants:
                self.wanted.append((name, cand.where))
                digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + sha)
        # each file's own top-level modules its `import NAME` finds (`own_top_modules`): name -> file
        self.own_tops = own_top_modules(candidates)
        self.values: dict[str, Facts] | None = None
        self.extra: dict[str, Facts] | None = None
        self.previous: object = None  # the state of the project's last index, which the device values start from
        self.state_key = ""
        hashed, native = _native(self.cuda_sources, stats)
        if store is not None:
            self.values = store.get_index(_VALUES_KEY + digest.hexdigest())
            self.state_key = "values-state:" + _project_key(candidates)
            self.previous = store.get_state(self.state_key) if self.values is None else None
            cuda_key = _CUDA_ONLY_KEY + cuda_only_index.digest(parts, target, self.cuda_sources, hashed, self.own_tops)
            self.extra = store.get_index(cuda_key)
        if self.extra is None and native is None:
            # the stat index vouched for the sources; the facts are worked out from their bytes,
            # and keyed by the bytes read
            native = native_ops.read(self.cuda_sources)
        self.native = native or []

    def missing(self) -> list[str]:
        """The analyses the cache had no answers for."""
        return [kind for kind, got in ((_VALUES, self.values), (_CUDA_ONLY, self.extra)) if got is None]

    def task(self, kind: str) -> tuple[Any, ...]:
        """(function, its arguments...): what works the analysis `kind` out, here or in a worker."""
        if kind == _VALUES:
            return (_answered, self.wanted, self.previous)
        return (_cuda_only, self.importing, self.target, self.cuda_sources, self.native, self.scanned, self.own_tops)

    def answered(self, kind: str, result: Any) -> None:
        """The analysis `kind`'s answers, worked out (`task`): kept, and cached under the key of
        the bytes they were worked out from (`task` reads the files again: one edited since the
        scan filed the new bytes' answers under the old bytes' key, and every later run of the
        old bytes, after an undo or a checkout, got them; seventeenth read)."""
        if kind == _VALUES:
            self.values, state, key = result
            if self.store is not None:
                self.store.put_state(self.state_key, state)
                self.store.put_index(key, self.values)
        else:
            self.extra, key = result
            if self.store is not None:
                self.store.put_index(key, self.extra)

    def facts(self) -> dict[str, Facts]:
        """Each file's answers, the analyses nobody worked out yet worked out here."""
        for kind in self.missing():
            fn, *args = self.task(kind)
            self.answered(kind, fn(*args))
        assert self.values is not None and self.extra is not None  # every analysis answered
        facts = _abstraction_everywhere(cuda_only_index.merged(self.values, self.extra), self.candidates)
        return _own_top_modules(facts, self.own_tops)


def _hashed(native: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """(name, `native_ops.sha256_with`) of each source: its bytes and its headers' are keyed."""
    dirs: dict[Path, tuple[Path, ...]] = {}
    out = []
    for name, source in native:
        path = Path(native_ops.source_path(name))
        read_too = native_ops.headers(source, path, None, native_ops.build_dirs(path, dirs))
        out.append((name, native_ops.sha256_with(source, read_too)))
    return out


def _native(
    cuda_sources: Sequence[str], stats: StatIndex | None
) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]] | None]:
    """(name, sha256) of each of the project's C++/CUDA sources that registers ops, and
    `native_ops.read`'s (name, bytes) of them, or None where the stat index vouched for one
    of them: it is not read (a warm run read the 414 of the 1.2M-line benchmark again)."""
    if stats is None:
        native = native_ops.read(cuda_sources)
        return _hashed(native), native
    hashed: list[tuple[str, bytes]] = []
    read: list[tuple[str, bytes]] | None = []
    dirs: dict[Path, tuple[Path, ...]] = {}
    for name in cuda_sources:
        if not name.endswith(native_ops.SUFFIXES):
            continue
        path = Path(native_ops.source_path(name))
        known = stats.native(name, native_ops.build_dirs(path, dirs))
        if known is not None:
            sha, registers = known
            if registers:
                hashed.append((name, sha))
                read = None
            continue
        try:
            st, source = read_regular_stat(native_ops.source_path(name), MAX_PARSE_BYTES)
        except (OSError, ValueError):
            continue
        # (the headers its key macros, and a block a header's macro opens, are read from: the stat index looks at them
        # too, so a header edited to open one is read again)
        registers, read_too = native_ops.registers_in(source, path, native_ops.build_dirs(path, dirs))
        stats.record_native(name, st, source, registers, read_too, native_ops.build_dirs(path, dirs))
        if registers:
            hashed.append((name, native_ops.sha256_with(source, read_too)))
            if read is not None:
                read.append((name, source))
    return hashed, read


T = TypeVar("T")


def _here_if_lost(future: Future[T], fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` from the worker `future` stands for; worked out here if that worker died."""
    try:
        return future.result()
    except (BrokenExecutor, CancelledError):
        return fn(*args)


def _scanned(
    cand: Candidate, name: str, stats: StatIndex | None, keyed: bool = True
) -> tuple[bool, bytes, bytes] | None:
    """A Python file's (whether the index follows device values into it, its sha256, what of it
    the CUDA-only facts depend on), from the stat index when it vouches for the file, else from
    its bytes; None for a file the run does not read (`reading.read_regular`), nor parse (one
    past `MAX_PARSE_BYTES`: its porter says so; the index neither reads nor parses it, where a
    10 MB file cost it 30 s and 3.4 GB: twentieth read). Not `keyed` (a
    run with no cache keys nothing by them): no sha256, and for the part only whether there is
    one (`cuda_only_index.reads`: its regular expressions over the whole file, and its hash,
    were ~13% of the index's CPU on the bench corpus, and worked out twice)."""
    try:
        st = stats.stat(name, cand.where) if stats is not None else os.stat(cand.where)
        if st.st_size > MAX_PARSE_BYTES or not stat.S_ISREG(st.st_mode):
            return None
        rec = stats.lookup(name, st) if stats is not None else None
        if rec is not None:
            return rec.wanted, bytes.fromhex(rec.sha256), bytes.fromhex(rec.imports)
        source = read_regular(cand.where, MAX_PARSE_BYTES)
        lines = lf_line_ends(source)
        if not keyed:
            return ProjectIndex.wants(lines), b"", b"\1" if cuda_only_index.reads(lines) else b""
        return ProjectIndex.wants(lines), hashlib.sha256(source).digest(), cuda_only_index.part(lines)
    except (OSError, ValueError):
        return None


_VALUES_KEY, _CUDA_ONLY_KEY = "values:", "cuda-only:"


def _answered(wanted: list[tuple[str, Path | str]], previous: object) -> tuple[dict[str, Facts], object, str]:
    """The index of device values over `wanted`, worked out from the files' bytes (the cache
    had none for them), the state to keep for the next run, and the key of the bytes read (as
    `_Part` makes it from its scan). The answers of the project's last index (`previous`) that
    nothing they were worked out from changed since are kept (`index.answers`): an edit re-reads
    what depends on it."""
    files: list[tuple[str, bytes]] = []
    digest = hashlib.sha256()
    for name, path in wanted:
        try:
            source = read_regular(path, MAX_PARSE_BYTES)  # (one grown past it since the scan: passed over)
        except OSError:
            continue
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(source).digest())
        files.append((name, lf_line_ends(source)))
    facts, state, _ = index_answers(files, previous)
    return {name: facts.get(name, ()) for name, _ in wanted}, state, _VALUES_KEY + digest.hexdigest()


def _project_key(candidates: list[Candidate]) -> str:
    """What names a project's last index: the folders its Python files are in, the same after
    an edit, a new file or a removed one (what the index keeps from it is checked file by
    file), and not the same for a run's dependency files, indexed on their own (`iter_results`)."""
    # `abspath` once per folder, not per file: the folder of `abspath(p)` is `abspath` of p's folder
    above = {os.path.dirname(c.where) for c in candidates if is_python(_name(c))}
    folders = sorted({os.path.abspath(f) for f in above})
    return hashlib.sha256("\0".join(folders).encode("utf-8", "surrogateescape")).hexdigest()


def _cuda_only(
    importing: list[tuple[str, Path | str]],
    target: str | None,
    cuda_sources: Sequence[str],
    native: list[tuple[str, bytes]],
    scanned: dict[str, tuple[bytes, bytes]] | None = None,
    own: dict[str, dict[str, str]] | None = None,
) -> tuple[dict[str, Facts], str]:
    """The CUDA-only facts over `importing`, worked out from the files' bytes, and the key of
    those bytes (as `_Part` makes it from its scan). `scanned`: each file's (sha256, part) as
    `_Part` scanned it, the part kept where the bytes read are the same; None: no key (a run
    with no cache), "" in its place."""
    everything: list[tuple[str, bytes]] = []
    parts: list[tuple[str, bytes]] = []
    for name, path in importing:
        try:
            source = read_regular(path, MAX_PARSE_BYTES)  # (one grown past it since the scan: passed over)
        except OSError:
            continue
        lines = lf_line_ends(source)
        everything.append((name, lines))
        if scanned is None:
            continue
        seen = scanned.get(name)
        same = seen is not None and seen[0] == hashlib.sha256(source).digest()
        part = seen[1] if seen is not None and same else cuda_only_index.part(lines)
        if part:
            parts.append((name, part))
    facts = cuda_only_index.cuda_only_facts(everything, target, cuda_sources, native, own)
    if scanned is None:
        return facts, ""
    return facts, _CUDA_ONLY_KEY + cuda_only_index.digest(parts, target, cuda_sources, _hashed(native), own)


def _abstraction_everywhere(facts: dict[str, Facts], candidates: list[Candidate]) -> dict[str, Facts]:
    """The project's device-abstraction fact (porter.analysis.device_backends.abstraction) for
    its files of other kinds too: in a project with backends of its own, a deployment file that
    picks CUDA devices configures its CUDA backend (porter.files.port keeps it)."""
    fact = next((f for found in facts.values() for f in found if f[2] == BackendKind.ABSTRACTION), None)
    if fact is None:
        return facts
    out = dict(facts)
    for cand in candidates:
        name = _name(cand)
        if cand.problem is None and not is_python(name) and name not in out:
            out[name] = (fact,)
    return out


def own_top_modules(candidates: list[Candidate]) -> dict[str, dict[str, str]]:
    """Each Python file whose `import NAME` finds the project's own top-level module `NAME`
    (`NAME.py` or `NAME/__init__.py`) and not the package porter knows by that name
    (`cuda_packages.package_heads`: `import cuda` beside a `cuda.py` is not cuda-python): file ->
    NAME -> the module's file. Python looks for it in the file's folder (a script's `sys.path[0]`),
    or, for a module of a package (its folder holds an `__init__.py`), in the folder above the
    package's outermost folder. A file given alone (`porter lint train.py`) has no project's
    files beside it: those folders are read off the disk for it (`_own_on_disk`)."""
    paths = {_name(c): os.fspath(c.where) for c in candidates if c.problem is None and is_python(_name(c))}
    names = list(paths)
    heads = package_heads()
    alone = {_name(c): _own_on_disk(c.path, heads) for c in candidates if c.name is None and c.problem is None}
    out: dict[str, dict[str, str]] = {n: own for n, own in alone.items() if own and is_python(n)}
    names = [n for n in names if n not in alone]
    packages = {os.path.dirname(n) for n in names if os.path.basename(n) == "__init__.py"}
    tops: dict[str, dict[str, str]] = {}  # folder -> own top-level module -> its file
    for n in names:
        folder, base = os.path.split(n)
        if base.endswith(".py") and base[:-3] in heads and base != "__init__.py":
            tops.setdefault(folder, {})[base[:-3]] = n
        elif base == "__init__.py" and os.path.basename(folder) in heads:
            tops.setdefault(os.path.dirname(folder), {})[os.path.basename(folder)] = n
    listed: dict[str, dict[str, str]] = {}  # folder -> what is on the disk there and no candidate
    for n in names:
        root, where = os.path.dirname(n), os.path.dirname(paths[n]) or "."
        while root in packages and root != os.path.dirname(root):
            root, where = os.path.dirname(root), os.path.dirname(where) or "."
        if root not in listed:
            # (an own module the run does not check, `--exclude cuda.py` or git-ignored, is still what Python
            # imports: thirty-seventh read, cache)
            listed[root] = {m: os.path.join(root, os.path.relpath(f, where)) for m, f in _listed(where, heads).items()}
        # (a `cuda/__init__.py` at the top, or a script `cuda.py`: its `import cuda` finds itself)
        own = {**listed[root], **tops.get(root, {})}
        if own:
            out[n] = own
    return out


def _own_on_disk(path: Path, heads: frozenset[str]) -> dict[str, str]:
    """The own top-level modules (`NAME.py`, `NAME/__init__.py`, NAME among `heads`) that
    Python finds for the file `path` given alone: in its folder (a script's `sys.path[0]`), or
    above its outermost package folder (one holding `__init__.py`), as on the disk: NAME -> file."""
    if not path.is_file():
        return {}
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return {module: display_path(Path(file)) for module, file in _listed(os.fspath(folder), heads).items()}


def _listed(folder: str, heads: frozenset[str]) -> dict[str, str]:
    """The top-level modules (`NAME.py`, `NAME/__init__.py`, NAME among `heads`) in `folder`, on the disk: NAME ->
    its file (a package before a module, as Python's FileFinder)."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return {}
    own: dict[str, str] = {}
    for entry in sorted(entries):
        if entry.endswith(".py") and entry[:-3] in heads and os.path.isfile(os.path.join(folder, entry)):
            own.setdefault(entry[:-3], os.path.join(folder, entry))
        elif entry in heads and os.path.isfile(init := os.path.join(folder, entry, "__init__.py")):
            own[entry] = init  # (a package before a module, as Python)
    return own


def _own_top_modules(facts: dict[str, Facts], own: dict[str, dict[str, str]]) -> dict[str, Facts]:
    """`facts` with a fact for each of a file's own top-level modules (`own_top_modules`)."""
    if not own:
        return facts
    out = dict(facts)
    for name, tops in own.items():
        found = [(None, module, ModuleKind.OWN_TOP, (path,)) for module, path in sorted(tops.items())]
        out[name] = (*out.get(name, ()), *found)
    return out


def read_candidate(cand: Candidate, settings: Settings) -> FileResult:
    name, settings, source, failed = _read(cand, settings)
    if failed is not None:
        return failed
    assert source is not None  # _read gives the bytes or the failure
    return _port_source(source, name, settings)


def _env_jobs() -> int | None:
    value = os.environ.get("PORTER_JOBS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _env_cache() -> bool:
    return os.environ.get("PORTER_NO_CACHE", "").strip().lower() in ("", "0", "false", "no")


# each item's tag in the pool: the candidate, its result when no parse is needed, its cache key
_Todo = tuple[str | None, str, os.stat_result, Settings]  # cache key, name, stat, settings of a file to parse
_Tag = tuple[Candidate, FileResult | None, _Todo | None]


def iter_results(
    paths: list[Path],
    settings: Settings,
    *,
    jobs: int | None = None,
    cache: bool | None = None,
    cache_dir: Path | None = None,
    file_timeout: float | None = None,
    sources: bool = True,
) -> Iterator[tuple[Candidate, FileResult]]:
    """Every candidate with its result, in discovery order, streamed.

    `jobs`: worker processes (default: every core the process may use; `PORTER_JOBS`);
    even 1 parses in a worker, never in this process. `cache`: reuse verified results of
    unchanged files (default on; `PORTER_NO_CACHE=1` or `cache=False` turns it off);
    `cache_dir` (or `PORTER_CACHE_DIR`) puts the cache elsewhere. `file_timeout`: seconds
    one file may take (default `DEFAULT_FILE_TIMEOUT`; 0: no limit). `sources=False`: the
    caller needs a result's `original_source` only where it has a rewrite; an unchanged file the
    stat index answers may come with its findings' lines (`FileResult.texts`) instead.
    """
    forget_paths()
    projects.forget()
    NOT_KEPT.clear()
    jobs = jobs or _env_jobs() or default_jobs()
    use_cache = _env_cache() if cache is None else cache
    store: Cache | None = None
    if use_cache:
        store = Cache.for_paths(paths, named_dir(cache_dir))

    cuda_sources: list[str] = []  # the project's .cu files: evidence of its own CUDA extensions
    candidates = [
        c
        for c in discover(paths, settings.exclude, cuda_sources=cuda_sources)
        # (the walk matched the patterns on what it found, in their order: a file given by name)
        if c.problem is not None or c.name is not None or not excluded(settings, c.where)
    ]
    if not settings.generic and keeps_generic_selection(settings):
        if project_selects_generically(c.path for c in candidates if c.problem is None and is_python(_name(c))):
            settings = replace(settings, generic=True)
    limit = DEFAULT_FILE_TIMEOUT if file_timeout is None else file_timeout
    cores = min(jobs, os.cpu_count() or jobs)
    # dependency files come last: whether one may drop a CUDA-only package depends on what the
    # ported Python still imports (porter.files.deps.imports)
    deferred = [c for c in candidates if c.problem is None and wants_imports(_name(c))]
    if not deferred:
        yield from _results(
            candidates, settings, paths, store, cores, limit, cuda_sources=cuda_sources, sources=sources
        )
        return
    first = [c for c in candidates if not (c.problem is None and wants_imports(_name(c)))]
    by_name = {_name(c): c for c in candidates if c.problem is None}
    seen = ImportsAfterPort()
    # only the CUDA-only packages the dependency files name need the ported text of their importers
    named = named_modules([data for c in deferred if (data := _read(c, settings)[2]) is not None])
    yield from _results(
        first,
        settings,
        paths,
        store,
        cores,
        limit,
        cuda_sources=cuda_sources,
        keep_ported=named,
        seen=seen,
        sources=sources,
    )
    readable = [_name(c) for c in candidates if c.problem is None]
    built = read_by_build(readable, lambda n: _read(by_name[n], settings)[2])
    by_name.update(tox := _naming_files(deferred, candidates))
    constrained, too = constraint_roles([*readable, *tox], lambda n: _read(by_name[n], settings)[2])
    yield from _results(
        deferred,
        replace(
            settings,
            imported_after_port=seen.modules(),
            build_requirements=built,
            constraint_files=constrained,
            constraints_too=too,
            given_by_name=tuple(_name(c) for c in deferred if c.name is None),
        ),
        paths,
        store,
        cores,
        limit,
        cuda_sources=cuda_sources,
        sources=sources,
    )


def _naming_files(deferred: list[Candidate], candidates: list[Candidate]) -> dict[str, Candidate]:
    """The tox.ini and pip configuration files (`tox_ini.NAMES`) in a requirements file's folder or a folder above
    it, up to its walk's root: no kind a run checks, but they name requirements files with `-c` (a tox.ini's
    `deps`, a pip.conf's `constraint`; thirty-sixth read, cdleft2), and what names them decides what their ports may
    add. A pip configuration file beside a Dockerfile, a script, a compose file or a workflow (or above it) too: one
    copied to the image's `/etc/pip.conf`, or named by `PIP_CONFIG_FILE`, is what pip reads there (thirty-seventh
    read, cache). Read each run, as the files themselves: the roles are part of the settings every cache key hashes."""
    out: dict[str, Candidate] = {}
    seen: set[tuple[str, str]] = set()
    for cand in (c for c in [*deferred, *candidates] if c.problem is None):
        name = _name(cand).replace("\\", "/")
        kind = kind_of(name)
        files = NAMING_FILES if kind == REQUIREMENTS else PIP_CONFIGS if kind in COMMAND_KINDS else ()
        folder, where = posixpath.dirname(name), cand.path.parent if files else None
        while files and where is not None and (folder, files[0]) not in seen:
            seen.add((folder, files[0]))
            for file in files:
                if posixpath.join(folder, file) not in out and os.path.isfile(where / file):
                    out[posixpath.join(folder, file)] = Candidate(
                        where / file, cand.root, None, posixpath.join(folder, file)
                    )
            if where == cand.root or folder in ("", "/") or posixpath.basename(folder) in ("", ".", ".."):
                break
            folder, where = posixpath.dirname(folder), where.parent
    return out


def _reader(cand: Candidate, settings: Settings) -> Callable[[], bytes | None]:
    """The candidate's bytes, read on demand (through the run's one reading function)."""
    return lambda: _read(cand, settings)[2]


def _results(
    candidates: list[Candidate],
    settings: Settings,
    paths: list[Path],
    store: Cache | None,
    cores: int,
    limit: float,
    *,
    cuda_sources: list[str],
    keep_ported: tuple[str, ...] = (),
    seen: ImportsAfterPort | None = None,
    sources: bool = True,
) -> Iterator[tuple[Candidate, FileResult]]:
    """The candidates' results, in order. `cuda_sources`: the project's .cu files.
    `keep_ported`: modules of CUDA-only packages; a file that imports one is ported with its
    new text even when only findings are wanted (what it still imports is read from that text).
    `seen`: told each result's imports (the stat index keeps them: a warm run reads none).
    `sources`: as for `iter_results`."""
    if store is None and cores > 1 and len(candidates) >= OVERLAP_MIN_FILES:
        for cand, result in _overlapped(candidates, settings, cores, limit, cuda_sources, keep_ported, paths):
            if seen is not None:
                seen.add(result, read=_reader(cand, settings))
            yield cand, result
        return
    stats = StatIndex(store, paths, settings) if store is not None and store.enabled else None
    # a cold run's index over many files is worked out in the workers, its parts at once
    # (a pool that is never asked for anything starts no worker: a warm run starts none)
    pool = Pool(cores, file_timeout=limit) if cores > 1 and len(candidates) >= OVERLAP_MIN_FILES else None
    facts = project_index(candidates, store, stats, settings.target, cuda_sources, paths, pool=pool)
    serial = _Serial(settings, store, stats, facts, keep_ported, sources, imports_wanted=seen is not None)

    # every parse runs in a worker process (a crash or a stall costs one file, not the run);
    # one worker is cheapest below a few files, more pay for themselves past that
    items = (serial.prepared(cand) for cand in candidates)
    head, parse = _head(items)
    if pool is None or not pool.started:
        pool = Pool(1 if parse < MIN_PARALLEL_FILES else cores, file_timeout=limit)
    for tag, parsed in pool.map(itertools.chain(head, items)):
        cand, result = serial.finish(tag, parsed)
        if seen is not None:
            serial.imports(cand, result, seen)
        yield cand, result
    if stats is not None:
        stats.save()
        stats.store.prune()


def _head(items: Iterator[tuple[_Tag, Job | None]]) -> tuple[list[tuple[_Tag, Job | None]], int]:
    """The first items, up to the one that makes MIN_PARALLEL_FILES to parse (all of them when
    fewer need a parse), and how many of them need one: whether more workers pay."""
    head: list[tuple[_Tag, Job | None]] = []
    parse = 0
    for item in items:
        head.append(item)
        parse += item[1] is not None
        if parse >= MIN_PARALLEL_FILES:
            break
    return head, parse


class _Serial:
    """A run that knows the project index before the first file: each file's result comes
    from the stat index, the cache or the prefilter when one of them has it, else from a parse
    (whose result is kept in the cache and the stat index)."""

    def __init__(
        self,
        settings: Settings,
        store: Cache | None,
        stats: StatIndex | None,
        facts: dict[str, Facts],
        keep_ported: tuple[str, ...],
        sources: bool = True,
        imports_wanted: bool = False,
    ) -> None:
        self.settings = settings
        self.sources = sources
        self.imports_wanted = imports_wanted  # `imports` is asked of each result
        self.store = store
        self.stats = stats
        self.facts = facts
        self.keep_ported = keep_ported
        self.packages: dict[str, bool] = {}  # folder -> whether it is a package's
        self.siblings: dict[tuple[str, str], tuple[str, ...]] = {}  # (folder, suffix) -> device_siblings

    def package(self, cand: Candidate) -> bool:
        """`folder_is_package`: as the walk read it off the folder's listing, else worked out
        once per folder of the run (a warm run asked it twice of every file, and each `resolve`
        is an lstat per component of the path: 0.1 s of a 0.6 s warm lint of 3,945 files). A
        file that is a link is asked alone: its folder is its target's."""
        if cand.package is not None:
            return cand.package
        path = cand.path
        if os.path.islink(path):
            return folder_is_package(path)
        folder = os.path.dirname(os.fspath(path))
        known = self.packages.get(folder)
        if known is None:
            known = self.packages[folder] = folder_is_package(path)
        return known

    def device_files_beside(self, cand: Candidate) -> tuple[str, ...] | None:
        """`port.device_siblings` of a file that is not Python (what makes it one of a family of
        files per device), read once per folder and suffix of the run; None for Python."""
        if is_python(_name(cand)):
            return None
        path = os.fspath(cand.path)
        at = (os.path.dirname(path), os.path.splitext(path)[1])
        known = self.siblings.get(at)
        if known is None:
            # imported here: porter.files.port brings its verifiers (configparser, the targets'
            # data) with it, ~35M instructions at the start of every run that reads no such file
            from porter.files.port import device_siblings

            known = self.siblings[at] = device_siblings(path)
        return known

    def prepared(self, cand: Candidate) -> tuple[_Tag, Job | None]:
        """The candidate's tag, and its parse when no result is known without one."""
        if cand.problem is not None:
            name = _name(cand)
            return (cand, _problem(cand, name), None), None
        package, siblings = self.package(cand), self.device_files_beside(cand)
        known = _known(
            cand, self.settings, self.facts, self.stats, (package, siblings), self.sources, self.imports_wanted
        )
        if known is not None:
            return (cand, known, None), None
        name, here, st, source, failed = _read_stat(cand, self.settings)
        if failed is not None:
            return (cand, failed, None), None
        assert source is not None and st is not None  # _read_stat gives the bytes or the failure
        # cross-file facts and the formatter's line length: in the key too
        here = replace(
            here,
            flow=self.facts.get(name, ()),
            line_length=_line_length(cand.path, here),
            package=package,
            device_siblings=siblings,
        )
        if self.keep_ported and not here.want_source and imports_cuda_only(source, self.keep_ported):
            here = replace(here, want_source=True)
        key = hit = None
        if self.store is not None:
            key = self.store.key(source, name, here)
            hit = self.store.get(key, name, source)
        if hit is not None:
            _remember(self.stats, name, st, source, here, key, hit)
            return (cand, hit, None), None
        if not admits_file(source, name, here):
            # the prefilter is cheaper than a cache entry: only the stat index records it
            result = _not_admitted(source, name)
            _remember(self.stats, name, st, source, here, None, result)
            return (cand, result, None), None
        return (cand, None, (key, name, st, here)), Job(source, name, here, admitted=True)

    def imports(self, cand: Candidate, result: FileResult, seen: ImportsAfterPort) -> None:
        """Tell `seen` the file's imports after the port: kept in its stat index record, or
        read from its text (and kept there for the next run)."""
        name = _name(cand)
        rec = self.stats.new.get(name) if self.stats is not None and cand.problem is None else None
        known = tuple(rec.imported) if rec is not None and rec.imported is not None else None
        found = seen.add(result, read=_reader(cand, self.settings), known=known)
        if rec is not None and known is None:
            self.stats.new[name] = replace(rec, imported=list(found))  # type: ignore[union-attr]

    def finish(self, tag: _Tag, result: FileResult | None) -> tuple[Candidate, FileResult]:
        """The candidate and its result; a parsed one is kept for the next run."""
        cand, ready, todo = tag
        if ready is not None:
            return cand, ready
        assert result is not None and todo is not None  # the pool parsed every item that was not ready
        key, name, st, here = todo
        if self.store is not None and key is not None and not result.transient:
            self.store.put(key, result)
            _remember(self.stats, name, st, result.original_source, here, key, result)
        return cand, result


# a run without a cache over at least this many files works the project index out in
# workers while they port the first files (below it, the index is quick)
OVERLAP_MIN_FILES = 64

# each item's tag in an overlapped run: the candidate's place, the candidate, its result when
# no parse is needed, and whether it was prepared before its project's index was known
_OTag = tuple[int, Candidate, FileResult | None, bool]
# a file read before its project's index was known: its place, the candidate, its name, its
# settings and its bytes
_Early = tuple[int, Candidate, str, Settings, bytes]


def _overlapped(
    candidates: list[Candidate],
    settings: Settings,
    workers: int,
    limit: float,
    cuda_sources: list[str],
    keep_ported: tuple[str, ...] = (),
    given: Sequence[Path] = (),
) -> Iterator[tuple[Candidate, FileResult]]:
    """`iter_results` without a cache: the project index is worked out in the workers, one
    part per project (`index_parts`), each part handed to the pool ahead of every file, so
    that all the workers share it instead of one working it out while the others run out of
    files. Meanwhile files are ported as if no cross-file fact applied to them, except those
    the index follows device values into (`ProjectIndex.wants`), which wait for their own
    project's part: most cross-file facts are theirs (on the 1.2M-line benchmark 717 of
    3,945 files have facts). A project's waiting files go to the workers as soon as its
    part is known, not once the whole index is; its guessed files that had facts after all
    (CUDA-only imports) are ported again with them, and only that result counts.
    Every file ends with the result a run that waited for the index gives, in the same order."""
    pool = Pool(workers, file_timeout=limit)
    parts = index_parts(candidates, cuda_sources, given)
    index = [pool.call(index_part, group, settings.target, cu) for group, cu in parts]
    run = _Overlap(candidates, settings, parts, index, keep_ported)
    yield from run.in_order(pool.map(run.items()))


class _Overlap:
    """An overlapped run's state: one future per part of the project index, each part's facts
    once known, the files ported before their part was known (`guessed`), those among them
    ported again with the facts (`redone`) and the files waiting for their part (`waiting`)."""

    def __init__(
        self,
        candidates: list[Candidate],
        settings: Settings,
        parts: list[tuple[list[Candidate], list[str]]],
        index: list[Future[dict[str, Facts]]],
        keep_ported: tuple[str, ...],
    ) -> None:
        self.candidates = candidates
        self.settings = settings
        self.parts = parts
        self.index = index
        self.keep_ported = keep_ported
        part = {id(cand): k for k, (group, _) in enumerate(parts) for cand in group}
        self.part_of = [part[id(cand)] for cand in candidates]  # each candidate's part, by place
        self.facts: list[dict[str, Facts] | None] = [None] * len(parts)
        self.unknown = list(range(len(parts)))  # the parts not learned yet, in order
        self.guessed: dict[int, list[_Early]] = {}  # part -> files prepared before it was known
        self.waiting: dict[int, list[_Early]] = {}  # part -> files that wait for it
        self.redone: set[int] = set()  # guessed files that had facts after all: prepared again with them

    def item(
        self, i: int, cand: Candidate, name: str, here: Settings, source: bytes, flow: Facts, guess: bool
    ) -> tuple[_OTag, Job | None]:
        """The file's tag, and its parse unless the prefilter turns it away."""
        # cross-file facts and the formatter's line length, as `_Serial.prepared` gives them
        here = replace(here, flow=flow, line_length=_line_length(cand.path, here))
        if self.keep_ported and not here.want_source and imports_cuda_only(source, self.keep_ported):
            here = replace(here, want_source=True)
        if not admits_file(source, name, here):
            return (i, cand, _not_admitted(source, name), guess), None
        return (i, cand, None, guess), Job(source, name, here, admitted=True)

    def learn(self, k: int) -> list[tuple[_OTag, Job | None]]:
        """Part `k`'s facts, now known: its guessed files that had facts after all, to port
        again, and its waiting files, with theirs (all decided before any of them is handed
        on, so the results below never see half of the decision)."""
        group, cu = self.parts[k]
        self.facts[k] = facts = _index_of(self.index[k], group, self.settings.target, cu)
        self.unknown.remove(k)
        again = [
            (i, cand, name, here, source, facts[name])
            for i, cand, name, here, source in self.guessed.pop(k, [])
            if facts.get(name)
        ]
        self.redone.update(i for i, *_ in again)
        out = [self.item(*row, guess=False) for row in again]
        out += [self.item(*row, flow=facts.get(row[2], ()), guess=False) for row in self.waiting.pop(k, [])]
        return out

    def _learned(self) -> Iterator[tuple[_OTag, Job | None]]:
        """The items of every part that became known since last asked."""
        for k in [k for k in self.unknown if self.index[k].done()]:
            yield from self.learn(k)

    def items(self) -> Iterator[tuple[_OTag, Job | None] | Flush]:
        """Every file's item in order, except those waiting for their part (after it)."""
        for i, cand in enumerate(self.candidates):
            yield from self._learned()
            yield from self._read(i, cand)
        yield from self._learned()
        while self.unknown:
            # every file is read: hand on what is gathered before waiting for the next part
            yield FLUSH
            yield from self.learn(self.unknown[0])
            yield from self._learned()

    def _read(self, i: int, cand: Candidate) -> Iterator[tuple[_OTag, Job | None]]:
        """The candidate's item: a problem, or its bytes ported (with a guess at its facts when
        its part is not known yet); a file the index may well have facts for waits instead."""
        if cand.problem is not None:
            yield (i, cand, _problem(cand, display_path(cand.path)), False), None
            return
        name, here, _, source, failed = _read_stat(cand, self.settings)
        if failed is not None:
            yield (i, cand, failed, False), None
            return
        assert source is not None  # _read_stat gives the bytes or the failure
        k = self.part_of[i]
        facts = self.facts[k]
        if facts is None and _may_have_facts(source):
            # not guessed: it would likely be ported twice
            self.waiting.setdefault(k, []).append((i, cand, name, here, source))
        elif facts is None:
            self.guessed.setdefault(k, []).append((i, cand, name, here, source))
            yield self.item(i, cand, name, here, source, (), guess=True)
        else:
            yield self.item(i, cand, name, here, source, facts.get(name, ()), guess=False)

    def in_order(self, mapped: Iterator[tuple[_OTag, FileResult | None]]) -> Iterator[tuple[Candidate, FileResult]]:
        """The pool's results in the candidates' order; a guessed file's result is held until
        its part's facts say whether it counts or was redone."""
        done: dict[int, tuple[Candidate, FileResult]] = {}
        held: dict[int, tuple[Candidate, FileResult]] = {}  # results of guesses, until their part is known
        following = 0
        for (i, cand, ready, guess), result in mapped:
            got = ready if ready is not None else result
            assert got is not None  # the pool parsed every item that was not ready
            if not guess:
                done[i] = (cand, got)
            elif self.facts[self.part_of[i]] is None:
                held[i] = (cand, got)
            elif i not in self.redone:
                done[i] = (cand, got)
            for j in [j for j in held if self.facts[self.part_of[j]] is not None]:
                kept = held.pop(j)
                if j not in self.redone:
                    done[j] = kept
            while following in done:
                yield done.pop(following)
                following += 1
        done.update((j, r) for j, r in held.items() if j not in self.redone)  # (every part is known by now)
        while following in done:
            yield done.pop(following)
            following += 1
        assert following == len(self.candidates), "every file has exactly one result"


def _may_have_facts(source: bytes) -> bool:
    """Whether the project index follows device values into this file (a bytes scan)."""
    return ProjectIndex.wants(source)


def _index_of(
    index: Future[dict[str, Facts]], candidates: list[Candidate], target: str | None, cuda_sources: list[str]
) -> dict[str, Facts]:
    """One part of the project index from its worker; worked out here if that worker died."""
    return _here_if_lost(index, index_part, candidates, target, cuda_sources)


def _known(
    cand: Candidate,
    settings: Settings,
    facts: dict[str, Facts],
    stats: StatIndex | None,
    around: tuple[bool, tuple[str, ...] | None],
    sources: bool = True,
    imports_wanted: bool = False,
) -> FileResult | None:
    """The result the stat index holds for an unchanged file, or None (read it). `around`:
    whether its folder is a package's, and the files beside it named for devices (as the
    settings it is ported with say them: `Settings.package`, `Settings.device_siblings`);
    `sources`: as for `iter_results`; `imports_wanted`: each result is asked what it imports
    after the port (`_Serial.imports`), so a record that never kept them (written by a run with
    no dependency file to ask) cannot answer: its result may hold no text to read them from,
    and what was read off nothing would be kept."""
    if stats is None:
        return None
    name = _name(cand)
    try:
        st = stats.stat(name, cand.where)
    except OSError:
        return None
    rec = stats.lookup(name, st)
    context = context_key(facts.get(name, ()), _line_length(cand.where, settings), *around)
    if rec is None or rec.facts != context or (imports_wanted and rec.imported is None):
        return None
    result = stats.answer(name, rec, cand.where, source_wanted=sources)
    if result is not None:
        stats.keep(name, rec)
    return result


def _remember(
    stats: StatIndex | None,
    name: str,
    st: os.stat_result,
    source: bytes | None,
    here: Settings,
    key: str | None,
    result: FileResult,
) -> None:
    if stats is not None and source is not None:
        lines = lf_line_ends(source)
        stats.record(
            name,
            st,
            source,
            ProjectIndex.wants(lines),
            cuda_only_index.part(lines),
            context_key(here.flow or (), here.line_length, here.package, here.device_siblings),
            key,
            result,
        )


def _line_length(path: Path | str, settings: Settings) -> int | None:
    """The line length a rewrite of the file at `path` fits to; None where only findings are
    wanted. Found from its path, not its displayed name: a name that is not UTF-8 is shown with
    `\\xNN` escapes and names no file (its lines were never fitted)."""
    return formatter.line_length(os.fspath(path)) if settings.want_source else None


def _not_admitted(source: bytes, name: str) -> FileResult:
    """What `port_source` says of a file the prefilter turns away (without loading libcst)."""
    return FileResult(path=name, status=FileStatus.SKIPPED, original_source=source, reason=NOT_ADMITTED)


@dataclass
class Summary:
    scanned: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> files
    errors: list[FileResult] = field(default_factory=list)
    rewritten: Counter[str] = field(default_factory=Counter)  # code -> sites fixed
    manual: Counter[str] = field(default_factory=Counter)  # code -> sites left for a person
    unapplied: Counter[str] = field(default_factory=Counter)  # code -> fixable sites not applied
    info: Counter[str] = field(default_factory=Counter)  # code -> info findings: nothing to do

    def add(self, result: FileResult) -> None:
        self.scanned += 1
        if result.status is FileStatus.CHANGED:
            self.changed += 1
        elif result.status is FileStatus.UNCHANGED:
            self.unchanged += 1
        elif result.status is FileStatus.SKIPPED:
            self.skipped[result.reason or "skipped"] += 1
        else:
            self.errors.append(result)
        for f in result.findings:
            if f.applied:
                self.rewritten[f.code] += 1
            elif f.severity is Severity.INFO:  # as the report's readiness: kept by design, or a note
                self.info[f.code] += 1
            elif f.fixable:
                self.unapplied[f.code] += 1
            else:
                self.manual[f.code] += 1


def run(
    paths: list[Path],
    settings: Settings,
    on_result: Callable[[Candidate, FileResult], None] | None = None,
    *,
    jobs: int | None = None,
    cache: bool | None = None,
    cache_dir: Path | None = None,
    file_timeout: float | None = None,
) -> tuple[list[FileResult], Summary]:
    summary = Summary()
    results: list[FileResult] = []
    for cand, result in iter_results(
        paths, settings, jobs=jobs, cache=cache, cache_dir=cache_dir, file_timeout=file_timeout
    ):
        summary.add(result)
        results.append(result)
        if on_result is not None:
            on_result(cand, result)
    return results, summary


def _port_source(source: bytes, path: str, settings: Settings) -> FileResult:
    # imported on first use: a run answered from the cache never loads libcst (~0.5 s)
    from porter.pipeline.port import port_source

    return port_source(source, path, settings)
