"""Helpers for the safety-contract suite (docs/safety.md): porter run as a user runs it.

Every test here runs `python -m porter` in a fresh process with this checkout on
PYTHONPATH and its own empty user cache, so it can be pointed at an older checkout to
show that the case failed there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CUDA = b"import torch\nx = torch.randn(3).cuda()\n"
PORTED = b"import torch\nimport torch_xla\n\nx = torch.randn(3).to(torch_xla.device())\n"


def porter(
    *args: str, cwd: Path, env: dict | None = None, timeout: float = 180, columns: bool = True
) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    full.pop("PORTER_CACHE_DIR", None)
    full.setdefault("XDG_CACHE_HOME", str(cwd / ".user-cache"))
    if columns:
        full.setdefault("COLUMNS", "200")
    else:
        full.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=full, capture_output=True, timeout=timeout
    )


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def committed_repo(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "init", cwd=root)
    return root


@pytest.fixture
def cuda_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.py"
    path.write_bytes(CUDA)
    return path
