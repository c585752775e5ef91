"""CUDA's own cases in library code that has backends of its own (issue 21, transformers
5.25.0's sampled hunks): a flag saved from a kept `device.type == "cuda"` test, a device
type handed to a library that names devices in its own words, the CUDA rung of a device
ladder that already has the target's rung, a device choice whose other arm is kept on CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import port_files, write_files


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# a project whose own code names several device types: porter's "device abstraction of its own"
PROJECT = {
    "lib/__init__.py": "",
    "lib/devices.py": """
        import torch


        def empty_cache(device):
            if device.type == "cuda":
                torch.cuda.empty_cache()
            elif device.type == "xpu":
                torch.xpu.empty_cache()
            elif device.type == "npu":
                torch.npu.empty_cache()
            elif device.type == "mlu":
                torch.mlu.empty_cache()
    """,
}


def _port(root: Path, files: dict[str, str], target: str = "neuron") -> dict[str, tuple[str, list]]:
    write_files(root, {**PROJECT, **files})
    return {Path(k).name: v for k, v in port_files(root, target).items()}


FLAG = """
import torch


class Runner:
    def __call__(self, device, x):
        on_gpu = device.type == "cuda"
        if on_gpu:
            torch.cuda.current_stream(device).synchronize()
        return x
"""


def test_a_branch_on_a_flag_saved_from_a_kept_device_type_test_stays_cuda(tmp_path):
    code, findings = _port(tmp_path, {"lib/runner.py": FLAG})["runner.py"]
    # `on_gpu` holds `device.type == "cuda"`, kept as CUDA's case: its branch is CUDA's case too
    assert code == FLAG.lstrip(), code
    assert any(f.code == "BACK008" and f.message.startswith("`if on_gpu`") for f in findings), findings


OWN_WORDS = """
import onnxruntime as ort
import torch


def run(session: ort.InferenceSession, x, index):
    binding = session.io_binding()
    binding.bind_input("x", "cuda", 0, x.dtype, tuple(x.shape), x.data_ptr())
    binding.bind_output("y", "cuda", index)
    value = ort.OrtValue.ortvalue_from_numpy(x.numpy(), device_type="cuda", device_id=0)
    session.run_with_iobinding(binding)
    return value


def place(x):
    return x.to("cuda")
"""


def test_a_device_type_handed_to_a_library_with_its_own_device_words_stays(tmp_path):
    code, findings = _port(tmp_path, {"lib/runner.py": OWN_WORDS})["runner.py"]
    # ONNX Runtime's IOBinding and OrtValue take ONNX Runtime's names of devices, not torch's
    for line in ('bind_input("x", "cuda", 0', 'bind_output("y", "cuda", index)', 'device_type="cuda"'):
        assert line in code, code
    assert sum(f.code == "DEV015" for f in findings) == 3, findings
    # and `run`, which binds ONNX Runtime's CUDA device, is CUDA's own (BACK006)
    assert any(f.code == "BACK006" and f.message.startswith("`def run`") for f in findings), findings
    # the tensor's own device is torch's: ported as before
    assert 'x.to("neuron")' in code, code


REPLAY = """
import onnxruntime as ort
import torch


class Runner:
    def _replay_cuda_graph(self, session: ort.InferenceSession, index):
        binding = session.io_binding()
        binding.bind_output("y", "cuda", index)
        torch.cuda.current_stream().synchronize()
        session.run_with_iobinding(binding)
        return binding
"""


def test_a_function_that_hands_cuda_to_a_library_in_its_own_words_stays_cuda(tmp_path):
    code, findings = _port(tmp_path, {"lib/replay.py": REPLAY})["replay.py"]
    # it binds ONNX Runtime's CUDA device: it runs on CUDA only, so its stream sync stays too
    assert code == REPLAY.lstrip(), code
    assert any(f.code == "BACK006" and f.message.startswith("`def _replay_cuda_graph`") for f in findings), findings


EITHER = """
import onnxruntime as ort


