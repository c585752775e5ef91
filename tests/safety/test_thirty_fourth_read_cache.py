"""The thirty-fourth read of the cache and the dependency readers (cache): Hatch environments' `env-vars`
against hatch 1.18.2 (`hatch env show --json`, its `sync_dependencies` under the env-vars), pip's own option
parser and uv 0.13.9 (`pip compile --offline -v`); pixi tables written with dotted keys and sub-table headers
against the file's own lines."""

from __future__ import annotations

import pytest

from tests.safety.test_thirty_second_read_cache import _pins_dep004_findings
from tests.safety.test_thirty_third_read_cache2 import _run


_HATCH = """[project]
name = "p"
version = "1"

[tool.hatch.envs.default.env-vars]
PIP_EXTRA_INDEX_URL = "https://pypi.org/simple https://download.pytorch.org/whl/cu121"
UV_INDEX_URL = "https://download.pytorch.org/whl/cu118"

[tool.hatch.envs.gpu]
installer = "uv"
env-vars = { UV_TORCH_BACKEND = "cu124" }

[tool.hatch.envs.cpu]
template = "cpu"
env-vars = { UV_EXTRA_INDEX_URL = "https://download.pytorch.org/whl/cu126" }
"""


def test_hatch_env_vars_that_the_environments_installer_reads_are_reported(tmp_path):
    """Hatch applies an environment's `env-vars` while it installs its dependencies: pip (the default
    installer) takes torch from `PIP_EXTRA_INDEX_URL`'s CUDA index, uv (`installer = "uv"`) from
    `UV_TORCH_BACKEND = "cu124"`'s. Nothing was reported. pip ignores `UV_*` and uv `PIP_*` (uv 0.13.9):
    `UV_INDEX_URL` in the pip environment and `UV_EXTRA_INDEX_URL` in `cpu` (its own template: pip)
    stay unreported."""
    result = _run(tmp_path, {"pyproject.toml": _HATCH})["pyproject.toml"]
    dep002 = sorted((f.start.line, f.start.column) for f in result.findings if f.code == "DEP002")
    line6 = _HATCH.splitlines()[5]
    assert dep002 == [(6, line6.index("https://download")), (11, _HATCH.splitlines()[10].index("cu124"))]


def test_hatch_env_vars_inherited_from_the_template_follow_the_inheriting_installer(tmp_path):
    """An environment without its own `env-vars` takes its template's (`hatch env show --json`): a uv
    environment inheriting `default`'s `UV_INDEX_URL` makes it read; a `PIP_INDEX_URL` no pip
    environment uses is not."""
    text = (
        '[project]\nname = "p"\nversion = "1"\n\n[tool.hatch.envs.default]\ninstaller = "uv"\n'
        '[tool.hatch.envs.default.env-vars]\nUV_INDEX_URL = "https://download.pytorch.org/whl/cu118"\n'
        'PIP_INDEX_URL = "https://download.pytorch.org/whl/cu121"\n[tool.hatch.envs.test]\nfeatures = ["x"]\n'
    )
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP002", 8)]


_DOTTED = {
    "dotted-keys": (
        '[project]\nname = "p"\nversion = "1"\n\n[tool.pixi.feature.gpu]\n'
        'dependencies.pytorch-cuda = "*"\npypi-dependencies.requests = "*"\n',
        ("DEP005", 6),
    ),
    "sub-table-headers": (
        '[project]\nname = "p"\nversion = "1"\n\n[tool.pixi.dependencies.pytorch]\nversion = "*"\n'
        'build = "*cuda*"\n\n[tool.pixi.pypi-dependencies.rich]\nversion = "*"\n',
        ("DEP001", 6),
    ),
}


@pytest.mark.parametrize("text, expected", list(_DOTTED.values()), ids=list(_DOTTED))
def test_pixi_values_under_dotted_keys_and_sub_table_headers_are_shown_on_their_own_lines(tmp_path, text, expected):
    """`Locator.find_in_entry` knew a key only at a line's start: a dotted key (`dependencies.pytorch-cuda =
    "*"`) or a sub-table (`[tool.pixi.dependencies.pytorch]`) fell back to the first free `"*"`, read for
    another package first: pytorch-cuda's DEP005 was shown on `requests`' line, pytorch's DEP001 on
    `rich`'s table."""
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    assert [(f.code, f.start.line) for f in result.findings] == [expected]


