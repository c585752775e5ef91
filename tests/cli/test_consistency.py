"""What the commands, the reports and the docs say agrees with what porter does: every option
the docs show exists; `--target` is asked for the same way by every command that writes code
for a target; info notes do not fail `lint`; `--diff --out-dir` does what the README says;
the HTML report's cards count what its tables list; a second run over a port does not call it
0 % ready."""

from __future__ import annotations

import contextlib
import re
import subprocess
from pathlib import Path

import typer
from typer.testing import CliRunner

from porter.cli import app

REPO = Path(__file__).resolve().parents[2]
CUDA = "import torch\n\nx = torch.zeros(2).cuda()\n"


def porter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    with contextlib.chdir(cwd):
        result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(["porter", *args], result.exit_code, result.stdout, result.stderr)


def _options(path: list[str]) -> set[str]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    # (click's `--help` is no parameter of the command's: it exists for every one)
    return {"--help", *(opt for p in command.params for opt in (*p.opts, *p.secondary_opts))}


# `porter CMD [SUB] ... --option` inside a code span or a code block line
_USE = re.compile(r"porter ((?:trace )?[a-z-]+)([^`\n|]*)")


def test_every_option_the_docs_show_exists():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    commands = set(typer.main.get_command(app).commands)
    wrong = []
    for page in pages:
        for m in _USE.finditer(page.read_text(encoding="utf-8")):
            path = m.group(1).split()
            if path[0] not in commands:
                continue
            known = _options(path)
            rest = m.group(2).split(" -- ")[0]  # after `--`: the user's own command
            for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
                if opt not in known:
                    wrong.append(f"{page.name}: porter {m.group(1)} {opt}")
    assert not wrong, wrong


def test_kernels_scaffold_asks_for_the_target_as_rewrite_and_lint_do(tmp_path):
    (tmp_path / "k.py").write_text("import triton\n\n\n@triton.jit\ndef k(x_ptr, n):\n    pass\n")
    for command in (("rewrite", "."), ("lint", "."), ("kernels", ".", "--scaffold", "out")):
        out = porter(*command, cwd=tmp_path)
        assert out.returncode == 2 and "--target is required" in out.stderr, (command, out.stderr)
    assert not (tmp_path / "out").exists()
    assert porter("kernels", ".", cwd=tmp_path).returncode == 1  # listing writes nothing for a target
    (tmp_path / "porter.toml").write_text('target = "tpu"\n')
    out = porter("kernels", ".", "--scaffold", "out", cwd=tmp_path)
    assert out.returncode == 1 and (tmp_path / "out" / "k_tpu.py").is_file(), out.stderr


def test_info_notes_alone_do_not_fail_lint(tmp_path):
    (tmp_path / "m.py").write_text('import os\nos.environ.setdefault("NCCL_P2P_DISABLE", "1")\n')
    out = porter("lint", ".", "--target", "tpu", "--output-format", "concise", cwd=tmp_path)
    assert "DIST004" in out.stdout and out.returncode == 0, (out.stdout, out.stderr)
    assert porter("lint", ".", "--target", "tpu", "--fail-on", "info", cwd=tmp_path).returncode == 1
    (tmp_path / "n.py").write_text(CUDA)
    assert porter("lint", ".", "--target", "tpu", cwd=tmp_path).returncode == 1


def test_diff_with_out_dir_writes_the_copy_and_prints_its_diff(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(CUDA)
    out = porter("rewrite", "src", "--target", "xla", "--out-dir", "ported", "--diff", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "+++ b/" in out.stdout and "torch_xla.device()" in (tmp_path / "ported" / "m.py").read_text()
    assert (tmp_path / "src" / "m.py").read_text() == CUDA
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "with `--diff` prints the diff of that copy" in readme


MIXED = """import torch

scaler = torch.cuda.amp.GradScaler()
with torch.cuda.amp.autocast(dtype=torch.float16):
    y = torch.zeros(2).half()
name = torch.cuda.get_device_name(0)
"""


def test_html_cards_count_what_the_table_lists(tmp_path):
    (tmp_path / "m.py").write_text(MIXED)
    out = porter("rewrite", ".", "--target", "xla", "--diff", "--report", "r.html", cwd=tmp_path)
    html = (tmp_path / "r.html").read_text()
    card = re.search(r'id="left-card"><b>(\d+)</b>', html)
    table = re.search(r"<h2>Left for a person \((\d+)\)</h2>", html)
    assert card and table, out.stderr
    assert card.group(1) == table.group(1) and int(card.group(1)) > 1, (card.group(1), table.group(1))


def test_a_second_rewrite_over_a_port_is_not_called_0_percent_ready(tmp_path):
    (tmp_path / "m.py").write_text(CUDA + "name = torch.cuda.get_device_name(0)\n")
    first = porter("rewrite", ".", "--target", "xla", "--allow-no-vcs", cwd=tmp_path)
    assert first.returncode == 0 and "Readiness: 50%" in first.stdout, first.stdout
    again = porter("rewrite", ".", "--target", "xla", "--allow-no-vcs", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0%" not in again.stdout, again.stdout
    assert "Nothing left that porter can port automatically: 1 manual site left for a person." in again.stdout


def _commands(command=None, name: str = ""):
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        for sub, c in command.commands.items():
            yield from _commands(c, f"{name} {sub}".strip())
    else:
        yield name, command


# flags that name different things in different commands, each role declared once in
# porter/cli/options.py (or in the one command that has it)
_ROLES = {"--target": 2, "--report": 3, "--diff": 2, "--output-format": 2}


def test_an_option_two_commands_share_is_declared_once():
    """The same flag, the same help and default in every command (porter/cli/options.py); a flag
    with more than one meaning has one declaration per meaning."""
    seen: dict[str, dict[str, tuple]] = {}
    for name, command in _commands():
        for p in command.params:
            if p.param_type_name == "option":
                seen.setdefault(p.opts[0], {})[name] = (tuple(p.opts), p.help, p.default)
    drifted = {
        flag: sorted(by) for flag, by in seen.items() if len(by) > 1 and len(set(by.values())) > _ROLES.get(flag, 1)
    }
    assert not drifted, drifted
    assert len(seen["--target"]) == 10


def test_backends_asks_for_the_target_as_rewrite_and_lint_do(tmp_path):
    (tmp_path / "b.py").write_text("class Accelerator: ...\n\n\nclass CUDA_Accelerator(Accelerator):\n    pass\n")
    out = porter("backends", ".", cwd=tmp_path)
    assert out.returncode == 2 and "--target is required" in out.stderr, (out.stdout, out.stderr)
    assert porter("backends", ".", "-t", "neuron", cwd=tmp_path).returncode == 0
