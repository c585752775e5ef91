"""Checks and registrations whose CUDA-only code is reached indirectly (issue 11, torchtitan):
a predicate function whose callers guard Helion kernels, and custom ops over a DeepEP buffer
held in a module global that a function sets with `global`."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port

TARGETS = ["neuron", "tpu", "xla"]
# Helion 1.5.1 has a TorchTPU backend (it imports torch_tpu: rules/cuda_only/packages.json), but
# a kernel takes it only with `backend="pallas"` ([[opt_in]]): these kernels are CUDA-only everywhere
HELION_CUDA_ONLY = ["neuron", "tpu", "xla"]

# modelled on torchtitan 0.3.0 overrides/helion_rope.py: helion imported under TYPE_CHECKING
# and in a try, kernels defined under a module-level `if`, an eligibility predicate whose
# caller falls back to PyTorch when it is false
HELION = """
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    import helion
    import helion.language as hl

    _HELION_IMPORT_ERROR = None
else:
    try:
        import helion
        import helion.language as hl

        _HELION_IMPORT_ERROR = None
    except ImportError as e:
        _HELION_IMPORT_ERROR = e


if _HELION_IMPORT_ERROR is None:

    @helion.kernel(static_shapes=True)
    def _rope_fwd(xq, cache):
        out = torch.empty_like(xq)
        for tile in hl.tile(xq.size(0)):
            out[tile] = xq[tile] * cache[tile]
        return out


def _eligible(xq, cache):
    return (
        xq.is_cuda
        and cache.is_cuda
        and xq.device == cache.device
        and xq.is_contiguous()
    )


def apply_rope(xq, cache):
    if not _eligible(xq, cache):
        return None
    return _rope_fwd(xq, cache)
"""


def _port(body: str, target: str, **kw):
    return port(textwrap.dedent(body).lstrip("\n"), target, **kw)


def _guards(findings):
    return [f for f in findings if f.code == "GUARD001"]


@pytest.mark.parametrize("target", HELION_CUDA_ONLY)
def test_predicate_whose_caller_guards_helion_stays_cuda(target):
    new, findings = _port(HELION, target)
    assert "xq.is_cuda" in new and "cache.is_cuda" in new
    messages = [f.message for f in _guards(findings)]
    assert len(messages) == 2
    assert "through `_eligible()` in `apply_rope`" in messages[0] and "helion" in messages[0]


@pytest.mark.parametrize("target", TARGETS)
def test_predicate_guarding_portable_code_is_ported(target):
    """The same predicate shape in a Helion file, guarding plain PyTorch, is still ported."""
    src = (
        HELION
        + """

def _on_gpu(x):
    return x.is_cuda and x.dim() == 2


def scale(x):
    if _on_gpu(x):
        return x * 2
    return x
"""
    )
    new, findings = _port(src, target)
    assert "x.is_cuda and x.dim()" not in new
    assert not any("_on_gpu" in f.message for f in _guards(findings))


def test_helion_check_stays_on_tpu_without_the_pallas_backend():
    """Helion's TorchTPU path (its Pallas backend) is one a kernel must ask for (`backend="pallas"`);
    these kernels do not, so they compile through Triton: the check in front of them stays CUDA's
    on tpu too, and KERN003 says how to take the Pallas path (rules/cuda_only/documented.toml)."""
    new, findings = _port(HELION, "tpu")
    assert "xq.is_cuda" in new and "is_tpu" not in new
    assert any(f.code == "KERN003" and 'backend="pallas"' in (f.advice or "") for f in findings)


@pytest.mark.parametrize("target", HELION_CUDA_ONLY)
def test_predicate_through_predicate_and_method(target):
    """`return self._ok(x) and ...` in a method whose caller launches the kernel: the check
    in `_ok` is followed through both, and a predicate written as `if ...: return True` too."""
    src = (
        HELION
        + """

class Rope:
    def _ok(self, x):
        if x.is_cuda:
            return True
        return False

    def _use_kernel(self, x, cache):
        return self._ok(x) and cache.ndim == 2

    def forward(self, x, cache):
        if self._use_kernel(x, cache):
            return _rope_fwd(x, cache)
        return x * cache
