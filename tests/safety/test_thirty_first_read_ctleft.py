"""The thirty-first read's helper on the cache and terminal leftovers of the thirtieth (ctleft, issue 24):
docs/reads/49-ctleft-attempts.md."""

from __future__ import annotations

import json

from tests.safety.conftest import CUDA, porter


def test_a_sarif_run_whose_fix_could_not_be_written_is_not_said_successful(tmp_path):
    """`lint --fix --output-format sarif` where one file's fix could not be written (read-only):
    the run left with 2, but its SARIF said `"executionSuccessful": true` with no notification, so a
    consumer of the document read a run that did what it was asked. Now false, with the file and why."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "m.py").chmod(0o444)
    (tmp_path / "n.py").write_bytes(CUDA)
    done = porter("lint", "--fix", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", "--output-format", "sarif", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    invocation = json.loads(done.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"].startswith("m.py: its fixes were not written (no write permission")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert (tmp_path / "m.py").read_bytes() == CUDA


def test_the_cache_note_names_folders_of_this_users_own_as_such(tmp_path, monkeypatch):
    """Folders of the cache that refused a write (append-only shard folders: `chattr +a`) and are
    the user's own were named "and 3 other folders of the cache (of user 0)" to root, which reads
    as another user's. Now "this user's own"; another user's are still named by number."""
    import errno
    import os

    from porter.pipeline import cache

    monkeypatch.setenv("PORTER_CACHE_KEY", "a secret of the test")
    monkeypatch.setattr(cache, "NOT_KEPT", [])
    store = cache.Cache(tmp_path / "c")
    shards = [store.entries / name for name in ("a0", "b1", "c2")]
    for shard in shards:
        shard.mkdir(parents=True)
        store._refused_in(shard, OSError(errno.EPERM, "the folder is append-only (chattr +a)"))
    (line,) = cache.NOT_KEPT
    assert line.endswith("; and 2 other folders of the cache (this user's own)"), line
    assert f"user {os.geteuid()}" not in line
