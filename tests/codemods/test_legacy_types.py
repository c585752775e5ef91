"""Legacy typed tensors (DEV006) are the device family's alone: one finding per site, a fix
where porter has one, a manual finding with the table's advice where it has none."""

from __future__ import annotations

import pytest

from tests.helpers import port

SOURCE = """import torch
from torch.cuda import FloatTensor as FT
a = torch.cuda.FloatTensor(3)
b = FT([1, 2])
c = x.type(torch.cuda.LongTensor)
ok = isinstance(x, torch.cuda.FloatTensor)
d = torch.cuda.HalfTensor(n)
e = torch.cuda.FloatTensor.dtype
"""


@pytest.mark.parametrize("select", [(), ("DEV006",)])
def test_one_finding_per_site(select):
    _, findings = port(SOURCE, "neuron", select=select)
    sites = [(f.start.line, f.start.column) for f in findings if f.code == "DEV006"]
    assert len(sites) == len(set(sites)), f"a site reported twice: {sorted(sites)}"
    by_line = {f.start.line: f for f in findings if f.code == "DEV006"}
    assert sorted(by_line) == [3, 4, 5, 6, 7]
    assert all(by_line[line].applied for line in (3, 4, 5))
    for line in (6, 7):  # isinstance, and a constructor whose size porter cannot see
        assert not by_line[line].applied
        assert "x.dtype" in (by_line[line].advice or "")
    # an attribute of the type is not the type: the torch.cuda family reports it as unmapped
    assert [f.code for f in findings if f.start.line == 8] == ([] if select else ["CUDA009"])
