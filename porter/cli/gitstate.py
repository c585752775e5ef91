"""The one guard every command that writes user files passes first, as `cargo fix` has.

An in-place rewrite mixed into uncommitted work cannot be reviewed or undone on its own, so
porter writes a file only when version control can give it back:

- the file lies in a git work tree (else refuse, unless `--allow-no-vcs`);
- git answers for it (git missing, "dubious ownership", a corrupt index: refuse, saying why);
- it is tracked and has no uncommitted change (else refuse, unless `--allow-dirty`). An
  untracked file and a `.gitignore`d one named explicitly are both refused: git cannot
  give either back.

Each file is checked in its own repository, found from its real path: a symbolic link into
another repository is checked there. Only git is asked; a Mercurial, Subversion or Jujutsu
checkout counts as version control whose state porter cannot read (`--allow-dirty`).

git is asked without running any program the repository's configuration names (an
fsmonitor hook, a clean filter): see `_NO_PROGRAMS`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from porter.core import programs
from porter.pipeline import discover

_OTHER_VCS = {".hg": "Mercurial", ".svn": "Subversion", ".jj": "Jujutsu"}
_CHUNK = 500  # files per git call: far below any command-line limit


@dataclass(frozen=True)
class Refusal:
    """A file porter will not write, and why (one line)."""

    path: Path
    reason: str


def check_writable(paths: list[Path], *, allow_dirty: bool = False, allow_no_vcs: bool = False) -> list[Refusal]:
    """Why each of `paths` may not be written (an empty list: all may)."""
    if allow_dirty and allow_no_vcs:
        return []
    refused: list[Refusal] = []
    by_repo: dict[_Repo, list[tuple[Path, Path]]] = {}
    tops: dict[Path, _Repo | str] = {}
    for given in paths:
        real = given.resolve()
        top = _repo_to_check(given, real.parent, tops, allow_dirty=allow_dirty, allow_no_vcs=allow_no_vcs)
        if isinstance(top, Refusal):
            refused.append(top)
        elif top is not None:
            by_repo.setdefault(top, []).append((given, real))
    for repo, files in by_repo.items():
        for start in range(0, len(files), _CHUNK):
            refused.extend(_dirty(repo, files[start : start + _CHUNK]))
    return refused


@dataclass(frozen=True)
class _Repo:
    """A work tree's top, and the repository variables git is run with for it (none: the one git
    finds from the top; a bare "dotfiles" repository the environment names: its `GIT_DIR` and
    `GIT_WORK_TREE`)."""

    top: Path
    named: tuple[tuple[str, str], ...] = ()


def _repo_to_check(
    given: Path, folder: Path, tops: dict[Path, _Repo | str], *, allow_dirty: bool, allow_no_vcs: bool
) -> _Repo | Refusal | None:
    """The git work tree whose status decides whether `given` may be written; a refusal when
    no git can answer (no version control, another VCS, git failing); None when nothing needs
    checking. `tops` caches each folder's work tree (one `git rev-parse` per folder)."""
    marker = _vcs_marker(folder)
    named = _named_repository(folder, marker)
    if named is not None:
        return None if allow_dirty else named
    if marker is None:
        if allow_no_vcs:
            return None
        return Refusal(
            given,
            "not under version control: porter cannot give it back if the port is wrong "
            "(pass --allow-no-vcs to write anyway)",
        )
    if allow_dirty:
        return None
    if marker.name in _OTHER_VCS:
        return Refusal(
            given,
            f"in a {_OTHER_VCS[marker.name]} checkout, whose changes porter cannot check "
            "(commit, then pass --allow-dirty)",
        )
    if folder not in tops:
        tops[folder] = _toplevel(folder)
    top = tops[folder]
    return Refusal(given, top) if isinstance(top, str) else top


