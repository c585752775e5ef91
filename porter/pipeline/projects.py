"""The projects of a run: which files one project index covers.

A run over one project indexes it as a whole (`runner.project_index`). A run over a folder
that is not a project itself but holds several (a folder of clones, unpacked distributions,
a `projects/` folder of a monorepo) indexes each of them on its own: one project's device
values, backends and CUDA-only evidence are not another's (a folder holding accelerate and
kornia gave every kornia file accelerate's device abstraction), the work is the sum of the
projects' (the index's lookups by name and by module otherwise search every project's files),
and an edit in one project re-indexes only that project (each one's answers are cached
under a key of its own files).

A project is a folder holding a marker of one (`pyproject.toml`, `setup.py`, `setup.cfg`,
`PKG-INFO`, `.git`, `.hg`, or a `*.dist-info` / `*.egg-info` folder). A folder given to the
run that is a project is one project, whatever it holds below (examples with a setup.py of
their own stay in it, as before). Under a folder given that is not one, each outermost
project below it is one, and the files in none of them form one more, with every file
given by name: the run's files outside any project keep being indexed together.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from porter.pipeline.discover import Candidate

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO", ".git", ".hg")
_METADATA = (".dist-info", ".egg-info")


@lru_cache(maxsize=4096)
def is_project(folder: Path) -> bool:
    """Whether `folder` holds a marker of a project (once per folder in a process)."""
    if any(os.path.lexists(folder / m) for m in MARKERS):
        return True
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(_METADATA) and e.is_dir(follow_symlinks=False) for e in it)
    except OSError:
        return False


def forget() -> None:
    """Drop what this process remembers of folders (once per run: a marker may have come since)."""
    is_project.cache_clear()


def split(candidates: Sequence[Candidate], given: Sequence[Path]) -> list[tuple[Path | None, list[Candidate]]]:
    """(project folder, its candidates) in the order each project's first file comes (None: the
    files in no project); one entry when the run covers one project (or none), so such a run
    is indexed as before."""
    tops: dict[Path, Path] = {}
    for p in given:
        try:
            if p.is_dir():
                tops.setdefault(p.resolve(), p)
        except OSError:
            continue
    groups: dict[Path | None, list[Candidate]] = {}
    # the project of the files in one folder, worked out once per folder (a path join and a
    # marker lookup per folder above each file were a third of a warm run's project index)
    folders: dict[tuple[Path, str], Path | None] = {}
    for cand in candidates:
        where = (cand.root, os.fspath(cand.where).rpartition(os.sep)[0])
        if where not in folders:
            folders[where] = _project(cand, tops)
        groups.setdefault(folders[where], []).append(cand)
    return list(groups.items())


def _project(cand: Candidate, tops: dict[Path, Path]) -> Path | None:
    """The project folder `cand` belongs to; None for the files in none (and files given by name):
    the same for every file in its folder."""
    top = tops.get(cand.root)
    if top is None:
        return None
    if is_project(top):
        return top
    parts = _folders_below(top, os.fspath(cand.where))
    if parts is None:
        return None
    folder = top
    for part in parts:
        folder = folder / part
        if is_project(folder):
            return folder
    return None


def _folders_below(top: Path, where: str) -> list[str] | None:
    """`Path(where).relative_to(top).parts[:-1]` (None for a file not below `top`), from the
    strings: both are spelled as Paths spell them, and a warm run makes no Path per file
    (`discover.Candidate.where`)."""
    head = os.fspath(top)
    if head != ".":
        prefix = head if head.endswith(os.sep) else head + os.sep
        if not where.startswith(prefix):
            return None
        where = where[len(prefix) :]
    return where.split(os.sep)[:-1]
