"""Writing results: atomic replacement in place, or a ported copy of a whole tree.

A file is either its original or its complete rewrite, never half of each: the new bytes go
to a temporary file in the same folder, are flushed to disk, and replace the original with
one rename. The original's permission bits are kept.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()  # write through the link, keep the link
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".porter-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def copy_tree(src: Path, dst: Path, ignore_names: tuple[str, ...] = (".git",)) -> None:
    """Copy every file of `src` to `dst` (symlinks as links), for `--out-dir`."""
    shutil.copytree(
        src,
        dst,
        symlinks=True,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(*ignore_names),
    )
