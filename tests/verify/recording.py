"""A program recorded as `porter trace record` records it, with the values it wrote itself: the
oracle of the read tests that check porter's view of a real program against the program's own
(each of the thirtieth reads' trace files had its copy of this)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from porter.verify.procs import WorkerSet


def recorded(tmp_path: Path, body: str, steps: int = 3, name: str = "t"):
    """The record of `body` run as train.py (its trace: `.trace`), and what `body` wrote to the
    file its first argument names when run once without porter; its files below `tmp_path`,
    named by `name` (one name a recording in a test)."""
    from porter.verify.script import ScriptConfig, record

    tree = tmp_path / f"tree-{name}"
    tree.mkdir(exist_ok=True)
    (tree / "train.py").write_text(body)
    oracle = tmp_path / f"{name}.json"
    subprocess.run([sys.executable, "train.py", str(oracle)], cwd=tree, check=True, timeout=300)
    cfg = ScriptConfig(ported=None, command=(sys.executable, "train.py"), timeout=300, steps=steps)
    with WorkerSet() as workers:
        rec = record("reference", tree, cfg, tmp_path / f"{name}.safetensors", tmp_path / f"work-{name}", workers)
    assert rec.status == "ok", (rec.status, rec.error)
    return rec, json.loads(oracle.read_text())


def compared(monkeypatch, ref, port):
    """The verdict of two CPU recordings and its reasons joined (the device check, a port on the
    reference's own device type, is set aside: both sides ran on the CPU here)."""
    from porter.verify import causes
    from porter.verify.tracecmp import compare_traces

    monkeypatch.setattr(causes, "device_findings", lambda rm, pm: ([], []))
    res = compare_traces(ref, port)
    return res, " | ".join(res.reasons)


def same_training(a: dict, b: dict) -> bool:
    """Whether two programs' own records (`recorded`'s second value: `loss` per step, `weights`
    after each) agree by `torch.testing.assert_close`: the oracle a verdict is checked against."""
    import torch

    try:
        torch.testing.assert_close(torch.tensor(a["loss"]), torch.tensor(b["loss"]))
        torch.testing.assert_close(torch.tensor(a["weights"]), torch.tensor(b["weights"]))
    except AssertionError:
        return False
    return True
