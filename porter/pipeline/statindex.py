"""The stat index: a warm run answers an unchanged file from its `stat`, without reading it.

One index per run shape (porter's salt, the settings, the working folder and the paths
given), in the cache folder beside the entries. It maps each file's displayed name to the
`stat` it had (device, inode, size, mtime and ctime in ns), the sha256 of the bytes read
then, whether the project index wanted it, the project-index answers it was ported with,
and its result: inline when the result says nothing about the file's text (skipped, or
checked with no finding), else the key of its cache entry (`porter.pipeline.cache`). A file whose
`stat` is unchanged and whose answers are the same is not read; a file with findings, a
rewrite or a suppression comment is read anyway (lint shows its lines), must hash to the
recorded sha256, and gets its result from its entry, verified as on any cache hit.

A record is trusted only if the file's mtime and ctime were at least `RACY_NS` older than
the moment its `stat` was taken: a file written in the same clock tick as porter read it
could change again without changing its `stat` (git's "racily clean" entries), so such a
file is read and hashed on the next run. The ctime cannot be set back by `touch` or
`os.utime`, so an edit that keeps the size and restores the mtime is still seen.

The file is one JSON document behind its own sha256; anything that does not check out is an
empty index (every file is read, as without one).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from porter.pipeline.cache import Cache, _read_entry, _write, salt
from porter.pipeline.findings import FileResult, FileStatus
from porter.config.settings import Facts, Settings

RACY_NS = 2_000_000_000  # a file changed this recently before its stat is read again next run


def signature(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def wants_source(result: FileResult, source: bytes) -> bool:
    """Whether a hit must read the file: lint shows lines of, fingerprints and reports on
    files with findings, suppressions, a rewrite or a suppression comment."""
    return bool(result.findings or result.suppressed or result.new_source is not None
                or b"porter:" in source or b"noqa" in source)


@dataclass
class Record:
    stat: list[int]
    sha256: str
    wanted: bool  # by the project index (`ProjectIndex.wants`)
    imports: str  # what the CUDA-only facts depend on (`cuda_only_index.part`), hex; "" if nothing
    facts: str  # the project index's answers for the file, as JSON
    key: str | None  # its cache entry (a result that needs the file's bytes)
    result: list[str | int | None] | None  # [status, reason, error line] of a result that does not
    trusted: bool  # not racily clean: the stat alone may answer

    def answer(self, name: str) -> FileResult:
        """The inline result (only for records without a cache key)."""
        assert self.result is not None
        status, reason, line = self.result
        if not (isinstance(status, str) and (reason is None or isinstance(reason, str)) and (line is None or type(line) is int)):
            raise TypeError("not a stat index result")  # a forged index reads as an empty one
        return FileResult(path=name, status=FileStatus(status), reason=reason, error_line=line)


class StatIndex:
    def __init__(self, store: Cache, paths: list[Path], settings: Settings) -> None:
        self.store = store
        shape = hashlib.sha256(salt().encode())
        shape.update(repr(astuple(replace(settings, flow=None))).encode())
        shape.update(b"\0" + os.fsencode(os.getcwd()))
        for p in paths:
            shape.update(b"\0" + os.fsencode(os.path.abspath(p)))
        self.path = store.entries / f"stat-{shape.hexdigest()}.idx"  # a digest line, then JSON
        self.old: dict[str, Record] = self._load() if store.enabled else {}
        self.new: dict[str, Record] = {}
        self.started = time.time_ns()

    def _load(self) -> dict[str, Record]:
        try:
            raw = _read_entry(self.path)
            digest, _, body = raw.partition(b"\n")
            if digest.decode() != hashlib.sha256(body).hexdigest():
                return {}
            data = json.loads(body)
            records = {name: Record(*row) for name, row in data.items()}
            for name, rec in records.items():  # the shape `save` writes, or nothing
                if not (isinstance(name, str) and isinstance(rec.stat, list) and isinstance(rec.facts, str) and isinstance(rec.imports, str)
                        and (rec.key is None) != (rec.result is None)):
                    return {}
                if rec.result is not None:
                    rec.answer(name)
            return records
        except (OSError, ValueError, TypeError, UnicodeDecodeError, RecursionError):
            return {}

    def lookup(self, name: str, st: os.stat_result) -> Record | None:
        """The record for `name` if its stat is unchanged and was not racily clean."""
        rec = self.old.get(name)
        if rec is None or not rec.trusted or rec.stat != signature(st):
            return None
        return rec

    def record(self, name: str, st: os.stat_result, source: bytes, wanted: bool, imports: bytes, facts: Facts, key: str | None, result: FileResult) -> None:
        """Remember `result` for the file whose `stat` was `st` before `source` was read.
        A result that points into the file is remembered only through its cache entry."""
        if wants_source(result, source):
            if key is None:
                return
            inline = None
        else:
            key, inline = None, [result.status.value, result.reason, result.error_line]
        trusted = max(st.st_mtime_ns, st.st_ctime_ns) < self.started - RACY_NS
        self.new[name] = Record(
            signature(st), hashlib.sha256(source).hexdigest(), wanted, imports.hex(), facts_key(facts), key, inline, trusted
        )

    def keep(self, name: str, rec: Record) -> None:
        self.new[name] = rec

    def save(self) -> None:
        if not self.store.enabled or self.new == self.old:
            return
        body = json.dumps({n: astuple(r) for n, r in self.new.items()}, separators=(",", ":")).encode()
        try:
            _write(self.path, hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass  # a read-only cache costs reads next time, nothing else


def facts_key(facts: Facts) -> str:
    return json.dumps(facts, separators=(",", ":"))
