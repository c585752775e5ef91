"""Attributes a project sets on Parameter objects (mup's `p.infshape`) survive the xla port.

`Module.to()` on XLA drops them, with or without the swap switch (the swap exchanges the
objects' `__dict__` with the temporary's). Where the project sets such attributes, XLA005
takes them by parameter name before each module move and sets them again after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import port

SHAPES = '''
def tag(model):
    for name, p in model.named_parameters():
        p.lr_scale = 0.5 if name.endswith("bias") else 1.0
'''

TRAIN = '''
import json
import sys

import torch
from torch import nn

from shapes import tag


def main(out):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(4, 2)
    tag(model)
    model = model.to(device)
    groups = [{"params": [p], "lr": 0.2 * p.lr_scale} for p in model.parameters()]
    optimizer = torch.optim.SGD(groups)
    x = torch.arange(12.0).view(3, 4).to(device) / 10
    losses = []
    for _ in range(3):
        loss = (model(x) - 1).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with open(out, "w") as fh:
        json.dump({"losses": losses}, fh)


main(sys.argv[1])
'''

KEPT = '''\
    # Module.to() on XLA drops attributes set on a Parameter (`p.lr_scale = 0.5 if name.endswith('bias') else 1.0`)
    kept_attributes = {n: vars(p).copy() for n, p in model.named_parameters()}
    model = model.to(device)
    for kept_name, kept_param in model.named_parameters():
        vars(kept_param).update(kept_attributes[kept_name])
'''


def _write(root: Path) -> Path:
    root.mkdir()
    (root / "shapes.py").write_text(textwrap.dedent(SHAPES).lstrip())
    (root / "train.py").write_text(textwrap.dedent(TRAIN).lstrip())
    return root


def _port(src: Path, out: Path, *extra: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", str(src), "--target", "xla", "--out-dir", str(out), "--quiet", *extra],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return out / "train.py"


def test_module_moves_keep_parameter_attributes(tmp_path):
    ported = _port(_write(tmp_path / "src"), tmp_path / "port").read_text()
    assert KEPT in ported
    again = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", str(tmp_path / "port"), "--target", "xla", "--diff", "-q"],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0 and again.stdout == ""  # a second run changes nothing
    # no attributes set in the project: the move is left as it is
    code = textwrap.dedent(TRAIN).replace("from shapes import tag\n", "").replace("    tag(model)\n", "")
    new, findings = port(code, "xla")
    assert "kept_attributes" not in new
    # attributes set in this file, but the moved value is a tensor: nothing to keep
    tensor_only = "import torch\n\ndef tag(m):\n    for p in m.parameters():\n        p.flag = 1\n\ndef f(x):\n    x = x.cuda()\n    return x\n"
    new, findings = port(tensor_only, "xla")
    assert "kept_attributes" not in new and "x = x.to(torch_xla.device())" in new
    # a module porter cannot name before the move: reported, with the advice, not wrapped
    unnamed = "import torch\n\ndef tag(m):\n    for p in m.parameters():\n        p.scale = 1.0\n    return m\n\nnet = tag(torch.nn.Linear(4, 2)).cuda()\nnet.train()\n"
    new, findings = port(unnamed, "xla")
    (left,) = [f for f in findings if f.code == "XLA005" and not f.applied]
    assert "kept_attributes" not in new and "`p.scale = 1.0`, example.py:5" in left.message and left.advice


def _run(script: Path, out: Path, env_extra: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(env_extra, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True, text=True, timeout=600, cwd=script.parent)
    return {"rc": proc.returncode, "stderr": proc.stderr[-3000:], **(json.loads(out.read_text()) if out.exists() else {})}


@pytest.mark.xla
@pytest.mark.slow
def test_parameter_attributes_survive_on_xla(tmp_path):
    src = _write(tmp_path / "src")
    xla = {"PJRT_DEVICE": "CPU", "XLA_FLAGS": "--xla_backend_optimization_level=0"}
    original = _run(src / "train.py", tmp_path / "cpu.json", {})
    assert original["rc"] == 0, original["stderr"]
    on_xla = _run(_port(src, tmp_path / "port"), tmp_path / "xla.json", xla)
    assert on_xla["rc"] == 0, on_xla["stderr"]
    assert on_xla["losses"] == pytest.approx(original["losses"], rel=1e-5, abs=1e-6)
    # without XLA005 (the switch and the kept attributes), the attribute is gone after the move
    dropped = _run(_port(src, tmp_path / "dropped", "--ignore", "XLA005"), tmp_path / "dropped.json", xla)
    assert dropped["rc"] != 0 and "lr_scale" in dropped["stderr"]
