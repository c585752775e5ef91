"""The verifier's tests run real models in real subprocesses: they need torch 2.9.0 and
torch-xla 2.9.0 (pip install 'porter[xla]'). Without them the whole folder is skipped."""

import importlib.util
import os

import pytest

pytest.importorskip("torch")
if importlib.util.find_spec("torch_xla") is None:  # importing it here would cost ~6 s
    pytest.skip("torch_xla is not installed (pip install 'porter[xla]')", allow_module_level=True)

os.environ.setdefault("PJRT_DEVICE", "CPU")
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")
