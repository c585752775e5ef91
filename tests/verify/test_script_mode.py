"""Script mode and traces on a real training script: the fixture GPT trainer
(fixtures/projects/gpt_trainer: weight tying, cosine LR schedule with warm-up, gradient
accumulation, grad clipping, fused AdamW on the original). The original runs on the CPU
through the CUDA shim, the port on PyTorch/XLA's CPU client; both unchanged.

The port is porter's own expected xla output. Module.to() unties shared weights on XLA; when
that port does not re-tie them, the test adds the one line that does (so the port under test
is explicitly faithful) — script mode itself reports an untied port as a failure."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.verify.opsupport import classify, summary
from porter.verify.tracefile import read_trace

pytestmark = [pytest.mark.xla, pytest.mark.slow]
# one worker runs the tests that read the module-scoped reference trace, so it is recorded
# once; the live two-sided run needs no trace and runs beside them on the other worker
ON_TRACE = pytest.mark.xdist_group("script_mode")

PROJECT = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "gpt_trainer"
STEPS = 10
# one transformer block (the script's default is two): what the tests name is in h.0, and each
# further block is more XLA compile work on the port's side (a fifth of its CPU) for no check
CMD = [
    sys.executable,
    "train.py",
    "--no-compile",
    "--max-iters",
    "50",
    "--dtype",
    "float32",
    "--eval-iters",
    "1",
    "--n-layer",
    "1",
    "--out-dir",
    "runs",
]


def _faithful(port: Path) -> None:
    train = port / "train.py"
    text = train.read_text()
    if "wte.weight = model.lm_head.weight" not in text:
        assert "    model.to(device)\n" in text
        text = text.replace(
            "    model.to(device)\n",
            "    model.to(device)\n    model.transformer.wte.weight = model.lm_head.weight  # re-tie\n",
            1,
        )
        train.write_text(text)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("gpt")
    orig = base / "original"
    port = base / "ported"
    broken = base / "broken"
    shutil.copytree(PROJECT / "src", orig)
    shutil.copytree(PROJECT / "expected" / "xla", port)
    _faithful(port)
    shutil.copytree(port, broken)
    model = broken / "model.py"
    text = model.read_text()
    assert "self.gelu = nn.GELU()" in text
    model.write_text(text.replace("self.gelu = nn.GELU()", "self.gelu = nn.ReLU()"))
    return orig, port, broken


@pytest.fixture(scope="module")
def reference_trace(trees, tmp_path_factory, monkeypatch_module):
    """The original, recorded once with `porter trace record` (the "GPU host" side)."""
    orig = trees[0]
    out = tmp_path_factory.mktemp("traces") / "reference.safetensors"
    monkeypatch_module.chdir(orig)
    res = CliRunner().invoke(
        app, ["trace", "record", "-o", str(out), "--steps", str(STEPS), "--timeout", "400", "--", *CMD]
    )
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@ON_TRACE
def test_reference_trace_is_portable_and_bounded(reference_trace):
    t = read_trace(reference_trace)
    m = t.manifest
    assert m["schema"] == "porter.trace/1" and m["stopped"] == "steps reached"
    assert m["steps_recorded"] == STEPS and len(m["steps"]) == STEPS
    assert m["side"]["label"] == "cpu (reference; CUDA shim)" and m["host"]["hostname"]
    assert m["side"]["versions"]["torch"]
    # gradient accumulation: two backward() calls per step, the step's loss is their sum
    s1 = m["steps"][0]
    assert s1["backward_calls"] == 2
    assert s1["loss"] == pytest.approx(sum(s1["backward_losses"]))
    # the cosine schedule's linear warm-up
    lrs = [s["lr"][0] for s in m["steps"]]
    assert lrs[1] == pytest.approx(2 * lrs[0]) and lrs[-1] > lrs[0]
    assert m["tied"] == [["lm_head.weight", "transformer.wte.weight"]]
    keys = [x["key"] for x in m["modules"]]
    assert keys[0] == "transformer.wte" and "transformer.h.0.mlp.gelu" in keys
    assert m["precision"]["regime"] == "float32"
    ops = {o["op"] for o in m["ops"]}
    assert {"aten::mm", "aten::gelu", "aten::native_layer_norm"} <= ops
    assert "aten::isnan" not in ops  # porter's own statistics are not the user's operators
    assert reference_trace.stat().st_size < 2 * 2**20  # statistics and samples, not activations


@ON_TRACE
def test_faithful_port_against_recorded_trace_passes(trees, reference_trace, tmp_path):
    port = trees[1]
    report = tmp_path / "r.json"
    res = CliRunner().invoke(
        app,
        [
            "parity-check",
            "--ported",
            str(port),
            "--reference-trace",
            str(reference_trace),
            "--steps",
            str(STEPS),
            "--timeout",
            "400",
            "--report",
            str(report),
            "--keep",
            "--",
            *CMD,
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(report.read_text())
    assert data["verdict"] == "pass" and data["schema"] == "porter.parity-script/1"
    assert len(data["steps"]) == STEPS and data["parted_at"] is None
    assert all(s["loss_ok"] and s["lr_ok"] and s["grad_norm_ok"] for s in data["steps"])
    assert data["first_divergence"] is None and len(data["modules"]) > 20
    assert data["ported"]["device"] == "xla (CPU PJRT, emulated)" and data["ported"]["emulated"]
    assert data["tolerances"]["loss"] == [1e-4, 1e-5]
    # the port's known gaps: the LR schedule's new Python float each step recompiles
    assert data["ported"]["perf"]["xla"]["uncached_compiles"] >= 1
    work = Path(res.output.split("work folder:")[1].split()[0])
    port_trace = work / "ported.trace.safetensors"
    # the two traces compare equal on their own too (porter trace compare)
    html = tmp_path / "r.html"
    res2 = CliRunner().invoke(app, ["trace", "compare", str(reference_trace), str(port_trace), "--report", str(html)])
    assert res2.exit_code == 0, res2.output
    page = html.read_text()
    assert "<svg" in page and page.count("<polyline") == 2 and "transformer.h.0.mlp.gelu" in page
    # operator coverage from the XLA run's own evidence
    rows, _ = classify(read_trace(port_trace), "xla")
    by = {r.op: r for r in rows}
    assert by["aten::mm"].status == "native" and "xla" in by["aten::mm"].devices
    assert "aten::isnan" not in by  # porter's own statistics are not counted as the user's ops
    # the operators torch_xla ran (its own counters): the script's CPU batch sampling is not one
    assert "aten::randint" not in by and all(r.devices == ["xla"] for r in rows)
    assert "aten::multinomial" not in by  # corpus made before the first module call: not counted
    # and from stored data for neuron: known implemented ops native, the rest unknown
    rows, data = classify(read_trace(reference_trace), "neuron")
    counts = summary(rows)
    assert {r.op: r.status for r in rows}["aten::mm"] == "native"
    assert counts["unknown"] > 0 and counts["cpu_fallback"] == 0
    shutil.rmtree(work, ignore_errors=True)


def test_one_changed_layer_fails_and_is_named(trees, tmp_path):
    orig, _, broken = trees
    report = tmp_path / "r.md"
    res = CliRunner().invoke(
        app,
        [
            "parity-check",
            "--original",
            str(orig),
            "--ported",
            str(broken),
            "--steps",
            "1",
            "--timeout",
            "400",
            "--report",
            str(report),
            "--",
            *CMD,
        ],
    )
    assert res.exit_code == 1, res.output
    assert "first diverging module at step 1: transformer.h.0.mlp.gelu (GELU vs ReLU)" in res.output
    md = report.read_text()
    assert "transformer.h.0.mlp.gelu" in md and "FAIL" in md


@ON_TRACE
def test_a_port_whose_initial_weights_really_differ_fails_on_them(trees, reference_trace, tmp_path):
    other = tmp_path / "other-init"
    shutil.copytree(trees[1], other)
    model = other / "model.py"
    text = model.read_text()
    old = "elif isinstance(module, nn.Embedding):\n            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)"
    assert old in text
    model.write_text(text.replace(old, old.replace("std=0.02", "std=0.03")))
    report = tmp_path / "w.json"
    res = CliRunner().invoke(
        app,
        [
            "parity-check",
            "--ported",
            str(other),
            "--reference-trace",
            str(reference_trace),
            "--steps",
            "1",
            "--timeout",
            "400",
            "--report",
            str(report),
            "--",
            *CMD,
        ],
    )
    assert res.exit_code == 1, res.output
    data = json.loads(report.read_text())
    differing = {d["name"]: d for d in data["parameters"]["differing"]}
    # the position embedding (the token embedding is tied to lm_head, a Linear initialised after it)
    assert set(differing) == {"transformer.wpe.weight"}
    first = data["parameters"]["differing"][0]
    assert first["ported"] == pytest.approx(1.5 * first["reference"], rel=1e-5)
    where = f"{first['name']}[{', '.join(map(str, first['element']))}]"
    reason = next(r for r in data["reasons"] if r.startswith("the two runs did not start from the same weights"))
    assert where in reason and "same seeded CPU generator" in reason
