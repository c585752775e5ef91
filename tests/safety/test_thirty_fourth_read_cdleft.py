"""The thirty-fourth read's dependency leftovers (cdleft): what the thirty-third read's cache, cache2 and
cdleft helpers left, each read against the tool that installs it (pip 23.2.1's `-r`/`-c` and its
`PIP_<OPTION>` variables, uv 0.13.9's `UV_*` variables, hatch 1.18.2's `env-vars` while it installs)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_third_read_cache2 import _run


def _dep004(result):
    return [f for f in result.findings if f.code == "DEP004"]


def test_a_requirements_file_named_with_both_r_and_c_still_gets_its_target_packages_said(tmp_path):
    """pip-tools' layered files: requirements-dev.txt holds `-c requirements.txt` and `-r requirements.txt`.
    pip installs requirements.txt (`-r`) and reads it as constraints (`-c`), where it refuses the extra of
    `torch-xla[tpu]==2.9.0`. porter read it as constraints only: no DEP004 anywhere, unsaid. Now DEP004
    is reported on torch's line, with no edit, and says which file names it with `-c`."""
    results = _run(
        tmp_path,
        {
            "requirements.txt": "torch==2.9.0\nnumpy\n",
            "requirements-dev.txt": "-c requirements.txt\n-r requirements.txt\npytest\n",
            "m.py": "import torch\nx = torch.zeros(2).cuda()\n",
        },
        target="xla",
    )
    [found] = _dep004(results["requirements.txt"])
    assert found.replacement is None, found
    assert "requirements-dev.txt names this file with `-c`" in (found.advice or ""), found.advice
    assert (found.start.line, found.start.column) == (1, 0)


def test_a_pins_file_a_pip_command_line_names_with_c_gets_no_edit_that_pip_would_refuse(tmp_path):
    """`RUN pip install -c requirements-pins.txt torch` in a Dockerfile: porter's fix added
    `torch-xla[tpu]==2.9.0` to requirements-pins.txt, and that `pip install` then stops ("Constraints cannot
    have extras"). The path is the container's, so porter matches it by file name and reports the DEP004
    there with the command's place, no edit (a shell script's and a Makefile's likewise)."""
    for script, text in {
        "Dockerfile": "FROM python:3.11\nCOPY requirements-pins.txt /app/\nWORKDIR /app\n"
        "RUN pip install --no-cache-dir \\\n    -c requirements-pins.txt torch\n",
        "setup.sh": "#!/bin/bash\npython -m pip install torch --constraint=deps/requirements-pins.txt && echo ok\n",
        "Makefile": "install:\n\tuv pip install -c'requirements-pins.txt' torch\n",
    }.items():
        where = tmp_path / script.replace(".", "_")
        results = _run(where, {script: text, "requirements-pins.txt": "torch==2.9.0\n"}, target="xla")
        [found] = _dep004(results["requirements-pins.txt"])
        assert found.replacement is None, (script, found)
        line = {"Dockerfile": 5, "setup.sh": 2, "Makefile": 2}[script]
        # (setup.sh's `deps/requirements-pins.txt` is not this file from its folder: said as matched by file name,
        # thirty-fifth read)
        assert f"{script}:{line} names " in (found.advice or ""), found.advice


