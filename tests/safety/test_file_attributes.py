"""Contract 1 (writing): a rewritten file keeps what the file system keeps beside its bytes.

Porter replaces a file by renaming a complete new one over it (never half of each). The new
file gets the original's permission bits, owner and group, and its extended attributes (POSIX
ACLs are stored there, and a user's tags); a second hard link cannot follow a rename, so the
run says so."""

from __future__ import annotations

import os

import pytest

from tests.safety.conftest import CUDA, PORTED, committed_repo, git, porter


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="extended attributes are Linux's here")
def test_a_rewritten_file_keeps_its_extended_attributes_and_names_its_hard_links(tmp_path):
    """The twelfth read found a user.* attribute dropped and a hard link silently left with
    the CUDA bytes (adversarial reads 12 and 14)."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, "n.py": CUDA})
    try:
        os.setxattr(repo / "m.py", "user.reviewed", b"yes")
    except OSError:
        pytest.skip("this file system holds no user extended attributes")
    os.link(repo / "n.py", tmp_path / "elsewhere.py")
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    err = out.stderr.decode()
    assert out.returncode == 0, err
    assert (repo / "m.py").read_bytes() == PORTED and (repo / "n.py").read_bytes() == PORTED
    assert os.getxattr(repo / "m.py", "user.reviewed") == b"yes"
    assert (tmp_path / "elsewhere.py").read_bytes() == CUDA
    shown = " ".join(err.split())
    assert "n.py: has 1 other hard link, which keeps the old content" in shown, err
    assert "m.py: has" not in shown, err


def test_hard_links_the_same_run_rewrites_are_not_said_to_keep_the_old_content(tmp_path):
    """Two names of one file, both in the run, are both rewritten (each becomes its own file):
    only a name the run leaves keeps the old bytes, and only that one is counted (the
    fifteenth read found the warning claiming otherwise)."""
    repo = committed_repo(tmp_path / "repo", {"a.py": CUDA})
    os.link(repo / "a.py", repo / "b.py")
    os.link(repo / "a.py", tmp_path / "elsewhere.py")
    _commit(repo, "b.py")
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    err = out.stderr.decode()
    assert out.returncode == 0, err
    assert (repo / "a.py").read_bytes() == PORTED and (repo / "b.py").read_bytes() == PORTED
    assert (tmp_path / "elsewhere.py").read_bytes() == CUDA
    shown = " ".join(err.split())
    assert "has 2 other hard links" not in shown, err
    assert shown.count("has 1 other hard link, which keeps the old content") == 2, err

    repo2 = committed_repo(tmp_path / "repo2", {"a.py": CUDA})
    os.link(repo2 / "a.py", repo2 / "b.py")
    _commit(repo2, "b.py")
    out = porter("rewrite", ".", "--target", "xla", cwd=repo2)
    assert out.returncode == 0 and "hard link" not in out.stderr.decode(), out.stderr.decode()


def _commit(repo, name):
    git("add", name, cwd=repo)
    git("commit", "-qm", name, cwd=repo)
