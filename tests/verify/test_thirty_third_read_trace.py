"""The thirty-third read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/51-trace-attempts.md): each test failed on 6d9b5ff1 on the wrong outcome. The recorded
programs write their own losses, gradient norms and rates (torch.testing.assert_close is the oracle)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.deps import need
from tests.verify.recording import compared, recorded
from tests.verify.test_script_safety import _alive, _tree

ROOT = Path(__file__).resolve().parents[2]


def test_a_side_s_temporary_folder_left_by_a_porter_killed_outright_is_swept_at_the_next_run(tmp_path):
    """Each side's TMPDIR is a `porter-side-*` folder of its own, removed when the side ends; a
    porter killed outright (kill -9) left it, the program's temporaries in it, and no later run
    took it (the work folders beside it are locked and swept)."""
    need("torch")
    need("safetensors")
    temp = tmp_path / "tmp"
    temp.mkdir()
    pidfile = tmp_path / "side.pid"
    tree = _tree(
        tmp_path,
        "import os, sys, tempfile, time\n"
        "d = tempfile.mkdtemp(prefix='mine-')\n"
        "open(os.path.join(d, 'f'), 'w').write('x')\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(float(sys.argv[1]))\n",
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
    while _alive(side) and time.time() < deadline:
        time.sleep(0.2)
    assert not _alive(side), "the side ran on after porter was killed"
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


# fine-tuning in two phases: the optimizer built again at the second iteration (its rate RATE), the
# first one dropped; each iteration writes the loss, gradient norm and rate the program itself takes
_REBUILT = """\
import json, sys
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3158)
own = []
for i in range(3):
    if i == 1:
        opt = torch.optim.Adam(m.parameters(), lr=RATE)
    x, y = torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in m.parameters()]))
    own.append([loss.item(), norm.item(), opt.param_groups[0]["lr"]])
    opt.step()
    opt.zero_grad()
if len(sys.argv) > 1:
    json.dump(own, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_an_optimizer_built_again_mid_run_is_recorded_to_the_end_and_its_rate_compared(tmp_path, monkeypatch):
    """The counted optimizer was chosen once: a program that builds a new one at its second
    iteration (the first dropped) was recorded to one step ("stopped: script ended"), and a port
    whose second phase ran at twice the rate PASSed on that step alone. The count passes to the
    optimizer stepping once the counted one is gone: the program's three steps, and the FAIL."""
    torch = need("torch")
    ref, own = recorded(tmp_path, _REBUILT.replace("RATE", "1e-2"), 3, "ref")
    port, own_port = recorded(tmp_path, _REBUILT.replace("RATE", "2e-2"), 3, "port")
    got = [[s["loss"], s["grad_norm"], *s["lr"]] for s in ref.trace.manifest["steps"]]
    torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), torch.tensor(own, dtype=torch.float64))
    res, said = compared(monkeypatch, ref.trace, port.trace)
    assert res.verdict == "fail", said
    assert "learning rate differs at step 2" in said
