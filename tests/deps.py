"""What the suite needs installed, and a failure (never a skip) when it is missing.

The README's test command installs every dependency of every test. A test that skipped
when one was missing would let a broken install step give a green run, so each of these
helpers fails the test, with the command that installs what is missing.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import time
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
INSTALL = 'python3 -m pip install -e ".[test,xla,hf,realprog-quick]"'
# the benchmark run (`pytest -m benchmark`): every real program's dependencies
BENCHMARK_INSTALL = 'python3 -m pip install -e ".[test,xla,realprog]"'
TPU_VENV = REPO / ".venv-tpu"
TPU_INSTALL = (
    f'python3 -m venv {TPU_VENV} && {TPU_VENV}/bin/python -m pip install "torch==2.13.0" "torch-tpu==0.2.0" jax'
)


# `.ci/run` starts the suite while PyTorch, PyTorch/XLA and the TorchTPU environment are still
# being installed (gigabytes of downloads, which the ~1,000 tests of the engine do not need). It
# names a file in this variable that appears when those installs have ended: "ok", or why they
# failed. Every test that needs them waits here (they run last: tests/conftest.py).
INSTALLING = "PORTER_TEST_INSTALLING"
INSTALL_WAIT_S = 1800


def wait_for_installs() -> None:
    flag = os.environ.get(INSTALLING)
    if not flag:
        return
    path, deadline = Path(flag), time.monotonic() + INSTALL_WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the installs .ci/run started did not end within {INSTALL_WAIT_S} s ({path})", pytrace=False)
        time.sleep(0.5)
    said = path.read_text().strip()  # written whole: .ci/run renames it into place
    if said != "ok":
        pytest.fail(f"the installs .ci/run started failed: {said}", pytrace=False)
    importlib.invalidate_caches()  # this process may have looked at site-packages before


def require(*modules: str, install: str = INSTALL) -> None:
    """Fail unless every module can be imported; finds them without importing them
    (importing torch_xla costs seconds)."""
    wait_for_installs()
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} is not installed: run `{install}` (see the README)", pytrace=False)


def require_distributions(*requirements: str, install: str = INSTALL) -> None:
    """Fail unless every requirement (`name==version`, as a manifest pins it) is installed at
    that version; by distribution name, since those are not module names (scikit-learn)."""
    wait_for_installs()
    wrong = []
    for text in requirements:
        req = Requirement(text)
        try:
            found = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            wrong.append(f"{req.name} is not installed")
            continue
        if not req.specifier.contains(found, prereleases=True):
            wrong.append(f"{req.name} {found} is installed, {text} is needed")
    if wrong:
        pytest.fail(f"{'; '.join(wrong)}: run `{install}` (see the README)", pytrace=False)


def need(module: str) -> ModuleType:
    """The imported module; a failure naming the install command when it is missing."""
    require(module)
    return importlib.import_module(module)


def tpu_python() -> str:
    """A python with the TorchTPU wheel (torch 2.13 + torch-tpu 0.2.0 + jax): `PORTER_TPU_PYTHON`,
    else the repository's `.venv-tpu` (where `.ci/run` builds it)."""
    wait_for_installs()
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
