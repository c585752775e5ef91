"""The thirty-second read of the cache and the state porter reads back (cache): dependency forms
that the tools which install them read and porter did not (poetry-core 1.9.0's `Factory`, uv 0.13.9's
`lock` as the oracles)."""

from __future__ import annotations

import pytest


def _findings(tmp_path, name, text, target="tpu"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / name).write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    return [(f.code, f.start.line) for r in results for f in r.findings]


POETRY_HEAD = '[tool.poetry]\nname = "demo"\nversion = "0.1.0"\n\n[tool.poetry.dependencies]\npython = "^3.10"\n'


def test_a_poetry_dependency_with_multiple_constraints_is_read_per_constraint(tmp_path):
    """Poetry's multiple constraints (a list of tables, one per marker) is how a project pins torch's
    CUDA build on Linux and PyPI's elsewhere; poetry-core's `Factory.create_poetry` declares
    `torch 2.3.0+cu121` and `torch 2.3.0`. porter read only a string or one table: no finding."""
    text = POETRY_HEAD + (
        "torch = [\n"
        '  {version = "2.3.0+cu121", source = "pytorch-cu121", markers = "sys_platform == \'linux\'"},\n'
        '  {version = "2.3.0", markers = "sys_platform == \'darwin\'"},\n'
        "]\n"
    )
    assert ("DEP001", 8) in _findings(tmp_path, "pyproject.toml", text)


def test_a_poetry_dependency_given_by_url_is_read(tmp_path):
    """`{url = ...}` has no version: poetry-core declares the package from the wheel. porter skipped a
    table without `version`: no DEP006 on torchvision's CUDA wheel, no DEP005 on cupy-cuda12x."""
    text = POETRY_HEAD + (
        'torchvision = { url = "https://download.pytorch.org/whl/cu121/'
        'torchvision-0.18.0%2Bcu121-cp311-cp311-linux_x86_64.whl" }\n'
        'cupy-cuda12x = { url = "https://example.org/cupy_cuda12x-13.0.0-cp311-cp311-manylinux2014_x86_64.whl" }\n'
    )
    found = _findings(tmp_path, "pyproject.toml", text)
    assert ("DEP006", 7) in found
    assert ("DEP005", 8) in found


@pytest.mark.parametrize(
    ("table", "item", "code"),
    [
        ("[tool.uv]\ndev-dependencies = [", '"cupy-cuda11x>=12"]', "DEP005"),  # `uv sync` installs it
        ("[tool.uv]\nconstraint-dependencies = [", '"torch==2.3.0+cu118"]', "DEP001"),  # `uv lock` pins it
        ("[tool.uv]\noverride-dependencies = [", '"torch==2.3.0+cu118"]', "DEP001"),
        ("[tool.pdm.dev-dependencies]\ngpu = [", '"cupy-cuda12x==13.0"]', "DEP005"),
    ],
)
def test_the_requirement_lists_of_uv_and_pdm_are_read(tmp_path, table, item, code):
    """uv 0.13.9 `lock --offline` on `[project] dependencies = ["torch"]` with these tables: "your
    project depends on torch==2.3.0+cu118", "demo:dev depends on cupy-cuda11x>=12". porter read no
    list under `[tool]`: no finding."""
    text = '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["numpy"]\n\n' + table + "\n  " + item + "\n"
    assert (code, 8) in _findings(tmp_path, "pyproject.toml", text)


def test_a_target_package_only_in_uvs_constraints_is_not_taken_as_installed(tmp_path):
    """A constraint adds no package (uv resolves it only when something requires it): torch-xla only
    in `constraint-dependencies` leaves the project without it, and DEP004 still says so."""
    text = (
        '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torch==2.9.0"]\n\n'
        '[tool.uv]\nconstraint-dependencies = ["torch-xla[tpu]==2.9.0"]\n'
    )
    assert any(code == "DEP004" for code, _ in _findings(tmp_path, "pyproject.toml", text, target="xla"))


