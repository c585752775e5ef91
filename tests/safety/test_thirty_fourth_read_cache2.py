"""The thirty-fourth read of the dependency files after the merge (cache2): uv's torch backend set by
`UV_TORCH_BACKEND` or `--torch-backend` where a shell or a Dockerfile runs uv (uv 0.13.10 `pip install
--dry-run -v` asks `/whl/cu121` for each), pixi's feature-level `pypi-options` (pixi's `Feature.pypi_options`),
and Hatch's `installer` set by a matrix override (hatch 1.18.2 `env show --json`: `test.uv` installs with uv)."""

from __future__ import annotations

import re

import pytest


def _run(tmp_path, files, target="tpu"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    return {str(r.path).replace("\\", "/").rsplit("/", 1)[-1]: r for r in results}


_SHELL = (
    "#!/bin/sh\n"
    "export UV_TORCH_BACKEND=cu124\n"
    'UV_TORCH_BACKEND="cu118" uv pip install -r requirements.txt\n'
    "uv pip install --torch-backend cu121 torch\n"
    "uv pip install --torch-backend=cu126 torch\n"
    "uv pip install --torch-backend cpu torch\n"
    "UV_TORCH_BACKEND=auto uv pip install torch\n"
)


@pytest.mark.parametrize("target, replacement", [("tpu", "cpu"), ("xla", None)])
def test_uvs_torch_backend_set_by_its_variable_or_option_in_a_script_is_reported(tmp_path, target, replacement):
    """uv takes torch from `https://download.pytorch.org/whl/cu124` under `UV_TORCH_BACKEND=cu124` or
    `--torch-backend cu124` as under `torch-backend = "cu124"` in uv.toml (reported) or Hatch's `env-vars`
    (reported): in a script, nothing was said. `cpu` and `auto` (uv finds no GPU on the target) stay alone."""
    result = _run(tmp_path, {"install.sh": _SHELL}, target)["install.sh"]
    found = sorted((f.start.line, f.replacement) for f in result.findings if f.code == "DEP002")
    assert found == [(2, replacement), (3, replacement), (4, replacement), (5, replacement)]


def test_uvs_torch_backend_in_a_dockerfiles_env_is_replaced_by_the_cpu_build(tmp_path):
    """`ENV UV_TORCH_BACKEND=cu121` then `RUN uv sync`: uv installs torch's CUDA build; the fix gives the
    CPU build's backend in place of `cu121` alone (the line's other variable kept)."""
    text = 'FROM python:3.11\nENV UV_TORCH_BACKEND=cu121 PATH="/x:$PATH"\nRUN uv sync\n'
    result = _run(tmp_path, {"Dockerfile": text})["Dockerfile"]
    assert [(f.code, f.start.line) for f in result.findings if f.code == "DEP002"] == [("DEP002", 2)]
    [site] = [f for f in result.findings if f.code == "DEP002"]
    line = text.splitlines()[1]
    assert (site.start.column, site.end.line, site.end.column) == (line.index("cu121"), 2, line.index(" PATH"))
    assert site.replacement == "cpu"
    assert (tmp_path / "Dockerfile").read_text() == text


def test_pip_ignores_a_torch_backend_option_so_pip_install_gets_no_backend_finding(tmp_path):
    """`--torch-backend` is uv's: `pip install --torch-backend cu121` is refused by pip, and nothing
    of it is a torch index."""
    text = "#!/bin/sh\npip install --torch-backend cu121 torch\n"
    result = _run(tmp_path, {"install.sh": text})["install.sh"]
    assert [f for f in result.findings if f.code == "DEP002"] == []


_PIXI = """[workspace]
name = "demo"
channels = ["conda-forge"]
platforms = ["linux-64"]

[feature.gpu.pypi-options]
extra-index-urls = ["https://download.pytorch.org/whl/cu121"]

[feature.gpu2.pypi-options]
index-url = "https://download.pytorch.org/whl/cu118"
find-links = [{ url = "https://download.pytorch.org/whl/cu124/torch_stable.html" }]

[environments]
gpu = ["gpu"]
gpu2 = ["gpu2"]
"""


@pytest.mark.parametrize("name", ["pixi.toml", "pyproject.toml"])
def test_pixis_feature_pypi_options_naming_cuda_indexes_are_reported(tmp_path, name):
    """pixi reads `pypi-options` on a feature as on the workspace (its `Feature.pypi_options`; the
    environments taking the feature resolve PyPI packages from them): the workspace's were reported,
    a feature's not."""
    text = _PIXI
    if name == "pyproject.toml":  # the same tables under `[tool.pixi]`
        text = '[project]\nname = "demo"\nversion = "1"\n\n' + re.sub(r"(?m)^\[", "[tool.pixi.", _PIXI)
    result = _run(tmp_path, {name: text})[name]
    lines = text.splitlines()
    found = sorted(f.start.line for f in result.findings if f.code == "DEP002")
    expected = [i + 1 for i, line in enumerate(lines) if "download.pytorch.org" in line]
    assert found == expected and len(expected) == 3


_HATCH_MATRIX = """[project]
name = "demo"
version = "0.1"

[tool.hatch.envs.test]
env-vars = { UV_TORCH_BACKEND = "cu121", PIP_EXTRA_INDEX_URL = "https://download.pytorch.org/whl/cu118" }

[[tool.hatch.envs.test.matrix]]
tool = ["pip", "uv"]

[tool.hatch.envs.test.overrides]
matrix.tool.installer = [{ value = "uv", if = ["uv"] }]
"""


def test_a_hatch_installer_set_by_a_matrix_override_makes_its_variables_read(tmp_path):
    """hatch 1.18.2 `env show --json`: `test.pip` installs with pip, `test.uv` with uv, both under the
    table's `env-vars`; uv then takes torch from `UV_TORCH_BACKEND = "cu121"`'s CUDA index. Only the pip
    variable was reported (the table's own installer)."""
    result = _run(tmp_path, {"pyproject.toml": _HATCH_MATRIX})["pyproject.toml"]
    line = _HATCH_MATRIX.splitlines()[5]
    found = sorted((f.start.line, f.start.column) for f in result.findings if f.code == "DEP002")
    assert found == [(6, line.index('cu121"')), (6, line.index("https://"))]


def test_a_hatch_matrix_without_an_installer_override_leaves_uvs_variables_alone(tmp_path):
    """The guard: no override gives uv, so `UV_TORCH_BACKEND` is read by no environment."""
    text = _HATCH_MATRIX.replace(
        'matrix.tool.installer = [{ value = "uv", if = ["uv"] }]', 'matrix.tool.features = ["x"]'
    )
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    assert [f.start.line for f in result.findings if f.code == "DEP002"] == [6]


_COMPOSE = """services:
  app:
    image: python:3.11
    command: pip install -r requirements.txt
    environment:
      PIP_EXTRA_INDEX_URL: https://download.pytorch.org/whl/cu121
  web:
    image: python:3.11
    environment:
      - UV_INDEX_URL=https://download.pytorch.org/whl/cu118
"""
_WORKFLOW = """on: push
env:
  PIP_EXTRA_INDEX_URL: https://download.pytorch.org/whl/cu121
jobs:
  t:
    runs-on: ubuntu-latest
    env:
      UV_TORCH_BACKEND: cu124
    steps:
      - run: pip install -r requirements.txt
"""


@pytest.mark.parametrize("name, text", [("docker-compose.yml", _COMPOSE), ("ci.yml", _WORKFLOW)])
def test_index_variables_in_a_compose_environment_or_a_workflows_env_are_reported(tmp_path, name, text):
    """A compose service's `environment:` and a workflow's `env:` set pip's and uv's variables for the
    installs run under them, as a Dockerfile's `ENV` (reported) does: the compose file was skipped ("no
    CUDA-related token": DEP002 did not read compose files), the workflow's variables not checked."""
    result = _run(tmp_path, {name: text})[name]
    expected = [i + 1 for i, line in enumerate(text.splitlines()) if "/cu1" in line or ": cu1" in line]
    assert sorted(f.start.line for f in result.findings if f.code == "DEP002") == expected
    replacements = {f.replacement for f in result.findings if f.code == "DEP002"}
    assert replacements and replacements <= {"https://download.pytorch.org/whl/cpu", "cpu"}
