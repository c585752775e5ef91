"""Ports of library code that has backends of its own (issue 21): each case is modelled on a
hunk of a real library (DeepSpeed 0.19.8, accelerate 1.16.0, ColossalAI 0.5.0, detectron2)
that an earlier porter got wrong."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.analysis.extensions import built_extensions
from tests.helpers import port, port_files, write_files


def _port_tree(root: Path, target: str) -> dict[str, tuple[str, list]]:
    """The ported files by file name (the trees here hold no two of one name)."""
    return {Path(k).name: v for k, v in port_files(root, target).items()}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# DeepSpeed: accelerator classes per device, and code that asks the picked one for its name
ACCELERATORS = {
    "ds/__init__.py": "",
    "ds/accelerator/__init__.py": "",
    "ds/accelerator/abstract_accelerator.py": """
        class DeepSpeedAccelerator:
            def device_name(self, device_index=None):
                raise NotImplementedError
    """,
    "ds/accelerator/cuda_accelerator.py": """
        import torch

        from .abstract_accelerator import DeepSpeedAccelerator


        class CUDA_Accelerator(DeepSpeedAccelerator):
            def __init__(self):
                self._name = 'cuda'

            def device_name(self, device_index=None):
                if device_index is None:
                    return 'cuda'
                return 'cuda:{}'.format(device_index)

            def synchronize(self, device_index=None):
                return torch.cuda.synchronize(device_index)
    """,
    "ds/accelerator/cpu_accelerator.py": """
        from .abstract_accelerator import DeepSpeedAccelerator


        class CPU_Accelerator(DeepSpeedAccelerator):
            def device_name(self, device_index=None):
                return 'cpu'
    """,
    "ds/accelerator/npu_accelerator.py": """
        from .abstract_accelerator import DeepSpeedAccelerator


        class NPU_Accelerator(DeepSpeedAccelerator):
            def device_name(self, device_index=None):
                return 'npu'
    """,
    "ds/inference/engine.py": """
        from ds.accelerator import get_accelerator


        def profile(config):
            if get_accelerator().device_name() == 'cuda' and config.enable_cuda_graph:
                return "graph"
            assert get_accelerator().device_name() == 'cuda', 'GDS currently only supported for CUDA accelerator'
            return "eager"
    """,
    # a copy of the accelerators elsewhere in the tree is a family of its own, not a second CUDA class
    "accelerator/cuda_accelerator.py": """
        import torch

        from .abstract_accelerator import DeepSpeedAccelerator


        class CUDA_Accelerator(DeepSpeedAccelerator):
            def device_name(self, device_index=None):
                return 'cuda'
    """,
    "accelerator/cpu_accelerator.py": """
        from .abstract_accelerator import DeepSpeedAccelerator


        class CPU_Accelerator(DeepSpeedAccelerator):
            def device_name(self, device_index=None):
                return 'cpu'
    """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_accelerator_classes_and_the_questions_asked_of_them_stay(tmp_path, target):
    write_files(tmp_path, ACCELERATORS)
    out = _port_tree(tmp_path, target)
    for name in ("cuda_accelerator.py", "engine.py"):
        code, findings = out[name]
        assert (
            code
            == textwrap.dedent(
                ACCELERATORS[f"ds/{'accelerator' if name.startswith('cuda') else 'inference'}/{name}"]
            ).lstrip()
        )
    engine = [f.code for f in out["engine.py"][1]]
    assert engine.count("BACK006") == 2  # the CUDA-graph test and the GDS assertion
    assert any(f.code == "BACK003" for f in out["cuda_accelerator.py"][1])


# what DeepSpeed's CUDA class answers for its device beside its name: an indexed device, the
# compile backend; code elsewhere that names them literally bypasses the abstraction
ANSWERS = {
    **ACCELERATORS,
    "ds/accelerator/cuda_accelerator.py": ACCELERATORS["ds/accelerator/cuda_accelerator.py"]
    + """
            def __init__(self):
                self._compile_backend = "inductor"

            def get_compile_backend(self):
                return self._compile_backend
    """,
    "ds/nvme/io.py": """
        import torch


        def buffer(n, device_id):
            return torch.randint(high=128, size=(n,), dtype=torch.uint8, device=f'cuda:{device_id}')


        def scratch(n):
            return torch.zeros(n, device="cuda")


        def jit_compat(fn):
            return torch.compile(fn)
    """,
}


def test_a_device_or_compile_backend_the_abstraction_answers_is_not_hard_coded(tmp_path):
    write_files(tmp_path, ANSWERS)
    code, findings = _port_tree(tmp_path, "neuron")["io.py"]
    # the indexed device and the compile backend are the accelerator's answers: kept, reported
    assert "device=f'cuda:{device_id}'" in code and "return torch.compile(fn)\n" in code, code
    back009 = [f for f in findings if f.code == "BACK009"]
    assert back009 and "CUDA_Accelerator.device_name" in back009[0].message
    comp = [f for f in findings if f.code == "COMP001"]
    assert comp and not comp[0].applied and "CUDA_Accelerator.get_compile_backend" in comp[0].message
    # a device with no index is not what that member answers: ported as before
    assert 'torch.zeros(n, device="neuron")' in code, code


def test_without_a_compile_answer_the_backend_is_added(tmp_path):
    write_files(tmp_path, {**ACCELERATORS, "ds/nvme/io.py": ANSWERS["ds/nvme/io.py"]})
    code, findings = _port_tree(tmp_path, "neuron")["io.py"]
    # ACCELERATORS' CUDA class has device_name(index) but names no compile backend
    assert "device=f'cuda:{device_id}'" in code and 'torch.compile(fn, backend="neuron")' in code, code


# DeepSpeed's get_accelerator(): a detection rung that sets the switch key, and the switch
DETECTION = """
import torch


def get_accelerator():
    accelerator_name = None
    if accelerator_name is None:
        try:
            import torch_npu  # noqa: F401

            accelerator_name = "npu"
        except ImportError:
            pass
    if accelerator_name is None:
        if torch.cuda.device_count() > 0 and torch.cuda.is_available():
            accelerator_name = "cuda"
    if accelerator_name is None:
        accelerator_name = "cpu"
    if accelerator_name == "cuda":
        from .cuda_accelerator import CUDA_Accelerator

        return CUDA_Accelerator()
    elif accelerator_name == "npu":
        from .npu_accelerator import NPU_Accelerator

        return NPU_Accelerator()
    elif accelerator_name == "cpu":
        from .cpu_accelerator import CPU_Accelerator

        return CPU_Accelerator()
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_detection_and_switch_over_a_key_stay_and_say_where_the_target_goes(target):
    new, findings = port(DETECTION, target)
    assert new == DETECTION
    back = [f for f in findings if f.code == "BACK002"]
    assert len(back) == 2 and not any(f.applied for f in back)
    assert any("rung of the detection that sets `accelerator_name`" in f.message for f in back)
    assert any("it uses `CUDA_Accelerator`" in f.message for f in back)


# accelerate: vocabulary, NCCL tests and configuration defaults
ACCELERATE = """
import enum
from dataclasses import dataclass
from typing import Optional

import torch


class RNGType(enum.Enum):
    CUDA = "cuda"
    XLA = "xla"


@dataclass
class InitProcessGroupKwargs:
    backend: Optional[str] = "nccl"

    def __post_init__(self):
        seconds = 1800 if self.backend != "nccl" else 600


def export_envs():
    return ['NCCL', 'LD_LIBRARY', 'PATH']


def is_cuda_available():
    return torch.cuda.is_available()


NCCL_BACKEND = 'nccl'
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_names_that_are_not_devices_or_backends_stay(target):
    new, findings = port(ACCELERATE, target)
    assert new == ACCELERATE
    codes = [f.code for f in findings]
    assert "DEV015" in codes  # the enum member
    assert "DIST007" in codes  # self.backend != "nccl"
    assert "BACK006" in codes  # is_cuda_available()
    assert any(f.code == "DIST001" and "configuration value" in f.message for f in findings)


def test_gemini_or_chain_and_ddp_plugin_list_get_the_target():
    code = textwrap.dedent("""
    def supported_devices():
        return ["cuda", "npu"]
    """)
    new, _ = port(code, "neuron")
    assert 'return ["cuda", "npu", "neuron"]' in new


# a Triton launcher that returns early for an empty input, through a shim module
SHIM = """
try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None
    tl = None
"""
LAUNCHER = """
import torch

from pkg._triton import triton, tl


@triton.jit
def _rotary_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


def launch(x, out):
    if x.numel() == 0:
        return out
    grid = (triton.cdiv(x.numel(), 128),)
    with torch.cuda.device(x.device):
        _rotary_kernel[grid](x, x.numel(), BLOCK=128)
    return out
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_triton_launcher_behind_a_shim_and_an_empty_input_check_is_left(tmp_path, target):
    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/_triton.py": SHIM, "pkg/rope.py": LAUNCHER})
    code, findings = _port_tree(tmp_path, target)["rope.py"]
    assert code == textwrap.dedent(LAUNCHER).lstrip()
    if target == "neuron":  # (on tpu no fix is left undone there: nothing to report)
        assert any(f.code == "GUARD003" and "`def launch`" in f.message for f in findings)


def test_stream_calls_beside_a_kept_cuda_stream_stay_together():
    code = textwrap.dedent("""
    import torch


    def warmup(step):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()
        torch.cuda.current_stream().wait_stream(side)
    """)
    new, findings = port(code, "neuron")
    assert new == code  # no half-ported stream code
    assert sum(f.code == "CUDA006" for f in findings) >= 3


def test_rank_device_built_by_concatenation_is_ported():
    new, _ = port('import torch\n\n\ndef dev(rank):\n    return torch.device("cuda:" + str(rank))\n', "neuron")
    assert 'torch.device("neuron:" + str(rank))' in new
    new, _ = port('import torch\n\n\ndef dev(rank):\n    return torch.device("cuda:" + str(rank))\n', "tpu")
    assert 'torch.device("tpu")' in new


def test_build_files_name_their_cuda_extensions():
    detectron2 = textwrap.dedent("""
    import glob
    from torch.utils.cpp_extension import CUDAExtension, CppExtension

    def get_extensions():
        sources = glob.glob("detectron2/layers/csrc/**/*.cpp")
        source_cuda = glob.glob("detectron2/layers/csrc/**/*.cu")
        extension = CppExtension
        if True:
            extension = CUDAExtension
            sources += source_cuda
        return [extension("detectron2._C", sources)]
    """).encode()
    found = built_extensions("setup.py", detectron2)
    assert list(found) == ["detectron2._C"] and "bound to `CUDAExtension`" in found["detectron2._C"]
    cpp = b'from torch.utils.cpp_extension import CppExtension\nCppExtension("ops._ext", ["a.cpp", "b.cu"])\n'
    assert "CUDA sources" in built_extensions("setup.py", cpp)["ops._ext"]
    assert (
        built_extensions(
            "setup.py", b'from torch.utils.cpp_extension import CppExtension\nCppExtension("ops._cpu", ["a.cpp"])\n'
        )
        == {}
    )


