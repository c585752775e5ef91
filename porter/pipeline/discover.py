"""Which files a run looks at: Python files under the given paths, minus ignored ones.

`.gitignore` files (every one from the root of the walk down) and `--exclude` patterns use
gitignore syntax through pathspec. Symbolic links are never followed out of the tree, and a
link loop is reported, not walked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

DEFAULT_EXCLUDES = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".porter_cache/",
    "node_modules/",
    "build/",
    "dist/",
    "site-packages/",
)


@dataclass(frozen=True)
class Candidate:
    """A path to look at, or one that cannot be looked at and why (`problem`)."""

    path: Path
    root: Path  # the walk root it was found under (for relative names and outside checks)
    problem: str | None = None


def _spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def discover(paths: list[Path], exclude: tuple[str, ...] = (), respect_gitignore: bool = True) -> Iterator[Candidate]:
    excludes = _spec([*DEFAULT_EXCLUDES, *exclude])
    seen: set[Path] = set()
    for given in paths:
        if not os.path.lexists(given):
            yield Candidate(given, given, "no such file or directory")
            continue
        if given.is_file() or (given.is_symlink() and not given.is_dir()):
            if given.is_symlink() and not given.exists():
                yield Candidate(given, given.parent, "broken symbolic link")
            else:
                yield Candidate(given, given.parent)
            continue
        root = given.resolve()
        yield from _walk(given, root, excludes, respect_gitignore, seen)


def _walk(top: Path, root: Path, excludes: pathspec.GitIgnoreSpec, respect_gitignore: bool, seen: set[Path]) -> Iterator[Candidate]:
    # os.walk with followlinks=False: a link to a folder is listed, not entered
    ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(top)
        # the walk enters no link, so a folder's real path is the root's plus its own
        # relative path: no realpath per file (that cost more than the rest of a warm run)
        real_dir = root / rel_dir
        if respect_gitignore:
            gi = here / ".gitignore"
            if gi.is_file():
                try:
                    ignores.append((here, _spec(gi.read_text(errors="replace").splitlines())))
                except OSError:
                    pass
        keep = []
        for d in sorted(dirnames):
            rel = (rel_dir / d).as_posix() + "/"
            full = here / d
            if excludes.match_file(rel) or _ignored(full, ignores, is_dir=True):
                continue
            if full.is_symlink():
                target = full.resolve()
                if target == root or root in target.parents or target in seen:
                    yield Candidate(full, root, "symbolic link back into the tree (a loop): not followed")
                # a link out of the tree is never followed
                continue
            if (full / "pyvenv.cfg").is_file():
                continue  # a virtual environment, whatever its name: installed code, not yours
            if d.endswith(".py"):
                yield Candidate(full, root, "a directory named like a Python file")
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith((".py", ".pyi")):
                continue
            full = here / name
            rel = (rel_dir / name).as_posix()
            if excludes.match_file(rel) or _ignored(full, ignores, is_dir=False):
                continue
            if full.is_symlink():
                if not full.exists():
                    yield Candidate(full, root, "broken symbolic link")
                    continue
                target = full.resolve()
                if root not in target.parents:
                    yield Candidate(full, root, "symbolic link to a file outside the tree: not followed")
                    continue
                if target in seen:
                    continue  # the real file is (or will be) visited under its own name
                seen.add(target)
                continue  # the link's target is inside the tree and is visited directly
            seen.add(real_dir / name)
            yield Candidate(full, root)


def _ignored(path: Path, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]], *, is_dir: bool) -> bool:
    for base, spec in ignores:
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(rel + ("/" if is_dir else "")):
            return True
    return False