def test_a_uv_source_given_by_url_is_read(tmp_path):
    """`[tool.uv.sources] torchaudio = { url = ... }`: uv installs torchaudio from that wheel (a CUDA
    build's); porter read only `[[tool.uv.index]]` URLs there: no DEP006."""
    text = (
        '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torchaudio"]\n\n[tool.uv.sources]\n'
        'torchaudio = [{ url = "https://download.pytorch.org/whl/cu121/'
        'torchaudio-2.3.0%2Bcu121-cp311-cp311-linux_x86_64.whl", marker = "sys_platform == \'linux\'" }]\n'
    )
    assert ("DEP006", 7) in _findings(tmp_path, "pyproject.toml", text)


WHEEL = "https://download.pytorch.org/whl/cu121/torch-2.3.0+cu121-cp311-cp311-linux_x86_64.whl"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", f"torch @ {WHEEL}\n"),
        ("pyproject.toml", f'[project]\nname = "demo"\nversion = "0.1"\ndependencies = [\n  "torch @ {WHEEL}",\n]\n'),
    ],
)
def test_a_cuda_label_in_a_wheels_url_is_reported_not_edited(tmp_path, name, text):
    """PEP 508's `torch @ URL`: the `+cu121` in the URL is part of the wheel's file name. porter cut it to
    `+cpu` (DEP001's edit): `.../whl/cu121/torch-2.3.0+cpu-cp311-...whl`, a file that folder does not
    serve, so the ported project no longer installs. The URL is DEP006's, reported as docs/files.md says."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / name).write_text(text)
    [result] = run([tmp_path], Settings(target="tpu"), jobs=1, cache=False)[0]
    assert WHEEL in (result.new_source or text.encode()).decode()
    assert {f.code for f in result.findings} >= {"DEP006"}
    assert "DEP001" not in {f.code for f in result.findings}


@pytest.mark.parametrize(
    "item",
    [
        '"cupy-cuda12x  # GPU arrays"',
        "cupy-cuda12x --hash=sha256:" + "a" * 64,
    ],
)
def test_an_environment_pip_item_is_read_as_pip_reads_its_line(tmp_path, item):
    """conda writes the `pip:` items into a requirements file and runs `pip install -r` on it; pip
    23.2.1's `parse_requirements` on those lines installs `cupy-cuda12x` (the comment and the option
    cut). porter handed the whole item to PEP 508, which refused it: no DEP005."""
    (tmp_path / "m.py").write_text("import torch\n")
    text = f"name: demo\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - {item}\n"
    assert ("DEP005", 6) in _findings(tmp_path, "environment.yml", text)


def test_a_requirements_file_named_with_dash_c_gets_no_target_package(tmp_path):
    """`requirements.txt` says `-c requirements-pins.txt`: pip reads the pins as constraints, and pip
    23.2.1 refuses one with extras ("ERROR: Constraints cannot have extras"). porter added
    `torch-xla[tpu]==2.9.0` to the pins file as to any requirements file, so the ported project's
    `pip install -r requirements.txt` failed. It is now a constraints file (as `constraints*.txt` is);
    the warm run after the `-c` line goes reads the pins as requirements again (the key covers it)."""
    (tmp_path / "m.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    (tmp_path / "requirements.txt").write_text("-c requirements-pins.txt\ntorch\n")
    (tmp_path / "requirements-pins.txt").write_text("torch==2.9.0\nnumpy==1.26.4\n")
    assert _pins_dep004(tmp_path) == []
    (tmp_path / "requirements.txt").write_text("torch\n")
    assert _pins_dep004(tmp_path) == ["DEP004"]


def _pins_dep004_findings(tmp_path):
    """The DEP004s (no target package) on `requirements-pins.txt`, in a cached run (the warm run after a
    change reads the pins anew)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    results = run([tmp_path], Settings(target="xla"), jobs=1, cache=True, cache_dir=tmp_path / "c")[0]
    [pins] = [r for r in results if r.path.endswith("requirements-pins.txt")]
    return [f for f in pins.findings if f.code == "DEP004"]


def _pins_dep004(tmp_path):
    return [f.code for f in _pins_dep004_findings(tmp_path)]
