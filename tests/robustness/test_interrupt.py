"""Kill porter while it rewrites a tree in place, at a known point: inside the K-th write,
with its temporary file flushed and the rename not done (tests/robustness/paused_write.py).

SIGINT waits for that write to finish (porter defers it), so exactly K files are ported and
the rest are untouched. SIGKILL cannot wait: K-1 files are ported, the K-th is its original
and its temporary is left behind. Either way every file is whole, and a rerun removes the
temporary and finishes the job.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from porter.pipeline.port import port_source
from porter.config.settings import Settings
from porter.pipeline.writer import TMP_SUFFIX

from .conftest import REPO

FILES = 12
K = 5
PAUSED = Path(__file__).with_name("paused_write.py")


def _make(root: Path) -> dict[str, tuple[bytes, bytes]]:
    expected = {}
    for i in range(FILES):
        body = "\n".join(f"    y{j} = x * {j}" for j in range(2 + i % 5))
        src = (
            f"import torch\n\n\ndef step_{i}(x):\n{body}\n"
            f"    x = x.cuda()\n    torch.cuda.synchronize()\n    return x\n"
        ).encode()
        name = f"pkg{i % 3}/mod_{i}.py"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(src)
        new = port_source(src, name, Settings(target="xla")).new_source
        assert new is not None and new != src
        expected[name] = (src, new)
    return expected


def _ported(root: Path, expected) -> int:
    """How many files hold their port; fails if any is neither its original nor its port."""
    done = 0
    for name, (old, new) in expected.items():
        data = (root / name).read_bytes()
        assert data in (old, new), f"{name} is neither its original nor its rewrite"
        done += data == new
    return done


def _default_sigint() -> None:
    """A shell starts background jobs (and pytest-xdist its workers) with SIGINT ignored, and
    a child inherits that; porter, like any program at a terminal, gets the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_kill_inside_a_write(tmp_path, sig):
    root = tmp_path / "tree"
    root.mkdir()
    expected = _make(root)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "PORTER_NO_CACHE": "1"}
    args = ["rewrite", str(root), "--target", "xla", "--allow-dirty", "--allow-no-vcs", "-q"]
    proc = subprocess.Popen(
        [sys.executable, str(PAUSED), str(K), *args, "--jobs", "1"],
        env=env,
        start_new_session=True,
        preexec_fn=_default_sigint,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        line = proc.stdout.readline().decode()
        assert line.startswith("paused "), (line, proc.stderr.read().decode() if proc.poll() is not None else "")
        held = Path(line.split(" ", 1)[1].strip())
        temps = _temporaries(root)  # mid-write: the held file's temporary, and only it
        assert len(temps) == 1 and temps[0].name.startswith(f".{held.name}."), temps
        os.killpg(proc.pid, sig)  # the whole group, as a terminal's Ctrl-C does
        if sig == signal.SIGINT:
            proc.stdin.write(b"\n")  # let the held write go on: porter holds SIGINT until it ends
            proc.stdin.flush()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    if sig == signal.SIGINT:
        assert proc.returncode == 130, err.decode()
        assert f"after writing {K} of {FILES} files" in err.decode(), err.decode()
        assert _ported(root, expected) == K
        assert held.read_bytes() == expected[held.relative_to(root).as_posix()][1]
        assert not _temporaries(root)
    else:
        assert proc.returncode == -signal.SIGKILL
        assert _ported(root, expected) == K - 1
        assert held.read_bytes() == expected[held.relative_to(root).as_posix()][0]
        assert len(_temporaries(root)) == 1  # nothing cleaned up after a SIGKILL

    final = subprocess.run([sys.executable, "-m", "porter", *args], env=env, capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()
    assert _ported(root, expected) == FILES
    assert not _temporaries(root)  # the killed run's temporary is removed by the rerun
    # a temporary's name never ends in .py, so it is never taken for a source file
    assert not [p for p in root.rglob("*.py") if p.name.startswith(".")]
