"""Contract 1: a cache entry is verified, never trusted; a project's own cache is used only
when asked for; a malformed entry is a miss that gets replaced, never an error or a hang."""

from __future__ import annotations

import base64
import json
import itertools
import os
import stat
import shutil
import subprocess
import sys

import pytest
from pathlib import Path

from tests.safety.conftest import CUDA, PORTED, REPO, committed_repo, porter

PAYLOAD = b"import os; os.system('echo pwned > /tmp/porter-pwned')\nthis is not python(\n"


def _entries(cache: Path) -> list[Path]:
    """Per-file entries (the project index keeps its own `index-*.json` beside them)."""
    return [p for p in cache.rglob("*.json") if (p.is_file() or p.is_fifo()) and not p.name.startswith("index-")]


def _seed(tmp_path: Path, cache: Path) -> Path:
    """Run once so the cache holds the entry for m.py; return that entry."""
    committed_repo(tmp_path, {"m.py": CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--diff", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    entries = _entries(cache)
    assert len(entries) == 1
    return entries[0]


def _attacker_rewrites(raw: bytes, change) -> bytes:
    """What someone who can write the cache folder but not read the user's key can do: read
    an entry (the format is public), change it with `change(dict)`, and recompute every check
    that does not need the key: the sha256 fields, the whole-entry digest (porter < 0.x kept
    one), and a tag line (under a key of their own)."""
    import hashlib
    import hmac

    tagged = not raw.lstrip().startswith(b"{")
    body = raw.partition(b"\n")[2] if tagged else raw
    data = json.loads(body)
    change(data)
    new = data.get("new_source")
    if new is not None:
        data["new_sha256"] = hashlib.sha256(base64.b64decode(new)).hexdigest()
    if "digest" in data:
        data.pop("digest")
        data["digest"] = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    body = json.dumps(data, separators=(",", ":")).encode()
    if not tagged:
        return body
    return hmac.new(b"the attacker's own key", body, hashlib.sha256).hexdigest().encode() + b"\n" + body


def _retag(tag: bytes, body: bytes, new: bytes) -> bytes:
    """`new` behind the best tag an attacker can make: the sha256 of the body where the tag
    was one, an HMAC under a key of their own otherwise."""
    import hashlib
    import hmac

    if tag == hashlib.sha256(body).hexdigest().encode():
        return hashlib.sha256(new).hexdigest().encode() + b"\n" + new
    return hmac.new(b"the attacker's own key", new, hashlib.sha256).hexdigest().encode() + b"\n" + new


def _forge(entry: Path, new: bytes, fix_hash: bool) -> None:
    def change(data: dict) -> None:
        old_sha = data.get("new_sha256")
        data["new_source"] = base64.b64encode(new).decode()
        if not fix_hash:
            data["__keep_sha"] = old_sha

    raw = _attacker_rewrites(entry.read_bytes(), change)
    if not fix_hash:  # a flipped bit: the recorded hash is the old one
        tagged = not raw.lstrip().startswith(b"{")
        tag, _, body = raw.partition(b"\n") if tagged else (b"", b"", raw)
        data = json.loads(body)
        data["new_sha256"] = data.pop("__keep_sha")
        body = json.dumps(data, separators=(",", ":")).encode()
        raw = tag + b"\n" + body if tagged else body
    entry.write_bytes(raw)


def test_cache_shipped_inside_the_project_is_not_used(tmp_path):
    entry = _seed(tmp_path, tmp_path / ".porter_cache")
    _forge(entry, PAYLOAD, fix_hash=True)
    out = porter("rewrite", ".", "--target", "xla", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def test_forged_entry_that_does_not_parse_is_not_written(tmp_path):
    # the forger even fixed up the hash: the re-parse check still stops it
    cache = tmp_path / ".porter_cache"
    entry = _seed(tmp_path, cache)
    _forge(entry, PAYLOAD, fix_hash=True)
    out = porter("rewrite", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def test_flipped_bit_in_an_entry_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _seed(tmp_path, cache)
    # valid Python, but not what porter computed: only the recorded hash tells
    _forge(entry, PORTED.replace(b"randn(3)", b"randn(7)"), fix_hash=False)
    out = porter("rewrite", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def _check_replaced(tmp_path: Path, cache: Path, entry: Path) -> None:
    # the stat index answers an unchanged file without reading its entry (it holds the
    # findings itself): without it, the next run reads the bad entry
    for index in cache.rglob("stat-*.idx"):
        index.unlink()
    for _ in range(2):  # the bad entry is a miss, then it is replaced and a hit
        out = porter(
            "lint",
            ".",
            "--target",
            "xla",
            "--output-format",
            "concise",
            "--cache-dir",
            str(cache),
            cwd=tmp_path,
            timeout=60,
        )
        err = out.stderr.decode()
        assert out.returncode == 1 and "Traceback" not in err, err
        assert b"m.py:2:" in out.stdout
    assert all(p.is_file() for p in _entries(cache))


def _lint_entry(tmp_path: Path, cache: Path) -> Path:
    (tmp_path / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    [entry] = _entries(cache)
    return entry


def test_deeply_nested_entry_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    entry.write_text("[" * 200_000)
    _check_replaced(tmp_path, cache, entry)


def test_entry_of_wrong_types_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    for bad in ("[]", '"x"', json.dumps({"key": entry.parent.name + entry.stem, "status": 3, "findings": {"a": 1}})):
        entry.write_text(bad)
        _check_replaced(tmp_path, cache, entry)


def test_fifo_in_place_of_an_entry_is_a_miss_not_a_hang(tmp_path):
    cache = tmp_path / "cache"
    entry = _lint_entry(tmp_path, cache)
    entry.unlink()
    os.mkfifo(entry)
    _check_replaced(tmp_path, cache, entry)


def test_malformed_project_index_entry_is_a_miss(tmp_path: Path) -> None:
    """The project index's cached answers (and what it keeps for the next run) are read like
    any entry: a FIFO, deep nesting or a wrong shape is a miss (no hang, no traceback) and the
    port is the fresh one."""
    cache = tmp_path / "cache"
    committed_repo(tmp_path, {"m.py": b"import torch\ngpu_id = 0\nx = torch.zeros(2).to(gpu_id)\n"})
    fresh = porter("rewrite", ".", "--target", "neuron", "--diff", "--no-cache", cwd=tmp_path)
    seeded = porter("rewrite", ".", "--target", "neuron", "--diff", "--cache-dir", str(cache), cwd=tmp_path)
    assert seeded.stdout == fresh.stdout
    # the device values' and the CUDA-only facts', and what the device values' keep for the next run
    indexes = sorted(cache.rglob("index-*.json"))
    assert len(indexes) == 3
    for index, bad in itertools.product(
        indexes, ("fifo", "[" * 100_000, '{"m.py": 3}', '{"m.py": [[1, 2, 3, 4]]}', "[]")
    ):
        index.unlink()
        if bad == "fifo":
            os.mkfifo(index)
        else:
            index.write_bytes(bad.encode())
        again = porter(
            "rewrite", ".", "--target", "neuron", "--diff", "--cache-dir", str(cache), cwd=tmp_path, timeout=60
        )
        assert again.returncode == fresh.returncode, again.stderr
        assert again.stdout == fresh.stdout
        assert b"Traceback" not in again.stderr


# valid Python: the re-parse check cannot stop it, only the entry's authentication can
PLANTED = b"import os\nos.system('echo pwned > /tmp/porter-pwned')\n"


def test_forged_entry_of_valid_python_in_a_named_cache_is_not_written(tmp_path):
    """A cache named with --cache-dir (a CI cache restored from another branch, a
    `.porter_cache/` shipped in a repository) whose entry was rewritten by someone without the
    user's key: porter ports the file itself."""
    cache = tmp_path / ".porter_cache"
    entry = _seed(tmp_path, cache)
    _forge(entry, PLANTED, fix_hash=True)
    out = porter("rewrite", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.py").read_bytes() == PORTED


def _without_findings(data: dict) -> None:
    data["findings"] = []
    data["status"] = "unchanged"
    data["new_source"] = None
    data["new_sha256"] = None


def test_forged_entries_cannot_turn_a_lint_gate_green(tmp_path):
    """Every file of the cache rewritten to say "no findings": entries, the project index
    and the stat index (whose records hold findings inline)."""
    cache = tmp_path / "restored-ci-cache"
    (tmp_path / "m.py").write_bytes(CUDA)
    first = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    for entry in _entries(cache):
        entry.write_bytes(_attacker_rewrites(entry.read_bytes(), _without_findings))
    for index in cache.rglob("stat-*.idx"):
        tag, _, body = index.read_bytes().partition(b"\n")
        data = json.loads(body)
        for record in data["files"].values():
            if record[6] is not None:
                record[6][3] = []  # the inline result: no findings
        index.write_bytes(_retag(tag, body, json.dumps(data).encode()))
    again = porter(
        "lint", ".", "--target", "xla", "--output-format", "concise", "--cache-dir", str(cache), cwd=tmp_path
    )
    assert again.returncode == 1, (again.stdout, again.stderr)
    assert b"m.py:2:" in again.stdout


def test_the_key_is_made_once_for_the_user_only(tmp_path):
    import os
    import stat

    config = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(config)}
    (tmp_path / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stderr
    key = config / "porter" / "cache-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_uid == os.geteuid()
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    made = key.read_bytes()
    assert len(bytes.fromhex(made.decode().strip())) == 32
    porter("lint", ".", "--target", "xla", cwd=tmp_path, env=env)
    assert key.read_bytes() == made  # kept, not remade
    cache = tmp_path / ".user-cache"
    assert not list(cache.rglob("cache-key"))  # never inside a cache folder


def test_a_missing_or_unusable_key_is_a_cold_cache_not_an_error(tmp_path):
    import os

    (tmp_path / "m.py").write_bytes(CUDA)
    config = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(config)}
    assert porter("lint", ".", "--target", "xla", cwd=tmp_path, env=env).returncode == 1
    key = config / "porter" / "cache-key"
    cases = {
        "readable by others": lambda: key.chmod(0o644),
        "not a key": lambda: (key.chmod(0o600), key.write_text("not hex\n")),
        "a folder": lambda: (key.unlink(), key.mkdir()),
        "a folder that cannot be made": lambda: (
            key.rmdir(),
            (config / "porter").rmdir(),
            (config / "porter").write_text(""),
        ),
    }
    for why, spoil in cases.items():
        spoil()
        out = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=tmp_path, env=env, timeout=60)
        err = out.stderr.decode()
        assert out.returncode == 1 and b"m.py:2:" in out.stdout, (why, err)
        assert "Traceback" not in err and "cache" in err and "off" in err, (why, err)
    # a secret in PORTER_CACHE_KEY (a CI secret) stands in for the file
    out = porter("lint", ".", "--target", "xla", cwd=tmp_path, env={**env, "PORTER_CACHE_KEY": "ci-secret"})
    assert out.returncode == 1 and "off" not in out.stderr.decode(), out.stderr
    assert os.path.isfile(config / "porter")  # untouched


def test_a_key_folder_that_cannot_be_searched_is_a_note_not_a_traceback(tmp_path):
    """`sudo porter` left a root-owned 0700 `~/.config/porter`: the user's runs could not even
    `stat` the key, and the note's own `Path.exists()` raised: every run ended in a
    PermissionError traceback (eighteenth read, run as a user other than root). Root is not
    refused a search, so a name too long for the file system stands in for it here: `stat`
    fails with an error `Path.exists()` does not swallow."""
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {"XDG_CONFIG_HOME": str(tmp_path / ("c" * 300))}
    out = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=tmp_path, env=env, timeout=60)
    err = out.stderr.decode()
    assert out.returncode == 1 and b"m.py:2:" in out.stdout, err
    assert "Traceback" not in err and "the cache is off" in err, err


def test_a_default_cache_folder_that_cannot_be_written_is_said_once(tmp_path):
    """A default cache folder the user cannot write (root's, left by an older `sudo porter`)
    made every run cold and said nothing; the key was fine, so no note came. Root is never
    refused a write, so a file where the cache folder's parent belongs stands in for it: the
    run says once why the cache is off, and checks as a cold run does."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "not-a-folder").write_text("")
    env = {"XDG_CACHE_HOME": str(tmp_path / "not-a-folder"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    for command in (("lint", ".", "--output-format", "concise"), ("rewrite", ".", "--diff")):
        out = porter(*command, "--target", "xla", cwd=tmp_path, env=env, timeout=60)
        err = out.stderr.decode()
        assert out.returncode == 1 and b"m.py" in out.stdout, err
        assert err.count("note: the cache is off: cannot write") == 1 and "not-a-folder" in err, err
    out = porter("lint", ".", "--target", "xla", "--no-cache", cwd=tmp_path, env=env, timeout=60)
    assert "cache is off" not in out.stderr.decode()


def test_links_in_a_named_cache_are_not_written_through(tmp_path):
    """A cache folder someone else made can hold links to folders elsewhere: porter writes no
    entry through them."""
    cache = tmp_path / ".porter_cache"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "m.py").write_bytes(CUDA)
    first = porter("lint", ".", "--target", "xla", "--cache-dir", str(cache), cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    [entry] = _entries(cache)
    folder = entry.parent
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.symlink_to(elsewhere)
    again = porter(
        "lint", ".", "--target", "xla", "--cache-dir", str(cache), "--output-format", "concise", cwd=tmp_path
    )
    assert again.returncode == 1 and b"m.py:2:" in again.stdout, again.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("moment", ["after the check", "at the temporary file"])
@pytest.mark.parametrize("folder", ["shard", "entries", "entries, the project index"])
def test_a_cache_folder_swapped_for_a_link_during_a_write_takes_nothing_elsewhere(
    tmp_path, monkeypatch, moment, folder
):
    """Another user who can write the cache folder swaps a shard folder (or `v3/`) for a link
    to a folder of theirs while porter writes an entry (or the project index's answers, in
    `v3/`): in the window between the check that
    it is no link and the write (at the seal), or as the temporary file is made. The write
    was by path, so the entry went through the link; now nothing lands outside the cache."""
    from porter.pipeline import cache as cache_module

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    store = cache_module.Cache(tmp_path / "cache")
    assert store.enabled, store.problem
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    key = "ab" + "c" * 62
    target = store._path(key).parent if folder == "shard" else store.entries
    if folder != "shard":
        (theirs / key[:2]).mkdir()  # their `v3/` made ready with the shard the entry goes in
    swapped: list[Path] = []

    def swap() -> None:
        if not swapped:
            if target.exists():
                target.rename(target.with_name(target.name + "-moved"))
            target.symlink_to(theirs, target_is_directory=True)
            swapped.append(target)

    if moment == "after the check":
        real_seal = cache_module.seal
        monkeypatch.setattr(cache_module, "seal", lambda *a: (swap(), real_seal(*a))[1])
    else:
        real_open = os.open

        def opening(path, flags, *args, **kwargs):
            if flags & os.O_CREAT and str(path).endswith(".tmp"):
                swap()
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", opening)
    result = cache_module.FileResult(path="m.py", status=cache_module.FileStatus.UNCHANGED)
    if folder.endswith("index"):
        store.put_index("values:abc", {"m.py": ()})
    else:
        store.put(key, result)
    assert swapped, "the swap was not made: the test tried nothing"
    assert [p for p in theirs.rglob("*") if not p.is_dir()] == []


@pytest.mark.parametrize("moment", ["at the look", "at the temporary file"])
def test_a_cache_folder_swapped_while_its_marks_are_written_takes_nothing_elsewhere(tmp_path, monkeypatch, moment):
    """The cache's `.gitignore` and CACHEDIR.TAG were looked at and written by path: the cache
    folder swapped for a link (to a folder of another user's, who can write the folder above it)
    after the look, or as the temporary was made, took the file into the link's folder. Now the
    folder is opened once and both are written relative to it (twenty-fifth read)."""
    from porter.pipeline import cache as cache_module

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    root = tmp_path / "cache"
    (root / "v3").mkdir(parents=True)
    theirs = tmp_path / "theirs"
    (theirs / "v3").mkdir(parents=True)
    swapped: list[Path] = []

    def swap(path: object) -> None:
        if not swapped and str(path).endswith((".gitignore", ".tmp")):
            root.rename(root.with_name("cache-moved"))
            root.symlink_to(theirs, target_is_directory=True)
            swapped.append(root)

    if moment == "at the look":
        real_stat = os.stat
        monkeypatch.setattr(os, "stat", lambda path, *a, **k: (swap(path), real_stat(path, *a, **k))[1])
    else:
        real_open = os.open
        monkeypatch.setattr(
            os,
            "open",
            lambda path, flags, *a, **k: (flags & os.O_CREAT and swap(path), real_open(path, flags, *a, **k))[1],
        )
    cache_module.Cache(root)
    monkeypatch.undo()
    assert swapped, "the swap was not made: the test tried nothing"
    assert [p.name for p in theirs.rglob("*") if not p.is_dir()] == []
    assert (
        (tmp_path / "cache-moved" / "CACHEDIR.TAG")
        .read_bytes()
        .startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    )


def test_a_link_or_fifo_named_as_a_mark_of_the_cache_is_left_as_it_is(tmp_path, monkeypatch):
    """A name the cache marks its folder with (`.gitignore`, CACHEDIR.TAG) that is there in any
    form is not porter's to replace: a link (to a file not there yet) was replaced by porter's
    file, looked at through its target; a FIFO is never opened (no hang). The cache works."""
    from porter.pipeline import cache as cache_module

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    root = tmp_path / "cache"
    root.mkdir()
    (root / ".gitignore").symlink_to(tmp_path / "not-yet")
    os.mkfifo(root / "CACHEDIR.TAG")
    store = cache_module.Cache(root)
    assert store.enabled and store.problem is None, store.problem
    assert os.readlink(root / ".gitignore") == str(tmp_path / "not-yet") and not (tmp_path / "not-yet").exists()
    assert stat.S_ISFIFO((root / "CACHEDIR.TAG").lstat().st_mode)
    store.put("ab" + "c" * 62, cache_module.FileResult(path="m.py", status=cache_module.FileStatus.UNCHANGED))
    assert (store.entries / "ab" / ("c" * 62 + ".json")).is_file()


def test_relative_xdg_folders_are_ignored_not_made_in_the_project(tmp_path):
    """The XDG Base Directory spec has a relative `XDG_CONFIG_HOME` / `XDG_CACHE_HOME` ignored.
    Taken as given, it put the user's cache key and the default cache in the folder porter
    ran in: the project, where `git add -A` commits the key, and where the project's author
    could have shipped a key and entries of their own."""
    project = tmp_path / "project"
    home = tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "m.py").write_bytes(CUDA)
    for value in ("cfg", "./", "."):
        env = {"HOME": str(home), "XDG_CONFIG_HOME": value, "XDG_CACHE_HOME": value}
        out = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=project, env=env)
        assert out.returncode == 1 and b"m.py:2:" in out.stdout, (value, out.stderr)
        assert sorted(p.name for p in project.iterdir()) == ["m.py"], value
    assert (home / ".config" / "porter" / "cache-key").is_file()
    assert list((home / ".cache" / "porter").iterdir())


def test_a_cache_folder_that_holds_the_files_checked_is_refused_not_marked_ignored(tmp_path):
    """The cache marks its folder ignored (a `.gitignore` of `*`, as ruff's does). Named at the
    project (`--cache-dir .`, or `--cache-dir "$UNSET"`: an empty value is `.`) or at a
    folder of sources, it hid every file from the run and from git, and lint passed."""
    (tmp_path / "src").mkdir()
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "src" / "n.py").write_bytes(CUDA)
    for extra in (["--cache-dir", ""], ["--cache-dir", "."], ["--cache-dir", "src"]):
        out = porter("lint", ".", "--target", "xla", *extra, cwd=tmp_path)
        err = " ".join(out.stderr.decode().replace("│", " ").split())
        # (an empty name is refused before the cache is looked at: tests/safety/test_empty_output_names.py)
        why = "an empty name names no folder or file" if extra[1] == "" else "choose a folder of its own"
        assert out.returncode == 2 and why in err and "Traceback" not in err, (extra, err)
        assert not (tmp_path / ".gitignore").exists() and not (tmp_path / "src" / ".gitignore").exists(), extra
    out = porter("rewrite", ".", "--target", "xla", "--diff", "--cache-dir", "src", cwd=tmp_path)
    assert out.returncode == 2 and not (tmp_path / "src" / ".gitignore").exists(), out.stderr
    env = {**os.environ, "PYTHONPATH": str(REPO), "PORTER_CACHE_DIR": ".", "XDG_CACHE_HOME": str(tmp_path / "uc")}
    out = subprocess.run([sys.executable, "-m", "porter", "lint", "."], cwd=tmp_path, env=env, capture_output=True)
    assert out.returncode == 2 and b"PORTER_CACHE_DIR . holds the input" in out.stderr, out.stderr
    assert not (tmp_path / ".gitignore").exists()
    # a folder of its own, inside the project, is a cache; --no-cache names none
    for extra in (["--cache-dir", ".porter_cache"], ["--no-cache", "--cache-dir", "."]):
        out = porter("lint", ".", "--target", "xla", "--output-format", "concise", *extra, cwd=tmp_path)
        assert out.returncode == 1 and b"m.py:2:" in out.stdout and b"src/n.py:2:" in out.stdout, (extra, out.stderr)


def test_a_cache_folder_or_an_input_that_is_a_link_loop_is_said_not_a_traceback(tmp_path):
    """A cache folder named (`--cache-dir`, `PORTER_CACHE_DIR`) that is a link loop, or an input
    that is one beside a named cache, ended the run in a traceback (`Path.resolve` raises
    RuntimeError at a loop on Python < 3.13): now the cache is off with a note, and the loop is
    an input not checked (twenty-fourth read)."""
    (tmp_path / "m.py").write_bytes(CUDA)
    os.symlink("loop", tmp_path / "loop")
    for extra in (["lint", "m.py", "--cache-dir", "loop"], ["rewrite", "m.py", "--diff", "--cache-dir", "loop"]):
        out = porter(*extra, "--target", "xla", cwd=tmp_path)
        err = out.stderr.decode()
        assert out.returncode == 1 and "Traceback" not in err and "the cache is off" in err, (extra, err)
    out = porter("lint", "m.py", "loop", "--target", "xla", "--cache-dir", "c", cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 1 and "Traceback" not in err and "loop" in err, err


def test_a_folder_of_versioned_packages_is_not_taken_for_a_cache(tmp_path):
    """The check above let a folder through that held only names like the cache's own entry
    folders (`v1`, `v2`: an API's versioned packages, `api/v1/m.py`): `--cache-dir api` marked
    api/ ignored, lint said "All checks passed!" (exit 0) and git no longer saw api/. Those
    names are the cache's only beside its own `.gitignore`; a cache porter made still works."""
    for version in ("v1", "v2"):
        (tmp_path / "api" / version).mkdir(parents=True)
        (tmp_path / "api" / version / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--cache-dir", "api", cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2 and "choose a folder of its own" in err and "Traceback" not in err, (out.stdout, err)
    assert not (tmp_path / "api" / ".gitignore").exists()
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "v1").mkdir()  # an old format's entries beside the cache's own marker
    (tmp_path / "ok" / ".gitignore").write_text("# made by porter\n*\n")
    for _ in range(2):  # the second run finds the cache the first one made
        out = porter("lint", "api", "--target", "xla", "--output-format", "concise", "--cache-dir", "ok", cwd=tmp_path)
        assert out.returncode == 1 and b"api/v1/m.py:2:" in out.stdout, out.stderr


@pytest.mark.parametrize("marker", ["a user's *", "a user's other text", "a FIFO", "a folder"])
def test_a_cache_folder_whose_gitignore_is_the_user_s_is_the_cache_on_every_run(tmp_path, marker):
    """The cache writes its `.gitignore` only where there is none, so it keeps the user's (a `*`
    made for the folder, as for ruff's cache); but the check of a named cache folder then took the
    `v3/` the first run made there for a project's folder: every later run was refused, exit 2
    ("holds files that are not porter's cache (v3, ...)"; twenty-fifth read). The cache's
    `CACHEDIR.TAG` now marks the folder porter's too; the user's `.gitignore` is left as it was, and
    a folder where both marks are the user's is refused from the first run, as from the second."""
    (tmp_path / "m.py").write_bytes(CUDA)
    cache = tmp_path / "c"
    cache.mkdir()
    gitignore = cache / ".gitignore"
    {
        "a user's *": lambda: gitignore.write_text("*\n"),
        "a user's other text": lambda: gitignore.write_text("keep\n"),
        "a FIFO": lambda: os.mkfifo(gitignore),
        "a folder": lambda: gitignore.mkdir(),
    }[marker]()
    for run in ("cold", "warm"):
        out = porter("lint", "m.py", "--target", "xla", "--output-format", "concise", "--cache-dir", "c", cwd=tmp_path)
        assert out.returncode == 1 and b"m.py:2:" in out.stdout, (run, out.stderr)
    assert (cache / "v3").is_dir() and (cache / "CACHEDIR.TAG").is_file()
    assert gitignore.is_fifo() or gitignore.is_dir() or gitignore.read_text() in ("*\n", "keep\n")
    (cache / "CACHEDIR.TAG").unlink()  # both marks the user's (a FIFO, a folder): refused from the first run
    (cache / "CACHEDIR.TAG").mkdir()
    shutil.rmtree(cache / "v3")
    out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path)
    assert out.returncode == 2 and b"choose a folder of its own" in out.stderr and not (cache / "v3").exists(), (
        out.stderr
    )
    (tmp_path / "api" / "v1").mkdir(parents=True)  # a project's v1/ beside another tool's tag: not the cache's
    (tmp_path / "api" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "api", cwd=tmp_path)
    assert out.returncode == 2 and b"choose a folder of its own" in out.stderr, out.stderr


@pytest.mark.parametrize(
    "ignores, seen",
    [
        ({"c/.gitignore": "*.pyc\n"}, ["v3/", "CACHEDIR.TAG"]),
        ({"c/.gitignore": "v3/\n"}, ["CACHEDIR.TAG"]),
        ({"c/.gitignore": "*\n"}, []),
        ({"c/.gitignore": "keep\n", ".gitignore": "c/\n"}, []),
        ({"c/.gitignore/": ""}, ["v3/", "CACHEDIR.TAG"]),
        ({"c/.gitignore": "*.pyc\n", ".git": None}, []),
    ],
    ids=["a user's *.pyc", "a user's v3/", "a user's *", "left out above", "a folder", "no repository"],
)
def test_a_kept_user_gitignore_that_lets_git_see_the_cache_is_said(tmp_path, ignores, seen):
    """The cache keeps a `.gitignore` of the user's in its folder (twenty-fifth read's defect B);
    one that does not leave the cache's files out let `git status` list every entry, and nothing
    said so. Now a note names what git lists, as git itself decides (a `.gitignore` above, none
    where no repository holds the folder)."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "c").mkdir()
    if ".git" not in ignores:
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for name, text in ignores.items():
        if name.endswith("/"):
            (tmp_path / name).mkdir()
        elif text is not None:
            (tmp_path / name).write_text(text)
    for run in ("cold", "warm"):
        out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path)
        notes = [ln for ln in out.stderr.decode().splitlines() if "git lists the cache's" in ln]
        assert out.returncode == 1 and len(notes) == (1 if seen else 0), (run, out.stderr)
        if seen:
            assert f"git lists the cache's {', '.join(seen)} in c:" in notes[0], notes
    if ".git" in ignores:
        return
    status = subprocess.run(
        ["git", "status", "--porcelain", "-uall", "c"], cwd=tmp_path, capture_output=True, text=True
    )
    listed = {"v3/" if ln[3:].startswith("c/v3/") else ln[5:] for ln in status.stdout.splitlines()}
    assert listed - {".gitignore"} == set(seen), status.stdout  # what the note says is what git lists


@pytest.mark.parametrize(
    ("git_dir", "above", "seen"),
    [(".git", None, True), ("{top}/.git", "c/\n", False), ("{top}/.git", None, True)],
    ids=["relative-as-a-hook-sets-it", "absolute-cache-left-out-above", "absolute"],
)
def test_the_note_that_git_lists_the_cache_asks_the_repository_the_caller_s_git_dir_names(
    tmp_path, git_dir, above, seen
):
    """`seen_by_git` ran `git -C CACHE check-ignore` with the caller's `GIT_DIR` (a hook's
    `.git`; discovery reads the repository it names, `discover._env_repository`): a relative one
    named no repository from the cache folder, so git's listing went unsaid; an absolute one
    made the cache folder the work tree's top, so the `.gitignore` above leaving `c/` out was
    not read and the note said git lists what it does not (twenty-sixth read). The note is
    compared with `git status` under the same environment."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / ".gitignore").write_text("*.pyc\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    if above is not None:
        (tmp_path / ".gitignore").write_text(above)
    env = {"GIT_DIR": git_dir.format(top=tmp_path)}
    for run in ("cold", "warm"):
        out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path, env=env)
        notes = [ln for ln in out.stderr.decode().splitlines() if "git lists the cache's" in ln]
        assert out.returncode == 1 and len(notes) == seen, (run, out.stderr)
    status = subprocess.run(
        ["git", "status", "--porcelain", "-uall", "c"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert bool([ln for ln in status.stdout.splitlines() if "c/v3/" in ln]) == seen, status.stdout


def test_the_note_that_git_lists_the_cache_keeps_the_caller_s_ceiling(tmp_path):
    """`seen_by_git` drops the caller's repository variables but not those that bound git's
    search (`GIT_CEILING_DIRECTORIES`, read by discovery too): with the repository at the
    ceiling, git finds none from the cache folder and lists nothing, and no note is said."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "proj" / "c").mkdir(parents=True)
    (tmp_path / "proj" / "m.py").write_bytes(CUDA)
    (tmp_path / "proj" / "c" / ".gitignore").write_text("*.pyc\n")
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path / "proj", env=env)
    assert out.returncode == 1 and "git lists the cache's" not in out.stderr.decode(), out.stderr
    out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path / "proj")
    assert "git lists the cache's" in out.stderr.decode(), out.stderr  # (without the ceiling: git lists them)


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_WORK_TREE"])
def test_the_cache_s_git_note_asks_the_repository_holding_the_folder_not_the_environment_s(
    tmp_path, monkeypatch, variable
):
    """`seen_by_git` ran `git check-ignore` with the caller's environment: a hook's `GIT_DIR`
    (or a script's `GIT_WORK_TREE`) made git read another repository's ignores from the cache
    folder as its top, and the note said git lists the cache's files where the project's
    `.gitignore` leaves the folder out (or said nothing where git lists them). git is run as
    the walk runs it (`programs.git`)."""
    from porter.pipeline.cache import seen_by_git

    for name, line in (("repo", "c/\n"), ("other", "")):
        subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
        (tmp_path / name / ".gitignore").write_text(line)
    (tmp_path / "repo" / "c").mkdir()
    (tmp_path / "repo" / "c" / ".gitignore").write_text("*.pyc\n")  # the user's, kept
    assert seen_by_git(tmp_path / "repo" / "c") is None  # left out above, as git says
    other = tmp_path / "other"
    monkeypatch.setenv(variable, os.fspath(other / ".git" if variable == "GIT_DIR" else other))
    assert seen_by_git(tmp_path / "repo" / "c") is None
    (tmp_path / "repo" / ".gitignore").write_text("")
    assert "git lists the cache's v3/, CACHEDIR.TAG in" in (seen_by_git(tmp_path / "repo" / "c") or "")


@pytest.mark.parametrize("repository", [True, False])
def test_a_fifo_gitignore_kept_in_the_cache_folder_is_said(tmp_path, repository):
    """A FIFO `.gitignore` in the cache folder is kept (the user's) and not handed to git, which
    waits on it: whether git lists the cache's files was not asked, and nothing said so (cache2's
    leftover). The note says it, once a run, and the run goes on."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "c").mkdir()
    if repository:
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    os.mkfifo(tmp_path / "c" / ".gitignore")
    for run in ("cold", "warm"):
        out = porter("lint", "m.py", "--target", "xla", "--cache-dir", "c", cwd=tmp_path, timeout=60)
        notes = [ln for ln in out.stderr.decode().splitlines() if ".gitignore in c is a FIFO, not a file" in ln]
        assert out.returncode == 1 and len(notes) == 1 and "not asked" in notes[0], (run, out.stderr)
    assert (tmp_path / "c" / ".gitignore").is_fifo()


def test_a_change_of_the_rule_data_in_rules_folders_is_a_miss(tmp_path):
    """The key hashed rules/*.toml but not rules/cuda_only/packages.json or rules/api/*.json:
    after an update of that data (a package found CUDA-only, or no longer), a warm run gave
    the old findings where a fresh run gives others."""
    import shutil

    copy = tmp_path / "install"
    shutil.copytree(REPO / "porter", copy / "porter", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", copy / "rules")
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text(
        "import torch\nimport gemlite\n\n\ndef f(x):\n    y = gemlite.matmul(x)\n    return y.cuda()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(copy), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "uc")}
    env.pop("PORTER_CACHE_DIR", None)

    def lint(*extra: str) -> bytes:
        args = [sys.executable, "-m", "porter", "lint", ".", "-t", "neuron", "--output-format", "concise", *extra]
        return subprocess.run(args, cwd=project, env=env, capture_output=True, timeout=180).stdout

    assert b"GUARD003" in lint()  # gemlite is CUDA-only: f is left as it is
    data = copy / "rules" / "cuda_only" / "packages.json"
    packages = json.loads(data.read_text())
    [gemlite] = [p for p in packages["packages"] if p["distribution"] == "gemlite"]
    gemlite["imports"] = ["not_gemlite"]
    data.write_text(json.dumps(packages))
    fresh = lint("--no-cache")
    assert b"DEV001" in fresh and b"GUARD003" not in fresh
    assert lint() == fresh


def test_the_project_index_of_another_porter_is_a_miss_even_under_the_user_s_key(tmp_path, monkeypatch):
    """An entry's tag covers its key, which hashes porter's salt; the project index's answers and
    the state it keeps were tagged under their digest alone, while only their file names hashed
    the salt. Moved to this porter's names (by anyone who can write the cache), another porter's
    answers (the same user's: the tag checked out) were read as this porter's."""
    from porter.pipeline import cache as cache_module

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    store = cache_module.Cache(tmp_path / "cache")
    assert store.enabled, store.problem
    facts = {"m.py": (("f", "x", "cuda", ("torch.device",)),)}
    store.put_index("values:abc", facts)
    store.put_state("values-state:k", {"kept": 1})
    assert store.get_index("values:abc") == facts and store.get_state("values-state:k") == {"kept": 1}
    old = store._index_path("values:abc"), store._state_path("values-state:k")
    monkeypatch.setattr(cache_module.Cache, "salt", lambda self: "another porter's code and rule data")
    new = store._index_path("values:abc"), store._state_path("values-state:k")
    for before, after in zip(old, new):
        assert before != after
        before.rename(after)
    assert store.get_index("values:abc") is None
    assert store.get_state("values-state:k") is None


def test_installing_a_parser_the_note_asks_for_is_a_miss(tmp_path, monkeypatch):
    """A shell script read without the `shell` extra is "not read" (a note: `pip install
    'porter[shell]'`). The key hashed libcst's version but no other parser's, installed or not:
    after the install a warm run still said the note and lint passed without reading the file
    (seventeenth read). So does an upgrade of a grammar or of PyYAML."""
    import importlib.metadata

    from porter.pipeline import cache as cache_module

    real = importlib.metadata.version

    def without(*missing: str):
        def version(dist: str) -> str:
            if dist in missing:
                raise importlib.metadata.PackageNotFoundError(dist)
            return real(dist)

        return version

    salts = []
    for missing in ((), ("tree-sitter-bash",), ("tree-sitter", "tree-sitter-bash", "tree-sitter-make"), ("pyyaml",)):
        monkeypatch.setattr(importlib.metadata, "version", without(*missing))
        cache_module.salt.cache_clear()
        salts.append(cache_module.salt())
    cache_module.salt.cache_clear()
    assert len(set(salts)) == len(salts)


def test_a_project_in_a_folder_whose_name_is_not_utf8_gets_its_default_cache(tmp_path):
    """The default cache is a folder per project, named by a hash of the project's root: hashed
    as UTF-8 text, a root whose name is not UTF-8 ended every lint and rewrite in "internal error:
    UnicodeEncodeError" before any file (seventeenth read)."""
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")) / "proj"
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "m.py").write_bytes(CUDA)
    env = {"XDG_CACHE_HOME": str(tmp_path / "uc"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    for _ in range(2):  # cold, then warm from the cache
        out = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=root, env=env)
        assert out.returncode == 1 and b"m.py:" in out.stdout, out.stdout + out.stderr
    assert list((tmp_path / "uc" / "porter").glob("*/v3/stat-*.idx"))


def test_a_finding_read_back_links_to_this_install_s_docs(tmp_path, monkeypatch):
    """A finding's link is a file URI of the install that made it. Stored with the finding, the
    entry and the stat index of another install of the same porter (another venv sharing the
    cache: the same salt) gave its findings links into that install's docs, gone with it
    (seventeenth read). Read back, a finding links to this install's page of its rule."""
    import dataclasses

    from porter.config.ruledata import all_rules
    from porter.config.settings import Settings
    from porter.core.findings import FileResult, FileStatus
    from porter.pipeline import cache as cache_module
    from porter.pipeline import statindex
    from porter.pipeline.port import port_source

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    store = cache_module.Cache(tmp_path / "cache")
    made = port_source(CUDA, "m.py", Settings(target="xla"))
    assert made.findings and made.new_source is not None
    other = [dataclasses.replace(f, doc_url="file:///gone/venv/docs/rules.md#x") for f in made.findings]
    key = store.key(CUDA, "m.py", Settings(target="xla"))
    store.put(key, dataclasses.replace(made, findings=other))
    hit = store.get(key, "m.py", CUDA)
    assert hit is not None and [f.doc_url for f in hit.findings] == [all_rules()[f.code].doc_url for f in other]

    (tmp_path / "m.py").write_bytes(CUDA)
    st = (tmp_path / "m.py").stat()
    index = statindex.StatIndex(store, [tmp_path], Settings(target="xla"))
    result = FileResult(path="m.py", status=FileStatus.UNCHANGED, findings=other, original_source=CUDA)
    index.record("m.py", st, CUDA, False, b"", statindex.context_key((), None), None, result)
    index.save()
    again = statindex.StatIndex(store, [tmp_path], Settings(target="xla"))
    rec = again.lookup("m.py", st)
    answered = again.answer("m.py", rec, tmp_path / "m.py") if rec is not None else None
    assert answered is not None
    assert [f.doc_url for f in answered.findings] == [all_rules()[f.code].doc_url for f in other]


def _salt_sources(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """A rule folder, a package and a folder on sys.path of the test's own, for `salt`."""
    from porter.pipeline import cache as cache_module

    rules, package, site = tmp_path / "rules", tmp_path / "porter", tmp_path / "site"
    (rules / "api").mkdir(parents=True)
    (rules / "a.toml").write_text("x = 1\n")
    (rules / "api" / "t.json").write_text("{}\n")
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "m.py").write_text("x = 1\n")
    site.mkdir()
    monkeypatch.setattr(cache_module, "_sources", lambda: (rules, package))
    monkeypatch.setattr(cache_module, "salt", cache_module.salt.__wrapped__)  # (no run's salt remembered)
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setenv("PORTER_CACHE_KEY", "the user's secret")
    return rules, package, site


def test_the_salt_is_read_from_its_memo_while_nothing_it_is_worked_out_from_changed(tmp_path, monkeypatch):
    """Each run worked the salt out again: porter's code and rule data read and hashed (3.8 MB)
    and 7 packages' versions asked, 15 ms of a warm lint of the 1.2M-line corpus (30 with the
    import of importlib.metadata). The cache folder keeps it, sealed, beside the `stat` of
    every file it was worked out from and of every folder on sys.path, and a run takes it from
    there while those are unchanged: an edit that keeps the size and puts the mtime back, a new
    rule file, a package installed or removed where Python looks, each makes it worked out
    again; so does a memo the user's key does not vouch for."""
    from porter.pipeline import cache as cache_module

    rules, package, site = _salt_sources(tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "RACY_NS", 0)
    real = cache_module.salt
    worked: list[str] = []

    def counting() -> str:
        worked.append(real())
        return worked[-1]

    monkeypatch.setattr(cache_module, "salt", counting)

    def fresh() -> str:  # a new run's
        return cache_module.Cache(tmp_path / "cache").salt()

    first = fresh()
    assert worked == [first] and [fresh(), fresh()] == [first, first] and len(worked) == 1
    module = package / "sub" / "m.py"
    before = module.stat()
    module.write_text("x = 2\n")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = fresh()
    assert len(worked) == 2 and second != first and fresh() == second and len(worked) == 2
    (rules / "api" / "new.json").write_text("[]\n")
    third = fresh()
    assert len(worked) == 3 and third not in (first, second) and fresh() == third and len(worked) == 3
    (site / "tree_sitter-9.9.dist-info").mkdir()  # (`version("tree-sitter")` finds it: the salt changes)
    fourth = fresh()
    assert len(worked) == 4 and fourth != third and fresh() == fourth and len(worked) == 4
    monkeypatch.setenv("PORTER_CACHE_KEY", "someone else's secret")
    assert fresh() == fourth and len(worked) == 5


def test_a_salt_worked_out_from_files_changed_within_the_racy_window_is_not_kept(tmp_path, monkeypatch):
    """As the stat index's records: a file changed in the same clock tick as its `stat` was
    taken could change again without changing it, so no memo is kept then."""
    from porter.pipeline import cache as cache_module

    _salt_sources(tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "RACY_NS", 3600 * 10**9)
    assert cache_module.Cache(tmp_path / "cache").salt() == cache_module.salt()
    assert not list((tmp_path / "cache").rglob("salt-*.memo"))


_FULL_DISK = """
import errno, os, sys
import porter.pipeline.cache as cache, porter.pipeline.statindex as statindex
def full(*args):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(args[0]))
cache._write_at = full
sys.argv[0] = "porter"
from porter.cli import main
main()
"""


def test_a_full_cache_disk_is_said_once_and_the_results_stay_right(tmp_path):
    """A cache on a full disk (or past its quota) kept nothing and said nothing: every run was
    cold, unsaid. Each write of the cache (entries, the stat index, the salt's memo) raises
    ENOSPC here, as a full tmpfs does: the run says once that new results are not kept, and
    its findings are those of a run without the cache."""
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.pop("PORTER_CACHE_DIR", None)
    porter("lint", ".", "--target", "xla", cwd=tmp_path, env=env)  # the cache folder is made, then the disk fills
    (tmp_path / "n.py").write_bytes(CUDA + b"y = torch.cuda.device_count()\n")
    cold = porter("lint", ".", "--target", "xla", "--output-format", "concise", "--no-cache", cwd=tmp_path, env=env)
    for command in (("lint", ".", "--output-format", "concise"), ("rewrite", ".", "--diff")):
        out = subprocess.run(
            [sys.executable, "-c", _FULL_DISK, *command, "--target", "xla"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=120,
        )
        err = out.stderr.decode()
        assert out.returncode == 1 and b"m.py" in out.stdout, err
        assert err.count("note: the cache is full: cannot write") == 1, err
        assert "No space left on device: new results are not kept" in err, err
        if command[0] == "lint":
            assert out.stdout == cold.stdout


@pytest.mark.parametrize("home", [".", "rel", ""])
def test_a_relative_or_empty_home_puts_neither_key_nor_cache_in_the_project(tmp_path, monkeypatch, home):
    """`HOME=.` (as some container images and CI steps set) or `HOME=rel` put the user's cache
    key and cache in the folder porter ran in, the project: a project's author could ship a key
    and entries it signs, and they were trusted (a relative XDG folder had the same effect,
    eighteenth read); an empty HOME put them in `/`. A HOME that is not an absolute path is no
    home: the account's is used, and without one the key and cache are off, said once."""
    import pwd
    from types import SimpleNamespace

    from porter.pipeline import cache

    account = tmp_path / "account"
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: SimpleNamespace(pw_dir=str(account)))
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PORTER_CACHE_DIR", "PORTER_CACHE_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", home)
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    assert cache.key_path().is_relative_to(account), cache.key_path()
    store = cache.Cache.for_paths([project])
    assert store.enabled and store.directory.is_relative_to(account), store.directory
    assert list(project.iterdir()) == []

    def no_account(uid: int) -> None:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_account)
    monkeypatch.setenv(cache.KEY_ENV, "a secret")  # (the key would do: the folder is what is refused)
    store = cache.Cache.for_paths([project])
    assert not store.enabled and "no home folder" in (store.problem or ""), store.problem
    monkeypatch.delenv(cache.KEY_ENV)
    assert "no home folder" in (cache.user_key()[1] or "")
    assert list(project.iterdir()) == []


def _own_write(kind: str, store, tmp_path: Path, monkeypatch):
    """Make `store` write its `kind` of file (the index state, the salt's memo, the stat index);
    return (the glob of its name, a check that a new run's cache reads it back)."""
    from porter.config.settings import Settings
    from porter.pipeline import cache as cache_module
    from porter.pipeline.statindex import StatIndex

    if kind == "salt memo":
        salt = store.salt()

        def worked_out() -> str:
            raise AssertionError("worked out again: the memo was not kept")

        return "salt-*.memo", lambda new: (monkeypatch.setattr(cache_module, "salt", worked_out), new.salt() == salt)[1]
    if kind == "index state":
        store.put_state("k", {"answers": [1]})
        return "index-state-*.json", lambda new: new.get_state("k") == {"answers": [1]}
    (tmp_path / "k.cu").write_bytes(b"__global__ void k() {}\n")
    index = StatIndex(store, [tmp_path], Settings(target="xla"))
    index.record_native("k.cu", (tmp_path / "k.cu").stat(), b"__global__ void k() {}\n", False)
    index.save()
    return "stat-*.idx", lambda new: "k.cu" in StatIndex(new, [tmp_path], Settings(target="xla")).native_old


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("kind", ["index state", "salt memo", "stat index"])
def test_each_of_the_cache_s_own_files_is_kept_and_never_written_through_a_link(tmp_path, monkeypatch, kind, swapped):
    """The project index's kept state, the salt's memo and the stat index share the entries'
    write (`_write_in`) but had no test of their own: each is read back by a new run's cache,
    and with `v3/` swapped for a link (another user's, to a folder of theirs) as its temporary
    is made, it lands in the folder porter opened, nothing in theirs (twenty-fifth read)."""
    from porter.pipeline import cache as cache_module

    _salt_sources(tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "RACY_NS", 0)
    store = cache_module.Cache(tmp_path / "cache")
    assert store.enabled, store.problem
    if kind != "salt memo":
        store.salt()  # (its memo written before the write looked at)
    theirs, moved = tmp_path / "theirs", store.entries.with_name("v3-moved")
    theirs.mkdir()
    real_open = os.open

    def opening(path, flags, *args, **kwargs):
        if swapped and flags & os.O_CREAT and str(path).endswith(".tmp") and not moved.exists():
            store.entries.rename(moved)
            store.entries.symlink_to(theirs, target_is_directory=True)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opening)
    name, read_back = _own_write(kind, store, tmp_path, monkeypatch)
    monkeypatch.setattr(os, "open", real_open)
    assert [p.name for p in theirs.rglob("*")] == []
    if swapped:
        assert moved.exists(), "the swap was not made: the test tried nothing"
        assert len(list(moved.glob(name))) == 1
        return
    assert len(list(store.entries.glob(name))) == 1
    assert read_back(cache_module.Cache(tmp_path / "cache"))


@pytest.mark.parametrize("kind", ["entry", "index state", "salt memo", "stat index", "sweep"])
def test_the_cache_folder_swapped_for_a_link_mid_run_takes_nothing_elsewhere(tmp_path, monkeypatch, kind):
    """The cache folder (not `v3/`: the folder named, which another user who can write the
    folder above it may swap) swapped for a link to a folder of theirs after the run opened its
    cache: each later write was by path, through the link, into their `v3/`, and the sweep
    removed their files there. Now the run keeps to the folder it opened (twenty-fifth read)."""
    from porter.pipeline import cache as cache_module

    _salt_sources(tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "RACY_NS", 0)
    root, moved, theirs = tmp_path / "cache", tmp_path / "cache-moved", tmp_path / "theirs"
    store = cache_module.Cache(root)
    assert store.enabled, store.problem
    key = "ab" + "c" * 62
    result = cache_module.FileResult("m.py", cache_module.FileStatus.UNCHANGED, original_source=b"")
    if kind != "salt memo":
        store.salt()  # (its memo written before the swap)
    if kind == "sweep":
        store.put(key, result)  # (to be swept: it is made old)
        os.utime(store._path(key), (1, 1))
    (theirs / "v3" / "ab").mkdir(parents=True)
    planted = theirs / "v3" / "ab" / ("b" * 62 + ".json")  # a name porter's sweep removes
    planted.write_bytes(b"theirs")
    os.utime(planted, (1, 1))
    root.rename(moved)
    root.symlink_to(theirs, target_is_directory=True)
    if kind == "entry":
        store.put(key, result)
        assert store.get(key, "m.py", b"") is not None  # (read back from the folder opened)
        name = "ab/*.json"
    elif kind == "sweep":
        assert store.prune() == 1 and not (moved / "v3" / "ab" / (key[2:] + ".json")).exists()
        name = "last-prune"
    else:
        name, _ = _own_write(kind, store, tmp_path, monkeypatch)
    assert sorted(p.relative_to(theirs).as_posix() for p in theirs.rglob("*") if not p.is_dir()) == [
        "v3/ab/" + planted.name
    ]
    assert len(list((moved / "v3").glob(name))) == 1


def test_a_cache_folder_that_is_a_link_as_named_is_followed_once(tmp_path, monkeypatch):
    """The folder named (`--cache-dir`, the default under `~/.cache`) may be a link the user made
    (a cache on another disk): it is followed, as ruff follows a `.ruff_cache` link, once, when the
    run opens its cache; `v3/` in it as a link is not (the run's cache is then off)."""
    from porter.pipeline import cache as cache_module

    monkeypatch.setenv("PORTER_CACHE_KEY", "a CI secret")
    disk = tmp_path / "other-disk"
    disk.mkdir()
    (tmp_path / "cache").symlink_to(disk, target_is_directory=True)
    store = cache_module.Cache(tmp_path / "cache")
    assert store.enabled and store.problem is None, store.problem
    store.put("ab" + "c" * 62, cache_module.FileResult("m.py", cache_module.FileStatus.UNCHANGED))
    assert (disk / "v3" / "ab" / ("c" * 62 + ".json")).is_file() and (disk / "CACHEDIR.TAG").is_file()
    (tmp_path / "v3-elsewhere").mkdir()
    (disk / "v3").rename(tmp_path / "v3-moved")
    (disk / "v3").symlink_to(tmp_path / "v3-elsewhere", target_is_directory=True)
    again = cache_module.Cache(tmp_path / "cache")
    assert not again.enabled and "link" in (again.problem or ""), again.problem


def test_a_shard_folder_that_is_a_link_is_not_followed_on_a_read(tmp_path, monkeypatch):
    """The write refuses a shard folder (`v3/ab`) that is a link; the read opened `ab/NAME`
    relative to `v3/`, following it: an entry in the link's folder was read, and the refresh
    of an old one set the mtime of a file in that folder (ctleft2's leftover). Now the shard
    is opened without following a link, as the write opens it: a miss, nothing touched."""
    from porter.pipeline import cache as cache_module

    _salt_sources(tmp_path, monkeypatch)
    monkeypatch.setattr(cache_module, "RACY_NS", 0)
    store = cache_module.Cache(tmp_path / "cache")
    assert store.enabled, store.problem
    key = "ab" + "c" * 62
    result = cache_module.FileResult("m.py", cache_module.FileStatus.UNCHANGED, original_source=b"")
    store.put(key, result)
    shard, theirs = store._path(key).parent, tmp_path / "theirs"
    shard.rename(theirs)  # the entry, sealed under the user's key, now in a folder of another's
    shard.symlink_to(theirs, target_is_directory=True)
    entry = theirs / (key[2:] + ".json")
    os.utime(entry, (1, 1))  # old: a read would refresh it
    assert store.get(key, "m.py", b"") is None
    assert entry.stat().st_mtime == 1 and store.misses == 1
    shard.unlink()
    theirs.rename(shard)  # the same folder, not a link: read, and refreshed
    assert store.get(key, "m.py", b"") is not None
    assert (shard / entry.name).stat().st_mtime > 1


def test_entries_of_another_user_that_cannot_be_read_are_said_once(tmp_path):
    """porter writes each entry for its writer only (0600): a team sharing one cache folder and
    `PORTER_CACHE_KEY` ran cold for each other's files, unsaid (twenty-sixth read's leftover).
    Run as root without its right past file modes, on entries another user wrote: said once,
    naming that user; the results are a cold run's."""
    from tests.safety.test_trace_files import _without_dac_override

    prefix = _without_dac_override()
    if not prefix:
        pytest.skip("needs root and setpriv to run without CAP_DAC_OVERRIDE")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_bytes(CUDA)
    cache = tmp_path / "shared"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PORTER_CACHE_KEY": "team-secret"}
    run = [*prefix, sys.executable, "-m", "porter", "lint", ".", "-t", "xla", "--cache-dir", str(cache)]
    cold = subprocess.run([*run[len(prefix) :], "--no-cache"], cwd=tmp_path, env=env, capture_output=True)
    subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert len(_entries(cache)) >= 2
    for entry in (p for p in (cache / "v3").rglob("*") if p.is_file()):
        os.chown(entry, 65534, 65534)  # as a teammate's run left them: 0600, theirs
    out = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = out.stderr.decode()
    assert out.stdout == cold.stdout and "Traceback" not in err, err
    said = [line for line in err.splitlines() if "cannot read" in line]
    assert len(said) == 1 and "written by user 65534" in said[0] and str(cache) in said[0], err


def _as_a_teammate(tmp_path: Path) -> tuple[list[str], list[str], dict[str, str], Path, bytes]:
    """(the prefix that runs as root without its right past file modes, the lint command, its
    environment, the shared cache folder, a cold run's stdout) over two CUDA files: what a
    teammate's run on one cache folder and `PORTER_CACHE_KEY` meets (the tests below)."""
    from tests.safety.test_trace_files import _without_dac_override

    prefix = _without_dac_override()
    if not prefix:
        pytest.skip("needs root and setpriv to run without CAP_DAC_OVERRIDE")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_bytes(CUDA)
    cache = tmp_path / "shared"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PORTER_CACHE_KEY": "team-secret"}
    run = [sys.executable, "-m", "porter", "lint", ".", "-t", "xla", "--cache-dir", str(cache)]
    cold = subprocess.run([*run, "--no-cache"], cwd=tmp_path, env=env, capture_output=True).stdout
    subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert len(_entries(cache)) >= 2
    return prefix, run, env, cache, cold


def test_a_cache_folder_a_teammate_made_is_used_not_refused(tmp_path):
    """The cache's marks (`.gitignore`, `CACHEDIR.TAG`) were written 0600 like its entries: a
    second user on the same cache folder could not read them, and every run of theirs stopped
    with "holds files that are not porter's cache (v3, ...)", exit 2 (twenty-eighth read, two
    users for real). The marks are for everyone to read; the teammate's run is a cold one."""
    prefix, run, env, cache, cold = _as_a_teammate(tmp_path)
    for path in (cache, *cache.rglob("*")):
        os.chown(path, 65534, 65534, follow_symlinks=False)  # all of it the teammate's
    out = subprocess.run([*prefix, *run], cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = out.stderr.decode()
    assert out.returncode == 1 and out.stdout == cold and "not porter's cache" not in err, err
    for mark in (".gitignore", "CACHEDIR.TAG"):
        assert stat.S_IMODE((cache / mark).stat().st_mode) & 0o044 == 0o044


def test_a_write_refused_in_a_teammate_s_folder_of_the_cache_is_said_once(tmp_path):
    """A cache folder every member can write (`v3/` 0777), whose shard folders a teammate made
    under a umask of 022 (0755, theirs): each new entry of this user's was refused there
    (EACCES), unsaid, and every run was cold for those files (twenty-seventh read's leftover).
    Said once after the run, naming a folder and its owner; the results are a cold run's."""
    prefix, run, env, cache, cold = _as_a_teammate(tmp_path)
    os.chmod(cache / "v3", 0o777)
    for path in (cache / "v3").rglob("*"):
        os.chown(path, 65534, 65534)
    out = subprocess.run([*prefix, *run], cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = out.stderr.decode()
    assert out.stdout == cold and "Traceback" not in err, err
    said = [line for line in err.splitlines() if "cannot write" in line]
    assert len(said) == 1 and "belongs to user 65534" in said[0] and str(cache / "v3") in said[0], err


def test_a_cache_folder_whose_marks_an_older_porter_kept_from_a_teammate_says_so(tmp_path):
    """A cache folder made by an older porter, which wrote its marks 0600: a teammate's run
    stops, as it must (whose folder it is cannot be read), but was told "holds files that are
    not porter's cache", which is untrue. It now says which mark cannot be read, whose it
    is, and what to do (twenty-eighth read)."""
    prefix, run, env, cache, _ = _as_a_teammate(tmp_path)
    for path in (cache, *cache.rglob("*")):
        os.chown(path, 65534, 65534, follow_symlinks=False)
    for mark in (".gitignore", "CACHEDIR.TAG"):
        (cache / mark).chmod(0o600)  # as an older porter wrote them
    out = subprocess.run([*prefix, *run], cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = out.stderr.decode()
    assert out.returncode == 2 and "its .gitignore cannot be read (user 65534's, mode 600)" in err, err
    assert "chmod a+r" in err and "not porter's cache" not in err, err
