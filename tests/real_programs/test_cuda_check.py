"""The GPU check's verdict (benchmarks/real_programs/cuda_check.py): a `--portable` port keeps CUDA
only when its losses lived on CUDA and equal the deterministic original's. No GPU here: the
verdict is judged on results shaped as `cuda_check.run` writes them, and on the recorded run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_programs"
sys.path.insert(0, str(BENCH))

import cuda_check  # noqa: E402 - found through the sys.path entry above


def _runs(port_devices=("cuda",), port_losses=(2.5, 2.25)) -> dict:
    def run(devices, losses):
        return {"devices": list(devices), "losses": list(losses), "error": None}

    original = run(["cuda"], [2.5, 2.25])
    return {
        "p": {
            "original-cuda": original,
            "original-cuda-again": original,
            "original-cuda-det": original,
            "portable-neuron-cuda": run(port_devices, port_losses),
            "portable-tpu-cuda": original,
            "original-cpu-shim": run(["cpu"], [2.5, 2.26]),
            "original-cuda-like-cpu": run(["cuda"], [2.5, 2.26]),
        }
    }


def _verdict(results: dict) -> str:
    return cuda_check._verdict(cuda_check.summarise(results)["p"])


def test_a_port_that_computes_the_same_on_cuda_keeps_cuda() -> None:
    assert _verdict(_runs()) == "yes"


def test_a_port_that_falls_back_to_the_cpu_does_not() -> None:
    assert _verdict(_runs(port_devices=("cpu",))) == "portable-neuron-cuda: ran on ['cpu']"


def test_a_port_that_computes_something_else_does_not() -> None:
    assert _verdict(_runs(port_losses=(2.5, 2.3))).startswith("portable-neuron-cuda: differs")


def test_a_port_that_stopped_early_does_not() -> None:
    assert _verdict(_runs(port_losses=(2.5,))) == "portable-neuron-cuda: no losses to compare"


def test_the_recorded_gpu_run_is_what_the_doc_shows(tmp_path: Path, monkeypatch) -> None:
    recorded = BENCH / "cuda_results.json"
    doc = tmp_path / "real-programs.md"
    doc.write_text((BENCH.parents[1] / "docs" / "real-programs.md").read_text())
    monkeypatch.setattr(cuda_check, "DOC", doc)
    assert cuda_check.compare(recorded, write_doc=True) == 0
    assert doc.read_text() == (BENCH.parents[1] / "docs" / "real-programs.md").read_text()
    assert json.loads(recorded.read_text())["host"]["gpu"].startswith("NVIDIA")
