"""A persistent cache of results (like `.ruff_cache`): unchanged files are not parsed again.

An entry is keyed by sha256 of the file's bytes, its displayed path, the settings that apply
to it, and a salt made of porter's version, the bytes of every rule data file and of
porter's own source (an editable install changes without a version bump), Python's version
and those of the parsers porter reads files with (libcst, tree-sitter's grammars, PyYAML...:
installed or not). Any of those changing is a miss; nothing is ever invalidated by hand.

Safe under concurrent runs: every entry is written to a temporary file in its folder and
renamed into place, so a reader sees a whole entry or none. No entry is fsynced: losing one
costs a re-parse. Where the folder cannot be made, the cache turns itself off; where it
cannot be written (a read-only mount, a folder another user owns), what it holds is still
read. Either way the run says so once (`problem`).

An entry is authenticated, never trusted. Its hash would not do: anyone can compute the
sha256 of a forged entry, and a cache folder can come from elsewhere (a CI cache restored
from another branch, a `.porter_cache/` shipped in a repository and named with
`--cache-dir`). Every file porter writes into the cache (entries, the project index's
answers and what it keeps for the next run, the stat index) carries an HMAC-SHA256 under a
key only the user can read: 32 random bytes in `$XDG_CONFIG_HOME/porter/cache-key` (default
`~/.config/porter/`), made on first use with mode 0600, never inside a cache folder; or,
where runs share a cache across machines (CI), derived from the secret in
`PORTER_CACHE_KEY`. A file whose tag does not check out under that key is a miss. Without
a usable key (none can be made, or the file is not the user's own or others can read it)
the cache is off: a cold run, never an error.

Behind the tag an entry is checked as well: it records the sha256 of the bytes it ports and
of the bytes it would write, both recomputed on a hit, and a rewrite it carries must parse
as Python. Anything else (a flipped bit, wrong types, unknown rule codes, deep nesting, a
FIFO or a folder where the entry should be) is a miss, and the fresh result replaces it. The
cache lives in the user's cache folder; one inside a project is used only when asked for
(`--cache-dir`, `PORTER_CACHE_DIR`), since a repository could ship one.

The cache is bounded (`Cache.prune`): at most once an hour a run sweeps its cache folder and
removes what no run has read or written for `MAX_AGE_S` (30 days), then the oldest files until
the folder holds at most `MAX_BYTES`. A file read back whose mtime is more than a day old has it
set to now (no extra system call otherwise: the read's own `fstat` gives the mtime), so what
warm runs still use stays; the files of other porter versions and of edits long undone go.
"""

from __future__ import annotations

import ast
import base64
import errno
import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import secrets
import tempfile
import time
import warnings
import weakref
from contextlib import suppress
from dataclasses import astuple
from functools import lru_cache
from pathlib import Path
from typing import Any, overload

from porter.core import programs
from porter.core.fileflags import flag_of, write_forbidden
from porter.core.kinds import PYTHON, enabled_kinds, kind_of
from porter.core.reading import open_regular
from porter.core.findings import Applicability, FileResult, FileStatus, Finding, Position, Severity
from porter.config.ruledata import all_rules
from porter.config.settings import Facts, Settings
from porter.pipeline.discover import git_named

CACHE_DIR_NAME = ".porter_cache"
_FORMAT = 3  # 3: every file is tagged with the user's key (HMAC-SHA256)
MAX_ENTRY_BYTES = 64 * 2**20  # an entry holds at most a 2 MiB file twice, base64, and its findings
# the bounds of a cache folder (`Cache.prune`): the cache was never pruned, and each porter
# version (each edit of porter's own code, in an editable install) and each undone edit left
# its entries for good (24 MB per version for the corpus; seventeenth read)
MAX_AGE_S = 30 * 86400  # a file no run has read or written for this long is removed
MAX_BYTES = 1024 * 2**20  # past this, the oldest files go too
PRUNE_EVERY_S = 3600  # the sweep runs at most this often per cache folder
REFRESH_AFTER_S = 86400  # a file read back older than this gets its mtime set to now
_SWEPT = "last-prune"  # in the entry folder: its mtime is the last sweep's time
_ENTRIES = f"v{_FORMAT}"  # the entry folder, in the cache folder
_ROOT_MARKERS = (".git", ".hg", "pyproject.toml", CACHE_DIR_NAME)


# the packages whose parsers decide a file's result, installed or not: libcst's, and those of the
# files around the Python (requirements, YAML, TOML on 3.10, shell and Makefiles: the `shell`
# extra, without which such a file is "not read"; cached, that note stayed after
# `pip install 'porter[shell]'`, and lint passed without reading the file: seventeenth read)
_PARSERS = ("libcst", "packaging", "pyyaml", "tomli", "tree-sitter", "tree-sitter-bash", "tree-sitter-make")


def _sources() -> tuple[Path, Path]:
    """(the rule data's folder, porter's package): the files `salt` reads are under these."""
    from porter.config.ruledata import rules_dir

    return rules_dir(), Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def salt() -> str:
    """What every key shares: porter's version, code and rule data, Python's, and the versions
    of the parsers porter reads files with (`_PARSERS`)."""
    from porter import __version__

    h = hashlib.sha256(f"{_FORMAT}|{__version__}|{sys.version_info[:2]}|".encode())
    from importlib.metadata import version

    for dist in _PARSERS:
        try:
            h.update(f"{dist}={version(dist)}|".encode())
        except Exception:  # noqa: BLE001 - not installed (or no metadata): that is part of the answer too
            h.update(f"{dist}=-|".encode())
    rules, package = _sources()  # all of porter's code
    # all of the rule data, its folders too: rules/cuda_only/packages.json (the CUDA-only
    # packages) and rules/api/*.json (each torch's API) decide findings as the tables do
    for folder, pattern in ((rules, "**/*.toml"), (rules, "**/*.json"), (package, "**/*.py")):
        for path in sorted(folder.glob(pattern)):
            h.update(path.relative_to(folder).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=8)
