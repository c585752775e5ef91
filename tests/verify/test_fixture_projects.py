"""The fixture projects' models hold parity on PyTorch/XLA's CPU device: the CUDA original
(fixtures/projects/*/src, run on the CPU through porter's CUDA shim) against porter's port
(expected/xla, run on XLA:CPU).

Only a project whose port of model.py differs from its original is compared: where porter
leaves model.py byte-identical (cnn_trainer, infer_bench keep their CUDA code in the
scripts), the run would compare a model with itself and prove nothing about the port.
"""

from pathlib import Path

import pytest

from porter.verify import ParityConfig, run_parity

pytestmark = [pytest.mark.xla, pytest.mark.slow]

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"


def _ported_models() -> list[str]:
    names = []
    for p in sorted(PROJECTS.iterdir()):
        src, port = p / "src" / "model.py", p / "expected" / "xla" / "model.py"
        if src.is_file() and port.is_file() and src.read_bytes() != port.read_bytes():
            names.append(p.name)
    return names


NAMES = _ported_models()
assert NAMES, f"no fixture project in {PROJECTS} whose xla port changes model.py"


@pytest.mark.parametrize("name", NAMES)
def test_fixture_port_holds_parity_on_xla(name):
    root = PROJECTS / name
    cfg = ParityConfig(
        original=root / "src",
        ported=root / "expected" / "xla",
        entry="model:build_model",
        warmup=1,
        repeats=2,
        explain=False,
        timeout=240,
    )
    r = run_parity(cfg)
    assert r.verdict == "pass", r.reasons
    assert r.reference.device.startswith("cpu") and r.reference.shim == "cuda->cpu"  # the CUDA original
    assert r.ported.device == "xla (CPU PJRT, emulated)"
    assert r.gradients["ran"] and r.layers_compared > 5
