"""The twenty-ninth read's trace leftovers (helper tleft): what the twenty-eighth read left in the
recorder, trace compare and the side processes. Each verdict is checked against the test's own
`torch.testing` comparison where one applies."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).parent / "models"


def _alive(pid: int) -> bool:
    """Running (a killed orphan can linger as a zombie until init reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _killed_outright_leaving(tmp_path: Path, prefix: str) -> Path:
    """A porter that made its temporary folder `prefix`* and was killed with SIGKILL."""
    body = (
        "import os, tempfile\nfrom pathlib import Path\nfrom porter.verify.procs import WorkerSet\n"
        f"w = WorkerSet().__enter__()\nd = w.add_temp_dir(Path(tempfile.mkdtemp(prefix={prefix!r})))\n"
        "(d / 'outputs.pt').write_bytes(b'x')\nos.kill(os.getpid(), 9)\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", body], env=env, timeout=60, check=False)
    (left,) = tmp_path.glob(f"{prefix}*")
    return left


@pytest.mark.slow
def test_a_parity_folder_a_porter_killed_outright_left_is_removed_at_the_next_parity_run(tmp_path, monkeypatch):
    """`porter-parity-*` folders (parity-check's sides' outputs) were never swept: a parity-check
    killed with -9 left its folder for good (twenty-eighth trace2 read's leftover), though
    `trace record` and script mode remove theirs. The next parity run removes it."""
    import tempfile

    from porter.verify import ParityConfig, run_parity

    left = _killed_outright_leaving(tmp_path, "porter-parity-")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    tree = MODELS / "raises"
    r = run_parity(ParityConfig(original=tree, ported=tree, entry="model:make_model", warmup=1, repeats=1, timeout=120))
    assert r.verdict == "error"
    assert not left.exists(), "the killed porter's parity folder stayed"
    assert not list(tmp_path.glob("porter-parity-*"))  # (this run's own removed at its end)
