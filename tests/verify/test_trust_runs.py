"""Verdicts a user can trust, on real runs: the same random numbers on XLA as on the CPU, the
original's torch.accelerator branch under the CUDA shim, a reference kept off XLA, the line that grows a sequence named
after a recompile storm, and a torchrun program at world size 2 whose collectives really cross
the processes on both sides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

pytestmark = [pytest.mark.xla, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(ROOT), PJRT_DEVICE="CPU", **env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False
    )


DRAWS = r"""
import sys, torch, torch.nn as nn, torch.nn.functional as F
dev = sys.argv[1]
if dev == "xla":
    import torch_xla
    d = torch_xla.device()
    from porter.verify.rng import DeviceRngMode
    mode = DeviceRngMode(".", redirect=True)
    mode.install_inits()
    mode.install_generators({"xla"})
    mode.__enter__()
else:
    d = torch.device("cpu")
torch.manual_seed(0)
out = [torch.randn(3, 4, device=d), torch.randn_like(torch.zeros(2, 5, device=d))]
lin = nn.Linear(8, 6).to(d)
nn.init.normal_(lin.weight, 0, 0.02); nn.init.trunc_normal_(lin.bias, std=0.1)
w = torch.empty(4, 4, device=d); nn.init.orthogonal_(w)
out += [lin.weight, lin.bias, w, torch.empty(5, device=d).uniform_(-1, 1)]
out += [F.dropout(torch.ones(6, 7, device=d) * 2, 0.3, True), nn.Dropout2d(0.5)(torch.ones(2, 3, 4, 4, device=d))]
q = torch.randn(1, 2, 5, 8, device=d)
out.append(F.scaled_dot_product_attention(q, q, q, dropout_p=0.2, is_causal=True))
g = torch.Generator(device=d); g.manual_seed(7)
out.append(torch.multinomial(torch.full((3, 10), 0.1, device=d), 2, generator=g).float())
out.append(torch.bernoulli(torch.full((7,), 0.5, device=d)))
torch.save([o.detach().cpu() for o in out], f"{dev}.pt")
if dev == "xla":
    print(mode.to_dict()["device_draws"])
"""


def test_device_draws_are_the_cpu_draws(tmp_path):
    import torch

    for dev in ("cpu", "xla"):
        res = _run(DRAWS.replace("sys.argv[1]", repr(dev)), tmp_path)
        assert res.returncode == 0, res.stderr[-3000:]
    assert int(res.stdout.split()[-1]) >= 10  # every kind above was seen on the device
    cpu, xla = torch.load(tmp_path / "cpu.pt"), torch.load(tmp_path / "xla.pt")
    for i, (a, b) in enumerate(zip(cpu, xla)):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6, msg=f"draw {i}")


ACCEL = """
import torch, torch.nn as nn
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
print("device", device)
model = nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.ones(3, 4, device=device)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
"""


def test_the_original_takes_its_accelerator_branch(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(ACCEL)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "t.safetensors"
    res = CliRunner().invoke(
        app, ["trace", "record", "-o", str(out), "--steps", "2", "--no-noise-floor", "--", sys.executable, "train.py"]
    )
    assert res.exit_code == 0, res.output
    from porter.verify.causes import made_on
    from porter.verify.tracefile import read_trace

    m = read_trace(out).manifest
    assert m["devices"]["requested"].get("cuda", 0) >= 2 and m["devices"]["parameters"] == {"cpu": 2}
    assert made_on(m).startswith("cuda, run on the CPU by the CUDA shim")


OFF_XLA = """
import importlib.util, os, torch, torch.nn as nn
seen = [importlib.util.find_spec("torch_xla") is not None, os.environ.get("USE_TORCH_XLA")]
try:
    import torch_xla  # a program (or a library: transformers, accelerate) that uses XLA when it can
    device = torch_xla.device()
except ImportError:
    device = torch.device("cuda")
