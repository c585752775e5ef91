"""Which files a run looks at: Python files under the given paths, and the files around them
that porter reads (porter.core.kinds: dependency files, Dockerfiles, scripts, configs,
notebooks), minus ignored ones.

`.gitignore` files (every one from the root of the walk down, but for one that is a link, as in
git >= 2.32) and `--exclude` patterns use gitignore syntax (`porter.config.globs`). Symbolic
links are never followed out of the tree, and a link loop is reported, not walked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple
from functools import cached_property, lru_cache
from operator import attrgetter
from pathlib import Path


from porter.config import globs
from porter.config.files import escaped as globs_escape, from_folder, rooted
from porter.core import programs
from porter.core.kinds import FILE_KINDS, discovered, left_out, unknown_kinds
from porter.core.reading import LARGER_THAN, Unreadable, read_regular, why_not_parsed
from porter.core.textsafe import path_name as utf8_name
from porter.pipeline import gitconfig, gitdir


MAX_GITIGNORE_BYTES = 4 * 2**20

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


# the default excludes are folder names: a folder is left out by its name alone, and a file
# under one is never reached (the walk does not enter it), so without patterns of the user's
# no path needs pathspec (a match per file and folder was a fifth of a warm run)
_DEFAULT_FOLDERS = frozenset(p.rstrip("/") for p in DEFAULT_EXCLUDES)
# the CUDA and C++ sources noted beside the Python files (porter.analysis.native_ops.SUFFIXES)
NATIVE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
_BY_NAME = attrgetter("name")  # a folder's entries in name order (no lambda called per entry)


@dataclass(frozen=True)
class Candidate:
    """A path to look at, or one that cannot be looked at and why (`problem`)."""

    # the path: a `str` where the walk made it (`path` is its Path, made when first asked: a
    # warm run asks none of them, and a Path per file was 0.02 s of it), else as given
    where: Path | str
    root: Path  # the walk root it was found under (for relative names and outside checks)
    problem: str | None = None
    # the name results carry (`runner.display_path`), when the walk worked it out from the
    # folder's real path; None for paths given one by one
    name: str | None = None
    # whether its folder holds `__init__.py` (`reading.folder_is_package`), when the walk read
    # it off the folder's listing; None for paths given one by one
    package: bool | None = None

    @cached_property
    def path(self) -> Path:
        return self.where if isinstance(self.where, Path) else Path(self.where)


def _spec(lines: list[str], fold: bool = False) -> globs.Spec:
    return globs.spec(lines, fold=fold)  # a repository's `.gitignore` chooses the patterns: linear matching


def _git_lines(text: str) -> list[str]:
    """A .gitignore's lines as git reads them: cut at LF, one CR before it dropped. Not
    str.splitlines, which also ends a line at a lone CR, a form feed, \\v, \\x1c-\\x1e, \\x85
    and U+2028/9, so a comment holding one of those (`# build outputs<U+2028>*.py`) became a
    pattern git never sees. A NUL ends its line's pattern (git reads each as a C string: `a.py`
    then a NUL and more leaves out `a.py`; porter's pattern held the NUL and matched no file)."""
    text = text.removeprefix("\ufeff")  # (git skips a UTF-8 byte order mark: it was part of line 1)
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    return [line.partition("\0")[0] for line in lines] if "\0" in text else lines


def discover(
    paths: list[Path],
    exclude: tuple[str, ...] = (),
    respect_gitignore: bool = True,
    *,
    cuda_sources: list[str] | None = None,
) -> Iterator[Candidate]:
    """The Python files under `paths`. `cuda_sources`, when given, collects the names of the
    `.cu` / `.cuh` files the walk passes (evidence of the project's own CUDA extensions), and of
    its C++ sources (`.cpp`, `.cc`: where it may register its ops, porter.analysis.native_ops)."""
    specs: dict[tuple[str, ...], globs.Spec] = {}  # the walks' exclude patterns, each list compiled once
    seen: set[str] = set()  # real paths, as strings (one Path a file cost a warm run)
    # the real paths of the files yielded: a file named twice (`porter lint . a.py`, `a.py ./a.py`)
    # was checked twice, each finding reported twice, and the second "new" to a baseline (exit 1;
    # twenty-sixth read)
    files: set[str] = set()
    said: set[str] = set()  # the problems said, by their paths (`_said_once`)
    cwd = Path.cwd().resolve()
    if unknown := unknown_kinds():
        kinds = ", ".join(FILE_KINDS)
        _note(f"PORTER_FILE_KINDS names no kind porter reads: {', '.join(unknown)} (its kinds: {kinds})")
    for given in paths:
        if not os.path.lexists(given):
            yield from _said_once([Candidate(given, given, "no such file or directory")], said)
            continue
        if not given.is_dir():  # a file, a link to one, or something else (read as a file: `reading`)
            yield from _said_once(_named_file(given, files), said)
            continue
        root = given.resolve()
        here, head, above = _from_top(exclude, root, specs) if exclude else (None, "", None)
        walk = _Walk(root, cwd, here, respect_gitignore, seen, cuda_sources, above)
        walk.exclude_head, walk.files, walk.said = head, files, said
        yield from walk.run(given)


def _said_once(found: Iterable[Candidate], said: set[str]) -> Iterator[Candidate]:
    """`found`, less the problems `said` holds (a problem path met again from another given
    path: `lint . .`, `lint . sub`, `lint x.py x.py`). A broken link in a folder named twice was
    said twice and counted as two files not checked (twenty-sixth read's leftover); ruff 0.17.6
    says it once. A problem's key is its path with the folder's real path (the path itself may
    be a broken link): a realpath per problem, none per file (the walk passes only its problems
    here)."""
    for candidate in found:
        if candidate.problem is not None:
            where = os.path.abspath(candidate.where)
            key = os.path.join(os.path.realpath(os.path.dirname(where)), os.path.basename(where))
            if key in said:
                continue
            said.add(key)
        yield candidate


def _named_file(given: Path, files: set[str]) -> Iterator[Candidate]:
    """A file named on the command line, unless `files` (the real paths yielded) holds it."""
    if given.is_symlink() and not given.exists():
        yield Candidate(given, given.parent, "broken symbolic link")
        return
    real = os.path.realpath(given)
    if real not in files:
        files.add(real)
        yield Candidate(given, given.parent, left_out(str(given)))