def bind(session: ort.InferenceSession, on_gpu, index):
    binding = session.io_binding()
    if on_gpu:
        binding.bind_output("y", "cuda", index)
    else:
        binding.bind_output("y", "cpu", 0)
    return binding
"""


def test_a_function_that_names_cuda_and_another_device_in_a_librarys_words_is_not_cudas(tmp_path):
    _, findings = _port(tmp_path, {"lib/bind.py": EITHER})["bind.py"]
    assert not any(f.code == "BACK006" for f in findings), findings
    assert sum(f.code == "DEV015" for f in findings) == 1, findings


LADDER = """
import os

import torch

from lib.utils import is_torch_neuron_available, is_torch_npu_available, is_torch_xpu_available


def setup_device(use_cpu):
    if use_cpu:
        device = torch.device("cpu")
    elif is_torch_xpu_available():
        device = torch.device("xpu:0")
        torch.xpu.set_device(device)
    elif is_torch_npu_available():
        device = torch.device("npu:0")
        torch.npu.set_device(device)
    elif is_torch_neuron_available():
        device = torch.device("neuron:0")
        torch.neuron.set_device(device)
    else:
        device = torch.device("cuda:0" if torch.cuda.is_available() else os.environ.get("DEVICE", "cpu"))
        n_gpu = torch.cuda.device_count()
        if device.type == "cuda":
            torch.cuda.set_device(device)
    return device
"""


def test_the_cuda_rung_of_a_ladder_that_has_the_targets_rung_stays_byte_for_byte(tmp_path):
    files = {"lib/utils.py": "def is_torch_neuron_available():\n    return False\n", "lib/setup.py": LADDER}
    code, findings = _port(tmp_path, files)["setup.py"]
    # the `else` picks CUDA when CUDA is there: CUDA's rung, and the target has its own above it
    assert code == LADDER.lstrip(), code
    assert any(f.code == "BACK002" and "`else`" in f.message for f in findings), findings


def test_the_cuda_rung_of_a_ladder_without_the_targets_rung_is_not_kept_by_this(tmp_path):
    ladder = LADDER.replace("is_torch_neuron_available()", "is_torch_hpu_available()").replace("neuron", "hpu")
    files = {"lib/utils.py": "def is_torch_hpu_available():\n    return False\n", "lib/setup.py": ladder}
    _, findings = _port(tmp_path, files)["setup.py"]
    assert not any(f.code == "BACK002" and "`else`" in f.message for f in findings), findings


GATED = """
import torch

from lib.utils import is_sagemaker_mp_enabled

if is_sagemaker_mp_enabled():
    import smdistributed.modelparallel.torch as smp


def setup(use_cpu):
    if use_cpu:
        device = torch.device("cpu")
    elif is_sagemaker_mp_enabled():
        device = torch.device("cuda", smp.local_rank())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    return device
"""


def test_a_branch_on_the_test_that_gates_a_cuda_only_import_stays(tmp_path):
    files = {"lib/utils.py": "def is_sagemaker_mp_enabled():\n    return False\n", "lib/setup.py": GATED}
    code, findings = _port(tmp_path, files)["setup.py"]
    # SageMaker's model parallel library (smdistributed) runs on NVIDIA GPUs only: the branch
    # that uses it is its own, left as it is
    assert code == GATED.lstrip(), code
    assert any(f.code == "BACK007" and "smdistributed" in f.message for f in findings), findings


CHOICE = """
import torch


def pick(device_map):
    if isinstance(device_map, dict):
        first = next(iter(device_map.values()), 0)
        if isinstance(first, int):
            device_str = f"cuda:{first}"
        else:
            device_str = str(first)
    else:
        device_str = "cuda:0" if torch.cuda.is_available() else "cpu"
    return torch.device(device_str)
