"""Refuse to rewrite files with uncommitted changes, as `cargo fix` does.

An in-place rewrite mixed into uncommitted work cannot be reviewed or undone on its own.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def dirty_files(paths: list[Path]) -> list[Path]:
    """Those of `paths` that git reports as modified, staged or untracked."""
    by_repo: dict[Path, list[Path]] = {}
    for p in paths:
        top = _toplevel(p.parent if not p.is_dir() else p)
        if top is not None:
            by_repo.setdefault(top, []).append(p.resolve())
    dirty: list[Path] = []
    for top, files in by_repo.items():
        try:
            out = subprocess.run(
                ["git", "-C", str(top), "status", "--porcelain", "-z", "--untracked-files=all"],
                capture_output=True,
                check=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        changed = set()
        entries = out.split(b"\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            if len(entry) > 3:
                changed.add((top / entry[3:].decode(errors="surrogateescape")).resolve())
                if entry[:1] in (b"R", b"C"):
                    i += 1  # a rename carries its old name next
            i += 1
        dirty.extend(f for f in files if f in changed)
    return dirty


def _toplevel(path: Path) -> Path | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return Path(out.stdout.decode().strip()).resolve()
