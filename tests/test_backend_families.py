"""Per-device backend families (porter.analysis.device_backends) as their names are spelled."""

from __future__ import annotations

import pytest

from porter.analysis.device_backends import classes, families

CUDA = (
    b"import torch\n\n\nclass CUDA_Accelerator(Accelerator):\n    def sync(self):\n        torch.cuda.synchronize()\n"
)


@pytest.mark.parametrize("name", ["NEURON_Accelerator", "SDAA_Accelerator", "Neuron_Accelerator", "NeuronAccelerator"])
def test_a_device_word_in_any_case_names_a_family_member(name):
    """`porter backends --scaffold` writes `NEURON_Accelerator`; the class scan's byte hint knew
    `Neuron` but not `NEURON`, so the class porter wrote was not seen: `backends` still said
    the target had none and would scaffold it again."""
    other = f"class {name}(Accelerator):\n    pass\n".encode()
    found = classes("neuron_accelerator.py", other)
    assert [c.name for c in found] == [name], found
    [family] = families([("cuda_accelerator.py", CUDA), ("neuron_accelerator.py", other)])
    assert {c.device for c in family} == {"cuda", name.split("_")[0].lower().removesuffix("accelerator")}
