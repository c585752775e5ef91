"""A string is a device only where it reaches one (issue 21): the words of a library's own
vocabulary stay, reported; the device strings beside them are still ported."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port, port_files, write_files


def _port(code: str, target: str = "neuron", path: str = "example.py"):
    new, findings = port(textwrap.dedent(code), target, path=path)
    return new, findings


def _codes(findings, line: int) -> set[str]:
    return {f.code for f in findings if f.start.line == line}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_cuda_beside_words_that_are_no_device_stays_reported(target):
    code = """
    import torch
    if backend not in ["cuda", "triton"]:
        raise ValueError(backend)
    if backend == "cuda":
        pass
    if ort_fusions not in (None, "cpu", "cuda", "webgpu", "dml"):
        raise ValueError
    FUSIONS = [(f, ("cuda", "dml")), (g, ("cuda",)), (h, ("webgpu",))]
    ends = key.endswith(("cuda", "torch", "python", "numpy"))
    if name in {"contiguous", "cuda", "half", "data", "to"}:
        pass
    prefix = "rocm" if is_hip else "cuda"
    KERNEL = env_with_choices("KERNEL", "cuda", ["cuda", "triton"])
    x = torch.ones(2, device="cuda")
    for d in ["cuda", "cpu"]:
        print(d)
    """
    new, findings = _port(code, target)
    kept = textwrap.dedent(code).splitlines()
    lines = new.splitlines()
    for i in range(1, 14):  # every line up to the tensor: unchanged, and what stays is said
        assert lines[i] == kept[i]
        if '"cuda"' in kept[i]:
            assert "DEV015" in _codes(findings, i + 1), kept[i]
    assert lines[14] == f'x = torch.ones(2, device="{target}")'
    assert lines[15] == f'for d in ["{target}", "cpu"]:'


def test_keys_attribute_names_error_text_and_type_checking_stay():
    code = """
    import torch
    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        TARGET_DEVICE: str = "cuda"
    version = components.get("cuda_nvcc", components.get("cuda", {}))
    cuda_version = getattr(torch.version, "cuda", None)
    try:
        step()
    except RuntimeError as e:
        if "cuda" in str(e).lower():
            raise
    if "cuda" in rng_state_dict:
        state = rng_state_dict["cuda"]
    if "cuda" in str(x.device):
        pass
    """
    new, findings = _port(code)
    original = textwrap.dedent(code).splitlines()
    lines = new.splitlines()
    assert lines[:14] == original[:14]
    for line in (5, 6, 7, 11, 13):
        assert "DEV015" in _codes(findings, line), original[line - 1]
    # a device's text is still a device
    assert lines[14] == 'if "neuron" in str(x.device):'


def test_a_packages_public_default_device_stays_reported(tmp_path):
    pkg = tmp_path / "lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    code = textwrap.dedent("""
    import torch


    def load_frames(path, compute_device=torch.device("cuda")):
        return torch.load(path).to(compute_device)


    def get_4bit_type(typename, device=None):
        if device is None:
            device = "cuda"
        return torch.zeros(3, device=device)


    class Pool:
        def __init__(self, device: str = "cuda:0"):
            self.device = device


    def _helper(x, device="cuda"):
        return x.to(device)
    """)
    (pkg / "io.py").write_text(code)
    new, findings = port(code, "neuron", path=str(pkg / "io.py"))
    assert 'compute_device=torch.device("cuda")' in new
    assert 'device = "cuda"\n' in new
    assert 'device: str = "cuda:0"' in new
    assert 'def _helper(x, device="neuron")' in new  # private: the package's own choice
    assert sum(f.code == "DEV016" for f in findings) == 3
    # the same file outside a package (a script) is a program: its default device is ported
    script, _ = port(code, "neuron", path=str(tmp_path / "script.py"))
    assert 'compute_device=torch.device("neuron")' in script and '"cuda' not in script


def test_nccl_among_names_stays_reported():
    code = """
    import argparse
    from typing import Literal
    import torch.distributed as dist
    from .config import defaults

    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", type=str, default="nccl", help="backend for distributed communication")
    bootstrap: Literal["nccl", "mpi", "gloo"]
    ARGS = {"choices": ["nccl", "gloo", "mpi", "xccl", "hccl"]}
    PATTERNS = ["torch", "numpy", "nccl", "triton"]
    Factory.register_engine("nccl", "pkg.nccl_engine", "NCCLEngine")
    dist.init_process_group("nccl")
    """
    new, findings = _port(code)
    original = textwrap.dedent(code).splitlines()
    lines = new.splitlines()
    assert lines[:12] == original[:12]
    assert "DIST001" in _codes(findings, 8)  # a package's documented option: it selects NCCL
    for line in (9, 10, 11, 12):
        assert "DIST007" in _codes(findings, line), original[line - 1]
    assert lines[12] == 'dist.init_process_group("neuron")'


def test_a_programs_backend_option_is_still_ported():
    code = """
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", type=str, default="nccl")
    """
    new, _ = _port(code)
    assert 'default="neuron"' in new


def test_a_second_run_changes_nothing(tmp_path):
    code = """
    import torch
    from .x import y
    if backend not in ["cuda", "triton"]:
        raise ValueError(backend)
    def load(path, device="cuda"):
        return torch.load(path).to(device)
    PATTERNS = ["torch", "nccl"]
    """
    once, _ = _port(code)
    twice, _ = port(once, "neuron")
    assert twice == once == textwrap.dedent(code)


def test_the_branch_behind_a_kept_nccl_test_stays_cuda():
    code = """
    import torch
    import torch.distributed as dist


    def broadcast(tensor, src=0):
        device = tensor.device
        if dist.get_backend() == "nccl":
            tensor = tensor.to("cuda")
        dist.broadcast(tensor, src=src)
        return tensor.to(device), torch.zeros(1, device="cuda")
    """
    new, findings = _port(code)
    # the test is true only on CUDA, so its branch stays CUDA's; elsewhere "cuda" is ported
    assert 'tensor = tensor.to("cuda")' in new and 'torch.zeros(1, device="neuron")' in new, new
    kept = [f for f in findings if f.code == "DIST007" and "fixes not applied there" in f.message]
    assert kept and "DEV002" in kept[0].message


def test_cuda_named_in_place_of_the_cpu_for_a_torch_module_stays():
    """fla's hardware module: on a host with no accelerator it takes `torch.cuda` (which every torch
    build has) as a stand-in module and autocast device type; `getattr(torch, "neuron")` would fail
    at import there."""
    code = (
        "import torch\n\n"
        "device = get_device()\n"
        "device_lib = getattr(torch, device)\n"
        "if device == 'cpu':\n"
        "    device = 'cuda'\n"
        "    device_lib = getattr(torch, device)\n"
        "other = 'cuda'\n"
    )
    new, findings = port(code, "neuron")
    assert "    device = 'cuda'\n    device_lib = getattr(torch, device)\n" in new, new
    assert "other = 'neuron'" in new, new
    assert any(f.code == "DEV015" for f in findings), findings


def test_a_classs_methods_keep_the_device_its_public_field_defaults_to(tmp_path):
    """ColossalAI's `BatchInferState`: its public `device` field defaults to CUDA (DEV016) while
    `init_from_batch` allocated the state's tensors on `"cuda"`; ported, they went to the target
    beside a field that still says CUDA. A function outside the class is ported as before."""
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/state.py": """
                from dataclasses import dataclass

                import torch


                @dataclass
                class BatchInferState:
                    batch_size: int
                    device: torch.device = torch.device("cuda")

                    @classmethod
                    def init_from_batch(cls, batch_size):
                        return torch.zeros(batch_size, dtype=torch.int32, device="cuda")


                def other(n):
                    return torch.zeros(n, device="cuda")
            """,
        },
    )
    code, findings = port_files(tmp_path, "neuron")["pkg/state.py"]
    assert 'return torch.zeros(batch_size, dtype=torch.int32, device="cuda")' in code, code
    assert 'return torch.zeros(n, device="neuron")' in code, code
    assert any(f.code == "DEV016" and "in a method of `BatchInferState`" in f.message for f in findings)


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_device_backend_map_in_one_string_is_reported_not_rewritten(target):
    """`init_process_group("cpu:gloo,cuda:nccl")` passed without a word: CUDA's pair stays (the
    map names it right), and the missing pair for the target is reported (DIST001, manual)."""
    code = (
        "import torch.distributed as dist\n\n\n"
        "def init(rank, world):\n"
        '    dist.init_process_group(backend="cpu:gloo,cuda:nccl", rank=rank, world_size=world)\n'
    )
    new, findings = port(code, target)
    assert new == code
    [f] = [f for f in findings if f.code == "DIST001"]
    assert not f.applied and "cuda:nccl" in f.message and "no pair" in f.message
    with_target = code.replace("cuda:nccl", f"cuda:nccl,{target}:{target}")
    assert not [f for f in port(with_target, target)[1] if f.code == "DIST001"]


@pytest.mark.parametrize("target", ["neuron", "xla"])
def test_a_backend_map_in_capitals_is_a_map(target):
    """torch lowercases the backend string (`backend.lower().split(",")`): "CPU:GLOO,CUDA:NCCL"
    is the same map, and passed without a word; in a string that is no backend argument it is
    text."""
    code = 'import torch.distributed as dist\n\ndist.init_process_group(backend="CPU:GLOO,CUDA:NCCL")\nLABEL = "CPU:GLOO,CUDA:NCCL"\n'
    new, findings = port(code, target)
    assert new == code
    [f] = [f for f in findings if f.code == "DIST001"]
    assert f.start.line == 3 and not f.applied and "no pair" in f.message


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_the_device_id_bound_with_a_backend_map_stays_cudas(target):
    """vllm's parallel_state: `init_process_group("cpu:gloo,cuda:nccl", device_id=...)` binds CUDA's
    device to the map's CUDA pair; a target device there would be bound to no backend, and break
    CUDA. The device_id follows the map: it stays CUDA's, said by the map's DIST001. A device
    elsewhere in the function is ported."""
    code = (
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def init(rank, world, index):\n"
        '    backend = "cpu:gloo,cuda:nccl"\n'
        '    device_id: torch.device | None = torch.device(f"cuda:{index}")\n'
        '    x = torch.zeros(1, device="cuda")\n'
        "    dist.init_process_group(backend=backend, rank=rank, world_size=world, device_id=device_id)\n"
        "    return x\n"
    )
    new, findings = port(code, target)
    assert 'torch.device(f"cuda:{index}")' in new and 'device="cuda"' not in new, new
    [f] = [f for f in findings if f.code == "DIST001"]
    assert "device_id" in f.message and 'torch.device(f"cuda:{index}")' in f.message


@pytest.mark.parametrize("target", ["neuron", "xla"])
def test_a_backend_map_split_over_implicitly_concatenated_literals_is_a_map(target):
    """`("cpu:gloo," "cuda:nccl")` (a formatter splits a long string so) is one string to Python
    and one map to torch; its parts are no map, so it passed without a DIST001."""
    code = (
        "import torch.distributed as dist\n\n"
        'dist.init_process_group(backend=("cpu:gloo,"\n    "cuda:nccl"))\n'
        'dist.new_group(backend="cpu:gloo," "cuda:nccl," "mps:gloo")\n'
        'LABEL = "cpu:gloo," "cuda:nccl"\n'
    )
    new, findings = port(code, target)
    assert new == code
    found = [f for f in findings if f.code == "DIST001"]
    assert [f.start.line for f in found] == [3, 5, 6], found  # one per map, none per part
    assert all(not f.applied and "no pair" in f.message for f in found)
