"""porter's ATen operator counting leaves what the port computes alone (on XLA it reads torch_xla's
own counters, no dispatch mode), and `--no-count-ops` turns the counting off (script mode)."""

from __future__ import annotations

import math
import sys

import pytest
from typer.testing import CliRunner

from porter.cli import app
from tests.deps import need


VIEWS = """
import torch, torch_xla, torch.nn as nn
d = torch_xla.device()
torch.manual_seed(0)
model = nn.Linear(4, 3).to(d)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    z = model(torch.ones(2, 4, device=d))
    m = torch.full((2,), float("-inf"), device=d)
    m[0:2].copy_(z.amax(-1).detach())  # written through a view, as trl's chunked log-softmax does
    loss = (z - m.unsqueeze(-1)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step(); torch_xla.sync()
"""


@pytest.mark.xla
@pytest.mark.slow
def test_counting_operators_on_xla_leaves_the_ports_arithmetic_alone(tmp_path, monkeypatch):
    """Under a Python dispatch mode torch_xla 2.9 drops in-place writes through views (the loss
    above became inf; trl's SFT loss -inf): on XLA the operators come from torch_xla's own
    counters, porter's own statistics taken off (its checksum's view_copy fallback is not the
    port's)."""
    (tmp_path / "train.py").write_text(VIEWS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PJRT_DEVICE", "CPU")
    out = tmp_path / "t.safetensors"
    res = CliRunner().invoke(
        app,
        [
            "trace",
            "record",
            "-o",
            str(out),
            "--side",
            "ported",
            "--target",
            "xla",
            "--steps",
            "2",
            "--",
            sys.executable,
            "train.py",
        ],
    )
    assert res.exit_code == 0, res.output
    from porter.verify.tracefile import read_trace

    m = read_trace(out).manifest
    losses = [s["loss"] for s in m["steps"]]
    assert all(math.isfinite(x) for x in losses) and losses[0] > 0, losses
    ops = {o["op"]: o for o in m["ops"]}
    assert "aten::mm" in ops or "aten::addmm" in ops, sorted(ops)
    assert all(o["devices"] == ["xla"] for o in m["ops"]) and "torch_xla" in m["ops_scope"]
    assert not [f for f in m["perf"]["xla"]["cpu_fallback_ops"] if f["op"].startswith("view_copy")]


def test_no_count_ops_reaches_both_script_commands(monkeypatch, tmp_path):
    import porter.verify.script as script

    seen = []

    def fake_run_script(cfg, **kw):
        seen.append(cfg.ops)
        raise SystemExit(0)

    def fake_record(role, tree, cfg, *a, **kw):
        seen.append(cfg.ops)
        raise SystemExit(0)

    monkeypatch.setattr(script, "run_script", fake_run_script)
    monkeypatch.setattr(script, "record", fake_record)
    runner = CliRunner()
    for flag in ("--no-count-ops", "--count-ops"):
        runner.invoke(app, ["parity-check", "--ported", str(tmp_path), flag, "--", sys.executable, "train.py"])
        runner.invoke(
            app, ["trace", "record", "-o", str(tmp_path / "t.safetensors"), flag, "--", sys.executable, "train.py"]
        )
    assert seen == [False, False, True, True]


def test_no_count_ops_is_for_script_mode(tmp_path):
    res = CliRunner().invoke(
        app, ["parity-check", "--original", str(tmp_path), "--ported", str(tmp_path), "--no-count-ops"]
    )
    assert res.exit_code == 2 and "--no-count-ops, --no-noise-floor and --device-rng are for script mode" in res.output


COMPILED = """
import torch, torch_xla
d = torch_xla.device()
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1)).to(d)
m = torch.compile(m, backend="openxla")
opt = torch.optim.AdamW(m.parameters(), lr=0.01)
for _ in range(2):
    x, y = torch.randn(4, 4).to(d), torch.randn(4, 1).to(d)
    loss = ((m(x) - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step(); torch_xla.sync()
"""


@pytest.mark.xla
@pytest.mark.slow
def test_a_compiled_xla_port_failing_in_torch_xla_under_recording_is_not_blamed_on_its_line(tmp_path, monkeypatch):
    """This port runs alone, but recorded, torch_xla's compile bridge failed in its CPU-fallback
    step ("Executable expected parameter 1 of size 1 but got buffer with incompatible size 4";
    without porter's module-output hook it ran) and the error named the port's line 10, as if
    the port were at fault (twenty-third read's leftover). The error now says where it failed and
    what to try, and --eager records the run."""
    need("torch_xla")
    (tmp_path / "train.py").write_text(COMPILED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PJRT_DEVICE", "CPU")
    base = ["trace", "record", "--side", "ported", "--steps", "2", "--no-noise-floor"]
    res = CliRunner().invoke(app, [*base, "-o", str(tmp_path / "t.safetensors"), "--", sys.executable, "train.py"])
    from porter.verify.tracefile import read_trace

    assert res.exit_code == 2, res.output  # (a torch_xla that records it: this test is to go)
    error = read_trace(tmp_path / "t.safetensors").manifest["error"]
    assert error["location"] is None and not error["in_user_code"], error
    assert error["message"].startswith(
        "porter's recording of a torch.compile'd model failed inside torch_xla's compile bridge "
        "(torch_xla/_dynamo), not at the program's line (train.py:10 called the model): "
    ), error["message"]
    assert "Record with --eager" in error["message"] and "torch_xla said: " in error["message"]
    eager = [*base, "--eager", "-o", str(tmp_path / "e.safetensors"), "--", sys.executable, "train.py"]
    res = CliRunner().invoke(app, eager)
    assert res.exit_code == 0, res.output
