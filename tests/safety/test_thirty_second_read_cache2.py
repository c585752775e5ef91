"""The thirty-second read, second wave (cache2): what the first wave added to the dependency files'
reading (setup.cfg's `;` split and interpolation, Poetry's and uv's tables, `-c` files), each read
against the tool that installs it (setuptools 65.5 and 84.2.1, poetry-core 1.9.0, pip 23.2.1)."""

from __future__ import annotations

import pytest


def _run(tmp_path, name, text):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / name).write_text(text)
    [result] = run([tmp_path], Settings(target="tpu"), jobs=1, cache=False)[0]
    return result


@pytest.mark.parametrize(
    "text",
    [
        '[options]\ninstall_requires = torch; python_version >= "3.8"\n',
        "[options]\ninstall_requires = torch ; sys_platform == 'linux'\n",
        '[options.extras_require]\ngpu = cupy-cuda12x; sys_platform == "linux"\n',
    ],
)
def test_a_one_line_setup_cfg_value_split_into_a_marker_is_not_read_as_declaring_packages(tmp_path, text):
    """On one line setuptools splits a requirement list at each `;`: `torch; python_version >= "3.8"`
    is `torch` and `python_version>="3.8"`. setuptools 84.2.1's build stops ("Ambiguous requirement
    marker"); 65.5's writes `python_version>="3.8"` into requires.txt, no requirement an installer
    reads. porter read torch alone (a DEP004 to add the target's package, a DEP005) and said nothing of
    the rest. Now the file is one setuptools does not read, with the line and why."""
    result = _run(tmp_path, "setup.cfg", "[metadata]\nname = p\n" + text)
    assert not result.findings
    assert result.status.value == "error", result.status
    assert "is no requirement: on one line `;` separates requirements" in (result.reason or ""), result.reason


@pytest.mark.parametrize(
    "value",
    [
        "torch; python_version>3.8",  # (a package named python_version: both builds declare it)
        "torch; cupy-cuda12x",
        "torch; #cupy-cuda12x",  # (setuptools drops an item that starts with `#`)
    ],
)
def test_a_one_line_split_into_requirements_is_still_read(tmp_path, value):
    """The guard: a split whose every part is a requirement (or a comment) is what the build declares."""
    result = _run(tmp_path, "setup.cfg", f"[metadata]\nname = p\n[options]\ninstall_requires = {value}\n")
    assert result.status.value != "error", result.reason


PROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'


@pytest.mark.parametrize(
    "table",
    [
        '[[tool.pdm.source]]\nname = "torch"\nurl = "https://download.pytorch.org/whl/cu121"\n',
        '[[tool.pdm.source]]\nname = "t"\nurl = "https://download.pytorch.org/whl/cu118/torch_stable.html"\n'
        'type = "find_links"\n',
        '[tool.uv]\nfind-links = ["https://download.pytorch.org/whl/cu118/torch_stable.html"]\n',
        '[tool.uv.pip]\nextra-index-url = ["https://download.pytorch.org/whl/cu124"]\n',
        '[tool.uv.pip]\nindex-url = "https://download.pytorch.org/whl/cu124"\n',
    ],
)
def test_an_index_of_cuda_builds_named_by_uv_or_pdm_settings_is_reported(tmp_path, table):
    """PyTorch's index of CUDA builds named in PDM's `[[tool.pdm.source]]`, uv's `find-links`, or uv
    pip's `[tool.uv.pip]` (uv 0.13.9 reads each: `uv lock` takes them, and refuses a key it does not
    know) is where the project's torch comes from, as `--extra-index-url` / `-f` in a requirements file
    (DEP002 there). porter read only `[[tool.uv.index]]`, uv's `index-url`s and Poetry's sources: no
    finding. Now DEP002, its URL made the CPU index's as in a requirements file."""
    result = _run(tmp_path, "pyproject.toml", PROJECT + table)
    [found] = [f for f in result.findings if f.code == "DEP002"]
    assert b"/whl/cpu" in (result.new_source or b""), result.new_source
    assert found.start.line == PROJECT.count("\n") + table[: table.find("http")].count("\n") + 1


def test_uv_build_constraints_pinning_a_cuda_build_are_reported_and_install_nothing(tmp_path):
    """uv's `build-constraint-dependencies` (uv 0.13.9 reads it, beside `constraint-dependencies`)
    narrow what a build's environment takes: `torch==2.3.0+cu121` there makes the package's build use
    CUDA torch. porter read the other two lists of uv, not this one: no finding. Now its CUDA label is
    reported as theirs is, and, as they install nothing, no target package is asked to be added there."""
    text = PROJECT + '[tool.uv]\nbuild-constraint-dependencies = ["torch==2.3.0+cu121"]\n'
    codes = {f.code for f in _run(tmp_path, "pyproject.toml", text).findings}
    assert "DEP001" in codes and "DEP004" not in codes, codes


