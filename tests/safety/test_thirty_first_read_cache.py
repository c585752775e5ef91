"""The thirty-first read of the cache and the state porter reads back (cache): the line length a
monorepo package's own `pyproject.toml` hid from ruff's configuration above it."""

from __future__ import annotations

import pytest

from tests.helpers import write_files


@pytest.mark.parametrize(
    ("files", "want"),
    [
        # a package's pyproject.toml without [tool.ruff] is no configuration to ruff: 40 from the top
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": '[project]\nname = "p"\n'}, 40),
        # black stops at the package's pyproject.toml (its default); ruff reads the top's [tool.ruff]
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 50\n[tool.black]\nline-length = 60\n",
                "pkg/pyproject.toml": '[project]\nname = "p"\n',
            },
            50,
        ),
        # the package's own [tool.black] without a length: black's default, not the top's ruff length
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[tool.black]\n"}, None),
        # the package's own [tool.ruff] without a length: ruff's default there
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[tool.ruff.lint]\nselect = []\n"}, None),
        # a package's pyproject.toml that does not parse sets no limit (ruff refuses it)
        ({"ruff.toml": "line-length = 40\n", "pkg/pyproject.toml": "[project\n"}, None),
    ],
)
def test_a_package_pyproject_without_a_formatter_table_leaves_ruffs_length_above_it(tmp_path, files, want):
    """ruff 0.17.6 (`check --show-settings pkg/m.py`) reads on past a `pyproject.toml` without
    `[tool.ruff]` (a monorepo package's own `[project]`): 40 and 50 for the first two layouts. porter
    stopped at any `pyproject.toml`: no length, so `rewrite --diff` left
    `local_len = torch.zeros(n).to(torch_xla.device())` at 53 columns in a 40-column project (where
    it splits the call with the length read)."""
    from porter.config.line_length import forget, line_length

    write_files(tmp_path, {".git/HEAD": "", **files, "pkg/m.py": "x = 1\n"})
    forget()
    assert line_length(str(tmp_path / "pkg" / "m.py")) == want