def _named_repository(folder: Path, marker: Path | None) -> _Repo | None:
    """The repository the environment names (a bare "dotfiles" repository's `GIT_DIR=~/.dotfiles
    GIT_WORK_TREE=~`), where it answers for `folder` (a real path), as git there answers: its work
    tree holds the folder (`discover.git_named`) and no version-control folder lies on the way
    up to that tree's top (there the file's own repository answers, as the guard asked before:
    a hook's `GIT_DIR` naming another repository). The guard called every file of such a work
    tree "not under version control" (twenty-sixth read's leftover)."""
    named = discover.git_named(folder)
    if "GIT_DIR" not in named:
        return None
    top = Path(named["GIT_WORK_TREE"])
    if marker is not None and (top in (marker.parent, *marker.parent.parents) or _own_git_dir(marker, named)):
        return None
    return _Repo(top, tuple(sorted(named.items())))


def _own_git_dir(marker: Path, named: dict[str, str]) -> bool:
    """Whether the environment's `GIT_DIR` is the git folder of the `.git` found above the file
    (`marker`): then the environment names the file's own repository, and git took the working
    folder for its work tree's top (no `GIT_WORK_TREE`), from `sub/` a top below the real one:
    a tracked, clean `sub/m.py` was refused as "untracked" (the twenty-sixth read's defect, back
    through the dotfiles case; twenty-seventh read). The file's own top answers, as from the top.
    One `rev-parse` (the caller's variables left out), only on this rare path."""
    try:
        proc = programs.git("rev-parse", "--absolute-git-dir", where=str(marker.parent), timeout=_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return False
    own = proc.stdout.decode(errors="surrogateescape").strip()
    return proc.returncode == 0 and Path(own).resolve() == Path(named["GIT_DIR"]).resolve()


def dirty_files(paths: list[Path]) -> list[Path]:
    """Those of `paths` git reports as modified, staged, untracked or ignored (kept for callers
    that only want the names; a file git cannot answer for counts as dirty)."""
    return [r.path for r in check_writable(paths, allow_no_vcs=True)]


def _vcs_marker(folder: Path) -> Path | None:
    """The nearest `.git` (folder or worktree file), `.hg`, `.svn` or `.jj` at or above `folder`."""
    for here in (folder, *folder.parents):
        for marker in (".git", *_OTHER_VCS):
            candidate = here / marker
            if candidate.exists():
                return candidate
    return None


# A repository's own `.git/config` can name programs that git runs while it answers (an
# archive or a shared folder carries that file; a clone does not): `core.fsmonitor` is run
# by every `git status` (`programs.git` sets it empty), and a `filter.<driver>.clean` /
# `.process` command for each file whose stat changed. porter only asks whether files
# changed, which needs none of them.
_NO_PROGRAMS = ("-c", "core.untrackedCache=false")
_TIMEOUT_S = 120


def _filters_off(repo: _Repo) -> list[str]:
    """`-c filter.<driver>.clean=` (and `.process=`) for every filter driver the repository's
    configuration names: git skips a filter whose command is empty. Reading the configuration
    runs nothing."""
    proc = programs.git(
        *_NO_PROGRAMS,
        "config",
        "-z",
        "--get-regexp",
        r"^filter\..*\.(clean|process)$",
        where=str(repo.top),
        named=dict(repo.named),
        timeout=_TIMEOUT_S,
    )
    out: list[str] = []
    for entry in proc.stdout.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode(errors="surrogateescape")
        if key:
            out += ["-c", f"{key}="]
    return out


def _git(
    top: Path, *args: str, filters: list[str] | None = None, named: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in `top`, as porter runs git (`programs.git`: the caller's repository variables
    left out, so the file's own repository answers): a hook's `GIT_DIR` or `GIT_INDEX_FILE` in the
    environment made git answer for another repository or index, or take the folder asked from
    for the work tree's top (a tracked, clean file refused as untracked; twenty-sixth read)."""
    # literal pathspecs: a file named `*.py` or `:(glob)x` is that file, not a pattern
    return programs.git(
        *_NO_PROGRAMS,
        *(filters or []),
        "--literal-pathspecs",
        *args,
        where=str(top),
        named=named,
        timeout=_TIMEOUT_S,
    )


def _hook_index(repo: _Repo) -> dict[str, str]:
    """The caller's `GIT_INDEX_FILE` where it is an index of `repo`'s own git folder, as git's
    own are in a hook (`git commit -a` runs pre-commit with `.git/index.lock`, `git commit FILE`
    with `.git/next-index-N.lock`; absolute paths): git's commands in a hook read the index the
    commit is building (githooks(5)), and so does the guard. Another repository's index, or a
    relative name (relative to what git cannot tell porter), is left out. The guard read the
    repository's own index in a hook: a change being committed was "uncommitted" (twenty-sixth
    read's leftover). One `rev-parse`, only where the variable is set."""
    index = os.environ.get("GIT_INDEX_FILE", "")
    if not os.path.isabs(index):
        return {}
    named = dict(repo.named)
    try:
        proc = _git(repo.top, "rev-parse", "--absolute-git-dir", named=named)
    except (OSError, subprocess.SubprocessError):
        return {}
    git_dir = Path(proc.stdout.decode(errors="surrogateescape").strip())
    if proc.returncode != 0 or Path(index).resolve().parent != git_dir.resolve():
        return {}
    return {**named, "GIT_INDEX_FILE": _real_index(Path(index))}


def _real_index(index: Path) -> str:
    """The index a commit hook's guard reads: a partial commit's (`git commit FILE`) temporary
    `next-index-N.lock` holds HEAD plus the files named, so a file staged in the real index and
    put back to HEAD's text in the work tree was clean there and allowed, where the guard refuses
    it outside the hook; that commit's real index (`index.lock` beside it, the index the commit
    leaves) holds every staged change and the files named, so it is read instead (twenty-seventh
    read's leftover). Any other index (`git commit -a`'s own `index.lock`): as it is."""
    real = index.with_name("index.lock")
    if index.name.startswith("next-index-") and index.name.endswith(".lock") and real.is_file():
        return os.fspath(real)
    return os.fspath(index)


def _why(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
    first = lines[0] if lines else f"exit status {proc.returncode}"
    return first.removeprefix("fatal: ").removeprefix("error: ")


def _toplevel(folder: Path) -> _Repo | str:
    """The work tree's top folder, or why git cannot say."""
    try:
        proc = _git(folder, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        return (
            "git is not installed, so porter cannot check for uncommitted changes (pass --allow-dirty to write anyway)"
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"git could not be run ({exc}); porter cannot check for uncommitted changes"
    if proc.returncode != 0:
        return f"git cannot tell whether it has uncommitted changes: {_why(proc)}"
    out = proc.stdout.decode(errors="surrogateescape").strip()
    if not out:
        return "not in a git work tree (inside a .git folder or a bare repository)"
    return _Repo(Path(out).resolve())


def _dirty(repo: _Repo, files: list[tuple[Path, Path]]) -> list[Refusal]:
    top = repo.top
    rel = []
    for _given, real in files:
        try:
            rel.append(real.relative_to(top).as_posix())
        except ValueError:
            rel.append(str(real))
    try:
        filters, named = _filters_off(repo), _hook_index(repo) or dict(repo.named)
        tracked = _git(top, "ls-files", "-v", "-z", "--", *rel, filters=filters, named=named)
        status = _git(
            top, "status", "--porcelain", "-z", "--untracked-files=all", "--", *rel, filters=filters, named=named
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return [Refusal(given, f"git could not be run ({exc})") for given, _ in files]
    for proc in (tracked, status):
        if proc.returncode != 0:
            why = f"git cannot tell whether it has uncommitted changes: {_why(proc)}"
            return [Refusal(given, why) for given, _ in files]
    known = _tracked_tags(top, tracked.stdout)
    changed = _status_letters(top, status.stdout)
    out = []
    for given, real in files:
        tag = known.get(real)
        reason = _OVERLOOKED if tag in _OVERLOOKING_TAGS else _why_dirty(changed.get(real), tracked=tag is not None)
        if reason is not None:
            out.append(Refusal(given, reason))
    return _say_case_twins(repo, named, out)


def _say_case_twins(repo: _Repo, named: dict[str, str], refused: list[Refusal]) -> list[Refusal]:
    """The refusals of files git leaves unlisted though not tracked, where git (`core.ignoreCase`
    true) takes the file for a tracked one spelled in another case (`A.py` for `a.py`: `git status`
    lists nothing, `check-ignore` says not ignored): that is said, not "ignored by git" (twenty-
    sixth read's leftover). Two git calls, only on this rare path."""
    rel = {r.path: os.path.relpath(r.path.resolve(), repo.top) for r in refused if r.reason == _IGNORED}
    twins = _tracked_twins(repo, named, list(rel.values())) if rel else {}
    return [_twin_refusal(r, twins.get(rel[r.path].lower())) if r.path in rel else r for r in refused]


def _tracked_twins(repo: _Repo, named: dict[str, str], rel: list[str]) -> dict[str, str]:
    """Tracked names matching `rel` in any case, by their lower case, where the repository folds
    case (git's own `icase` pathspec magic)."""
    try:
        folds = _git(repo.top, "config", "--type=bool", "core.ignoreCase", named=named)
        if folds.stdout.strip() != b"true":
            return {}
        proc = programs.git(
            *_NO_PROGRAMS, "ls-files", "-z", "--", *(f":(literal,icase){p}" for p in rel),
            where=str(repo.top), named=named, timeout=_TIMEOUT_S,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    listed = [p.decode(errors="surrogateescape") for p in proc.stdout.split(b"\0") if p]
    return {name.lower(): name for name in listed} if proc.returncode == 0 else {}


def _twin_refusal(refusal: Refusal, twin: str | None) -> Refusal:
    if twin is None:
        return refusal
    return Refusal(
        refusal.path,
        f"git (core.ignoreCase) takes it for the tracked {twin!r}, another file on this disk: "
        "git cannot give it back (pass --allow-dirty)",
    )


# `git ls-files -v` tags of a tracked file git is told to overlook: skip-worktree (`S`, `s`) and
# assume-unchanged (a lower-case tag): `git status` and `git diff` list no change of it, so an
# edit the user made was written over unseen, and the port itself was then invisible to git. Refused
# even where its bytes equal the index's: written, the port is still unseen by `git status`, `git diff`
# and `git stash`, and `git restore` of a skip-worktree file says "did not match any file(s) known to
# git" (git 2.39, thirty-first read); telling equal bytes would take hashing it through git's filters
_OVERLOOKING_TAGS = frozenset("Sshm")
_OVERLOOKED = (
    "git is told to overlook its changes (skip-worktree or assume-unchanged): git can neither say whether it "
    "has uncommitted changes nor, whatever its bytes, show the port (`git status` and `git diff` list no change "
    "of it; under skip-worktree `git restore` does not know it) (clear it with `git update-index "
    "--no-skip-worktree --no-assume-unchanged FILE`, or pass --allow-dirty)"
)


def _tracked_tags(top: Path, listing: bytes) -> dict[Path, str]:
    """Each path of `git ls-files -v -z` output with its tag (`H`, `S`, `h`, ...)."""
    tags: dict[Path, str] = {}
    for entry in listing.split(b"\0"):
        if len(entry) > 2:
            tags[(top / entry[2:].decode(errors="surrogateescape")).resolve()] = entry[:1].decode(errors="replace")
    return tags


def _status_letters(top: Path, porcelain: bytes) -> dict[Path, str]:
    """Each path of `git status --porcelain -z` output with git's two status letters."""
    changed: dict[Path, str] = {}
    entries = porcelain.split(b"\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if len(entry) > 3:
            xy = entry[:2].decode(errors="replace")  # git's two status letters
            changed[(top / entry[3:].decode(errors="surrogateescape")).resolve()] = xy
            if xy[0] in "RC":
                i += 1  # a rename carries its old name next
        i += 1
    return changed


def _why_dirty(code: str | None, *, tracked: bool) -> str | None:
    """Why a file with this status may not be written (None: it is committed and clean)."""
    if code == "??":
        return "untracked: git cannot give it back (add and commit it, or pass --allow-dirty)"
    if code is not None:
        kind = "staged" if code[1] == " " else "uncommitted"
        return f"has {kind} changes (commit or stash them, or pass --allow-dirty)"
    if not tracked:
        return _IGNORED
    return None


_IGNORED = "ignored by git and not tracked: git cannot give it back (pass --allow-dirty)"
