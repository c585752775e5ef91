"""An option naming a file or folder porter writes refuses an empty name: `Path("")` is `.`,
so `--out-dir "$UNSET"` and `--split ""` wrote the port into the folder porter ran in."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from porter.cli import app
from tests.safety.conftest import CUDA

WRITES = [
    ("rewrite", "src", "--target", "xla", "--out-dir"),
    ("rewrite", "src", "--target", "xla", "--split"),
    ("rewrite", "src", "--target", "xla", "--report"),
    ("rewrite", "src", "--target", "xla", "--diff", "--cache-dir"),
    ("lint", "src", "--target", "xla", "--output-file"),
    ("lint", "src", "--target", "xla", "--write-baseline"),
    ("lint", "src", "--target", "xla", "--report"),
    ("kernels", "src", "--target", "tpu", "--scaffold"),
    ("backends", "src", "--target", "tpu", "--scaffold"),
    ("trace", "record", "src/a.py", "-o"),
    ("trace", "compare", "x.safetensors", "y.safetensors", "--report"),
    ("parity-check", "src/a.py", "--report"),
]


@pytest.mark.parametrize("command", WRITES, ids=lambda c: " ".join((c[0], c[-1])))
def test_an_empty_name_is_a_usage_error_that_writes_nothing(tmp_path, monkeypatch, command):
    _refused_writing_nothing(tmp_path, monkeypatch, [*command, ""], "an empty name names no folder or file")


# the options that name a file (not a folder): a name ending in a slash names a folder
FILE_WRITES = [c for c in WRITES if c[-1] not in ("--out-dir", "--split", "--cache-dir", "--scaffold")]
FILE_WRITES += [("trace", "ops", "x.safetensors", "--report")]


@pytest.mark.parametrize("command", FILE_WRITES, ids=lambda c: " ".join((c[0], c[1], c[-1])))
def test_a_file_name_ending_in_a_slash_is_a_usage_error_that_writes_nothing(tmp_path, monkeypatch, command):
    """`-o out.json/` wrote a file named `out.json` (`Path` drops the slash) where the shell's
    `> out.json/` refuses: the name names a folder (twenty-third read)."""
    _refused_writing_nothing(tmp_path, monkeypatch, [*command, "out.json/"], "names a folder (it ends in a slash)")


def _refused_writing_nothing(tmp_path, monkeypatch, args, why):
    """`args` run on a tree of one CUDA file: a usage error (exit 2) saying `why`, and no file
    written beside the tree."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_bytes(CUDA)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".user-cache"))
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.replace("│", " ").split())  # typer's error panel wraps it
    assert why in said, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["src"]
