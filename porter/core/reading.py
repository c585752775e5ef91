"""Reading a file from a tree porter was given: regular files only, never more than a bound.

A tree can hold anything under a `.py` name: a FIFO (reading it waits for a writer that never
comes), a character device (`/dev/zero` as extracted by root from an archive: reading it
never ends), a socket, a 10 GB file. Every read of a file found in a tree goes through
`read_regular`: the type is checked before the file is opened (opening a FIFO or a tape
device can block or act), checked again on the open descriptor (the name may have been
swapped in between), the open never blocks and never makes a terminal the controlling one,
and the bytes are counted while they are read, so a file that grows past the bound after
its `stat` is still cut off.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from porter.core.findings import FileResult

MAX_FILE_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Unreadable(OSError):
    """A file porter does not read, and why. `skipped`: not a file to read at all (a FIFO, a
    device, a folder, too large), reported as skipped; otherwise reading it failed (an error)."""

    def __init__(self, reason: str, skipped: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.skipped = skipped

    def __str__(self) -> str:
        return self.reason


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory, not a file: not read"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file: not read"
    if stat.S_ISCHR(mode):
        return "a character device, not a regular file: not read"
    if stat.S_ISBLK(mode):
        return "a block device, not a regular file: not read"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file: not read"
    return "not a regular file: not read"


# every reason a file is passed over for its size holds these words (`too_large`): lint counts
# such files as not read, as ruff counts a file it cannot read (E902), never as a pass
LARGER_THAN = "larger than "


def too_large(reason: str | None) -> bool:
    """Whether `reason` (a skipped file's) is its size: read, ported or parsed, it was not."""
    return reason is not None and LARGER_THAN in reason


def not_read(results: list[FileResult]) -> list[FileResult]:
    """Of `results` (FileResults), the Python files and notebooks passed over for their size:
    neither ported nor checked, so not a pass (ruff's E902 for a file it cannot read). A data
    file past porter's bound (a 20 MiB tokenizer.json) stays a note: data, not code."""
    from porter.core.findings import FileStatus
    from porter.core.kinds import NOTEBOOK, PYTHON, SETUP_PY, kind_of

    return [
        r
        for r in results
        if r.status is FileStatus.SKIPPED and too_large(r.reason) and kind_of(r.path) in (PYTHON, SETUP_PY, NOTEBOOK)
    ]


# Larger Python sources are reported, not parsed: libcst parses ~1-6k lines/s and the rewrite
# costs several times that (a 20 MB generated table would take an hour), and `ast` is no answer
# either (a 10 MB file cost the project index 30 s and 3.4 GB; twentieth read). One rule for every
# reader that parses Python: the file's porter says it once (`too_large_to_parse`), every other
# reader (the project index, the kernel inventory ...) passes the file over without a word.
MAX_PARSE_BYTES = 2 * 2**20


def too_large_to_parse(size: int) -> str | None:
    """Why a Python source of `size` bytes is not parsed (the note its file gets), or None."""
    if size <= MAX_PARSE_BYTES:
        return None
    return f"{size / 2**20:.1f} MiB: {LARGER_THAN}porter parses ({MAX_PARSE_BYTES // 2**20} MiB; generated code?)"


def why_not_parsed(st: os.stat_result) -> str | None:
    """Why a source of this `stat` is not read for its code (None where it is): not a regular
    file, or past `MAX_PARSE_BYTES`. One bound for every reader of C++/CUDA sources as for
    Python ones: `porter kernels` stopped at 2 MiB while lint's registered-ops pass read a .cu
    of up to 64 MiB (a 60 MB generated one: 153 MB peak; twenty-first read)."""
    return _not_regular(st.st_mode) or too_large_to_parse(st.st_size)


def _too_large(limit: int) -> Unreadable:
    shown = f"{limit // 2**20} MiB" if limit >= 2**20 and limit % 2**20 == 0 else f"{limit} bytes"
    return Unreadable(f"{LARGER_THAN}{shown}: not read", skipped=True)


def why_not_read(st: os.stat_result, limit: int | None = MAX_FILE_BYTES) -> str | None:
    """Why `open_regular` would not read a file of this `stat` (None where it would)."""
    return _not_regular(st.st_mode) or (_too_large(limit).reason if limit is not None and st.st_size > limit else None)


def _error(exc: OSError) -> Unreadable:
    if isinstance(exc, FileNotFoundError):
        return Unreadable("no such file (removed while porter ran, or a broken link)", skipped=False)
    if isinstance(exc, PermissionError):
        return Unreadable("permission denied (cannot read)", skipped=False)
    return Unreadable(f"cannot read: {exc.strerror or exc}", skipped=False)


def open_regular(path: Path | str, limit: int | None = MAX_FILE_BYTES) -> tuple[BinaryIO, os.stat_result]:
    """An open binary file and its `stat` (of the descriptor), or `Unreadable` when `path` is
    not a regular file or (with `limit`) is larger than `limit` bytes. A symbolic link is
    followed (the walk decides which links are read). The caller closes the file."""
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _error(exc) from None
    why = why_not_read(before, limit)
    if why is not None:
        raise Unreadable(why, skipped=True)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise _error(exc) from None
    try:
        st = os.fstat(fd)
        why = why_not_read(st, limit)  # swapped for something else since the stat above
        if why is not None:
            raise Unreadable(why, skipped=True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb", buffering=0), st


def read_regular_stat(path: Path | str, limit: int = MAX_FILE_BYTES) -> tuple[os.stat_result, bytes]:
    """(the file's `stat` before it was read, its bytes), or `Unreadable`.

    What `path` names must be a regular file (see `open_regular`). At most `limit` bytes are
    read: a file larger than that, or one that grows past it while it is read, is
    `Unreadable` (skipped)."""
    fh, st = open_regular(path, limit)
    with fh:
        chunks: list[bytes] = []
        total = 0
        try:
            while True:
                chunk = fh.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise _too_large(limit)
        except Unreadable:
            raise
        except OSError as exc:
            raise _error(exc) from None
    return st, b"".join(chunks)


def read_regular(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or `Unreadable` (see
    `read_regular_stat`)."""
    return read_regular_stat(path, limit)[1]


def read_regular_text(path: Path | str, limit: int = MAX_FILE_BYTES, errors: str = "replace") -> str:
    """`read_regular`, decoded as UTF-8 (`errors` as for `bytes.decode`)."""
    return read_regular(path, limit).decode("utf-8", errors)


_LONE_CR = re.compile(rb"\r(?!\n)")


def folder_is_package(path: Path | str) -> bool:
    """Whether the file at `path` is a module of a package (its folder holds `__init__.py`):
    library code, whose public functions and options are its API (`codemods.literals.in_package`)."""
    try:
        return (Path(path).resolve().parent / "__init__.py").is_file()
    except (OSError, RuntimeError):  # (a loop of links)
        return False


# configparser matches each line that is no section header with `(?P<option>.*?)\s*(?P<vi>=|:)`:
# the lazy name tries every end, and from each the blanks run to their end, so a long run of
# blanks inside a line with no delimiter right after it is quadratic (`[` + 20,000 spaces + `a`
# under a section: 6 s; a 2 MiB line, hours; seventeenth read). A run of blanks inside a line
# (after its first non-blank character) changes nothing configparser decides but the text of a
# name or a value, and porter keeps neither (it asks only whether setuptools could read the file,
# and on which line it could not), so such a run is cut to `_INNER_BLANKS` characters before the
# text is handed over: a line's indentation (which decides a continuation) and its line breaks
# (the line numbers) are kept, and a 2 MiB line of the worst such runs takes 0.3 s.
_INNER_BLANKS = 16
_LONG_INNER_BLANKS = re.compile(r"(?<=\S)[^\S\n]{%d,}" % (_INNER_BLANKS + 1))


def configparser_text(text: str) -> str:
    """`text` for configparser, each run of blanks inside a line cut to `_INNER_BLANKS`."""
    return _LONG_INNER_BLANKS.sub(lambda m: m.group()[:_INNER_BLANKS], text)


def lf_line_ends(source: bytes) -> bytes:
    """`source` with each lone CR (an old Mac line end, which Python reads as one) as LF, for
    the byte patterns that find lines (`^`/`$` under re.M, a split on LF): the same length, so
    every offset, line and column holds. The bytes themselves when no CR stands alone (an LF or
    CRLF file: two counts, no copy); a rewrite is still made of the file's own bytes."""
    crs = source.count(b"\r")
    if not crs or crs == source.count(b"\r\n"):
        return source
    return _LONE_CR.sub(b"\n", source)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def lines_of(text: str) -> list[str]:
    """`text` cut into lines where Python's tokenizer and pip end them (CRLF, LF, a lone CR),
    each with its end. Not str.splitlines, which also ends a line at a form feed, \\v,
    \\x1c-\\x1e, \\x85 and U+2028/9: characters that are part of a line to Python, pip,
    Docker and Jupyter (and a finding's line number counts none of them)."""
    return _LINE.findall(text)


class NextOf:
    """`source.find(needle, start)` for a scan whose starts never go back (one `finditer`):
    the answer is remembered until a start passes it, so the file is searched once however
    many starts ask. A pattern `\\([^)]*\\)` asked at each of 20,000 lines none of whose
    brackets closes searched to the end of the file from each (quadratic: 260 KB of `class
    CudaA(` lines cost a lint a minute past its per-file limit)."""

    def __init__(self, source: bytes | str, needle: bytes | str) -> None:
        self.source, self.needle = source, needle
        self.found = -2  # not looked for yet

    def after(self, start: int) -> int:
        """The first `needle` at or after `start`, or -1."""
        if self.found == -2 or 0 <= self.found < start:
            self.found = self.source.find(self.needle, start)  # type: ignore[arg-type]
        return self.found
