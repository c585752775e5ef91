"""Library hunks of the sixth wave (issue 21): an autocast device type that is no placement,
a device test whose else-branch is the generic fallback, CUDA-only code known from its kernels.
Each case is modelled on a hunk of a real library (torchao 0.18.0, mmcv 2.2.0, bitsandbytes
0.50.2, vllm 0.34.0) that an independent reviewer judged wrong or noisy."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port, port_files, write_files


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# torchao prototype/qat/mx.py, prototype/parq/optim/parq.py: `custom_fwd(device_type="cuda")`
# names the autocast state the wrapper reads (torch.get_autocast_dtype / is_autocast_enabled),
# not where the function runs: with "cuda" it already runs on the target, and "neuron" is no
# device type on a CUDA or CPU host without torch-neuronx, so the library would raise there
AUTOCAST_STATE = {
    "lib/__init__.py": "",
    "lib/qat.py": """
        from functools import partial

        import torch


        def amp_custom_fwd(cast_inputs=None):
            return partial(torch.amp.custom_fwd, device_type="cuda", cast_inputs=cast_inputs)


        class _Quantize(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cuda")
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @torch.amp.custom_bwd(device_type="cuda")
            def backward(ctx, g):
                return g * 2
    """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_library_custom_fwd_device_type_stays_reported(tmp_path, target):
    write_files(tmp_path, AUTOCAST_STATE)
    new, findings = port_files(tmp_path, target)["lib/qat.py"]
    assert new == textwrap.dedent(AUTOCAST_STATE["lib/qat.py"]).lstrip()
    said = [f for f in findings if f.code == "DEV017"]
    assert len(said) == 3 and all("autocast" in f.message for f in said)


def test_a_script_custom_fwd_follows_the_program_to_the_target():
    # a script ported for the target runs its autocast there: its custom_fwd reads that state
    code = textwrap.dedent(AUTOCAST_STATE["lib/qat.py"])
    new, findings = port(code, "neuron")
    assert new.count('device_type="neuron"') == 3 and not [f for f in findings if f.code == "DEV017"]


# torchao prototype/common/triton/matmul_perf_model.py: Triton's matmul performance model asks
# `nvsmi` (triton.testing) for the clock rate and falls back to pynvml: both NVIDIA's, so the
# `try` is no path for another device, and the model stays CUDA's (GUARD003)
TRITON_MODEL = """
import torch

from triton import cdiv
from triton.testing import nvsmi


def get_clock_rate_in_khz():
    try:
        return nvsmi(["clocks.max.sm"])[0] * 1e3
    except FileNotFoundError:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetMaxClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM) * 1e3


def get_tflops(device):
    return get_clock_rate_in_khz() * torch.cuda.get_device_capability(device)[0]


def estimate_matmul_time(M, N, BLOCK_M, BLOCK_N):
    device = torch.cuda.current_device()
    return get_tflops(device) * cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_model_whose_fallback_is_nvidia_too_stays_cuda_only(target):
    new, findings = port(TRITON_MODEL, target)
    assert "torch.cuda.current_device()" in new
    assert any(f.code == "GUARD003" and "estimate_matmul_time" in f.message for f in findings)


def test_a_fallback_that_is_no_cuda_only_code_is_another_path():
    # Triton imported where it is used, not at the module's top (a module that needs it at import
    # is CUDA's whole, GUARD004): only the `try` decides, and its fallback is another path
    code = (
        TRITON_MODEL.replace("from triton import cdiv\nfrom triton.testing import nvsmi\n", "")
        .replace("    try:\n", "    from triton.testing import nvsmi\n\n    try:\n", 1)
        .replace(
            "import pynvml\n\n        pynvml.nvmlInit()\n        return pynvml.nvmlDeviceGetMaxClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM) * 1e3",
            "return 1.0",
        )
        .replace("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)", "(M // BLOCK_M) * (N // BLOCK_N)")
    )
    assert "pynvml" not in code and "from triton.testing import nvsmi\n\n    try:" in code, code
    new, _ = port(code, "neuron")
    assert "torch.cuda.current_device()" not in new