def test_a_pins_file_no_command_names_with_c_keeps_its_fix(tmp_path):
    """Guards: `-c` of `python -c`, of `conda install -c`, or of a command that is no pip install names no
    constraints file; requirements-pins.txt keeps its DEP004 fix (a pip command line installing it with `-r`
    too)."""
    results = _run(
        tmp_path,
        {
            "run.sh": "python -c 'import requirements-pins.txt'\nconda install -c requirements-pins.txt x\n"
            "pip install -r requirements-pins.txt\n",
            "requirements-pins.txt": "torch==2.9.0\n",
        },
        target="xla",
    )
    [found] = _dep004(results["requirements-pins.txt"])
    assert found.replacement, found


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Dockerfile", "FROM python:3.11\nENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu121\n"),
        ("Dockerfile", 'FROM python:3.11\nENV UV_INDEX="pytorch=https://download.pytorch.org/whl/cu121"\n'),
        ("run.sh", "export PIP_INDEX_URL='https://download.pytorch.org/whl/cu121'\npip install torch\n"),
        (
            "run.sh",
            'UV_EXTRA_INDEX_URL="https://pypi.org/simple https://download.pytorch.org/whl/cu121" uv pip install x\n',
        ),
        (
            "pyproject.toml",
            '[project]\nname = "p"\nversion = "0"\n[tool.hatch.envs.default.env-vars]\n'
            'PIP_EXTRA_INDEX_URL = "https://download.pytorch.org/whl/cu121"\n',
        ),
    ],
)
def test_an_index_of_cuda_builds_set_in_pips_or_uvs_variable_is_reported(tmp_path, name, text):
    """pip reads `PIP_EXTRA_INDEX_URL` as `--extra-index-url` (pip 23.2.1: each option's `PIP_<NAME>`), uv
    its `UV_*` indexes, and hatch sets an environment's `env-vars` while it installs its dependencies
    (hatch 1.18.2's `sync_dependencies` in `safe_activation`): torch comes from PyTorch's CUDA index. porter
    read the index as an option only: nothing said. Now DEP002, the CPU index for tpu."""
    results = _run(tmp_path, {name: text}, target="tpu")
    [found] = [f for f in results[name].findings if f.code == "DEP002"]
    assert found.replacement == "https://download.pytorch.org/whl/cpu", found
    assert "download.pytorch.org/whl/cu121" in found.message


def test_an_index_variable_of_pypi_or_the_cpu_index_is_left_alone(tmp_path):
    """Guard: the CPU index and PyPI in the same variables give no finding."""
    results = _run(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.11\nENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu\n"
            "ENV UV_INDEX_URL=https://pypi.org/simple\n"
        },
        target="tpu",
    )
    assert not results["Dockerfile"].findings, results["Dockerfile"].findings


_PIXI = """[system-requirements]
cuda = "12"

[feature.gpu.system-requirements]
cuda = "12.1"

[dependencies]
pytorch = { version = "2.3.*", build = "*cuda*" }

[pypi-dependencies]
torch = { version = "==2.3.0+cu121", index = "https://download.pytorch.org/whl/cu121" }
"""


def test_pixis_manifest_and_its_cuda_system_requirement_are_read(tmp_path):
    """pixi's `[system-requirements] cuda = "12"` is the `__cuda` virtual package every environment needs
    (pixi's docs: `pixi run` fails on a machine that does not meet it): no finding, in pyproject.toml's
    `[tool.pixi]` or a standalone pixi.toml. And pixi.toml itself was read as a config (CFG005 on the keys
    `cuda`, `pytorch-cuda`): its conda build, `+cu121` and CUDA index said nothing. Now pixi.toml is read
    as `[tool.pixi]`, and the root table's `cuda` is DEP005 (a CUDA feature's own is left alone)."""
    results = _run(
        tmp_path,
        {
            "pixi.toml": '[workspace]\nname = "p"\nplatforms = ["linux-64"]\n' + _PIXI,
            "sub/pyproject.toml": '[project]\nname = "p"\nversion = "0"\n' + _PIXI.replace("[", "[tool.pixi."),
        },
        target="tpu",
    )
    for name, line in (("pixi.toml", 5), ("sub/pyproject.toml", 5)):
        found = {(f.code, f.start.line) for f in results[name].findings}
        assert ("DEP005", line) in found, (name, results[name].findings)
        assert ("DEP005", line + 3) not in found, (name, results[name].findings)  # (the feature's)
        assert {("DEP001", line + 6), ("DEP001", line + 9), ("DEP002", line + 9)} <= found, (name, found)


