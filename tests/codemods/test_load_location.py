"""`torch.load`'s location (DEV007) is its second positional argument or `map_location=`;
a starred argument there passes whatever the caller unpacks, and is never replaced by "cpu"
(which gave `torch.load(path, **"cpu")`, marked safe)."""

from __future__ import annotations

import pytest

from porter.codemods import apply
from tests.helpers import port


@pytest.fixture(params=[True, False], ids=["candidate-pass", "every-file-parsed"])
def both_paths(request, monkeypatch):
    """The candidate pass once let such a file through unparsed, which hid the rewrite."""
    monkeypatch.setattr(apply, "CANDIDATE_PASS", request.param)


@pytest.mark.parametrize(
    "call",
    [
        "torch.load(path, **kwargs)",
        "torch.load(path, *rest)",
        "torch.load(*args, device)",
        "torch.load(path, *rest, **kwargs)",
    ],
)
@pytest.mark.parametrize("target", ["xla", "neuron", "tpu"])
def test_a_starred_argument_is_not_the_location(call: str, target: str, both_paths) -> None:
    code = (
        f'import torch\n\n\ndef restore(path, device, *rest, **kwargs):\n    """Saved on cuda."""\n    return {call}\n'
    )
    new, findings = port(code, target, unsafe=True)
    assert call in new
    assert "DEV007" not in {f.code for f in findings}


def test_the_second_positional_argument_is_still_ported(both_paths) -> None:
    code = "import torch\n\nstate = torch.load(path, 'cuda:0', **kwargs)\n"
    new, findings = port(code, "xla")
    assert 'torch.load(path, "cpu", **kwargs)' in new
    assert "DEV007" in {f.code for f in findings}
