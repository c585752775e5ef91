"""Helpers for running `porter lint` the way a CI job does, on small projects in tmp dirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).resolve().parent / "schemas"

# three findings on neuron: DEV001 (line 3), CUDA003 (line 4), DEV002 (line 5)
TRAIN = """\
import torch

x = torch.zeros(3).cuda()
torch.cuda.synchronize()
dev = "cuda"
"""


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with one CUDA file; the test runs from inside it, as CI does."""
    write(tmp_path, {"train.py": TRAIN})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: str) -> Result:
    """In-process (typer's CliRunner), from the current directory."""
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Result(r.exit_code, r.stdout, r.stderr)


def sh(*args: str, cwd: Path) -> Result:
    """As a user types it: `python -m porter ...` in a subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    p = subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )
    return Result(p.returncode, p.stdout, p.stderr)
