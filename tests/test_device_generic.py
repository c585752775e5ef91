"""Device-generic code (torchtitan's way of picking its device) is left alone on neuron and
tpu, where the port still runs on CUDA; what really pins CUDA is still ported or reported."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.pipeline.runner import run
from porter.config.settings import Settings
from tests.helpers import port

# modelled on torchtitan 0.3.0: tools/utils.py and distributed/utils.py
TOOLS_UTILS = """
import os

import torch
from torch._utils import _get_available_device_type, _get_device_module


def get_device_info():
    device_type = _get_available_device_type() or "cuda"
    device_module = _get_device_module(device_type)  # default device_module:torch.cuda
    return device_type, device_module


device_type, device_module = get_device_info()


def set_determinism(debug_config):
    if debug_config.deterministic:
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def enable_batch_invariant_mode():
    # Disable TF32 for exact fp32 accumulation
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def init_distributed(enable_cpu_backend):
    def _get_distributed_backend(enable_cpu_backend):
        backend = "nccl"
        if device_type in torch.distributed.Backend.default_device_backend_map:
            backend = torch.distributed.Backend.default_device_backend_map.get(device_type)
        if enable_cpu_backend:
            backend = f"{device_type}:{backend},cpu:gloo"
        return backend

    torch.distributed.init_process_group(backend=_get_distributed_backend(enable_cpu_backend))


def maybe_bind_numa(device_index: int, device_type: str) -> None:
    if device_type != "cuda":
        return
    os.sched_setaffinity(0, {device_index})
"""

# models/common/attention.py: nothing in it names the device, the project does
ATTENTION = """
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

_compiled_create_block_mask = torch.compile(create_block_mask)


class ScaledDotProductAttention(torch.nn.Module):
    sdpa_backends = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]

    def forward(self, q, k, v):
        with sdpa_kernel(self.sdpa_backends, set_priority=True):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def port_tree(root: Path, target: str) -> dict[str, object]:
    results, _ = run([root], Settings(target=target), jobs=1, cache=False)
    return {Path(r.path).name: r for r in results}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_device_generic_code_is_left_alone(target):
    new, findings = port(TOOLS_UTILS, target)
    assert new == TOOLS_UTILS
    assert not [f for f in findings if f.applied]


def test_xla_still_ports_the_generic_selection():
    """PyTorch/XLA is no torch.accelerator backend: the selection is ported, and with it the
    CUDA switches go (the port no longer runs on CUDA)."""
    new, _ = port(TOOLS_UTILS, "xla")
    assert 'device_type = "xla"' in new
    assert "cudnn" not in new and "allow_tf32" not in new


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_module_of_a_device_generic_project_keeps_its_cuda_defaults(tmp_path, target):
    write(tmp_path / "p", {"tools/utils.py": TOOLS_UTILS, "models/attention.py": ATTENTION})
    out = port_tree(tmp_path / "p", target)
    result = out["attention.py"]
    assert result.new_source is None  # inductor stays the compile default; the SDPA preference stays
    flag = [f for f in result.findings if f.code == "FLAG003"]
    assert len(flag) == 1 and not flag[0].applied and "SDPBackend.MATH" in flag[0].advice


def test_the_same_module_alone_is_still_ported(tmp_path):
    """Without generic selection in the project, a CUDA program is being ported to the target."""
    write(tmp_path / "p", {"models/attention.py": ATTENTION})
    code = (port_tree(tmp_path / "p", "neuron")["attention.py"].new_source or b"").decode()
    assert 'torch.compile(create_block_mask, backend="neuron")' in code
    assert "sdpa_kernel" not in code


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_cuda_pins_in_a_device_generic_project_are_still_ported(tmp_path, target):
    pinned = """
    import torch
    import torch.distributed as dist


    def load_ae(ckpt_path, device: str | torch.device = "cuda"):
        return torch.load(ckpt_path, map_location="cpu")


    def main():
        device = torch.device("cuda:0")
        torch.cuda.set_device(device)
        dist.init_process_group("nccl")
        x = torch.randn(4, 16).cuda()
    """
    write(tmp_path / "p", {"tools/utils.py": TOOLS_UTILS, "precompile_main.py": pinned})
    code = (port_tree(tmp_path / "p", target)["precompile_main.py"].new_source or b"").decode()
    assert f'device: str | torch.device = "{target}"' in code
    assert f'init_process_group("{target}")' in code
    assert ".cuda()" not in code and '"cuda' not in code


def test_a_device_type_this_file_sets_to_cuda_is_ported_with_its_comparison():
    code = textwrap.dedent("""
    import torch
    from torch._utils import _get_available_device_type

    device_type = "cuda"
    if device_type == "cuda":
        torch.manual_seed(0)
    """)
    new, _ = port(code, "neuron")
    assert 'device_type = "neuron"' in new and 'if device_type == "neuron":' in new


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_device_to_backend_mapping_keeps_nccl_and_asks_for_the_target(target):
    code = 'BACKENDS = {"cuda": "nccl", "cpu": "gloo"}\n'
    new, findings = port(code, target)
    assert new == code
    found = [f for f in findings if f.code == "DIST001"]
    assert len(found) == 1 and not found[0].applied and f'"{target}"' in found[0].message
    complete = 'BACKENDS = {"cuda": "nccl", "cpu": "gloo", "%s": "%s"}\n' % (target, target)
    new, findings = port(complete, target)
    assert new == complete and not [f for f in findings if f.code == "DIST001"]


