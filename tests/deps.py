"""What the suite needs installed, and a failure (never a skip) when it is missing.

The README's test command installs every dependency of every test. A test that skipped
when one was missing would let a broken install step give a green run, so each of these
helpers fails the test, with the command that installs what is missing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTALL = 'python3 -m pip install -e ".[test,xla,realprog]"'
TPU_VENV = REPO / ".venv-tpu"
TPU_INSTALL = (
    f'python3 -m venv {TPU_VENV} && {TPU_VENV}/bin/python -m pip install "torch==2.13.0" "torch-tpu==0.2.0" jax'
)


def require(*modules: str) -> None:
    """Fail unless every module can be imported; finds them without importing them
    (importing torch_xla costs seconds)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} is not installed: run `{INSTALL}` (the README's test command)", pytrace=False)


def need(module: str) -> ModuleType:
    """The imported module; a failure naming the install command when it is missing."""
    require(module)
    return importlib.import_module(module)


def tpu_python() -> str:
    """A python with the TorchTPU wheel (torch 2.13 + torch-tpu 0.2.0 + jax): `PORTER_TPU_PYTHON`,
    else the repository's `.venv-tpu` (where `.ci/run` builds it)."""
    named = os.environ.get("PORTER_TPU_PYTHON")
    if named:
        if not Path(named).is_file():
            pytest.fail(f"PORTER_TPU_PYTHON={named} does not exist", pytrace=False)
        return named
    found = TPU_VENV / "bin" / "python"
    if found.is_file():
        return str(found)
    pytest.fail(f"no python with the TorchTPU wheel: run `{TPU_INSTALL}` or set PORTER_TPU_PYTHON", pytrace=False)


def program(name: str, install: str) -> str:
    """The path of a program the test runs (chromium, patch)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: {install}", pytrace=False)
    return path
