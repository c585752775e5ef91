"""Kill porter (SIGINT, SIGKILL) at random points while it rewrites a tree in place: every
file is afterwards its original or its complete rewrite, and a rerun finishes the job."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from porter.engine import port_source
from porter.settings import Settings

from .conftest import REPO

FILES = 200


def _make(root: Path) -> dict[str, tuple[bytes, bytes]]:
    rng = random.Random(7)
    expected = {}
    for i in range(FILES):
        body = "\n".join(f"    y{j} = x * {j}" for j in range(rng.randint(2, 8)))
        src = (
            f"import torch\n\n\ndef step_{i}(x):\n{body}\n"
            f"    x = x.cuda()\n    torch.cuda.synchronize()\n    return x\n"
        ).encode()
        name = f"pkg{i % 7}/mod_{i}.py"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(src)
        new = port_source(src, name, Settings(target="xla")).new_source
        assert new is not None and new != src
        expected[name] = (src, new)
    return expected


def _check(root: Path, expected) -> int:
    done = 0
    for name, (old, new) in expected.items():
        data = (root / name).read_bytes()
        assert data in (old, new), f"{name} is neither its original nor its rewrite"
        done += data == new
    return done


@pytest.mark.slow
def test_kill_while_rewriting(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    expected = _make(root)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PORTER_NO_CACHE": "1"}
    cmd = [sys.executable, "-m", "porter", "rewrite", str(root), "--target", "xla", "--allow-dirty", "--allow-no-vcs", "-q"]
    rng = random.Random(1)
    kills = 0
    for attempt in range(4):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(rng.uniform(0.5, 2.5))
        sig = signal.SIGINT if attempt % 2 == 0 else signal.SIGKILL
        if proc.poll() is None:
            os.killpg(proc.pid, sig)  # the whole group: the parent and its workers
            kills += 1
        proc.wait(timeout=60)
        _check(root, expected)
        if all((root / n).read_bytes() == new for n, (_, new) in expected.items()):
            break
    final = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()
    assert _check(root, expected) == FILES
    # the atomic writes leave no temporary files behind except from a SIGKILL mid-write,
    # and those are never taken for source files (their names do not end in .py)
    assert not [p for p in root.rglob("*.py") if p.name.startswith(".")]
    assert kills >= 1