# accelerate/utils/bnb.py: CUDA twice in one chain, and a chain whose fallback raises
BNB = """
import torch


def place(model, model_device):
    if model_device.type == "cuda":
        model.cuda(torch.cuda.current_device())
    elif torch.cuda.is_available():
        model.to(torch.cuda.current_device())
    elif torch.xpu.is_available():
        model.to(torch.xpu.current_device())
    else:
        raise RuntimeError("No GPU or Intel XPU found.")


def device_map():
    if torch.cuda.is_available():
        return {"": torch.cuda.current_device()}
    elif torch.xpu.is_available():
        return {"": torch.xpu.current_device()}
    else:
        raise RuntimeError("No GPU found. A GPU is needed for quantization.")
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_switches_that_list_where_the_code_works_are_kept_and_reported(target):
    new, findings = port(BNB, target)
    assert new == BNB
    back = [f for f in findings if f.code == "BACK002"]
    assert len(back) == 3 and not any(f.applied for f in back)  # CUDA's two branches of place(), and device_map()'s
    assert any("whose fallback refuses" in f.message for f in back)


def test_facts_about_cuda_and_rocm_and_a_library_enum_stay():
    code = textwrap.dedent("""
    import torch
    from .base import BaseEnum


    class RNGType(BaseEnum):
        CUDA = "cuda"


    def is_rocm_available():
        return torch.version.hip is not None and torch.cuda.is_available()


    def env():
        pt_cuda_available = torch.cuda.is_available()
        return pt_cuda_available
    """)
    new, findings = port(code, "neuron")
    assert new == code
    assert sum(f.code == "BACK006" for f in findings) >= 2


def test_ddp_device_ids_computed_for_each_device_stay():
    code = textwrap.dedent("""
    import torch


    def wrap(model, device_ids, output_device):
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids, output_device=output_device)
    """)
    new, findings = port(code, "neuron")
    assert new == code
    assert any(f.code == "DIST002" and not f.applied and "computed for each device" in f.message for f in findings)
    literal, _ = port(code.replace("device_ids=device_ids, output_device=output_device", "device_ids=[rank]"), "neuron")
    assert "DistributedDataParallel(model)" in literal


def test_a_build_script_with_extensions_is_left_as_it_is(tmp_path):
    setup = textwrap.dedent("""
    import torch
    from setuptools import setup

    ext_modules = []
    if torch.cuda.is_available():
        bf16 = torch.cuda.is_bf16_supported()
    setup(name="pkg", ext_modules=ext_modules)
    """).lstrip()
    write_files(tmp_path, {"setup.py": setup})
    code, findings = _port_tree(tmp_path, "neuron")["setup.py"]
    assert code == setup
    assert any(f.code == "BACK007" and "build script" in f.message for f in findings)


# A project with a device abstraction of its own (issue 21, library mode): torchtune's device
# ladder names npu and xpu beside cuda; Composer has a class per device (DeviceGPU is CUDA's);
# Lightning's CUDA accelerator module has helpers of its own; DeepSpeed's files import the accessor.
ABSTRACTION = {
    "tt/__init__.py": "",
    "tt/device.py": """
        import enum

        import torch


        class DeviceSupport(enum.Enum):
            CPU = ("cpu", "CPU", "gloo")
            CUDA = ("cuda", "GPU", "nccl")
            NPU = ("npu", "NPU", "hccl")
            XPU = ("xpu", "XPU", "ccl")


        def get_device(name):
            device = torch.device(name)
            if device.type in ["cuda", "npu", "xpu"]:
                torch.accelerator.set_device_index(device.index or 0)
            return device


        def is_cuda_stream_capturing():
            return torch.cuda.is_current_stream_capturing()
    """,
    "tt/recipe.py": """
        import torch
        import torch.distributed as dist


        class Recipe:
            def __init__(self, cfg, device):
                self._device = device
                self._log_peak_memory_stats = cfg.log_peak_memory_stats
                if self._log_peak_memory_stats and self._device.type != "cuda":
                    self._log_peak_memory_stats = False

            def log(self, out):
                if self._device.type == "cuda" and self._log_peak_memory_stats:
                    out(torch.cuda.max_memory_allocated())

            def setup(self, cfg):
                dist.init_process_group(backend="gloo" if cfg.device == "cpu" else "nccl")
                return dist.init_device_mesh("cuda", (2,))


        def bf16_ok():
            return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


        def save_rng():
            state = {"torch": torch.random.get_rng_state()}
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                state["cuda"] = torch.cuda.get_rng_state()
            return state


        def free():
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    """,
    "tt/params.py": """
        import torch


        class Int8Params(torch.nn.Parameter):
            def cuda(self, device=None, non_blocking=False):
                return self.to(device="cuda" if device is None else device, non_blocking=non_blocking)
    """,
    "cm/__init__.py": "",
    "cm/devices/__init__.py": "",
    "cm/devices/device.py": """
        class Device:
            pass
    """,
    "cm/devices/device_gpu.py": """
        import torch

        from cm.devices.device import Device


        class DeviceGPU(Device):
            dist_backend = 'nccl'

            def __init__(self):
                self._device = torch.device('cuda:0')
    """,
    "cm/devices/device_cpu.py": """
        from cm.devices.device import Device


        class DeviceCPU(Device):
            dist_backend = 'gloo'
    """,
    "cm/devices/device_mps.py": """
        from cm.devices.device import Device


        class DeviceMPS(Device):
            dist_backend = 'gloo'
    """,
    "cm/utils.py": """
        import torch

        from cm.devices.device_cpu import DeviceCPU
        from cm.devices.device_gpu import DeviceGPU


        def get_device():
            return DeviceGPU() if torch.cuda.is_available() else DeviceCPU()


        def mesh_type(device):
            device_type = device.name
            if device_type == 'gpu':
                device_type = 'cuda'
            return device_type
    """,
}


def test_a_project_with_its_own_device_abstraction_keeps_its_cuda_cases(tmp_path):
    write_files(tmp_path, ABSTRACTION)
    out = _port_tree(tmp_path, "neuron")
    for name in ("recipe.py", "params.py", "utils.py", "device_gpu.py"):
        code, _ = out[name]
        original = textwrap.dedent(next(v for k, v in ABSTRACTION.items() if k.endswith("/" + name))).lstrip()
        if name == "recipe.py":
            # CUDA's cases stay byte for byte; only the generic rung is ported
            assert code == original.replace(
                "    if torch.cuda.is_available():\n        torch.cuda.empty_cache()",
                "    if torch.accelerator.is_available():\n        torch.accelerator.empty_cache()",
            ), code
        else:
            assert code == original, code
    device, findings = out["device.py"]
    assert 'CUDA = ("cuda", "GPU", "nccl")' in device and "return torch.cuda.is_current_stream_capturing()" in device
    # the list's device types are looked up in DeviceSupport, which has no NEURON: reported, not added
    assert '["cuda", "npu", "xpu"]' in device and "neuron" not in device
    assert any(f.code == "BACK004" and "DeviceSupport" in f.message for f in findings_of(out["device.py"]))
    codes = [f.code for f in out["recipe.py"][1]]
    assert codes.count("BACK008") >= 4 and "BACK009" in codes and "BACK006" in codes
    assert "BACK008" in [f.code for f in out["utils.py"][1]]
    assert "BACK003" in [f.code for f in out["device_gpu.py"][1]]  # DeviceGPU: CUDA's class of the family
    assert "BACK008" in [f.code for f in out["params.py"][1]]


# Composer: a CUDA test kept on CUDA is first saved in a name, then the branch asks the name
KEPT_NAMES = """
import torch


def masks(x, sigma):
    is_cuda_tensor = x.is_cuda
    if is_cuda_tensor:
        return torch.rand(sigma, x.shape[1]).to('cuda')
    return torch.rand(sigma, x.shape[1])


def load_rng(state):
    is_cuda_available = torch.cuda.is_available() and torch.cuda.is_initialized()
    has_cuda_rng_state = 'cuda' in state
    if is_cuda_available and has_cuda_rng_state:
        torch.cuda.set_rng_state(state['cuda'])


def elsewhere(x):
    on = x.is_cuda
    on = False
    if on:
        return x.to('cuda')
    return x
"""


def test_a_branch_on_a_name_for_a_kept_cuda_test_stays_cuda(tmp_path):
    write_files(tmp_path, {**{k: v for k, v in ABSTRACTION.items() if k.startswith("cm/")}, "cm/algo.py": KEPT_NAMES})
    code, findings = _port_tree(tmp_path, "neuron")["algo.py"]
    _, masks, load_rng, elsewhere = code.split("\n\n\ndef ")
    original = KEPT_NAMES.lstrip().split("\n\n\ndef ")
    # the branches under `is_cuda_tensor` and `is_cuda_available` are CUDA's case, kept byte for byte
    assert masks == original[1] and load_rng == original[2], code
    messages = [f.message for f in findings if f.code == "BACK008"]
    assert any(m.startswith("`if is_cuda_tensor`") for m in messages), messages
    assert any(m.startswith("`if is_cuda_available and has_cuda_rng_state`") for m in messages), messages
    # a name assigned twice is not known to hold the CUDA test: ported as before
    assert "x.to('neuron')" in elsewhere, elsewhere


HALF_PORTED = """
import torch


def _get_cuda_rng_state(device="cuda"):
    if isinstance(device, int):
        device = torch.device("cuda", device)
    idx = device.index
    if idx is None:
        idx = torch.cuda.current_device()
    return torch.cuda.default_generators[idx].get_state()


def seed_all(seed):
    torch.cuda.manual_seed(seed)
    return torch.zeros(1, device="cuda")
"""


def test_a_function_named_for_cuda_that_uses_unported_cuda_apis_is_left_whole():
    """Megatron's `_get_cuda_rng_state`: porting its default device and its current device
    would leave `torch.cuda.default_generators` in its body, a function half on the target."""
    code, findings = port(HALF_PORTED, "neuron", path="pkg/random.py")
    head, tail = code.split("def seed_all")
    assert head == HALF_PORTED.split("def seed_all")[0], head
    assert 'device="neuron"' in tail and "torch.manual_seed(seed)" in tail, tail
    said = [f for f in findings if f.code == "BACK006" and "_get_cuda_rng_state" in f.message]
    assert said and "torch.cuda.default_generators" in said[0].message and "DEV002" in said[0].message
    # what has no port inside it is still reported where it is
    assert any(f.code == "CUDA004" and "default_generators" in f.message for f in findings), findings


def test_a_library_getter_about_cuda_itself_is_kept(tmp_path):
    getter = """
        from torch.cuda import device_count as cuda_device_count


        def get_cuda_device_count() -> int:
            \"\"\"Get the number of CUDA devices on the system.\"\"\"
            return cuda_device_count()
    """
    write_files(tmp_path, {**{k: v for k, v in ABSTRACTION.items() if k.startswith("cm/")}, "cm/env.py": getter})
    code, findings = _port_tree(tmp_path, "neuron")["env.py"]
    assert code == textwrap.dedent(getter).lstrip(), code
    assert any(f.code == "BACK006" and "get_cuda_device_count" in f.message for f in findings)


def test_an_application_still_ports_its_device_tests(tmp_path):
    """The same recipe without a device abstraction in the project: an application, whose
    device in play becomes the target's."""
    write_files(tmp_path, {"app/recipe.py": ABSTRACTION["tt/recipe.py"]})
    code, findings = _port_tree(tmp_path, "neuron")["recipe.py"]
    assert 'self._device.type != "neuron"' in code and 'init_device_mesh("neuron", (2,))' in code
    assert not any(f.code in ("BACK008", "BACK009") for f in findings)


def findings_of(entry):
    return entry[1]


DEVICE_ENUM = """
import enum

import torch


class DeviceSupport(enum.Enum):
    CPU = ("cpu", "CPU", "gloo")
    CUDA = ("cuda", "GPU", "nccl")
    NPU = ("npu", "NPU", "hccl")
{extra}
    @staticmethod
    def from_type(device_type):
        for member in DeviceSupport:
            if member.value[0] == device_type:
                return member
        raise ValueError(device_type)


def device_type_from_env():
    if torch.cuda.is_available():
        device = "cuda"
    elif is_npu_available():
        device = "npu"
    else:
        device = "cpu"
    return device


def get_device(name):
    device = torch.device(name)
    if device.type in ["cuda", "npu"]:
        torch.accelerator.set_device_index(device.index or 0)
    return device
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_device_list_checked_against_an_enum_without_the_target_is_reported(target):
    """torchtune's `get_device()`: the types its ladder and list name are looked up in the
    module's `DeviceSupport` enum; the target added there would only raise 'Unknown device'."""
    src = DEVICE_ENUM.format(extra="")
    new, findings = port(src, target)
    assert new == src, new
    back = [f.message for f in findings if f.code in ("BACK004", "BACK002")]
    assert any("DeviceSupport" in m and '`CUDA = ("cuda", "GPU", "nccl")`' in m for m in back), back
    assert sum("has no member for" in m for m in back) == 2, back


def test_a_device_list_checked_against_an_enum_with_the_target_gets_it():
    src = DEVICE_ENUM.format(extra='    NEURON = ("neuron", "Neuron", "xla")\n')
    new, _ = port(src, "neuron")
    assert '["cuda", "npu", "neuron"]' in new and 'device = "neuron"' in new
    assert 'CUDA = ("cuda", "GPU", "nccl")' in new and 'device = "cuda"' in new


