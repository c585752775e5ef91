"""The cache is bounded (`Cache.prune`): what no run has read or written for 30 days goes, then
the oldest files past the size cap; what warm runs still read stays. The cache was never pruned:
each porter version and each undone edit left its entries for good (seventeenth read)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from porter.core.findings import FileResult, FileStatus
from porter.pipeline import cache as cache_module
from porter.pipeline.cache import MAX_AGE_S, Cache
from tests.safety.conftest import CUDA, committed_repo, porter

DAY = 86400


def _age(path: Path, days: float) -> None:
    then = time.time() - days * DAY
    os.utime(path, (then, then))


def _entry(store: Cache, text: bytes) -> tuple[str, Path]:
    key = store.key(text, "m.py", _settings())
    store.put(key, FileResult(path="m.py", status=FileStatus.UNCHANGED, findings=[], original_source=text))
    return key, store._path(key)


def _settings():
    from porter.config.settings import Settings

    return Settings(target="xla")


def test_what_no_run_read_for_30_days_is_removed_and_the_rest_stays(tmp_path):
    store = Cache(tmp_path / "c")
    _, old = _entry(store, b"x = 1\n")
    _, new = _entry(store, b"x = 2\n")
    stale_index = store.entries / ("stat-" + "0" * 64 + ".idx")
    stale_index.write_bytes(b"x")
    _age(old, 31)
    _age(stale_index, 45)
    _age(new, 29)
    assert store.prune() == 2
    assert not old.exists() and not stale_index.exists() and new.exists()
    _age(new, 31)
    assert store.prune() == 0, "a second sweep within the hour"
    assert store.prune(now=time.time() + 2 * 3600) == 1 and not new.exists()


def test_a_file_read_back_stays_though_written_long_ago(tmp_path):
    """A warm run reads an entry without writing it: the read sets its mtime to now when it is
    more than a day old, so a sweep keeps it."""
    store = Cache(tmp_path / "c")
    key, path = _entry(store, b"x = 1\n")
    _age(path, 40)
    assert store.get(key, "m.py", b"x = 1\n") is not None
    assert time.time() - path.stat().st_mtime < 60
    assert store.prune() == 0 and path.exists()


def test_past_the_size_cap_the_oldest_go_first(tmp_path, monkeypatch):
    store = Cache(tmp_path / "c")
    paths = [_entry(store, f"x = {i}\n".encode())[1] for i in range(6)]
    for i, p in enumerate(paths):
        _age(p, 10 - i)  # paths[0] oldest
    size = paths[0].stat().st_size
    monkeypatch.setattr(cache_module, "MAX_BYTES", 3 * size + size // 2)
    assert store.prune() == 3
    assert [p.exists() for p in paths] == [False, False, False, True, True, True]


def test_links_future_mtimes_and_running_writes_are_left_alone(tmp_path):
    store = Cache(tmp_path / "c")
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"keep")
    _age(outside, 90)
    (store.entries / "ab").mkdir(exist_ok=True)
    os.symlink(outside, store.entries / "ab" / "link.json")
    os.symlink(tmp_path, store.entries / "cd")  # a shard folder that is a link: not entered
    future = store.entries / ("index-" + "1" * 64 + ".json")
    future.write_bytes(b"x")
    then = time.time() + 400 * DAY
    os.utime(future, (then, then))
    writing = store.entries / ".x.json.123.tmp"
    writing.write_bytes(b"x")
    _age(writing, MAX_AGE_S / DAY + 1)
    os.utime(writing, (time.time() - 60, time.time() - 60))
    assert store.prune() == 0
    assert outside.exists() and (store.entries / "ab" / "link.json").is_symlink() and future.exists()
    assert writing.exists()


def test_a_lint_sweeps_its_cache_folder(tmp_path):
    """End to end: after a lint, an entry of another porter (40 days unread) is gone and the
    run's own files are there; the next warm run gives the same answer."""
    committed_repo(tmp_path, {"m.py": CUDA})
    cache = tmp_path / "cache"
    first = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    stale = cache / "v3" / "ee" / ("e" * 62 + ".json")
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"an entry of another porter version")
    _age(stale, 40)
    marker = cache / "v3" / "last-prune"
    if marker.exists():
        _age(marker, 1)
    second = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert not stale.exists()
    assert list((cache / "v3").glob("stat-*.idx"))
    assert second.stdout == first.stdout and second.returncode == first.returncode == 1


