"""Bad input: each case gets a message naming the file and the reason, stays byte-identical
when porter did not mean to change it, and the run goes on (the good file is still ported)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import libcst as cst
import pytest

from porter.core.reading import MAX_PARSE_BYTES
from porter.pipeline.port import port_source
from porter.core.findings import FileStatus
from porter.config.settings import Settings

from .conftest import CUDA, porter

XLA = Settings(target="xla")

# name -> (bytes, expected status, words the reason must contain)
BAD = {
    "syntax.py": (b"import torch\nx = torch.randn(3).cuda(\n", FileStatus.ERROR, "syntax error"),
    "py2.py": (b"import torch\nprint 'hi'\nx = torch.randn(3).cuda()\n", FileStatus.ERROR, "syntax error"),
    "undecodable.py": (b'import torch\nx = "\xff\xfe"\ny = torch.randn(3).cuda()\n', FileStatus.ERROR, "decode"),
    "nul.py": (b"import torch\nx = torch.randn(3).cuda()\x00\n", FileStatus.ERROR, "NUL"),
    "binary.py": (b"\x89PNG\r\n\x1a\n\x00\x00\x00cuda\xff", FileStatus.ERROR, "NUL"),
    "text.py": (b"This file talks about CUDA and cuda kernels.\nIt is not Python.\n", FileStatus.ERROR, "syntax error"),
    "deep.py": (
        b"import torch\nx = " + b"[" * 1500 + b"1" + b"]" * 1500 + b"\ny = torch.randn(3).cuda()\n",
        FileStatus.ERROR,
        "nesting too deep",
    ),
}
# these must be ported, with their encoding, BOM and line endings kept
GOOD = {
    "latin1.py": b'# -*- coding: latin-1 -*-\nimport torch\nname = "caf\xe9"\nx = torch.randn(3).cuda()\n',
    "bom.py": b"\xef\xbb\xbfimport torch\nx = torch.randn(3).cuda()\n",
    "crlf.py": b"import torch\r\nx = torch.randn(3).cuda()\r\ny = 1\r\n",
    "mixed.py": b"import torch\r\nx = torch.randn(3).cuda()\ny = 1\r\nz = 2\n",
    "tabs.py": b"import torch\nif True:\n\tx = torch.randn(3).cuda()\n\ty = 2\n",
    "deep_ok.py": b"import torch\nx = " + b"[" * 150 + b"1" + b"]" * 150 + b"\ny = torch.randn(3).cuda()\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_engine_reports_bad_input(name):
    source, status, words = BAD[name]
    result = port_source(source, name, XLA)
    assert result.status is status, result.reason
    assert words.lower() in (result.reason or "").lower()
    assert result.new_source is None


@pytest.mark.parametrize("name", sorted(GOOD))
def test_engine_keeps_encoding_and_line_endings(name):
    source = GOOD[name]
    result = port_source(source, name, XLA)
    assert result.status is FileStatus.CHANGED, result.reason
    new = result.new_source
    assert b".cuda()" not in new
    assert new.startswith(b"\xef\xbb\xbf") == source.startswith(b"\xef\xbb\xbf")
    cst.parse_module(new)
    if name == "latin1.py":
        assert b'"caf\xe9"' in new  # still latin-1, not re-encoded
    if name == "crlf.py":
        assert new.count(b"\n") == new.count(b"\r\n")
    if name == "mixed.py":
        assert b"y = 1\r\nz = 2\n" in new
    if name == "tabs.py":
        assert b"\n\ty = 2\n" in new


@pytest.mark.parametrize(
    "source,status",
    [
        (b"", FileStatus.SKIPPED),
        (b"\n", FileStatus.SKIPPED),
        (b"   \n\n", FileStatus.SKIPPED),
        (b"\xef\xbb\xbf", FileStatus.SKIPPED),
        (b"# just a comment about cuda\n", FileStatus.UNCHANGED),  # the token admits it; nothing to port
    ],
)
def test_empty_and_trivial_files(source, status):
    result = port_source(source, "e.py", XLA)
    assert result.status is status, result.reason
    assert result.new_source is None and not result.findings


def test_large_generated_file_is_skipped_with_reason():
    line = b"ROW = (1, 2.5, 'name', [3, 4, 5])  # generated\n"
    rows = line * (2 * MAX_PARSE_BYTES // len(line))  # twice the limit (it was ten times: 1.4 CPU-s more)
    big = b"import torch\nx = torch.zeros(3).cuda()\n" + rows
    assert len(big) > MAX_PARSE_BYTES
    result = port_source(big, "big.py", XLA)
    assert result.status is FileStatus.SKIPPED and "MiB" in result.reason and "larger" in result.reason
    # without a CUDA token it is a plain prefilter skip, as fast as any other file
    quiet = port_source(rows, "big2.py", XLA)
    assert quiet.status is FileStatus.SKIPPED and "token" in quiet.reason


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name, (data, _, _) in BAD.items():
        (root / name).write_bytes(data)
    for name, data in GOOD.items():
        (root / name).write_bytes(data)
    (root / "empty.py").write_bytes(b"")
    (root / "good.py").write_bytes(CUDA)
    (root / "x.py").mkdir()
    (root / "x.py" / "inner.py").write_bytes(CUDA)
    (root / "readonly.py").write_bytes(CUDA)
    os.chmod(root / "readonly.py", 0o444)
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_bytes(CUDA)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_bytes(CUDA)
    (root / "link_file.py").symlink_to("good.py")
    (root / "link_dir").symlink_to("sub")
    (root / "loop").symlink_to(".")
    (root / "link_out.py").symlink_to(outside / "victim.py")
    (root / "link_out_dir").symlink_to(outside)
    (root / "broken.py").symlink_to("does-not-exist.py")
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            if not p.is_symlink() and ".porter_cache" not in p.parts:
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def test_rewrite_in_place_over_a_tree_of_bad_input(tmp_path):
    root = _tree(tmp_path)
    before = _snapshot(root)
    victim = (tmp_path / "outside" / "victim.py").read_bytes()
    proc = porter("rewrite", ".", "--target", "xla", "--allow-dirty", "--allow-no-vcs", cwd=root)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err  # the read-only file could not be written
    after = _snapshot(root)
    for name, (_, _, words) in BAD.items():
        assert after[name] == before[name], name
        line = next(ln for ln in err.splitlines() if f" {name}" in ln)
        assert words.lower() in line.lower(), line
    for name in GOOD:
        assert after[name] != before[name] and b".cuda()" not in after[name], name
    assert after["empty.py"] == b""
    assert b".cuda()" not in after["good.py"] and b".cuda()" not in after["sub/a.py"]
    assert b".cuda()" not in after["x.py/inner.py"]  # a folder named x.py is walked, not read
    assert "x.py: a directory named like a Python file" in err
    assert after["readonly.py"] == before["readonly.py"] and "readonly.py: no write permission" in err
    assert stat.S_IMODE((root / "readonly.py").stat().st_mode) == 0o444
    assert (tmp_path / "outside" / "victim.py").read_bytes() == victim  # never written outside
    assert "link_out.py: symbolic link to a file outside the tree" in err
    assert "loop: symbolic link back into the tree" in err
    assert "broken.py: broken symbolic link" in err
    assert (root / "link_file.py").is_symlink() and (root / "link_dir").is_symlink()
    # a rerun has nothing left to do and changes nothing
    again = porter("rewrite", ".", "--target", "xla", "--allow-dirty", "--allow-no-vcs", cwd=root)
    assert _snapshot(root) == after, again.stderr.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreadable_file(tmp_path, monkeypatch):
    from porter.pipeline.discover import Candidate
    from porter.pipeline.runner import read_candidate

    from porter.core import reading

    path = tmp_path / "secret.py"
    path.write_bytes(CUDA)
    real = os.open

    def deny(name, *args, **kwargs):  # every read of a file goes through reading.open_regular
        if os.fspath(name) == os.fspath(path):
            raise PermissionError(13, "Permission denied")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(reading.os, "open", deny)
    result = read_candidate(Candidate(path, tmp_path), XLA)
    monkeypatch.undo()
    assert result.status is FileStatus.ERROR and "permission denied" in result.reason
    assert path.read_bytes() == CUDA


def _without_read_override() -> None:
    """As root every file is readable: drop the two capabilities that make it so
    (CAP_DAC_OVERRIDE 1, CAP_DAC_READ_SEARCH 2) from the bounding set before exec."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.skipif(sys.platform != "linux", reason="a 0o000 file and prctl(2) capabilities")