def test_hatchs_matrix_overrides_are_read_as_the_environments_they_make(tmp_path):
    """hatch 1.18.2 (`hatch env show --json`) gives `test.cu121` the override's `torch==2.3.0+cu121` and
    `cupy-cuda12x`, `PIP_EXTRA_INDEX_URL` (set while it installs), and every `test.*` the platform's
    `flash-attn`: porter said "All checks passed!". Now each override item is read as its list's."""
    text = """[project]
name = "p"
version = "0"

[[tool.hatch.envs.test.matrix]]
backend = ["cu121", "cpu"]

[tool.hatch.envs.test.overrides]
matrix.backend.dependencies = [
  { value = "torch==2.3.0+cu121", if = ["cu121"] },
  { value = "cupy-cuda12x", if = ["cu121"] },
]
matrix.backend.env-vars = [
  { key = "PIP_EXTRA_INDEX_URL", value = "https://download.pytorch.org/whl/cu121", if = ["cu121"] },
  "UV_INDEX_URL=https://download.pytorch.org/whl/cu118",
]
platform.linux.extra-dependencies = ["flash-attn"]
"""
    results = _run(tmp_path, {"pyproject.toml": text}, target="tpu")
    found = {(f.code, f.start.line, f.replacement) for f in results["pyproject.toml"].findings}
    assert ("DEP001", 10, "+cpu") in found, found
    assert {("DEP005", 11, None), ("DEP005", 17, None)} <= found, found
    assert ("DEP002", 14, "https://download.pytorch.org/whl/cpu") in found, found
    # (hatch's pip installer reads no `UV_*` variable: the cache read's `hatch_env` reads each environment's own
    # installer's, as uv 0.13.9 and pip 23.2.1 do)
    assert not {f for f in found if f[:2] == ("DEP002", 15)}, found


@pytest.mark.parametrize("item", ["numpy>=1.2#x", "numpy >= 1.2 , < 2#", "torch==", "numpy (>=1.2x)"])
def test_a_setup_cfg_legacy_specifier_is_said_with_the_setuptools_that_stop_at_it(tmp_path, item):
    """setuptools 65.5.0 and 66.1.1 write these items (packaging 21.3's legacy specifiers: `['numpy>=1.2#x',
    'cupy-cuda12x']`), 67.0.0 and 84.2.1 stop ("InvalidRequirement"). porter refuses the file, as the
    build a current pip runs does, but said "setuptools' build stops at it": untrue for a project built
    with an older one. Now the versions are said; an item no setuptools reads keeps its reason."""
    from tests.safety.test_thirty_second_read_cache2 import _run as _run_one

    result = _run_one(
        tmp_path, "setup.cfg", f"[metadata]\nname = p\n[options]\ninstall_requires =\n    {item}\n    cupy-cuda12x\n"
    )
    assert result.status.value == "error", result.status
    assert "setuptools 67.0 and later stop at it (66.1 and older write it" in (result.reason or ""), result.reason
    result = _run_one(
        tmp_path,
        "setup.cfg",
        "[metadata]\nname = p\n[options]\ninstall_requires =\n    ./local/pkg\n    cupy-cuda12x\n",
    )
    assert "setuptools' build stops at it" in (result.reason or ""), result.reason


def test_a_requirements_file_linted_alone_says_a_c_outside_the_run_is_not_known(tmp_path, monkeypatch):
    """`porter lint requirements-pins.txt`: the file naming it with `-c` is not read, and DEP004's fix adds
    `torch-xla[tpu]==2.9.0` that pip refuses there. By design (docs/files.md), but the output said only
    "Install `torch-xla[tpu]==2.9.0`; in a library, as an optional extra.". Now its help says so; a file
    found in a folder keeps the rule's advice."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "requirements-pins.txt").write_text("torch==2.9.0\n")
    monkeypatch.chdir(tmp_path)
    [alone] = run([tmp_path / "requirements-pins.txt"], Settings(target="xla"), jobs=1, cache=False)[0]
    [found] = _dep004(alone)
    assert found.replacement and "porter was given this file alone" in (found.advice or ""), found
    [walked] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    [found] = _dep004(walked)
    assert found.replacement and "given this file alone" not in (found.advice or ""), found
