"""A warm `porter lint` imports what linting needs and nothing else: the other commands' modules,
libcst (the engine: no file is parsed) and the formats not asked for are most of what a
warm run would otherwise spend. Checked on `python -m porter` run in a fresh interpreter,
which then lists every module it holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from porter.pipeline.statindex import RACY_NS

REPO = Path(__file__).resolve().parents[2]

NEVER_ON_A_WARM_LINT = (
    "libcst",
    "porter.codemods",
    "porter.codemods.apply",
    "porter.cli.rewrite",
    "porter.cli.info",
    "porter.cli.kernels",
    "porter.cli.config_cmd",
    "porter.cli.parity",
    "porter.cli.trace",
    "porter.report.terminal",
    "porter.lint.formats.junit",
    "porter.lint.formats.sarif",
    "rich.markdown",
    # (the requirements reader and `packaging`, where the tree has no dependency file: the `-c` files' search
    # imported them at every start, 9% more instructions for a one-file lint; the lead's review, thirty-second read)
    "porter.files.deps.reqfile",
    "packaging",
)


# `python -m porter ARGS...`, then the names in sys.modules written to the file named first
_DRIVER = """
import runpy, sys
out, sys.argv = sys.argv[1], ["porter", *sys.argv[2:]]
try:
    runpy.run_module("porter", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
with open(out, "w") as fh:
    fh.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""


def _lint(cwd: Path, cache: Path, modules: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _DRIVER,
            str(modules),
            "lint",
            ".",
            "-t",
            "xla",
            "--output-format",
            "json",
            "--cache-dir",
            str(cache),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_warm_lint_imports_only_what_it_needs(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "train.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    (project / "clean.py").write_text("x = 1\n")
    cache, modules = tmp_path / "cache", tmp_path / "modules.txt"
    cold = _lint(project, cache, modules)
    assert cold.returncode == 1 and '"DEV001"' in cold.stdout, cold.stderr
    warm = _lint(project, cache, modules)
    assert warm.returncode == 1 and warm.stdout == cold.stdout, warm.stderr
    imported = set(modules.read_text().split())
    assert {"porter.cli.lint", "porter.lint.formats.jsonfmt", "typer"} <= imported  # the list is the run's
    assert not [m for m in imported if m.startswith(NEVER_ON_A_WARM_LINT)]


# the driver above, with an audit hook that notes each process or thread the run starts
_STARTS = (
    """
import sys
starts = []
sys.addaudithook(lambda event, args: event in {events!r} and starts.append(event))
""".format(
        events={
            "os.fork",
            "os.forkpty",
            "os.posix_spawn",
            "os.exec",
            "os.system",
            "subprocess.Popen",
            "_thread.start_new_thread",
        }
    )
    + _DRIVER.replace('fh.write("\\n".join(sorted(sys.modules)))', 'fh.write("\\n".join(starts))')
)


def _driven_lint(driver: str, out: Path, project: Path, cache: Path, jobs: int) -> subprocess.CompletedProcess[str]:
    """`porter lint . -t xla --output-format json` of `project` with `cache`, run by `driver`
    (a variant of _DRIVER that writes what it saw to `out`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    env["PYTHONPATH"] = str(REPO)
    argv = ["lint", ".", "-t", "xla", "--output-format", "json", "--cache-dir", str(cache), "--jobs", str(jobs)]
    return subprocess.run(
        [sys.executable, "-c", driver, str(out), *argv],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_warm_lint_with_workers_starts_no_process_and_no_thread(tmp_path):
    """With `--jobs 2` and more files than a pool is started for, a warm run answers every file
    from the stat index: no worker pool (its processes and its manager thread), no subprocess
    (git), no thread. Its wall time is then its CPU time (issue 25)."""
    project = tmp_path / "p"
    project.mkdir()
    for i in range(12):  # more than MIN_PARALLEL_FILES
        (project / f"m{i}.py").write_text(f"import torch\nx{i} = torch.zeros(3).cuda()\n")
    cache, starts = tmp_path / "cache", tmp_path / "starts.txt"

    def lint() -> subprocess.CompletedProcess[str]:
        return _driven_lint(_STARTS, starts, project, cache, jobs=2)

    cold = lint()
    assert cold.returncode == 1 and cold.stdout.count('"DEV001"') == 12, cold.stderr
    assert starts.read_text(), "the audit hook saw no start: the cold run was to start workers"
    warm = lint()
    assert warm.returncode == 1 and warm.stdout == cold.stdout, warm.stderr
    assert starts.read_text() == ""


def test_every_command_is_still_listed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    env["PYTHONPATH"] = str(REPO)
    env["COLUMNS"] = "200"
    out = subprocess.run(
        [sys.executable, "-m", "porter", "--help"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    for command in ("rewrite", "targets", "rules", "explain", "kernels", "lint", "config", "parity-check", "trace"):
        assert f" {command} " in out.stdout, command


# the driver above, writing what the run worked out of the CUDA-only rule data instead
_CUDA_ONLY_DATA = _DRIVER.replace(
    'fh.write("\\n".join(sorted(sys.modules)))',
    "from porter.analysis import cuda_only_index as c\n"
    '    fh.write(" ".join(str(f.cache_info().currsize) for f in (c.packages, c._op_patterns, c._package_string)))',
)


def test_a_warm_lint_reads_none_of_the_cuda_only_rule_data(tmp_path):
    """A warm lint imports the CUDA-only analysis for its keys (`digest`, `merged`) and scans
    no file with it: the packages' and aten ops' tables (rules/cuda_only/*.json, documented.toml)
    and the 3 patterns built from them are read and compiled on first use, not at import
    (6.5 of the module's 7.7 ms). A cold run over a file that imports one uses them."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "train.py").write_text("import torch\nimport apex\nx = torch.zeros(3).cuda()\n")
    # a file changed within the stat index's racy window is read again on the next run (and
    # scanned): wait it out, so the warm run answers it from its `stat`
    time.sleep(max(0.0, (project / "train.py").stat().st_ctime + RACY_NS / 1e9 + 0.1 - time.time()))
    cache, made = tmp_path / "cache", tmp_path / "made.txt"

    def lint() -> subprocess.CompletedProcess[str]:
        return _driven_lint(_CUDA_ONLY_DATA, made, project, cache, jobs=1)

    cold = lint()
    assert cold.returncode == 1 and '"DEV001"' in cold.stdout, cold.stderr
    assert made.read_text() != "0 0 0", "the cold run was to scan train.py for CUDA-only imports"
    warm = lint()
    assert warm.returncode == 1 and warm.stdout == cold.stdout, warm.stderr
    assert made.read_text() == "0 0 0"


def test_every_command_is_one_paragraph_in_the_list(tmp_path):
    # typer's rich help kept a docstring's line breaks in the command list: parity-check's line
    # ended at `and`, `port's` and `each`, the rest under it (nineteenth read); wide enough, each
    # command is one line
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    env |= {"PYTHONPATH": str(REPO), "COLUMNS": "400", "NO_COLOR": "1"}
    for args in (["--help"], ["trace", "--help"]):
        out = subprocess.run(
            [sys.executable, "-m", "porter", *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
        )
        panel = [line for line in out.stdout.split("Commands")[1].splitlines() if line.startswith("│")]
        assert out.returncode == 0 and panel, out.stderr
        assert all(re.match(r"│ [a-z-]+ +\S", line) for line in panel), panel  # no continuation line
