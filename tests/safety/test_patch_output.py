"""Contract 8: a diff on stdout is a valid patch and nothing else (the summary goes to
stderr); output that is not a terminal is not wrapped at 80 columns."""

from __future__ import annotations

import subprocess

from tests.deps import program
from tests.safety.conftest import CUDA, committed_repo, porter

FILES = {
    "train.py": CUDA + b"torch.cuda.synchronize()\n",
    "pkg/model.py": b"import torch\n\x0c\ndef f(x):\n    return x.cuda()  # form feed above\n",
    "crlf.py": CUDA.replace(b"\n", b"\r\n"),
    "no_newline.py": CUDA.rstrip(b"\n"),
    "plain.py": b"x = 1\n",
    # a name holding a space: its header ends at a tab, as git writes it, or `patch -p1` reads
    # the name up to the space (`a/sub`: no such file; nineteenth read)
    "sub dir/a b.py": CUDA,
}


def _patch(tmp_path):
    repo = committed_repo(tmp_path / "repo", FILES)
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=repo)
    assert out.returncode == 1, out.stderr
    return repo, out


def test_diff_on_stdout_is_only_a_patch(tmp_path):
    _, out = _patch(tmp_path)
    lines = out.stdout.split(b"\n")
    assert lines[-1] == b""
    for line in lines[:-1]:
        assert line[:1] in (b"-", b"+", b" ", b"@", b"\\") or line == b"", line
    assert b"Files:" in out.stderr and b"Files:" not in out.stdout


def test_git_apply_accepts_the_patch(tmp_path):
    repo, out = _patch(tmp_path)
    (tmp_path / "port.patch").write_bytes(out.stdout)
    check = subprocess.run(
        ["git", "apply", "--check", "-v", str(tmp_path / "port.patch")], cwd=repo, capture_output=True
    )
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", str(tmp_path / "port.patch")], cwd=repo, check=True)
    again = porter("rewrite", ".", "--target", "xla", "--diff", cwd=repo)
    assert again.returncode == 0 and again.stdout == b"", again.stdout  # the patch was the whole port


def test_patch_accepts_the_patch(tmp_path):
    patch = program("patch", "apt-get install -y patch")
    repo, out = _patch(tmp_path)
    dry = subprocess.run([patch, "-p1", "--dry-run"], input=out.stdout, cwd=repo, capture_output=True)
    assert dry.returncode == 0, dry.stdout + dry.stderr


def test_output_to_a_pipe_is_not_wrapped_at_80_columns(tmp_path):
    deep = "a_rather_long_folder_name/" * 4 + "with_a_long_module_name_for_the_model.py"
    repo = committed_repo(tmp_path / "repo", {deep: CUDA})
    out = porter("rewrite", ".", "--target", "xla", columns=False, cwd=repo)
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr
    assert len(deep) > 80 and deep in text, text
    assert "cuda-method" in text
