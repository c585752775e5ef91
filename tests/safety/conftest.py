"""Helpers for the safety-contract suite (docs/safety.md): porter run as a user runs it.

Every test here runs `python -m porter` in a fresh process with this checkout on
PYTHONPATH and its own empty user cache, so it can be pointed at an older checkout to
show that the case failed there.
"""

from __future__ import annotations

import os
import signal
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


def porter_with_output_gone(
    argv: list[str], cwd: Path, *, pty: bool = False, stderr_too: bool = False, pythonpath: str = str(REPO)
) -> int:
    """porter `argv` with its stdout gone before it started; its exit status. A pipe whose reader
    left before the first write (`| head -1` that has read its line, a log reader that died), or
    with `pty` a terminal that hung up (its near end closed: every write is EIO), SIGHUP ignored
    (`trap '' HUP` in a script whose ssh session dropped). stderr is read, and holds no
    traceback; with `stderr_too` it goes where stdout goes."""
    near, far = os.openpty() if pty else os.pipe()
    os.close(near)
    env = {**os.environ, "PYTHONPATH": pythonpath, "XDG_CACHE_HOME": str(cwd / ".c")}
    if not pty:
        env["NO_COLOR"] = "1"
    try:
        run = subprocess.run(
            [sys.executable, "-m", "porter", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=far,
            stderr=far if stderr_too else subprocess.PIPE,
            preexec_fn=(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if pty else None,
            timeout=300,
        )
    finally:
        os.close(far)
    assert stderr_too or b"Traceback" not in run.stderr, run.stderr
    return run.returncode


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