def test_file_the_user_cannot_read(tmp_path):
    """A real 0o000 file, read by a real porter process (as root: one without the
    capabilities that let root read anything)."""
    import subprocess

    root = tmp_path / "p"
    root.mkdir()
    (root / "secret.py").write_bytes(CUDA)
    os.chmod(root / "secret.py", 0o000)
    (root / "good.py").write_bytes(CUDA)
    from .conftest import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200", "PORTER_NO_CACHE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", ".", "--target", "xla", "--diff"],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=120,
        preexec_fn=_without_read_override if os.geteuid() == 0 else None,
    )
    err = proc.stderr.decode()
    assert "secret.py: permission denied (cannot read)" in err, err
    assert b"good.py" in proc.stdout  # the run went on


@pytest.mark.parametrize(
    "line, said",
    [
        ("\U0001f600 = 2", "invalid character '\U0001f600' (U+1F600)"),
        ("y = $", "invalid syntax"),
        ('y = "abc', "unterminated string literal (detected at line 4)"),
        ("z = 0x", "invalid hexadecimal literal"),
    ],
    ids=["emoji identifier", "dollar", "unterminated string", "hex"],
)
def test_a_tokenizer_error_is_said_at_its_own_line(line, said):
    """libcst names no line for a tokenizer error: an emoji identifier on line 4 was `m.py:1:
    syntax error: tokenizer error: ...` (and GitHub's annotation `line=1`; twenty-fifth read's
    leftover). CPython's own message and line are given (asked on that error path only)."""
    source = f"import torch\n\nx = torch.zeros(1).cuda()\n{line}\nw = 1\n".encode()
    result = port_source(source, "m.py", XLA)
    assert result.status is FileStatus.ERROR and result.error_line == 4, (result.reason, result.error_line)
    assert result.reason == f"syntax error: {said}", result.reason