def _run_salt(base: str, kinds: frozenset[str]) -> str:
    """`Cache.run_salt`, worked out once per salt and kinds (it is asked for each file's key)."""
    return hashlib.sha256(f"{base}|{','.join(sorted(kinds))}".encode()).hexdigest()


RACY_NS = 2_000_000_000  # a file changed this recently before its stat is taken may change again unseen


def salt_inputs() -> tuple[list[list[object]], bool]:
    """The `stat` of everything `salt` is worked out from (each file under `_sources` whose
    name `salt` reads, every folder on `sys.path`: installing, upgrading or removing a parser
    adds or removes its metadata folder there), and whether none of it changed within
    `RACY_NS` of now (as the stat index trusts a file's record: a write that keeps the size and
    restores the mtime still changes the ctime, which no user can set back)."""
    now = time.time_ns()
    rows: list[list[object]] = [[_FORMAT, list(sys.version_info), sys.executable]]
    newest = 0
    for top, suffixes in zip(_sources(), ((".toml", ".json"), (".py",))):
        for folder, dirs, files in os.walk(top, followlinks=True):  # (`glob`'s `**` follows them too)
            dirs.sort()
            for name in sorted(files):
                if name.endswith(suffixes):
                    path = os.path.join(folder, name)
                    st = os.stat(path)
                    newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
                    rows.append([path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
        except OSError:
            rows.append([entry])
            continue
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        rows.append([entry, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns])
    return rows, newest < now - RACY_NS


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


# -- the key ----------------------------------------------------------------------------------

KEY_ENV = "PORTER_CACHE_KEY"
_KEY_BYTES = 32


def xdg_home(variable: str, default: str) -> Path:
    """`$XDG_CONFIG_HOME` / `$XDG_CACHE_HOME`, or `~/<default>` where it is unset, empty or
    relative: the XDG Base Directory spec has a relative value ignored, and porter would
    otherwise put the user's key and cache in whatever folder it runs in (a project, where
    `git add -A` commits the key and the project's author could have shipped both)."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path(home()) / default


NO_HOME = "no home folder to keep it in (HOME is not an absolute path, and the account names none)"


def home() -> str:
    """The user's home folder: `$HOME` where it is an absolute path, else the account's (the
    password database's), else "" (none: the key and the default cache are then off, `NO_HOME`).
    A relative HOME (`HOME=.`, as some container images and CI steps set) put the user's key
    and cache in the project, as a relative XDG folder once did, where a project's author could
    ship both and the cache's entries would be trusted (twentieth read); an empty one put them
    in `/`."""
    value = os.environ.get("HOME", "")
    if os.path.isabs(value):
        return value
    try:
        import pwd

        value = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return ""
    return value if os.path.isabs(value) else ""


def key_path() -> Path:
    """Where the user's cache key lives: beside porter's config, never in a cache folder."""
    return xdg_home("XDG_CONFIG_HOME", ".config") / "porter" / "cache-key"


class KeyProblem(Exception):
    """Why there is no key to authenticate the cache with (the cache is then off)."""


def _read_key(path: Path) -> bytes:
    """The key in `path`: a regular file of the user's own that no one else can read."""
    fd = os.open(
        path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise KeyProblem(f"{path} is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise KeyProblem(f"{path} belongs to another user")
        if info.st_mode & 0o077:
            raise KeyProblem(f"{path} can be read or written by others (chmod 600 {path})")
        text = fh.read(4 * _KEY_BYTES).decode("ascii", "replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise KeyProblem(f"{path} does not hold a porter cache key (delete it: a new one is made)")
    return key


def foreign_to_root(path: Path) -> str | None:
    """Run as root, why porter does not make `path`: the nearest part of it that exists belongs
    to another user. `sudo porter` with the user's HOME left a root-owned `~/.config/porter`
    (and cache) that the user's own runs could then not write: every later run was cold."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    for folder in (path, *path.parents):
        try:
            uid = os.lstat(folder).st_uid
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if uid == 0:
            return None
        return (
            f"porter run as root does not make {path} in {folder}, which belongs to user {uid} "
            f"(it would stay root's): run it as that user, or with `sudo -H`"
        )
    return None


def _make_key(path: Path) -> None:
    """Create the key file whole, with mode 0600 from the start; a concurrent run that made
    it first wins (its key is kept). Not as root in another user's folder (`foreign_to_root`)."""
    why = foreign_to_root(path)
    if why is not None:
        raise KeyProblem(why)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_hex(_KEY_BYTES).encode() + b"\n"
    if not _link_a_nameless_key(path, key):
        _link_a_named_key(path, key)


def _link_a_nameless_key(path: Path, key: bytes) -> bool:
    """Where the system can (Linux's `O_TMPFILE`), write the key into a file with no name and
    link it in whole: no temporary is left even where one could not be removed (a config folder
    flagged append-only, `chattr +a`, kept a `.cache-key.XXXX.tmp` for good; thirtieth read's
    leftover) or where the run is killed. False where it cannot, with nothing made."""
    flags = getattr(os, "O_TMPFILE", 0)
    if not flags or not os.path.isdir("/proc/self/fd"):
        return False
    close = getattr(os, "O_CLOEXEC", 0)
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | close)
    try:
        fd = os.open(".", flags | os.O_WRONLY | close, 0o600, dir_fd=folder)
    except OSError:
        os.close(folder)
        return False  # (a file system without it: EOPNOTSUPP, EISDIR on older kernels)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
            # linkat(AT_SYMLINK_FOLLOW) of the file's /proc name, open(2)'s way (a `dst_dir_fd`
            # makes Python call linkat: plain link(2) linked the /proc link itself, EXDEV)
            os.link(f"/proc/self/fd/{fh.fileno()}", path.name, dst_dir_fd=folder)
    except FileExistsError:
        pass  # (a concurrent run made it first: its key is kept)
    except OSError:
        return False  # (the /proc name not linkable here: the named way)
    finally:
        os.close(folder)
    return True


def _link_a_named_key(path: Path, key: bytes) -> None:
    """The key through a named temporary, linked in (never replaces a key that exists, never
    follows a link), then removed."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache-key.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


@lru_cache(maxsize=8)
def _key_for(secret: str | None, path: str) -> tuple[bytes | None, str | None]:
    if secret:
        return hashlib.sha256(b"porter cache key\0" + secret.encode("utf-8", "surrogateescape")).digest(), None
    where = Path(path)
    if not where.is_absolute():
        return None, f"the key: {NO_HOME}"
    try:
        try:
            return _read_key(where), None
        except FileNotFoundError:
            _make_key(where)
            return _read_key(where), None
    except KeyProblem as exc:
        return None, str(exc)
    except OSError as exc:
        # (os.path.lexists: Path.exists raises where the folder cannot be searched, and a
        # root-owned 0700 `~/.config/porter`, as `sudo porter` left it, ended each of the
        # user's runs in a PermissionError traceback; eighteenth read)
        why = f"cannot {'read' if os.path.lexists(where) else 'create'} {where}: {exc.strerror or exc}"
        try:
            owner = where.parent.lstat().st_uid
        except OSError:
            return None, why
        if hasattr(os, "geteuid") and owner != os.geteuid():  # (a folder `sudo porter` made, say)
            why += f" ({where.parent} belongs to user {owner}: remove it, and a new key is made)"
        return None, why


def user_key() -> tuple[bytes | None, str | None]:
    """(the key, None), or (None, why there is none): `PORTER_CACHE_KEY`'s secret, else the
    key file (made on first use)."""
    return _key_for(os.environ.get(KEY_ENV), str(key_path()))


def _tag(key: bytes, label: str, body: bytes) -> bytes:
    return hmac.new(key, label.encode("utf-8", "surrogateescape") + b"\0" + body, hashlib.sha256).hexdigest().encode()


def seal(key: bytes, label: str, body: bytes) -> bytes:
    """`body` behind its tag, for the file named by `label`: a tag line, then the body."""
    return _tag(key, label, body) + b"\n" + body


def unseal(key: bytes, label: str, raw: bytes) -> bytes:
    """The body of a sealed file, or ValueError when its tag is not the one `key` gives."""
    tag, sep, body = raw.partition(b"\n")
    if not sep or not hmac.compare_digest(tag, _tag(key, label, body)):
        raise ValueError("not authenticated by this user's cache key")
    return body


def _failed_at(cache: Cache, exc: OSError) -> Path:
    """The path whose write failed as the cache was opened, for the note to name: a mark
    (`_Unmarked`), the cache folder itself where it could not be made (a read-only or full disk,
    a file in its way), else `v3/`. The note named `c/v3` where making `c` failed, a folder no
    write had tried (twenty-seventh read)."""
    if isinstance(exc, _Unmarked):
        return cache.directory / exc.mark
    return cache.entries if os.path.isdir(cache.directory) else cache.directory


def _unwritable(entries: Path, exc: OSError) -> str:
    """Why the cache folder `entries` cannot be used, naming the owner of the nearest folder
    that exists where it is another user."""
    why = f"cannot write {entries}: {exc.strerror or exc}: new results are not kept"
    for folder in (entries, *entries.parents):
        try:
            owner = folder.lstat().st_uid
        except OSError:
            continue
        if hasattr(os, "geteuid") and owner != os.geteuid():
            why += f" ({folder} belongs to user {owner}; once it is removed, a new one is made)"
        return why
    return why


def _denied(folder: Path) -> OSError:
    """Why `folder` cannot be written, as the write would fail: a read-only file system, or
    its permissions."""
    try:
        read_only = bool(os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):
        read_only = False
    code = errno.EROFS if read_only else errno.EACCES
    return OSError(code, os.strerror(code))


# why this run's new results were not kept, as the run's closing note says it
# (`cli.common.note_if_cache_full`): a write of the cache that failed for want of space
NOT_KEPT: list[str] = []
_FULL = "the cache is full"
_UNREAD = "the cache holds entries this user cannot read"
_REFUSED = "the cache holds folders this user cannot write"
_FLAGGED = "the cache holds entries that cannot be replaced"


def named_dir(cache_dir: Path | None) -> Path | None:
    """The cache folder a run was given: `--cache-dir`, else `PORTER_CACHE_DIR`; None for the
    user's default (`Cache.for_paths`)."""
    if cache_dir is not None:
        return cache_dir
    env = os.environ.get("PORTER_CACHE_DIR")
    return Path(env) if env else None


def _whose(owners: set[int | None]) -> str:
    """Whose the refusing folders are, in words: "of user 0" read as another user's where root's
    own folders refused root (an append-only flag; thirtieth read's leftover)."""
    me = os.geteuid() if hasattr(os, "geteuid") else None
    others = sorted(o for o in owners if o is not None and o != me)
    words = [f"of user{'s' * (len(others) > 1)} {', '.join(map(str, others))}"] if others else []
    if me in owners:
        words.append("this user's own")
    return "; ".join(words) or "whose owner cannot be read"


class Cache:
    def __init__(self, directory: Path, default: bool = False) -> None:
        """`default`: the folder is the user's default (`for_paths`), not one named: run as
        root, it is not made in another user's folder (`foreign_to_root`)."""
        self.directory = Path(directory)
        self.entries = self.directory / _ENTRIES  # (named in notes; opened once: `_fd`)
        self._fd: int | None = None
        self.hits = self.misses = 0
        self._refused: dict[Path, int | None] = {}  # the folders that refused a write: their owners
        self._salt: str | None = None
        self.mac_key, why = user_key()
        # what the run's note says of the cache (`cli.common.note_if_cache_off`), if anything
        self.problem = None if why is None else f"the cache is off: {why}; or set {KEY_ENV}"
        self.enabled = self.mac_key is not None
        if self.mac_key is None:
            return  # nothing can be authenticated: no entry is read or written
        if default and not self.directory.is_absolute():
            self.enabled, self.problem = False, f"the cache is off: {NO_HOME}"
            return
        if default and (why := foreign_to_root(self.entries)) is not None:
            self.enabled, self.problem = False, f"the cache is off: {why}"
            return
        try:
            if self.entries.is_symlink():
                raise OSError("the cache's entry folder is a link: not followed")
            self.directory.mkdir(parents=True, exist_ok=True)
            self._open_entries()
        except OSError as exc:
            self.enabled, self.problem = False, f"the cache is off: {_unwritable(_failed_at(self, exc), exc)}"

    def _open_entries(self) -> None:
        """Open the cache folder once, followed as named (a link the user made, to another disk
        say, is the user's choice, as ruff follows a `.ruff_cache` and git a `.git` that are links), and
        `v3/` in it never through a link; keep `v3/`'s descriptor (`_fd`) for every later read,
        write and sweep. Reopened by path at each of them, a cache folder swapped for a link
        during the run (by another user who can write the folder above it) took the run's
        entries, and its sweep, to wherever `v3/` then resolved (twenty-fifth read). A new `v3/`
        is made only once the marks are there: made first, on a full disk (where a folder can
        still be made and a file's bytes cannot be written), it stood without them, and `cli.common.check_cache_dir`
        refused the folder from the next run on, whatever space was freed (twenty-sixth read)."""
        root = os.open(self.directory, _DIR & ~getattr(os, "O_NOFOLLOW", 0))
        try:
            try:
                self._fd = os.open(_ENTRIES, _DIR, dir_fd=root)
            except FileNotFoundError:
                _mark_folder(root)
                try:
                    os.mkdir(_ENTRIES, dir_fd=root)
                except FileExistsError:
                    pass
                self._fd = os.open(_ENTRIES, _DIR, dir_fd=root)
            weakref.finalize(self, os.close, self._fd)
            if not os.access(".", os.W_OK | os.X_OK, dir_fd=self._fd):
                # an entry folder that exists but cannot be written (as an older `sudo porter`
                # left the default one, a read-only mount): what it holds is read, nothing new
                # is kept, and the run says so (every run was cold for what changed, unsaid)
                self.problem = f"the cache is read only: {_unwritable(self.entries, _denied(self.entries))}"
                return
            _mark_folder(root)
        finally:
            os.close(root)

    def write(self, name: str, data: bytes, shard: str | None = None) -> None:
        """`data` as `name` (in `shard/`) in the entry folder opened at the start (`_write_in`)."""
        if self._fd is None:
            raise OSError(errno.EBADF, "the cache is off")
        _write_in(self._fd, name, data, shard)

    @classmethod
    def for_paths(cls, paths: list[Path], cache_dir: Path | None = None) -> Cache:
        """`cache_dir` if given; else a folder per project under the user's cache dir, so
        `--diff` writes nothing into the tree. A `.porter_cache/` found in the project is
        not used unless named: whoever wrote the repository could have written it."""
        if cache_dir is not None:
            return cls(Path(cache_dir))
        root = project_root(paths)
        base = xdg_home("XDG_CACHE_HOME", ".cache") / "porter"
        # (the path's own bytes: a folder name that is not UTF-8 ended every run in an
        # internal error, UnicodeEncodeError, before any file; seventeenth read)
        return cls(base / hashlib.sha256(os.fsencode(root)).hexdigest()[:16], default=True)

    def salt(self) -> str:
        """`salt()`, from this folder's memo of it while nothing it is worked out from changed
        (`salt_inputs`): working it out reads and hashes porter's code and rule data (3.8 MB)
        and asks for 7 packages' versions, 15 ms of each warm lint. The memo is sealed under
        the user's key like every entry, and named by the install (several porters may share a
        cache folder)."""
        if self._salt is None:
            self._salt = self._memo_salt() if self.enabled and self.mac_key is not None else salt()
        return self._salt

    def run_salt(self) -> str:
        """What every key, project index and stat index of this run shares: `salt`, and the kinds
        of file the run reads (`PORTER_FILE_KINDS`): a requirements.txt named in a run that reads
        Python alone is not read, and that result answered the next run, which reads it."""
        return _run_salt(self.salt(), enabled_kinds())

    def _memo_salt(self) -> str:
        assert self.mac_key is not None
        inputs, settled = salt_inputs()
        install = hashlib.sha256(os.fsencode(f"{_sources()}\0{sys.executable}")).hexdigest()
        path = self.entries / f"salt-{install}.memo"
        label = _label("salt", path)
        try:
            data = json.loads(unseal(self.mac_key, label, self.read_back(path.name)))
            if type(data) is dict and data.get("inputs") == inputs and _SALT.fullmatch(str(data.get("salt"))):
                return str(data["salt"])
        except (OSError, ValueError, RecursionError):
            pass
        value = salt()
        if settled:  # (files changed within the racy window are stat'ed and hashed again next run)
            try:
                body = json.dumps({"inputs": inputs, "salt": value}).encode()
                self.write(path.name, seal(self.mac_key, label, body))
            except OSError as exc:
                self.not_kept(exc)
        return value

    def key(self, source: bytes, name: str, settings: Settings) -> str:
        h = hashlib.sha256(self.run_salt().encode())
        h.update(repr(astuple(settings)).encode())
        h.update(b"\0" + name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(source)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        if len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError("not a cache key")  # a name, never a path
        return self.entries / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, name: str, source: bytes) -> FileResult | None:
        if not self.enabled or self.mac_key is None:
            return None
        try:
            path = self._path(key)
            body = unseal(self.mac_key, f"entry:{key}", self.read_back(path.name, shard=path.parent.name))
            data = json.loads(body)
            if not isinstance(data, dict) or data.get("key") != key:
                raise ValueError("entry for another key")
            result = _from_dict(data, name, source)
        except Exception:  # noqa: BLE001 - whatever is wrong with an entry, it is a miss
            self.misses += 1
            return None  # missing, partial, corrupt or forged: parse the file again
        self.hits += 1
        return result

    def put(self, key: str, result: FileResult) -> None:
        if not self.enabled or self.mac_key is None or result.transient:
            return
        path = self._path(key)
        try:
            body = json.dumps(_to_dict(key, result), separators=(",", ":")).encode()
            self.write(path.name, seal(self.mac_key, f"entry:{key}", body), shard=path.parent.name)
        except OSError as exc:
            self.not_kept(exc, path.parent.name)  # a full disk, a read-only tree: a re-parse next time, nothing else

    def not_kept(self, exc: OSError, shard: str | None = None) -> None:
        """Note, once a run, a write of the cache that failed for want of space (ENOSPC,
        EDQUOT): a full disk kept nothing new and every run was cold for what changed, unsaid.
        Likewise one refused in a folder of the cache (`shard`) that another user made: a team
        sharing one cache folder, each under a umask of 022, cannot write in each other's shard
        folders (0755), unsaid (twenty-seventh read's leftover). (A folder that cannot be
        written at all is said before the run: `problem`.)"""
        if isinstance(exc, _FlaggedEntry):
            self._flagged(exc, shard)
        elif exc.errno in (errno.ENOSPC, errno.EDQUOT) and not any(w.startswith(_FULL) for w in NOT_KEPT):
            NOT_KEPT.append(f"{_FULL}: cannot write {self.entries}: {exc.strerror}: new results are not kept")
        elif exc.errno in (errno.EACCES, errno.EPERM) and self.problem is None:
            self._refused_in(self.entries / shard if shard else self.entries, exc)

    def _flagged(self, exc: OSError, shard: str | None) -> None:
        """Note, once a run, an entry a flag forbids replacing (`_FlaggedEntry`), named as a file."""
        if not any(w.startswith(_FLAGGED) for w in NOT_KEPT):
            where = (self.entries / shard if shard else self.entries) / str(exc.filename)
            NOT_KEPT.append(f"{_FLAGGED}: {where} is {exc.strerror}: a result that changed is not kept in its place")

    def _refused_in(self, where: Path, exc: OSError) -> None:
        """The one note for the folders of the cache that refused a write: the first named, and
        how many others and whose they are. It named one of 53 folders of 5 owners, and removing
        that one showed the next on the next run (twenty-eighth read's leftover)."""
        if where in self._refused:
            return
        with suppress(OSError):
            self._refused[where] = where.lstat().st_uid
        self._refused.setdefault(where, None)
        first, *others = self._refused
        line = f"{_REFUSED}: {_unwritable(first, exc).replace('new results', 'its new results')}"
        if others:
            line += f"; and {len(others)} other folders of the cache ({_whose(set(self._refused.values()))})"
        at = next((i for i, w in enumerate(NOT_KEPT) if w.startswith(_REFUSED)), len(NOT_KEPT))
        NOT_KEPT[at : at + 1] = [line]

    def _unreadable(self, name: Path, folder: int) -> None:
        """Note, once a run, an entry this user cannot read: porter writes entries for their
        writer only (0600), so a team sharing one cache folder (and key) ran cold for each
        other's files, unsaid (twenty-sixth read's leftover). Its owner is named where it is
        another user."""
        if any(w.startswith(_UNREAD) for w in NOT_KEPT):
            return
        why = f"{_UNREAD} ({self.entries / name}: permission denied"
        with suppress(OSError):
            owner = os.stat(name.name, dir_fd=folder, follow_symlinks=False).st_uid
            if hasattr(os, "geteuid") and owner != os.geteuid():
                why += f"; written by user {owner}"
        NOT_KEPT.append(f"{why}): its files are parsed again; porter's entries are for their writer only (0600)")

    def get_index(self, digest: str) -> dict[str, Facts] | None:
        """The project index's answers for a set of files (by their digest), if cached.

        Read like any entry (a regular file of bounded size, never a FIFO); anything that is
        not exactly the shape `put_index` writes is a miss, and the next run replaces it."""
        if not self.enabled or self.mac_key is None:
            return None
        try:
            path = self._index_path(digest)
            data = json.loads(unseal(self.mac_key, _label("index", path), self.read_back(path.name)))
            if not isinstance(data, dict):
                return None
            facts: dict[str, Facts] = {}
            for name, rows in data.items():
                if not isinstance(rows, list):
                    return None
                facts[name] = tuple(_index_fact(row) for row in rows)
            return facts
        except (OSError, ValueError, TypeError, RecursionError):
            return None

    def put_index(self, digest: str, facts: dict[str, Facts]) -> None:
        path = self._index_path(digest)
        self._put_sealed(path, _label("index", path), facts)

    def get_state(self, key: str) -> object:
        """What the project index kept of its last run under `key` (`index.answers`), as JSON;
        None when there is none (the index checks its shape)."""
        if not self.enabled or self.mac_key is None:
            return None
        try:
            path = self._state_path(key)
            return json.loads(unseal(self.mac_key, _label("state", path), self.read_back(path.name)))
        except (OSError, ValueError, RecursionError):
            return None

    def put_state(self, key: str, state: object) -> None:
        path = self._state_path(key)
        self._put_sealed(path, _label("state", path), state)

    def _put_sealed(self, path: Path, label: str, value: object) -> None:
        """`value` as compact JSON, sealed under `label` (a cache that cannot be written is no error)."""
        if not self.enabled or self.mac_key is None:
            return
        try:
            body = json.dumps(value, separators=(",", ":")).encode()
            self.write(path.name, seal(self.mac_key, label, body))
        except OSError as exc:
            self.not_kept(exc)

    def read_back(self, name: str, shard: str | None = None) -> bytes:
        """The bytes of the cache file `name` (in `shard/`) in the entry folder opened at the
        start (`_read_entry`); one older than `REFRESH_AFTER_S` has its mtime set to now, so
        that `prune` keeps what runs still read. The shard folder is opened without following a
        link, as the write opens it (`_write_in`): read as `ab/NAME`, a shard that is a link
        was followed, and the refresh could touch a file in the link's folder (twenty-sixth
        read); a link there is a miss (ELOOP, ENOTDIR)."""
        if self._fd is None:
            raise OSError(errno.EBADF, "the cache is off")
        folder = self._fd if shard is None else os.open(shard, _DIR, dir_fd=self._fd)
        try:
            try:
                data, mtime_ns = _read_entry(name, folder)
            except PermissionError:
                self._unreadable(Path(shard or ".") / name, folder)
                raise
            if time.time_ns() - mtime_ns > REFRESH_AFTER_S * 10**9:
                with suppress(OSError):  # (a link swapped in since the read is not followed)
                    os.utime(name, dir_fd=folder, follow_symlinks=False)
        finally:
            if folder != self._fd:
                os.close(folder)
        return data

    def prune(self, now: float | None = None) -> int:
        """Sweep the entry folder, at most once every `PRUNE_EVERY_S`: remove each file no run
        has read or written for `MAX_AGE_S`, then the oldest until what is left is at most
        `MAX_BYTES`; the number removed. A warm run pays one `stat` (of the sweep's marker).
        Nothing is followed through a link; a file whose mtime is in the future counts as
        written now; a temporary of a run still writing (younger than the sweep's period) stays."""
        if not self.enabled or self._fd is None:
            return 0
        now = time.time() if now is None else now
        try:
            last = os.stat(_SWEPT, dir_fd=self._fd, follow_symlinks=False).st_mtime
            if now - PRUNE_EVERY_S < last <= now + 60:
                return 0
        except OSError:
            pass
        try:
            self.write(_SWEPT, b"")
            os.utime(_SWEPT, (now, now), dir_fd=self._fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                return 0  # a cache that cannot be written is not swept either; a full one is
        return self._sweep(now)

    def _sweep(self, now: float) -> int:
        """`prune`'s sweep of the entry folder: the number of files removed. The entry folder is
        the one opened at the start (`_fd`), its shard folders are opened without following a
        link and each file is removed relative to its folder's descriptor, so a folder swapped
        for a link since the run began (another user's doing, in a cache folder others may
        write) leads the sweep nowhere; and only names porter writes are removed (`_OWN`)."""
        try:
            top = os.open(".", _DIR, dir_fd=self._fd)  # (its own descriptor: `fds` are closed)
        except OSError:
            return 0
        fds = [top]
        try:
            files = _cache_files(top, now, fds)
            files.sort(key=lambda f: f[0])
            removed = 0
            total = sum(size for _, size, _, _ in files)
            for mtime, size, fd, name in files:
                if now - mtime <= MAX_AGE_S and total <= MAX_BYTES:
                    break
                if name.endswith(".tmp") and now - mtime < PRUNE_EVERY_S:
                    continue  # a run still writing it
                try:
                    os.unlink(name, dir_fd=fd)
                except OSError:
                    continue
                removed += 1
                total -= size
            return removed
        finally:
            for fd in fds:
                os.close(fd)

    def _state_path(self, key: str) -> Path:
        return self.entries / f"index-state-{hashlib.sha256((self.run_salt() + key).encode()).hexdigest()}.json"

    def _index_path(self, digest: str) -> Path:
        return self.entries / f"index-{hashlib.sha256((self.run_salt() + digest).encode()).hexdigest()}.json"


def _label(kind: str, path: Path) -> str:
    """What a sealed file's tag covers besides its body: its kind and its name, which hashes
    porter's salt with the key it is filed under. Tagged under the key alone, the project
    index's answers and its kept state of another porter (the same user's, moved to this
    porter's name by anyone who can write the cache) were read as this porter's (sixteenth read)."""
    return f"{kind}:{path.name}"


def _index_fact(row: object) -> tuple[str | None, str, str, tuple[str, ...]]:
    """One (scope, expr, kind, chain) answer of the project index, or TypeError. (Spelled out,
    with `type(...) is` for the types JSON gives: a warm run checks every answer of the index.)"""
    if not (type(row) is list and len(row) == 4):
        raise TypeError("not an index fact")
    scope, expr, kind, chain = row
    if not (
        (scope is None or type(scope) is str)
        and type(expr) is str
        and type(kind) is str
        and type(chain) is list
        and all(type(v) is str for v in chain)
    ):
        raise TypeError("not an index fact")
    return (scope, expr, kind, tuple(chain))


_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


# what porter writes beside the entry folder: git passes the cache over (ruff's cache writes the
# same `.gitignore`), and backup tools that read CACHEDIR.TAG (tar --exclude-caches, borg) do too;
# each says it is porter's (`cli.common.check_cache_dir` takes the `v<N>` folders beside either
# for the cache's own)
MARKER = b"# made by porter\n*\n"
TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# porter's cache\n"
_MARKS = ((".gitignore", MARKER), ("CACHEDIR.TAG", TAG))


def _mark_folder(folder: int) -> None:
    """`_MARKS` in the cache folder open as `folder`, each where nothing of that name is there:
    each name is looked at (`lstat`) and written relative to it (`_write_at`). Looked at and
    written by path, a folder swapped for a link in between took the files into the link's
    folder, and a link named `.gitignore` to a file not there was replaced (twenty-fifth read).
    A name there in any form (a link, a FIFO, a folder, the user's own file) is left as it is;
    none is opened, so none needs O_NONBLOCK. They are written for everyone to read (their text is
    porter's, the same for all): written 0600, they made a teammate's run on one shared cache
    folder stop with "holds files that are not porter's cache" (`cli.common.check_cache_dir`
    reads them; twenty-eighth read, two users for real)."""
    for name, data in _MARKS:
        try:
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            try:
                _write_at(folder, name, data, 0o644)
            except OSError as exc:
                raise _Unmarked(exc.errno, exc.strerror, name) from exc


class _Unmarked(OSError):
    """A mark `_mark_folder` could not write, for the note to name: it named `.../v3`, which no
    write had tried (twenty-sixth read)."""

    def __init__(self, code: int | None, why: str | None, mark: str) -> None:
        super().__init__(code, why)
        self.mark = mark


def _write_in(entries: int, name: str, data: bytes, shard: str | None = None) -> None:
    """`data` as `[shard/]name` in the entry folder open as `entries`: the shard folder opened
    without following a link, the file made and renamed relative to it. Checked by name and
    then written by path, a folder swapped for a link in between (another user's doing, in a
    cache folder others may write) took the file into the link's folder (twenty-fourth read);
    now it goes into the folder opened (moved or not), and a link as the shard is refused
    (ELOOP, ENOTDIR). The entry folder itself is opened once a run (`Cache._open_entries`):
    opened by path at each write, a cache folder swapped for a link took the writes after the
    swap to wherever `v3/` then resolved (twenty-fifth read)."""
    if shard is None:
        _write_at(entries, name, data)
        return
    try:
        os.mkdir(shard, dir_fd=entries)
    except FileExistsError:
        pass
    folder = os.open(shard, _DIR, dir_fd=entries)  # a link here: ELOOP or ENOTDIR
    try:
        _write_at(folder, name, data)
    finally:
        os.close(folder)


def seen_by_git(directory: Path) -> str | None:
    """What the run's note says where git lists the cache's files: the cache keeps a user's
    `.gitignore` in its folder (`_mark_folder`), and one that does not leave them out (`*.pyc`)
    let `git status` show every entry, unsaid (twenty-fifth read). Asked of git itself (`git
    check-ignore`: it reads the `.gitignore` files above, `info/exclude`, `core.excludesFile`),
    only where that `.gitignore` is not porter's, once a run; None where git hides them, no
    repository holds the folder, or git cannot say. A `.gitignore` that is a FIFO, a socket or
    a device is not handed to git (git would block opening it): that is said instead (it was
    not: twenty-sixth read). The repository asked is the one the walk reads for the folder
    (`discover.git_named`, through `programs.git`), not the one a caller's `GIT_DIR` names."""
    try:
        mode = os.lstat(directory / ".gitignore").st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) and begins(directory / ".gitignore", MARKER_HEAD):
        return None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        return (
            f"the .gitignore in {directory} is {kind}, not a file: git waits on it or cannot read it, and "
            "whether git lists the cache's files is not asked; remove it, or choose a folder of the cache's own"
        )
    ours = [f"{_ENTRIES}/", "CACHEDIR.TAG"]
    try:  # (our two names: plain ASCII, one a line)
        proc = programs.git(
            "check-ignore", "--no-index", *ours, where=os.fspath(directory), named=git_named(directory.resolve())
        )
    except (OSError, subprocess.SubprocessError):
        return None
    hidden = set(proc.stdout.decode("utf-8", "replace").splitlines())
    seen = [name for name in ours if name not in hidden]
    if proc.returncode not in (0, 1) or not seen:
        return None
    return (
        f"git lists the cache's {', '.join(seen)} in {directory}: its .gitignore is not porter's (kept) and "
        "does not leave them out; add a line `*` to it, or choose a folder of the cache's own"
    )


MARKER_HEAD = MARKER.partition(b"\n")[0] + b"\n"  # (a marker porter wrote, whatever follows it)


def begins(path: Path, head: bytes) -> bool:
    """Whether the regular file `path` begins with `head`. Opened as porter reads a source file
    (`open_regular`: without blocking, checked a regular file after the open): a FIFO swapped in
    after a check by name would block the run."""
    try:
        fh, _ = open_regular(path, None)
        with fh:
            return fh.read(len(head)) == head
    except OSError:
        return False


def _write_at(folder: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """`data` as `name` in the folder open as `folder`: the cache's one form of a write. A new
    temporary (O_EXCL, O_NOFOLLOW: never a link's target nor a FIFO) renamed over the name, which
    is never opened. (By hand: `tempfile.mkstemp` takes no folder descriptor.) A folder where the
    file belongs is replaced (Python 3.11+). `mode`: for the writer only, but for the marks.
    A folder flagged append-only (`chattr +a`) or immutable is not written: a temporary made in
    it could be neither renamed nor removed (four a run were left; thirtieth read)."""
    if (flag := write_forbidden(folder)) is not None:
        raise OSError(errno.EPERM, f"the folder is {flag}")
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, _NEW, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except PermissionError:
            if (flag := flag_of(name, dir_fd=folder)) is not None:
                raise _FlaggedEntry(errno.EPERM, flag, name) from None
            raise
        except IsADirectoryError:
            if sys.version_info < (3, 11):
                raise  # (`rmtree` takes a folder's descriptor from 3.11: on 3.10 the entry is not kept)
            shutil.rmtree(name, dir_fd=folder)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        raise


class _FlaggedEntry(OSError):
    """A file of the cache that a flag forbids replacing (`chattr +i`): its `filename`, in the
    folder written, and the flag in words (`strerror`). Said as such: "folders this user cannot
    write" named `v3/`, which this user could write (twenty-ninth read's leftover)."""


def _read_entry(name: str, folder: int) -> tuple[bytes, int]:
    """The bytes of the entry `name` in the folder open as `folder`: a regular file of bounded
    size, or OSError (a FIFO is not waited on); and its mtime in ns (from the same `fstat`)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, dir_fd=folder)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            raise OSError("not a cache entry")
        return fh.read(MAX_ENTRY_BYTES + 1), info.st_mtime_ns


# the names porter writes in an entry folder (`Cache._path`, `_index_path`, `_state_path`,
# `StatIndex`, `_write_at`'s temporaries): the sweep removes nothing else
_OWN = re.compile(r"[0-9a-f]{62}\.json|(?:index-|index-state-|stat-)[0-9a-f]{64}\.(?:json|idx)|\..{1,300}\.tmp")
_SHARD = re.compile(r"[0-9a-f]{2}")
_SALT = re.compile(r"[0-9a-f]{64}")


# what else porter writes in the entry folder itself (`Cache.prune`'s mark, `Cache._memo_salt`)
_OWN_TOP = re.compile(rf"{_OWN.pattern}|{_SWEPT}|salt-[0-9a-f]{{64}}\.memo")


def only_entries(folder: Path) -> bool:
    """Whether `folder` holds nothing but the entry folder `v3/` (no link) with only the names
    porter writes there: its files, and shard folders of its entries. So an older porter left
    the folder it first made on a full disk (`v3/` made, the marks not written): refused as
    "not porter's cache" from then on, whatever space was freed (twenty-sixth read); hiding
    it hides nothing of the user's."""
    try:
        with os.scandir(folder) as listed:
            names = [(e.name, e.is_dir(follow_symlinks=False)) for e in listed]
        if names != [(_ENTRIES, True)]:
            return False
        with os.scandir(folder / _ENTRIES) as listed:
            return all(_porter_named(e) for e in listed)
    except OSError:
        return False


def _porter_named(entry: os.DirEntry[str]) -> bool:
    """An entry of `v3/` that porter writes: one of its files, or a shard folder of entries."""
    if entry.is_file(follow_symlinks=False):
        return _OWN_TOP.fullmatch(entry.name) is not None
    if not (entry.is_dir(follow_symlinks=False) and _SHARD.fullmatch(entry.name)):
        return False
    with os.scandir(entry.path) as listed:
        return all(e.is_file(follow_symlinks=False) and _OWN.fullmatch(e.name) for e in listed)


def _cache_files(top: int, now: float, fds: list[int]) -> list[tuple[float, int, int, str]]:
    """(mtime, size, folder's descriptor, name) of each regular file of porter's (`_OWN`) in the
    entry folder open as `top` and in its shard folders (two hex digits; each opened without
    following a link, its descriptor added to `fds`). A file whose mtime is in the future
    counts as written `now`."""
    out: list[tuple[float, int, int, str]] = []
    for fd in [top, *_shards(top, fds)]:
        try:
            listed = os.listdir(fd)
        except OSError:
            continue
        for name in listed:
            if not _OWN.fullmatch(name):
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                out.append((min(info.st_mtime, now), info.st_size, fd, name))
    return out


def _shards(top: int, fds: list[int]) -> list[int]:
    """Descriptors of the shard folders in the entry folder open as `top` (also added to `fds`)."""
    try:
        names = os.listdir(top)
    except OSError:
        return []
    out = []
    for name in names:
        if _SHARD.fullmatch(name):
            try:
                fd = os.open(name, _DIR, dir_fd=top)
            except OSError:
                continue  # a link, a file: not a shard
            fds.append(fd)
            out.append(fd)
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parses(data: bytes, name: str = "") -> bool:
    """The re-parse check a cached rewrite must pass before it may be written (CPython's own
    parser: fast, and it never loads libcst on a run answered from the cache; a file of another
    kind, its format's parser, porter.files.verify)."""
    kind = kind_of(name) if name else None
    if kind is not None and kind != PYTHON:
        from porter.files.verify import problem

        return problem(kind, data) is None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
        return False
    return True


def _to_dict(key: str, r: FileResult) -> dict[str, Any]:
    return {
        "key": key,
        "source_sha256": _sha(r.original_source) if r.original_source is not None else None,
        "new_sha256": _sha(r.new_source) if r.new_source is not None else None,
        "status": r.status.value,
        "reason": r.reason,
        "error_line": r.error_line,
        "findings": [f.to_dict() for f in r.findings],
        "suppressed": [f.to_dict() for f in r.suppressed],
        "new_source": base64.b64encode(r.new_source).decode() if r.new_source is not None else None,
    }


@overload
def _str(v: object) -> str: ...
@overload
def _str(v: object, optional: bool) -> str | None: ...
def _str(v: object, optional: bool = False) -> str | None:
    if (v is None and optional) or isinstance(v, str):
        return v
    raise TypeError("not a string")


def _int(v: object) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    raise TypeError("not a count")


def _pos(d: object) -> Position:
    if not isinstance(d, dict):
        raise TypeError("not a position")
    return Position(_int(d["line"]), _int(d["column"]))


def _finding(d: object, name: str) -> Finding:
    if not isinstance(d, dict):
        raise TypeError("not a finding")
    code = _str(d["code"])
    if code not in all_rules():
        raise ValueError("unknown rule code")
    return Finding(
        code=code,
        name=_str(d["name"]),
        message=_str(d["message"]),
        path=name,
        start=_pos(d["start"]),
        end=_pos(d["end"]),
        severity=Severity(d["severity"]),
        applicability=Applicability(d["applicability"]),
        target=_str(d["target"]),
        replacement=_str(d.get("replacement"), True),
        original=_str(d.get("original"), True),
        applied=d.get("applied", False) is True,
        advice=_str(d.get("advice"), True),
        # this install's link, not the one stored: a link is a file URI of the install that
        # wrote the entry, and another install of the same porter (another venv, sharing the
        # cache) gave its findings links into the first one's docs (seventeenth read)
        doc_url=all_rules()[code].doc_url if _str(d.get("doc_url"), True) is not None else None,
    )


def _findings(v: object, name: str) -> list[Finding]:
    if not isinstance(v, list):
        raise TypeError("not a list of findings")
    return [_finding(f, name) for f in v]


def _from_dict(d: dict[str, Any], name: str, source: bytes) -> FileResult:
    """The entry as a result, or an exception when any part of it does not check out."""
    if d.get("source_sha256") != _sha(source):
        raise ValueError("entry for other bytes")
    new = _str(d.get("new_source"), True)
    new_source = base64.b64decode(new, validate=True) if new is not None else None
    if d.get("new_sha256") != (_sha(new_source) if new_source is not None else None):
        raise ValueError("rewrite does not match its hash")
    status = FileStatus(d["status"])
    if new_source is not None and status is not FileStatus.CHANGED:
        raise ValueError("rewrite on a result that changes nothing")
    if new_source is not None and (new_source == source or not _parses(new_source, name)):
        raise ValueError("rewrite does not parse")
    error_line = d.get("error_line")
    return FileResult(
        path=name,
        status=status,
        findings=_findings(d["findings"], name),
        original_source=source,
        new_source=new_source,
        reason=_str(d.get("reason"), True),
        error_line=_int(error_line) if error_line is not None else None,
        suppressed=_findings(d.get("suppressed", []), name),
    )
