"""The original (CUDA) fixture projects really run on a CPU for a few steps.

Each script runs as a subprocess in a temporary directory (so checkpoints and run folders land
there), with CUDA hidden, and must exit 0 and write finite numbers to its --out JSON.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.slow]

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
TIMEOUT_S = 120


def run_script(project, script, args, cwd):
    src = PROJECTS / project / "src"
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""  # take the CPU paths even on a GPU machine
    env["PYTHONWARNINGS"] = "ignore"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep __pycache__ out of the fixture trees
    # the scripts pick CPU themselves; keep them from inheriting torchrun variables
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    proc = subprocess.run(
        [sys.executable, str(src / script), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert proc.returncode == 0, (
        f"{project}/{script} exited {proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
    )
    return proc


def load_json(path):
    assert path.is_file(), f"{path} was not written"
    return json.loads(path.read_text())


def assert_finite(values, what):
    assert values, f"no {what}"
    bad = [v for v in values if not (isinstance(v, (int, float)) and math.isfinite(v))]
    assert not bad, f"non-finite {what}: {bad}"


def test_gpt_trainer_runs_on_cpu(tmp_path):
    # no --device: the script's own `"cuda" if torch.cuda.is_available() else "cpu"` must pick CPU
    out = tmp_path / "losses.json"
    proc = run_script("gpt_trainer", "train.py",
                      ["--no-compile", "--max-iters", "3", "--eval-iters", "2", "--out", str(out)], tmp_path)
    data = load_json(out)
    assert data["device"] == "cpu"
    assert len(data["losses"]) == 3
    assert_finite(data["losses"], "train losses")
    assert_finite(list(data["val_losses"].values()), "val losses")
    # the loss of a 64-token vocabulary starts near ln(64)
    assert abs(data["losses"][0] - math.log(64)) < 0.5
    assert (tmp_path / "runs" / "cuda_baseline").is_dir()
    assert "CUDA is not available" in proc.stdout


def test_cnn_trainer_trains_then_resumes_on_cpu(tmp_path):
    common = ["-b", "32", "--val-size", "64", "--output-dir", str(tmp_path / "ckpt")]
    out = tmp_path / "metrics.json"
    run_script("cnn_trainer", "train.py",
               ["--epochs", "2", "--steps-per-epoch", "2", "--out", str(out), *common], tmp_path)
    data = load_json(out)
    assert len(data["losses"]) == 4
    assert_finite(data["losses"], "train losses")
    assert_finite(data["val_loss"], "val losses")
    assert_finite(data["val_acc1"], "val accuracies")
    ckpt = tmp_path / "ckpt" / "checkpoint.pth.tar"
    assert ckpt.is_file()

    # resume from the checkpoint and evaluate: same weights, same validation loss
    out2 = tmp_path / "eval.json"
    run_script("cnn_trainer", "train.py",
               ["--resume", str(ckpt), "--evaluate", "--out", str(out2), *common], tmp_path)
    data2 = load_json(out2)
    assert_finite(data2["val_loss"], "val losses")
    assert data2["val_loss"][0] == pytest.approx(data["val_loss"][-1], rel=1e-5)


def test_infer_bench_runs_on_cpu(tmp_path):
    out = tmp_path / "bench.json"
    # --cuda-graph and --nvtx must be switched off (with a warning) on a CPU-only machine
    run_script("infer_bench", "bench.py",
               ["--warmup", "2", "--iters", "3", "--batch-size", "8", "--cuda-graph", "--nvtx",
                "--out", str(out)], tmp_path)
    data = load_json(out)
    assert data["device"] == "cpu"
    assert data["cuda_graph"] is False
    assert len(data["latency_ms"]) == 3
    assert_finite(data["latency_ms"], "latencies")
    assert all(v > 0 for v in data["latency_ms"])
    assert_finite([data["mean_ms"], data["throughput"], data["logits_mean"]], "summary numbers")


@pytest.mark.parametrize("project", ["gpt_trainer", "cnn_trainer", "infer_bench"])
def test_model_factories(project, monkeypatch):
    """build_model() / example_inputs() are deterministic and the forward pass is finite."""
    import importlib.util

    import torch

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    spec = importlib.util.spec_from_file_location(f"_fixture_{project}_model",
                                                  PROJECTS / project / "src" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    inputs = module.example_inputs()
    assert isinstance(inputs, tuple) and all(isinstance(t, torch.Tensor) for t in inputs)
    assert all(t.device.type == "cpu" for t in inputs)
    m1, m2 = module.build_model(), module.build_model()
    sd1, sd2 = m1.state_dict(), m2.state_dict()
    assert all(torch.equal(sd1[k], sd2[k]) for k in sd1)
    with torch.no_grad():
        out = m1(*inputs)
    tensors = [t for t in (out if isinstance(out, tuple) else (out,)) if t is not None]
    assert all(torch.isfinite(t).all() for t in tensors)