def test_a_uv_toml_naming_pytorchs_cuda_indexes_is_read_as_tool_uv(tmp_path):
    """uv reads `uv.toml` as `[tool.uv]` (uv 0.13.9 `pip compile --offline -v` in its folder: "Found project
    configuration in uv.toml", then a GET of `download.pytorch.org/whl/cu121`). porter skipped it: "no
    CUDA-related token". Now its `[pip] torch-backend`, `extra-index-url` and `[[index]]` get DEP002, as in
    pyproject.toml's `[tool.uv]`."""
    text = (
        '[pip]\ntorch-backend = "cu121"\nextra-index-url = ["https://download.pytorch.org/whl/cu118"]\n\n'
        '[[index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/cu124"\n'
    )
    result = _run(tmp_path, {"uv.toml": text})["uv.toml"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP002", 2), ("DEP002", 3), ("DEP002", 7)]


def test_a_toml_file_of_another_name_is_still_a_config(tmp_path):
    """The other side: only uv's own file name is read so (`uv-settings.toml` is no file uv reads)."""
    text = '[pip]\ntorch-backend = "cu121"\n'
    result = _run(tmp_path, {"uv-settings.toml": text})["uv-settings.toml"]
    assert [f.code for f in result.findings if f.code.startswith("DEP")] == []


def test_hatchs_override_dependencies_are_read(tmp_path):
    """hatch 1.18.2's `env show --json` gives `test.cuda` the dependencies `torch==2.3.0+cu121`, `cupy-cuda12x`
    and the extra dependency `pycuda` from `[tool.hatch.envs.test.overrides]` (a matrix's, items as strings or
    `{ value = ..., if = [...] }`). porter read no override: no finding."""
    text = (
        '[project]\nname = "p"\nversion = "1"\n\n[tool.hatch.envs.test]\ndependencies = ["pytest"]\n\n'
        '[[tool.hatch.envs.test.matrix]]\nbackend = ["cpu", "cuda"]\n\n[tool.hatch.envs.test.overrides]\n'
        'matrix.backend.dependencies = [\n  { value = "torch==2.3.0+cu121", if = ["cuda"] },\n  "cupy-cuda12x",\n]\n'
        'matrix.backend.extra-dependencies = [{ value = "pycuda", if = ["cuda"] }]\n'
    )
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    found = {(f.code, f.start.line) for f in result.findings}
    assert {("DEP001", 13), ("DEP005", 14), ("DEP005", 16)} <= found


def test_hatchs_override_env_vars_are_read_at_their_value(tmp_path):
    """An override's `env-vars` (`"KEY=VALUE"`, or `{ key, value }`): hatch 1.18.2 gives `test.cuda` the
    variable `PIP_EXTRA_INDEX_URL` of PyTorch's cu124 index. DEP002 now starts at the URL, after `KEY=`."""
    line = 'name."^cu".env-vars = "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu124"'
    text = (
        '[project]\nname = "p"\nversion = "1"\n\n[[tool.hatch.envs.test.matrix]]\nbackend = ["cpu", "cuda"]\n\n'
        f"[tool.hatch.envs.test.overrides]\n{line}\n"
        'matrix.backend.env-vars = [{ key = "UV_INDEX_URL", value = "https://download.pytorch.org/whl/cu118" }]\n'
    )
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    found = [(f.code, f.start.line, f.start.column) for f in result.findings]
    assert found == [("DEP002", 9, line.index("https"))]  # (`UV_INDEX_URL`: test's installer is pip)


def _pins(tmp_path):
    """requirements-pins.txt's DEP004s (code, whether it has an edit) in a cached run."""
    return [(f.code, f.fixable) for f in _pins_dep004_findings(tmp_path)]


def test_a_file_named_by_both_dash_r_and_dash_c_gets_a_dep004_with_no_edit(tmp_path):
    """`-r requirements-pins.txt` and `-c requirements-pins.txt`: pip 23.2.1 installs the pins' torch (its
    `parse_requirements` gives each line as a requirement and as a constraint), so the target's packages
    are missing, but an added `torch-xla[tpu]` there is refused as a constraint. porter said nothing at
    all. Now DEP004 with no edit; warm runs after the `-r` comes or the `-c` goes follow."""
    (tmp_path / "m.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    (tmp_path / "requirements-pins.txt").write_text("torch==2.9.0\nnumpy==1.26.4\n")
    (tmp_path / "requirements.txt").write_text("-c requirements-pins.txt\n")
    assert _pins(tmp_path) == []
    (tmp_path / "requirements.txt").write_text("-r requirements-pins.txt\n-c requirements-pins.txt\n")
    assert _pins(tmp_path) == [("DEP004", False)]  # (the warm run: the `-r` is in the pins' key)
    (tmp_path / "requirements.txt").write_text("-r requirements-pins.txt\n")
    assert _pins(tmp_path) == [("DEP004", True)]


def test_a_hatch_toml_is_read_as_tool_hatch(tmp_path):
    """hatch reads `hatch.toml` as `[tool.hatch]` (hatch 1.18.2 `env show --json`: `default` installs
    `torch==2.3.0+cu121`, `cupy-cuda12x`, with `PIP_EXTRA_INDEX_URL` set). porter read it as a config: no
    finding."""
    text = (
        '[envs.default]\ndependencies = ["torch==2.3.0+cu121", "cupy-cuda12x"]\n\n[envs.default.env-vars]\n'
        'PIP_EXTRA_INDEX_URL = "https://download.pytorch.org/whl/cu121"\n'
    )
    result = _run(tmp_path, {"hatch.toml": text})["hatch.toml"]
    found = {(f.code, f.start.line) for f in result.findings}
    assert {("DEP001", 2), ("DEP005", 2), ("DEP002", 5)} <= found
