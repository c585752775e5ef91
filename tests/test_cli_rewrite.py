"""`porter rewrite` end to end: the command line's own parsing, exit codes, stdout and stderr,
in-process (typer's CliRunner, with the options a user types) except where noted; `python -m
porter` as a process is the safety suite's (tests/safety)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

CUDA_FILE = "import torch\n\nx = torch.zeros(2).cuda()\ntorch.cuda.synchronize()\n"
PLAIN_FILE = "def add(a, b):\n    return a + b\n"
BROKEN_FILE = "import torch\nx = torch.zeros(2).cuda(\n"


def porter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command run from `cwd`; an exception porter does not turn into an exit status
    fails the test (as a traceback would)."""
    with contextlib.chdir(cwd):
        result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(["porter", *args], result.exit_code, result.stdout, result.stderr)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(CUDA_FILE)
    (root / "pkg" / "util.py").write_text(PLAIN_FILE)
    (root / "pkg" / "broken.py").write_text(BROKEN_FILE)
    (root / "notes.txt").write_text("not python\n")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    }


def test_version_and_targets(tmp_path):
    # as a process: `python -m porter` picks its command before building the app
    out = subprocess.run([sys.executable, "-m", "porter", "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith("porter ")
    out = porter("targets", cwd=tmp_path)
    assert out.returncode == 0
    for name in ("neuron", "tpu", "xla", "openxla"):
        assert name in out.stdout


def test_diff_writes_nothing_and_exits_1(project):
    before = snapshot(project)
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=project)
    assert out.returncode == 2, out.stderr  # pkg/broken.py could not be ported: that outranks changes pending
    assert "+x = torch.zeros(2).to(torch_xla.device())" in out.stdout
    assert "+torch_xla.sync()" in out.stdout
    assert snapshot(project) == before
    # the summary names every file's fate, the broken file with its line; it goes to
    # stderr, so that stdout is the patch alone
    assert "1 would change" in out.stderr and "would change" not in out.stdout
    assert "pkg/broken.py:2: syntax error" in out.stderr
    assert "DEV001" in out.stderr and "CUDA003" in out.stderr
    (project / "pkg" / "broken.py").unlink()
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=project)
    assert out.returncode == 1, out.stderr  # changes pending, every file ported


