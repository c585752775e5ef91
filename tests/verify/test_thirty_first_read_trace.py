"""The thirty-first read of the trace reader, the recorder and parity-check's I/O (helper `trace`,
docs/reads/49-trace-attempts.md). Each test records a real program (a subprocess, as `porter trace
record` runs it) and checks porter's view against the program's own values, taken without porter
(torch.testing.assert_close is the oracle)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from porter.verify.procs import WorkerSet
from tests.deps import need

# a sparse embedding stepped by `SparseAdam`, the rest by `Adam`, in the order ORDER; each step
# writes the gradient norm of the `Adam`'s parameters (the larger optimizer)
_TWO_OPTIMIZERS = """\
import json, sys
import torch
torch.manual_seed(0)
emb = torch.nn.Embedding(10, 6, sparse=True)
head = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
m = torch.nn.Sequential(emb, head)
opt_s = torch.optim.SparseAdam([emb.weight], lr=1e-2)
opt = torch.optim.Adam(head.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(3074)
norms = []
for i in range(3):
    x = torch.randint(0, 10, (4,), generator=g)
    y = torch.randn(4, 3, generator=g)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    norms.append(float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in head.parameters()]))))
    for o in ORDER:
        o.step()
        o.zero_grad()
if len(sys.argv) > 1:
    json.dump(norms, open(sys.argv[1], "w"))
"""


def _recorded(tmp_path: Path, name: str, body: str, steps: int = 3):
    """The trace of `body` run as train.py, and the values it wrote itself (run without porter)."""
    from porter.verify.script import ScriptConfig, record

    tree = tmp_path / name / "tree"
    tree.mkdir(parents=True)
    (tree / "train.py").write_text(body)
    own = tmp_path / name / "own.json"
    subprocess.run([sys.executable, "train.py", str(own)], cwd=tree, check=True, timeout=300)
    cfg = ScriptConfig(ported=None, command=(sys.executable, "train.py"), timeout=300, steps=steps)
    with WorkerSet() as workers:
        rec = record("reference", tree, cfg, tmp_path / name / "t.safetensors", tmp_path / name / "work", workers)
    assert rec.status == "ok", (rec.status, rec.error)
    return rec.trace, json.loads(own.read_text())


def _compared(monkeypatch, ref, port):
    """The verdict of two CPU recordings (the device check, a port on the reference's own device
    type, is set aside: both sides ran on the CPU here)."""
    from porter.verify import causes
    from porter.verify.tracecmp import compare_traces

    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))
    res = compare_traces(ref, port)
    return res, " | ".join(res.reasons)


@pytest.mark.slow
def test_two_optimizers_stepped_in_either_order_count_the_same_one(tmp_path, monkeypatch):
    """The first optimizer to step was the one counted: a port stepping its `Adam` before the
    `SparseAdam` of its embeddings (the reference after) FAILed "the gradient norm differs at step
    1: reference 0.161, ported 1.12", the same updates. The one whose parameters hold the most
    gradient elements is now counted, in either order: the norm recorded is the `Adam`'s, the
    program's own, and the two PASS."""
    torch = need("torch")
    first, own = _recorded(tmp_path, "sparse_first", _TWO_OPTIMIZERS.replace("ORDER", "(opt_s, opt)"))
    last, own_last = _recorded(tmp_path, "sparse_last", _TWO_OPTIMIZERS.replace("ORDER", "(opt, opt_s)"))
    assert own == own_last
    for trace in (first, last):
        norms = [s["grad_norm"] for s in trace.manifest["steps"]]
        torch.testing.assert_close(torch.tensor(norms, dtype=torch.float64), torch.tensor(own, dtype=torch.float64))
    res, said = _compared(monkeypatch, first, last)
    assert res.verdict == "pass", said
