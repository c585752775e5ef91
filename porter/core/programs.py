"""The programs porter runs by name (git), found on the absolute folders of PATH only.

An empty entry of PATH (a trailing `:`, `::`) or a relative one (`.`, `bin`) names the folder a
command runs in: porter runs git in the project, so a repository that ships an executable
`git` had it run by `porter rewrite` (the dirty check) and `porter lint` (git's ignore
settings) for a user whose PATH ends in `:` (twentieth read). As a shell finds a program,
but never relative to where porter stands.
"""

from __future__ import annotations

import os
import shutil
import subprocess


def find(name: str) -> str:
    """The absolute path of the program `name` on PATH's absolute folders; FileNotFoundError
    where there is none (as `subprocess.run` raises for a missing program)."""
    folders = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p)]
    found = shutil.which(name, path=os.pathsep.join(folders)) if folders else None
    if found is None:
        raise FileNotFoundError(f"{name} is not on PATH")
    return found


# the repository variables a user's environment may hold (a git hook's `GIT_DIR` and
# `GIT_INDEX_FILE`, a script's `GIT_WORK_TREE`): they would make git answer for another
# repository than the one porter asks of. `GIT_CONFIG_*` stay: they choose the configuration
# the user's own `git status` reads.
KEPT_GIT_VARIABLES = ("GIT_CONFIG",)


def git(
    *args: str, where: str | None = None, keep: bool = False, named: dict[str, str] | None = None, timeout: float = 10
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in the folder `where` (else the working one), output captured: porter's one
    way to run git (the walk's ignore settings, the cache's note, the dirty check). git runs
    no program of the repository's for it (`-c core.fsmonitor=`, no pager), prompts for
    nothing and takes no optional lock; the repository variables of the environment are left
    out unless `keep` (`named` sets them). The cache's `check-ignore` ran with the caller's
    `GIT_DIR`, which pointed it at another repository (twenty-sixth read). Raises what
    `subprocess.run` raises (FileNotFoundError where git is not on PATH)."""
    env = {k: v for k, v in os.environ.items() if keep or not k.startswith("GIT_") or k.startswith(KEPT_GIT_VARIABLES)}
    env.update(named or {}, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    return subprocess.run(
        [find("git"), "--no-pager", "-c", "core.fsmonitor=", *(["-C", where] if where is not None else []), *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=timeout,
    )