def test_a_short_requirements_option_with_its_value_attached_is_read_as_pip_reads_it(tmp_path):
    """pip 23.2.1 (optparse) reads `-crequirements-pins.txt` as `-c requirements-pins.txt` and
    `-ihttps://…/cu121` as `-i https://…/cu121`. porter read an option `-crequirements` (value
    `-pins.txt`): the pins file got a DEP004 fix adding `torch-tpu` (with an extra where the target has
    one, which pip refuses in a constraint), and PyTorch's CUDA index no DEP002. Now a short option is
    one letter, its value what follows."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "requirements-pins.txt").write_text("torch==2.3.0\n")
    (tmp_path / "requirements.txt").write_text(
        "-crequirements-pins.txt\n-ihttps://download.pytorch.org/whl/cu121\nnumpy\n"
    )
    results = run([tmp_path], Settings(target="tpu"), jobs=1, cache=False)[0]
    found = {(r.path.rsplit("/", 1)[-1], f.code, f.start.line) for r in results for f in r.findings}
    assert ("requirements.txt", "DEP002", 2) in found, found
    assert not any(name == "requirements-pins.txt" and code == "DEP004" for name, code, _ in found), found


_DEEP_TO_A_PERCENT = "".join(f"k{i} = %(k{i + 1})s\n" for i in range(10)) + "k10 = 100%%\n"
_DEEP_TO_A_NAME_SEEN_ABOVE = (
    "k = %(a)s%(b1)s\na = %(c)s\nc = 100%%\n" + "".join(f"b{i} = %(b{i + 1})s\n" for i in range(1, 8)) + "b8 = %(a)s\n"
)


@pytest.mark.parametrize("section", [_DEEP_TO_A_PERCENT, _DEEP_TO_A_NAME_SEEN_ABOVE])
def test_an_interpolation_past_the_builds_depth_is_not_read_as_declaring_packages(tmp_path, section):
    """configparser counts its depth on entering each value with a `%` (from 1; past 10 it stops):
    a chain whose eleventh value holds only `%%`, or a name expanded near the top and met again ten
    deep, stops setuptools' build (65.5 and 84.2.1: InterpolationDepthError), and the file declares
    nothing. porter checked the depth only at a `%(name)s`, and reused a name's expansion at any depth:
    it read the file and gave cupy-cuda12x's DEP005. Now the depth is checked where configparser checks
    it, and an expansion is reused at its own depth only."""
    text = f"[metadata]\nname = p\n[options]\ninstall_requires = cupy-cuda12x\n[tool]\n{section}"
    result = _run(tmp_path, "setup.cfg", text)
    assert not result.findings
    assert result.status.value == "error" and "a `%` its build cannot expand" in (result.reason or ""), result.reason


def test_a_poetry_version_string_another_dependency_also_writes_is_placed_on_torchs_own_line(tmp_path):
    """Poetry's version strings are found in the text by value, each taken once; only the torch
    family's and CUDA-only packages' were taken, so `torch = "2.3.0+cu121"` below another dependency
    with the same string found that one first: its DEP001 was on line 7, and the fix turned the other
    package's version into `+cpu` and left torch's CUDA build. Now each dependency takes its own."""
    text = (
        '[tool.poetry]\nname = "demo"\nversion = "0.1.0"\n\n[tool.poetry.dependencies]\npython = "^3.10"\n'
        'numpy = "2.3.0+cu121"\ntorch = "2.3.0+cu121"\n'
    )
    result = _run(tmp_path, "pyproject.toml", text)
    assert [(f.code, f.start.line) for f in result.findings] == [("DEP001", 8)]
    assert (result.new_source or b"").splitlines()[6:] == [b'numpy = "2.3.0+cu121"', b'torch = "2.3.0+cpu"']


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "install_requires =\n    torch==2.3.0+cu121  # pinned\n    cupy-cuda12x  # GPU\n",
            {("DEP001", 5), ("DEP005", 6)},
        ),
        ("install_requires = cupy-cuda12x  # GPU\n", {("DEP005", 4)}),
        ("install_requires = torch # core; cupy-cuda12x  # GPU\n", {("DEP004", 4), ("DEP005", 4)}),
    ],
)
def test_a_setup_cfg_requirement_with_a_comment_after_it_is_read(tmp_path, text, found):
    """setuptools (65.5 and 84.2.1 alike: `requires.txt` holds `torch==2.3.0+cu121`, `cupy-cuda12x`)
    drops a ` #` and what follows from each requirement (jaraco's `drop_comment`, after the `;` split).
    porter parsed `cupy-cuda12x  # GPU` whole, no requirement: no finding at all for a setup.cfg that
    comments its pins (and the second wave's `;` rule would have refused the file). Now the comment is
    cut, and the fix leaves it in place."""
    result = _run(tmp_path, "setup.cfg", "[metadata]\nname = p\n[options]\n" + text)
    got = {(f.code, f.start.line) for f in result.findings}
    assert found <= got, got
    if result.new_source is not None:
        assert b"+cpu  # pinned" in result.new_source