# mmcv ops/conv2d_gradfix.py: `_conv2d_gradfix` is called only when `_should_use_custom_op`
# passed, which returns False off CUDA (kept, GUARD001): its capability query only ever runs on
# CUDA, and a `torch.cuda.is_available() and` before it is always true there (no GUARD002)
GRADFIX = """
import torch


def conv2d(input, weight):
    if _should_use_custom_op(input):
        return _conv2d_gradfix(weight.shape)(input, weight)
    return torch.nn.functional.conv2d(input, weight)


def _should_use_custom_op(input):
    assert isinstance(input, torch.Tensor)
    if not torch.backends.cudnn.enabled:
        return False
    if input.device.type != "cuda":
        return False
    return True


def _conv2d_gradfix(weight_shape):
    class Conv2d(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight):
            if weight_shape[2:] == (1, 1) and torch.cuda.get_device_capability(input.device) < (8, 0):
                return input @ weight
            return torch.nn.functional.conv2d(input, weight)

    return Conv2d.apply
"""


def test_a_capability_query_in_a_function_called_only_on_cuda_gets_no_guard():
    new, findings = port(GRADFIX, "neuron")
    assert "is_available" not in new and not [f for f in findings if f.code == "GUARD002"]
    assert 'input.device.type != "cuda"' in new


def test_a_capability_query_in_a_function_called_anywhere_gets_its_guard():
    code = GRADFIX.replace(
        "    return torch.nn.functional.conv2d(input, weight)\n\n\ndef _should",
        "    return _conv2d_gradfix(weight.shape)(input, weight)\n\n\ndef _should",
        1,
    )
    assert code != GRADFIX
    new, findings = port(code, "neuron")
    assert "torch.cuda.is_available() and torch.cuda.get_device_capability" in new


# vllm requirements/kv_connectors.txt, kv_connectors_cu12.txt: beside a family of files per
# device (cuda.txt, rocm.txt, cpu.txt), a file named for a CUDA release (`_cu12`), or one that
# requires a wheel built for one CUDA release (`cupy-cuda13x`), is a CUDA build's: its CUDA
# wheels stay, reported (DEP005), and the target's requirements go in a file of their own
KV_CONNECTORS = {
    "requirements/cuda.txt": "torch == 2.9.0\n",
    "requirements/rocm.txt": "torch == 2.9.0\n",
    "requirements/cpu.txt": "torch == 2.9.0\n",
    "requirements/common.txt": "numpy\nflash-attn\n",
    "requirements/kv_connectors.txt": "lmcache >= 0.5.6\ncupy-cuda13x != 14.1.0\nnixl == 1.5.2\n",
    "requirements/kv_connectors_cu12.txt": "lmcache == 0.5.6\ncuda-python >= 12, < 13\ncupy-cuda12x != 14.1.0\n",
    "app/__init__.py": "",
    "app/main.py": "import torch\n\nx = torch.ones(2).cuda()\n",
}


def test_a_cuda_builds_requirements_beside_a_device_family_keep_their_cuda_wheels(tmp_path):
    write_files(tmp_path, KV_CONNECTORS)
    ported = port_files(tmp_path, "neuron")
    for name in ("requirements/kv_connectors.txt", "requirements/kv_connectors_cu12.txt"):
        new, findings = ported[name]
        assert new == KV_CONNECTORS[name], name
        assert any(f.code == "DEP005" and "CUDA" in f.message for f in findings), name
    # a file of the folder that is no CUDA build's still loses the wheel nothing imports
    assert "flash-attn" not in ported["requirements/common.txt"][0]


