"""A warm `porter lint` imports what linting needs and nothing else: the other commands' modules,
libcst (the engine: no file is parsed) and the formats not asked for are most of what a
warm run would otherwise spend. Checked on `python -m porter` run in a fresh interpreter,
which then lists every module it holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
