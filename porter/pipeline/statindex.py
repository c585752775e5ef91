"""The stat index: a warm run answers an unchanged file from its `stat`, without porting it.

One index per run shape (porter's salt, the settings, the working folder and the paths
given), in the cache folder beside the entries. It maps each file's displayed name to the
`stat` it had (device, inode, size, mtime and ctime in ns), the sha256 of the bytes read
then, whether the project index wanted it, the project-index answers it was ported with,
and its result: inline (status, reason, findings, suppressed findings) unless the result
carries a rewrite, which stays in the file's cache entry (`porter.pipeline.cache`), named by
its key, and the CUDA-only modules that result imports (what a dependency file may drop
reads them: `porter.files.deps.imports`; kept so that a warm run neither reads nor parses
the files that name one), and, for an inline result, each finding's whitespace-normalised lines
(what lint's fingerprint hashes: `porter.files.sites.finding_texts`). Beside the files, it keeps
the project's C++/CUDA sources' `stat`, sha256 and whether they register ops, and the `stat` of
the headers a registering one's key macros are read from (what keys the
CUDA-only facts, `runner._native`: a warm run does not read them). A file whose `stat` is
unchanged and whose answers are the same is not ported again. A file that is unchanged but
must be shown (findings, a rewrite or a suppression comment: lint prints its lines and
fingerprints them) is read, must hash to the recorded sha256, and gets its result from the
index (or its verified entry, for a rewrite); any other file is not even read. A caller that
shows no lines and reads no suppression comments (`lint --output-format json`, say) gets an
inline result with its findings' kept lines instead of the bytes, and that file is not read
either: the `stat` vouches for those lines exactly as it vouches for the findings.

A record is trusted only if the file's mtime and ctime were at least `RACY_NS` older than
the moment its `stat` was taken: a file written in the same clock tick as porter read it
could change again without changing its `stat` (git's "racily clean" entries), so such a
file is read and hashed on the next run. That compares the file's times with this machine's
clock, which is only right where this machine stamped them: on a network, FUSE or host-shared
file system (`stamped_here`) a lagging server clock makes an edit of now look minutes old, so
there a record is trusted only once two runs at least `RACY_NS` apart saw the same `stat`.
The ctime cannot be set back by `touch` or `os.utime`, so an edit that keeps the size and
restores the mtime is still seen.

The file is one JSON document behind an HMAC under the user's cache key (`cache.seal`: an
index in a cache folder from elsewhere is not the user's and is not read), and every record
is checked for the shape `save` writes when it is loaded (known rule codes, an entry key of 64
hex digits, one kept line per finding, each a place in the string table, a C++/CUDA source's
row of five ints, a sha256, two bools, its headers' paths and `stat`s): anything that
does not check out is an empty index (every file is read and ported, or answered by its cache
entry, as without one). The salt in the shape covers porter's code and rule files, so a new
porter or an edited rule never reads an old index.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from porter.analysis import native_ops
from porter.pipeline.cache import RACY_NS, Cache, seal, unseal
from porter.core.reading import read_regular
from porter.core.findings import Applicability, FileResult, FileStatus, Finding, Position, Severity
from porter.config.ruledata import all_rules
from porter.config.settings import Facts, Settings
from porter.files.sites import finding_texts


def signature(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def wants_source(result: FileResult, source: bytes) -> bool:
    """Whether a hit must read the file: lint shows lines of, fingerprints and reports on
    files with findings, suppressions, a rewrite or a suppression comment."""
    return bool(
        result.findings
        or result.suppressed
        or result.new_source is not None
        or b"porter:" in source
        or b"noqa" in source
    )


@dataclass
class Record:
    stat: list[int]
    sha256: str
    wanted: bool  # by the project index (`ProjectIndex.wants`)
    imports: str  # what the CUDA-only facts depend on (`cuda_only_index.part`), hex; "" if nothing
    facts: str  # the project index's answers for the file, as JSON
    key: str | None  # its cache entry (a result with a rewrite)
    result: list[Any] | None  # [status, reason, error line, findings, suppressed] of a result without one
    read: bool  # a hit reads the file (`wants_source`): its bytes go with the result
    trusted: bool  # not racily clean: the stat alone may answer
    # the CUDA-only modules its result imports after the port (`ImportsAfterPort.add`), once
    # a run asked; None before
    imported: list[str] | None = None
    # each finding's normalised lines (`sites.finding_texts`) for an inline result, so that a
    # hit is fingerprinted without reading the file (`answer(..., source=False)`); None in an
    # index written before there were any
    texts: list[str] | None = None
    # when (this machine's clock, ns) a run first recorded this `stat`, after taking it: on a
    # file system whose times come from another clock (`stamped_here`), a record is trusted
    # only when a run at least `RACY_NS` later saw the same `stat` (`_trusted`); None in an
    # index written before
    seen: int | None = None


_ENTRY_KEY = re.compile(r"[0-9a-f]{64}")  # a cache entry's key (`Cache.key`), nothing else
_SHA256 = _ENTRY_KEY  # a sha256 in hex

_ROW_FIELDS = (
    "code",
    "name",
    "message",
    "line",
    "column",
    "end line",
    "end column",
    "severity",
    "applicability",
    "target",
    "replacement",
    "original",
    "applied",
    "advice",
    "doc_url",
)


# a finding as a row of the index (its path is the record's name), in `_ROW_FIELDS` order
def _row(f: Finding) -> list[Any]:
    return [
        f.code,
        f.name,
        f.message,
        f.start.line,
        f.start.column,
        f.end.line,
        f.end.column,
        f.severity.value,
        f.applicability.value,
        f.target,
        f.replacement,
        f.original,
        f.applied,
        f.advice,
        f.doc_url,
    ]


# a finding's texts (code, name, message, severity, applicability, target, replacement,
# original, advice, doc link) are kept once in the index's string table and named by their
# place in it: thousands of findings share a few hundred names, advice and links
_TEXTS = (0, 1, 2, 7, 8, 9, 10, 11, 13, 14)
_RESULT = [f.name for f in fields(Record)].index("result")
_FINDING_TEXTS = [f.name for f in fields(Record)].index("texts")


def _pack(row: list[Any], table: dict[str, int]) -> list[Any]:
    out = list(row)
    for i in _TEXTS:
        if out[i] is not None:
            out[i] = table.setdefault(out[i], len(table))
    return out


def _unpack(row: Any, strings: list[str]) -> list[Any]:
    if type(row) is not list or len(row) != len(_ROW_FIELDS):
        raise TypeError("not a stat index finding")
    out = list(row)
    for i in _TEXTS:
        v = out[i]
        if v is not None:
            if type(v) is not int or v < 0:
                raise TypeError("not a place in the string table")
            out[i] = strings[v]
    return out


_SEVERITIES = {s.value: s for s in Severity}
_APPLICABILITIES = {a.value: a for a in Applicability}
_STATUSES = {s.value: s for s in FileStatus}


def _finding(row: Any, name: str) -> Finding:
    """The finding a row holds, or TypeError/ValueError/KeyError (a forged index reads as an empty one)."""
    (
        code,
        title,
        message,
        line,
        column,
        end_line,
        end_column,
        severity,
        applicability,
        target,
        replacement,
        original,
        applied,
        advice,
        doc,
    ) = row
    # spelled out rather than with all(...): this runs for every finding of a warm run
    if code not in all_rules():
        raise KeyError("unknown rule code")
    if not (
        type(code) is str
        and type(title) is str
        and type(message) is str
        and type(target) is str
        and type(applied) is bool
        and type(line) is int
        and type(column) is int
        and type(end_line) is int
        and type(end_column) is int
        and min(line, column, end_line, end_column) >= 0
        and (replacement is None or type(replacement) is str)
        and (original is None or type(original) is str)
        and (advice is None or type(advice) is str)
        and (doc is None or type(doc) is str)
    ):
        raise TypeError("not a stat index finding")
    return Finding(
        code,
        title,
        message,
        name,
        Position(line, column),
        Position(end_line, end_column),
        _SEVERITIES[severity],
        _APPLICABILITIES[applicability],
        target,
        replacement,
        original,
        applied,
        advice,
        all_rules()[code].doc_url if doc is not None else None,  # this install's (`cache._finding`)
    )


# the result a record holds inline: status, reason, error line, findings, suppressed findings
_Held = tuple[FileStatus, str | None, int | None, list[Finding], list[Finding]]


def _inline(rec: Record, name: str) -> _Held:
    """The result a record holds inline, checked for the shape `record` writes."""
    status, reason, line, findings, suppressed = rec.result  # type: ignore[misc]
    if not (
        (reason is None or type(reason) is str)
        and (line is None or type(line) is int)
        and type(findings) is list
        and type(suppressed) is list
    ):
        raise TypeError("not a stat index result")
    return (
        _STATUSES[status],
        reason,
        line,
        [_finding(r, name) for r in findings],
        [_finding(r, name) for r in suppressed],
    )


def _native_row(row: Any) -> bool:
    """Whether `row` has the shape `record_native` writes."""
    return (
        type(row) is list
        and len(row) == 7
        and _stat_row(row[0])
        and type(row[1]) is str
        and _SHA256.fullmatch(row[1]) is not None
        and type(row[2]) is bool
        and type(row[3]) is bool
        and type(row[4]) is int
        and type(row[5]) is list
        and all(
            type(h) is list and len(h) == 2 and type(h[0]) is str and (h[1] is None or _stat_row(h[1])) for h in row[5]
        )
        and type(row[6]) is list
        and all(type(d) is str for d in row[6])
    )


def _stat_row(row: Any) -> bool:
    """Whether `row` is a `signature`: five ints."""
    return type(row) is list and len(row) == 5 and all(type(n) is int for n in row)


def _signature_at(path: str) -> list[int] | None:
    """The `signature` of the file at `path`, None where there is none (a header not made yet)."""
    try:
        return signature(os.stat(path))
    except (OSError, ValueError):
        return None


# the file system types whose files' times this machine's kernel stamps from its own clock
# besides those on a block device (`/proc/filesystems` without `nodev`): held in its memory,
# or stacked on another of its file systems
_IN_MEMORY = ("tmpfs", "ramfs", "overlay")


@lru_cache(maxsize=1)
def _mount_types() -> tuple[dict[int, str], frozenset[str]]:
    """(each mounted file system's device number -> its type, from `/proc/self/mountinfo`;
    the types that need a block device, from `/proc/filesystems`); empty where there are none
    (not Linux)."""
    types: dict[int, str] = {}
    block: set[str] = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                fields, _, rest = line.partition(" - ")
                parts = fields.split(" ")
                if len(parts) > 2 and rest:
                    major, _, minor = parts[2].partition(":")
                    types[os.makedev(int(major), int(minor))] = rest.split(" ", 1)[0]
        with open("/proc/filesystems", encoding="utf-8") as f:
            block = {line.strip() for line in f if line.strip() and not line.startswith("nodev")}
    except (OSError, ValueError):
        return {}, frozenset()
    return types, frozenset(block)


@lru_cache(maxsize=256)
def stamped_here(device: int) -> bool:
    """Whether the files on `device` get their times from this machine's clock: a file system
    on one of its block devices (not FUSE, whose daemon sets them) or in its memory. A network
    file system (NFS, SMB, a cluster's), a FUSE one (sshfs) or a virtual machine's host share
    (9p, virtiofs) is stamped by another machine's clock, which may lag this one's by any
    amount. Each of those is a mount of its own, under its own device number; a device no
    mount names is one of a local file system's (a btrfs subvolume's, an overlay's lower
    layer's), and without `/proc` (not Linux) nothing can be told: both are taken as this
    machine's, as before."""
    types, block = _mount_types()
    kind = types.get(device)
    if kind is None:
        return True
    return (kind in block and not kind.startswith("fuse")) or kind in _IN_MEMORY


class StatIndex:
    def __init__(self, store: Cache, paths: list[Path], settings: Settings) -> None:
        self.store = store
        shape = hashlib.sha256(store.run_salt().encode())
        shape.update(repr(astuple(replace(settings, flow=None))).encode())
        shape.update(b"\0" + os.fsencode(os.getcwd()))
        for p in paths:
            shape.update(b"\0" + os.fsencode(os.path.abspath(p)))
        self.path = store.entries / f"stat-{shape.hexdigest()}.idx"  # a tag line (`cache.seal`), then JSON
        self._label = f"stat:{self.path.name}"
        self._results: dict[str, _Held] = {}  # name -> the inline result of its old record
        # the project's C++/CUDA sources: name -> [stat, sha256, whether it registers ops, trusted,
        # when that stat was first seen, its headers' [path, stat], the build's `-I` folders]
        self.native_old: dict[str, list[Any]] = {}
        self.old: dict[str, Record] = self._load() if store.enabled else {}
        self.new: dict[str, Record] = {}
        self.native_new: dict[str, list[Any]] = {}
        self.started = time.time_ns()
        self._stats: dict[str, os.stat_result] = {}  # name -> its stat, taken once a run (`stat`)
        self._looked: dict[str, tuple[os.stat_result, Record | None]] = {}  # name -> `lookup` of that stat

    def _load(self) -> dict[str, Record]:
        try:
            if self.store.mac_key is None:
                return {}
            data = json.loads(unseal(self.store.mac_key, self._label, self.store.read_back(self.path.name)))
            strings, files, native = data["strings"], data["files"], data.get("native", {})
            if not (type(strings) is list and all(type(t) is str for t in strings) and type(files) is dict):
                return {}
            if not (type(native) is dict and all(_native_row(row) for row in native.values())):
                return {}
            records = {name: Record(*row) for name, row in files.items()}
            for name, rec in records.items():  # the shape `save` writes, or nothing
                if not (
                    isinstance(name, str)
                    and isinstance(rec.stat, list)
                    and isinstance(rec.facts, str)
                    and isinstance(rec.imports, str)
                    and isinstance(rec.sha256, str)
                    and type(rec.read) is bool
                    and (rec.key is None) != (rec.result is None)
                    and (rec.key is None or _ENTRY_KEY.fullmatch(rec.key) is not None)
                    and (rec.seen is None or type(rec.seen) is int)
                    and (
                        rec.imported is None
                        or (type(rec.imported) is list and all(type(m) is str for m in rec.imported))
                    )
                ):
                    return {}
                places: Any = rec.texts  # places in the string table, one per finding of an inline result
                if places is not None:
                    if not (
                        rec.result is not None
                        and type(places) is list
                        and type(rec.result[3]) is list
                        and len(places) == len(rec.result[3])
                        and all(type(t) is int and t >= 0 for t in places)
                    ):
                        return {}
                    rec.texts = [strings[t] for t in places]
                if rec.result is not None:
                    status, reason, line, findings, suppressed = rec.result
                    rec.result = [
                        status,
                        reason,
                        line,
                        [_unpack(r, strings) for r in findings],
                        [_unpack(r, strings) for r in suppressed],
                    ]
                    self._results[name] = _inline(rec, name)
            self.native_old = native
            return records
        except (OSError, ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError, RecursionError):
            self._results = {}
            return {}

    def stat(self, name: str, path: Path | str) -> os.stat_result:
        """The file's `stat`, taken once a run: the project index's scan and the lookup of its
        result read the same one (both before the file is read, if it is)."""
        st = self._stats.get(name)
        if st is None:
            st = self._stats[name] = os.stat(path)
        return st

    def lookup(self, name: str, st: os.stat_result) -> Record | None:
        """The record for `name` if its stat is unchanged and was not racily clean (worked out
        once for the `stat` the run took: the project index's scan and the answer both ask)."""
        looked = self._looked.get(name)
        if looked is not None and looked[0] is st:
            return looked[1]
        rec = self.old.get(name)
        if rec is not None and (not rec.trusted or rec.stat != signature(st)):
            rec = None
        self._looked[name] = (st, rec)
        return rec

    def answer(self, name: str, rec: Record, path: Path | str, source_wanted: bool = True) -> FileResult | None:
        """The result `rec` (from `lookup`) holds for the file at `path`, or None: read and
        port it. A record that needs the bytes reads them, and they must hash as recorded.
        Without `source_wanted` (the caller shows no lines and looks for no suppression comments),
        an inline result whose findings' lines the record keeps comes with those (`texts`) and
        the file is not read: its `stat` vouches for them as for the findings themselves."""
        source = None
        texts = rec.texts if not source_wanted and rec.key is None else None
        if rec.read and texts is None:
            try:
                source = read_regular(path)
            except OSError:
                return None
            if hashlib.sha256(source).hexdigest() != rec.sha256:
                return None
        if rec.key is not None:
            assert source is not None  # a record with a cache key always reads (`record`)
            return self.store.get(rec.key, name, source)  # verified as on any hit
        status, reason, line, findings, suppressed = self._results[name]
        return FileResult(  # each run gets a result of its own (lint may change its lists)
            path=name,
            status=status,
            findings=list(findings),
            original_source=source,
            reason=reason,
            error_line=line,
            suppressed=list(suppressed),
            texts=texts,
        )

    def record(
        self,
        name: str,
        st: os.stat_result,
        source: bytes,
        wanted: bool,
        imports: bytes,
        context: str,
        key: str | None,
        result: FileResult,
    ) -> None:
        """Remember `result` for the file whose `stat` was `st` before `source` was read.
        A result with a rewrite is remembered only through its cache entry."""
        inline: list[Any] | None = None
        texts: list[str] | None = None
        if result.new_source is not None:
            if key is None:
                return
        else:
            key = None
            inline = [
                result.status.value,
                result.reason,
                result.error_line,
                [_row(f) for f in result.findings],
                [_row(f) for f in result.suppressed],
            ]
            texts = finding_texts(result.findings, source)
        trusted, seen = self._trusted(st, self.old.get(name))
        self.new[name] = Record(
            signature(st),
            hashlib.sha256(source).hexdigest(),
            wanted,
            imports.hex(),
            context,
            key,
            inline,
            wants_source(result, source),
            trusted,
            texts=texts,
            seen=seen,
        )

    def _trusted(self, st: os.stat_result, old: Record | list[Any] | None) -> tuple[bool, int]:
        """(whether a record of the file whose `stat` was `st` may answer for it on its own, when
        this `stat` was first seen). A file changed within `RACY_NS` of the run's start could
        change again in the same tick of its clock without changing its `stat`. Where that clock
        is this machine's (`stamped_here`), its times say so; elsewhere they are another
        machine's, which may lag this one's by minutes (a file server's), so that an edit of
        now looks old: there the record is trusted only when an earlier run, at least
        `RACY_NS` before this one by this machine's clock, saw the same `stat` (the file's
        clock had then reached its times, and has since moved on past their tick)."""
        now = time.time_ns()
        sig = signature(st)
        old_sig: list[int] | None
        old_seen: int | None
        if isinstance(old, Record):
            old_sig, old_seen = old.stat, old.seen
        else:
            old_sig, old_seen = (old[0], old[4]) if old is not None else (None, None)
        seen = old_seen if old_sig == sig and old_seen is not None else now
        if stamped_here(st.st_dev):
            return max(st.st_mtime_ns, st.st_ctime_ns) < self.started - RACY_NS, seen
        return seen < self.started - RACY_NS, seen

    def keep(self, name: str, rec: Record) -> None:
        self.new[name] = rec

    def native(self, name: str, dirs: Sequence[Path] = ()) -> tuple[bytes, bool] | None:
        """(sha256, whether it registers ops) of the C++/CUDA source at `name` (from the working
        folder) while its `stat` is unchanged and was not racily clean, and the build's `-I` folders
        are still `dirs` (`native_ops.build_dirs`: a setup.py made to name the folder of its key's
        header was not looked at), as for a record; None: read it (and `record_native` it)."""
        row = self.native_old.get(name)
        if row is None or not row[3] or row[6] != [os.fsdecode(d) for d in dirs]:
            return None
        try:
            st = os.stat(native_ops.source_path(name))
        except OSError:
            return None
        if row[0] != signature(st) or any(_signature_at(path) != sig for path, sig in row[5]):
            return None
        self.native_new[name] = row
        return bytes.fromhex(row[1]), row[2]

    def record_native(
        self,
        name: str,
        st: os.stat_result,
        source: bytes,
        registers: bool,
        read: Sequence[native_ops.Header] = (),
        dirs: Sequence[Path] = (),
    ) -> None:
        """Remember the C++/CUDA source at `name`, whose `stat` was `st` before `source` was read,
        and the headers `read` with it (`native_ops.headers`, looked for in the `-I` folders `dirs`):
        an edit of one is a change of the source's registrations, and a header that could not be read
        is looked for again."""
        trusted, seen = self._trusted(st, self.native_old.get(name))
        trusted = trusted and all(self._trusted(h, None)[0] for _, h, _ in read if h is not None)
        sha = native_ops.sha256_with(source, read).hex()
        made = [[os.fsdecode(p), _signature_at(os.fsdecode(p)) if h is None else signature(h)] for p, h, _ in read]
        self.native_new[name] = [signature(st), sha, registers, trusted, seen, made, [os.fsdecode(d) for d in dirs]]

    def save(self) -> None:
        if not self.store.enabled or (self.new == self.old and self.native_new == self.native_old):
            return
        table: dict[str, int] = {}
        files = {}
        for name, rec in self.new.items():
            row = [getattr(rec, f.name) for f in fields(Record)]
            if rec.result is not None:
                status, reason, line, findings, suppressed = rec.result
                row[_RESULT] = [
                    status,
                    reason,
                    line,
                    [_pack(r, table) for r in findings],
                    [_pack(r, table) for r in suppressed],
                ]
            if rec.texts is not None:
                row[_FINDING_TEXTS] = [table.setdefault(t, len(table)) for t in rec.texts]
            files[name] = row
        body = json.dumps(
            {"strings": list(table), "files": files, "native": self.native_new}, separators=(",", ":")
        ).encode()
        try:
            if self.store.mac_key is not None:
                self.store.write(self.path.name, seal(self.store.mac_key, self._label, body))
        except OSError as exc:
            self.store.not_kept(exc)  # a read-only cache costs reads next time, nothing else


@lru_cache(maxsize=4096)
def facts_key(facts: Facts) -> str:
    """The project index's answers for one file as the index keeps them (memoised: most
    files share the empty answer, and a warm run compares every file's)."""
    return json.dumps(facts, separators=(",", ":"))


def context_key(
    facts: Facts, line_length: int | None, package: bool | None = None, siblings: tuple[str, ...] | None = None
) -> str:
    """What a file's result depends on besides its bytes and the run's settings: the project
    index's answers, where porter writes the file the line length it fits lines to, whether
    its folder is a package's (`Settings.package`), and the files beside it named for devices
    (`Settings.device_siblings`)."""
    key = facts_key(facts)
    key = key if line_length is None else f"{key}|{line_length}"
    key = f"{key}|package" if package else key
    return f"{key}|{json.dumps(siblings)}" if siblings else key
