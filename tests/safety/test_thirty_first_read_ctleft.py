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
    done = porter(
        "lint", "--fix", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", "--output-format", "sarif", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    invocation = json.loads(done.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    text = note["message"]["text"]
    assert text.startswith("m.py: no write permission") and text.endswith("its fixes are not applied"), text
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


def test_the_cache_key_made_in_an_append_only_folder_leaves_no_temporary(tmp_path):
    """The user's config folder flagged append-only (`chattr +a`): the key was made through a named
    `.cache-key.XXXX.tmp`, linked in, which could then not be removed and stayed for good. Now it
    is written into a file with no name (`O_TMPFILE`) and linked in whole: the key alone."""
    from porter.pipeline import cache
    from tests.safety.test_thirtieth_read_ctleft import _flag

    folder = tmp_path / "porter"
    folder.mkdir()
    _flag("+a", folder)
    try:
        cache._make_key(folder / "cache-key")
        left = sorted(p.name for p in folder.iterdir())
        key = cache._read_key(folder / "cache-key")
    finally:
        _flag("-a", folder)
    assert left == ["cache-key"]
    assert len(key) == cache._KEY_BYTES
    assert (folder / "cache-key").stat().st_mode & 0o777 == 0o600


def _words(text: bytes) -> str:
    return " ".join(text.decode().split())


def test_a_rewrite_whose_file_could_not_be_written_says_it_not_written_not_unchecked(tmp_path):
    """A read-only file porter ported but could not write: the readiness said "(1 file not
    checked, listed below)", a file it had checked, and on the terminal nothing is below (the
    failed files are printed above the sentence). Now "not written", "listed above" on the
    terminal, "listed below" in the Markdown report, where the list follows."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "m.py").chmod(0o444)
    (tmp_path / "n.py").write_bytes(CUDA)
    done = porter("rewrite", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", "--report", "r.md", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    said = _words(done.stdout)
    assert "Readiness: 100% of the files checked and written (1 file not written, listed above)" in said, said
    assert "not checked" not in said
    report = _words((tmp_path / "r.md").read_bytes())
    assert "of the files checked and written (1 file not written, listed below)" in report
    assert (tmp_path / "m.py").read_bytes() == CUDA
    done = porter("rewrite", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", "--report", "r.html", cwd=tmp_path)
    page = _words((tmp_path / "r.html").read_bytes())
    assert "<span>files not written</span>" in page and "files not checked" not in page


def test_the_terminal_readiness_points_up_to_the_failed_files(tmp_path):
    """A file that does not parse: the terminal said "(1 file not checked, listed below)" under
    its own "failed a.py:2: ..." line, with nothing below. Now "listed above" there."""
    (tmp_path / "a.py").write_bytes(b"import torch\nx = torch.zeros(3).cuda(\n")
    (tmp_path / "n.py").write_bytes(CUDA)
    done = porter("rewrite", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", cwd=tmp_path)
    said = _words(done.stdout)
    assert "(1 file not checked, listed above)" in said, said
    assert said.index("failed a.py:2") < said.index("listed above")