open("seen.txt", "w").write(f"{seen[0]} {seen[1]} {device}")
model = nn.Linear(4, 2).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.ones(3, 4, device=device)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
"""


def test_the_reference_never_runs_on_xla(tmp_path, monkeypatch):
    """torch_xla is installed here, as it is where the port runs: the reference (the original's
    CUDA run) cannot import it, Hugging Face's switch says no, and a program that asks for the
    XLA device there stops with the line that asked."""
    (tmp_path / "train.py").write_text(OFF_XLA)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "t.safetensors"
    res = CliRunner().invoke(
        app, ["trace", "record", "-o", str(out), "--steps", "2", "--no-noise-floor", "--", sys.executable, "train.py"]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "seen.txt").read_text() == "False 0 cuda"
    from porter.verify.tracefile import read_trace

    m = read_trace(out).manifest
    assert m["devices"]["parameters"] == {"cpu": 2} and m["devices"]["losses"] == ["cpu"]
    (tmp_path / "train.py").write_text("import torch\n\nx = torch.zeros(2, device='xla')\n")
    res = CliRunner().invoke(
        app, ["trace", "record", "-o", str(out), "--steps", "2", "--no-noise-floor", "--", sys.executable, "train.py"]
    )
    assert res.exit_code != 0
    assert "the original asked for a tensor on 'xla' at train.py:3" in " ".join(res.output.split()), res.output


GROW = """
import torch, torch_xla
from porter.verify.shapes import ShapeLog, xla_compiles
import torch_xla.debug.metrics
import os
log = ShapeLog(os.getcwd(), xla_compiles)
log.install_syncs()
log.__enter__()
d = torch_xla.device()
w = torch.randn(8, 8, device=d)
idx = torch.zeros(1, 1, dtype=torch.long, device=d)
for i in range(5):
    x = torch.nn.functional.one_hot(idx, 8).float() @ w
    idx = torch.cat([idx, x.sum(-1).long()[:, -1:] % 8], dim=1)
    torch_xla.sync()
log.__exit__(None, None, None)
import json
print(json.dumps(log.end_step()))
"""


def test_the_line_that_grows_a_sequence_is_named(tmp_path):
    (tmp_path / "grow.py").write_text(GROW)
    res = subprocess.run(
        [sys.executable, "grow.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), PJRT_DEVICE="CPU"),
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    lines = json.loads(res.stdout.splitlines()[-1])
    first = lines[0]
    assert first["call"] == "torch.cat" and first["location"] == "grow.py:14" and first["grows"]
    assert first["trigger"] == "grow.py:15" and first["recompiles"] >= 3
    assert first["last"] == [1, 6]


DDP_PROGRAM = """
import os, torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = dist.get_rank()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).cuda()
model = DDP(model, device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(100 + rank)
for step in range(4):
    x = torch.randn(4, 8, generator=g).cuda()
    scale = torch.tensor([rank + 1.0]).cuda()
    dist.all_reduce(scale)  # 3 on every rank when the ranks really reduce together
    loss = (model(x) * scale).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
"""


def test_a_torchrun_program_at_world_size_2(tmp_path):
    orig, port = tmp_path / "original", tmp_path / "ported"
    orig.mkdir()
    (orig / "train.py").write_text(DDP_PROGRAM)
    res = CliRunner().invoke(app, ["rewrite", str(orig), "--target", "xla", "--out-dir", str(port), "-q"])
    assert res.exit_code in (0, 1), res.output
    ported = (port / "train.py").read_text()
    assert 'init_process_group("xla", init_method="xla://")' in ported or "xla://" in ported
    torchrun = str(Path(sys.executable).parent / "torchrun")
    report = tmp_path / "r.json"
    res = CliRunner().invoke(
        app,
        [
            "parity-check",
            "--original",
            str(orig),
            "--ported",
            str(port),
            "--steps",
            "3",
            "--no-noise-floor",
            "--timeout",
            "400",
            "--report",
            str(report),
            "--",
            torchrun,
            "--nproc-per-node",
            "2",
            "train.py",
        ],
    )
    data = json.loads(report.read_text())
    assert res.exit_code == 0, res.output
    assert data["verdict"] == "pass" and len(data["ranks"]) == 2
    assert data["reasons"][0].startswith("2 ranks, compared rank by rank")
    assert data["ranks"][0]["collectives"][0]["ported"]["all_reduce"] >= 2  # the scale, the buckets
    assert data["ranks"][1]["collectives"][0]["reference"] == data["ranks"][1]["collectives"][0]["ported"]
    notes = " ".join(data["ported"]["notes"])
    assert "ran as gloo on the host, one XLA:CPU process per rank" in notes
    # a port whose collective is wrong fails on the rank it breaks
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "train.py").write_text(ported.replace("dist.all_reduce(scale)", "scale = scale * 1.5"))
    res = CliRunner().invoke(
        app,
        [
            "parity-check",
            "--original",
            str(orig),
            "--ported",
            str(wrong),
            "--steps",
            "2",
            "--no-noise-floor",
            "--timeout",
            "400",
            "--report",
            str(report),
            "--",
            torchrun,
            "--nproc-per-node",
            "2",
            "train.py",
        ],
    )
    data = json.loads(report.read_text())
    assert res.exit_code == 1, res.output
    assert data["verdict"] == "fail" and "parts first, at step 1" in data["reasons"][0]
