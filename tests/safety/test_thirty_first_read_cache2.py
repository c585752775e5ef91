"""The thirty-first read, second wave (cache2): what the first wave's fixes of the config and
dependency-file readers still read differently from the tools that read those files."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("key", "declared"),
    [
        ("install_requires", True),
        ("Install_Requires", False),  # (the build keeps a key's case: no such key)
        ("TESTS_REQUIRE", False),
        ("install-requires", True),  # (deprecated, read as `install_requires`)
        ("setup-requires", True),
        ("tests-require", True),
    ],
)
def test_setup_cfg_keys_are_read_as_setuptools_build_reads_them(tmp_path, key, declared):
    """setuptools 65.5's build (`setup()` with `egg_info`, the path `pip install` takes; its
    `requires.txt`) is the oracle: it keeps a key's case (`Install_Requires` declares nothing) and
    reads `install-requires` as `install_requires`. porter, after the first wave, lower-cased keys
    as `read_configuration` does (a DEP005 on a cupy-cuda12x the build never declares) and missed
    the dashed key (no DEP005 on one it declares)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "setup.cfg").write_text(f"[metadata]\nname = p\n[options]\n{key} =\n    torch\n    cupy-cuda12x\n")
    results = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert any(f.code == "DEP005" for r in results for f in r.findings) is declared