def test_diff_exits_0_when_nothing_to_do(tmp_path):
    (tmp_path / "a.py").write_text(PLAIN_FILE)
    out = porter("rewrite", ".", "--target", "neuron", "--diff", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_in_place_refuses_dirty_tree_then_allows(project):
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init", cwd=project)
    (project / "pkg" / "train.py").write_text(CUDA_FILE + "y = 1\n")  # uncommitted edit
    before = snapshot(project)
    out = porter("rewrite", ".", "--target", "neuron", cwd=project)
    assert out.returncode == 2
    assert "uncommitted" in out.stderr and "train.py" in out.stderr
    assert snapshot(project) == before
    out = porter("rewrite", ".", "--target", "neuron", "--allow-dirty", cwd=project)
    assert out.returncode == 2, out.stderr  # the port is written; broken.py could not be ported
    assert (
        (project / "pkg" / "train.py")
        .read_text()
        .startswith('import torch\n\nx = torch.zeros(2).to("neuron")\ntorch.accelerator.synchronize()\n')
    )
    assert (project / "pkg" / "broken.py").read_text() == BROKEN_FILE  # left byte-identical


def test_in_place_on_clean_tree(project):
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init", cwd=project)
    out = porter("rewrite", "pkg", "--target", "tpu", cwd=project)
    assert out.returncode == 2, out.stderr  # pkg/broken.py does not parse
    assert '.to("tpu")' in (project / "pkg" / "train.py").read_text()
    # a second run changes nothing
    out = porter("rewrite", "pkg", "--target", "tpu", "--diff", cwd=project)
    assert out.returncode == 2 and out.stdout == ""
    out = porter("rewrite", "pkg/train.py", "pkg/util.py", "--target", "tpu", "--diff", cwd=project)
    assert out.returncode == 0


def test_out_dir_copies_every_file(project, tmp_path):
    before = snapshot(project)
    dest = tmp_path / "ported"
    out = porter("rewrite", str(project), "--target", "xla", "--out-dir", str(dest), cwd=tmp_path)
    assert out.returncode == 2, out.stderr  # the copy is whole; broken.py is in it unported
    assert snapshot(project) == before
    ported = snapshot(dest)
    assert set(ported) == set(before)  # every file, ported or not
    assert ported["notes.txt"] == before["notes.txt"]
    assert ported["pkg/util.py"] == before["pkg/util.py"]
    assert b"torch_xla.device()" in ported["pkg/train.py"]


def test_out_dir_inside_tree_is_refused(project):
    out = porter("rewrite", ".", "--target", "xla", "--out-dir", "sub/out", cwd=project)
    assert out.returncode == 2


def test_select_ignore_and_unknown_codes(project):
    (project / "pkg" / "broken.py").unlink()  # exit 1 / 0 say what would change
    out = porter("rewrite", ".", "--target", "neuron", "--diff", "--select", "CUDA", cwd=project)
    assert out.returncode == 1
    assert "torch.accelerator.synchronize" in out.stdout and ".cuda()" in out.stdout  # .cuda() kept
    out = porter("rewrite", ".", "--target", "neuron", "--diff", "--ignore", "DEV001,CUDA003", cwd=project)
    assert out.returncode == 0
    out = porter("rewrite", ".", "--target", "neuron", "--select", "NOPE9", cwd=project)
    assert out.returncode == 2 and "NOPE9" in out.stderr


def test_bad_target_is_a_usage_error(project):
    out = porter("rewrite", ".", "--target", "rocm", cwd=project)
    assert out.returncode == 2 and "rocm" in out.stderr


def test_exclude_and_gitignore(project):
    # without either, train.py is ported and broken.py reported
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=project)
    assert out.returncode == 2 and "pkg/train.py" in out.stdout and "pkg/broken.py" in out.stderr, out.stderr
    (project / ".gitignore").write_text("pkg/train.py\n")
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=project)
    assert out.returncode == 2, out.stderr  # broken.py still could not be ported
    assert out.stdout == "" and "pkg/train.py" not in out.stderr
    assert "pkg/broken.py" in out.stderr  # only the ignored file left out
    (project / ".gitignore").unlink()
    out = porter("rewrite", ".", "--target", "xla", "--diff", "--exclude", "pkg/*.py", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and "pkg/" not in out.stderr, out.stderr


def test_annotate_marks_manual_sites_once(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nmajor, minor = torch.cuda.get_device_capability()\n")
    for _ in range(2):
        out = porter("rewrite", ".", "--target", "neuron", "--annotate", "--allow-no-vcs", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    text = (tmp_path / "m.py").read_text()
    assert text.count("# porter[CUDA007]:") == 1


def test_rules_and_explain(tmp_path):
    out = porter("rules", "--target", "xla", cwd=tmp_path)
    assert out.returncode == 0 and "XLA001" in out.stdout and "COMP003" not in out.stdout
    out = porter("explain", "dev001", cwd=tmp_path)
    assert out.returncode == 0 and "cuda-method" in out.stdout and ".to(" in out.stdout
    assert porter("explain", "ZZZ1", cwd=tmp_path).returncode == 2


@pytest.mark.parametrize("args", [(), ("--target", "neuron")])
def test_rules_lists_the_meta_codes_lint_emits(tmp_path, args):
    """`porter explain` explains PORT001 and PORT100 and SARIF/JSON emit them, but `porter rules`
    did not list them (twenty-fifth read): they come last, marked as meta codes, for every target."""
    out = porter("rules", *args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = [ln.split() for ln in out.stdout.splitlines()]
    assert [ln[:3] for ln in lines[-2:]] == [
        ["PORT001", "not-checked", "(meta"],
        ["PORT100", "unused-suppression", "(meta"],
    ]


@pytest.mark.parametrize(
    ("code", "says"), [("port001", "Fix the file, or exclude it"), ("PORT100", "Remove the stale")]
)
def test_explain_knows_the_codes_lint_emits_that_are_no_rule(tmp_path, code, says):
    # SARIF's help for a PORT001/PORT100 result says "Run `porter explain CODE`": it was a usage
    # error (exit 2, "unknown rule code") until the twenty-fourth read
    out = porter("explain", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert code.upper() in out.stdout and says in " ".join(out.stdout.split())


@pytest.mark.parametrize("code", [" DEV001", "DEV001 ", "\tport100\n"])
def test_explain_reads_a_code_as_select_does_spaces_around_it_stripped(tmp_path, code):
    # `--select " DEV001"` ran DEV001 (the config file's lists strip the same) while `explain
    # " DEV001"` said "unknown rule code" (twenty-seventh read)
    out = porter("explain", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert code.strip().upper() in out.stdout


def test_virtual_environments_are_not_ported(tmp_path):
    env = tmp_path / "my-env"
    (env / "lib").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (env / "lib" / "dep.py").write_text(CUDA_FILE)
    (tmp_path / "train.py").write_text(CUDA_FILE)
    out = porter("rewrite", ".", "--target", "neuron", "--diff", cwd=tmp_path)
    assert out.returncode == 1
    assert "train.py" in out.stdout and "dep.py" not in out.stdout
