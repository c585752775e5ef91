"""A file named for output under a name that is a file, not a folder (`-o f/b.json`, `f` a
file): one line that names the name and why, exit 2, for every option that names an output
file; `mkdir` said "File exists" (or "Not a directory" a level below; twenty-fifth read)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.pipeline.writer import write_output
from tests.safety.conftest import REPO, porter

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


BEFORE_THE_RUN = {
    "lint --fix -o": (["lint", "m.py", "-t", "xla", "--no-cache", "--fix", "--allow-no-vcs", "-o"], "--output-file"),
    "lint --fix --report": (
        ["lint", "m.py", "-t", "xla", "--no-cache", "--fix", "--allow-no-vcs", "--report"],
        "--report",
    ),
    "lint --write-baseline": (["lint", "m.py", "-t", "xla", "--no-cache", "--write-baseline"], "--write-baseline"),
    "rewrite --report": (["rewrite", "m.py", "-t", "xla", "--no-cache", "--allow-no-vcs", "--report"], "--report"),
}


def _without_dac_override() -> list[str]:
    """A prefix that runs as root without the right to write past file modes (as
    `test_trace_files`' helper); [] where that cannot be done (not root, no setpriv)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    drop = "-dac_override,-dac_read_search,-fowner"
    return ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]


@pytest.mark.parametrize("folder", ["f", "ro", "ro/new"])
@pytest.mark.parametrize("command", sorted(BEFORE_THE_RUN))
def test_an_output_that_cannot_be_written_is_said_before_the_run(tmp_path, command, folder):
    """`lint -o`/`--report`/`--write-baseline` and `rewrite --report` into a folder porter cannot
    write (one of mode 555, or under a file) ran the whole command, wrote its fixes, then said
    it (term2's leftover); ruff 0.17.6 opens its `-o` file before it checks. Now one line
    before the run: nothing fixed, nothing printed."""
    prefix = _without_dac_override()
    if folder.startswith("ro") and not prefix and os.geteuid() == 0:
        pytest.skip("needs setpriv to run as root without CAP_DAC_OVERRIDE")
    args, option = BEFORE_THE_RUN[command]
    (tmp_path / "m.py").write_text(CUDA)
    (tmp_path / "f").write_text("keep")
    (tmp_path / "ro").mkdir(mode=0o555)
    given = f"{folder}/out.md" if "report" in command else f"{folder}/out.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "uc")}
    out = subprocess.run(
        [*prefix, sys.executable, "-m", "porter", *args, given], cwd=tmp_path, env=env, capture_output=True, timeout=180
    )
    err = out.stderr.decode()
    why = "f is not a folder" if folder == "f" else "Permission denied"
    assert out.returncode == 2 and err == f"error: cannot write {option} {given}: {why}\n", (out.returncode, err)
    assert out.stdout == b"" and (tmp_path / "m.py").read_text() == CUDA  # no fix, no summary: before the run
    assert sorted(p.name for p in (tmp_path / "ro").iterdir()) == []


def test_a_parity_report_that_cannot_be_written_is_said_before_the_run(tmp_path):
    """parity-check's `--report` under a file was said after the run (here: after the settings'
    own error, the run's first step)."""
    (tmp_path / "f").write_text("keep")
    out = porter("parity-check", "--original", ".", "--ported", ".", "--report", "f/r.json", cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2 and err == "porter parity-check: cannot write --report f/r.json: f is not a folder\n", (
        err
    )


@pytest.mark.parametrize("command", ["backends", "kernels"])
def test_a_scaffold_folder_under_a_file_is_said_before_the_scan_with_nothing_to_write(tmp_path, command):
    """`backends --scaffold f/out` where no family lacks the target's class tried no write, and so
    said "wrote 0 file(s) under f/out", exit 0 (twenty-sixth read's leftover); `kernels` said it
    after the inventory. Now both say it before the scan, as rewrite's `--out-dir` does (and ruff
    0.17.6 opens its `-o` before it checks)."""
    (tmp_path / "m.py").write_text("x = 1\n")
    (tmp_path / "f").write_text("keep")
    out = porter(command, ".", "-t", "xla", "--scaffold", "f/out", cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2 and out.stdout == b"", (out.returncode, out.stdout, err)
    assert err.strip() == "error: cannot write into --scaffold f/out: f is not a folder", err


@pytest.mark.parametrize("option", ["-o", "--report", "--write-baseline"])
def test_a_run_that_ends_before_its_output_leaves_no_folder_made_for_it(tmp_path, option):
    """The check before the run (`check_output`) made the output's missing folders: a run that
    ended before writing (a `--fix` the write guard refuses) left `new/sub/` behind, empty
    (twenty-sixth read's leftover). Now the nearest folder there is tried and none is made; a
    run that writes makes them, as before."""
    (tmp_path / "m.py").write_text(CUDA)
    name = "new/sub/out.html" if option == "--report" else "new/sub/out.json"
    out = porter("lint", "m.py", "-t", "xla", "--no-cache", "--fix", option, name, cwd=tmp_path)
    assert out.returncode == 2 and b"not under version control" in out.stderr, out.stderr
    assert not (tmp_path / "new").exists()
    out = porter("lint", "m.py", "-t", "xla", "--no-cache", option, name, cwd=tmp_path)
    assert out.returncode in (0, 1) and (tmp_path / name).is_file(), out.stderr