"""
    )
    new, findings = _port(src, target)
    assert "if x.is_cuda:" in new
    assert any(
        "through `_ok()` in `_use_kernel`, which through `_use_kernel()` in `forward`" in f.message
        for f in _guards(findings)
    )


def test_recursive_predicate_terminates():
    src = (
        HELION
        + """

def _deep(x, n):
    return x.is_cuda and (n == 0 or _deep(x, n - 1))
"""
    )
    new, _ = _port(src, "neuron")
    assert "x.is_cuda" not in new  # no caller guards CUDA-only code: ported


# modelled on torchtitan 0.3.0 distributed/deepep/hybridep.py
HYBRIDEP = """
from typing import Any

import torch

_buffer: Any = None


def get_buffer(group, hidden_dim):
    global _buffer
    if _buffer is None or _buffer.group != group:
        try:
            from deep_ep import HybridEPBuffer
        except ImportError as e:
            raise ImportError("HybridEP requires deep_ep") from e
        _buffer = HybridEPBuffer(group=group, hidden_dim=hidden_dim)
    return _buffer


@torch.library.custom_op("hybridep::combine", mutates_args=(), device_types="cuda")
def _combine_impl(x: torch.Tensor, num_tokens: int) -> torch.Tensor:
    global _buffer
    if _buffer is None:
        raise RuntimeError("HybridEP buffer not initialized.")
    combined, _ = _buffer.combine_with_unpermute(hidden=x)
    return combined


@torch.library.custom_op("hybridep::scale", mutates_args=(), device_types="cuda")
def _scale_impl(x: torch.Tensor) -> torch.Tensor:
    return x * 2
"""


@pytest.mark.parametrize("target", TARGETS)
def test_custom_op_over_a_global_deep_ep_buffer_stays_cuda(target):
    new, findings = _port(HYBRIDEP, target)
    assert '"hybridep::combine", mutates_args=(), device_types="cuda"' in new
    kern = [f for f in findings if f.code == "KERN005"]
    assert len(kern) == 1
    assert "`_buffer` (set in `get_buffer`, which uses `deep_ep`" in kern[0].message
    # the op over plain PyTorch next to it is ported
    assert '"hybridep::scale", mutates_args=(), device_types="cuda"' not in new


def test_local_assignment_without_global_binds_nothing():
    """A function-local `_buffer = HybridEPBuffer(...)` (no `global`) does not make the
    module-level `_buffer` CUDA-only."""
    src = HYBRIDEP.replace("    global _buffer\n    if _buffer is None or", "    if _buffer is None or")
    new, findings = _port(src, "neuron")
    assert '"hybridep::combine", mutates_args=(), device_types="cuda"' not in new
    assert not [f for f in findings if f.code == "KERN005"]


# modelled on torchtitan 0.3.0 distributed/cudagraph.py: a wrapper class whose `__call__`
# captures a CUDA graph, made only behind a device check with an early exit
CUDAGRAPH = """
import torch

device_type = "cuda" if torch.cuda.is_available() else "cpu"


class CUDAGraphWrapper:
    def __init__(self, fn):
        self._fn = fn
        self._graph = None

    def __call__(self, *args):
        if self._graph is None:
            self._graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self._graph):
                self._out = self._fn(*args)
        self._graph.replay()
        return self._out

    def teardown(self):
        self._graph = None


class Logger:
    def log(self):
        torch.cuda.synchronize()

    def dump(self):
        return torch.cuda.get_device_properties(0)


def wrap_with_cuda_graph(fn):
    if not (device_type == "cuda" and torch.cuda.is_available()):
        return fn
    return CUDAGraphWrapper(fn)


def make_logger():
    if device_type == "cuda":
        return Logger()
    return None
"""


@pytest.mark.parametrize("target", TARGETS)
def test_class_whose_call_is_cuda_only_keeps_its_guard(target):
    new, findings = _port(CUDAGRAPH, target)
    assert 'if not (device_type == "cuda" and torch.cuda.is_available()):' in new
    messages = [f.message for f in _guards(findings)]
    assert messages and all("`CUDAGraphWrapper` (its `__call__` uses `torch.cuda.CUDAGraph`)" in m for m in messages)
    # a class with a CUDA-only method that is not `__init__`/`__call__` is not CUDA-only as a
    # whole: the check in front of making one is ported
    assert 'if device_type == "cuda":\n        return Logger()' not in new


# modelled on torchtitan 0.3.0 tools/utils.py: the availability test sits in a flag that the
# capability query reads
ROCM = """
import torch


