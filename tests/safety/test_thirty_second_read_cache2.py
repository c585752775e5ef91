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
