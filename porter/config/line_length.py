"""The line length of the formatter that governs a file (black's or ruff's), read from the
project's configuration: the nearest `pyproject.toml` with `[tool.black]` or `[tool.ruff]`, or a
`ruff.toml`, ruff's `extend` followed. `porter.codemods.fit` splits the lines a port lengthens
past it; the runner reads it once per file and hands it on in the file's settings (so that the
cache key covers it)."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from porter.config.files import MAX_CONFIG_BYTES
from porter.core.reading import read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def forget() -> None:
    """Drop the configurations read (once per run: a run in the same process reads them again)."""
    _limit_in.cache_clear()


@lru_cache(maxsize=256)
def _limit_in(folder: Path, black_looks: bool = True) -> tuple[int | None, str] | None:
    """The line length the formatter configuration in `folder` sets (None where it sets none) and
    whose it is ("black" or "ruff"); None where `folder` holds no configuration (look further up).
    `black_looks`: black has not yet met its project root below `folder` (black reads only the
    nearest `pyproject.toml`; ruff passes over one without `[tool.ruff]`)."""
    for name in (".ruff.toml", "ruff.toml"):  # ruff's order: `.ruff.toml` wins over `ruff.toml`
        path = folder / name
        if path.is_file():
            return _ruff_length(path, _read(path)), "ruff"
    path = folder / "pyproject.toml"
    if not path.is_file():
        return (None, "ruff") if (folder / ".git").exists() else None
    tool = _toml_at(path)
    if tool is None:
        return None, "ruff"  # a pyproject.toml that does not parse sets no limit (ruff refuses it)
    tool = _table(tool.get("tool"))
    black = tool.get("black") if black_looks else None
    if isinstance(black, dict) and (value := _length(black.get("line-length", black.get("line_length")))):
        return value, "black"
    if isinstance(tool.get("ruff"), dict) or isinstance(black, dict):
        return _ruff_length(path, _table(tool.get("ruff"))), "ruff"
    # a pyproject.toml without [tool.ruff] (a monorepo package's own `[project]`) is no configuration
    # to ruff, which reads on up: the length ruff read from the project's top was missed (ruff 0.17.6
    # `--show-settings`: 40, porter: none; thirty-first read)
    return (None, "ruff") if (folder / ".git").exists() else None


def _ruff_length(path: Path, options: dict[str, Any]) -> int | None:
    """The line length of ruff's configuration `options`, read from `path`: its own, else that of
    the file its `extend` names, as ruff resolves it (from `path`'s folder, `~` and variables
    expanded; a `pyproject.toml` read for its `[tool.ruff]`). None where the chain sets none, or
    loops (ruff refuses a cycle). A chain of any length is followed, as ruff follows it: each
    step names a file not read before (by real path), so it ends; a bound of 256 files gave a
    longer chain no limit, unsaid (twenty-ninth read)."""
    seen = {os.path.realpath(path)}
    while (value := _length(options.get("line-length", options.get("line_length")))) is None:
        extend = options.get("extend")
        if type(extend) is not str:
            return None
        # from the link's folder, `..` taken off lexically, as ruff: a chain across folders grew its
        # path by each step's `../` until past PATH_MAX (a chain of 500 got no limit, unsaid)
        path = Path(os.path.normpath(path.parent / os.path.expandvars(os.path.expanduser(extend))))
        if (real := os.path.realpath(path)) in seen:
            return None
        seen.add(real)
        options = _read(path)
        if path.name == "pyproject.toml":
            options = _table(_table(options.get("tool")).get("ruff"))
    return value


def _table(value: object) -> dict[str, Any]:
    """`value` where it is a table, else an empty one (`[tool] black = 5` is the project's typo)."""
    return value if isinstance(value, dict) else {}


def _length(value: object) -> int | None:
    """A line length: a positive int (not a bool, which is an int to Python), else None."""
    return value if type(value) is int and value > 0 else None


def _read(path: Path) -> dict[str, Any]:
    """The TOML file at `path` read as porter reads its own config (a regular file of 16 MiB at
    most); empty where it cannot be read or parsed: the limit is then the formatter's default,
    which porter does not apply."""
    return _toml_at(path) or {}


def _toml_at(path: Path) -> dict[str, Any] | None:
    """The TOML file at `path` (as `_read`), or None where it cannot be read or parsed."""
    try:
        return tomllib.loads(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, MemoryError, ValueError):
        return None


def _nearest(file: Path) -> tuple[int | None, str]:
    """The length set in the nearest of `file`'s folders that is a project root, and whose it is."""
    black_looks = True
    for folder in file.parents:
        if (found := _limit_in(folder, black_looks)) is not None:
            return found
        black_looks = black_looks and not (folder / "pyproject.toml").is_file()
    return None, "ruff"


def line_length(path: str) -> int | None:
    """The formatter's line length for the file at `path` (None: none declared, or no such file).
    Read where each formatter reads it: ruff from the folders the file is named in (a link to a
    file, or a path through a linked folder, is not resolved: ruff 0.17.6's `--show-settings`
    names the link's `ruff.toml`), black from its real path's (black resolves its sources).
    Resolved for both, a file named through a link was fitted to the length of its target's
    project where ruff reads the link's (200 for 40; twenty-ninth read's leftover)."""
    file = Path(path)
    if not file.is_file():
        return None
    named = Path(os.path.abspath(file))  # (`..` taken off lexically, as ruff makes a path absolute)
    value, whose = _nearest(named)
    if whose == "black" and (real := named.resolve()) != named:
        value, whose = _nearest(real)
    return value
