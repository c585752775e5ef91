"""The targets' truth, from their real packages: TorchTPU's one chip per process (no device
index), the backends torch and each target register, autocast's default dtype, and the API
of every torch a target accepts (torch-tpu 0.2.0: torch 2.11 to 2.15; TorchNeuron's source:
`torch~=2.10`), each recorded from the real wheel."""

from __future__ import annotations

import pytest

from porter.apidata import TARGET_RECORDS, TORCH_ACCEPTED, load_record, target_api
from porter.config.settings import Settings
from porter.pipeline.port import port_source


def _port(source: str, target: str, **settings) -> tuple[str, list]:
    result = port_source(source.encode(), "m.py", Settings(target=target, **settings))
    new = result.new_source if result.new_source is not None else source.encode()
    return new.decode(), result.findings


def test_an_integer_device_on_tpu_is_the_one_chip_of_the_process():
    """targets.md: TorchTPU binds a process to one device index and rejects another in
    set_device: the device is "tpu", whatever index the CUDA code named."""
    src = 'import torch\nx = torch.zeros(1).cuda(3)\ny = torch.zeros(1).to(3)\nz = torch.device("cuda", 3)\nw = torch.zeros(1).to("cuda:3")\n'
    new, findings = _port(src, "tpu")
    assert "tpu:" not in new, new
    assert 'x = torch.zeros(1).to("tpu")' in new and 'y = torch.zeros(1).to("tpu")' in new
    assert 'z = torch.device("tpu")' in new and 'w = torch.zeros(1).to("tpu")' in new
    assert all("index" not in f.message or "dropped" in f.message for f in findings), [f.message for f in findings]
    kept, _ = _port(src, "neuron")  # TorchNeuron has indexed devices
    assert '"neuron:3"' in kept and 'torch.device("neuron", 3)' in kept


def _codes(source: str, target: str) -> dict[str, list[str]]:
    _, findings = _port(source, target)
    out: dict[str, list[str]] = {}
    for f in findings:
        out.setdefault(f.code, []).append(f.message)
    return out


def test_backend_names_are_checked_against_the_registered_backends():
    src = (
        'import torch\nimport torch.distributed as dist\nm = torch.compile(model, backend="tpu")\n'
        'dist.init_process_group(backend="xla")\ndist.init_process_group("cpu:gloo,neuron:neuron")\n'
        'n = torch.compile(model, backend="neuron")\n'
    )
    found = _codes(src, "neuron")
    assert len(found.get("API007", [])) == 2, found
    assert any("'tpu'" in m and "compile backend" in m for m in found["API007"])
    assert any("'xla'" in m and "process-group backend" in m for m in found["API007"])
    ok = _codes(
        'import torch\nimport torch.distributed as dist\nm = torch.compile(model, backend="tpu")\ndist.init_process_group("tpu")\n',
        "tpu",
    )
    assert "API007" not in ok, ok


def test_autocast_on_the_target_without_a_dtype_is_reported_and_fixed_unsafely():
    src = 'import torch\nwith torch.autocast("tpu"):\n    y = model(x)\nwith torch.autocast("tpu", dtype=torch.bfloat16):\n    y = model(x)\n'
    found = _codes(src, "tpu")
    assert len(found.get("API008", [])) == 1 and "float16" in found["API008"][0], found  # the recorded default
    new, _ = _port(src, "tpu", unsafe_fixes=True)
    assert 'with torch.autocast("tpu", dtype=torch.bfloat16):\n    y = model(x)\nwith' in new


def test_every_torch_a_target_accepts_is_recorded_from_its_wheel():
    for target, versions in TORCH_ACCEPTED.items():
        stems = TARGET_RECORDS[target]
        for version in versions:
            assert f"torch-{version}" in stems
            source = load_record(f"torch-{version}")["source"]
            assert source["package"] == "torch" and str(source["version"]).startswith(version + "."), source
            assert "wheel" in source or "imported" in source["how"], source
    assert TORCH_ACCEPTED["tpu"] == ("2.11", "2.12", "2.13", "2.14", "2.15")
    assert TORCH_ACCEPTED["neuron"][0] == "2.10"


def test_a_name_one_accepted_torch_lacks_is_reported_with_the_version():
    """`torch.accelerator.Graph` and `empty_host_cache` are in torch 2.12 and later only (read
    from the wheels): TorchTPU accepts 2.11, TorchNeuron 2.10 and 2.11."""
    src = "import torch\ng = torch.accelerator.Graph()\ntorch.accelerator.synchronize()\n"
    tpu = _codes(src, "tpu")["API001"]
    assert len(tpu) == 1 and "torch 2.11" in tpu[0] and "torch 2.12" in tpu[0], tpu
    neuron = _codes(src, "neuron")["API001"]
    assert "torch 2.10.0 and 2.11.0" in neuron[0], neuron
    assert not target_api("tpu").exists("torch.accelerator.Graph")
    assert target_api("tpu").exists("torch.accelerator.synchronize")


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_what_porter_emits_exists_in_every_accepted_torch(target):
    """The torch.cuda -> torch.accelerator renames porter writes bind in each version."""
    src = (
        "import torch\ntorch.cuda.synchronize()\nn = torch.cuda.device_count()\nm = torch.cuda.memory_allocated(0)\n"
        "torch.cuda.empty_cache()\nok = torch.cuda.is_available()\n"
    )
    new, findings = _port(src, target)
    assert "torch.accelerator.synchronize()" in new
    assert not [f for f in findings if f.code.startswith("API")], [(f.code, f.message) for f in findings]
