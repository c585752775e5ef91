"""The thirty-sixth read of terminal and report output (term, on c5b375fb): each test failed there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]


def _porter(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_") and k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [sys.executable, "-m", "porter", *args],
        env={**base, "PYTHONPATH": str(_ROOT), **env},
        capture_output=True,
        timeout=300,
    )


def _block(page: str, fence: str) -> list[str]:
    """The lines of the first fenced code block `fence` opens."""
    lines = page.splitlines()
    start = lines.index(fence) + 1
    return lines[start : lines.index("```", start)]


def test_explain_off_a_terminal_keeps_a_makefile_recipes_tab() -> None:
    """`porter explain LCH008 | less` (off a terminal: the page's Markdown source) wrote its
    Makefile example's recipe line indented by eight spaces: rich turns a tab into spaces. GNU
    make reads a recipe only after a tab (its manual, "Recipe Syntax"): the line with spaces is
    read as the assignment of a variable `CMAKE_ARGS`, the target has no recipe (`make -n`:
    "Nothing to be done"). Now the source as written."""
    run = _porter("explain", "LCH008")
    assert run.returncode == 0, run.stderr
    block = _block(run.stdout.decode("utf-8"), "```makefile")
    recipe = [line for line in block if "pip install" in line]
    assert recipe and all(line.startswith("\t") for line in recipe), block


def test_explain_off_a_terminal_still_escapes_what_the_encoding_lacks() -> None:
    """Control: a page with characters an ASCII stream lacks (AMP001's) is still written, with
    escapes, exit 0; a page with no tab is its source as before."""
    run = _porter("explain", "AMP001", PYTHONIOENCODING="ascii")
    assert run.returncode == 0, run.stderr
    assert run.stdout.isascii() and b"AMP001" in run.stdout
    plain = _porter("explain", "DEV001").stdout.decode("utf-8")
    assert plain.startswith("# DEV001 `cuda-method`\n") and plain.endswith("\n") and not plain.endswith("\n\n")
    assert all(line == line.rstrip() for line in plain.splitlines())  # no padding off a terminal