"""


def test_an_index_made_a_cuda_device_beside_a_kept_cuda_choice_of_the_same_name_stays(tmp_path):
    code, findings = _port(tmp_path, {"lib/pick.py": CHOICE})["pick.py"]
    # the other arm's `"cuda:0" if torch.cuda.is_available() else "cpu"` stays CUDA's (BACK008):
    # `f"cuda:{first}"` stays with it, so that both choices of `device_str` agree
    assert code == CHOICE.lstrip(), code
    assert any(f.code == "BACK008" and f.message.startswith('`f"cuda:{first}"`') for f in findings), findings


HUB_KERNEL = """
import torch

from .hub import lazy_load_kernel


def maybe_import_error(message, raise_error=False):
    if raise_error:
        raise ImportError(message)
    return False


def is_sm100():
    return torch.cuda.get_device_capability()[0] >= 10


def is_fastgemm_loadable(raise_error=False):
    if not torch.cuda.is_available():
        return maybe_import_error("FastGEMM kernel requires CUDA, but CUDA is not available.", raise_error=raise_error)
    return True


def load():
    is_fastgemm_loadable(raise_error=True)
    return lazy_load_kernel("fast-gemm")


def forward(x):
    kernel = load()
    torch.cuda.synchronize()
    return kernel.gemm(x, sm100=is_sm100())
"""


def test_a_module_that_loads_a_kernel_its_own_check_says_needs_cuda_stays(tmp_path):
    files = {"lib/hub.py": "def lazy_load_kernel(name):\n    return None\n", "lib/fastgemm.py": HUB_KERNEL}
    code, findings = _port(tmp_path, files)["fastgemm.py"]
    # `lazy_load_kernel("fast-gemm")` loads FastGEMM, which `is_fastgemm_loadable` says needs CUDA:
    # the module is that kernel's plumbing, left as it is
    assert code == HUB_KERNEL.lstrip(), code
    assert any(f.code == "BACK006" and "fast-gemm" in f.message for f in findings), findings


HUB_ATTENTION = """
import torch

from .hub import get_kernel


def load_sparse_kernel(repo_id):
    return get_kernel(repo_id, version=0)


def validate(query):
    if query.device.type != "cuda" or torch.cuda.get_device_capability(query.device)[0] != 10:
        raise RuntimeError("Sparse attention requires an SM100 / Blackwell CUDA device.")


def sparse_attention(query, impl):
    kernel = load_sparse_kernel(impl)
    with torch.cuda.device(query.device):
        return kernel.attend(query)
"""


def test_a_module_that_loads_a_hub_kernel_and_refuses_other_devices_than_cuda_stays(tmp_path):
    files = {"lib/hub.py": "def get_kernel(repo_id, version=None):\n    return None\n", "lib/sparse.py": HUB_ATTENTION}
    code, findings = _port(tmp_path, files)["sparse.py"]
    # the kernel it loads runs where its check lets it: on CUDA's SM100 devices only
    assert code == HUB_ATTENTION.lstrip(), code
    assert any(f.code == "BACK006" and "integrates `load_sparse_kernel(impl)`" in f.message for f in findings), findings


REALLOCATE = """
import torch


def free_storage(data):
    data.storage().resize_(0)


def alloc_storage(data):
    data.storage().resize_(data.numel())


class Hook:
    def allocate(self, params):
        for p in params:
            cur_dev = p.data.device.type
            if cur_dev == "cpu":
                p.data = torch.empty(p.data.shape, device="cuda", dtype=p.data.dtype)
            elif cur_dev == "cuda":
                alloc_storage(p.data)