def test_a_backend_default_outside_device_generic_code_is_still_ported():
    """Without a per-device lookup after it, `backend = "nccl"` is the backend."""
    code = textwrap.dedent("""
    import torch.distributed as dist

    def setup():
        backend = "nccl"
        dist.init_process_group(backend=backend)
    """)
    new, _ = port(code, "neuron")
    assert 'backend = "neuron"' in new


# tools/profiler.py and distributed/cudagraph.py
PROFILER = """
import torch


def activities():
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    elif torch.xpu.is_available():
        activities.append(torch.profiler.ProfilerActivity.XPU)
    return activities
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_per_device_chain_keeps_its_cuda_branch_and_reports_the_missing_one(target):
    new, findings = port(PROFILER, target)
    assert new == PROFILER  # ProfilerActivity.CUDA is no activity of the target
    found = [f for f in findings if f.code == "BACK002"]
    assert len(found) == 1 and not found[0].applied and "has no branch" in found[0].message
    assert not any(f.code in ("CUDA001", "CUDA011") for f in findings)  # one finding for the kept branch


def test_a_per_device_chain_that_picks_the_device_gets_the_target_as_one_more_device():
    """The chain picks CUDA, MPS or (now) the target: CUDA's branch stays (issue 21)."""
    code = textwrap.dedent("""
    import torch

    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    """)
    new, _ = port(code, "neuron")
    assert new == code + textwrap.dedent("""\
    elif torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron":
        device = torch.device("neuron")
    """)


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_is_cuda_available_next_to_a_generic_cuda_test_stays(target):
    code = TOOLS_UTILS + textwrap.dedent("""

    def cudagraph_enabled(utils):
        return (
            utils.device_type == "cuda"
            and torch.cuda.is_available()
            and torch.version.hip is None
        )
    """)
    new, _ = port(code, target)
    assert new == code


# experiments/graph_trainer: fsdp_passes.py, tests/test_trace_module.py, tests/integration_tests.py
NCCL_OPTIONS = """
import torch.distributed as dist


def extra_group(ranks):
    pg_options = (
        dist.ProcessGroupNCCL.Options(is_high_priority_stream=True)
        if hasattr(dist, "ProcessGroupNCCL")
        else None
    )
    return dist.new_group(
        ranks=ranks,
        backend="nccl" if pg_options is not None else None,
        pg_options=pg_options,
    )
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_nccl_chosen_with_its_own_options_stays_and_is_reported(target):
    new, findings = port(NCCL_OPTIONS, target)
    assert new == NCCL_OPTIONS  # not the target's backend with NCCL's options
    found = [f for f in findings if f.code == "DIST001"]
    assert len(found) == 1 and not found[0].applied and "only where torch has NCCL" in found[0].message


def test_nccl_with_a_cpu_fallback_still_becomes_the_target_backend():
    code = 'import torch.distributed as dist\ndist.init_process_group("nccl" if dist.is_nccl_available() else "gloo")\n'
    new, _ = port(code, "neuron")
    assert 'init_process_group("neuron")' in new


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_dynamic_stays_under_a_backend_that_is_not_the_targets(target):
    code = textwrap.dedent("""
    import torch


    @torch.compile(backend="eager", fullgraph=True, dynamic=True)
    def forward(xq):
        return xq * 2


    @torch.compile(fullgraph=True, dynamic=True)
    def step(xq):
        return xq * 2
    """)
    new, findings = port(code, target)
    assert '@torch.compile(backend="eager", fullgraph=True, dynamic=True)' in new
    assert [f.code for f in findings if f.code == "COMP003"] == ["COMP003"]  # the second one


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_gpu_platform_option_is_not_a_device(target):
    code = textwrap.dedent("""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--gpu_arch_type",
        default="cuda",
        choices=["cuda", "rocm"],
        help="GPU architecture type. Must be specified as either 'cuda' or 'rocm'.",
    )
    """)
    new, _ = port(code, target)
    assert new == code


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_cuda_seed_after_the_same_torch_seed_stays_in_device_generic_code(target):
    """tests/test_trace_module.py: `torch.manual_seed(42); torch.cuda.manual_seed(42)`."""
    code = TOOLS_UTILS + textwrap.dedent("""

    def set_seed(seed):
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)


    def seed_device_only(seed):
        torch.cuda.manual_seed(seed)
    """)
    new, _ = port(code, target)
    assert "    torch.manual_seed(seed)\n    torch.cuda.manual_seed_all(seed)\n" in new
    assert "def seed_device_only(seed):\n    torch.manual_seed(seed)\n" in new  # the target's seed


# experiments/torchft: manager.py and llama3/config_registry.py
TORCHFT = """
import torchft


def make_pg(config, timeout):
    if config.process_group == "gloo":
        pg = torchft.ProcessGroupGloo(timeout=timeout)
    elif config.process_group == "nccl":
        pg = torchft.ProcessGroupNCCL(timeout=timeout)
    return pg


FT = FaultTolerance(enable=True, process_group="nccl", process_group_timeout_ms=10000)
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_librarys_process_group_choice_is_not_a_backend(target):
    new, findings = port(TORCHFT, target)
    assert new == TORCHFT  # "neuron" would be no torchft process group, and NCCL's class stays
    found = [f for f in findings if f.code == "DIST001"]
    assert len(found) == 2 and not any(f.applied for f in found)