# torchao _models/sam2/modeling/position_encoding.py: CUDA takes `repeat` on complex tensors,
# every other device the expand + flatten path (the comment: repeat on complex may not be
# supported off CUDA). In a package, a device test whose `else` is such a generic fallback keeps
# CUDA's branch: the target takes the fallback, as every other device does (DEV004, reported)
ROTARY = {
    "sam/__init__.py": "",
    "sam/rope.py": """
        import torch


        def apply_rotary_enc(xk_, freqs_cis, r):
            if freqs_cis.is_cuda:
                freqs_cis = freqs_cis.repeat(*([1] * (freqs_cis.ndim - 2)), r, 1)
            else:
                # torch.repeat on complex numbers may not be supported on non-CUDA devices
                freqs_cis = freqs_cis.unsqueeze(2).expand(-1, -1, r, -1, -1).flatten(2, 3)
            return torch.view_as_real(xk_ * freqs_cis).flatten(3)


        def place(x):
            if x.is_cuda:
                torch.cuda.synchronize()
            return x
    """,
}


def test_a_cuda_branch_beside_the_generic_fallback_stays_in_a_package(tmp_path):
    write_files(tmp_path, ROTARY)
    new, findings = port_files(tmp_path, "neuron")["sam/rope.py"]
    assert "if freqs_cis.is_cuda:" in new
    assert "if x.is_neuron:" in new  # no else: the target's own branch, as before
    (said,) = [f for f in findings if f.code == "DEV004" and "freqs_cis" in f.message]
    assert "else" in said.message and said.applicability is not None


def test_a_scripts_cuda_branch_still_becomes_the_targets():
    code = textwrap.dedent(ROTARY["sam/rope.py"])
    new, _ = port(code, "neuron")
    assert "if freqs_cis.is_neuron:" in new


# torchao prototype/awq/example.py: an option's help quotes its default; where the port changes
# the default, the help says the new one (it said "Default is 'cuda'" beside default="neuron")
def test_an_options_help_follows_its_ported_default():
    code = textwrap.dedent("""
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", type=str, default="cuda", help="Device to run on. Default is 'cuda'.")
        parser.add_argument("--precision", default="bfloat16", help="Precision. Default is 'cuda'-free 'bfloat16'.")
        args = parser.parse_args()
        x = __import__("torch").ones(2).to(args.device)
    """)
    new, _ = port(code, "neuron")
    assert """default="neuron", help="Device to run on. Default is 'neuron'.\"""" in new
    assert "Default is 'cuda'-free" in new  # not its default: left alone


# bitsandbytes functional.py: `torch.cuda.device_count() > 1` picks CUDA's own `_cuda_device_of`
# (`torch.cuda.device_of`, which has no port and stays) over a stand-in of the same name: the
# test asks about CUDA itself and stays (BACK006)
DEVICE_OF = """
import contextlib

import torch

if torch.cuda.device_count() > 1:

    def _cuda_device_of(a: torch.Tensor):
        return torch.cuda.device_of(a)
else:

    def _cuda_device_of(a: torch.Tensor):
        return contextlib.nullcontext()


def sync():
    if torch.cuda.device_count() > 1:
        torch.cuda.synchronize()
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_test_that_picks_cudas_own_function_stays(target):
    new, findings = port(DEVICE_OF, target)
    assert "if torch.cuda.device_count() > 1:\n\n    def _cuda_device_of" in new
    assert "    if torch.accelerator.device_count() > 1:\n        torch.accelerator.synchronize()" in new
    assert any(f.code == "BACK006" and "_cuda_device_of" in f.message for f in findings)


# torchao prototype/quantized_training/int8_mixed_precision.py: a package asks whether CUDA's
# autocast is on before casting its inputs; it reads a state, as custom_fwd does (DEV017)
def test_a_packages_question_about_cudas_autocast_stays(tmp_path):
    files = {
        "lib/__init__.py": "",
        "lib/linear.py": """
            import torch


            def linear(x, w):
                if torch.is_autocast_enabled("cuda"):
                    x = x.to(torch.get_autocast_dtype("cuda"))
                return x @ w
        """,
    }
    write_files(tmp_path, files)
    new, findings = port_files(tmp_path, "neuron")["lib/linear.py"]
    assert new == textwrap.dedent(files["lib/linear.py"]).lstrip()
    assert len([f for f in findings if f.code == "DEV017"]) == 2
