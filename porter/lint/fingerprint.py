"""Stable identities for findings: what the baseline and GitLab's fingerprint key on.

A finding is identified by (path, code, the whitespace-normalised source text of its lines,
its index among identical ones in that file). Line numbers are not part of it, so a finding
keeps its identity when unrelated lines are added or removed above it.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from porter.core.findings import Finding
from porter.files.sites import normalised_text, split_lines


def identity_path(path: str, base: Path | None = None) -> str:
    """The path as it goes into a fingerprint: relative to `base` (or the cwd), `..` allowed."""
    cwd = os.getcwd()
    if os.path.islink(path):  # a link is known by what it points to
        full = Path(path).resolve()
        return _relative(full.as_posix(), _resolved(os.fspath(base) if base is not None else cwd, cwd))
    folder, name = os.path.split(path)
    # a realpath per file cost a warm run more than its findings: each folder is resolved
    # and made relative once (relpath(folder/name) is relpath(folder) + name)
    where = _folder_identity(folder or ".", os.fspath(base) if base is not None else None, cwd)
    return name if where == "." else f"{where}/{name}"


@lru_cache(maxsize=4096)
def _folder_identity(folder: str, base: str | None, cwd: str) -> str:
    return _relative(_resolved(folder, cwd), _resolved(base if base is not None else cwd, cwd))


def _relative(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()
    return rel if os.sep == "/" else Path(rel).as_posix()  # (relpath's is normalised: as_posix alone)


@lru_cache(maxsize=4096)
def _resolved(folder: str, cwd: str) -> str:
    """`Path(folder).resolve()`, as a string, built on its parent's: a folder that is no link
    resolves to its parent's resolved path plus its name, so each folder costs one `lstat`, not
    one per part (realpath walks every part again for every folder of a run). On the strings,
    not Paths: three Paths a folder were most of a warm lint's fingerprints."""
    head, name = os.path.split(folder)
    if name in ("", ".", "..") or not head or os.path.islink(folder):
        return str(Path(folder).resolve())  # (a link loop raises, as Path.resolve does)
    return os.path.join(_resolved(head, cwd), name)


def forget_folders() -> None:
    """Once per run: a folder may have become a link since the last run in this process."""
    _resolved.cache_clear()
    _folder_identity.cache_clear()


def fingerprint_file(
    findings: list[Finding],
    source: bytes | None,
    path: str,
    base: Path | None = None,
    texts: list[str] | None = None,
) -> list[str]:
    """Fingerprints for one file's findings, in the order given. `texts`: each finding's
    `normalised_text` in the file (the stat index kept them), instead of its `source`."""
    # lines as Python numbers them (CR LF, CR, LF): `str.splitlines` also splits at form feeds
    # and separators, and would hash another line than the finding's
    lines = split_lines((source or b"").decode("utf-8", "replace")) if texts is None else []
    given = {id(f): t for f, t in zip(findings, texts)} if texts is not None else None
    where = identity_path(path, base)
    seen: Counter = Counter()
    out: list[tuple[int, str]] = []
    # each line range is normalised and hashed once, not once per finding: a repository's
    # one 300 KB line with 10,000 findings on it took lint 95 s outside the per-file limit
    # (the digests are the same as before: baselines keep matching)
    spans: dict[tuple[int, int], str] = {}
    prefixes: dict[tuple[str, int, int], Any] = {}
    for f in sorted(findings, key=lambda f: (f.start.line, f.start.column, f.end.line, f.end.column, f.code)):
        span = (f.start.line, f.end.line)
        text = spans.get(span)
        if text is None:
            text = spans[span] = normalised_text(lines, f) if given is None else given[id(f)]
        key = (f.code, text)
        index = seen[key]
        seen[key] += 1
        head = prefixes.get((f.code, span[0], span[1]))
        if head is None:
            head = prefixes[(f.code, span[0], span[1])] = hashlib.sha256("\0".join((where, f.code, text, "")).encode())
        h = head.copy()
        h.update(str(index).encode())
        out.append((id(f), h.hexdigest()))
    by_id = dict(out)
    return [by_id[id(f)] for f in findings]