def has_rocm_capability(major: int, minor: int) -> bool:
    is_rocm = torch.cuda.is_available() and torch.version.hip is not None
    return is_rocm and torch.cuda.get_device_capability() >= (
        major,
        minor,
    )


def gpu_count() -> int:
    ok = torch.cuda.is_available()
    if ok:
        return torch.cuda.device_count()
    return 0
"""


@pytest.mark.parametrize("target", TARGETS)
def test_availability_flag_read_by_a_capability_query_stays_cuda(target):
    new, findings = _port(ROCM, target)
    body = textwrap.dedent(ROCM).lstrip("\n")
    rocm = body[body.index("def has_rocm") : body.index("def gpu_count")]
    assert rocm in new  # not one change
    assert "GUARD002" not in [f.code for f in findings]
    assert any(
        "through `is_rocm`, which uses `torch.cuda.get_device_capability`" in f.message for f in _guards(findings)
    )
    # a flag that guards plain code is ported
    assert "ok = torch.cuda.is_available()" not in new


@pytest.mark.parametrize("target", TARGETS)
def test_cuda_profiler_activity_keeps_its_guard(target):
    """torchtitan tools/profiler.py: CUPTI's activity is asked for only where CUDA is."""
    src = """
import torch


def activities():
    acts = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts
"""
    new, findings = _port(src, target)
    assert "if torch.cuda.is_available():" in new
    assert any("ProfilerActivity.CUDA" in f.message for f in _guards(findings))


# shaped like trl 1.16.0 kernels/chunked_logprob.py: Triton imported under an availability
# test, kernels made by a local wrapper around `triton.jit`, and a predicate over a tuple of
# the devices Triton runs on whose caller picks the kernel or a torch fallback
TRITON_PREDICATE = """
import torch
from transformers.utils import is_triton_available

if is_triton_available():
    import triton
    import triton.language as tl


def _jit(fn):
    return triton.jit(fn) if is_triton_available() else fn


_TRITON = is_triton_available()


def _use_triton(device):
    return _TRITON and device.type in ("cuda", "xpu")


@_jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)


def _scale_tile(x, n, BLOCK):
    x.mul_(2)


def scale(x):
    fold = _scale_kernel[(1,)] if _use_triton(x.device) else _scale_tile
    fold(x, x.numel(), BLOCK=1024)
    return x
"""


@pytest.mark.parametrize("target", TARGETS)
def test_device_tuple_predicate_guarding_triton_is_left_as_it_is(target):
    """`device.type in ("cuda", "xpu")` chooses a Triton kernel: CUDA's entry is neither
    replaced nor joined by the target's (the target takes the torch fallback), GUARD001 says so."""
    new, findings = _port(TRITON_PREDICATE, target)
    assert new == textwrap.dedent(TRITON_PREDICATE).lstrip("\n")
    messages = [f.message for f in _guards(findings)]
    assert len(messages) == 1 and "through `_use_triton()` in `scale`" in messages[0] and "_scale_kernel" in messages[0]
    assert not any(f.code in ("DEV002", "BACK001") for f in findings)


@pytest.mark.parametrize("target", TARGETS)
def test_device_tuple_predicate_guarding_torch_code_gets_the_target(target):
    """The same tuple in a predicate whose caller runs plain PyTorch lists devices the code
    supports: the target is added beside CUDA (BACK001)."""
    src = (
        TRITON_PREDICATE
        + """

def _half_ok(x):
    return x.device.type in ("cuda", "xpu")


def maybe_half(x):
    if _half_ok(x):
        x = x * 0.5
    return x
"""
    )
    new, findings = _port(src, target)
    assert f'return x.device.type in ("cuda", "xpu", "{target}")' in new
    assert 'return _TRITON and device.type in ("cuda", "xpu")' in new


