"""A persistent cache of results (like `.ruff_cache`): unchanged files are not parsed again.

An entry is keyed by sha256 of the file's bytes, its displayed path, the settings that apply
to it, and a salt made of porter's version, the bytes of every rule data file and of
porter's own source (an editable install changes without a version bump), libcst's version
and Python's. Any of those changing is a miss; nothing is ever invalidated by hand.

Safe under concurrent runs: every entry is written to a temporary file in its folder and
renamed into place, so a reader sees a whole entry or none; a reader ignores an entry that
is partial, corrupt or for another key. No entry is fsynced: losing one costs a re-parse.
Where the folder cannot be made (read-only tree) the cache quietly turns itself off.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import astuple
from functools import lru_cache
from pathlib import Path

from porter.findings import Applicability, FileResult, FileStatus, Finding, Position, Severity
from porter.settings import Settings

CACHE_DIR_NAME = ".porter_cache"
_FORMAT = 1
_ROOT_MARKERS = (".git", ".hg", "pyproject.toml", CACHE_DIR_NAME)


@lru_cache(maxsize=1)
def salt() -> str:
    """What every key shares: porter's version, code and rule data, libcst's and Python's."""
    from porter import __version__
    from porter.ruledata import rules_dir

    h = hashlib.sha256(f"{_FORMAT}|{__version__}|{sys.version_info[:2]}|".encode())
    try:
        from importlib.metadata import version

        h.update(version("libcst").encode())
    except Exception:  # noqa: BLE001 - best effort; porter's own code is hashed below
        pass
    package = Path(__file__).resolve().parent
    for folder, pattern in ((rules_dir(), "*.toml"), (package, "**/*.py")):
        for path in sorted(folder.glob(pattern)):
            h.update(path.relative_to(folder).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def project_root(paths: list[Path]) -> Path:
    """The nearest folder above the first path holding .git, pyproject.toml or a cache."""
    first = Path(paths[0]) if paths else Path.cwd()
    start = first.resolve() if first.exists() else Path.cwd().resolve()
    if not start.is_dir():
        start = start.parent
    for folder in (start, *start.parents):
        if any((folder / m).exists() for m in _ROOT_MARKERS):
            return folder
    return start


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.entries = self.directory / f"v{_FORMAT}"
        self.enabled = True
        self.hits = self.misses = 0
        try:
            self.entries.mkdir(parents=True, exist_ok=True)
            marker = self.directory / ".gitignore"
            if not marker.exists():
                _write(marker, b"# made by porter\n*\n")
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                _write(tag, b"Signature: 8a477f597d28d172789f06886806bc55\n# porter's cache\n")
        except OSError:
            self.enabled = False

    @classmethod
    def for_paths(cls, paths: list[Path], cache_dir: Path | None = None) -> Cache:
        """`cache_dir` if given; else `.porter_cache/` at the project root where one exists
        (make one to keep the cache beside the project, as `.ruff_cache`); else a folder
        per project under the user's cache dir, so `--diff` writes nothing into the tree."""
        if cache_dir is not None:
            return cls(Path(cache_dir))
        root = project_root(paths)
        if (root / CACHE_DIR_NAME).is_dir():
            return cls(root / CACHE_DIR_NAME)
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "porter"
        return cls(base / hashlib.sha256(str(root).encode()).hexdigest()[:16])

    def key(self, source: bytes, name: str, settings: Settings) -> str:
        h = hashlib.sha256(salt().encode())
        h.update(repr(astuple(settings)).encode())
        h.update(b"\0" + name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(source)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.entries / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, name: str, source: bytes) -> FileResult | None:
        if not self.enabled:
            return None
        try:
            with open(self._path(key), "rb") as fh:
                data = json.loads(fh.read())
            if data.get("key") != key:
                raise ValueError("entry for another key")
            result = _from_dict(data, name, source)
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None  # missing, partial or corrupt: parse the file again
        self.hits += 1
        return result

    def put(self, key: str, result: FileResult) -> None:
        if not self.enabled:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(exist_ok=True)
            _write(path, json.dumps(_to_dict(key, result), separators=(",", ":")).encode())
        except OSError:
            pass  # a full disk or a read-only tree costs a re-parse next time, nothing else


    def get_index(self, digest: str) -> dict[str, tuple] | None:
        """The project index's answers for a set of files (by their digest), if cached."""
        if not self.enabled:
            return None
        try:
            with open(self._index_path(digest), "rb") as fh:
                data = json.loads(fh.read())
            return {
                name: tuple((scope, expr, kind, tuple(chain)) for scope, expr, kind, chain in facts)
                for name, facts in data.items()
            }
        except (OSError, ValueError, TypeError):
            return None

    def put_index(self, digest: str, facts: dict[str, tuple]) -> None:
        if not self.enabled:
            return
        try:
            _write(self._index_path(digest), json.dumps(facts, separators=(",", ":")).encode())
        except OSError:
            pass

    def _index_path(self, digest: str) -> Path:
        return self.entries / f"index-{hashlib.sha256((salt() + digest).encode()).hexdigest()}.json"


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _to_dict(key: str, r: FileResult) -> dict:
    return {
        "key": key,
        "status": r.status.value,
        "reason": r.reason,
        "error_line": r.error_line,
        "findings": [f.to_dict() for f in r.findings],
        "suppressed": [f.to_dict() for f in r.suppressed],
        "new_source": base64.b64encode(r.new_source).decode() if r.new_source is not None else None,
    }


def _finding(d: dict, name: str) -> Finding:
    return Finding(
        code=d["code"],
        name=d["name"],
        message=d["message"],
        path=name,
        start=Position(d["start"]["line"], d["start"]["column"]),
        end=Position(d["end"]["line"], d["end"]["column"]),
        severity=Severity(d["severity"]),
        applicability=Applicability(d["applicability"]),
        target=d["target"],
        replacement=d.get("replacement"),
        original=d.get("original"),
        applied=bool(d.get("applied", False)),
        advice=d.get("advice"),
        doc_url=d.get("doc_url"),
    )


def _from_dict(d: dict, name: str, source: bytes) -> FileResult:
    new = d.get("new_source")
    return FileResult(
        path=name,
        status=FileStatus(d["status"]),
        findings=[_finding(f, name) for f in d["findings"]],
        original_source=source,
        new_source=base64.b64decode(new) if new is not None else None,
        reason=d.get("reason"),
        error_line=d.get("error_line"),
        suppressed=[_finding(f, name) for f in d.get("suppressed", [])],
    )