def _from_top(
    exclude: tuple[str, ...], root: Path, specs: dict[tuple[str, ...], globs.Spec]
) -> tuple[globs.Spec, str, globs.Spec | None]:
    """(the patterns a walk from `root` matches each path against, in the order given; that
    path's head, `root`'s path from the folder they are matched from ("" or "a/b/"); the
    patterns anchored where neither can say of such a path, which it matches each file's real
    path against). A config's anchored pattern (`files.anchor`: the folder's real path, then the
    rest) is matched from `root` where it begins with `root`'s path, else from the nearest folder
    above whose path every such pattern begins with (then the command line's patterns with a
    `/`, which are `root`'s, are anchored below it; a pattern no folder above holds is one of
    those, `--exclude /tests/`): it was matched only against each file's
    real path, after the walk and apart from the others, so `tests/fixtures/*` then
    `!conftest.py`, or `*_pb2.py` then `!proto/keep_pb2.py`, left out the file git lists
    (twenty-second read)."""
    base = root
    top = rooted(root) + "/"
    left = [p for p in exclude if p.startswith(("/", "!/")) and from_folder(p, top) is None]
    heads = [(f, rooted(f) + "/") for f in root.parents if f != f.parent] if left else []  # (not `/`: `root`'s)
    # (a pattern no folder above holds is the command line's, `root`'s: `--exclude /tests/` made
    # the walk match from `root`, and a config's `*/gen/*` apart from the others; twenty-second read)
    left = [p for p in left if any(from_folder(p, h) for _, h in heads)]
    if left:
        base = next((f for f, h in heads if all(from_folder(p, h) for p in left)), root)
    head = rooted(base) + "/"
    here = [from_folder(p, head) if p.startswith(("/", "!/")) else None for p in exclude]
    above = [p for p, h in zip(exclude, here) if h is None and p.startswith(("/", "!/"))]
    below = root.relative_to(base).as_posix() + "/" if base != root else ""
    lines = (*DEFAULT_EXCLUDES, *(h if h is not None else _below(p, below) for p, h in zip(exclude, here)))
    if lines not in specs:
        specs[lines] = _spec(list(lines))
    return specs[lines], below, _spec(above) if above else None


