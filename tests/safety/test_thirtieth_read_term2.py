"""The thirtieth read of streams, hang-ups and reports, second wave (term2, on 4803941f): each
test failed there."""

from __future__ import annotations

import os

import pytest

from tests.safety.conftest import REPO, porter_with_output_gone

# a parity run of seconds, not minutes: the comparison is replaced by its verdict (a failing one),
# so what is tested is the command's output and report, not torch
_FAKE_PARITY = """
import porter.verify as v
import porter.verify.script as s
from porter.verify.result import ParityResult
from porter.verify.tracecmp import ScriptResult
v.run_parity = lambda cfg, workdir=None, keep=False: ParityResult("fail", ["parted"], {}, None, None, workdir="wk")
s.run_script = lambda cfg, keep=False: ScriptResult("fail", ["parted"], {}, None, None, workdir="wk")
s.check_python = lambda cfg, role: None
"""

_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
    return out
"""

_FAMILY = {
    "base.py": "class Accelerator:\n    pass\n",
    "cuda_accelerator.py": "from base import Accelerator\n\n\nclass CUDA_Accelerator(Accelerator):\n    pass\n",
    "cpu_accelerator.py": "from base import Accelerator\n\n\nclass CPU_Accelerator(Accelerator):\n    pass\n",
}


def _parity_tree(tmp_path) -> str:
    """Two trees and the hook that fakes their comparison; the PYTHONPATH that loads it."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_FAKE_PARITY)
    for side in ("orig", "port"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "m.py").write_text("x = 1\n")
    return f"{REPO}{os.pathsep}{hook}"


@pytest.mark.parametrize("mode", [["--entry", "m:M"], ["--", "python", "train.py"]], ids=["model", "script"])
def test_a_kept_parity_check_whose_reader_left_writes_its_report_with_the_verdicts_code(tmp_path, mode):
    # `porter parity-check ... --keep --report parity.md | head -1` in a CI step: the "work folder"
    # line was `typer.echo`, past the console: its broken pipe ended the run before the report,
    # none written, exit 0 ("parity holds") where parity failed
    pythonpath = _parity_tree(tmp_path)
    argv = ["parity-check", "--original", "orig", "--ported", "port", "--keep", "--report", "r.md", *mode]
    code = porter_with_output_gone(argv, tmp_path, pythonpath=pythonpath)
    assert (code, (tmp_path / "r.md").is_file()) == (1, True)


def test_a_kept_parity_check_on_a_hung_up_terminal_writes_its_report_with_the_verdicts_code(tmp_path):
    # the same line met the hung-up terminal's EIO: exit 2, no report
    pythonpath = _parity_tree(tmp_path)
    argv = ["parity-check", "--original", "orig", "--ported", "port", "--entry", "m:M", "--keep", "--report", "r.md"]
    code = porter_with_output_gone(argv, tmp_path, pty=True, pythonpath=pythonpath)
    assert (code, (tmp_path / "r.md").is_file()) == (1, True)


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_a_kernels_scaffold_whose_reader_left_is_written(tmp_path, as_json):
    # `porter kernels src --scaffold ops | head -1`: the table's broken pipe ended the run before
    # the skeletons: none written, exit 0 ("no kernels") where one was found
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(_KERNEL)
    argv = ["kernels", "src", "--scaffold", "sc", "-t", "xla", *(["--json"] if as_json else [])]
    code = porter_with_output_gone(argv, tmp_path)
    assert (code, sorted(p.name for p in (tmp_path / "sc").glob("*.py"))) == (
        1,
        ["add_kernel_op.py", "add_kernel_xla.py", "test_add_kernel_xla_parity.py"],
    )


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_a_backends_scaffold_whose_reader_left_is_written(tmp_path, as_json):
    (tmp_path / "src").mkdir()
    for name, text in _FAMILY.items():
        (tmp_path / "src" / name).write_text(text)
    argv = ["backends", "src", "--scaffold", "sc", "-t", "xla", *(["--json"] if as_json else [])]
    code = porter_with_output_gone(argv, tmp_path)
    assert (code, sorted(p.name for p in (tmp_path / "sc").glob("*.py"))) == (0, ["xla_accelerator.py"])


def test_a_rewrite_diff_report_whose_reader_left_is_written_with_the_runs_code(tmp_path):
    # `porter rewrite . --diff --report plan.md | head -1`: the patch's broken pipe ended the run
    # before the report, none written, exit 0 ("nothing to change"); `lint --report`, `trace
    # compare --report` and `parity-check --report` write theirs
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(
        'import torch\n\nx = torch.zeros(3).cuda()\ny = torch.ones(2, device="cuda")\n'
    )
    code = porter_with_output_gone(["rewrite", "src", "-t", "xla", "--diff", "--report", "r.md"], tmp_path)
    assert (code, (tmp_path / "r.md").is_file()) == (1, True)
    assert ".cuda()" in (tmp_path / "src" / "m.py").read_text()  # --diff writes no source
