"""A run over many files: discover, read, port, and count. Shared by rewrite and lint.

Bad input never stops a run: a file that cannot be read becomes an error result naming the
reason, and the run goes on with the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import pathspec

from porter.discover import Candidate, discover
from porter.engine import port_source
from porter.findings import FileResult, FileStatus
from porter.settings import Settings

MAX_FILE_BYTES = 64 * 1024 * 1024


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.PathSpec.from_lines("gitwildmatch", patterns)


def _matches(pattern: str, path: Path, name: str) -> bool:
    """A pattern starting with `/` is anchored at the file system root (config files write
    their patterns that way, resolved against the config's folder); others match the
    displayed path the way .gitignore patterns do."""
    if pattern.startswith("/"):
        return _spec((pattern,)).match_file(path.resolve().as_posix())
    return _spec((pattern,)).match_file(name)


def file_settings(settings: Settings, path: Path, name: str | None = None) -> Settings:
    """The settings for one file: `per-file-ignores` entries that match it add to ignore."""
    if not settings.per_file_ignores:
        return settings
    name = name if name is not None else display_path(path)
    extra: list[str] = []
    for pattern, codes in settings.per_file_ignores:
        if _matches(pattern, path, name):
            extra.extend(c for c in codes if c not in extra)
    if not extra:
        return settings
    return replace(settings, ignore=settings.ignore + tuple(extra))


def excluded(settings: Settings, path: Path) -> bool:
    """Root-anchored exclude patterns (from a config file) apply to given files too."""
    absolute = tuple(p for p in settings.exclude if p.startswith("/"))
    return bool(absolute) and _spec(absolute).match_file(path.resolve().as_posix())


def read_candidate(cand: Candidate, settings: Settings) -> FileResult:
    name = display_path(cand.path)
    settings = file_settings(settings, cand.path, name)
    if cand.problem is not None:
        return FileResult(path=name, status=FileStatus.ERROR if "broken" in cand.problem or "no such" in cand.problem else FileStatus.SKIPPED, reason=cand.problem)
    try:
        size = cand.path.stat().st_size
        if size > MAX_FILE_BYTES:
            return FileResult(path=name, status=FileStatus.SKIPPED, reason=f"larger than {MAX_FILE_BYTES // 2**20} MiB")
        source = cand.path.read_bytes()
    except IsADirectoryError:
        return FileResult(path=name, status=FileStatus.SKIPPED, reason="a directory named like a Python file")
    except PermissionError:
        return FileResult(path=name, status=FileStatus.ERROR, reason="permission denied (cannot read)")
    except OSError as exc:
        return FileResult(path=name, status=FileStatus.ERROR, reason=f"cannot read: {exc.strerror or exc}")
    return port_source(source, name, settings)


def iter_results(paths: list[Path], settings: Settings) -> Iterator[tuple[Candidate, FileResult]]:
    for cand in discover(paths, settings.exclude):
        if cand.problem is None and excluded(settings, cand.path):
            continue
        yield cand, read_candidate(cand, settings)


@dataclass
class Summary:
    scanned: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> files
    errors: list[FileResult] = field(default_factory=list)
    rewritten: Counter = field(default_factory=Counter)  # code -> sites fixed
    manual: Counter = field(default_factory=Counter)  # code -> sites left for a person
    unapplied: Counter = field(default_factory=Counter)  # code -> fixable sites not applied

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
            elif f.fixable:
                self.unapplied[f.code] += 1
            else:
                self.manual[f.code] += 1


def run(
    paths: list[Path],
    settings: Settings,
    on_result: Callable[[Candidate, FileResult], None] | None = None,
) -> tuple[list[FileResult], Summary]:
    summary = Summary()
    results: list[FileResult] = []
    for cand, result in iter_results(paths, settings):
        summary.add(result)
        results.append(result)
        if on_result is not None:
            on_result(cand, result)
    return results, summary
