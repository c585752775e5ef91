"""A file named for output under a name that is a file, not a folder (`-o f/b.json`, `f` a
file): one line that names the name and why, exit 2, for every option that names an output
file; `mkdir` said "File exists" (or "Not a directory" a level below; twenty-fifth read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.pipeline.writer import write_output
from tests.safety.conftest import porter

CUDA = "import torch\nx = torch.zeros(1).cuda()\n"

COMMANDS = {
    "lint -o": (["lint", "m.py", "-t", "xla", "--no-cache", "-o"], "--output-file", "o.txt"),
    "lint --write-baseline": (
        ["lint", "m.py", "-t", "xla", "--no-cache", "--write-baseline"],
        "--write-baseline",
        "b.json",
    ),
    "lint --report": (["lint", "m.py", "-t", "xla", "--no-cache", "--report"], "--report", "r.html"),
    "rewrite --report": (["rewrite", "m.py", "-t", "xla", "--no-cache", "--diff", "--report"], "--report", "r.md"),
    "trace record -o": (["trace", "record", "-o"], "-o", "t.safetensors"),
}


@pytest.mark.parametrize("under", ["f", "f/sub"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_under_a_file_is_one_line_naming_it(tmp_path, command, under):
    args, option, name = COMMANDS[command]
    (tmp_path / "m.py").write_text(CUDA)
    (tmp_path / "f").write_text("keep")
    given = f"{under}/{name}"
    tail = ["--", "python", "-c", "open('ran', 'w')"] if command.startswith("trace") else []
    out = porter(*args, given, *tail, cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2, (out.returncode, err)
    lines = err.strip().splitlines()  # (rewrite's summary comes first: the report is written after)
    assert lines[-1] == f"{_prefix(command)}cannot write {option} {given}: f is not a folder", err
    assert "Traceback" not in err and (command.startswith("rewrite") or len(lines) == 1), err
    assert (tmp_path / "f").read_text() == "keep" and not (tmp_path / "ran").exists()


def _prefix(command: str) -> str:
    return "porter trace: " if command.startswith("trace") else "error: "


def test_the_writer_every_report_goes_through_names_the_file_on_the_way(tmp_path):
    """`write_output` (parity-check's reports, `trace compare`'s, a trace) says which name on the
    way is not a folder, as its one line."""
    (tmp_path / "f").write_text("keep")
    for given in ("f/r.json", "f/a/b/r.json"):
        with pytest.raises(NotADirectoryError) as caught:
            write_output(tmp_path / given, "{}")
        assert str(caught.value) == f"{tmp_path / 'f'} is not a folder" == caught.value.strerror
    assert (tmp_path / "f").read_text() == "keep"
    write_output(Path(tmp_path / "ok" / "r.json"), "{}")  # a missing folder is still made
    assert (tmp_path / "ok" / "r.json").read_text() == "{}"


TRITON = "import triton\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n"
ACCEL = (
    "import torch\n\n\nclass Accelerator:\n    pass\n\n\nclass CUDA_Accelerator(Accelerator):\n"
    "    def sync(self):\n        torch.cuda.synchronize()\n\n\nclass CPU_Accelerator(Accelerator):\n    pass\n"
)
FOLDERS = {
    "rewrite --out-dir": (["rewrite", "m.py", "-t", "xla", "--no-cache", "--out-dir"], "into --out-dir"),
    "rewrite --split": (["rewrite", "m.py", "-t", "xla", "--no-cache", "--split"], "the series into --split"),
    "kernels --scaffold": (["kernels", "k.py", "-t", "xla", "--scaffold"], "into --scaffold"),
    "backends --scaffold": (["backends", "b.py", "-t", "xla", "--scaffold"], "into --scaffold"),
}


@pytest.mark.parametrize("given", ["f", "f/out", "f/out/sub"])
@pytest.mark.parametrize("command", sorted(FOLDERS))
def test_an_output_folder_under_a_file_is_one_line_naming_it(tmp_path, command, given):
    """The options that name a folder said "Not a directory" (`f/out`: the OS's words, naming
    neither `f` nor why) or "File exists" (`kernels --scaffold f`); now as `-o f/x` says it
    (twenty-sixth read)."""
    args, words = FOLDERS[command]
    (tmp_path / "m.py").write_text(CUDA)
    (tmp_path / "k.py").write_text(TRITON)
    (tmp_path / "b.py").write_text(ACCEL)
    (tmp_path / "f").write_text("keep")
    out = porter(*args, given, cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2 and "Traceback" not in err, (out.returncode, err)
    assert err.strip().splitlines()[-1] == f"error: cannot write {words} {given}: f is not a folder", err
    assert (tmp_path / "f").read_text() == "keep"
