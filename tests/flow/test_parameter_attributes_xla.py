"""Attributes a project sets on Parameter objects (mup's `p.infshape`) survive the xla port.

`Module.to()` on XLA drops them, with or without the swap switch (the swap exchanges the
objects' `__dict__` with the temporary's). Where the project sets such attributes, XLA005
takes them by parameter name before each module move and sets them again after it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

from tests.helpers import port, port_tree
from tests.programs import run_programs

SHAPES = """
def tag(model):
    for name, p in model.named_parameters():
        p.lr_scale = 0.5 if name.endswith("bias") else 1.0
"""

TRAIN = """
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
"""

KEPT = """\
    # Module.to() on XLA drops attributes set on a Parameter (`p.lr_scale = 0.5 if name.endswith('bias') else 1.0`)
    kept_attributes = {n: vars(p).copy() for n, p in model.named_parameters()}
    model = model.to(device)
    for kept_name, kept_param in model.named_parameters():
        vars(kept_param).update(kept_attributes[kept_name])
"""


def _write(root: Path) -> Path:
    root.mkdir()
    (root / "shapes.py").write_text(textwrap.dedent(SHAPES).lstrip())
    (root / "train.py").write_text(textwrap.dedent(TRAIN).lstrip())
    return root


def _port(src: Path, out: Path, *extra: str) -> Path:
    return port_tree(src, out, "xla", *extra) / "train.py"


def test_module_moves_keep_parameter_attributes(tmp_path):
    ported = _port(_write(tmp_path / "src"), tmp_path / "port").read_text()
    assert KEPT in ported
    again = CliRunner().invoke(app, ["rewrite", str(tmp_path / "port"), "--target", "xla", "--diff", "-q"])
    assert again.exit_code == 0 and again.stdout == ""  # a second run changes nothing
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


@pytest.mark.xla
@pytest.mark.slow
def test_parameter_attributes_survive_on_xla(tmp_path):
    src = _write(tmp_path / "src")
    ported = _port(src, tmp_path / "port")
    # without XLA005 (the switch and the kept attributes), the attribute is gone after the move
    dropped = _port(src, tmp_path / "dropped", "--ignore", "XLA005")
    outs = [tmp_path / f"{name}.json" for name in ("cpu", "xla", "dropped")]
    # one process (torch_xla loads once): the original runs on the CPU, the ports on XLA:CPU
    original, on_xla, without = run_programs(
        [(script, [str(out)], script.parent) for script, out in zip((src / "train.py", ported, dropped), outs)],
        tmp_path,
        xla=True,
    )
    assert original.rc == 0, original.stderr
    assert on_xla.rc == 0, on_xla.stderr
    cpu, xla = (json.loads(out.read_text()) for out in outs[:2])
    assert xla["losses"] == pytest.approx(cpu["losses"], rel=1e-5, abs=1e-6)
    assert without.rc != 0 and "lr_scale" in without.stderr
