"""The fixture projects' models (fixtures/projects/*/src vs expected/xla) hold parity on
PyTorch/XLA's CPU device."""

from pathlib import Path

import pytest

from porter.verify import ParityConfig, run_parity

pytestmark = [pytest.mark.xla, pytest.mark.slow]

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
NAMES = sorted(p.name for p in PROJECTS.iterdir()
               if (p / "src" / "model.py").is_file() and (p / "expected" / "xla" / "model.py").is_file()) \
    if PROJECTS.is_dir() else []


@pytest.mark.skipif(not NAMES, reason="no fixture projects with src/ and expected/xla/")
@pytest.mark.parametrize("name", NAMES)
def test_fixture_port_holds_parity_on_xla(name):
    root = PROJECTS / name
    cfg = ParityConfig(original=root / "src", ported=root / "expected" / "xla",
                       entry="model:build_model", warmup=1, repeats=2, explain=False,
                       timeout=240)
    r = run_parity(cfg)
    assert r.verdict == "pass", r.reasons
    assert r.ported.device == "xla (CPU PJRT, emulated)"
    assert r.gradients["ran"] and r.layers_compared > 5
