"""The thirtieth read of the cache and the state porter reads back (issue 24): a full file
system under the project, and what the run then says it did; the guard's view of git."""

from __future__ import annotations

import errno
import json
import os
import sys

import pytest
from typer.testing import CliRunner

from tests.safety.conftest import CUDA, PORTED, committed_repo, git


def _full_for(monkeypatch, name: str) -> None:
    """`atomic_write` of the file `name` fails as on a full disk (ENOSPC); the others are written."""
    mod = sys.modules["porter.cli.writes"]
    real = mod.atomic_write

    def full(path, data, *args, **kwargs):
        if path.name == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data, *args, **kwargs)

    monkeypatch.setattr(mod, "atomic_write", full)


def test_a_rewrite_that_could_not_write_a_file_does_not_count_its_sites_as_ported(tmp_path, monkeypatch):
    """On a full disk `rewrite` wrote neither file ("Files: 2 scanned, 0 rewritten, 2 failed",
    exit 2), yet its headline, by-rule table and `--report` said "Readiness: 100% — 2 of 2
    CUDA-specific sites ported automatically" (the JSON report: `ported` 2, `share` 1.0): a PR
    comment or a CI step reading the report saw a finished port of an untouched tree (thirtieth
    cache read, a 256 KiB tmpfs). A file whose port was not written is now a failed file."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"a.py": CUDA, "b.py": CUDA})
    _full_for(monkeypatch, "b.py")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1", "--report", str(report)])
    assert result.exit_code == 2, result.output
    assert (repo / "a.py").read_bytes() == PORTED
    assert (repo / "b.py").read_bytes() == CUDA
    summary = json.loads(report.read_text())["summary"]
    assert summary["files"]["changed"] == 1 and summary["files"]["errors"] == 1
    assert summary["not_checked"] == ["b.py"]
    assert summary["readiness"]["ported"] == 1, summary["readiness"]
    assert "1 of 1 CUDA-specific sites ported" in result.output
    assert "1 file not written" in result.output  # (checked, not written: thirty-first read)
    assert "failed b.py: cannot write: No space left on device; left unchanged" in result.output


def _ignore_stat(repo):
    """`core.ignoreStat`: git marks the files it commits assume-unchanged (for slow disks)."""
    git("config", "core.ignoreStat", "true", cwd=repo)
    os.utime(repo / "m.py", (0, 0))  # its stat changed, its bytes not: `git add` sets the bit
    git("add", "m.py", cwd=repo)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged", "core.ignoreStat"])
def test_a_file_git_is_told_to_overlook_is_not_written_over(tmp_path, monkeypatch, flag):
    """A tracked file with an uncommitted edit that `git update-index --skip-worktree` (or
    `--assume-unchanged`) hides: `git status --porcelain` lists nothing, so the guard took it for
    committed and clean, `rewrite` wrote over it (exit 0), and afterwards `git status` and `git
    diff` showed neither the edit nor the port: git could give back neither (thirtieth cache read,
    git 2.39.5; `core.ignoreStat` sets the same bit on the files git adds). Now such a file is
    refused, as a file with uncommitted changes is."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    if flag == "core.ignoreStat":
        _ignore_stat(repo)
    edited = CUDA + b"# work not committed\n"
    (repo / "m.py").write_bytes(edited)
    if flag != "core.ignoreStat":
        git("update-index", flag, "m.py", cwd=repo)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1", "-q"])
    assert result.exit_code == 2, result.output
    assert (repo / "m.py").read_bytes() == edited
    assert "m.py: git is told to overlook its changes" in " ".join(result.output.split())
    allowed = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1", "-q", "--allow-dirty"])
    assert allowed.exit_code == 0, allowed.output
    assert (repo / "m.py").read_bytes() != edited
