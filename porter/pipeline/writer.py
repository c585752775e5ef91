"""Writing results: atomic replacement in place, or a ported copy of a whole tree.

A file is either its original or its complete rewrite, never half of each: the new bytes go
to a temporary file in the same folder, are flushed to disk, and replace the original with
one rename. The original's permission bits, owner, group and extended attributes are kept; another hard
link to the file keeps the old bytes (the run warns). Just before the rename the file is
read again: if it no longer holds the bytes porter ported (someone saved it meanwhile),
nothing is written.

A temporary file carries the writing process's id in its name and a tag (an HMAC of its name
and folder under the user's porter key, the cache's): one whose process is gone (a run killed
with SIGKILL) is stale, and the next run that writes removes it. A file that only looks like
one (a name copied from porter's pattern, committed to a repository, or in an `--out-dir` a
user filled) carries no tag the key gives: it is never removed.

A copy into `--out-dir` never leaves that folder: a symbolic link found there is replaced,
never written through.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from porter.core.fileflags import refuse_a_flagged_replace
from porter.core.reading import Unreadable, open_regular, read_regular

TMP_SUFFIX = ".porter-tmp"
# `.NAME.PID.RANDOM.TAG.porter-tmp`: TAG proves porter made it (`_tag`)
_TMP_NAME = re.compile(r"^(\..+\.(\d+)\.[0-9a-f]{16})\.([0-9a-f]{32})" + re.escape(TMP_SUFFIX) + "$", re.S)
_SKIP_DIRS = {".git", ".hg", ".svn", ".porter_cache", "__pycache__", "node_modules", ".venv"}


class ChangedSinceRead(OSError):
    """The file on disk is no longer the one porter ported."""


def _prefix(name: str) -> str:
    """`name`, cut to 160 bytes: a temporary's name adds about 30 to it, and a file name may
    hold 255 (a 240-byte name could not be written: "File name too long")."""
    raw = name.encode("utf-8", "surrogateescape")
    return name if len(raw) <= 160 else raw[:160].decode("utf-8", "ignore")


def _key() -> bytes | None:
    from porter.pipeline.cache import user_key

    return user_key()[0]


def _tag(key: bytes, folder: Path, stem: str) -> str:
    """What proves a temporary named `stem` in `folder` is porter's: no one without the user's
    key can name a file so (`tempfile`'s random part and a pid can be copied, this cannot)."""
    where = os.fsencode(os.path.realpath(folder)) + b"\0" + stem.encode("utf-8", "surrogateescape")
    return hmac.new(key, b"porter temporary\0" + where, hashlib.sha256).hexdigest()[:32]


def temporary(folder: Path, name: str) -> tuple[int, str]:
    """A new temporary file beside `folder/name`, named for the process that made it and
    tagged as porter's (the next run that writes removes one whose process is gone); without
    a key (`porter config` says why) it has no tag and is never swept. None is made where a flag
    forbids the rename (`refuse_a_flagged_replace`)."""
    refuse_a_flagged_replace(os.path.join(folder, name))
    key = _key()
    if key is None:
        return tempfile.mkstemp(dir=folder, prefix=f".{_prefix(name)}.{os.getpid()}.", suffix=TMP_SUFFIX)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        stem = f".{_prefix(name)}.{os.getpid()}.{secrets.token_hex(8)}"
        path = os.path.join(folder, f"{stem}.{_tag(key, folder, stem)}{TMP_SUFFIX}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(0, f"no free temporary name in {folder}")


_tmp = temporary


@contextmanager
def removed_on_error(tmp: str) -> Iterator[None]:
    """A temporary file that must not outlive a failed write (or Ctrl-C) is removed, the error kept."""
    try:
        yield
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class OwnerWouldChange(OSError):
    """The replacement cannot keep the file's owner (porter runs as another user)."""


def _keep_owner(tmp: str, st: os.stat_result) -> None:
    """Give the new file the original's owner and group: a rename puts a new file in place,
    owned by whoever wrote it (root's `porter rewrite` must not hand a user's file to root).
    Where that is not allowed, the file is left as it was rather than change hands."""
    if not hasattr(os, "chown"):
        return
    new = os.stat(tmp)
    if (new.st_uid, new.st_gid) == (st.st_uid, st.st_gid):
        return
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
    except PermissionError:
        if new.st_uid != st.st_uid:
            raise OwnerWouldChange(
                0,
                f"would pass from its owner (uid {st.st_uid}) to uid {new.st_uid}, who runs porter: "
                "not rewritten (run porter as its owner)",
            ) from None
        try:
            os.chown(tmp, -1, st.st_gid)  # the owner is kept; keep the group if allowed
        except PermissionError:
            pass


def _keep_xattrs(path: Path, tmp: str) -> None:
    """Give the new file the original's extended attributes where the platform has them
    (POSIX ACLs live there, and a user's tags): a rename puts a new file in place, which has
    none. One that cannot be set (a `security.` one, for another user) is left."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(path)
    except OSError:
        return
    for attr in names:
        try:
            os.setxattr(tmp, attr, os.getxattr(path, attr))
        except OSError:
            pass


def atomic_write(path: Path, data: bytes, expect: bytes | None = None) -> None:
    """Replace `path` with `data`; with `expect`, only while the file still holds `expect`.
    The file keeps its permission bits, owner, group and extended attributes (ACLs among
    them). Other hard links to it keep the old bytes: `hard_links` says how many there are."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()  # write through the link, keep the link
    st = path.stat() if path.exists() else None
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
    fd, tmp = _tmp(path.parent, path.name)
    with removed_on_error(tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            _keep_owner(tmp, st)
        os.chmod(tmp, mode)
        if st is not None:
            _keep_xattrs(path, tmp)
        if expect is not None and _current(path) != expect:
            raise ChangedSinceRead(0, "changed on disk since porter read it (not overwritten; run porter again)")
        os.replace(tmp, path)


def hard_links(path: Path) -> int:
    """How many other names the file at `path` has (hard links), which a replacement by
    rename leaves with the old content."""
    try:
        return max(0, os.stat(path).st_nlink - 1)
    except OSError:
        return 0


def _current(path: Path) -> bytes | None:
    try:
        return read_regular(path)
    except OSError:  # (`Unreadable` is one): not the file porter ported
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or a number we cannot test): leave it
    return True


def remove_stale_temporaries(paths: Iterable[Path]) -> list[Path]:
    """Remove porter's temporary files whose writing process is gone; return them."""
    removed: list[Path] = []
    key = _key()
    if key is None:
        return removed  # nothing can be proved porter's
    for folder in sorted(_folders(paths)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for entry in names:
            if not _stale(key, folder, entry):
                continue
            try:
                os.unlink(folder / entry)
                removed.append(folder / entry)
            except OSError:
                pass
    return removed


def _folders(paths: Iterable[Path]) -> set[Path]:
    """The folders a run's temporaries can be in: every folder under a given folder (but the
    ones porter never enters), and a given file's own folder."""
    folders: set[Path] = set()
    for given in paths:
        given = Path(given)
        if given.is_dir():
            for dirpath, dirnames, _ in os.walk(given):
                dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
                folders.add(Path(dirpath))
        else:
            folders.add(given.parent)
    return folders


def _stale(key: bytes, folder: Path, entry: str) -> bool:
    """Whether `entry` is a temporary of porter's (its tag is the one the user's key gives its
    name in this folder) whose writer is gone, and a plain file."""
    match = _TMP_NAME.match(entry)
    if match is None or not hmac.compare_digest(match.group(3), _tag(key, folder, match.group(1))):
        return False
    try:
        if not stat.S_ISREG(os.lstat(folder / entry).st_mode):
            return False
    except OSError:
        return False
    return not _alive(int(match.group(2)))


# -- --out-dir ----------------------------------------------------------------------------


class OutsideOutDir(OSError):
    """A path in the output folder that is not a folder where one is needed."""


def _safe_folder(root: Path, folder: Path) -> None:
    """Make `folder` (inside `root`) a real folder: a symbolic link on the way is replaced."""
    here = root
    for part in folder.relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            here.unlink()  # the link lives in the output folder: replace it, never follow it
        if not here.exists():
            here.mkdir()
        elif not here.is_dir():
            raise OutsideOutDir(0, f"{here} is a file where the copy needs a folder")


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask  # what a plain open() would have made


def write_under(root: Path, dest: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` at `dest`, inside `root`, without following any link under `root`; the
    file gets `mode` (the original's permission bits) or the umask's default."""
    _safe_folder(root, dest.parent)
    fd, tmp = _tmp(dest.parent, dest.name)
    with removed_on_error(tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, _default_mode() if mode is None else mode)
        os.replace(tmp, dest)  # a rename replaces a link at `dest`, it does not follow it


def copy_under(root: Path, dest: Path, src: Path) -> None:
    """Copy the regular file `src` to `dest` inside `root` (as `write_under`), streaming it:
    `Unreadable` when `src` is not a regular file (a FIFO is never waited on)."""
    fh, st = open_regular(src, limit=None)
    with fh:
        _safe_folder(root, dest.parent)
        fd, tmp = _tmp(dest.parent, dest.name)
        with removed_on_error(tmp):
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(fh, out, 1024 * 1024)
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            os.replace(tmp, dest)


def mode_of(path: Path) -> int | None:
    """The permission bits of `path`, or None when it cannot be read."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def _link_under(root: Path, dest: Path, target: str) -> None:
    _safe_folder(root, dest.parent)
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.is_dir():
        shutil.rmtree(dest)
    os.symlink(target, dest)


def copy_tree(
    src: Path, dst: Path, ignore_names: tuple[str, ...] = (".git",), root: Path | None = None
) -> list[tuple[Path, Unreadable]]:
    """Copy every file of `src` to `dst` (symlinks as links), for `--out-dir`; nothing is
    written outside `root` (default `dst`) whatever links the output folder holds. What is
    not a regular file, a folder or a link (a FIFO, a device, a socket) is not copied:
    returns those, each with the reason."""
    root = Path(root or dst)
    src = Path(src)
    passed: list[tuple[Path, Unreadable]] = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(dirpath)
        out = dst / here.relative_to(src)
        dirnames[:] = [d for d in dirnames if d not in ignore_names]
        _safe_folder(root, out)
        for d in list(dirnames):
            if (here / d).is_symlink():
                _link_under(root, out / d, os.readlink(here / d))
        for name in filenames:
            if name in ignore_names:
                continue
            path = here / name
            if path.is_symlink():
                _link_under(root, out / name, os.readlink(path))
                continue
            try:
                copy_under(root, out / name, path)
            except Unreadable as exc:
                passed.append((path, exc))
    return passed


# stdout's or stderr's name in /proc, the folder resolved (`/dev/stdout` -> `/proc/self/fd/1`,
# `/proc/self` -> `/proc/PID`)
_DESCRIPTOR = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd/[12]")


def open_descriptor(path: Path | str) -> bool:
    """Whether `path` names this process's stdout or stderr (`/dev/stdout`, `/dev/fd/2`,
    `/proc/self/fd/1`, a link to one), whatever file it is: with stdout a file (`porter lint -o
    /dev/stdout > out.json`) the name was replaced as a link, so root's `/dev/stdout` became a
    regular file holding the findings and out.json stayed empty; another user got "Permission
    denied" (twenty-second read). Only those two: a link a repository ships to another
    process's descriptor, or to one porter holds for itself, is replaced as any link is. Each
    link of the chain is read with its folder resolved."""
    name = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links followed (ELOOP)
        name = os.path.join(os.path.realpath(os.path.dirname(name)), os.path.basename(name))
        match = _DESCRIPTOR.fullmatch(name)
        if match is not None:
            return match.group(1) == str(os.getpid())
        if not os.path.islink(name):
            return False
        name = os.path.join(os.path.dirname(name), os.readlink(name))
    return False


class NotAFolder(NotADirectoryError):
    """A name on the way to an output that is not a folder; its text is the one line that says
    which (callers print `exc.strerror or exc`, or `exc`)."""

    def __str__(self) -> str:
        return str(self.strerror)


def make_parent(path: Path) -> None:
    """The folder `path` goes in, made where missing. A name on the way that is not a folder
    (the file `f` of `-o f/b.json`) is `NotAFolder` naming it: `mkdir` said "File exists" (or
    "Not a directory" a level below), which named neither it nor why (twenty-fifth read)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise not_a_folder(path) from None


def not_a_folder(path: Path) -> NotAFolder:
    """The error for an output `path` whose folder is not one, naming the first name on the way
    that is not a folder (a file, a FIFO, a dangling link)."""
    return NotAFolder(errno.ENOTDIR, f"{first_not_folder(path.parent) or path.parent} is not a folder", str(path))


def first_not_folder(folder: Path) -> Path | None:
    """The first name on the way to `folder`, or `folder` itself, that is there and is not a
    folder (a file, a FIFO, a dangling link): nothing can be written under it."""
    names = (*reversed(folder.parents), folder)
    return next((a for a in names if os.path.lexists(a) and not os.path.isdir(a)), None)


def why_unwritable(folder: Path, exc: OSError) -> str:
    """Why an output folder (`--out-dir`, `--split`, `--scaffold`) could not be written, in a
    few words: "f is not a folder" where a name on the way is a file (the OS said "Not a
    directory" or "File exists", naming neither it nor why: twenty-sixth read), else the OS's
    reason."""
    blocked = first_not_folder(folder) if isinstance(exc, (NotADirectoryError, FileExistsError)) else None
    return f"{blocked} is not a folder" if blocked is not None else exc.strerror or str(exc)


def check_output(path: Path) -> None:
    """That `write_output` can write `path`, asked before the run that makes its text: no name
    on the way to its folder is a file, and a nameless file is tried in the nearest folder there
    (its own, else the one the write makes it in). `lint -o` and `--report` into a folder porter
    cannot write failed after the whole run (twenty-sixth read); ruff 0.17.6 opens its `-o` file
    before it checks, too. A missing folder is not made here (made, it stayed empty after a run
    that ended before its write: a `--fix` the guard refused; twenty-sixth read's leftover). A
    name the write writes as it is (a device, a FIFO, an open descriptor) is not tried, nor a
    folder (the write says so). Raises the OSError the write would; a quota or a full disk
    reached during the run is still said at the write (a probe reserves nothing), and so is a
    flag that forbids the rename (`refuse_a_flagged_replace`)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (not stat.S_ISREG(mode) or open_descriptor(path)):
        return
    if first_not_folder(path.parent) is not None:
        raise not_a_folder(path)
    refuse_a_flagged_replace(path)
    there = next(f for f in (path.parent, *path.parent.parents) if os.path.isdir(f))
    tempfile.TemporaryFile(dir=there).close()


def write_output(path: Path | str, text: str | bytes) -> None:
    """A file the user named for output (`lint -o`, `--write-baseline`, a trace or parity
    report, `trace record -o`), written whole: a temporary beside it renamed over the name. A
    symbolic link of that name (a repository can ship `lint.sarif` -> `~/.bashrc`, and a CI step
    then writes `-o lint.sarif`) is replaced, never written through; a name that is a device or
    a FIFO (`-o /dev/stdout`, a process substitution), or an open descriptor whatever it is
    (`open_descriptor`), is written to as it is. `text` is UTF-8
    text, or bytes written as they are (a trace)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        with open(path, "wb") as fh:
            fh.write(data)
        return
    if mode is not None and open_descriptor(path):
        with open(path, "ab") as fh:  # after what the stream holds, as a write to it would be
            fh.write(data)
        return
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "is a folder", str(path))
    make_parent(path)
    refuse_a_flagged_replace(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{_prefix(path.name)}.", suffix=".tmp")
    with removed_on_error(tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None and not os.path.islink(path):
            os.chmod(tmp, stat.S_IMODE(mode))  # an existing file keeps its permission bits
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # as a plain open() would have made it
        os.replace(tmp, path)
