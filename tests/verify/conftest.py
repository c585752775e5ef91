"""The verifier's tests run real models in real subprocesses: they need torch 2.9.0 and
torch-xla 2.9.0 (pip install 'porter[xla]'); without them every test here fails.

Both sides of a check inherit the environment set here (each only where the shell that
started pytest does not set it):

* PJRT_DEVICE=CPU: PyTorch/XLA runs on its CPU client (the emulation the tests assert);
* XLA_FLAGS: the least XLA:CPU compile work. Optimisation level 0, and the older elemental
  emitters in place of the fusion emitters: a third less CPU per compile, with results the
  same to the last bit on these models (measured on the GPT trainer's ten-step port: the
  same loss at every step);
* OMP_NUM_THREADS=1: the suite runs two workers on two cores, and each side's torch would
  otherwise start an OpenMP pool per core whose threads spin while they wait for work on a
  machine where the other worker holds the other core (a CPU-only reference side spent up to
  twice its CPU time so). The tests assert what ran and what it computed, not its speed.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

SIDE_ENV = {
    "PJRT_DEVICE": "CPU",
    "XLA_FLAGS": "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false",
    "OMP_NUM_THREADS": "1",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(item.path).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.xla)  # tests/conftest.py fails it when torch-xla is missing


@pytest.fixture(scope="module", autouse=True)
def side_env():
    """SIDE_ENV for this folder's tests only (module scope: before the modules' own costly
    fixtures, which run sides too); undone after each module."""
    import os

    mp = pytest.MonkeyPatch()
    for name, value in SIDE_ENV.items():
        if name not in os.environ:
            mp.setenv(name, value)
    yield
    mp.undo()