"""


def test_an_allocation_whose_device_a_kept_cuda_test_reads_stays_with_it(tmp_path):
    code, findings = _port(tmp_path, {"lib/hook.py": REALLOCATE})["hook.py"]
    # `elif cur_dev == "cuda"` (p.data's device type) is kept as CUDA's case; the allocation
    # above sets p.data's device: ported alone, a target tensor would match neither branch
    # next time (its storage never re-allocated) and CUDA would get target tensors
    assert 'device="cuda"' in code and 'elif cur_dev == "cuda"' in code
    assert '"neuron"' not in code
    kept = [f for f in findings if f.code == "BACK008" and "p.data" in f.message]
    assert kept and 'cur_dev == "cuda"' in kept[0].message
    # the re-allocation's test may ask more than the device (found by the eleventh adversarial read)
    guarded = REALLOCATE.replace('elif cur_dev == "cuda":', 'elif cur_dev == "cuda" and p.requires_grad:')
    code, findings = _port(tmp_path / "and", {"lib/hook.py": guarded})["hook.py"]
    assert 'device="cuda"' in code and '"neuron"' not in code, code
    assert any(f.code == "BACK008" and "p.data" in f.message for f in findings)


COMPILED = """
import torch


@torch.compile()
def rescale(out, lse):
    return torch.exp(lse) * out


def fuse(model):
    return torch.compile(model, backend="inductor", mode="max-autotune")
"""

SCRIPT = """
import torch


def main(model):
    return torch.compile(model)


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2))
"""


def test_a_library_keeps_its_compile_backend(tmp_path):
    ported = _port(tmp_path, {"lib/ops.py": COMPILED, "lib/bench.py": SCRIPT})
    code, findings = ported["ops.py"]
    # a library with backends of its own still runs on CUDA: backend="neuron" raises there
    # without torch-neuronx (InvalidBackend, at import for a module-level decorator), and
    # TorchNeuron picks its backend by itself for tensors on its device
    assert code == COMPILED.lstrip(), code
    kept = [f for f in findings if f.code == "COMP001"]
    assert len(kept) == 2 and all("still runs on CUDA" in f.message for f in kept), kept
    # a program of the package (its `__main__` entry) runs on the device its user picks: ported
    code, _ = ported["bench.py"]
    assert 'torch.compile(model, backend="neuron")' in code


def test_a_library_gets_the_xla_backend_which_is_not_picked_by_itself(tmp_path):
    code, findings = _port(tmp_path, {"lib/ops.py": COMPILED}, "xla")["ops.py"]
    # PyTorch/XLA does not pick its backend by itself: the target's backend is added
    assert 'backend="openxla"' in code


LAUNCH = """
import torch.distributed as dist


def pick_backend():
    return "gloo"


def launch(rank: int, world_size: int, backend: str = "nccl", seed: int = 0):
    \"\"\"backend: defaults to nccl.\"\"\"
    backend = pick_backend()
    dist.init_process_group(rank=rank, world_size=world_size, backend=backend)


def start(rank: int, backend: str = "nccl"):
    dist.init_process_group(rank=rank, world_size=1, backend=backend)
"""

SERVER = """
import lib.net
from lib.launch import launch, start


def serve(rank):
    launch(rank=rank, world_size=1, backend="nccl")
    launch(rank, 1, "nccl")
    lib.net.launch(rank, 1, backend="nccl")
    start(rank, backend="nccl")
"""


def test_an_argument_the_callee_discards_is_not_ported(tmp_path):
    files = {"lib/launch.py": LAUNCH, "lib/net/__init__.py": "from .boot import launch\n", "lib/net/boot.py": LAUNCH}
    ported = _port(tmp_path, {**files, "lib/server.py": SERVER})
    code, findings = ported["server.py"]
    # `launch` overwrites `backend` before reading it: what a caller passes selects nothing
    assert 'launch(rank=rank, world_size=1, backend="nccl")' in code
    assert 'launch(rank, 1, "nccl")' in code
    # (the package's own name for it: its `__init__.py` imports it from the module)
    assert 'lib.net.launch(rank, 1, backend="nccl")' in code
    kept = [f for f in findings if f.code == "DIST007" and "discards" in f.message]
    assert len(kept) == 3, findings
    # `start` hands it to init_process_group: ported
    assert 'start(rank, backend="neuron")' in code


# vLLM's conf_compute_utils.py: past `if not tensor.is_cuda ...: return`, whose test is kept as
# CUDA's case (BACK008), only CUDA runs the rest: its torch.cuda stream call is CUDA's case too
# and stays with it; the same call where any device gets is ported
EARLY_EXIT = """
import torch


