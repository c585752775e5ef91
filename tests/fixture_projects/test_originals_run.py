"""The original (CUDA) fixture projects really run on a CPU for a few steps.

Each script runs in a temporary directory (so checkpoints and run folders land there), with
CUDA hidden, and must exit 0 and write finite numbers to its --out JSON. The scripts run in
one process (tests/programs.py), each as it would alone.
"""

import json
import math
import sys
from pathlib import Path

import pytest

from tests.programs import Run, run_programs

# one module fixture runs every script: the tests stay on one xdist worker
pytestmark = [pytest.mark.torch, pytest.mark.slow, pytest.mark.xdist_group("originals_run")]

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"

# (project, script, args) by name, run in this order; each in a folder of its own, where its
# checkpoints and run folders land. The resume reads the checkpoint cnn_train wrote.
RUNS = {
    # no --device: the script's own `"cuda" if torch.cuda.is_available() else "cpu"` must pick CPU
    "gpt": (
        "gpt_trainer",
        "train.py",
        ["--no-compile", "--max-iters", "3", "--eval-iters", "2", "--out", "{dir}/losses.json"],
    ),
    "cnn_train": (
        "cnn_trainer",
        "train.py",
        [
            "--epochs",
            "2",
            "--steps-per-epoch",
            "2",
            "--out",
            "{dir}/metrics.json",
            "-b",
            "32",
            "--val-size",
            "64",
            "--output-dir",
            "{dir}/ckpt",
        ],
    ),
    # resume from the checkpoint and evaluate: same weights, same validation loss
    "cnn_resume": (
        "cnn_trainer",
        "train.py",
        [
            "--resume",
            "{dir}/ckpt/checkpoint.pth.tar",
            "--evaluate",
            "--out",
            "{dir}/eval.json",
            "-b",
            "32",
            "--val-size",
            "64",
            "--output-dir",
            "{dir}/ckpt",
        ],
    ),
    # --cuda-graph and --nvtx must be switched off (with a warning) on a CPU-only machine
    "infer": (
        "infer_bench",
        "bench.py",
        ["--warmup", "2", "--iters", "3", "--batch-size", "8", "--cuda-graph", "--nvtx", "--out", "{dir}/bench.json"],
    ),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, tuple[Run, Path]]:
    """Every original script run once on the CPU (CUDA hidden), in one process (torch loads
    once): each run's exit status and output, and the folder it ran in, by name."""
    root = tmp_path_factory.mktemp("originals")
    dirs = {"gpt": root / "gpt", "cnn_train": root / "cnn", "cnn_resume": root / "cnn", "infer": root / "infer"}
    for folder in dirs.values():
        folder.mkdir(exist_ok=True)
    runs = run_programs(
        [
            (PROJECTS / project / "src" / script, [a.format(dir=dirs[name]) for a in args], dirs[name])
            for name, (project, script, args) in RUNS.items()
        ],
        root,
    )
    return {name: (run, dirs[name]) for name, run in zip(RUNS, runs)}


def run_script(ran: dict[str, tuple[Run, Path]], name: str) -> tuple[Run, Path]:
    run, folder = ran[name]
    project, script, _ = RUNS[name]
    assert run.rc == 0, (
        f"{project}/{script} exited {run.rc}\n"
        f"--- stdout ---\n{run.stdout[-4000:]}\n--- stderr ---\n{run.stderr[-4000:]}"
    )
    return run, folder


def load_json(path):
    assert path.is_file(), f"{path} was not written"
    return json.loads(path.read_text())


def assert_finite(values, what):
    assert values, f"no {what}"
    bad = [v for v in values if not (isinstance(v, (int, float)) and math.isfinite(v))]
    assert not bad, f"non-finite {what}: {bad}"


def test_gpt_trainer_runs_on_cpu(ran):
    run, folder = run_script(ran, "gpt")
    data = load_json(folder / "losses.json")
    assert data["device"] == "cpu"
    assert len(data["losses"]) == 3
    assert_finite(data["losses"], "train losses")
    assert_finite(list(data["val_losses"].values()), "val losses")
    # the loss of a 64-token vocabulary starts near ln(64)
    assert abs(data["losses"][0] - math.log(64)) < 0.5
    assert (folder / "runs" / "cuda_baseline").is_dir()
    assert "CUDA is not available" in run.stdout


def test_cnn_trainer_trains_then_resumes_on_cpu(ran):
    _, folder = run_script(ran, "cnn_train")
    data = load_json(folder / "metrics.json")
    assert len(data["losses"]) == 4
    assert_finite(data["losses"], "train losses")
    assert_finite(data["val_loss"], "val losses")
    assert_finite(data["val_acc1"], "val accuracies")
    assert (folder / "ckpt" / "checkpoint.pth.tar").is_file()

    # resumed from the checkpoint and evaluated: same weights, same validation loss
    run_script(ran, "cnn_resume")
    data2 = load_json(folder / "eval.json")
    assert_finite(data2["val_loss"], "val losses")
    assert data2["val_loss"][0] == pytest.approx(data["val_loss"][-1], rel=1e-5)


def test_infer_bench_runs_on_cpu(ran):
    _, folder = run_script(ran, "infer")
    data = load_json(folder / "bench.json")
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
    spec = importlib.util.spec_from_file_location(f"_fixture_{project}_model", PROJECTS / project / "src" / "model.py")
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