# fla/utils/hardware.py: IS_NVIDIA stays a CUDA test (GUARD001: it guards Triton code), so a
# capability query behind it needs no `torch.cuda.is_available() and` of its own
KEPT_FLAG = """
import torch
import triton

device_platform = triton.runtime.driver.active.get_current_target().backend
IS_NVIDIA = (device_platform == 'cuda')
IS_NVIDIA_SM100 = (IS_NVIDIA and torch.cuda.get_device_capability()[0] == 10)
IS_TMA = ((IS_NVIDIA and torch.cuda.get_device_capability(0)[0] >= 9) or IS_AMD)


def tail(device):
    if device.type != "cuda":
        raise ValueError("needs CUDA")
    return torch.cuda.get_device_capability(device)[0] == 10


def unpool(weight):
    if weight.is_cuda and torch.cuda.get_device_capability(weight.device)[0] != 10:
        return 1
    return 0


def msa(query):
    # transformers' msa_attention: only CUDA gets past `!= "cuda" or`
    if query.device.type != "cuda" or torch.cuda.get_device_capability(query.device)[0] != 10:
        return False
    return True
"""


def test_a_capability_query_behind_a_test_that_stays_cuda_gets_no_guard():
    new, findings = port(KEPT_FLAG, "neuron")
    assert "is_available" not in new and "IS_NVIDIA = (device_platform == 'cuda')" in new
    assert "GUARD002" not in [f.code for f in findings]


def test_a_capability_query_behind_a_test_the_port_retargets_keeps_its_guard():
    code = "import torch\n\nIS_NVIDIA = (platform() == 'cuda')\nSM100 = IS_NVIDIA and torch.cuda.get_device_capability()[0] == 10\n"
    new, findings = port(code, "neuron")
    assert "IS_NVIDIA = (platform() == 'neuron')" in new
    assert "IS_NVIDIA and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10" in new


def test_a_flag_set_to_an_empty_tuple_is_read_without_breaking_the_file():
    # megatron's batch_invariant_kernels.py: `x = ()` in a module with a capability query
    code = "import torch\n\nX = ()\nY = X and torch.cuda.get_device_capability()[0] > 8\n"
    new, _ = port(code, "neuron")
    assert "X = ()\n" in new and "torch.cuda.is_available() and torch.cuda.get_device_capability()" in new


def test_the_cuda_question_asked_again_inside_a_block_entered_on_its_kept_answer_stays():
    """accelerate's Colab launch: the `elif` keeps `torch.cuda.is_available()` (GUARD001: its
    other operand runs CUDA-only code); the same question inside its block, ported, could
    answer yes where the enclosing one answered no."""
    code = (
        "import torch\n"
        "import triton\n\n\n"
        "@triton.jit\n"
        "def _probe_kernel(x):\n"
        "    pass\n\n\n"
        "def gpu_count():\n"
        "    _probe_kernel[(1,)](torch.empty(1))\n"
        "    return torch.cuda.device_count()\n\n\n"
        "def launch(function, in_colab):\n"
        "    if in_colab and (not torch.cuda.is_available() or gpu_count() < 2):\n"
        "        if torch.cuda.is_available():\n"
        '            print("one GPU")\n'
        "        function()\n"
        "    if torch.cuda.is_available():\n"
        '        print("any GPU")\n'
    )
    new, findings = port(code, "neuron")
    assert '        if torch.cuda.is_available():\n            print("one GPU")' in new, new
    assert '    if torch.accelerator.is_available():\n        print("any GPU")' in new, new  # not inside it
    assert any(f.code == "GUARD001" and "asks again" in f.message for f in findings)


def test_an_attribute_set_to_the_cuda_test_that_guards_a_cuda_only_import_stays():
    """Composer's system metrics monitor: `self.gpu_available = torch.cuda.is_available()`, then
    `if self.gpu_available:` imports pynvml (NVIDIA's NVML) and initialises it."""
    code = (
        "import torch\n\n\n"
        "class Monitor:\n"
        "    def __init__(self):\n"
        "        self.gpu_available = torch.cuda.is_available()\n"
        "        if self.gpu_available:\n"
        "            try:\n"
        "                import pynvml\n"
        "            except ImportError:\n"
        "                raise\n"
        "            pynvml.nvmlInit()\n"
        "        self.other = torch.cuda.is_available()\n"
        "        if self.other:\n"
        "            print('accelerator')\n"
    )
    new, findings = port(code, "neuron")
    assert "self.gpu_available = torch.cuda.is_available()" in new, new
    assert "self.other = torch.accelerator.is_available()" in new, new
    assert any(f.code == "GUARD001" and "`pynvml` is imported" in f.message for f in findings), findings