# A device choice in a project with a device abstraction (BACK008 keeps CUDA's arm): the test in
# front of it stays CUDA's too, or a target host would pick `cuda:0` (ColossalAI's metainfo_trace,
# Composer's profiler fallback, transformers' SINQ quantizer).
CHOICE = {
    "pkg/__init__.py": "",
    "pkg/devs.py": """
        def code_of(d):
            if d == "cuda":
                return 1
            elif d == "xpu":
                return 2
            elif d == "npu":
                return 3
    """,
    "pkg/prof.py": """
        import torch


        def pick(use_device=None):
            device = use_device
            if device is None:
                device = 'cuda:0' if torch.cuda.is_available() else 'cpu'
            return device


        def meta():
            return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


        def sinq_device(device_map):
            if isinstance(device_map, dict):
                return str(next(iter(device_map.values()), 0))
            return "cuda:0" if torch.cuda.is_available() else "cpu"
    """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_kept_device_choice_keeps_its_test(tmp_path, target):
    write_files(tmp_path, CHOICE)
    code, findings = port_files(tmp_path, target)["pkg/prof.py"]
    assert code == textwrap.dedent(CHOICE["pkg/prof.py"]).lstrip(), code
    assert [f.code for f in findings].count("BACK008") == 3
    assert not any(f.code == "DEV009" for f in findings)


# CUDA features of a library with backends of its own: the monitor's device tuple and its
# per-batch `type != 'cuda'` stay together (Composer's MemoryMonitor, OOMObserver), a branch
# that calls a private `torch.cuda` API stays CUDA's (torchtune's memory snapshot), and a
# choice whose arm calls a `torch.cuda` API with no port to the target keeps its test
# (Composer's collect_env, through aliased imports).
CUDA_FEATURES = """
import warnings

import torch
from torch.cuda import get_device_name as accel_device_name
from torch.cuda import is_available as cuda_available

SUPPORTED = ("cuda", "npu", "xpu")


class MemoryMonitor:
    def init(self, model):
        model_device = next(model.parameters()).device
        if model_device.type not in ('cuda', 'meta'):
            warnings.warn(f'The memory monitor only works on CUDA devices, but the model is on {model_device.type}.')

    def after_train_batch(self, model, log):
        model_device = next(model.parameters()).device
        if model_device.type != 'cuda':
            return
        log(torch.cuda.max_memory_allocated())


def trace_handler(prof, rank, out):
    if prof.profile_memory and torch.cuda.is_available():
        if rank == 0:
            torch.cuda.memory._dump_snapshot(f"{out}/memory_snapshot.pickle")


def gpu_model():
    return accel_device_name(None) if cuda_available() else 'N/A'
"""


def test_cuda_features_of_a_library_stay_cudas_as_a_whole():
    new, findings = port(CUDA_FEATURES, "neuron")
    for line in (
        "if model_device.type not in ('cuda', 'meta'):",
        "if model_device.type != 'cuda':",
        "if prof.profile_memory and torch.cuda.is_available():",
        "return accel_device_name(None) if cuda_available() else 'N/A'",
    ):
        assert line in new, new
    assert '("cuda", "npu", "xpu", "neuron")' in new  # the supported list still gets the target
    assert [f.code for f in findings].count("BACK008") >= 4, [(f.code, f.message) for f in findings]


def test_a_choice_whose_cuda_api_the_target_has_stays_a_port():
    """tpu has `get_device_name` (rules/cuda_api.toml): the choice's test is ported there."""
    new, _ = port(CUDA_FEATURES, "tpu")
    assert "if cuda_available()" not in new and "if model_device.type != 'cuda':" in new


SWITCH_KEY = {
    "pkg/__init__.py": "",
    "pkg/devs.py": """
        def code_of(d):
            if d == "cuda":
                return 1
            elif d == "xpu":
                return 2
            elif d == "npu":
                return 3
    """,
    "pkg/stats.py": """
        class MemStats:
            def __init__(self):
                self._cuda = []
                self._cpu = []

            def non_model_data_list(self, device_type: str):
                if device_type == "cuda":
                    return self._cuda
                elif device_type == "cpu":
                    return self._cpu
                else:
                    raise TypeError
    """,
    "pkg/collector.py": """
        from pkg.stats import MemStats


        class Collector:
            def __init__(self):
                self._memstats = MemStats()

            def finish(self):
                return len(self._memstats.non_model_data_list("cuda"))

            def place(self, t):
                return t.to("cuda")
    """,
}


def test_the_key_of_a_closed_device_switch_passed_by_a_caller_stays(tmp_path):
    """ColossalAI's `MemStats.non_model_data_list("cuda")`: the method accepts "cuda" or "cpu"
    and raises on anything else; its `== "cuda"` is kept (BACK008), so the caller's key stays."""
    write_files(tmp_path, SWITCH_KEY)
    out = port_files(tmp_path, "neuron")
    code, findings = out["pkg/collector.py"]
    assert 'non_model_data_list("cuda")' in code and 't.to("neuron")' in code, code
    assert any(f.code == "DEV015" for f in findings)
    assert out["pkg/stats.py"][0] == textwrap.dedent(SWITCH_KEY["pkg/stats.py"]).lstrip()


def test_a_key_handed_on_to_a_closed_device_switch_stays_where_it_is_passed(tmp_path):
    """ColossalAI's placement policy calls `MemStatsCollector.next_period_non_model_data_usage("cuda")`,
    which hands its `device_type` on to `MemStats.non_model_data_list` (a closed switch over
    "cuda"/"cpu" whose `else` raises): the caller's "cuda" is that switch's key, not a device."""
    files = dict(SWITCH_KEY)
    files["pkg/collector.py"] += """
            def next_usage(self, device_type: str) -> int:
                assert len(self._memstats.non_model_data_list(device_type)) > 0
                return self._memstats.non_model_data_list(device_type)[0]
    """
    files["pkg/policy.py"] = """
        from pkg.collector import Collector


        class Policy:
            def __init__(self):
                self.collector = Collector()

            def evict(self, t):
                return self.collector.next_usage("cuda"), t.to("cuda")
    """
    write_files(tmp_path, files)
    out = port_files(tmp_path, "neuron")
    code, findings = out["pkg/policy.py"]
    assert 'next_usage("cuda")' in code and 't.to("neuron")' in code, code
    assert any(f.code == "DEV015" for f in findings)


def test_a_parameter_set_again_before_it_is_handed_on_is_no_switch_key():
    from porter.analysis.device_backends import switch_keys

    stats = textwrap.dedent(SWITCH_KEY["pkg/stats.py"]).encode()
    forwarding = b"def usage(stats, device_type):\n    return stats.non_model_data_list(device_type)\n"
    assert switch_keys([("pkg/stats.py", stats), ("pkg/use.py", forwarding)])["usage"][1] == "1"
    resetting = (
        b"def usage(stats, device_type):\n    device_type = 'cpu'\n    return stats.non_model_data_list(device_type)\n"
    )
    assert "usage" not in switch_keys([("pkg/stats.py", stats), ("pkg/use.py", resetting)])


def test_what_the_cuda_only_facts_read_of_a_file_covers_a_key_handed_on():
    """The CUDA-only facts are cached by what they read of each file (`part`): the line that hands
    a parameter on and its `def` are read, so an edit there works the facts out again; an edit
    to another line of the body does not."""
    from porter.analysis.cuda_only_index import part

    forwarding = "import torch\n\n\ndef usage(stats, device_type):\n    n = 1\n    return stats.non_model_data_list(device_type)\n"
    assert part(forwarding.encode()) != part(forwarding.replace("(device_type)\n", "('cpu')\n").encode())
    assert part(forwarding.encode()) != part(
        forwarding.replace("usage(stats, device_type)", "usage(device_type)").encode()
    )
    assert part(forwarding.encode()) == part(forwarding.replace("n = 1", "n = 2").encode())


def test_the_key_of_a_switch_that_is_not_closed_is_a_device(tmp_path):
    from porter.analysis.device_backends import switch_keys

    open_switch = textwrap.dedent(SWITCH_KEY["pkg/stats.py"]).replace(
        "        else:\n            raise TypeError\n", ""
    )
    assert switch_keys([("pkg/stats.py", open_switch.encode())]) == {}
    assert (
        switch_keys([("pkg/stats.py", textwrap.dedent(SWITCH_KEY["pkg/stats.py"]).encode())])["non_model_data_list"][1]
        == "0"
    )


# peft 0.21.2: `infer_device()` names the devices (the project's abstraction), and DoRA's
# ephemeral offload picks XPU or CUDA with an if/else whose arms differ only in the device
PEFT_CHOICE = {
    "pk/__init__.py": "",
    "pk/other.py": """
        import torch


        def infer_device():
            if torch.cuda.is_available():
                return "cuda"
            elif hasattr(torch, "xpu") and torch.xpu.is_available():
                return "xpu"
            elif hasattr(torch, "npu") and torch.npu.is_available():
                return "npu"
            return "cpu"
    """,
    "pk/variants.py": """
        import torch


        def is_xpu_available():
            return hasattr(torch, "xpu") and torch.xpu.is_available()


        def offload(lora_A, lora_B):
            if lora_B.device.type not in ["cuda", "xpu"]:
                if is_xpu_available():
                    lora_B = lora_B.to("xpu")
                else:
                    lora_B = lora_B.to("cuda")
            return lora_A.to(lora_B.device), lora_B


        def moved(x):
            if is_xpu_available():
                x = x.to("xpu")
            else:
                x = x.float().to("cuda")
            return x
    """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_cuda_arm_of_an_if_else_device_choice_stays(tmp_path, target):
    write_files(tmp_path, PEFT_CHOICE)
    code, findings = _port_tree(tmp_path, target)["variants.py"]
    assert '            lora_B = lora_B.to("cuda")\n' in code
    assert f'["cuda", "xpu", "{target}"]' in code  # the list of devices still gets the target (BACK001)
    kept = [f for f in findings if f.code == "BACK008"]
    assert (
        len(kept) == 1
        and 'lora_B = lora_B.to("cuda")` names CUDA as one case of a device choice (`xpu` beside it)' in kept[0].message
    )
    # arms that differ in more than the device are not a choice between devices: ported as before
    assert 'x = x.float().to("cuda")' not in code


# transformers 5.25.0 utils/import_utils.py `is_torch_bf16_available_on_device`: CUDA's rung asks a
# CUDA helper, the code after the rungs probes the device it was given
BF16_PROBE = """
import torch


def bf16_gpu():
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def bf16_on(device):
    if device == "cuda":
        return bf16_gpu()

    if device == "hpu":
        return True

    try:
        x = torch.zeros(2, 2, dtype=torch.bfloat16, device=device)
        _ = x @ x
        return True
    except Exception:
        return False


def allocated(device):
    if device == "cuda":
        return torch.cuda.memory_allocated()
    if device == "xpu":
        return torch.xpu.memory_allocated()
    return 0
"""


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_no_rung_where_the_fallback_works_on_the_switchs_device(target):
    new, findings = port(BF16_PROBE, target)
    assert f'if device == "{target}":\n        return bf16_gpu()' not in new
    assert 'if device == "cuda":\n        return bf16_gpu()' in new
    assert any(f.code == "BACK005" and "works on any `device`" in f.message for f in findings)
    # a fallback that does not use the device: the target's rung is added (or, where CUDA's body
    # has no port, reported), as before
    rung = [f for f in findings if f.code == "BACK002" and f.start.line == 25]
    assert len(rung) == 1 and "needs no branch" not in rung[0].message


# vLLM 0.34.0: a module per device (`platforms/cuda.py`, `rocm.py` beside `xpu.py`, `cpu.py`),
# a requirements file per device, a deployment recipe, and generic code that asks CUDA
# about graph capture and compiles with the backend its platform picks
PLATFORMS = {
    "mini/__init__.py": "",
    "mini/platforms/__init__.py": "from .interface import Platform\n",
    "mini/platforms/interface.py": """
        class Platform:
            device_type: str
            simple_compile_backend: str = "inductor"
    """,
    "mini/platforms/cuda.py": """
        import torch

        from .interface import Platform

        torch.backends.cuda.enable_cudnn_sdp(False)


        class CudaPlatformBase(Platform):
            device_type: str = "cuda"

            @classmethod
            def set_device(cls, device: int) -> None:
                torch.cuda.set_device(device)
    """,
    "mini/platforms/rocm.py": """
        import torch

        from .interface import Platform


        class RocmPlatform(Platform):
            device_type: str = "cuda"

            def memory(self, device):
                torch.cuda.empty_cache()
                return torch.cuda.max_memory_allocated(device)
    """,
    "mini/platforms/xpu.py": """
        import torch

        from .interface import Platform


        class XPUPlatform(Platform):
            device_type: str = "xpu"

            def memory(self, device):
                return torch.xpu.max_memory_allocated(device)
    """,
    "mini/platforms/cpu.py": """
        from .interface import Platform


        class CpuPlatform(Platform):
            device_type: str = "cpu"
    """,
    "mini/models/__init__.py": "",
    "mini/models/attn.py": """
        import torch

        from mini.platforms import current_platform


        def index(x, n):
            if n > 4 and not torch.cuda.is_current_stream_capturing():
                return x[:n]
            return x


        def keep(plans, key, plan):
            if torch.cuda.is_current_stream_capturing():
                plans[key] = plan


        @torch.compile(dynamic=True, backend=current_platform.simple_compile_backend)
        def topk(x):
            return torch.topk(x, 2)
    """,
    "requirements/cuda.txt": "torch==2.14.0\nnvidia-nccl-cu12\n",
    "requirements/cpu.txt": "torch==2.14.0\nnumpy\n",
    "requirements/xpu.txt": "torch==2.14.0\n",
    "recipes/model.yaml": """
        hardware:
          h200:
            extra_env:
              CUDA_VISIBLE_DEVICES: "0,1,2,3"
        guide: |
          export CUDA_VISIBLE_DEVICES=0
    """,
}


def test_a_module_per_device_is_kept_as_a_folder_per_device_is(tmp_path):
    write_files(tmp_path, PLATFORMS)
    out = port_files(tmp_path, "neuron")
    for name in ("mini/platforms/cuda.py", "mini/platforms/rocm.py"):
        code, findings = out[name]
        assert code == textwrap.dedent(PLATFORMS[name]).lstrip(), code
        back = [f for f in findings if f.code == "BACK003"]
        assert back and "`cpu.py`, `xpu.py`" in back[0].message and "`neuron.py`" in back[0].message
    # a module named for a device with no sibling for another device is no family
    write_files(
        tmp_path / "solo", {"pkg/__init__.py": "", "pkg/cuda.py": "import torch\nx = torch.zeros(2, device='cuda')\n"}
    )
    solo = port_files(tmp_path / "solo", "neuron")
    assert "neuron" in solo["pkg/cuda.py"][0]


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_cuda_answers_that_are_constants_on_the_target_stay_in_a_library(tmp_path, target):
    """`torch.cuda.is_current_stream_capturing()` is False on the target, but a library with
    backends of its own still runs this line on CUDA: the capture test stays, reported."""
    write_files(tmp_path, PLATFORMS)
    code, findings = port_files(tmp_path, target)["mini/models/attn.py"]
    assert code.count("torch.cuda.is_current_stream_capturing()") == 2, code
    graph = [f for f in findings if f.code == "GRAPH001"]
    assert len(graph) == 2 and all(not f.applied and "a module per device" in f.message for f in graph)
    # in an application the target's answer replaces CUDA's
    app, _ = port("import torch\nif not torch.cuda.is_current_stream_capturing():\n    x = 1\n", target)
    assert "is_current_stream_capturing" not in app


def test_dynamic_stays_under_a_backend_the_code_computes(tmp_path):
    write_files(tmp_path, PLATFORMS)
    code, findings = port_files(tmp_path, "neuron")["mini/models/attn.py"]
    assert "@torch.compile(dynamic=True, backend=current_platform.simple_compile_backend)" in code
    assert any(f.code == "COMP003" and not f.applied and "computed" in f.message for f in findings)
    # a literal backend (the target's, or inductor made the target's) still loses it
    new, _ = port('import torch\nf = torch.compile(g, dynamic=True, backend="inductor")\n', "neuron")
    assert 'torch.compile(g, backend="neuron")' in new


def test_per_device_files_and_deployments_of_a_library_stay(tmp_path):
    write_files(tmp_path, PLATFORMS)
    out = port_files(tmp_path, "neuron")
    for name in ("requirements/cuda.txt", "requirements/cpu.txt", "requirements/xpu.txt", "recipes/model.yaml"):
        code, findings = out[name]
        assert code == textwrap.dedent(PLATFORMS[name]).lstrip(), (name, code)
        assert findings and not any(f.applied for f in findings)
    cpu = [f for f in out["requirements/cpu.txt"][1] if f.code == "DEP004"]
    assert cpu and "`neuron.txt`" in cpu[0].message
    env = [f for f in out["recipes/model.yaml"][1] if f.code == "ENV001"]
    assert len(env) == 2 and all(
        "backends of its own" in f.message and "NEURON_RT_VISIBLE_CORES" in f.message for f in env
    )


def test_an_application_deployment_still_gets_the_target_cores(tmp_path):
    write_files(
        tmp_path,
        {
            "app/train.py": "import torch\nx = torch.zeros(2, device='cuda')\n",
            "run.sh": "export CUDA_VISIBLE_DEVICES=0,1\npython app/train.py\n",
            "requirements.txt": "torch==2.14.0\n",
        },
    )
    out = port_files(tmp_path, "neuron")
    assert "NEURON_RT_VISIBLE_CORES=0-1" in out["run.sh"][0]
    assert "torch-neuronx" in out["requirements.txt"][0]


LIBRARY_CODE = {
    "mini/profiler.py": """
        import torch


        class WorkerProfiler:
            pass


        class CudaProfilerWrapper(WorkerProfiler):
            def __init__(self) -> None:
                import torch.cuda.profiler as cuda_profiler

                self._cuda_profiler = cuda_profiler

            def start(self) -> None:
                self._cuda_profiler.start()

            def annotate(self, name: str):
                return torch.cuda.nvtx.range(name)


        class StepTimer:
            def annotate(self, name: str):
                return torch.cuda.nvtx.range(name)
    """,
    "mini/encoder.py": """
        import torch

        from mini.platforms import current_platform


        class Encoder:
            def __init__(self):
                self.device = current_platform.current_device()
                self.index = torch.cuda.current_device()

            def empty(self, n):
                return torch.zeros(n, device=self.device), torch.zeros(n, device=self.index)
    """,
    "mini/comm.py": """
        import torch


        def init_comm(device):
            if isinstance(device, int):
                device = torch.device(f"cuda:{device}")
            return device


        def init_distributed_environment(world_size: int = -1, backend: str = "nccl"):
            torch.distributed.init_process_group(backend=backend, world_size=world_size)
    """,
}


def test_library_code_keeps_cuda_where_the_library_answers(tmp_path):
    write_files(tmp_path, {**PLATFORMS, **LIBRARY_CODE})
    out = port_files(tmp_path, "neuron")
    # NVTX ranges of a class that drives CUDA's profiler (nsys) stay; others become record_function
    code, findings = out["mini/profiler.py"]
    wrapper, timer = code.split("class StepTimer")
    assert "torch.cuda.nvtx.range(name)" in wrapper and "torch.profiler.record_function(name)" in timer, code
    assert any(f.code == "CUDA008" and not f.applied and "CUDA's profiler" in f.message for f in findings)
    # an index from the project's own device object is that device's; torch.cuda's is CUDA's
    code, _ = out["mini/encoder.py"]
    assert "torch.zeros(n, device=self.device)" in code and 'torch.device("neuron", self.index)' in code, code
    # a device hard-coded where the code has it at hand is kept (BACK009) and not rewritten after all
    code, findings = out["mini/comm.py"]
    assert 'torch.device(f"cuda:{device}")' in code and any(f.code == "BACK009" for f in findings), code
    # a public function's default backend is the package's API
    assert 'backend: str = "nccl"' in code
    assert any(f.code == "DIST001" and not f.applied and "public API" in f.message for f in findings)


def test_cuda_availability_written_out_as_text_stays():
    """vLLM's collect_env: `str(torch.cuda.is_available())` is printed as "Is CUDA available";
    torch.accelerator would say True there on a neuron host. A test still ports."""
    code = 'import torch\ncuda_available_str = str(torch.cuda.is_available())\nprint(f"CUDA: {torch.cuda.is_available()}")\nif torch.cuda.is_available():\n    x = 1\n'
    new, findings = port(code, "neuron")
    assert new.count("torch.cuda.is_available()") == 2 and "if torch.accelerator.is_available():" in new, new
    assert sum(f.code == "CUDA001" and not f.applied and "written out as text" in f.message for f in findings) == 2, [
        f.code for f in findings
    ]


OFFLOAD = """
import torch


class Offload:
    def __init__(self):
        self.s1 = torch.cuda.Stream()

    def unpack(self, t):
        with torch.cuda.stream(self.s1):
            gpu = t.to("cuda", non_blocking=True)
            torch.cuda.synchronize()
        torch.cuda.current_stream().wait_stream(self.s1)
        return gpu


def other(t):
    return t.to("cuda")
"""


def test_the_body_of_a_kept_cuda_stream_stays_cuda():
    """torchtune's activation offloading: the tensors brought back on a CUDA stream that stays
    are CUDA's; a device-generic rewrite there (the same on CUDA) is still made, and outside
    such a stream the device is ported as before."""
    code, findings = port(OFFLOAD, "neuron", path="pkg/offload.py")
    expected = OFFLOAD.replace('return t.to("cuda")', 'return t.to("neuron")').replace(
        "            torch.cuda.synchronize()", "            torch.accelerator.synchronize()"
    )
    assert code == expected, code
    said = [f for f in findings if f.code == "CUDA006" and "its devices stay CUDA's" in f.message]
    assert said and '"cuda"' in said[0].message
    assert "with torch.cuda.stream" in code.splitlines()[said[0].start.line - 1], said


TENSOR_CUDA = """
import torch


@implements_torch_function(torch.Tensor.cpu)
def function_cpu(*args, **kwargs):
    return args[0].to("cpu", *args[1:], **kwargs)


@implements_torch_function(torch.Tensor.cuda)
def function_cuda(*args, **kwargs):
    return args[0].inner.cuda(*args[1:], **kwargs)


def move(x):
    return x.cuda()
"""


def test_an_implementation_of_tensor_cuda_moves_to_cuda():
    """torchao's NF4Tensor registers its own `Tensor.cuda`: `nf4.cuda()` must still reach
    CUDA, so its body stays; other `.cuda()` calls are ported as before."""
    code, findings = port(TENSOR_CUDA, "neuron", path="pkg/nf4.py")
    assert code == TENSOR_CUDA.replace("return x.cuda()", 'return x.to("neuron")'), code
    said = [f for f in findings if f.code == "BACK008" and "torch.Tensor.cuda" in f.message]
    assert said and "fixes not applied there: DEV001" in said[0].message


def test_a_rocm_test_with_hip_second_stays():
    """torchao's `IS_ROCM = torch.cuda.is_available() and torch.version.hip is not None` asks
    about ROCm's build of torch: `torch.accelerator` there changes nothing (hip is None off
    ROCm), an edit no one needs; an availability test alone is ported as before."""
    code = "import torch\n\nIS_ROCM = torch.cuda.is_available() and torch.version.hip is not None\nok = torch.cuda.is_available()\n"
    new, findings = port(code, "neuron", path="pkg/utils.py")
    assert new == code.replace("ok = torch.cuda", "ok = torch.accelerator"), new
    assert any(f.code == "BACK006" and "ROCm" in f.message for f in findings)


# transformers 5.25.0 quantizers: a library (CUDA, XPU and NPU beside each other) refuses to go on
# without CUDA and says it needs a GPU (EETQ, SpQR, VPTQ, HIGGS run CUDA kernels); a warning for
# hosts with no accelerator is a preference, and ports
QUANTIZER = """
import torch

SUPPORTED = ("cuda", "xpu", "npu")


def validate_environment(supports_cpu):
    if not torch.cuda.is_available():
        raise RuntimeError("No GPU found. A GPU is needed for quantization.")
    if not supports_cpu and not torch.cuda.is_available():
        raise RuntimeError("GPU is required to quantize or run quantize model.")


def warn():
    if not torch.cuda.is_available():
        print("No GPU found: unpacking will be slow")
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_library_check_that_demands_a_gpu_stays_cuda(target):
    new, findings = port(QUANTIZER, target)
    assert new.count("if not torch.cuda.is_available():") == 1 and "and not torch.cuda.is_available():" in new, new
    assert new.count("torch.accelerator.is_available()") == 1, new  # the warning's test
    kept = [f for f in findings if f.code == "BACK006"]
    assert len(kept) == 2 and all("a GPU" in f.message for f in kept), [f.message for f in findings]


def test_an_application_that_needs_a_gpu_takes_the_target():
    """No device abstraction (an application's script): its "needs a GPU" asks for an accelerator."""
    code = 'import torch\n\nif not torch.cuda.is_available():\n    raise SystemExit("This script needs a GPU")\n'
    new, findings = port(code, "neuron")
    assert "if not torch.accelerator.is_available():" in new and not any(f.code == "BACK006" for f in findings), new


def test_another_accelerators_case_where_cuda_is_absent_keeps_cudas_test():
    """transformers' serving: `device == "auto" and mps available and not torch.cuda.is_available()`
    picks MPS's kernel; torch.accelerator.is_available() is true on MPS, so it could never be taken."""
    code = (
        "import torch\n\n"
        "def pick(device):\n"
        '    if device == "auto" and torch.backends.mps.is_available() and not torch.cuda.is_available():\n'
        '        return "metal"\n'
        "    if not torch.cuda.is_available():\n"
        '        return "cpu"\n'
    )
    new, findings = port(code, "neuron")
    assert "torch.backends.mps.is_available() and not torch.cuda.is_available():" in new, new
    assert "    if not torch.accelerator.is_available():" in new, new
    assert any(f.code == "BACK006" and "mps's case" in f.message for f in findings)


# accelerate 1.16.0's Megatron-LM module: it imports megatron and asserts "Megatron requires CUDA."
# Its engine's loss tensors and device moves are Megatron's plumbing, which runs only where Megatron does
INTEGRATION = {
    "acc/__init__.py": "",
    "acc/utils/__init__.py": "",
    "acc/utils/megatron_lm.py": """
        import torch

        from .imports import is_megatron_lm_available

        if is_megatron_lm_available():
            from megatron.core import mpu


        class Engine:
            def eval_step(self, loss):
                torch.cuda.empty_cache()
                return torch.tensor(0.0, device=torch.cuda.current_device()) + torch.cuda.FloatTensor([1.0])


        def initialize():
            assert torch.cuda.is_available(), "Megatron requires CUDA."
            mpu.initialize()
    """,
    # the package's own modules: its check speaks of itself, and the rest of it still ports
    "megatron/core/utils.py": """
        import torch

        from megatron.core import mpu


        def init():
            assert torch.cuda.is_available(), "Megatron requires CUDA."
            torch.cuda.empty_cache()
    """,
    "acc/utils/memory.py": """
        import torch

        import megatron


        def clear():
            torch.cuda.empty_cache()
    """,
}


def test_a_module_that_integrates_a_package_its_check_says_needs_cuda_stays(tmp_path):
    write_files(tmp_path, INTEGRATION)
    out = port_files(tmp_path, "neuron")
    code, findings = out["acc/utils/megatron_lm.py"]
    assert code == textwrap.dedent(INTEGRATION["acc/utils/megatron_lm.py"]).lstrip(), code
    assert any(f.code == "BACK006" and "integrates `megatron`" in f.message for f in findings), [
        f.message for f in findings
    ]
    assert "torch.accelerator.empty_cache()" in out["acc/utils/memory.py"][0]
    assert "torch.accelerator.empty_cache()" in out["megatron/core/utils.py"][0]


def test_a_cuda_test_in_front_of_cuda_backend_imports_stays():
    """bitsandbytes 0.50.2 `__init__`, transformers' ExecuTorch exporter: CUDA's backend (a `cuda`
    package: Triton, the CUDA library) is imported only where CUDA is; other imports still port."""
    code = (
        "import torch\n\n"
        "if torch.cuda.is_available():\n"
        "    from .backends.cuda import ops as cuda_ops\n\n"
        "if torch.cuda.is_available():\n"
        "    from executorch.backends.cuda.cuda_backend import CudaBackend\n"
        "    from executorch.backends.cuda.cuda_partitioner import CudaPartitioner\n\n"
        "if torch.cuda.is_available():\n"
        "    from .fast import kernel\n"
    )
    new, findings = port(code, "neuron")
    assert new.count("if torch.cuda.is_available():") == 2 and new.count("torch.accelerator.is_available()") == 1, new
    kept = [f.message for f in findings if f.code == "BACK006"]
    assert len(kept) == 2 and "`.backends.cuda`" in kept[0], kept


def test_a_device_added_to_a_list_leaves_each_lines_comment_on_its_line():
    """bitsandbytes 0.50.2's `supported_torch_devices`: one device a line, each with a comment; the
    target went after the last one and every comment slid down a line ("mps" became "Ascend NPU")."""
    code = (
        "supported = {\n"
        '    "cpu",\n'
        '    "cuda",  # NVIDIA/AMD GPU\n'
        '    "npu",  # Ascend NPU\n'
        '    "mps",  # Apple Silicon\n'
        "}\n"
        "listed = [\n"
        '    "cuda",  # NVIDIA\n'
        '    "xpu",  # Intel GPU\n'
        "]\n"
    )
    new, _ = port(code, "neuron")
    assert '    "npu",  # Ascend NPU\n    "mps",  # Apple Silicon\n    "neuron",\n}' in new, new


def test_devices_named_for_a_kernel_keep_cuda_in_a_library():
    """transformers' hub kernels: `for_devices_and_modes(("cuda", "xpu"), ...)` registers a GPU
    kernel for CUDA and XPU, and `Device(type="cuda", properties=CUDAProperties(...))` describes a
    CUDA device; CUDA's entries stay (the target is not handed a GPU kernel), each with a finding."""
    code = (
        "import torch\n\n"
        'SUPPORTED = ("cuda", "xpu", "npu")\n'
        "MAPPING = {\n"
        '    **for_devices_and_modes(("cuda", "xpu"), (1, 2), rope),\n'
        '    Device(type="cuda", properties=CUDAProperties(min_capability=121)): gdn,\n'
        "}\n"
    )
    new, findings = port(code, "neuron")
    assert '("cuda", "xpu"), (1, 2)' in new and 'Device(type="cuda", properties=' in new, new
    assert 'SUPPORTED = ("cuda", "xpu", "npu", "neuron")' in new, new
    assert any(f.code == "BACK001" and "made or registered for" in f.message for f in findings)
    assert any(f.code == "BACK008" and "`CUDAProperties`" in f.message for f in findings)
    # an application (no device abstraction) ports the pair as devices
    app, _ = port('pairs = for_devices(("cuda", "mps"))\n', "neuron")
    assert '("neuron", "mps")' in app, app


def test_a_library_keeps_cudas_environment_variable_beside_the_other_backends():
    """transformers' enable_full_determinism sets CUDA's, cuBLAS's and Ascend's variables: renaming
    CUDA_LAUNCH_BLOCKING to the target's dropped it on CUDA. An application's still becomes the target's."""
    code = (
        'import os\n\nSUPPORTED = ("cuda", "xpu", "npu")\n\n\n'
        "def enable_full_determinism():\n"
        '    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
        '    os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"\n'
    )
    new, findings = port(code, "neuron")
    assert 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"' in new, new
    assert any(f.code == "DIST003" and not f.applied and "NEURON_LAUNCH_BLOCKING" in f.message for f in findings)
    app, _ = port('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n', "neuron")
    assert "NEURON_LAUNCH_BLOCKING" in app, app


# accelerate 1.16.0's set_module_tensor_to_device: bitsandbytes' parameter and layer classes, told
# apart by name (accelerate does not import bitsandbytes there), are quantized on the devices
# bitsandbytes has (`("cuda", "xpu")`, `.to(0)`): the target is not one of them
FOREIGN = """
import torch

SUPPORTED = ("cuda", "xpu", "npu")


def set_tensor(module, param, param_cls, device, new_value):
    if param.device.type not in ("cuda", "xpu") and param_cls.__name__ in ["Int8Params", "FP4Params"]:
        device = "cpu"
    if param_cls.__name__ == "Int8Params":
        new_value = param_cls(new_value).to(0).to("cpu")
    elif module.__class__.__name__ == "Linear4bit":
        index = torch.device(device).index if torch.device(device).type in ["cuda", "xpu"] else None
    if type(module).__name__ == "Embedding":
        module.weight = module.weight.to(device)
    torch.cuda.empty_cache()
    return new_value
"""


def test_a_branch_for_another_packages_classes_told_apart_by_name_stays():
    new, findings = port(FOREIGN, "neuron")
    assert 'not in ("cuda", "xpu") and param_cls' in new and ".to(0).to(" in new, new
    assert 'type in ["cuda", "xpu"] else None' in new, new
    assert "torch.accelerator.empty_cache()" in new, new  # outside the branches, ported
    kept = [f.message for f in findings if f.code == "BACK008" and "another package's classes" in f.message]
    assert len(kept) == 3 and "`Int8Params`, `FP4Params`" in kept[0], kept


# fla-core 0.6.0 utils/hardware.py
HARDWARE = """
import torch

SUPPORTED = ("cuda", "xpu", "npu")


def torch_device(backend):
    return {'cuda': 'cuda', 'hip': 'cuda', 'xpu': 'xpu'}.get(backend, backend)


if NEW_TORCH:
    def custom_device_ctx(index):
        return torch.cuda.device(index)
else:
    assert device == 'cuda', 'Only cuda device is supported for PyTorch version < 2.4.0.'

    def custom_device_ctx(index):
        return torch.cuda.device(index)
"""


def test_code_past_an_assertion_that_demands_cuda_and_a_platform_table_stay():
    new, findings = port(HARDWARE, "neuron")
    # Triton's backend name -> torch's device: 'hip' (AMD) is torch's 'cuda' too
    assert "{'cuda': 'cuda', 'hip': 'cuda', 'xpu': 'xpu'}" in new, new
    assert any(f.code == "BACK008" and "maps each platform" in f.message for f in findings)
    # past the assertion only CUDA runs; the other branch of the version check still ports
    first, second = new.split("else:")
    assert "torch.cuda.device(index)" not in first and "return torch.cuda.device(index)" in second, new
    assert any(
        f.code == "BACK006" and f.message.startswith("the code after `assert device == 'cuda'`") for f in findings
    )


# bitsandbytes 0.50.2: a backend folder per device; its list of supported devices names them
BACKEND_FOLDERS = {
    "bnb/__init__.py": """
        import torch

        supported_torch_devices = {
            "cpu",
            "cuda",  # NVIDIA/AMD GPU
            "xpu",  # Intel GPU
            "mps",  # Apple Silicon
        }
        FP16_DEVICES = ("cuda", "npu", "hpu")
    """,
    "bnb/backends/__init__.py": "",
    "bnb/backends/cuda/ops.py": "import torch\\n\\n\\ndef gemm(a):\\n    return torch.ops.bnb.gemm(a)\\n",
    "bnb/backends/cpu/ops.py": "import torch\\n\\n\\ndef gemm(a):\\n    return a @ a\\n",
    "bnb/backends/xpu/ops.py": "import torch\\n\\n\\ndef gemm(a):\\n    return a @ a\\n",
    "bnb/backends/mps/ops.py": "import torch\\n\\n\\ndef gemm(a):\\n    return a @ a\\n",
    "bnb/cextension.py": """
        import torch


        class BNBNativeLibrary:
            pass


        class CudaBNBNativeLibrary(BNBNativeLibrary):
            device = "cuda"


        class XpuBNBNativeLibrary(BNBNativeLibrary):
            device = "xpu"
    """,
}


def test_a_list_of_the_devices_with_a_backend_folder_gets_no_target_without_one(tmp_path):
    write_files(tmp_path, BACKEND_FOLDERS)
    out = port_files(tmp_path, "neuron")
    code, findings = out["bnb/__init__.py"]
    assert '"mps",  # Apple Silicon\n}' in code and '"neuron"' not in code.split("FP16")[0], code
    assert any(f.code == "BACK004" and "`bnb/backends/cuda/`" in f.message for f in findings), [
        f.message for f in findings
    ]
    # a list of other devices (npu, hpu have no folder here) is not the backends' list
    assert 'FP16_DEVICES = ("cuda", "npu", "hpu", "neuron")' in code, code


def test_each_devices_part_behind_its_availability_test_gets_a_target_rung_in_a_library():
    """peft 0.21.2's cache clean-up: `if torch.cuda.is_available(): torch.cuda.empty_cache()` then
    `if is_xpu_available(): torch.xpu.empty_cache()`. torch.accelerator in CUDA's test emptied
    XPU's cache twice; CUDA's rung stays and the target's comes after the last one."""
    code = (
        'import torch\n\nSUPPORTED = ("cuda", "xpu", "npu")\n\n\n'
        "def clean():\n"
        "    if torch.cuda.is_available():\n"
        "        torch.cuda.empty_cache()\n\n"
        "    if is_xpu_available():\n"
        "        torch.xpu.empty_cache()\n"
    )
    new, findings = port(code, "neuron")
    assert "    if torch.cuda.is_available():\n        torch.cuda.empty_cache()\n" in new, new
    assert new.endswith(
        "        torch.xpu.empty_cache()\n\n"
        '    if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron":\n'
        "        torch.accelerator.empty_cache()\n"
    ), new


def test_a_branch_that_names_cuda_is_not_copied_for_the_target():
    """bitsandbytes 0.50.2 cextension: `elif torch.cuda.is_available(): BNB_BACKEND = "CUDA"` beside
    `elif torch._C._has_xpu: BNB_BACKEND = "XPU"` (the native library to load): CUDA's branch stays,
    and a copy for the target would load CUDA's library there, so none is written; the finding says so."""
    code = (
        "import torch\n\n"
        'BNB_BACKEND = "CPU"\n'
        "if torch.version.hip:\n"
        '    BNB_BACKEND = "ROCm"\n'
        "elif torch.cuda.is_available():\n"
        '    BNB_BACKEND = "CUDA"\n'
        "elif torch._C._has_xpu:\n"
        '    BNB_BACKEND = "XPU"\n'
    )
    new, findings = port(code, "neuron")
    assert new == code, new
    assert any(f.code == "BACK002" and 'still names CUDA (`"CUDA"`)' in f.message for f in findings), [
        f.message for f in findings
    ]


def test_a_cuda_test_that_only_reports_on_cudas_platform_stays():
    """bitsandbytes' ROCm architecture probe warns under `torch.cuda.is_available()` that ROCm
    detection failed: the message is about CUDA's platform (ROCm runs on torch's cuda device)."""
    code = (
        'import torch\n\nSUPPORTED = ("cuda", "xpu", "npu")\n\n'
        "if torch.cuda.is_available():\n"
        '    logger.warning("ROCm GPU architecture detection failed despite ROCm being available.")\n'
        "if torch.cuda.is_available():\n"
        '    logger.info("ready")\n'
    )
    new, findings = port(code, "neuron")
    assert new.count("if torch.cuda.is_available():") == 1 and "if torch.accelerator.is_available():" in new, new
    assert any(f.code == "BACK006" and "CUDA's platform" in f.message for f in findings)


def test_a_cuda_test_that_only_writes_text_about_cuda_stays():
    """vllm's collect_env: `if ... and not torch.cuda.is_available() and missing: fields[f] = "No
    CUDA"` beside the XPU section: a report of CUDA's absence. Asked of torch.accelerator, an XPU
    host would report 'Could not collect' for CUDA. A block that writes other text is ported."""
    code = (
        'import torch\n\nSUPPORTED = ("cuda", "xpu", "npu")\n\n\n'
        "def pretty(fields, missing):\n"
        "    if not torch.cuda.is_available() and missing:\n"
        "        for field in fields:\n"
        '            fields[field] = "No CUDA"\n'
        '        if fields["cuda_compiled_version"] is None:\n'
        '            fields["cuda_compiled_version"] = "None"\n'
        "    if not torch.cuda.is_available():\n"
        '        fields["state"] = "idle"\n'
    )
    new, findings = port(code, "neuron")
    assert new.count("not torch.cuda.is_available()") == 1 and "not torch.accelerator.is_available()" in new, new
    assert any(f.code == "BACK006" and "text about CUDA" in f.message for f in findings)


def test_a_cuda_string_where_the_same_function_takes_names_stays():
    """vllm's gpu_sync_debug: `_report("cuda", "H2D", ...)` beside `_report("to", "H2D", ...)`
    and `_report("copy_", ...)`: the first argument names a Tensor method, and `"cuda"` is
    `Tensor.cuda`'s name. A function called only with devices there is ported."""
    code = (
        "import torch\n\n\n"
        "def _report(op, direction):\n"
        '    print(f"Tensor.{op}: a {direction} copy")\n\n\n'
        "def checked_to(x):\n"
        '    _report("to", "H2D")\n\n\n'
        "def checked_cuda(x):\n"
        '    _report("cuda", "H2D")\n'
        '    return place(x, "cuda")\n\n\n'
        "def checked_cpu(x):\n"
        '    return place(x, "cpu")\n'
    )
    new, findings = port(code, "neuron")
    assert '_report("cuda", "H2D")' in new and 'place(x, "neuron")' in new, new
    assert any(f.code == "DEV015" for f in findings)


def test_a_cuda_answer_compared_with_one_that_stays_cuda_stays_too():
    """mmcv's filtered_lrelu: `torch.cuda.current_stream(d) != torch.cuda.default_stream(d)`;
    default_stream has no counterpart, so current_stream via torch.accelerator compared a stream of
    one API with one of another. Both stay CUDA's; each has a finding."""
    code = (
        "import torch\n\n\n"
        "def f(x):\n"
        "    if torch.cuda.current_stream(x.device) != torch.cuda.default_stream(x.device):\n"
        '        warn("non-default stream")\n'
        "    torch.cuda.synchronize()\n"
    )
    new, findings = port(code, "neuron")
    assert "torch.cuda.current_stream(x.device) != torch.cuda.default_stream(x.device)" in new, new
    assert "torch.accelerator.synchronize()" in new, new
    assert any("stays CUDA's" in f.message and "current_stream" in f.message for f in findings)


# torchao's AWQ example: a config per device, the fallback an `assert False`
PER_DEVICE_CONFIG = """
import torch

DEVICES = ("cuda", "xpu", "npu")


def configure(device, group_size):
    if device == "cuda":
        config = Int4Config(group_size=group_size)
    elif device == "xpu":
        config = Int4Config(group_size=group_size, packing="plain_int32")
    elif device == "cpu":
        config = CpuInt4Config(group_size=group_size)
    else:
        assert False, "Unsupported device: {}".format(device)
    if device == "cuda":
        other = Int4Config(group_size=group_size)
    elif device == "cpu":
        other = CpuInt4Config(group_size=group_size)
    else:
        assert False, "Unsupported device: {}".format(device)
    return config, other
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_switch_whose_fallback_asserts_false_lists_where_the_code_works(target):
    """`else: assert False, "Unsupported device"` refuses the other devices as a `raise` does:
    CUDA's branch stays and no branch is copied for the target, in a switch over CUDA, XPU and
    the CPU and (in a library) over CUDA and the CPU alone."""
    new, findings = port(PER_DEVICE_CONFIG, target)
    assert new.partition("def configure")[2] == PER_DEVICE_CONFIG.partition("def configure")[2], new
    back = [f for f in findings if f.code == "BACK002" and "whose fallback refuses" in f.message]
    assert len(back) == 2 and not any(f.applied for f in back), [f.message for f in findings]
    # a fallback that does something else still gets the target's branch
    open_ended = PER_DEVICE_CONFIG.replace('assert False, "Unsupported device: {}".format(device)', "config = None", 1)
    new, _ = port(open_ended, target)
    first = new.partition("def configure")[2].partition('    if device == "cuda":\n        other')[0]
    assert first.count("elif device ==") == 3, new


def test_a_programs_cuda_cpu_switch_over_a_key_it_also_switches_over_accelerators_stays(tmp_path):
    """torchao's AWQ example (a program: `--device` from its command line): beside a
    cuda/xpu/cpu switch over `device`, a cuda/cpu switch over the same `device` refusing the
    rest is a device switch too. Made the target's branch, `--device cuda` hit the `assert`
    and the target got CUDA's int4 config; it stays, as the other switch does."""
    program = PER_DEVICE_CONFIG.replace('DEVICES = ("cuda", "xpu", "npu")\n', "")  # no device abstraction
    script = program + '\n\nif __name__ == "__main__":\n    print(configure("cuda", 32))\n'
    write_files(tmp_path, {"example.py": script})
    new, findings = port_files(tmp_path, "neuron")["example.py"]
    assert (
        new.partition("def configure")[2].partition("if __name__")[0]
        == script.partition("def configure")[2].partition("if __name__")[0]
    ), new
    back = [f for f in findings if f.code == "BACK002" and "whose fallback refuses" in f.message]
    assert len(back) == 2, [f.message for f in findings]
    # a cuda/cpu switch over a name the program compares with no other accelerator is ported
    alone = (
        "def configure(device, group_size):\n"
        '    if device == "cuda":\n'
        "        other = Int4Config(group_size=group_size)\n"
        '    elif device == "cpu":\n'
        "        other = CpuInt4Config(group_size=group_size)\n"
        "    else:\n"
        '        assert False, "Unsupported device: {}".format(device)\n'
        "    return other\n\n\n"
        'if __name__ == "__main__":\n'
        '    print(configure("cuda", 32))\n'
    )
    write_files(tmp_path, {"example.py": alone})
    new, _ = port_files(tmp_path, "neuron")["example.py"]
    assert 'if device == "neuron":' in new, new


LISTS_WITH_A_REASON = """
import torch

DEVICES = ("cuda", "xpu", "npu")


def unmask(mask, device):
    # This is required by the memory-efficient attention path.
    # Details: https://github.com/pytorch/pytorch/issues/110213
    if mask.device.type in ["cuda", "xpu"]:
        mask = fix(mask)
    if mask is not None and mask.device.type in ["cuda", "xpu"]:
        # Details: https://github.com/pytorch/pytorch/issues/110213
        mask = fix(mask)
    if device.type not in ["cuda", "xpu", "cpu"]:
        raise RuntimeError(f"MXFP4 requires model on cuda/xpu/cpu, but found {device}")
    if device.type not in ["cuda", "xpu"]:
        raise RuntimeError(f"Async batching requires a device type in {SUPPORTED}")
    return mask
"""


def test_devices_a_library_gives_a_reason_for_keep_cuda_and_get_no_target():
    """transformers' attention-mask workaround for CUDA's and XPU's SDPA kernels (its comment cites
    the PyTorch issue) and MXFP4's kernels (its message spells out cuda/xpu/cpu): CUDA's entry
    stays and the target is not claimed; a list with no such reason still gets the target."""
    new, findings = port(LISTS_WITH_A_REASON, "neuron")
    assert new.count('in ["cuda", "xpu"]:') == 2 and 'not in ["cuda", "xpu", "cpu"]:' in new, new
    assert 'not in ["cuda", "xpu", "neuron"]:' in new, new
    said = [f.message for f in findings if f.code == "BACK001" and not f.applied]
    assert sum("workaround" in m and "issues/110213" in m for m in said) == 2, said
    assert sum("cuda/xpu/cpu" in m for m in said) == 1, said
    # what the code says holds in an application too (torchao's paretoq model copies the workaround)
    app, _ = port(LISTS_WITH_A_REASON.replace('DEVICES = ("cuda", "xpu", "npu")\n', ""), "neuron")
    assert app.count('in ["cuda", "xpu"]:') == 2 and 'not in ["cuda", "xpu", "cpu"]:' in app, app


def test_no_rung_for_a_target_without_a_backend_folder(tmp_path):
    """bitsandbytes' paged-function sync (CUDA's and XPU's rungs) in a project with a backend folder
    per device and none for the target: no rung claims the target."""
    sync = """
        import torch


        def sync():
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            elif hasattr(torch, "xpu") and torch.xpu.is_available():
                torch.xpu.synchronize()
    """
    on_tensor = """
        import torch


        def sync_gpu(t):
            if t.device.type == "cuda":
                torch.cuda.synchronize()
            elif t.device.type == "xpu":
                torch.xpu.synchronize()
    """
    write_files(tmp_path, {**BACKEND_FOLDERS, "bnb/functional.py": sync, "bnb/utils.py": on_tensor})
    out = port_files(tmp_path, "neuron")
    code, findings = out["bnb/functional.py"]
    assert code == textwrap.dedent(sync).lstrip(), code
    # a switch over a tensor's device type handles whatever tensor it is handed: it gets the rung
    assert 'elif t.device.type == "neuron":' in out["bnb/utils.py"][0], out["bnb/utils.py"][0]
    assert any(f.code == "BACK002" and "none for TorchNeuron" in f.message for f in findings), [
        f.message for f in findings
    ]
    # without backend folders, the rung is added
    code, _ = port(
        textwrap.dedent(sync).replace("import torch", 'import torch\nDEVICES = ("cuda", "xpu", "npu")'), "neuron"
    )
    assert 'torch.accelerator.current_accelerator().type == "neuron"' in code, code


def test_accelerator_names_compared_with_or_get_no_target():
    """Lightning's `_get_num_processes`: `accelerator == "cuda" or accelerator == "mps" or
    accelerator == "cpu"` names Lightning's accelerators (it has none called 'neuron'); a device's
    type compared the same way still gets the target."""
    code = (
        "def processes(accelerator, devices, device):\n"
        '    if accelerator == "cuda" or accelerator == "mps" or accelerator == "cpu":\n'
        '        devices = "1"\n'
        '    if device.type == "cuda" or device.type == "xpu":\n'
        "        devices = 2\n"
        "    return devices\n"
    )
    new, _ = port(code, "neuron")
    assert 'if accelerator == "cuda" or accelerator == "mps" or accelerator == "cpu":\n' in new, new
    assert 'device.type == "cuda" or device.type == "xpu" or device.type == "neuron"' in new, new


def test_a_device_a_library_names_for_cuda_stays():
    """bitsandbytes' `FIRST_CUDA_DEVICE = torch.device("cuda", index=0)`: its CUDA library's default
    device, named for CUDA; an application's `cuda_device` is its accelerator, ported."""
    code = (
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n'
        'FIRST_CUDA_DEVICE = torch.device("cuda", index=0)\n'
        'main_device = torch.device("cuda", index=0)\n'
    )
    new, findings = port(code, "neuron")
    assert 'FIRST_CUDA_DEVICE = torch.device("cuda", index=0)' in new, new
    assert 'main_device = torch.device("neuron", index=0)' in new, new
    assert any(f.code == "BACK008" and "`FIRST_CUDA_DEVICE` is named for CUDA" in f.message for f in findings)
    app, _ = port('import torch\n\ncuda_device = torch.device("cuda", 0)\n', "neuron")
    assert 'torch.device("neuron", 0)' in app, app


def test_a_statement_whose_comment_says_only_cuda_is_implemented_stays():
    """peft's ZeRO-3 token collection: `# right now, only CUDA is implemented` over its CUDA device."""
    code = (
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "def collect(weight):\n"
        "    # right now, only CUDA is implemented\n"
        '    device = torch.device("cuda", torch.cuda.current_device())\n'
        '    other = torch.device("cuda", torch.cuda.current_device())\n'
        "    return weight.to(device), other\n"
    )
    new, findings = port(code, "neuron")
    assert '    device = torch.device("cuda", torch.cuda.current_device())\n' in new, new
    assert "    other = torch.device(" in new and 'other = torch.device("cuda", torch.cuda' not in new, new
    assert any(f.code == "BACK006" and "its comment says so" in f.message for f in findings), findings


CLOSURES = """
import torch


class Offload:
    def __init__(self, use_streams):
        self.s1 = torch.cuda.Stream()

        def unpack(t):
            return t.to("cuda", non_blocking=True)

        self.hook = unpack


class Plain:
    def __init__(self):
        def unpack(t):
            return t.to("cuda", non_blocking=True)

        self.hook = unpack
"""


def test_a_closure_of_a_function_that_keeps_cuda_streams_keeps_its_devices():
    """torchtune's activation offloading: `__init__` makes CUDA streams (kept) and defines the
    unpack hooks; the single-stream hook's `.to("cuda")` brought tensors back to the target."""
    code, findings = port(CLOSURES, "neuron", path="pkg/offload.py")
    first, _, second = code.partition("class Plain")
    assert 'return t.to("cuda", non_blocking=True)' in first, code
    assert 'return t.to("neuron", non_blocking=True)' in second, code
    said = [f for f in findings if f.code == "CUDA006" and "which keeps its CUDA streams" in f.message]
    assert len(said) == 1 and "`def unpack` is defined in `__init__`" in said[0].message, [f.message for f in findings]


def test_a_class_named_for_an_nvidia_library_is_left_as_it_is():
    """bitsandbytes' `CUBLAS_Context` (a cuBLAS handle per device from its CUDA library): its
    device switching is cuBLAS's, not a device-generic step the target takes."""
    code = (
        "import torch\n\n\n"
        "class CUBLAS_Context:\n"
        "    def get_context(self, device):\n"
        "        prev = torch.cuda.current_device()\n"
        "        torch.cuda.set_device(device)\n"
        "        torch.cuda.set_device(prev)\n\n\n"
        "class Context:\n"
        "    def get(self):\n"
        "        return torch.cuda.current_device()\n"
    )
    new, findings = port(code, "neuron")
    first, _, second = new.partition("class Context")
    assert "prev = torch.cuda.current_device()" in first and "torch.cuda.set_device(prev)" in first, new
    assert "torch.accelerator.current_device_index()" in second, new
    assert any(f.code == "BACK006" and "NVIDIA's cuBLAS" in f.message for f in findings), findings


def test_cuda_as_the_fallback_of_the_librarys_accelerator_lookup_stays():
    """transformers' torchao integration: `get_current_accelerator() or "cuda"` falls back to CUDA
    only where its own lookup found no accelerator (no device of either name is there)."""
    code = (
        "import torch\n"
        "from .utils import get_current_accelerator\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "def quantize(module):\n"
        '    device = get_current_accelerator() or "cuda"\n'
        '    other = pick() or "cuda"\n'
        "    return module.to(device), other\n"
    )
    new, findings = port(code, "neuron", path="pkg/quant.py")
    assert 'device = get_current_accelerator() or "cuda"' in new, new
    assert 'other = pick() or "neuron"' in new, new
    assert any(f.code == "BACK008" and "finds no accelerator" in f.message for f in findings), findings


def test_an_options_device_choices_keep_cuda_and_get_the_target():
    """torchao's autoround script: `--model_device` defaults to "cuda" with choices cpu and cuda;
    the port made the default neuron and dropped cuda from the choices."""
    code = (
        "import argparse\n\n"
        "p = argparse.ArgumentParser()\n"
        'p.add_argument("--model_device", default="cuda", type=str, choices=["cpu", "cuda"])\n'
        'p.add_argument("--kernel", default="cuda", choices=["cuda", "triton"])\n'
    )
    new, _ = port(code, "neuron")
    assert 'default="neuron", type=str, choices=["cpu", "cuda", "neuron"])' in new, new
    assert 'p.add_argument("--kernel", default="cuda", choices=["cuda", "triton"])' in new, new


def test_dot_cuda_takes_the_spelling_of_its_classs_current_device():
    """ColossalAI's cached embedding: `device=torch.cuda.current_device()` became
    `torch.accelerator.current_accelerator()` while `.cuda()` in the same class became
    `.to("neuron")`: one class, two spellings, and CUDA broken at the second only."""
    code = (
        "import torch\n\n\n"
        "class Cache:\n"
        "    def __init__(self, n):\n"
        "        self.idx = torch.empty(n, device=torch.cuda.current_device(), dtype=torch.long)\n\n"
        "    def load(self, ids):\n"
        '        return ids.cuda(), torch.zeros(2, device="cuda"), self.idx.device.type == "cuda"\n\n\n'
        "def other(x):\n"
        "    return x.cuda()\n"
    )
    new, _ = port(code, "neuron")
    assert (
        "return ids.to(torch.accelerator.current_accelerator()), torch.zeros(2, device=torch.accelerator.current_accelerator())"
        in new
    ), new
    assert 'self.idx.device.type == "neuron"' in new, new  # a comparison is not a placement
    assert 'return x.to("neuron")' in new, new


def test_the_index_of_a_kept_formatted_cuda_device_stays_with_it(tmp_path):
    """Composer's FSDP meta init: `f'cuda:{torch.cuda.current_device()}'` stays (BACK009) while its
    index moved to torch.accelerator.current_device_index(): half a line ported."""
    io = ANSWERS["ds/nvme/io.py"].replace(
        "device=f'cuda:{device_id}')",
        "device=f'cuda:{device_id}')\n\n\n        def here(m):\n            return m.to_empty(device=f'cuda:{torch.cuda.current_device()}')",
    )
    write_files(tmp_path, {**ANSWERS, "ds/nvme/io.py": io})
    code, findings = _port_tree(tmp_path, "neuron")["io.py"]
    assert "device=f'cuda:{torch.cuda.current_device()}')" in code, code
    assert any(f.code == "CUDA002" and "a CUDA device this port keeps" in f.message for f in findings), findings


def test_a_cuda_branch_reading_the_caching_allocators_statistics_by_name_stays(tmp_path):
    """Composer's trainer: `if torch.cuda.is_available(): memory_stats = torch.cuda.memory_stats();
    retries = memory_stats['num_alloc_retries']`: a statistic of CUDA's caching allocator, read by
    name; ported, it ran on any accelerator (a KeyError where the allocator has no such name)."""
    code = (
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "def track(state):\n"
        "    if torch.cuda.is_available():\n"
        "        memory_stats = torch.cuda.memory_stats()\n"
        "        state.retries = memory_stats['num_alloc_retries']\n"
        "    if torch.cuda.is_available():\n"
        "        state.stats = torch.cuda.memory_stats()\n"
    )
    new, findings = port(code, "neuron")
    assert "        memory_stats = torch.cuda.memory_stats()\n        state.retries" in new, new
    first, _, second = new.partition("state.retries")
    assert "    if torch.cuda.is_available():\n        memory_stats" in first, new
    assert "torch.accelerator.memory_stats()" in second, new
    assert any(f.code == "BACK008" for f in findings), findings


KEPT_RUNTIME = """
    import torch


    def do_bench(fn, n):
        fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / n


    def launch(kernel, x):
        torch.cuda.synchronize()
        kernel(x, stream=torch.cuda.current_stream().cuda_stream)


    class Copier:
        def __init__(self):
            self.events = [torch.cuda.Event(blocking=True) for _ in range(2)]

        def copy(self, x):
            current = torch.cuda.current_stream(x.device)
            return current

        def size(self):
            return torch.cuda.device_count()


    def timed(fn):
        torch.cuda.synchronize()
        return fn()
"""


def test_a_library_function_that_keeps_cuda_runtime_is_left_whole(tmp_path):
    """In a project with a device abstraction, a function that keeps CUDA events (a Triton
    benchmark), a raw CUDA stream handle (`.cuda_stream` for a CuTe-DSL launch), or a method
    of a class that keeps CUDA events making stream calls, is CUDA's own: left byte for byte,
    one BACK006 finding each; the rest of the module is ported as before."""
    write_files(
        tmp_path, {**{k: v for k, v in ABSTRACTION.items() if k.startswith("cm/")}, "cm/bench.py": KEPT_RUNTIME}
    )
    code, findings = _port_tree(tmp_path, "neuron")["bench.py"]
    original = textwrap.dedent(KEPT_RUNTIME).lstrip()
    head, tail = code.split("    def size")
    assert head == original.split("    def size")[0], head
    assert "torch.accelerator.device_count()" in tail and "torch.accelerator.synchronize()" in tail, tail
    said = {f.message.split("`")[1] for f in findings if f.code == "BACK006"}
    assert said == {"def do_bench", "def launch", "def __init__", "def copy"}, said
    kept = next(f for f in findings if f.code == "BACK006" and "def do_bench" in f.message)
    assert "torch.cuda.Event" in kept.message and "CUDA003" in kept.message, kept.message


def test_an_application_function_that_keeps_cuda_events_is_ported_as_before(tmp_path):
    """Without a device abstraction and without a CUDA-only package the module needs, a
    function's CUDA events do not keep it (the rest is ported, the events reported)."""
    write_files(tmp_path, {"app/bench.py": KEPT_RUNTIME})
    code, findings = _port_tree(tmp_path, "neuron")["bench.py"]
    # its timing code is ported (the events reported); a raw CUDA stream handle is CUDA's anywhere
    assert code.count("torch.accelerator.synchronize()") == 3, code
    assert "torch.cuda.current_stream().cuda_stream" in code, code
    assert {f.message.split("`")[1] for f in findings if f.code == "BACK006"} == {"def launch"}


REFUSES_OTHER_DEVICES = """
    import torch

    IS_NVIDIA = torch.version.hip is None


    def check_device(device):
        if not IS_NVIDIA or device.type != "cuda":
            raise RuntimeError("needs an NVIDIA GPU of compute capability 8.0 or newer")
        index = device.index if device.index is not None else torch.cuda.current_device()
        return index


    def where(device):
        return device.index if device.index is not None else torch.cuda.current_device()
"""


def test_the_code_past_a_raise_for_every_device_but_cuda_is_left(tmp_path):
    """fla's `_check_cp_device`: past `if not IS_NVIDIA or device.type != "cuda": raise ...`
    only CUDA runs; in a library it stays as it is (BACK006), the rest is ported."""
    write_files(
        tmp_path,
        {**{k: v for k, v in ABSTRACTION.items() if k.startswith("cm/")}, "cm/check.py": REFUSES_OTHER_DEVICES},
    )
    code, findings = _port_tree(tmp_path, "neuron")["check.py"]
    head, tail = code.split("def where")
    assert head == textwrap.dedent(REFUSES_OTHER_DEVICES).lstrip().split("def where")[0], head
    assert "torch.accelerator.current_device_index()" in tail, tail
    assert any(f.code == "BACK006" and f.message.startswith("the code after `if not IS_NVIDIA") for f in findings)


def test_a_triton_module_function_that_keeps_cuda_events_is_left_whole(tmp_path):
    """torchao's `do_bench_triton`: no device abstraction, but the module cannot be imported
    without Triton (GUARD004's evidence): its CUDA-event benchmark is CUDA's own."""
    source = "import triton\n" + textwrap.dedent(KEPT_RUNTIME).lstrip().replace(
        "    kernel(x, stream=", "    triton.testing.do_bench(kernel)\n    kernel(x, stream="
    )
    write_files(tmp_path, {"app/bench.py": source})
    code, findings = _port_tree(tmp_path, "neuron")["bench.py"]
    assert code.split("def timed")[0].split("    def size")[0] == source.split("    def size")[0], code
    said = {f.message.split("`")[1] for f in findings if f.code == "BACK006"}
    assert {"def do_bench", "def __init__", "def copy"} <= said, said  # (`launch` runs Triton: GUARD003's)


HANDED_STREAM = """
    import torch


    def receive(group, metas, device):
        stream = torch.cuda.current_stream()
        for m in metas:
            weight = torch.empty(m.shape, dtype=m.dtype, device=device)
            group.broadcast(weight, src=0, stream=stream)


    def keep_alive(tensors):
        stream = torch.cuda.current_stream()
        for t in tensors:
            t.record_stream(stream)
"""


def test_a_library_function_that_hands_cuda_stream_to_other_code_is_left_whole(tmp_path):
    """vLLM's NCCL weight-transfer engines hand `torch.cuda.current_stream()` to their NCCL
    communicator: that code takes a CUDA stream, so the function is CUDA's own (BACK006).
    torch's own stream methods (`record_stream`) are no hand-over: ported."""
    write_files(
        tmp_path, {**{k: v for k, v in ABSTRACTION.items() if k.startswith("cm/")}, "cm/engine.py": HANDED_STREAM}
    )
    code, findings = _port_tree(tmp_path, "neuron")["engine.py"]
    head, tail = code.split("def keep_alive")
    assert head == textwrap.dedent(HANDED_STREAM).lstrip().split("def keep_alive")[0], head
    assert "torch.accelerator.current_stream()" in tail, tail
    kept = [f for f in findings if f.code == "BACK006"]
    assert len(kept) == 1 and "group.broadcast" in kept[0].message, kept


def test_a_module_that_replaces_a_cuda_api_keeps_what_it_wraps():
    """vLLM's torch_utils saves `torch.cuda.set_stream` and installs a wrapper in its place:
    what it saves to call on is CUDA's own, so it stays (reported); the module's other calls
    are ported as before."""
    source = textwrap.dedent(
        """
        import torch

        prev_set_stream = torch.cuda.set_stream


        def _patched_set_stream(stream):
            prev_set_stream(stream)


        torch.cuda.set_stream = _patched_set_stream


        def use(s):
            torch.cuda.set_stream(s)
        """
    ).lstrip()
    code, findings = port(source, "neuron", path="pkg/torch_utils.py")
    assert "prev_set_stream = torch.cuda.set_stream\n" in code and "torch.cuda.set_stream = _patched" in code
    assert "    torch.accelerator.set_stream(s)" in code, code
    assert any(f.code == "CUDA006" and "replaces it" in f.message for f in findings)


def test_a_cuda_branch_calling_a_function_that_reads_the_allocators_statistics_stays():
    """Composer's trainer: `if not oom and torch.cuda.is_available(): n = _update_thrashes(...)`,
    where `_update_thrashes` reads `torch.cuda.memory_stats()['num_alloc_retries']`: the branch
    reads CUDA's caching allocator through the call; ported, it ran on any accelerator."""
    code = (
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "def _update_thrashes(state, n):\n"
        "    stats = torch.cuda.memory_stats()\n"
        "    return stats['num_alloc_retries'] - n\n\n\n"
        "def _reset(state):\n"
        "    torch.cuda.empty_cache()\n\n\n"
        "def train(state, oom):\n"
        "    if not oom and torch.cuda.is_available():\n"
        "        state.n = _update_thrashes(state, state.n)\n"
        "    if torch.cuda.is_available():\n"
        "        _reset(state)\n"
    )
    new, findings = port(code, "neuron")
    assert "    if not oom and torch.cuda.is_available():\n        state.n = _update_thrashes" in new, new
    assert "    if torch.accelerator.is_available():\n        _reset(state)" in new, new
    assert any(f.code == "BACK008" and "if not oom and" in f.message for f in findings), findings


def test_a_function_named_for_cuda_that_reports_cudas_state_in_text_stays():
    """ColossalAI's Ray worker: `def log_cuda_info(scope)` logs `f"cuda current_device:
    {torch.cuda.current_device()}"` under `if torch.cuda.is_available()`; through torch.accelerator
    the line asked another device and still said 'cuda'."""
    code = (
        "import logging\n\n"
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n'
        "logger = logging.getLogger(__name__)\n\n\n"
        "def log_cuda_info(scope):\n"
        "    if torch.cuda.is_available():\n"
        '        logger.info(f"{scope}: cuda current_device: {torch.cuda.current_device()}")\n'
        "    else:\n"
        '        logger.info(f"{scope}: cuda is not available!")\n\n\n'
        "def log_info(scope):\n"
        '    logger.info(f"{scope}: device {torch.cuda.current_device()}")\n'
    )
    new, findings = port(code, "neuron")
    assert (
        '    if torch.cuda.is_available():\n        logger.info(f"{scope}: cuda current_device: {torch.cuda.current_device()}")'
        in new
    ), new
    assert 'logger.info(f"{scope}: device {torch.accelerator.current_device_index()}")' in new, new
    assert any(f.code == "BACK006" and "log_cuda_info" in f.message for f in findings), findings


def test_a_branch_over_bytes_that_name_cuda_stays():
    """ColossalAI's p2p: `if b"cuda" in buf:` patches the device index of a pickled CUDA
    tensor with `torch.cuda.current_device()`; only CUDA pickles reach it."""
    code = (
        "import io\n\n"
        "import torch\n\n\n"
        "def to_object(tensor):\n"
        "    buf = tensor.numpy().tobytes()\n"
        '    if b"cuda" in buf:\n'
        "        index = torch.cuda.current_device()\n"
        '        buf = buf.replace(b"cuda:0", b"cuda:%d" % index)\n'
        "    torch.cuda.synchronize()\n"
        "    return torch.load(io.BytesIO(buf))\n"
    )
    new, findings = port(code, "neuron")
    assert "        index = torch.cuda.current_device()\n" in new, new
    assert "    torch.accelerator.synchronize()\n" in new, new
    assert any(f.code == "BACK006" and "CUDA's serialized form" in f.message for f in findings), findings


def test_a_device_string_in_a_method_of_a_class_of_tensors_is_reported_with_their_device():
    """ColossalAI's legacy InferBatch.filter: the filtered batch's index tensors were pinned to
    'neuron' while the batch's own tensors (`nopad_b_seq_len: torch.Tensor`, read in the method)
    carry the device: it stays, reported with the device at hand (BACK009)."""
    code = (
        "from dataclasses import dataclass\n\n"
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "@dataclass\n"
        "class Batch:\n"
        "    size: int\n"
        "    seq_len: torch.Tensor\n\n"
        "    def filter(self, ids):\n"
        '        seq_len = torch.zeros(len(ids), dtype=torch.int32, device="cuda")\n'
        "        seq_len[:] = self.seq_len[ids]\n"
        "        return seq_len\n\n"
        "    def empty(self):\n"
        '        return torch.zeros(self.size, device="cuda")\n'
    )
    new, findings = port(code, "neuron")
    assert 'seq_len = torch.zeros(len(ids), dtype=torch.int32, device="cuda")' in new, new
    assert 'return torch.zeros(self.size, device="neuron")' in new, new
    assert any(f.code == "BACK009" and "`self.seq_len.device`" in f.message for f in findings), findings


def test_cudas_current_index_passed_where_the_callee_makes_a_cuda_device_of_it_stays(tmp_path):
    """ColossalAI's sharded optimizer: `move_inline(p.grad, torch.cuda.current_device())`, where
    `move_inline(t, target_device)` makes `torch.device(f"cuda:{target_device}")` of an int (kept,
    BACK009): through torch.accelerator the index changed source while the device stayed CUDA."""
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/devs.py": SWITCH_KEY["pkg/devs.py"],
            "pkg/tensor_utils.py": """
                import torch


                def move_inline(t, target_device):
                    if not isinstance(target_device, torch.device):
                        target_device = torch.device(f"cuda:{target_device}")
                    t.data = t.data.to(target_device)
            """,
            "pkg/optim.py": """
                import torch

                from pkg.tensor_utils import move_inline


                def step(p):
                    move_inline(p.grad, torch.cuda.current_device())
                    move_inline(p.data, target_device=torch.cuda.current_device())
                    return torch.zeros(1, device=torch.cuda.current_device())
            """,
        },
    )
    code, findings = port_files(tmp_path, "neuron")["pkg/optim.py"]
    assert "move_inline(p.grad, torch.cuda.current_device())" in code, code
    assert "move_inline(p.data, target_device=torch.cuda.current_device())" in code, code
    assert "torch.zeros(1, device=torch.accelerator.current_accelerator())" in code, code
    assert any(f.code == "CUDA002" and 'makes `f"cuda:{target_device}"`' in f.message for f in findings), findings


SEED_MANAGER = """
import torch


class SeedManager:
    def __init__(self):
        self._states = {}

    def set_mode(self, mode):
        torch.cuda.set_rng_state(self._states[mode])

    def add_seed(self, mode, seed):
        current_state = torch.cuda.get_rng_state()
        torch.cuda.manual_seed(seed)
        self._states[mode] = torch.cuda.get_rng_state()
        torch.cuda.set_rng_state(current_state)


def seed_all(seed):
    torch.cuda.manual_seed(seed)


torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
"""


def test_a_seed_in_code_that_saves_and_restores_cudas_generator_seeds_the_devices_generator_alone():
    """ColossalAI's legacy seed manager (`add_seed`: save CUDA's generator state, seed it, keep
    the seeded state, restore the saved one): `torch.manual_seed` in the CUDA seed's place also
    reseeded the CPU generator, which the code never restores, so every tensor-parallel rank's
    CPU generator took that rank's seed. The device's own seed takes its place; where the target
    has no port of the state calls (tpu's `get_rng_state`), the class's generator calls stay
    together instead of saving one generator and restoring another."""
    new, findings = port(SEED_MANAGER, "neuron")
    assert "        torch.neuron.manual_seed(seed)\n" in new, new
    assert "        current_state = torch.neuron.get_rng_state()\n" in new, new
    assert "def seed_all(seed):\n    torch.manual_seed(seed)\n" in new, new  # no generator state there
    assert new.endswith("\ntorch.manual_seed(0)\n"), new  # nor in the module's own statements
    tpu, findings = port(SEED_MANAGER, "tpu")
    assert "torch.tpu" not in tpu and "        torch.cuda.manual_seed(seed)\n" in tpu, tpu
    assert "        torch.cuda.set_rng_state(current_state)\n" in tpu, tpu
    assert any(
        f.code == "CUDA004" and "`torch.cuda.set_rng_state()` stays" in f.message and "get_rng_state" in f.message
        for f in findings
    ), findings
    assert "def seed_all(seed):\n    torch.manual_seed(seed)\n" in tpu, tpu


def test_an_assert_that_also_accepts_another_accelerator_lists_devices_whatever_its_message_says():
    """ColossalAI's `Chunk.shard_move`: `assert device.type == "cuda" or device.type == "npu",
    "each chunk should first be moved to CUDA"` four lines above the same test in an `if`: the
    `if` got the target, the assert (kept for its message) refused it."""
    code = (
        "def shard_move(device, synced):\n"
        "    if not synced:\n"
        '        assert device.type == "cuda" or device.type == "npu", "each chunk should first be moved to CUDA"\n'
        "        return 1\n"
        '    if device.type == "cuda" or device.type == "npu":\n'
        "        return 2\n"
        "    return 3\n"
    )
    new, findings = port(code, "neuron")
    assert 'assert device.type == "cuda" or device.type == "npu" or device.type == "neuron", "each' in new, new
    assert 'if device.type == "cuda" or device.type == "npu" or device.type == "neuron":' in new, new
    assert not any(f.code == "BACK006" for f in findings), findings
    # one that demands CUDA still does
    demands = 'def f(device):\n    assert device.type == "cuda", "only CUDA is supported"\n    return 1\n'
    assert port(demands, "neuron")[0] == demands


# ColossalAI 0.5.0 `legacy/amp/torch_amp/_grad_scaler.py` (torch's GradScaler, modified), in a
# project with an accelerator class per device
GRAD_SCALER = {
    "pkg/__init__.py": "",
    "pkg/accelerator.py": """
        class BaseAccelerator:
            pass


        class CudaAccelerator(BaseAccelerator):
            pass


        class NpuAccelerator(BaseAccelerator):
            pass
    """,
    "pkg/scaler.py": """
        import warnings

        import torch


        class GradScaler:
            def __init__(self, enabled=True):
                if enabled and not torch.cuda.is_available():
                    warnings.warn("GradScaler is enabled, but CUDA is not available.  Disabling.")
                    self._enabled = False
                else:
                    self._enabled = enabled

            def scale(self, outputs):
                if not self._enabled:
                    return outputs
                assert outputs.is_cuda or outputs.device.type == "xla"
                return outputs * 2.0
    """,
}


def test_the_test_that_turns_on_a_class_whose_asserts_only_cuda_passes_stays_cudas(tmp_path):
    """ColossalAI's legacy `GradScaler.__init__` turns itself off where `torch.cuda.is_available()`
    is false; its `scale` asserts `outputs.is_cuda or outputs.device.type == "xla"` (kept, BACK008).
    `torch.accelerator.is_available()` there turned the scaler on for the target, where its first
    `scale` fails that assert: the test stays CUDA's (BACK006), and the scaler stays off there, as
    it was. On xla, which the assert accepts, the test is ported."""
    write_files(tmp_path, GRAD_SCALER)
    code, findings = port_files(tmp_path, "neuron")["pkg/scaler.py"]
    assert "        if enabled and not torch.cuda.is_available():\n" in code, code
    assert 'assert outputs.is_cuda or outputs.device.type == "xla"\n' in code, code
    assert any(f.code == "BACK006" and "GradScaler" in f.message for f in findings), findings
    xla, _ = port_files(tmp_path, "xla")["pkg/scaler.py"]
    assert "        if enabled and not torch.cuda.is_available():\n" not in xla, xla


def test_a_registry_of_backends_written_with_keywords_is_reported_where_the_target_goes():
    """ColossalAI's `_ACCELERATOR_MAPPING = OrderedDict(cuda=CudaAccelerator, npu=NpuAccelerator,
    cpu=CpuAccelerator)`: the registry `get_accelerator()` builds from has no entry for the target
    (so there it answers the CPU's accelerator): the same finding as for a dict literal (BACK004)
    says where the target's backend is registered; nothing changes. `dict(cuda=cuda_memory,
    cpu=cpu_memory)` (`Chunk.memory_usage`) holds numbers, not backends: no finding."""
    code = (
        "from collections import OrderedDict\n"
        "\n"
        "from .cuda_accelerator import CudaAccelerator\n"
        "from .cpu_accelerator import CpuAccelerator\n"
        "from .npu_accelerator import NpuAccelerator\n"
        "\n"
        "_ACCELERATOR_MAPPING = OrderedDict(cuda=CudaAccelerator, npu=NpuAccelerator, cpu=CpuAccelerator)\n"
        "_LITERAL = {'cuda': CudaAccelerator, 'cpu': CpuAccelerator}\n"
        "_SIZES = dict(cuda=8, cpu=1)\n"
        "\n"
        "\n"
        "def memory_usage(cuda_memory, cpu_memory):\n"
        "    return dict(cuda=cuda_memory, cpu=cpu_memory)\n"
    )
    new, findings = port(code, "neuron", path="pkg/accelerator/api.py")
    assert new == code, new
    registries = [f for f in findings if f.code == "BACK004"]
    assert len(registries) == 2, findings
    assert any("cuda, npu, cpu" in f.message and "`CudaAccelerator`" in f.message for f in registries), registries


def test_a_device_handed_to_the_name_a_kept_assert_checks_stays_with_it():
    """ColossalAI's legacy `ZeroContextConfig.__post_init__` asserts `self.target_device.type ==
    "cuda"` ("... should be located in cuda", kept: its message says CUDA), and
    `no_shard_zero_context` hands it `target_device=torch.device("cuda",
    torch.cuda.current_device())`: ported alone, the neuron device failed the assert. The two go
    together (BACK008), as an allocation and the kept test that reads its device."""
    code = (
        "import contextlib\n"
        "from dataclasses import dataclass\n\n"
        "import torch\n\n"
        'DEVICES = ("cuda", "xpu", "npu")\n\n\n'
        "@dataclass\n"
        "class ZeroConfig:\n"
        "    target_device: torch.device\n\n"
        "    def __post_init__(self):\n"
        '        assert self.target_device.type == "cuda", "Replicated parameters should be located in cuda."\n\n\n'
        "class Manager:\n"
        "    @contextlib.contextmanager\n"
        "    def hijack(self, **kwargs):\n"
        "        self.config = ZeroConfig(**kwargs)\n"
        "        yield\n\n\n"
        "def no_shard_context():\n"
        '    return Manager().hijack(target_device=torch.device("cuda", torch.cuda.current_device()))\n\n\n'
        "def move(buffer):\n"
        '    return buffer.to(device="cuda")\n'
    )
    new, findings = port(code, "neuron")
    assert 'hijack(target_device=torch.device("cuda", torch.cuda.current_device()))' in new, new
    assert 'assert self.target_device.type == "cuda"' in new, new
    assert 'buffer.to(device="neuron")' in new, new  # a device no kept check reads is ported
    assert any(f.code == "BACK008" and "sets `target_device`" in f.message for f in findings), findings


def test_another_accelerator_filed_under_cudas_name_files_the_target_there_too():
    """ColossalAI's `ChunkManager.add_extern_static_tensor`: `if device_type == "npu":
    device_type = "cuda"` files NPU memory under the "cuda" key of `total_mem` ("cpu", "cuda");
    as `device_type = "neuron"` it named a key nothing holds (a KeyError on npu and on neuron)."""
    code = (
        "class ChunkManager:\n"
        "    def __init__(self):\n"
        '        self.total_mem = {"cpu": 0, "cuda": 0}\n\n'
        "    def add(self, tensor):\n"
        "        device_type = tensor.device.type\n"
        '        if device_type == "npu":\n'
        '            device_type = "cuda"\n'
        "        self.total_mem[device_type] += tensor.numel()\n"
    )
    new, findings = port(code, "neuron")
    assert '        if device_type == "npu" or device_type == "neuron":\n            device_type = "cuda"\n' in new, new
    assert any(f.code == "BACK001" and "files 'npu' under CUDA's name" in f.message for f in findings), findings
