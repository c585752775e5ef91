"""Contract 3: `--out-dir` never writes outside itself, refuses a folder that is not empty
unless told (`--force`), and an overlap with the inputs is a usage error (exit 2)."""

from __future__ import annotations

from pathlib import Path

from tests.safety.conftest import CUDA, PORTED, porter


def _src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_bytes(CUDA)
    (src / "m.py").chmod(0o750)
    (src / "pkg").mkdir()
    (src / "pkg" / "n.py").write_bytes(CUDA)
    return src


def _usage_error(out, *words: str) -> None:
    err = out.stderr.decode()
    assert out.returncode == 2, (out.returncode, err)
    assert "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_links_in_the_output_folder_are_replaced_not_written_through(tmp_path):
    src = _src(tmp_path)
    victim_dir = tmp_path / "elsewhere"
    victim_dir.mkdir()
    (victim_dir / "m.py").write_bytes(b"# not porter's to touch\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "m.py").symlink_to(victim_dir / "m.py")  # a file link
    (out / "pkg").symlink_to(victim_dir)  # a folder link
    res = porter("rewrite", "src", "--target", "xla", "--out-dir", "out", "--force", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (victim_dir / "m.py").read_bytes() == b"# not porter's to touch\n"
    assert sorted(p.name for p in victim_dir.iterdir()) == ["m.py"]
    assert not (out / "m.py").is_symlink() and (out / "m.py").read_bytes() == PORTED
    assert not (out / "pkg").is_symlink() and (out / "pkg" / "n.py").read_bytes() == PORTED
    assert (src / "m.py").read_bytes() == CUDA
    # the copy keeps each file's permission bits, ported or not
    assert (out / "m.py").stat().st_mode & 0o777 == (src / "m.py").stat().st_mode & 0o777


def test_non_empty_output_folder_is_refused_unless_forced(tmp_path):
    _src(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    res = porter("rewrite", "src", "--target", "xla", "--out-dir", "out", cwd=tmp_path)
    _usage_error(res, "not empty", "--force")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    res = porter("rewrite", "src", "--target", "xla", "--out-dir", "out", "--force", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (out / "m.py").read_bytes() == PORTED and (out / "notes.txt").read_text() == "mine\n"


def test_out_dir_dot_with_a_file_argument_is_an_overlap(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    res = porter("rewrite", "m.py", "--target", "xla", "--out-dir", ".", cwd=tmp_path)
    _usage_error(res, "--out-dir")
    assert (tmp_path / "m.py").read_bytes() == CUDA


def test_out_dir_holding_two_inputs_is_an_overlap(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / f"{d}.py").write_bytes(CUDA)
    res = porter("rewrite", "a", "b", "--target", "xla", "--out-dir", ".", cwd=tmp_path)
    _usage_error(res, "--out-dir")
    assert (tmp_path / "a" / "a.py").read_bytes() == CUDA and (tmp_path / "b" / "b.py").read_bytes() == CUDA


def test_out_dir_naming_an_existing_file_is_a_usage_error(tmp_path):
    _src(tmp_path)
    (tmp_path / "out").write_text("a file\n")
    res = porter("rewrite", "src", "--target", "xla", "--out-dir", "out", cwd=tmp_path)
    _usage_error(res, "out", "not a folder")
    assert len([ln for ln in res.stderr.decode().splitlines() if ln.strip()]) == 1
    assert (tmp_path / "out").read_text() == "a file\n"
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".porter-tmp"))]


def test_an_output_file_a_repository_ships_as_a_link_is_replaced_not_written_through(tmp_path):
    """The third adversarial read: `lint -o lint.sarif` and `--write-baseline` wrote through a
    link of that name, as `--report` does not: a repository shipping `lint.sarif` ->
    `~/.bashrc` had a CI step's `porter lint . -o lint.sarif` overwrite the runner's file. The
    output is written whole and a link is replaced; a device (`-o /dev/stdout`) is still written
    to."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_bytes(b"import torch\nx = torch.randn(3).cuda()\n")
    home = tmp_path / "home"
    home.mkdir()
    for name in ("lint.sarif", "baseline.json"):
        (home / name).write_text("precious\n")
        (repo / name).symlink_to(home / name)
    out = porter("lint", ".", "--target", "xla", "--output-format", "sarif", "-o", "lint.sarif", cwd=repo)
    assert out.returncode == 1, out.stderr
    out = porter("lint", ".", "--target", "xla", "--write-baseline", "baseline.json", cwd=repo)
    assert out.returncode == 0, out.stderr
    for name in ("lint.sarif", "baseline.json"):
        assert (home / name).read_text() == "precious\n"
        assert not (repo / name).is_symlink() and b"DEV001" in (repo / name).read_bytes()
    assert not [p for p in repo.iterdir() if p.name.endswith(".tmp")]
    out = porter("lint", ".", "--target", "xla", "--output-format", "concise", "-o", "/dev/stdout", cwd=repo)
    assert out.returncode == 1 and b"DEV001" in out.stdout, out.stderr


def test_an_output_naming_an_open_descriptor_is_written_to_it_whatever_file_it_is(tmp_path):
    """`porter lint -o /dev/stdout > out.json`: stdout a file, the name was taken for a link to
    a regular file and replaced, so root's `/dev/stdout` became a file holding the findings
    and out.json stayed empty (another user: "Permission denied"); `-o /proc/self/fd/1` failed
    (twenty-second read). A link of the test's own stands for `/dev/stdout`, whose replacement
    on c17e310 would harm the machine."""
    import json
    import os
    import subprocess
    import sys

    from tests.safety.conftest import REPO

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_bytes(CUDA)
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/proc/self/fd/1")
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for name, option in ((stdout, "-o"), ("/proc/self/fd/1", "-o"), (stdout, "--write-baseline")):
        out_json = tmp_path / "out.json"
        with open(out_json, "wb") as fh:
            run = subprocess.run(
                [sys.executable, "-m", "porter", "lint", ".", "--target", "xla"]
                # (a baseline is JSON of its own: `--output-format` beside it is refused, the thirty-third read)
                + (["--output-format", "json"] if option == "-o" else [])
                + [option, str(name)],
                cwd=repo,
                env=env,
                stdout=fh,
                stderr=subprocess.PIPE,
            )
        assert run.returncode in (0, 1), run.stderr
        assert "DEV001" in json.dumps(json.loads(out_json.read_text())), (name, option)
        assert stdout.is_symlink() and os.readlink(stdout) == "/proc/self/fd/1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out.json", "repo", "stdout"]
    # another process's stdout, named by a link a repository ships, is never written through
    other_out = tmp_path / "other.txt"
    with open(other_out, "wb") as fh:
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdout=fh)
    try:
        (repo / "lint.json").symlink_to(f"/proc/{other.pid}/fd/1")
        run = subprocess.run(
            [sys.executable, "-m", "porter", "lint", ".", "--target", "xla", "-o", "lint.json"],
            cwd=repo,
            env=env,
            capture_output=True,
        )
    finally:
        other.kill()
        other.wait()
    assert run.returncode == 1, run.stderr
    assert other_out.read_bytes() == b"" and not (repo / "lint.json").is_symlink()


def test_a_file_whose_name_is_long_but_legal_is_written(tmp_path):
    """A 240-byte name is a legal file name (255 is the limit); the temporary beside it added
    about 30 bytes, so `rewrite` said "cannot write: File name too long" and left it
    unchanged, and `--out-dir` stopped with that error (adversarial read 6)."""
    from tests.safety.conftest import committed_repo

    name = "é" * 20 + "n" * 196 + ".py"  # 239 bytes of UTF-8
    repo = committed_repo(tmp_path / "repo", {name: CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--out-dir", str(tmp_path / "copy"), cwd=repo)
    assert out.returncode == 0, out.stderr.decode()
    assert (tmp_path / "copy" / name).read_bytes() == PORTED
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    assert out.returncode == 0, out.stderr.decode()
    assert (repo / name).read_bytes() == PORTED
    assert sorted(p.name for p in repo.iterdir()) == [".git", name]  # no temporary left


def test_a_file_left_unchanged_is_not_counted_rewritten(tmp_path):
    """A file porter could not write (read-only: a warning, exit 2) was still counted in the
    summary: "Files: 2 scanned, 2 rewritten, ... 0 failed" (adversarial read 6)."""
    import os

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_bytes(CUDA)
    (repo / "b.py").write_bytes(CUDA)
    os.chmod(repo / "b.py", 0o444)
    out = porter("rewrite", ".", "--target", "xla", "--allow-no-vcs", cwd=repo)
    text = out.stdout.decode() + out.stderr.decode()
    assert out.returncode == 2 and "b.py: no write permission (read-only file); left unchanged" in text, text
    assert (repo / "a.py").read_bytes() == PORTED and (repo / "b.py").read_bytes() == CUDA
    assert "Files: 2 scanned, 1 rewritten, 0 unchanged, 0 skipped, 1 failed" in text, text


def test_a_fix_lint_could_not_write_is_not_counted_fixed(tmp_path):
    """`lint --fix` the same: the read-only file's fix was counted "2 fixed, 0 remaining";
    its finding is still there, reported at its place in the file as it is (adversarial read 6)."""
    import os

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_bytes(CUDA)
    (repo / "b.py").write_bytes(CUDA)
    os.chmod(repo / "b.py", 0o444)
    out = porter("lint", ".", "--target", "xla", "--fix", "--allow-no-vcs", "--output-format", "concise", cwd=repo)
    text = out.stdout.decode()
    assert out.returncode == 2 and "b.py: no write permission" in out.stderr.decode(), text
    assert (repo / "a.py").read_bytes() == PORTED and (repo / "b.py").read_bytes() == CUDA
    assert "Found 2 findings (1 fixed, 1 remaining)." in text, text
    assert text.startswith("b.py:2:5: DEV001 [*]"), text