def _below(pattern: str, below: str) -> str:
    """A pattern of the walk's top (the command line's) as one of the folder `below` names it
    from: one with a `/` anchored below it (`!gen/x` from `a/`: `!/a/gen/x`); one without matches
    at any depth there too."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if not below or "/" not in body.rstrip("/"):
        return pattern
    return f"{'!' if negated else ''}/{globs_escape(below)}{body.lstrip('/')}"


def _excluded(excludes: globs.Spec | None, rel: str, name: str, is_dir: bool) -> bool:
    """Whether the exclude patterns leave `rel` out. Only a pattern that matches the path itself
    counts, as for a `.gitignore` (`_ignored`): the walk tried the folders above it as it entered
    them, so `!vendor/` after `generated/` no longer walked `vendor/generated/` (git leaves it
    out; twenty-second read)."""
    if excludes is None:
        return is_dir and name in _DEFAULT_FOLDERS
    return excludes.verdict(rel + "/" if is_dir else rel, rel.count("/")) is True


class _Walk:
    """One walk's state: what it was asked to leave out, the .gitignore files read on the way
    and the real files seen (a link to one is not visited twice). `run` walks top-down, folders
    and files in name order, as `os.walk(top, followlinks=False)`: a link to a folder is listed,
    not entered; a folder that cannot be listed is passed over."""

    def __init__(
        self,
        root: Path,
        cwd: Path,
        excludes: globs.Spec | None,
        respect_gitignore: bool,
        seen: set[str],
        cuda_sources: list[str] | None,
        above: globs.Spec | None = None,
    ) -> None:
        self.root = root
        self.above_excludes = above  # matched against a file's real path (`_from_top`)
        self.exclude_head = ""  # what the exclude patterns match a path from the top after (`_from_top`)
        self.files: set[str] = set()  # the real paths of the files yielded, this walk's and before (`discover`)
        self.said: set[str] = set()  # the problems yielded, this walk's and before (`_said_once`)
        self.cwd = cwd
        self.excludes = excludes
        self.respect_gitignore = respect_gitignore
        self.seen = seen
        self.cuda_sources = cuda_sources
        self.ignores: dict[str, globs.Spec] = {}  # folder's prefix ("" or "a/b/") -> its .gitignore
        # the patterns above the walk's top (`_above`): (the top's path from their folder, ending
        # in `/`; its number of folders; the patterns), nearest first
        self.above: list[tuple[str, int, globs.Spec]] = []
        # folder's prefix -> whether its repository's `core.ignoreCase` is true (its patterns
        # then match letters of either case, as git matches them there)
        self.folds: dict[str, bool] = {"": False}
        if respect_gitignore:
            self.above, self.folds[""] = _above(root)
        # the folders below the top that are repositories of their own (a submodule, a nested
        # clone) -> their `info/exclude`: no `.gitignore` above such a folder applies in it
        self.repos: dict[str, globs.Spec | None] = {}

    def run(self, top: Path) -> Iterator[Candidate]:
        # (folder, its path relative to top as a posix prefix: "" or "a/b/"), in walk order
        stack: list[tuple[Path, str]] = [(top, "")]
        # below a root inside the working folder, a folder's prefix is the root's plus its own
        # relative path (a working folder inside the root is worked out folder by folder)
        base = self._shown(self.root)
        root = os.fspath(self.root)
        while stack:
            here, prefix = stack.pop()
            try:
                with os.scandir(here) as it:
                    entries = sorted(it, key=_BY_NAME)
            except OSError:
                continue
            # the walk enters no link, so a folder's real path is the root's plus its own
            # relative path: no realpath per file (that cost more than the rest of a warm run)
            real_dir = os.path.join(root, prefix)
            shown = base + prefix if base is not None else self._shown(Path(real_dir))
            # (no stat per folder; a `.gitignore` that is a link is not read, as git >= 2.32 reads
            # none: "unable to access '.gitignore': Too many levels of symbolic links")
            nested = self._nested(here, prefix, entries)
            if nested is not None:
                lines, self.folds[prefix] = _repo_excludes(Path(real_dir), nested)
                self.repos[prefix] = _spec(lines, self.folds[prefix]) if lines else None
            elif prefix:
                self.folds[prefix] = self.folds[prefix[:-1].rpartition("/")[0] + "/" if "/" in prefix[:-1] else ""]
            if self.respect_gitignore and any(e.name == ".gitignore" and not e.is_symlink() for e in entries):
                self._read_gitignore(here, prefix)
            subdirs, files = _split(entries)
            keep: list[tuple[Path, str]] = []
            yield from _said_once(self._folders(subdirs, here, prefix, shown, keep), self.said)
            yield from self._files(files, here, prefix, shown, real_dir)
            stack.extend(reversed(keep))

    def _nested(self, here: Path, prefix: str, entries: list[os.DirEntry[str]]) -> _Repo | None:
        """The repository of its own a folder below the top is (`_own_repo`), read only where it
        lists a `.git`. A `.git` file there naming no git folder (a worktree whose main repository
        moved) makes none: git from the top lists the folder's files as the repository above's,
        and so does the walk; that is said, once, as for such a file at or above the top
        (`_nearest_repo`): below it, it was walked in silence (twenty-sixth read's leftover)."""
        if not (self.respect_gitignore and prefix and _has_git(entries)):
            return None
        nested = _own_repo(here)
        if nested is None and (here / ".git").is_file():
            _note_stale_gitfile(here, "walked as a folder of the repository above, as git from there lists it")
        return nested

    def _shown(self, real_dir: Path) -> str | None:
        """The folder's name prefix relative to the working folder ("" or "a/b/"), or None when
        it lies outside it (then a name is the path as given)."""
        try:
            shown = real_dir.relative_to(self.cwd).as_posix()
        except ValueError:
            return None
        return "" if shown == "." else shown + "/"

    def _read_gitignore(self, here: Path, prefix: str) -> None:
        """Add the folder's .gitignore, if it has a readable one, to the patterns below it."""
        gi = here / ".gitignore"
        if not gi.is_file():
            return
        text = _read_ignore_file(gi)
        if text is not None:
            self.ignores[prefix] = _spec(_git_lines(text), self.folds[prefix])

    def _folders(
        self, subdirs: list[os.DirEntry[str]], here: Path, prefix: str, shown: str | None, keep: list[tuple[Path, str]]
    ) -> Iterator[Candidate]:
        """The problems among the folder's subfolders; the ones to enter go to `keep`. Where the
        repository folds case, a `.GIT` or `.Git` is left out as `.git` is: git skips a name
        equal to `.git` in its case folding (dir.c `treat_path`, `fspathcmp`), and lint read
        the files under one that `git status` never lists (twenty-seventh read)."""
        fold = self.folds.get(prefix, False)
        for entry in subdirs:
            d = entry.name
            rel = prefix + d
            full = here / d
            if _excluded(self.excludes, self.exclude_head + rel, d, True) or _ignored(rel, self, is_dir=True):
                continue
            if fold and len(d) == 4 and d.lower() == ".git":  # (ASCII letters only: git's strcasecmp)
                continue
            if entry.is_symlink():
                yield Candidate(full, self.root, self._folder_link(here, full.resolve()), _name(shown, d, full))
                continue
            if (full / "pyvenv.cfg").is_file():
                continue  # a virtual environment, whatever its name: installed code, not yours
            if d.endswith(".py"):
                yield Candidate(full, self.root, "a directory named like a Python file", _name(shown, d, full))
            keep.append((full, rel + "/"))

    def _folder_link(self, here: Path, target: Path) -> str:
        """What the walk says of a link to a folder (never followed: as ruff and git, neither of
        which enters one): a loop only where it leads to its own folder or above; elsewhere in the
        tree, the folder is walked under its own name. A link to a folder in the tree was
        called "a loop", and one out of the tree was passed over unsaid, where docs/robustness.md
        promised a note (twenty-eighth read)."""
        real = Path(os.path.realpath(here))  # (only for a link: links are few)
        if target == real or target in real.parents:
            return "symbolic link back into the tree (a loop): not followed"
        if target == self.root or self.root in target.parents or os.fspath(target) in self.seen:
            return "symbolic link to a folder in the tree: not followed (the folder is walked under its own name)"
        return "symbolic link to a folder outside the tree: not followed"

    def _files(
        self, files: list[os.DirEntry[str]], here: Path, prefix: str, shown: str | None, real: str
    ) -> Iterator[Candidate]:
        """The folder's files porter reads (`real`: the folder's real path); a CUDA source among
        the others is noted."""
        folder = here.name
        package = _holds_init(files)
        above = os.fspath(here)
        for entry in files:
            name = entry.name
            if not discovered(name, folder):
                yield from self._note_cuda_source(prefix, name, shown, here, entry)
                continue
            rel = prefix + name
            if (
                self.excludes is not None and _excluded(self.excludes, self.exclude_head + rel, name, False)
            ) or _ignored(rel, self, is_dir=False):
                continue
            if self.above_excludes is not None and self.above_excludes.match_file(os.path.join(real, name)):
                continue
            if entry.is_symlink():
                yield from _said_once(self._linked_file(here / name, shown, name), self.said)
                continue
            key = os.path.join(real, name)
            self.seen.add(key)
            if key in self.files:  # (named before: `discover`)
                continue
            self.files.add(key)
            full = _child(above, name)
            yield Candidate(full, self.root, None, _name(shown, name, full), package)

    def _note_cuda_source(
        self, prefix: str, name: str, shown: str | None, here: Path, entry: os.DirEntry[str]
    ) -> Iterator[Candidate]:
        """A .cu/.cuh (or C++) file the .gitignore files keep: evidence of the project's own CUDA
        code; a problem when it will not be read (past the size bound, not a regular file), as a
        Python file's is: the ops it registers decide what the Python calling them keeps, and a
        65 MiB `.cu` was left out in silence (seventeenth read)."""
        if (
            self.cuda_sources is None
            or not name.endswith(NATIVE_SUFFIXES)
            or _ignored(prefix + name, self, is_dir=False)
        ):
            return
        shown_name = _name(shown, name, here / name)
        self.cuda_sources.append(shown_name)
        try:
            why = why_not_parsed(entry.stat())  # (a link is followed, as the reader follows it)
        except OSError:
            return  # a broken link: nothing to read
        if why is not None:
            yield from _said_once([Candidate(here / name, self.root, why, shown_name)], self.said)

    def _linked_file(self, full: Path, shown: str | None, name: str) -> Iterator[Candidate]:
        """A link to a file: a problem when broken or pointing out of the tree; otherwise
        nothing, as its target inside the tree is visited directly."""
        if not full.exists():
            yield Candidate(full, self.root, "broken symbolic link", _name(shown, name, full))
            return
        target = full.resolve()
        if self.root not in target.parents:
            yield Candidate(
                full, self.root, "symbolic link to a file outside the tree: not followed", _name(shown, name, full)
            )
            return
        self.seen.add(os.fspath(target))  # the real file is (or will be) visited under its own name


def _split(entries: list[os.DirEntry[str]]) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    """The folder's entries as (folders, the rest); a link to a folder counts as a folder, as in
    os.walk."""
    subdirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()  # follows a link, as os.walk does
        except OSError:
            is_dir = False
        (subdirs if is_dir else files).append(entry)
    return subdirs, files


def _holds_init(files: list[os.DirEntry[str]]) -> bool:
    """`reading.folder_is_package` of a file the walk yields (no link: its folder's real path is
    the listed one), from the listing: an `__init__.py` that is a file, or a link to one. A
    warm run asked it of each folder with a `resolve` (an lstat per component of the path) and a
    `stat`, 40 ms of the 1.2M-line corpus' 0.53 s."""
    for entry in files:
        if entry.name == "__init__.py":
            try:
                return entry.is_file()
            except OSError:
                return False
    return False


def _child(folder: str, name: str) -> str:
    """`str(Path(folder) / name)` for a folder the walk made (a Path's own spelling), without
    the Path."""
    if folder == ".":
        return name
    return folder + name if folder.endswith(os.sep) else folder + os.sep + name


def _name(shown: str | None, name: str, full: Path | str) -> str:
    """What `runner.display_path` makes of `full`: relative to the working folder through the
    folder's real path, or the path as given; valid UTF-8 (undecodable bytes as `\\xNN`)."""
    return utf8_name(shown + name if shown is not None else Path(full).as_posix())


def _ignored(rel: str, walk: _Walk, *, is_dir: bool) -> bool:
    """Whether the `.gitignore` files of the folders above `rel` (a path relative to the walk's
    top) leave it out: as in git, the nearest one with a pattern that matches decides, so a
    negation below (`src/.gitignore`: `!gen_keep.py`) keeps a file a pattern above leaves out
    (`gen_*.py`); the first one that matched decided, and lint hid a file git lists. Only the
    folders above it are looked up: every .gitignore read so far was tried on every path, and
    a repository of 24,000 folders, each with a one-line .gitignore, cost the walk 51 CPU s
    before any file (eighteenth read). Then those above the walk's top (`_above`). A folder
    that is a repository of its own ends the look-up there, after its `info/exclude`, as git
    in that repository reads it."""
    ignores, repos = walk.ignores, walk.repos
    if not ignores and not repos and not walk.above:
        return False
    tail = "/" if is_dir else ""
    ends: list[int] = [-1]  # where each folder above ends in `rel` (-1: the walk's top)
    end = rel.find("/")
    while end >= 0:
        ends.append(end)
        end = rel.find("/", end + 1)
    # only a pattern that matches the path itself counts, as in git: the folders above it were
    # tried as the walk entered them (a folder pattern's match on one of them, `!*a` on `a/`,
    # decided for `a/a.b.py` against the pattern that names the file in a list below it)
    for i in range(len(ends) - 1, -1, -1):
        prefix, below, given = rel[: ends[i] + 1], rel[ends[i] + 1 :] + tail, len(ends) - 1 - i
        for spec in (ignores.get(prefix), repos.get(prefix)):
            verdict = spec.verdict(below, given) if spec is not None else None
            if verdict is not None:
                return verdict
        if prefix in repos:
            return False
    for head, given, spec in walk.above:
        verdict = spec.verdict(head + rel + tail, given + len(ends) - 1)
        if verdict is not None:
            return verdict
    return False


def _above(top: Path) -> tuple[list[tuple[str, int, globs.Spec]], bool]:
    """The patterns git applies to the walk's top (a real path) from above it: the `.gitignore`
    of each folder from its parent up to the repository's root (the nearest folder holding
    `.git`), then the repository's `info/exclude`; nearest first. Without them `porter lint
    src` read what `porter lint .` leaves out (a root `.gitignore`'s `*_pb2.py`, `gen/`).
    Nothing outside a repository. Where the environment names a repository (`GIT_DIR`,
    `GIT_WORK_TREE`: `_env_repository`) whose work tree holds the top, that one, as git there
    reads it; but not below a folder of that tree holding a `.git` of its own (a nested
    repository, which git there lists as one untracked folder and does not enter): that one is
    read as a repository of its own, as the walk from the named top reads it, so `porter lint
    wt` and `porter lint wt/nested` leave out the same files there (git reads them nowhere).
    And whether the repository folds case (`_git_settings`)."""
    folders = (top, *top.parents)
    searched = _searched(top)
    named = _named_for(top)
    if named is not None:
        repo = named.top
        excludes, fold = _named_repo_excludes(named)
    else:
        found = _nearest_repo(searched)
        if found is None:
            return [], False
        repo = found[0]
        excludes, fold = _repo_excludes(repo, found[1])
    out: list[tuple[str, int, globs.Spec]] = []
    for folder in folders[1 : folders.index(repo) + 1]:
        head = top.relative_to(folder).as_posix() + "/"
        lines = _read_patterns(folder / ".gitignore")
        if lines:
            out.append((head, head.count("/"), _spec(lines, fold)))
    if excludes:
        head = "" if top == repo else top.relative_to(repo).as_posix() + "/"
        out.append((head, head.count("/"), _spec(excludes, fold)))
    return out, fold


def _nearest_repo(searched: tuple[Path, ...]) -> tuple[Path, _Repo] | None:
    """The nearest folder of `searched` that is a repository (`_own_repo`) and its repository,
    or None. A `.git` file on the way that names no git folder (a worktree whose main
    repository moved, a submodule's checkout copied out) is said in a note, once: git stops
    there (`fatal: not a git repository`, setup.c's `GIT_DIR_INVALID_GITFILE`), so `git
    status` lists nothing, while the walk reads the `.gitignore` files (and a repository
    above) without that repository's `info/exclude` and settings; it said nothing
    (twenty-seventh read)."""
    for folder in searched:
        own = _own_repo(folder)
        if own is not None:
            return folder, own
        if (folder / ".git").is_file():
            _note_stale_gitfile(folder, "its info/exclude and git settings are not read")
    return None


def _note_stale_gitfile(folder: Path, then: str) -> None:
    _note(
        f"git refuses {os.fspath(folder)} as a repository: its .git file names no git folder (a worktree "
        f"whose main repository moved? `git worktree repair` mends it); {then}"
    )


def _named_for(top: Path) -> _NamedRepo | None:
    """The repository the environment names (`_env_repository`) where the walk reads it for
    `top` (a real path): its work tree holds `top`, and no folder between them holds a `.git` of
    its own (a nested repository, read as its own); else None."""
    named = _env_repository()
    folders = (top, *top.parents)
    if named is None or named.top not in folders:
        return None
    return None if any(_own_repo(f) is not None for f in folders[: folders.index(named.top)]) else named


def git_named(folder: Path) -> dict[str, str]:
    """The repository variables to run git with in `folder` (a real path; `programs.git`'s
    `named`, the caller's others left out) so that git answers for the repository the walk
    reads there: the repository the environment names, given whole, where the walk reads that
    one (`_named_for`); elsewhere the variables that bound git's search (`_BOUNDING_VARIABLES`),
    so git finds the repository `_searched` finds. `cache.seen_by_git` ran git in the cache
    folder with the caller's: a hook's relative `GIT_DIR=.git` named no repository from there
    (the note that git lists the cache was not said), an absolute one made the cache folder the
    work tree's top (the `.gitignore` above that leaves it out unread: a note said git lists
    what it does not); the write guard's check refused a tracked, clean file (twenty-sixth read)."""
    named = _named_for(folder)
    if named is not None:
        return {"GIT_DIR": named.git_dir, "GIT_WORK_TREE": os.fspath(named.top)}
    return {k: os.environ[k] for k in _BOUNDING_VARIABLES if k in os.environ}


# the variables that bound git's search for a repository (`_searched` reads both, as git does)
_BOUNDING_VARIABLES = ("GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def _searched(top: Path) -> tuple[Path, ...]:
    """The folders git looks for the repository in from the walk's top (a real path), as
    setup.c's discovery: the top, then each folder above it up to a ceiling
    (`GIT_CEILING_DIRECTORIES`: `_ceiling`, the ceiling itself left out) and, unless
    `GIT_DISCOVERY_ACROSS_FILESYSTEM` is true, on the top's filesystem. porter read neither and
    found the repository above a ceiling or a mount point, where git finds none and `git status`
    stops: its patterns left out files there (twenty-fourth read's leftover)."""
    floor = _ceiling(os.fspath(top))
    parents = [f for f in top.parents if floor < 0 or (f != f.parent and len(os.fspath(f)) > floor)]
    across = os.environ.get("GIT_DISCOVERY_ACROSS_FILESYSTEM")
    if across is not None and gitconfig.boolean(across) is None:
        _note(f"git refuses GIT_DISCOVERY_ACROSS_FILESYSTEM = {across!r} (not a boolean): it is read as false")
    if across is not None and gitconfig.boolean(across):
        return (top, *parents)
    try:
        return (top, *_until_other(parents, _device(top)))
    except OSError:
        return (top,)


def _until_other(parents: list[Path], device: int) -> tuple[Path, ...]:
    """The folders of `parents` (nearest first) before the first on another device than `device`."""
    out: list[Path] = []
    for folder in parents:
        if _device(folder) != device:
            break
        out.append(folder)
    return tuple(out)


def _device(folder: Path) -> int:
    """The device of the filesystem `folder` is on (a mount point's is its own)."""
    return os.stat(folder).st_dev


def _ceiling(top: str) -> int:
    """The length of the longest ceiling of `GIT_CEILING_DIRECTORIES` above `top` (a real
    path), -1 where none is (setup.c `canonicalize_ceiling_entry`, `longest_ancestor_length`):
    entries split at `:`, a relative one skipped, each read as its real path but after an
    empty entry, which keeps the later ones as written; only a folder strictly above `top`."""
    value = os.environ.get("GIT_CEILING_DIRECTORIES")
    if not value:
        return -1
    longest, literal = -1, False
    for entry in value.split(":"):
        literal = literal or not entry
        if not entry.startswith("/"):
            continue
        real = entry if literal else _real_ceiling(entry)
        if real is None:
            continue
        head = real[:-1] if real.endswith("/") else real
        if top.startswith(head + "/") and len(top) > len(head) + 1:
            longest = max(longest, len(head))
    return longest


def _real_ceiling(entry: str) -> str | None:
    """A ceiling's real path as git's `real_pathdup` gives it (its last part may be missing, no
    other), else None (git drops the entry)."""
    try:
        return os.path.realpath(entry, strict=True)
    except OSError:
        pass
    try:
        return os.path.join(os.path.realpath(os.path.dirname(entry), strict=True), os.path.basename(entry))
    except OSError:
        return None


def _repo_excludes(repo: Path, own: _Repo) -> tuple[list[str], bool]:
    """The patterns git applies from the repository's root (`repo`, the work tree's top)
    besides its `.gitignore` files: the user's own (`_user_excludes`), then `info/exclude`
    (`git_dir`'s). Within one list the last match decides, so a line of `info/exclude` that
    matches wins over the user's, as git tries `info/exclude` first and the user's file only
    where it says nothing. git follows a link at either (only a `.gitignore` in the tree is
    opened without following one): an `info/exclude` kept as a link to a shared file was not
    read (twentieth read). And whether the repository folds case (`_git_settings`)."""
    git_dir = own.git_dir
    lines = _read_patterns(git_dir / "info" / "exclude", follow=True) if git_dir is not None else []
    _note_if_refused(repo, git_dir, repo / ".git")
    configured, fold = _repo_settings(repo, own)
    return [*_user_excludes(repo, configured), *lines], fold


def _note_if_refused(repo: Path, git_dir: Path | None, dot_git: Path) -> None:
    """Say once where git refuses the repository (`safe.directory`: its work tree, `.git` or
    git folder is another user's, as in an archive extracted by root or a shared checkout):
    there `git status` lists nothing and `git config` skips the repository's own settings, so
    its `core.excludesFile` and `core.ignoreCase` are not read (as git reads neither), while
    its `.gitignore` files and `info/exclude` are. porter said nothing (twentieth read's
    leftover). git is asked only where an owner differs (a `stat` each)."""
    try:
        owners = {os.lstat(p).st_uid for p in (repo, dot_git, *([git_dir] if git_dir is not None else []))}
    except OSError:
        return
    if owners != {os.geteuid()}:
        _git(os.fspath(repo), "rev-parse", "--git-dir", refused=True)


@dataclass(frozen=True)
class _NamedRepo:
    """The repository git uses for the working folder where the environment names one."""

    top: Path  # its work tree's top (real path)
    git_dir: str
    exclude: Path  # its `info/exclude` (in `GIT_COMMON_DIR` where that is set)


# the variables by which the environment names the repository git uses (a bare "dotfiles"
# repository's `GIT_DIR=~/.dotfiles GIT_WORK_TREE=~`, a script's, a hook's)
_NAMING_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")
_NAMED: dict[tuple[tuple[str, str], ...], _NamedRepo | None] = {}


def _env_repository() -> _NamedRepo | None:
    """The repository git uses in the working folder where the environment names one (git
    asked, once a run: `rev-parse`), else None. git then reads that work tree's `.gitignore`
    files from its top, that git folder's `info/exclude` and configuration, whatever `.git`
    the tree holds: porter read the `.git` the walk found, and lint saw what `git status`
    leaves out. Where git cannot use it (no such repository, a bare one), a note says so once
    and each path's own repository is read."""
    if not any(name in os.environ for name in _NAMING_VARIABLES):
        return None
    key = (*_config_env(), ("", os.getcwd()))
    if key not in _NAMED:
        out = _git(None, "rev-parse", "--absolute-git-dir", "--show-toplevel", "--git-path", "info/exclude", keep=True)
        lines = out.split("\n") if out is not None else []
        named = None
        if len(lines) == 4 and lines[1]:
            named = _NamedRepo(Path(lines[1]).resolve(), lines[0], Path.cwd() / lines[2])
        elif out is not None:
            _note("git gave no work tree for the repository the environment names: the walk reads each path's own")
        _NAMED[key] = named
    return _NAMED[key]


def _named_repo_excludes(named: _NamedRepo) -> tuple[list[str], bool]:
    """`_repo_excludes` of the repository the environment names (`_env_repository`)."""
    own = _read_patterns(named.exclude, follow=True)
    configured, fold, _ = _git_settings(os.fspath(named.top), _config_env(), named.git_dir)
    return [*_user_excludes(named.top, configured), *own], fold


def _repo_settings(repo: Path, own: _Repo) -> tuple[str | None, bool]:
    """`_git_settings` of the repository, asking git only where the answer may be its own: a
    repository whose own configuration files name neither setting nor any `include` has the
    answer of every other such one for which the same conditional includes (`includeIf`) that
    may set an ignore setting hold, where those are decided here (`gitdir.held`). A folder of
    100 clones asked git 100 times (1.4 s of a walk); 200 under a work `includeIf` naming a
    `core.excludesFile`, 201 times (2.5 s; twenty-second read)."""
    env = _config_env()
    dot_git = repo / ".git"
    if not _plain_local_config(own):
        return _git_settings(os.fspath(repo), env)[:2]
    shared = _SHARED.get(env)
    if shared is not None:
        alike = gitdir.held(shared[0], dot_git)
        if alike is not None and alike in shared[1]:
            return shared[1][alike]
    configured, fold, conditions = _git_settings(os.fspath(repo), env)
    held = gitdir.held(conditions, dot_git) if conditions is not None else None
    if conditions is not None and held is not None:
        _SHARED.setdefault(env, (conditions, {}))[1][held] = (configured, fold)
    return configured, fold


# the answers of git's configuration outside any repository's own (`_repo_settings`), by
# `_config_env`: the conditional includes that may set an ignore setting, and the answer for each
# set of them that holds
_SHARED: dict[
    tuple[tuple[str, str], ...], tuple[tuple[gitdir.Gitdir, ...], dict[tuple[bool, ...], tuple[str | None, bool]]]
] = {}
_LOCAL_WORDS = (b"excludesfile", b"ignorecase", b"include")


def _plain_local_config(own: _Repo) -> bool:
    """Whether the repository's own configuration files (`config`, `config.worktree`, in its git
    folder and, for a worktree or a submodule, the folder `.git` names) can be read and name
    neither `core.excludesFile`, `core.ignoreCase` nor an `include` (case aside)."""
    if own.git_dir is None:
        return False
    folders = {own.git_dir, *([own.named] if own.named is not None else [])}
    return not any(_may_name_ignores(folder / name) for folder in folders for name in ("config", "config.worktree"))


def _may_name_ignores(path: Path) -> bool:
    """Whether the git configuration file `path` may name `core.excludesFile`, `core.ignoreCase`
    or an `include` (case aside)."""
    words = _words_named(path)
    return words is None or bool(words)


def _words_named(path: Path) -> frozenset[bytes] | None:
    """Which of `_LOCAL_WORDS` the git configuration file `path` sets (`_KEY_WORDS`): none for a
    missing file, as git reads it; None for one that is no regular file, cannot be read, or that
    git refuses. A file that only holds such a word (in a value, a comment) sets nothing: it made
    each repository ask git (twenty-second read's leftover)."""
    if not os.path.lexists(path):
        return frozenset()
    try:
        if not path.is_file():
            return None
        data = read_regular(path, MAX_GITIGNORE_BYTES)
    except OSError:
        return None
    if not any(word in data.lower() for word in _LOCAL_WORDS):
        return frozenset()  # (most files: not read as git's syntax)
    keys = gitconfig.keys(data)
    if keys is None:
        return None
    return frozenset(word for word, named in _KEY_WORDS.items() if any(named(key) for key in keys))


# which key (`gitconfig.keys`) sets each of `_LOCAL_WORDS`
_KEY_WORDS: dict[bytes, Callable[[str], bool]] = {
    b"excludesfile": "core.excludesfile".__eq__,
    b"ignorecase": "core.ignorecase".__eq__,
    b"include": lambda key: key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")),
}


def _config_env() -> tuple[tuple[str, str], ...]:
    """What of the environment chooses what git's configuration says (a key of the cache)."""
    return tuple(
        sorted(
            (k, v) for k, v in os.environ.items() if k in ("HOME", "XDG_CONFIG_HOME", "PATH") or k.startswith("GIT_")
        )
    )


# the notes of this process's walks for the run to print once (`cli.common.note_if_git_unread`): what
# git was to say and could not (git missing, its configuration unreadable)
NOTES: list[str] = []


def forget() -> None:
    """Drop what this process remembers of git's configuration (once per run)."""
    _git_settings.cache_clear()
    _SHARED.clear()
    _NAMED.clear()
    NOTES.clear()


def _user_excludes(repo: Path, configured: str | None) -> list[str]:
    """The user's ignores git reads in the repository: the file `core.excludesFile` names in
    git's configuration (global, system or the repository's own, with its `include`s, `~`
    expanded: git is asked, `_git_settings`; `configured`), else `$XDG_CONFIG_HOME/git/ignore`, else
    `$HOME/.config/git/ignore`; an empty `XDG_CONFIG_HOME` counts as unset, an empty `HOME` is
    the root folder's (`/.config/git/ignore`), and a relative path is the work tree top's, as
    git reads them. It may be a link (a dotfiles manager's), as git follows it. Lint saw more
    files than `git status` for a user who keeps ignores there. A folder there is said in a
    note, once: git stops (`cannot use ... as an exclude file`)."""
    env = os.environ
    if configured is not None:
        where = configured
    elif env.get("XDG_CONFIG_HOME"):
        where = env["XDG_CONFIG_HOME"] + "/git/ignore"
    elif "HOME" in env:
        where = env["HOME"] + "/.config/git/ignore"
    else:
        return []
    if not where:
        return []  # (`core.excludesFile =`: git opens no file, and reads no other)
    if os.path.isdir(repo / where):
        # (git stops: `fatal: cannot use ... as an exclude file`; porter read nothing, and said nothing)
        _note(f"git cannot use {os.fspath(repo / where)} as an exclude file (a folder): no user ignores are read")
        return []
    return _read_patterns(repo / where, follow=True)


@lru_cache(maxsize=64)
def _git_settings(
    repo: str, _env: tuple[tuple[str, str], ...], git_dir: str | None = None
) -> tuple[str | None, bool, tuple[gitdir.Gitdir, ...] | None]:
    """(`core.excludesFile`, `core.ignoreCase`, the conditions of the `includeIf`s that may set
    either, `_conditions`) as git reads them in `repo`: None where the first is not set, False
    for the second; the same, with the conditions undecided (None), where git cannot say (then
    a note, once).
    One `git config --get-regexp`; a `~` in the file's name is expanded by git (`--path`).
    git runs no program of the repository's for it (`-c core.fsmonitor=`, no pager), and the
    repository variables of the environment are left out (`programs.git`). `_env`:
    what the answer depends on (`_config_env`, a key of the cache). `git_dir`: the git folder
    the environment names for the work tree `repo` (`_env_repository`)."""
    proc = _git_config(
        repo, git_dir, "--show-origin", "--get-regexp", r"^(core\.(excludesfile|ignorecase)|includeif\..*)$"
    )
    if proc is None:
        return None, False, None
    values: dict[str, str | None] = {}
    included: list[tuple[str, str, str | None]] = []  # each conditional include: (where read, condition, path)
    parts = proc.split("\0")
    for origin, entry in zip(parts[0::2], parts[1::2]):
        key, newline, value = entry.partition("\n")
        values[key.lower()] = value if newline else None
        if key.lower().startswith("includeif.") and key.lower().endswith(".path"):
            included.append((origin, key[len("includeif.") : -len(".path")], value if newline else None))
    configured = values.get("core.excludesfile")
    if configured is not None and configured.startswith("~"):
        expanded = _git_config(repo, git_dir, "--path", "--get", "core.excludesFile")
        configured = expanded.split("\0", 1)[0] if expanded is not None else None
    return configured, _fold(values.get("core.ignorecase", "false"), repo), _conditions(included)


def _conditions(included: list[tuple[str, str, str | None]]) -> tuple[gitdir.Gitdir, ...] | None:
    """The conditions of the conditional includes (origin, condition, path) whose file may set
    what the walk asks of git (`_condition`); None where one of them is undecided here."""
    out: tuple[gitdir.Gitdir, ...] = ()
    for origin, cond, path in included:
        found = _condition(origin, cond, path)
        if found is None:
            return None
        out += found
    return out


def _condition(origin: str, cond: str, path: str | None) -> tuple[gitdir.Gitdir, ...] | None:
    """For the conditional include `includeIf.COND.path = path` read from `origin` (as `git
    config --show-origin` names it): none where its file sets nothing the walk asks of git
    (`core.excludesFile`, `core.ignoreCase`, another include; most such files set a user's
    e-mail for work repositories, and hold for no repository's ignores); its condition where
    the file may set one of the two settings and includes nothing more, and the condition is
    one `gitdir` decides (`~/work/`: then every repository it holds for has one answer); else
    None. A file not found as git finds it (a relative path from outside a file, a `~user`) or
    not read is undecided; a missing file holds nothing, as git reads it."""
    if not path:
        return ()  # (git: an empty path includes nothing)
    if path.startswith("~/") and "HOME" in os.environ:
        where = Path(os.environ["HOME"]) / path[2:]
    elif os.path.isabs(path):
        where = Path(path)
    elif origin.startswith("file:") and not path.startswith("~"):
        where = Path(origin[len("file:") :]).parent / path
    else:
        return None
    words = _words_named(where)
    if words is None or b"include" in words:
        return None
    if not words:
        return ()
    found = gitdir.condition(cond)
    return (found,) if found is not None else None


def _fold(value: str | None, repo: str) -> bool:
    """`core.ignoreCase` as git reads it (`gitconfig.boolean`); one git refuses (`git status`
    stops there) is read as false, and a note says so once."""
    fold = gitconfig.boolean(value)
    if fold is None:
        _note(f"git refuses core.ignoreCase = {value!r} in {repo} (not a boolean): it is read as false")
    return bool(fold)


def _git_config(repo: str, git_dir: str | None, *args: str) -> str | None:
    """The output of `git config -z ARGS` in `repo` (the repository `git_dir` names, where
    given); "" where nothing is set; None where git cannot answer (a note says why, once)."""
    named = {"GIT_DIR": git_dir, "GIT_WORK_TREE": repo} if git_dir is not None else {}
    return _git(repo, "config", "-z", *args, named=named)


def _git(
    repo: str | None, *args: str, keep: bool = False, named: dict[str, str] | None = None, refused: bool = False
) -> str | None:
    """The output of `git ARGS` in `repo` (else the working folder); "" where git exits 1
    saying nothing (not set); None where git cannot answer (a note says why, once; `refused`:
    that git refuses the repository). The repository variables of the environment are left
    out unless `keep` (`named` sets them: `programs.git`)."""
    import subprocess

    what = "git's `core.excludesFile` and `core.ignoreCase` are not read"
    try:
        proc = programs.git(*args, where=repo, keep=keep, named=named)
    except FileNotFoundError:
        _note(f"git is not installed: {what}")
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        _note(f"git could not be run ({exc}): {what}")
        return None
    if proc.returncode == 1 and not proc.stdout:
        return ""  # (not set)
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
        said = [ln for ln in lines if ln.startswith(("fatal: ", "error: "))] or lines[-1:]
        why = said[0].removeprefix("fatal: ").removeprefix("error: ") if said else f"exit status {proc.returncode}"
        if refused:
            _note(
                f"git refuses the repository at {repo} ({why}; see `git help config`, safe.directory): "
                "its own `core.excludesFile` and `core.ignoreCase` are not read, as git reads neither"
            )
        elif repo is None:
            _note(f"git cannot use the repository the environment names ({why}): the walk reads each path's own")
        else:
            _note(f"git cannot read its configuration in {repo} ({why}): {what} there")
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")


def _note(line: str) -> None:
    if line not in NOTES:
        NOTES.append(line)


def _read_patterns(path: Path, *, follow: bool = False) -> list[str]:
    """The lines of a patterns file git reads (a regular file of bounded size; not a link, as
    git opens a `.gitignore`, unless `follow`) but its comments and blank lines (a fresh
    repository's `info/exclude` holds only comments: no patterns to try on every path), or []."""
    try:
        if (path.is_symlink() and not follow) or not path.is_file():
            return []
    except OSError:
        return []
    text = _read_ignore_file(path)
    if text is None:
        return []
    return [line for line in _git_lines(text) if line.strip() and not line.startswith("#")]


def _read_ignore_file(path: Path) -> str | None:
    """The text of a patterns file (git reads bytes), or None where it cannot be read (a FIFO
    or a device is no patterns file). One over `MAX_GITIGNORE_BYTES` is not read and a note
    names it, once: git reads it, and its patterns were left out in silence (twentieth read's
    leftover), so lint saw files `git status` leaves out and nothing said why."""
    try:
        return read_regular(path, MAX_GITIGNORE_BYTES).decode("utf-8", "surrogateescape")
    except Unreadable as exc:
        if exc.reason.startswith(LARGER_THAN):
            size = exc.reason.removesuffix(": not read")
            _note(f"{os.fspath(path)} is {size}: its ignore patterns are not read (git reads them)")
        elif not exc.skipped and not exc.reason.startswith("no such file"):
            # (git warns "unable to access" and reads none; porter read none in silence, and lint
            # saw the files it names with nothing said: twenty-fourth read's leftover)
            _note(f"cannot read {os.fspath(path)} ({exc.reason}): its ignore patterns are not read, as git reads none")
        return None
    except OSError:
        return None


def _has_git(entries: list[os.DirEntry[str]]) -> bool:
    """Whether a folder lists a `.git` (by name: no `stat` for the folders that list none)."""
    return any(e.name == ".git" for e in entries)


class _Repo(NamedTuple):
    """A folder git reads as a repository of its own (`_own_repo`)."""

    git_dir: Path | None  # the folder holding its `info/` (`_common`); None where `.git` cannot be read
    named: Path | None = None  # the folder a `.git` file names (a worktree's, a submodule's)


def _own_repo(folder: Path) -> _Repo | None:
    """The repository `folder` is for git (`is_nonbare_repository_dir`), or None: its `.git` is a
    git folder (`_git_folder`), or a file whose `gitdir:` names one, or a file git cannot read.
    A stale `.git` (a submodule's checkout copied out of its superproject, its
    `gitdir: ../.git/modules/lib` naming nothing; an empty `.git/`; a dangling link) makes no
    repository: git enters that folder with the patterns above it, where porter read it as a
    repository of its own and lint saw the files they leave out (twenty-fourth read). A `.git`
    file is read once: the folder it names was read from it twice more, for its `info/` and its
    configuration (twenty-fifth read)."""
    dot_git = folder / ".git"
    if not os.path.lexists(dot_git):
        return None
    try:
        if dot_git.is_dir():
            return _Repo(dot_git) if _git_folder(dot_git) else None
        if not dot_git.is_file():
            return None  # (a dangling link, a FIFO: git's `stat` or its file check fails)
        text = read_regular(dot_git, _MAX_GITFILE_BYTES).decode("utf-8", "surrogateescape")
    except Unreadable as exc:
        # (git: a file it cannot read counts, a large one not)
        return None if exc.reason.startswith(LARGER_THAN) else _Repo(None)
    except OSError:
        return _Repo(None)
    where = text.removeprefix("gitdir: ").rstrip("\r\n") if text.startswith("gitdir: ") else ""
    # (git reads the path as a C string: it ends at a NUL, which ended every run in a traceback,
    # ValueError from `os.stat`; twenty-fifth read)
    where = where.partition("\0")[0]
    named = folder / where
    return _Repo(_common(named), named) if where and _git_folder(named) else None


_MAX_GITFILE_BYTES = 2**20  # (git's `read_gitfile_gently` reads a `.git` file of at most 1 MiB)


def _git_folder(folder: Path) -> bool:
    """git's `is_git_directory`: `HEAD` a link into `refs/`, a `ref: refs/...` or an object id, and
    `objects/` (or `$GIT_OBJECT_DIRECTORY`) and `refs/` of its common folder (`commondir`) enterable."""
    where = os.fspath(folder)
    head_path = os.path.join(where, "HEAD")
    try:
        if os.path.islink(head_path):
            valid = os.readlink(head_path).startswith("refs/")
        else:  # (a regular file only: a FIFO named HEAD in a tree's folder hung the walk)
            head = read_regular(head_path, _MAX_GITFILE_BYTES)[:255]
            ref = head.startswith(b"ref:") and head[4:].lstrip(b" \t\n\r").startswith(b"refs/")
            valid = ref or (len(head) >= 40 and all(c in _HEX for c in head[:40]))
    except (Unreadable, OSError):
        return False
    # (`get_common_dir`: `$GIT_COMMON_DIR` for every git folder, as git checks a nested one; it
    # was not read, so a `.git` without `objects/` stayed a plain folder where git, with a
    # common folder that has them, sees a repository; twenty-fifth read. Joined as git joins it:
    # an empty one names `/objects`)
    common = os.environ.get("GIT_COMMON_DIR")
    if common is None:
        common = _commondir(where) or where
    objects = os.environ.get("GIT_OBJECT_DIRECTORY", f"{common}/objects")
    return valid and os.access(objects, os.X_OK) and os.access(f"{common}/refs", os.X_OK)


def _commondir(git_dir: str) -> str | None:
    """git's `get_common_dir_noenv`: the folder the `commondir` file of a git folder (a
    worktree's) names, relative to it, else None. Read whole through a link, its trailing CRs
    and LFs cut, ending at a NUL; its first line, spaces cut, was read, so `../.. ` or a second
    line named a common folder where git finds none (twenty-fifth read). An empty or unreadable
    one (git dies): None."""
    path = os.path.join(git_dir, "commondir")
    if not os.path.exists(path):  # (git's `file_exists`: a dangling link is none)
        return None
    try:
        data = read_regular(path, _MAX_GITFILE_BYTES)
    except (Unreadable, OSError):
        return None
    return os.path.join(git_dir, os.fsdecode(data.rstrip(b"\r\n").partition(b"\0")[0])) if data else None


_HEX = frozenset(b"0123456789abcdefABCDEF")


def _common(git_dir: Path) -> Path:
    """The folder holding the `info/` of the git folder a `.git` file names (a worktree's, a
    submodule's): its `commondir` where it has one, else itself."""
    return Path(_commondir(os.fspath(git_dir)) or git_dir)  # (git follows a link there)
