"""The thirtieth read's second wave on writes, the write guard and the cache (cache2, issue 24):
what the first wave's file flags left to the project's own writes."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from tests.safety.conftest import CUDA, committed_repo
from tests.safety.test_thirtieth_read_ctleft import _flag


def _said(output: str) -> str:
    return " ".join(output.split())


def test_a_rewrite_in_an_append_only_folder_leaves_no_temporary_there(tmp_path, monkeypatch):
    """`chattr +a` on the project's folder: `rewrite` made its `.m.py.….porter-tmp` beside the
    file, could neither rename it over `m.py` nor remove it, and left it there for good, one more
    at every run (an untracked file in the user's tree), said as "Operation not permitted". Now
    no temporary is made in such a folder and the warning says why."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _flag("+a", repo)
    try:
        result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1"])
        left = sorted(p.name for p in repo.iterdir())
    finally:
        _flag("-a", repo)
    assert left == [".git", "m.py"]
    assert result.exit_code == 2, result.output
    assert (repo / "m.py").read_bytes() == CUDA
    assert "m.py: cannot write: the folder is append-only (chattr +a); left unchanged" in _said(result.output)


@pytest.mark.parametrize(
    "option",
    [["lint", "m.py", "--output-format", "json", "-o"], ["rewrite", "m.py", "--diff", "-q", "--report"]],
    ids=["lint -o", "rewrite --report"],
)
def test_an_output_named_in_an_append_only_folder_is_refused_before_the_run(tmp_path, monkeypatch, option):
    """`-o out/l.json` (and `--report out/r.md`) where `out/` is append-only: the probe before the
    run passed (a nameless file), the write after it left `.l.json.XXXX.tmp` in `out/` for good
    (no run ever removes it) and said "Operation not permitted". Now the flag is said before the
    run, and nothing is left."""
    from porter.cli import app

    (tmp_path / "m.py").write_bytes(CUDA)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    name, said = ("out/l.json", "--output-file") if option[0] == "lint" else ("out/r.md", "--report")
    _flag("+a", out)
    try:
        result = CliRunner().invoke(app, [*option, name, "--target", "xla", "--no-cache"])
        left = sorted(p.name for p in out.iterdir())
    finally:
        _flag("-a", out)
    assert left == []
    assert result.exit_code == 2, result.output
    assert f"cannot write {said} {name}: the folder is append-only (chattr +a)" in _said(result.output)


def test_an_append_only_file_is_said_as_such(tmp_path, monkeypatch):
    """`chattr +a m.py`: the rename over it fails, said as "cannot write: Operation not permitted"
    (as root, a file porter may write by its mode). Now the flag is said."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _flag("+a", repo / "m.py")
    try:
        result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1", "-q"])
        left = sorted(p.name for p in repo.iterdir())
    finally:
        _flag("-a", repo / "m.py")
    assert left == [".git", "m.py"]
    assert result.exit_code == 2, result.output
    assert "m.py: cannot write: the file is append-only (chattr +a); left unchanged" in _said(result.output)


def test_a_series_split_into_an_append_only_folder_leaves_no_temporary_there(tmp_path, monkeypatch):
    """`--split out` where `out/` is an empty append-only folder: the first patch's temporary was
    left there for good ("Operation not permitted"), and the folder was then "not empty" to the
    next run. Now the flag is said and the folder stays empty."""
    from porter.cli import app

    (tmp_path / "m.py").write_bytes(CUDA)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _flag("+a", out)
    try:
        result = CliRunner().invoke(app, ["rewrite", "m.py", "--target", "xla", "--no-cache", "-q", "--split", "out"])
        left = sorted(p.name for p in out.iterdir())
    finally:
        _flag("-a", out)
    assert left == []
    assert result.exit_code == 2, result.output
    assert "cannot write the series into --split out: the folder is append-only (chattr +a)" in _said(result.output)


def test_an_immutable_file_is_said_as_such_not_as_read_only(tmp_path, monkeypatch):
    """`chattr +i m.py` (mode 0644): `rewrite` said "no write permission (read-only file)", which
    its mode denies (root may write it by its mode; the flag forbids it). Now the flag is said."""
    from porter.cli import app

    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _flag("+i", repo / "m.py")
    try:
        result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--jobs", "1", "-q"])
    finally:
        _flag("-i", repo / "m.py")
    assert result.exit_code == 2, result.output
    assert (repo / "m.py").read_bytes() == CUDA
    assert "m.py: cannot write: the file is immutable (chattr +i); left unchanged" in _said(result.output)


def test_an_out_dir_copy_that_failed_part_way_says_it_holds_a_partial_copy(tmp_path, monkeypatch):
    """`--out-dir out` whose write of a port failed (a full disk) said only "cannot write into
    --out-dir out", exit 2, and left a folder holding every file: `a.py` ported, `b.py` and `c.py`
    still CUDA code. It is now said that the copy is partial (as an interrupted copy is)."""
    import errno

    from porter.cli import app

    mod = sys.modules["porter.cli.rewrite"]
    real = mod.write_under

    def full(root, dest, data, mode=None):
        if dest.name == "b.py":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(root, dest, data, mode)

    monkeypatch.setattr(mod, "write_under", full)
    (tmp_path / "src").mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / "src" / name).write_bytes(CUDA)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["rewrite", "src", "--target", "xla", "--no-cache", "--out-dir", "out"])
    assert result.exit_code == 2, result.output
    assert (tmp_path / "out" / "b.py").read_bytes() == CUDA  # copied as it was, never ported
    said = _said(result.output)
    assert "note: out holds a partial copy: some of its files are not ported" in said
    assert "cannot write into --out-dir out: No space left on device" in said