def test_a_full_disk_is_swept_though_the_sweep_s_mark_cannot_be_written(tmp_path, monkeypatch):
    """On a full file system the sweep's marker cannot be written: the sweep runs anyway (that is
    when it is needed most); a read-only cache is not swept."""
    import errno

    store = Cache(tmp_path / "c")
    _, old = _entry(store, b"x = 1\n")
    _age(old, 40)
    real = cache_module._write_at
    tried: list[str] = []

    def full(folder, name, data):
        tried.append(name)
        if name == "last-prune":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder, name, data)

    monkeypatch.setattr(cache_module, "_write_at", full)
    assert store.prune() == 1 and not old.exists() and tried == ["last-prune"]
    _, old = _entry(store, b"x = 2\n")
    _age(old, 40)
    (store.entries / "last-prune").unlink(missing_ok=True)  # (a sweep is due again)
    monkeypatch.setattr(cache_module, "_write_at", lambda *a: (_ for _ in ()).throw(OSError(errno.EROFS, "ro")))
    assert store.prune() == 0 and old.exists()


def test_a_cache_folder_made_on_a_full_disk_is_the_cache_once_space_is_freed(tmp_path, monkeypatch):
    """On a full disk a folder can still be made where a file's bytes cannot be written (a
    tmpfs of 64 KiB, filled: seen by hand). The first run made `v3/` and then failed to write
    the marks, so `v3/` stood without them and `check_cache_dir` refused the folder from the
    next run on ("holds files that are not porter's cache (v3, ...)", exit 2), whatever space
    was freed (twenty-sixth read). Now `v3/` is made after the marks: that run is off, the next
    one uses the folder."""
    import errno

    import typer

    from porter.cli.common import check_cache_dir

    def full(folder, name, data, *mode):
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "m.py").write_bytes(CUDA)
    with monkeypatch.context() as patched:
        patched.setattr(cache_module, "_write_at", full)
        first = Cache(tmp_path / "c")
    assert not first.enabled and "No space left on device" in (first.problem or "")
    assert not (tmp_path / "c" / "v3").exists()
    try:
        check_cache_dir(tmp_path / "c", [tmp_path / "m.py"], False)
    except typer.Exit:
        raise AssertionError(f"the folder is refused: {sorted(os.listdir(tmp_path / 'c'))}") from None
    second = Cache(tmp_path / "c")
    assert second.enabled and second.problem is None
    assert {".gitignore", "CACHEDIR.TAG", "v3"} <= set(os.listdir(tmp_path / "c"))


def test_the_note_names_the_mark_that_could_not_be_written(tmp_path, monkeypatch):
    """Where the cache's marks cannot be written (a full disk), the note named `c/v3` ("cannot
    write c/v3: No space left on device"), a folder no write had tried (twenty-sixth read); it
    names the mark."""
    import errno

    tried: list[str] = []

    def full(folder, name, data, *mode):
        tried.append(name)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_module, "_write_at", full)
    store = Cache(tmp_path / "c")
    assert not store.enabled and tried == [".gitignore"]
    assert f"cannot write {tmp_path / 'c' / '.gitignore'}: No space left on device" in (store.problem or ""), (
        store.problem
    )
    assert "v3" not in (store.problem or "")


def test_the_note_names_the_cache_folder_that_could_not_be_made(tmp_path):
    """Where the cache folder itself cannot be made (a read-only disk; here a file in its way),
    the note named `c/v3` ("cannot write .../c4/v3: Read-only file system", `fullfs.sh.txt` in
    docs/reads/45-cache-tools), a folder no write had tried (twenty-seventh read); it names the
    cache folder. One that exists still names `v3/` where that cannot be made."""
    (tmp_path / "f").write_text("")
    store = Cache(tmp_path / "f" / "c")
    assert not store.enabled
    assert f"cannot write {tmp_path / 'f' / 'c'}: Not a directory" in (store.problem or ""), store.problem
    assert "v3" not in (store.problem or "")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "v3").write_text("")
    store = Cache(tmp_path / "d")
    assert f"cannot write {tmp_path / 'd' / 'v3'}:" in (store.problem or ""), store.problem


