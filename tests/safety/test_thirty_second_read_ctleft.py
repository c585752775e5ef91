"""The thirty-second read, ctleft: the cache and terminal leftovers of the thirty-first read
(its `49-*-attempts.md` "Left" sections), each read against the tool that reads the file."""

from __future__ import annotations

import pytest


def _run(tmp_path, name, text):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / name).write_text(text)
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    return result


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("torch; cupy-cuda12x", "DEP005"),  # (cupy-cuda12x a package, not torch's marker)
        ("torch==2.3.0+cu121; numpy", "DEP001"),  # (torch's own label: the item ends at `;`)
    ],
)
def test_a_one_line_setup_cfg_list_is_split_at_semicolons_as_setuptools_reads_it(tmp_path, value, code):
    """setuptools 65.5's build (`Distribution.parse_config_files`, `_parse_list_semicolon`) reads
    a one-line `install_requires = torch; cupy-cuda12x` as two requirements (deprecated, with a
    warning): `['torch==2.3.0+cu121', 'cupy-cuda12x']`. porter read one requirement under a marker
    and said nothing (no DEP005 on cupy-cuda12x, no DEP001 on torch's `+cu121`)."""
    result = _run(tmp_path, "setup.cfg", f"[metadata]\nname = p\n[options]\ninstall_requires = {value}\n")
    assert code in {f.code for f in result.findings}


def test_a_setup_cfg_value_continued_on_the_next_line_is_not_split(tmp_path):
    """With a line break the build reads a line each: `torch; cupy-cuda12x` on its own line is torch
    under a (bad) marker, no cupy (the split applies to a one-line value only)."""
    text = "[metadata]\nname = p\n[options]\ninstall_requires = numpy\n    torch; cupy-cuda12x\n"
    result = _run(tmp_path, "setup.cfg", text)
    assert "DEP005" not in {f.code for f in result.findings}


def test_an_editable_url_written_across_a_continuation_is_placed_on_its_own_line(tmp_path):
    """pip 23.2.1 joins `-e https://download.pytorch.org/whl/\\` and `cu121/torch#egg=torch` into one
    editable requirement "(line 2)". porter looked for the joined value whole in the text and found a
    comment's copy on line 4: its DEP006 pointed at the comment."""
    url = "https://download.pytorch.org/whl/cu121/torch#egg=torch"
    text = f"numpy\n-e https://download.pytorch.org/whl/\\\ncu121/torch#egg=torch\n# {url}\n"
    result = _run(tmp_path, "requirements.txt", text)
    [found] = [f for f in result.findings if f.code == "DEP006"]
    assert (found.start.line, found.start.column) == (2, 3)
