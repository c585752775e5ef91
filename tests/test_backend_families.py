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


@pytest.mark.parametrize("newline", [b"\r", b"\r\n"])
def test_a_class_of_a_file_whose_lines_end_in_cr_is_seen(newline):
    """Python ends a line at a lone CR (old Mac files); the class scan's `^` did not, so every
    class after the first line of such a file was unseen: `backends` listed no family and
    `--scaffold` wrote nothing (adversarial read 6)."""
    cpu = b"class CPU_Accelerator(Accelerator):\n    pass\n"
    cuda = CUDA.replace(b"\n", newline)
    assert [(c.name, c.bases) for c in classes("cuda_accelerator.py", cuda)] == [("CUDA_Accelerator", ("Accelerator",))]
    [family] = families([("cuda_accelerator.py", cuda), ("cpu_accelerator.py", cpu.replace(b"\n", newline))])
    assert {c.device for c in family} == {"cuda", "cpu"}
