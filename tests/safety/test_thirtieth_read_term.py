"""The thirtieth read of terminal and report output (term, on 34fb428): each test failed there."""

from __future__ import annotations

import json
import os
import signal
import sys
import termios

import pytest

from tests.deps import need
from tests.safety.conftest import CUDA, REPO, porter_with_output_gone
from tests.safety.test_trace_files import _sides, _tensors, _write
from tests.safety.test_twenty_ninth_read_term2 import _WAIT, _closed_under


def _diverging(tmp_path):
    """Two traces whose losses part at step 2: parity fails (exit 1)."""
    torch = need("torch")
    from safetensors import safe_open

    ref, port = _sides(tmp_path)
    with safe_open(str(port), "pt") as f:
        manifest = json.loads(f.metadata()["porter.trace"])
    manifest["steps"][1]["loss"] = 5.0
    tensors = {**_tensors(torch), "steps.loss": torch.tensor([1.0, 5.0], dtype=torch.float64)}
    return ref, _write(port, manifest, tensors)


@pytest.mark.torch
@pytest.mark.parametrize("report", ["r.md", "r.json"])
def test_a_trace_compare_report_whose_reader_left_is_written_with_the_verdicts_code(tmp_path, report):
    # `porter trace compare ref port --report parity.md | head -1` in a CI step: the tables are
    # written past the console, the broken pipe ended the run at the title: no report, exit 0
    # ("parity holds") where parity failed
    ref, port = _diverging(tmp_path)
    code = porter_with_output_gone(["trace", "compare", str(ref), str(port), "--report", report], tmp_path)
    assert (code, (tmp_path / report).is_file()) == (1, True)


@pytest.mark.torch
def test_a_trace_ops_report_whose_reader_left_is_written(tmp_path):
    ref, _ = _sides(tmp_path)
    code = porter_with_output_gone(["trace", "ops", str(ref), "--target", "xla", "--report", "ops.json"], tmp_path)
    assert (code in (0, 1), (tmp_path / "ops.json").is_file()) == (True, True), code
    assert json.loads((tmp_path / "ops.json").read_text())["schema"] == "porter.trace-ops/1"


@pytest.mark.skipif(not hasattr(termios, "TIOCSCTTY"), reason="a controlling terminal is POSIX's")
def test_a_lint_whose_terminal_hung_up_does_not_say_no_findings(tmp_path):
    # `trap '' HUP; porter lint . && git push` (or a disowned job), then the terminal closes: the
    # findings met EIO, read as a reader that left (`| head -1`): exit 0, "no findings", and the
    # push went ahead. Their output lost, the run ends with 2, as ruff's "Input/output error"
    (tmp_path / "m.py").write_bytes(CUDA)
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "marker"
    (hook / "sitecustomize.py").write_text(
        _WAIT.format(module="porter.cli.lint", name="_emit", nth=1, marker=str(marker))
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    for fmt in ("full", "json"):
        argv = [sys.executable, "-m", "porter", "lint", "m.py", "-t", "xla", "--output-format", fmt]
        marker.unlink(missing_ok=True)
        marker.with_name("marker.closed").unlink(missing_ok=True)
        assert (fmt, _closed_under(argv, tmp_path, env, marker, hang_up=signal.SIG_IGN)) == (fmt, 2)


@pytest.mark.torch
@pytest.mark.skipif(not hasattr(termios, "TIOCSCTTY"), reason="a controlling terminal is POSIX's")
def test_a_trace_compare_whose_terminal_hung_up_does_not_say_parity_holds(tmp_path):
    ref, port = _diverging(tmp_path)
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "marker"
    (hook / "sitecustomize.py").write_text(
        _WAIT.format(module="porter.verify.tracecmp", name="compare_traces", nth=1, marker=str(marker))
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    argv = [sys.executable, "-m", "porter", "trace", "compare", str(ref), str(port)]
    assert _closed_under(argv, tmp_path, env, marker, hang_up=signal.SIG_IGN) == 2
    # and with a --report, the report is the work: written, with the verdict's code
    marker.unlink()
    marker.with_name("marker.closed").unlink()
    code = _closed_under([*argv, "--report", "r.md"], tmp_path, env, marker, hang_up=signal.SIG_IGN)
    assert (code, (tmp_path / "r.md").is_file()) == (1, True)


def test_a_rewrite_on_a_terminal_that_hung_up_before_it_started_still_writes_its_files(tmp_path):
    # a terminal that hung up is no terminal to `isatty`: its stream was left unwrapped, the first
    # progress line's EIO ended the run with 2, none of the files written (a terminal that hangs up
    # mid-run was mended in the twenty-ninth read); `lint`'s output, its work, still ends with 2
    (tmp_path / "src").mkdir()
    for i in range(3):
        (tmp_path / "src" / f"m{i}.py").write_bytes(CUDA)
    code = porter_with_output_gone(
        ["rewrite", "src", "--target", "xla", "--allow-no-vcs"], tmp_path, pty=True, stderr_too=True
    )
    ported = [p.name for p in sorted((tmp_path / "src").iterdir()) if p.read_bytes() != CUDA]
    assert (code, ported) == (0, ["m0.py", "m1.py", "m2.py"])
    (tmp_path / "l.py").write_bytes(CUDA)
    assert porter_with_output_gone(["lint", "l.py", "--target", "xla"], tmp_path, pty=True, stderr_too=True) == 2


@pytest.mark.torch
def test_a_trace_record_on_a_terminal_that_hung_up_writes_its_trace_with_its_own_code(tmp_path):
    # the trace is the command's work: it was written, but the "wrote" line met the hung-up
    # terminal and the run left with 2, "not written from a run that finished"
    need("torch")
    (tmp_path / "train.py").write_text(
        "import torch\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), 0.1)\n"
        "for _ in range(2):\n    m(torch.ones(1, 2)).sum().backward()\n    opt.step()\n    opt.zero_grad()\n"
    )
    argv = [
        "trace",
        "record",
        "-o",
        "t.safetensors",
        "--steps",
        "2",
        "--no-noise-floor",
        "--",
        sys.executable,
        "train.py",
    ]
    code = porter_with_output_gone(argv, tmp_path, pty=True, stderr_too=True)
    assert (code, (tmp_path / "t.safetensors").is_file()) == (0, True)
