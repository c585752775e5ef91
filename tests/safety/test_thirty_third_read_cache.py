"""The thirty-third read of the cache and the state porter reads back (cache): dependency forms that
the tools which install them read and porter did not (py-rattler 0.28.0's `MatchSpec`, uv 0.13.9's
`pip compile`, hatch 1.18.2's `env show` and hatchling's builder, pixi's manifest tables as the oracles)."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_second_read_cache import _findings, _pins_dep004


@pytest.mark.parametrize(
    "spec",
    [
        "pytorch 2.3.0 *cuda*",
        "pytorch>=2.0 *cuda*",
        "pytorch =2.3.0 cuda*",
        "conda-forge::pytorch   2.3.0   py3.11_cuda12.1_cudnn8_0",
        "pytorch * cuda*",
        "pytorch[build=*cuda*]",
        "pytorch[build='*cuda*']",
        "torchvision 0.18.0 *cu121*",
    ],
)
def test_a_conda_spec_picking_a_cuda_build_with_spaces_or_brackets_is_read(tmp_path, spec):
    """A conda MatchSpec gives its build string after a space (`name version build`) or as `[build=...]`
    as well as after a second `=`; py-rattler 0.28.0 (pixi's reader) reads build `*cuda*` from each of
    these. porter read only the `=` form: no finding (75 of 280 random specs differed)."""
    text = f'name: e\ndependencies:\n  - "{spec}"\n'
    assert ("DEP001", 3) in _findings(tmp_path, "environment.yml", text)


@pytest.mark.parametrize("spec", ["pytorch 2.3.0.*", "pytorch >=2.0", "pytorch 2.3 *cpu*", "pytorch[channel=pytorch]"])
def test_a_conda_spec_without_a_cuda_build_string_is_left_alone(tmp_path, spec):
    """The other side: no build (`>= 2.0` is one version: the space follows an operator), a CPU build."""
    text = f'name: e\ndependencies:\n  - "{spec}"\n'
    assert "DEP001" not in [code for code, _ in _findings(tmp_path, "environment.yml", text)]


@pytest.mark.parametrize("table", ["[tool.uv]", "[tool.uv.pip]"])
def test_uvs_torch_backend_naming_a_cuda_build_is_reported(tmp_path, table):
    """`torch-backend = "cu121"` makes `uv pip` take torch from PyTorch's CUDA index (uv 0.13.9 `pip
    compile --offline -v`: "GET https://download.pytorch.org/whl/cu121/torch/"), as `--index-url .../cu121`
    does (DEP002). porter read no `torch-backend`: no finding. For a target taking torch's CPU build it
    becomes `cpu`."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    text = f'[project]\nname = "p"\nversion = "1"\ndependencies = ["torch"]\n{table}\ntorch-backend = "cu121"\n'
    assert ("DEP002", 6) in _findings(tmp_path, "pyproject.toml", text, target="xla")
    [result] = run([tmp_path], Settings(target="tpu"), jobs=1, cache=False)[0]
    assert ("DEP002", 6) in [(f.code, f.start.line) for f in result.findings]
    assert 'torch-backend = "cpu"' in (result.new_source or b"").decode()


def test_uvs_torch_backend_of_auto_or_cpu_is_left_alone(tmp_path):
    text = '[project]\nname = "p"\nversion = "1"\n[tool.uv]\ntorch-backend = "auto"\n[tool.uv.pip]\ntorch-backend = "cpu"\n'
    assert "DEP002" not in [code for code, _ in _findings(tmp_path, "pyproject.toml", text)]


HATCH = """[project]
name = "demo"
version = "1"

[tool.hatch.envs.default]
dependencies = ["cupy-cuda12x>=12"]

[tool.hatch.envs.gpu]
extra-dependencies = ["torch==2.3.0+cu121"]

[tool.hatch.build.targets.wheel]
dependencies = ["pycuda"]

[tool.hatch.build.hooks.custom]
dependencies = ["cupy-cuda11x"]
"""


def test_hatchs_environment_and_build_dependencies_are_read(tmp_path):
    """hatch 1.18.2 `env show --json` lists `cupy-cuda12x>=12` in every environment and
    `torch==2.3.0+cu121` in `gpu`; hatchling's `WheelBuilder(...).config.dependencies` is the build
    environment's `['pycuda', ...]`. porter read no `[tool.hatch]` list: no finding."""
    found = _findings(tmp_path, "pyproject.toml", HATCH)
    assert ("DEP005", 6) in found
    assert ("DEP001", 9) in found
    assert ("DEP005", 12) in found
    assert ("DEP005", 15) in found


PIXI = """[project]
name = "demo"
version = "1"

[tool.pixi.workspace]
channels = ["conda-forge"]
platforms = ["linux-64"]

[tool.pixi.dependencies]
pytorch-cuda = "12.1.*"
pytorch = { version = "2.3.*", build = "*cuda*" }

[tool.pixi.pypi-dependencies]
torch = { version = "==2.3.0+cu121", index = "https://download.pytorch.org/whl/cu121" }

[tool.pixi.feature.gpu.pypi-dependencies]
cupy-cuda12x = ">=13"

[tool.pixi.target.linux-64.dependencies]
cudatoolkit = "11.8.*"

[tool.pixi.pypi-options]
extra-index-urls = ["https://pypi.nvidia.com"]
"""


def test_pixis_dependency_tables_in_pyproject_are_read(tmp_path):
    """pixi reads `[tool.pixi.dependencies]` (conda: name = version, or `{version, build}`),
    `[tool.pixi.pypi-dependencies]` (PyPI: a PEP 440 string or `{version, index, url}`), each of its
    `feature`s' and platform `target`s', and `[tool.pixi.pypi-options]`'s indexes. porter read none of
    them: no finding for a manifest pinning pytorch-cuda, a `*cuda*` build, `+cu121` from PyTorch's CUDA
    index, cupy-cuda12x, cudatoolkit and NVIDIA's index."""
    found = _findings(tmp_path, "pyproject.toml", PIXI)
    for want in [("DEP005", 10), ("DEP001", 11), ("DEP001", 14), ("DEP002", 14), ("DEP005", 17), ("DEP005", 20)]:
        assert want in found
    assert ("DEP002", 23) in found


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ('\n    torch\n    python_version>="3.8"\n    cupy-cuda12x\n', 7),
        ("\n    torch==\n    cupy-cuda12x\n", 6),
        ("\n    torch\n    --extra-index-url https://download.pytorch.org/whl/cu121\n    cupy-cuda12x\n", 7),
        (' python_version>="3.8"\n[options.extras_require]\ngpu = cupy-cuda12x\n', 5),
    ],
    ids=["marker-alone", "no-version", "option", "one-line"],
)
def test_a_setup_cfg_item_that_is_no_requirement_is_not_read_as_declaring_packages(tmp_path, value, line):
    """setuptools 84.2.1's build (`setup.py egg_info`) stops at each of these items (packaging's
    InvalidRequirement; 65.5's at the option, and it writes the others into requires.txt, which no
    installer reads). porter read the items around it (DEP005 on cupy-cuda12x) and said nothing of it."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    text = f"[metadata]\nname = demo\nversion = 1\n[options]\ninstall_requires ={value}"
    (tmp_path / "setup.cfg").write_text(text)
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert not result.findings
    assert result.status.value == "error", result.status
    # (a legacy specifier, `torch==`, is said with the setuptools that stop at it: the thirty-fourth read)
    stops = ("is no requirement: setuptools' build stops at it", "is no requirement: setuptools 67.0 and later stop")
    assert any(s in (result.reason or "") for s in stops), result.reason
    assert result.error_line == line


def test_a_setup_cfg_tests_require_item_that_is_no_requirement_is_passed_over_as_the_build_does(tmp_path):
    """The other side: neither build reads `tests_require` (65.5 and 84.2.1 build with it)."""
    text = '[metadata]\nname = demo\nversion = 1\n[options]\ninstall_requires =\n    cupy-cuda12x\ntests_require =\n    python_version>="3.8"\n'
    assert ("DEP005", 6) in _findings(tmp_path, "setup.cfg", text)


def test_a_requirements_file_named_with_dash_c_in_a_conda_pip_list_gets_no_target_package(tmp_path):
    """conda writes an environment.yml's `pip:` items into a requirements file in the environment file's
    folder and runs `pip install -r` on it there: `- -c requirements-pins.txt` makes the pins constraints,
    and pip 23.2.1 refuses one with extras ("Constraints cannot have extras"). porter followed `-c` from
    requirements files only and added `torch-xla[tpu]==2.9.0` to the pins. The warm run after the item
    goes reads the pins as requirements again."""
    (tmp_path / "m.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    env = "name: e\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - torch\n"
    (tmp_path / "environment.yml").write_text(env + "    - -c requirements-pins.txt\n")
    (tmp_path / "requirements-pins.txt").write_text("torch==2.9.0\nnumpy==1.26.4\n")
    assert _pins_dep004(tmp_path) == []
    (tmp_path / "environment.yml").write_text(env)
    assert _pins_dep004(tmp_path) == ["DEP004"]


def test_pdms_resolution_overrides_are_read(tmp_path):
    """PDM 2.29.4 reads `[tool.pdm.resolution.overrides]` as `name==version`, `name SPEC` or `name @ URL`
    (`pdm.utils.get_requirement_from_override`) and resolves with them. porter read no such table: a
    `+cu121` pin, a CUDA wheel's URL and cupy-cuda12x there got nothing. The URL is reported, not edited."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    url = "https://download.pytorch.org/whl/cu121/torchvision-0.18.0+cu121-cp311-cp311-linux_x86_64.whl"
    text = (
        '[project]\nname = "demo"\nversion = "1"\ndependencies = ["torch"]\n\n[tool.pdm.resolution.overrides]\n'
        f'torch = "2.3.0+cu121"\ntorchvision = "{url}"\ncupy-cuda12x = ">=13"\n'
    )
    (tmp_path / "pyproject.toml").write_text(text)
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    found = [(f.code, f.start.line) for f in result.findings]
    assert ("DEP001", 7) in found and ("DEP006", 8) in found and ("DEP005", 9) in found
    assert url in (result.new_source or b"").decode()
