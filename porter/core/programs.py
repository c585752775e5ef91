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


def find(name: str) -> str:
    """The absolute path of the program `name` on PATH's absolute folders; FileNotFoundError
    where there is none (as `subprocess.run` raises for a missing program)."""
    folders = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p)]
    found = shutil.which(name, path=os.pathsep.join(folders)) if folders else None
    if found is None:
        raise FileNotFoundError(f"{name} is not on PATH")
    return found
