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


@pytest.mark.parametrize(
    ("text", "want", "line"),
    [
        # the label on a continuation line: cut there, the version kept
        ("torch==2.3.0\\\n+cu121\n", "torch==2.3.0\\\n\ntorch-xla[tpu]==2.9.0\n", 2),
        # a marker on a continuation line: torch 2.3.0 kept (it became `torch==2.3.1`)
        (
            'torch==2.3.0+cu121 \\\n  ; python_version > "3"\n',
            'torch==2.3.0 \\\n  ; python_version > "3"\ntorch-xla[tpu]==2.9.0\n',
            1,
        ),
        # the label split by a continuation: reported, not edited (no edit spans one)
        ("torch==2.3.0+c\\\r\nu121\r\n", "torch==2.3.0+c\\\r\nu121\r\ntorch-xla[tpu]==2.9.0\r\n", 1),
    ],
)
def test_a_requirement_written_across_a_continuation_is_edited_where_its_characters_are(tmp_path, text, want, line):
    """pip 23.2.1 (`parse_requirements`) joins `torch==2.3.0+cu121 \\` and `; python_version > "3"`
    into one requirement. porter looked for the joined text in the file, found it nowhere (-1), and
    cut `+cu121` at -1's offsets: `torch==2.3.0\\` + `+cu121` became `torch==2.3.121` and the marker
    case `torch==2.3.1` (another torch release, installed by the ported file)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "requirements.txt").write_bytes(text.encode())
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert (result.new_source or b"").decode() == want
    [label] = [f for f in result.findings if f.code == "DEP001"]
    assert label.start.line == line


def test_a_cuda_only_requirement_written_across_a_continuation_is_found_on_its_line(tmp_path):
    """`cupy-cuda12x \\` then `    ==12.0`: pip installs cupy-cuda12x==12.0. porter said
    "requirements.txt:0:-29: DEP005" (a place in no file, its code frame an empty line 0)."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "requirements.txt").write_text("numpy\ncupy-cuda12x \\\n    ==12.0\n")
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    [dep005] = [f for f in result.findings if f.code == "DEP005"]
    assert (dep005.start.line, dep005.start.column) == (2, 0)


@pytest.mark.parametrize(
    "text",
    [
        "[options]\n  install_requires =\n      torch\n      cupy-cuda12x\n",
        "[options]\n  zip_safe = False\n  install_requires =\n      torch\n      cupy-cuda12x\n",
    ],
)
def test_an_indented_setup_cfg_key_is_a_key_as_configparser_reads_it(tmp_path, text):
    """configparser continues a value only on a line indented past its key's line; the first line
    of a section is a key however indented. setuptools 65.5's build declares torch and cupy-cuda12x
    for both files; porter read any indented line as a continuation, of nothing here: no DEP004, no
    DEP005."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "setup.cfg").write_text(f"[metadata]\nname = p\n{text}")
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    assert {f.code for f in result.findings} >= {"DEP004", "DEP005"}
