"""End-to-end parity checks: real subprocesses, real torch, PyTorch/XLA on the CPU."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.verify import run_parity
from porter.verify.report import to_html, to_markdown, write_report

from porter.verify import ParityConfig

MODELS = Path(__file__).parent / "models"
BEFORE_PERF = ("startup", "import", "factory", "inputs")  # a side's phases before its first step


def fast(**kw) -> ParityConfig:
    """Fewer timed steps: these tests check behaviour, not speed."""
    kw.setdefault("warmup", 1)
    kw.setdefault("repeats", 2)
    kw.setdefault("timeout", 240)
    return ParityConfig(**kw)


pytestmark = [pytest.mark.xla, pytest.mark.slow]


def test_faithful_port_passes_with_gradients_and_training(tmp_path):
    # graph breaks (explain) are the data-dependent test's subject; here they cost a dynamo trace
    cfg = fast(
        original=MODELS / "original",
        ported=MODELS / "ported_xla",
        entry="tinynet:make_training",
        train_steps=3,
        explain=False,
    )
    r = run_parity(cfg)
    assert r.verdict == "pass", r.reasons
    assert r.exit_code == 0
    # what really ran, and that emulation is said to be emulation
    assert r.reference.device == "cpu (reference; CUDA shim)" and not r.reference.hardware
    assert r.ported.device == "xla (CPU PJRT, emulated)"
    assert r.ported.emulated and not r.ported.hardware
    assert r.state_dict["loaded"] == 29 and not r.state_dict["missing_in_reference"]
    assert r.layers_compared >= 20 and r.first_divergence is None
    assert r.outputs[0].max_abs < 1e-5 and r.outputs[0].cosine > 0.99999
    assert r.gradients["ran"] and r.gradients["passed"] and r.gradients["parameters"] == 28
    assert r.train["passed"] and len(r.train["ported_losses"]) == 3
    assert r.train["reference_losses"][2] < r.train["reference_losses"][0]  # it trained
    xla = r.ported.perf["xla"]
    assert xla["compiles_first_step"] >= 1 and xla["recompiles_after_warmup"] == 0
    assert r.ported.perf["first_step_s"] > r.ported.perf["steady_step_s"] > 0
    assert "xla" not in r.reference.perf
    for name in ("r.json", "r.md", "r.html"):
        write_report(r, tmp_path / name)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdict"] == "pass" and data["ported"]["device"] == "xla (CPU PJRT, emulated)"
    assert "not hardware results" in (tmp_path / "r.md").read_text()
    html_text = (tmp_path / "r.html").read_text()
    assert "<table" in html_text and "xla (CPU PJRT, emulated)" in html_text and "data-ready" in html_text


def test_broken_port_fails_and_names_the_layer():
    cfg = fast(
        original=MODELS / "original",
        ported=MODELS / "ported_broken",
        entry="tinynet:make_model",
        inputs="tinynet:example_inputs",
        explain=False,
    )
    r = run_parity(cfg)
    assert r.verdict == "fail" and r.exit_code == 1
    assert r.first_divergence["module"] == "blocks.1.ffn.act"
    assert r.first_divergence["max_abs"] > 1e-3
    assert not r.outputs[0].passed
    assert any("blocks.1.ffn.act" in reason for reason in r.reasons)
    md = to_markdown(r)
    assert "blocks.1.ffn.act" in md and "FAIL" in md
    # explain was turned off: the report must say so, not print zero graph breaks
    assert r.ported.graph_breaks == {"ran": False, "error": "not run (explain disabled)"}
    assert "not measured" in md


def test_data_dependent_op_shows_fallback_graph_break_and_host_sync():
    tree = MODELS / "dynamic"
    r = run_parity(fast(original=tree, ported=tree, entry="model:make_model"))
    assert r.verdict == "pass", r.reasons
    xla = r.ported.perf["xla"]
    assert any(f["op"] == "nonzero" and f["per_step"] == 1 for f in xla["cpu_fallback_ops"])
    gb = r.ported.graph_breaks
    assert gb["ran"] and gb["graph_break_count"] >= 1
    assert any("Dynamic shape" in b["reason"] and b["location"] == "model.py:13" for b in gb["breaks"])
    syncs = r.ported.perf["syncs"]
    assert {"call": ".item()", "location": "model.py:15", "count": 1, "per_step": 1.0} in syncs["host_syncs"]
    assert any(d["call"] == ".nonzero()" and d["location"] == "model.py:13" for d in syncs["dynamic_shape_ops"])
    kinds = [(g.kind, g.side) for g in r.gaps]
    assert ("cpu_fallback", "ported") in kinds and ("graph_break", "ported") in kinds
    assert r.gaps[0].kind == "cpu_fallback" and r.gaps[0].severity == "error"
    assert "nonzero" in to_html(r)


def test_model_that_raises_is_reported_by_the_cli(tmp_path):
    import typer

    from porter.cli.parity import parity_check

    app = typer.Typer()
    app.command()(parity_check)
    report = tmp_path / "out.json"
    tree = MODELS / "raises"
    res = CliRunner().invoke(
        app,
        [
            "--original",
            str(tree),
            "--ported",
            str(tree),
            "--entry",
            "model:make_model",
            "--report",
            str(report),
            "--timeout",
            "120",
        ],
    )
    assert res.exit_code == 2, res.output
    data = json.loads(report.read_text())
    err = data["reference"]["error"]
    assert err["type"] == "ValueError" and err["location"] == "model.py:12"
    assert err["phase"] == "perf" and err["in_user_code"]
    assert data["ported"] is None
    assert "deliberate failure in forward" in res.output


def test_model_that_hangs_is_killed_at_the_timeout():
    tree = MODELS / "hangs"
    # the timeout counts from the worker's start: a side stopped before the model's first
    # step (still importing torch on a loaded machine) is asked again with twice the time
    for timeout in (6, 12, 24, 48):
        r = run_parity(fast(original=tree, ported=tree, entry="model:make_model", timeout=timeout))
        if not (r.reference.status == "timeout" and r.reference.error["phase"] in BEFORE_PERF):
            break
    assert r.verdict == "error" and r.exit_code == 2
    assert r.reference.status == "timeout"
    assert r.reference.error["phase"] == "perf"
    assert f"no result after {timeout} s" in r.reasons[0]
    assert r.wall_s < timeout + 28


def test_model_that_returns_nan_is_reported_with_its_module():
    tree = MODELS / "nan_port"
    r = run_parity(fast(original=tree, ported=tree, entry="model:make_model", explain=False))
    assert r.verdict == "error" and r.exit_code == 2
    assert r.ported is None  # no baseline: the ported side is not run
    assert r.first_nonfinite["reference"]["module"] == "bad"
    assert any("NaN" in reason and "bad" in reason for reason in r.reasons)


def test_neuron_port_runs_on_xla_emulation_and_says_so():
    cfg = fast(
        original=MODELS / "original",
        ported=MODELS / "ported_neuron",
        entry="tinynet:make_model",
        inputs="tinynet:example_inputs",
        target="neuron",
        explain=False,
    )
    r = run_parity(cfg)
    assert r.verdict == "pass", r.reasons
    assert r.ported.device == "xla (CPU PJRT, emulated; 'neuron' device strings mapped to xla)"
    assert r.ported.emulated and not r.ported.hardware and r.ported.shim == "neuron->xla"
    assert any("torch_neuronx" in n for n in r.ported.notes)  # why it is not hardware
    assert "on emulation, not hardware" in r.reasons[0]
