"""The file flags (`chattr +a`, `+i`; BSD's `chflags uappnd`, `uchg`) that forbid what permissions
allow: a folder flagged append-only lets a file be made in it but never renamed nor removed, so
a temporary made there to be renamed over an entry stays for good (four a run in an append-only
cache folder, thirtieth read); an immutable file cannot be replaced. Read, never set."""

from __future__ import annotations

import array
import errno
import os
import stat
import sys

# Linux's `FS_IOC_GETFLAGS` (`_IOR('f', 1, long)`) and the two flags of <linux/fs.h> it reads
_FS_IOC_GETFLAGS = 0x80086601 if sys.maxsize > 2**32 else 0x80046601
_LINUX_FLAGS = ((0x20, "append-only (chattr +a)"), (0x10, "immutable (chattr +i)"))
_BSD_FLAGS = (
    (getattr(stat, "UF_APPEND", 0) | getattr(stat, "SF_APPEND", 0), "append-only (chflags uappnd)"),
    (getattr(stat, "UF_IMMUTABLE", 0) | getattr(stat, "SF_IMMUTABLE", 0), "immutable (chflags uchg)"),
)
_CLOSE = getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOSE
# the file as it is: never through a link (a link's own flags are not its target's), never waited on (a FIFO)
_ENTRY = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | _CLOSE


def _flag_bits(fd: int) -> tuple[int, tuple[tuple[int, str], ...]]:
    """The flags of the file open as `fd` and the table that reads them; 0 where the system or
    the file system keeps none (tmpfs before Linux 6.0, a network mount: ENOTTY, EOPNOTSUPP)."""
    if sys.platform.startswith("linux"):
        import fcntl

        buffer = array.array("i", [0, 0])  # (the kernel writes an int into a long's room)
        try:
            fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buffer, True)
        except OSError:
            return 0, _LINUX_FLAGS
        return buffer[0], _LINUX_FLAGS
    return getattr(os.fstat(fd), "st_flags", 0), _BSD_FLAGS


def write_forbidden(fd: int) -> str | None:
    """Why the file or folder open as `fd` refuses a change whatever its permissions (its flag, in
    words), or None where no flag forbids one."""
    flags, table = _flag_bits(fd)
    return next((words for bit, words in table if bit and flags & bit), None)


def flag_of(name: str, flags: int = _ENTRY, dir_fd: int | None = None) -> str | None:
    """The flag that forbids changing `name` (in the folder open as `dir_fd`, where given), in
    words, or None: none set, or `name` cannot be opened (the write says why). A file is opened
    as `_ENTRY` says: never through a link, never waited on."""
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        return write_forbidden(fd)
    finally:
        os.close(fd)


def refuse_a_flagged_replace(path: str | os.PathLike[str]) -> None:
    """OSError (EPERM, the flag in words) where a flag forbids replacing `path` by renaming a
    temporary over it: its folder append-only or immutable (the temporary made there could be
    neither renamed nor removed: one was left in the user's folder for good at every `rewrite`,
    `-o` or `--report`; thirtieth cache2 read), or the file itself (said as such, not as "Operation
    not permitted"). Asked before the temporary is made; a folder or file that cannot be opened
    says nothing here (the write says why)."""
    name = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(name))
    for where, flags, what in ((folder, _FOLDER, "the folder"), (name, _ENTRY, "the file")):
        if (flag := flag_of(where, flags)) is not None:
            raise OSError(errno.EPERM, f"{what} is {flag}", name)
