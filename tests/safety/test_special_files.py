"""Contract 1 (reading): only regular files are read, and never more than the size bound.

A tree can hold a FIFO or a character device under a `.py` name (an archive extracted by
root keeps its device nodes). Reading a FIFO waits for a writer that never comes; reading
/dev/zero never ends and fills memory. Each porter run below is given a memory ceiling and a
time limit, so that on a porter that reads them the test fails instead of the host."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

from tests.safety.conftest import CUDA, PORTED, REPO

LIMIT_S = 90
MEMORY = 2 * 2**30  # a porter run needs a few hundred MiB


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _porter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "XDG_CACHE_HOME": str(cwd / ".user-cache"),
    }
    env.pop("PORTER_CACHE_DIR", None)
    try:
        return subprocess.run(
            [sys.executable, "-m", "porter", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=LIMIT_S,
            preexec_fn=_bounded,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"porter {' '.join(args)} hung on a special file (killed after {LIMIT_S} s)") from exc


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "good.py").write_bytes(CUDA)
    os.mkfifo(root / "pipe.py")
    os.mkfifo(root / "kernel.cu")
    os.mkfifo(root / "weights.bin")  # not Python: still met by --out-dir's copy
    if os.geteuid() == 0:  # what root extracting an archive makes: /dev/zero's numbers, in the tree
        os.mknod(root / "zero.py", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    return root


def _no_traceback(out: subprocess.CompletedProcess) -> str:
    err = out.stderr.decode()
    assert "Traceback" not in err and "MemoryError" not in err, err
    return err


def test_rewrite_diff_skips_fifos_and_devices_and_ports_the_rest(tmp_path):
    root = _tree(tmp_path)
    out = _porter("rewrite", ".", "--target", "xla", "--diff", cwd=root)
    err = _no_traceback(out)
    assert out.returncode == 1, err  # a change is pending: good.py
    assert b"+++ b/good.py" in out.stdout
    assert "a FIFO (named pipe), not a regular file" in err
    if os.geteuid() == 0:
        assert "a character device, not a regular file" in err


def test_lint_skips_fifos_and_devices(tmp_path):
    root = _tree(tmp_path)
    out = _porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=root)
    _no_traceback(out)
    assert out.returncode == 1  # good.py's finding
    assert b"good.py:2" in out.stdout


def test_a_device_named_on_the_command_line_is_not_read(tmp_path):
    """Without root a device node cannot be made, but a link to one can be given."""
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "good.py").write_bytes(CUDA)
    out = _porter("lint", "zero.py", "good.py", "--target", "xla", "--output-format", "concise", cwd=tmp_path)
    err = _no_traceback(out)
    assert "zero.py" in (err + out.stdout.decode()) and "character device" in (err + out.stdout.decode())
    assert b"good.py:2" in out.stdout


def test_out_dir_copy_passes_over_fifos_with_a_note(tmp_path):
    root = _tree(tmp_path)
    out = _porter("rewrite", "p", "--target", "xla", "--out-dir", "ported", cwd=tmp_path)
    err = _no_traceback(out)
    assert out.returncode == 0, err
    assert (tmp_path / "ported" / "good.py").read_bytes() == PORTED
    assert not (tmp_path / "ported" / "weights.bin").exists()
    assert "weights.bin: a FIFO (named pipe), not a regular file: not read; not copied" in err
    assert (root / "good.py").read_bytes() == CUDA


def test_kernels_passes_over_fifos(tmp_path):
    root = _tree(tmp_path)
    out = _porter("kernels", ".", "--target", "xla", cwd=root)
    err = _no_traceback(out)
    assert "kernel.cu: a FIFO (named pipe), not a regular file" in err + out.stdout.decode()


def test_a_fifo_where_a_config_file_or_gitignore_is_looked_for(tmp_path):
    root = tmp_path / "p"
    root.mkdir()
    (root / "good.py").write_bytes(CUDA)
    os.mkfifo(root / ".gitignore")
    os.mkfifo(root / "porter.toml")
    out = _porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=root)
    err = _no_traceback(out)
    assert out.returncode == 1 and b"good.py:2" in out.stdout, err  # neither is a config file: passed over


def test_reading_is_bounded_while_it_reads(tmp_path, monkeypatch):
    """The size bound holds even when the `stat` said the file was small (it grew after the
    stat, or a file system that reports no size, as /proc does)."""
    from porter.core import reading

    path = tmp_path / "grow.py"
    path.write_bytes(b"x" * 3000)
    assert reading.read_regular(path, limit=3000) == b"x" * 3000

    def sizeless(real):
        def call(*args, **kwargs):
            st = real(*args, **kwargs)
            return os.stat_result((*tuple(st)[:6], 0, *tuple(st)[7:10]))

        return call

    monkeypatch.setattr(reading.os, "stat", sizeless(os.stat))
    monkeypatch.setattr(reading.os, "fstat", sizeless(os.fstat))
    try:
        reading.read_regular(path, limit=2999)
    except reading.Unreadable as exc:
        assert exc.skipped and "larger than 2999 bytes" in exc.reason
    else:
        raise AssertionError("read past the bound")


def test_parity_checks_source_scan_of_the_ported_tree_reads_only_regular_files(tmp_path):
    """`parity-check --target tpu` scans the ported tree for collectives (`verify.gaps`). It
    read each `*.py` with Path.read_text: a FIFO named `*.py` hung the run for ever, a link to
    /dev/zero filled memory; and it numbered lines by str.splitlines, so a U+2028 in a comment
    put `dist.all_reduce` on line 4 instead of 3."""
    tree = tmp_path / "ported"
    tree.mkdir()
    (tree / "m.py").write_bytes("# note\u2028more\nimport torch.distributed as dist\ndist.all_reduce(t)\n".encode())
    os.mkfifo(tree / "f.py")
    os.symlink("/dev/zero", tree / "z.py")
    code = (
        "import sys; from pathlib import Path; from porter.verify.gaps import collect_gaps\n"
        "for g in collect_gaps([None, None], 'tpu', Path(sys.argv[1])): print(g.evidence)\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(tree)],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            preexec_fn=_bounded,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the scan of the ported tree waited on a FIFO or read /dev/zero") from None
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['found by a source scan (not measured): m.py:3']"


def _bounded_for_torch() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * MEMORY, 3 * MEMORY))  # torch's CUDA libraries map large segments


def test_the_torchrun_on_path_is_read_only_for_its_shebang(tmp_path):
    """parity-check reads the `torchrun` it finds on PATH for its `#!` interpreter: it read the
    whole file (Path.read_text), so a FIFO named torchrun hung the run and a link to /dev/zero
    filled memory. Only the first line of a regular file is read (adversarial read 14)."""
    code = (
        "import sys; from porter.verify.script import python_of\n"
        "print(python_of(['torchrun', 'train.py']) == sys.executable)\n"
    )
    for kind in ("fifo", "zero", "shebang"):
        bin_dir = tmp_path / kind
        bin_dir.mkdir()
        runner = bin_dir / "torchrun"
        if kind == "fifo":
            os.mkfifo(runner)
        elif kind == "zero":
            os.symlink("/dev/zero", runner)
        else:  # the interpreter's own line, then a very long rest
            runner.write_bytes(f"#!{sys.executable}\n".encode() + b"#" * (200 * 2**20))
        os.chmod(runner, 0o755)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", code],
                env={**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{bin_dir}:{os.environ['PATH']}"},
                capture_output=True,
                text=True,
                timeout=LIMIT_S,
                preexec_fn=_bounded_for_torch,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the torchrun ({kind}) was read without end") from None
        assert proc.returncode == 0 and proc.stdout.strip() == "True", (kind, proc.stderr[-2000:])


def test_a_cuda_source_that_is_not_read_is_noted(tmp_path):
    """A `.cu` file past the size bound, or a FIFO named `*.cu`, is passed over with a note, as
    a Python file is: the ops it registers (`TORCH_LIBRARY_IMPL(_C, CUDA, m)`) decide what the
    Python that calls them keeps, and a 65 MiB one was left out in silence (seventeenth read)."""
    root = tmp_path / "p"
    (root / "csrc").mkdir(parents=True)
    (root / "good.py").write_bytes(CUDA)
    with open(root / "csrc" / "big.cu", "wb") as fh:  # sparse: no disk is used
        fh.write(b'TORCH_LIBRARY_IMPL(_C, CUDA, m) { m.impl("k", &k); }\n')
        fh.truncate(65 * 2**20)
    os.mkfifo(root / "csrc" / "pipe.cuh")
    (root / "csrc" / "small.cpp").write_bytes(b"int x;\n")
    lint = _porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=root)
    err = _no_traceback(lint)
    assert lint.returncode == 1 and b"good.py:2" in lint.stdout, err  # good.py's finding, and no more
    assert "note: csrc/big.cu: 65.0 MiB: larger than porter parses (2 MiB; generated code?)" in err, err
    assert "note: csrc/pipe.cuh: a FIFO (named pipe), not a regular file: not read" in err, err
    assert "small.cpp" not in err, err
    diff = _porter("rewrite", ".", "--target", "xla", "--diff", cwd=root)
    err = _no_traceback(diff)
    assert diff.returncode == 1 and b"+++ b/good.py" in diff.stdout, err
    assert "note: csrc/big.cu: 65.0 MiB: larger than porter parses (2 MiB; generated code?)" in err, err


def test_a_folder_whose_git_head_is_a_fifo_is_walked_not_waited_on(tmp_path):
    """Whether a folder holding `.git/` is a repository of its own is read from its `HEAD` (as
    git's `is_git_directory`): opened blocking, a FIFO there hung `lint` (twenty-fourth read)."""
    root = tmp_path / "p"
    (root / "sub" / ".git" / "objects").mkdir(parents=True)
    (root / "sub" / ".git" / "refs").mkdir()
    os.mkfifo(root / "sub" / ".git" / "HEAD")
    (root / "sub" / "a.py").write_bytes(CUDA)
    out = _porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=root)
    _no_traceback(out)
    assert out.returncode == 1 and b"a.py" in out.stdout, out.stdout  # its finding: the walk went on
