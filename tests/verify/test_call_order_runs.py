"""Script mode on a port that calls its modules in another order than the original: each
module output is compared with the reference's of the same module, never with the shape of
the module the reference called at that position (twenty-second read)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

pytestmark = [pytest.mark.xla, pytest.mark.slow]

# PORT: run on XLA; SWAP: call the two independent towers b then a; BAD: feed tower a another
# input; PAD: feed the model 8 tokens where the original feeds 5 (the loss reads the first 5);
# EXTRA: call one module more first (an nn.Identity standing for a cast or a padding module)
TWO_TOWERS = """
import torch, torch.nn as nn
PORT, SWAP, BAD, PAD, EXTRA = {flags}
if PORT:
    import torch_xla
    dev, sync = torch_xla.device(), torch_xla.sync
else:
    dev, sync = torch.device("cuda"), (lambda: None)
class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.head = nn.Linear(8, 32), nn.Linear(8, 16), nn.Linear(48, 1)
        if EXTRA:
            self.cast = nn.Identity()
    def forward(self, x):
        if EXTRA:
            x = self.cast(x)
        xa = x * 1.01 if BAD else x
        if SWAP:
            hb = self.b(x); ha = self.a(xa)
        else:
            ha = self.a(xa); hb = self.b(x)
        return self.head(torch.cat([ha, hb], -1))
torch.manual_seed(0)
m = Two().to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x, y = torch.randn(2, 5, 8), torch.randn(2, 5, 1)
if PAD:
    x = torch.cat([x, torch.zeros(2, 3, 8)], 1)
x, y = x.to(dev), y.to(dev)
for i in range(2):
    opt.zero_grad()
    loss = ((m(x)[:, :5] - y) ** 2).mean()
    loss.backward()
    opt.step()
    sync()
"""

# one module type called on six lengths (six shapes, beyond the recorder's MAX_REGIONS, 4 until the
# twenty-fifth read, that a padded output is recorded on); BAD: the sixth call's output moved by 1% (a hook of the port's
# own on it: porter records the output its caller gets); SWAP unused
SIX_LENGTHS = """
import torch, torch.nn as nn
PORT, SWAP, BAD, PAD, EXTRA = {flags}
if PORT:
    import torch_xla
    dev, sync = torch_xla.device(), torch_xla.sync
else:
    dev, sync = torch.device("cuda"), (lambda: None)
class Six(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls = nn.ModuleList(nn.Linear(8, 8) for _ in range(6))
        if BAD:
            self.ls[5].register_forward_hook(lambda m, a, out: out * 1.01)
        if EXTRA:
            self.cast = nn.Identity()
    def forward(self, x):
        if EXTRA:
            x = self.cast(x)
        out = 0
        for i, lin in enumerate(self.ls):
            h = lin(x if PAD else x[: i + 1])
            out = out + (h[: i + 1] ** 2).mean()
        return out
torch.manual_seed(0)
m = Six().to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(8, 8).to(dev)
for i in range(2):
    opt.zero_grad()
    m(x).backward()
    opt.step()
    sync()
"""


def _check(tmp_path: Path, name: str, program: str = TWO_TOWERS, **flags) -> dict:
    orig, port = tmp_path / "original", tmp_path / name
    for tree, on in ((orig, {}), (port, dict(flags, PORT=True))):
        tree.mkdir(exist_ok=True)
        values = tuple(on.get(k, False) for k in ("PORT", "SWAP", "BAD", "PAD", "EXTRA"))
        (tree / "train.py").write_text(program.format(flags=values))
    report = tmp_path / f"{name}.json"
    args = ["parity-check", "--original", str(orig), "--ported", str(port), "--steps", "1"]
    args += ["--no-noise-floor", "--no-count-ops", "--timeout", "300", "--report", str(report)]
    res = CliRunner().invoke(app, [*args, "--", sys.executable, "train.py"])
    data = json.loads(report.read_text())
    assert res.exit_code == {"pass": 0, "fail": 1}.get(data["verdict"], 2), res.output
    data["rows"] = {m["module"]: m for m in data["modules"]}
    return data


def test_a_port_that_calls_two_independent_modules_in_another_order_compares_each(tmp_path):
    data = _check(tmp_path, "swapped", SWAP=True)
    assert data["verdict"] == "pass", data["reasons"]
    a = data["rows"]["a"]
    assert a["compared"] and a["passed"] and a["problem"] is None, a  # was "other shapes: ... [2, 5, 16]"
    assert not any("not compared" in w for w in data["warnings"]), data["warnings"]
    data = _check(tmp_path, "swapped_bad", SWAP=True, BAD=True)
    assert data["verdict"] == "fail"
    assert data["first_divergence"]["module"] == "a", data["first_divergence"]


def test_a_port_that_pads_its_batch_further_is_still_compared_on_the_reference_s_region(tmp_path):
    data = _check(tmp_path, "padded", PAD=True)
    assert data["verdict"] == "pass", data["reasons"]
    for key in ("a", "b", "head"):
        row = data["rows"][key]
        assert row["compared"] and row["passed"], row
        assert row["padded_from"][1] == 8 and row["reference_shape"][1] == 5, row


def test_a_padded_port_that_calls_one_module_more_is_compared_on_the_regions_of_the_modules_after_it(tmp_path):
    """A padded port that calls one module the original does not (a cast, a padding module)
    before its others: the region of each call was the reference's call at the same index, so
    every call after the extra one met another module's key and was compared whole ("not
    compared: other shapes"), and a change after it was not named (twenty-second read's
    leftover). Regions now follow the module's own key (its type and call number first)."""
    data = _check(tmp_path, "extra", PAD=True, EXTRA=True)
    assert data["verdict"] == "pass", data["reasons"]
    for key in ("a", "b", "head"):
        row = data["rows"][key]
        assert row["compared"] and row["passed"], row
        assert row["padded_from"][1] == 8 and row["reference_shape"][1] == 5, row
    assert any("only the port recorded" in w and "cast" in w for w in data["warnings"]), data["warnings"]
    data = _check(tmp_path, "extra_bad", PAD=True, EXTRA=True, BAD=True)
    assert data["verdict"] == "fail"
    assert data["first_divergence"]["module"] == "a", data["first_divergence"]


def test_calls_of_one_type_past_the_region_bound_are_compared_on_their_own_regions(tmp_path):
    """Six calls of one module type whose six shapes a padded output holds, with one module more
    before them in the port: the recorder kept MAX_REGIONS (4) regions of a call number, the
    first four calls', so the last two were "not compared" and a port that moved the sixth
    call's output was found only through the loss (twenty-third read's leftover). The reference's
    calls of the type nearest the port's index are now added: all six are compared, and the
    sixth is named."""
    data = _check(tmp_path, "six", SIX_LENGTHS, PAD=True, EXTRA=True)
    assert data["verdict"] == "pass", data["reasons"]
    for i in range(6):
        row = data["rows"][f"ls.{i}"]
        assert row["compared"] and row["passed"] and row["reference_shape"] == [i + 1, 8], row
    assert not any("other shapes" in w for w in data["warnings"]), data["warnings"]
    data = _check(tmp_path, "six_bad", SIX_LENGTHS, PAD=True, EXTRA=True, BAD=True)
    assert data["verdict"] == "fail" and data["first_divergence"]["module"] == "ls.5", data["first_divergence"]
    assert [k for k, row in data["rows"].items() if k.startswith("ls.") and not row["passed"]] == ["ls.5"]