@pytest.mark.parametrize(
    "lines, line, said",
    [
        (["def f(:", "    pass"], 3, "invalid syntax"),
        (["y = torch.zeros(1).cuda("], 3, "'(' was never closed"),
        (["if x:", "pass"], 4, "expected an indented block after 'if' statement on line 3"),
    ],
    ids=["bad parameter", "never closed", "no indent"],
)
def test_a_parser_error_is_said_at_its_own_line_not_libcst_s(lines, line, said):
    """libcst's parser said where it gave up, past the error, with a position of its own in its
    words: `def f(:` on line 3 of 4 was `m.py:4: syntax error: parser error: error at 4:4: ...`
    (twenty-seventh read). CPython's line and words, as for a tokenizer error."""
    source = ("import torch\nx = torch.zeros(1).cuda()\n" + "\n".join(lines) + "\n").encode()
    result = port_source(source, "m.py", XLA)
    assert result.status is FileStatus.ERROR and result.error_line == line, (result.reason, result.error_line)
    assert result.reason == f"syntax error: {said}", result.reason


def test_a_link_to_a_folder_is_said_for_what_it_is(tmp_path):
    """The walk follows no link to a folder (as ruff and git). One to another folder of the tree
    was called "a loop", and one out of the tree was passed over unsaid, where
    docs/robustness.md promises a note (twenty-eighth read). Each is said for what it is; the
    folder in the tree is checked once, under its own name."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "a.py").write_bytes(CUDA)
    (outside / "o.py").write_bytes(CUDA)
    (root / "link_dir").symlink_to("sub")
    (root / "link_out_dir").symlink_to(outside)
    (root / "sub" / "up").symlink_to("..")
    proc = porter("lint", ".", "--target", "xla", "--no-cache", "--output-format", "concise", cwd=root)
    err, out = proc.stderr.decode(), proc.stdout.decode()
    assert "link_dir: symbolic link to a folder in the tree: not followed" in err, err
    assert "link_dir: symbolic link back" not in err, err
    assert "link_out_dir: symbolic link to a folder outside the tree: not followed" in err, err
    assert "sub/up: symbolic link back into the tree (a loop)" in err, err
    assert out.count("DEV001") == 1 and "sub/a.py" in out, out