def register(tensor, enabled):
    if not tensor.is_cuda or not enabled:
        return
    cur = torch.cuda.current_stream(tensor.device)
    cur.synchronize()


def anywhere(tensor):
    return torch.cuda.current_stream(tensor.device)
"""


def test_a_torch_cuda_call_past_a_kept_not_cuda_exit_stays(tmp_path):
    code, findings = _port(tmp_path, {"lib/cc.py": EARLY_EXIT})["cc.py"]
    assert "if not tensor.is_cuda or not enabled:\n        return\n    cur = torch.cuda.current_stream(" in code, code
    assert "return torch.accelerator.current_stream(tensor.device)" in code, code
    said = [f.message for f in findings if f.code == "BACK008" and "current_stream" in f.message]
    assert len(said) == 1 and said[0].startswith(
        "`torch.cuda.current_stream()` runs only past `if not tensor.is_cuda"
    ), said


# vllm 0.34.0's MORI UMBP transfer engine: the devices whose ready events it records are the
# KV caches' CUDA devices only (filled under a kept `device.type == "cuda"` test, in another method)
READY_EVENTS = """
import torch

GPU, CPU = 1, 0


class Engine:
    def __init__(self, client):
        self.client = client
        self._gpu_devices: set[int] = set()

    def register(self, caches):
        for cache in caches:
            location = GPU if cache.device.type == "cuda" else CPU
            device = cache.device.index if cache.device.index is not None else -1
            self.client.register(cache.data_ptr(), location, device)
            if location == GPU and device >= 0:
                self._gpu_devices.add(device)

    def store(self, plans):
        events = []
        for device in self._gpu_devices:
            with torch.device(f"cuda:{device}"):
                event = torch.Event()
                event.record(torch.accelerator.current_stream())
                events.append(event)
        return self.client.submit(plans, events)
"""


def test_a_loop_over_devices_collected_under_a_kept_cuda_test_stays_cuda(tmp_path):
    code, findings = _port(tmp_path, {"lib/engine.py": READY_EVENTS})["engine.py"]
    # `_gpu_devices` only ever gets a device under `location == GPU`, and `location` is GPU only
    # where `cache.device.type == "cuda"` (kept, CUDA's case): the loop runs for CUDA's devices
    # alone, so its `cuda:` device stays (on CUDA, `torch.device("neuron:0")` raises)
    assert code == READY_EVENTS.lstrip(), code
    kept = [f for f in findings if f.code == "BACK008" and "_gpu_devices" in f.message]
    assert kept and 'cache.device.type == "cuda"' in kept[0].message, [f.message for f in findings]
    # filled directly under the test (`if cache.is_cuda:`), in a method after the loop's: the same
    direct = READY_EVENTS.replace(
        "            if location == GPU and device >= 0:\n", "            if cache.is_cuda and device >= 0:\n"
    )
    direct = direct.replace("    def register(", "    def zz_register(")
    order = direct.index("    def zz_register(")
    direct = (
        direct[:order]
        + direct[direct.index("    def store(") :]
        + "\n"
        + direct[order : direct.index("    def store(")]
    )
    code, findings = _port(tmp_path / "direct", {"lib/engine.py": direct})["engine.py"]
    assert 'f"cuda:{device}"' in code and "neuron" not in code, code
    # a set that another device's case fills too is no longer CUDA's alone: the loop is ported
    mixed = READY_EVENTS.replace(
        "                self._gpu_devices.add(device)\n",
        "                self._gpu_devices.add(device)\n            else:\n                self._gpu_devices.add(0)\n",
    )
    code, _ = _port(tmp_path / "mixed", {"lib/engine.py": mixed})["engine.py"]
    assert 'f"cuda:{device}"' not in code, code
