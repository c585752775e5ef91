"""The thirty-third read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/51-trace-attempts.md): each test failed on 6d9b5ff1 on the wrong outcome."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.deps import need

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_a_side_s_temporary_folder_left_by_a_porter_killed_outright_is_swept_at_the_next_run(tmp_path):
    """Each side's TMPDIR is a `porter-side-*` folder of its own, removed when the side ends; a
    porter killed outright (kill -9) left it, the program's temporaries in it, and no later run
    took it (the work folders beside it are locked and swept)."""
    need("torch")
    need("safetensors")
    temp = tmp_path / "tmp"
    temp.mkdir()
    tree = tmp_path / "tree"
    tree.mkdir()
    pidfile = tmp_path / "side.pid"
    (tree / "train.py").write_text(
        "import os, sys, tempfile, time\n"
        "d = tempfile.mkdtemp(prefix='mine-')\n"
        "open(os.path.join(d, 'f'), 'w').write('x')\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(float(sys.argv[1]))\n"
    )
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "porter", "trace", "record", "--no-noise-floor", "--timeout", "300"]
    proc = subprocess.Popen(
        [*argv, "-o", str(tmp_path / "a.safetensors"), "--", sys.executable, "train.py", "300"],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 180
    while not pidfile.exists() and time.time() < deadline:
        time.sleep(0.2)
    assert pidfile.exists()
    (made,) = temp.glob("porter-side-*/mine-*")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    side = int(pidfile.read_text())
    deadline = time.time() + 30
    while not _gone(side) and time.time() < deadline:
        time.sleep(0.2)
    assert made.is_dir()  # (what the next run must sweep)
    done = subprocess.run(
        [*argv, "-o", str(tmp_path / "b.safetensors"), "--", sys.executable, "train.py", "0"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in temp.glob("porter-side-*")) == []
