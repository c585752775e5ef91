"""The thirty-third read of the dependency readers, second wave (cache2): what the first wave added
(setup.cfg's refusal of an item that is no requirement, pixi's tables in pyproject, conda's CUDA
selectors) against the tools themselves (setuptools 65.5.0 and 84.2.1's `Distribution.
parse_config_files` + `finalize_options`, conda-forge's `pytorch-gpu`, the file's own lines)."""

from __future__ import annotations

import pytest


def _run(tmp_path, files, target="tpu"):
    """Each file's result, by its path under `tmp_path` (`sub/pyproject.toml`), of one run over the files."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    results = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0]
    return {r.path.replace("\\", "/").split(str(tmp_path.name) + "/", 1)[-1]: r for r in results}


_INTERPOLATED_FILE = {
    "same-section": "[options]\nreqs = file: requirements.txt\ninstall_requires = %(reqs)s\n",
    "default": "[DEFAULT]\nreqs = file: requirements.txt\n[options]\ninstall_requires = %(reqs)s\n",
}


@pytest.mark.parametrize("options", list(_INTERPOLATED_FILE.values()), ids=list(_INTERPOLATED_FILE))
def test_a_setup_cfg_value_that_interpolates_to_a_file_directive_is_an_include(tmp_path, options):
    """setuptools 65.5.0 and 84.2.1 expand `%(reqs)s` before they look for `file:`: both declare
    requirements.txt's requirements (`install_requires == ['torch']`). porter refused the file: "`file:
    requirements.txt` is no requirement: setuptools' build stops at it", and read none of it."""
    text = f"[metadata]\nname = demo\nversion = 1\n{options}[options.extras_require]\ngpu = cupy-cuda12x\n"
    results = _run(tmp_path, {"setup.cfg": text, "requirements.txt": "torch\n"})
    result = results["setup.cfg"]
    assert result.status.value != "error", result.reason
    assert [f.code for f in result.findings] == ["DEP005"]
    assert result.findings[0].start.line == text.count("\n")


def test_a_file_directive_on_a_continuation_line_is_still_no_requirement(tmp_path):
    """The other side: `install_requires =` then `file: requirements.txt` on the next line is no
    include for setuptools (the value starts with a line break): 65.5.0 and 84.2.1 stop at it
    (InvalidRequirement)."""
    text = "[metadata]\nname = demo\nversion = 1\n[options]\ninstall_requires =\n    file: requirements.txt\n    cupy-cuda12x\n"
    result = _run(tmp_path, {"setup.cfg": text, "requirements.txt": "torch\n"})["setup.cfg"]
    assert result.status.value == "error"
    assert "`file: requirements.txt` is no requirement" in (result.reason or "")


@pytest.mark.parametrize(
    "name, text, line",
    [
        (
            "environment.yml",
            "name: e\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pytorch-gpu=2.5.1\n",
            6,
        ),
        (
            "pyproject.toml",
            '[project]\nname = "p"\nversion = "1"\n\n[tool.pixi.dependencies]\npython = "3.11.*"\npytorch-gpu = "2.5.*"\n',
            7,
        ),
    ],
    ids=["environment-yml", "pixi"],
)
def test_conda_forges_pytorch_gpu_is_a_cuda_selector(tmp_path, name, text, line):
    """conda-forge's `pytorch-gpu` is a metapackage that requires `pytorch * cuda*` (pixi's issue 5657:
    "pytorch-gpu 2.4.0 would require pytorch ==2.4.0 cuda120_..."), as `pytorch-cuda` selects the
    pytorch channel's CUDA build: it had no finding; DEP005 now, as `pytorch-cuda`."""
    result = _run(tmp_path, {name: text})[name]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP005", line)]


def test_pixi_conda_values_are_shown_on_their_own_lines(tmp_path):
    """pixi's PyPI table is read before its conda table, and each took the first `"*"` not yet taken:
    `pytorch-cuda`'s DEP005 was shown on `requests = "*"` (line 15) and pytorch's DEP001 on
    `rich = "*"` (16)."""
    text = (
        '[project]\nname = "p"\nversion = "1"\n\n'
        '[tool.pixi.workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n'
        '[tool.pixi.dependencies]\npython = "*"\npytorch-cuda = "*"\npytorch = { version = "*", build = "*cuda*" }\n\n'
        '[tool.pixi.pypi-dependencies]\nrequests = "*"\nrich = "*"\n'
    )
    result = _run(tmp_path, {"pyproject.toml": text})["pyproject.toml"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP005", 11), ("DEP001", 12)]


def test_a_setup_cfg_default_key_is_read_as_an_extra(tmp_path):
    """configparser gives `[DEFAULT]`'s keys to every section: setuptools 65.5.0 and 84.2.1 declare
    `extras_require == {'cpu': ['numpy'], 'gpu': ['cupy-cuda12x']}` here. porter read no `[DEFAULT]`
    line: no finding. A key the extras section sets otherwise stays its own (the guard below)."""
    text = (
        "[DEFAULT]\ngpu = cupy-cuda12x\ncuda = pycuda\n[metadata]\nname = p\nversion = 1\n"
        "[options.extras_require]\ncpu = numpy\ncuda = numpy\n"
    )
    result = _run(tmp_path, {"setup.cfg": text})["setup.cfg"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP005", 2)]


def test_a_setup_cfg_default_key_is_no_extra_without_an_extras_section(tmp_path):
    """The other side: with no `[options.extras_require]` the `[DEFAULT]` keys declare nothing."""
    text = "[DEFAULT]\ngpu = cupy-cuda12x\n[metadata]\nname = p\nversion = 1\n[options]\ninstall_requires = numpy\n"
    result = _run(tmp_path, {"setup.cfg": text})["setup.cfg"]
    assert not result.findings


def test_a_key_repeated_in_many_pixi_features_is_located_in_linear_steps():
    """The lookup by key walks each key's entries once per value, not from its first entry at each
    lookup (8,000 features' `pytorch-cuda = "*"`: 39 s, quadratic, before it kept its place)."""
    from tests.growth import linear_steps

    from porter.files.readers.tomlpos import Locator

    def make(n):
        return "".join(f'[tool.pixi.feature.f{i}.dependencies]\npytorch-cuda = "*"\n' for i in range(n))

    def locate(text):
        where = Locator(text)
        return [where.find_in_entry("pytorch-cuda", "*").start for _ in range(text.count("pytorch-cuda"))]

    starts = linear_steps(locate, make, 800)
    assert starts == sorted(starts) and len(set(starts)) == 800


def test_a_setup_cfg_default_install_requires_is_read_for_options(tmp_path):
    """`[DEFAULT] install_requires = cupy-cuda12x` beside an `[options]` that does not set it: setuptools
    65.5.0 declares `install_requires == ['cupy-cuda12x']`; porter read no `[DEFAULT]` line."""
    text = (
        "[DEFAULT]\ninstall_requires = cupy-cuda12x\n[metadata]\nname = p\nversion = 1\n[options]\npackages = find:\n"
    )
    result = _run(tmp_path, {"setup.cfg": text})["setup.cfg"]
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP005", 2)]
