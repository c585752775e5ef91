"""git's `includeIf "gitdir:..."` conditions, decided here for the common forms, so that the walk
asks git once for every nested repository a condition treats alike (`discover._repo_settings`).

A work configuration that sets an ignore setting (`[includeIf "gitdir:~/work/"] path =
~/.gitconfig-work` naming a `core.excludesFile`) made each of 200 clones ask git its own: 201
git calls, 2.5 s of a walk (twentieth and twenty-first reads' leftover). Only what is decided
here exactly as git decides it is decided: `[**/]TEXT[/**]` after git's own preparation
(`config.c` `prepare_include_condition_pattern`: `~/` is the home folder's real path, a pattern
that is not absolute gets `**/` before it, one ending in `/` gets `**` after it), TEXT holding no wildcard,
bracket or escape, matched by git's wildmatch (WM_PATHNAME: `**/` any folders or none, a last
`/**` anything below) against the repository's git folder. Every other condition (another
wildcard, `./`, `~user`, `%(prefix)`, `onbranch:`, `hasconfig:`) is left to git.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Gitdir(NamedTuple):
    """One `gitdir:` (`gitdir/i:`: `fold`) condition of the form `[**/]TEXT[/**]`."""

    lead: bool  # any folders (or none) before TEXT
    text: bytes
    tail: bool  # a folder below TEXT: `/` and anything
    fold: bool

    def holds(self, git_dir: bytes) -> bool:
        """Whether git's wildmatch matches the pattern against `git_dir` (an absolute path)."""
        text, at = (self.text.lower(), git_dir.lower()) if self.fold else (self.text, git_dir)  # (ASCII, as git)
        if self.tail:
            return at.startswith(text + b"/") or (self.lead and b"/" + text + b"/" in at)
        return at == text or (self.lead and at.endswith(b"/" + text))


def condition(cond: str) -> Gitdir | None:
    """The condition of `includeIf.COND.path` where it is a `gitdir:` one of the form decided
    here (`Gitdir`), else None (git decides)."""
    kind, colon, pattern = cond.partition(":")
    if not colon or kind not in ("gitdir", "gitdir/i"):
        return None
    if pattern.startswith("~/"):
        home = _real_home()
        if home is None:
            return None
        pattern = home + pattern[1:]
    elif pattern.startswith(("~", "%(", "./")):
        return None  # (another user's home, git's install prefix, the configuration file's folder)
    lead = not pattern.startswith("/")
    if pattern.endswith("/"):
        pattern += "**"
    while pattern.startswith("**/"):  # (`**/**/` matches what one `**/` matches)
        pattern, lead = pattern[3:], True
    tail = False
    while pattern.endswith("/**"):
        pattern, tail = pattern[:-3], True
    if not pattern.strip("/") or any(c in pattern for c in "*?[\\"):
        return None
    return Gitdir(lead, os.fsencode(pattern), tail, kind == "gitdir/i")


def _real_home() -> str | None:
    """The home folder as git puts it for `~` in a condition: its real path (`interpolate_path`
    with `real_home`), so a home folder given by a link, with a trailing `/` or a `.` holds
    for the repositories below its real path (`$HOME` as written held for none of them, and
    those clones shared a wrong answer: twenty-third read). None where git's may differ: no
    `$HOME`, a relative one (git resolves it from the repository), one that does not exist."""
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        return None
    try:
        return os.path.realpath(home, strict=True)
    except OSError:
        return None


def held(conditions: tuple[Gitdir, ...], dot_git: Path) -> tuple[bool, ...] | None:
    """Which of `conditions` hold for the repository whose `.git` is `dot_git`, as `git -C
    REPO config` decides them; None where that is not certain here. git matches the git
    folder's real path, then the path made absolute from `$PWD` where `$PWD` is the folder
    git runs in by another name (a link), else from the real working folder. Only a `.git`
    folder (not a link, not a worktree's or submodule's `.git` file) is decided here; where
    the two paths disagree, git is asked."""
    if not conditions:
        return ()
    if dot_git.is_symlink() or not dot_git.is_dir():
        return None
    paths = {os.fsencode(os.path.realpath(dot_git))}
    pwd = os.environ.get("PWD", "")
    try:
        if os.path.isabs(pwd) and os.path.samefile(pwd, dot_git.parent):
            paths.add(os.fsencode(pwd.rstrip("/")) + b"/.git")
    except OSError:
        pass
    answers = {tuple(c.holds(p) for c in conditions) for p in paths}
    return answers.pop() if len(answers) == 1 else None
