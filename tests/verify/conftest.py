"""The verifier's tests run real models in real subprocesses: they need torch 2.9.0 and
torch-xla 2.9.0 (pip install 'porter[xla]'); without them every test here fails."""

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(item.path).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.xla)  # tests/conftest.py fails it when torch-xla is missing


os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
