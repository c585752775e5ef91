"""Shared helpers for the bad-input, interruption and property suites."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # as porter.codemods.apply does

REPO = Path(__file__).resolve().parents[2]
CUDA = b"import torch\nx = torch.randn(3).cuda()\n"


def porter(*args: str, cwd: Path, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=full, capture_output=True, timeout=timeout
    )


@pytest.fixture
def run_porter():
    return porter