@pytest.mark.parametrize("left", ["empty", "entries"])
def test_a_cache_folder_an_older_porter_left_on_a_full_disk_is_the_cache(tmp_path, left):
    """0073c76 made `v3/` before the marks: on a full disk (a 64 KiB tmpfs, filled: `half.sh.txt` in
    docs/reads/44-cache2-tools) it left a folder holding only an empty `v3/`, refused from then
    on ("holds files that are not porter's cache (v3, ...)", exit 2) whatever space was freed
    (twenty-sixth read). A folder holding only `v3/` with only porter's names in it is taken for
    the cache (hiding it hides nothing of the user's); anything else beside or in it still is not."""
    import typer

    from porter.cli.common import check_cache_dir

    (tmp_path / "m.py").write_bytes(CUDA)
    entries = tmp_path / "c" / "v3"
    entries.mkdir(parents=True)
    if left == "entries":
        (entries / "ab").mkdir()
        (entries / "ab" / ("c" * 62 + ".json")).write_bytes(b"x")
        (entries / "last-prune").write_bytes(b"")
    check_cache_dir(tmp_path / "c", [tmp_path / "m.py"], False)
    assert Cache(tmp_path / "c").enabled and {".gitignore", "CACHEDIR.TAG"} <= set(os.listdir(tmp_path / "c"))
    for foreign in ("v3/m.py", "v3/ab/m.py", "v3/ab/sub/", "v3/zz/", "notes.txt"):
        other = tmp_path / foreign.replace("v3", "o/v3", 1) if foreign.startswith("v3") else tmp_path / "o" / foreign
        (tmp_path / "o" / "v3" / "ab").mkdir(parents=True, exist_ok=True)
        if foreign.endswith("/"):
            other.mkdir()
        else:
            other.write_bytes(b"the user's")
        with pytest.raises(typer.Exit):
            check_cache_dir(tmp_path / "o", [tmp_path / "m.py"], False)
        shutil.rmtree(tmp_path / "o")
    (tmp_path / "l").mkdir()
    (tmp_path / "l" / "v3").symlink_to(tmp_path / "o", target_is_directory=True)  # a link as v3: not porter's
    (tmp_path / "o").mkdir()
    with pytest.raises(typer.Exit):
        check_cache_dir(tmp_path / "l", [tmp_path / "m.py"], False)


def test_the_sweep_removes_only_porter_s_files_and_follows_no_swapped_link(tmp_path):
    """A cache folder others may write (a shared `--cache-dir`, umask 000): its entry folder
    swapped for a link after the run began must not lead the sweep into another folder, and a
    file porter does not write is never removed."""
    store = Cache(tmp_path / "c")
    mine = tmp_path / "mine"
    (mine / "ab").mkdir(parents=True)
    victims = [mine / ("index-" + "a" * 64 + ".json"), mine / "ab" / ("b" * 62 + ".json")]
    for v in victims:
        v.write_bytes(b"the user's")
        _age(v, 90)
    foreign = store.entries / "notes.txt"
    foreign.write_bytes(b"not porter's")
    _age(foreign, 90)
    assert store.prune() == 0 and foreign.exists()
    store.entries.rename(tmp_path / "moved")
    os.symlink(mine, store.entries)
    assert store.prune(now=time.time() + 2 * 3600) == 0
    assert all(v.exists() for v in victims)


def test_a_cache_that_cannot_be_written_is_still_read_and_said_so(tmp_path, monkeypatch):
    """A cache folder the user cannot write (a read-only mount, the folder an older `sudo
    porter` left root's) is read for what it holds, and the run's note says nothing new is
    kept; before, nothing was said (root is never refused a write, so `os.access` answers
    as it would for the user)."""
    store = Cache(tmp_path / "c")
    key, _ = _entry(store, b"x = 1\n")
    monkeypatch.setattr(cache_module.os, "access", lambda *args, **kwargs: False)
    again = Cache(tmp_path / "c")
    assert again.enabled and again.get(key, "m.py", b"x = 1\n") is not None
    assert again.problem is not None and again.problem.startswith("the cache is read only: cannot write")
    assert "new results are not kept" in again.problem
