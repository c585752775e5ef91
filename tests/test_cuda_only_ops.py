"""torch's aten ops that have only a CUDA kernel (rules/cuda_only/aten_ops.json, read from the
installed torch's dispatcher) are CUDA-only code: a layer that runs one on every run off the CPU
(tinygemm's `_weight_int4pack_mm` beside the CPU's `_weight_int4pack_mm_for_cpu`) only runs on
CUDA or the CPU, and is left as it is (GUARD003)."""

from __future__ import annotations

import json
import textwrap

import pytest

from porter.config.cuda_packages import cuda_only_aten_ops
from porter.config.ruledata import rules_dir
from tests.deps import need
from tests.helpers import port

TARGETS = ["neuron", "tpu", "xla"]


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# torchao's HQQ tinygemm layer, cut down: pack and matmul choose the CPU's op on the CPU and
# the CUDA-only one everywhere else; the layer frees CUDA's cache after packing
INT4_LAYER = _src("""
    import torch
    from torch import nn


    def _is_device(kind, device):
        return torch.device(device).type == kind


    class Int4Linear(nn.Module):
        def __init__(self, weight, device="cuda"):
            super().__init__()
            self.device = device
            self.initialize(weight)

        def initialize(self, weight):
            if weight is not None:
                self.pack(weight)
            torch.cuda.empty_cache()

        def pack(self, w):
            if _is_device("cpu", w.device):
                self.packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(w, 8)
            else:
                self.packed = torch.ops.aten._convert_weight_to_int4pack(w, 8)
            torch.cuda.empty_cache()

        def matmul(self, x):
            if _is_device("cpu", x.device):
                return torch.ops.aten._weight_int4pack_mm_for_cpu(x, self.packed, 128, self.sz)
            else:
                return torch.ops.aten._weight_int4pack_mm(x, self.packed, 128, self.sz)

        def forward(self, x):
            return self.matmul(x)


    def step(model, x):
        y = model(x)
        torch.cuda.synchronize()
        return y
""")


def test_the_data_is_the_installed_torchs_dispatcher():
    """Regenerating from this torch gives the shipped file (where the versions match)."""
    torch = need("torch")
    from porter.apidata import aten_ops

    shipped = json.loads((rules_dir() / "cuda_only" / "aten_ops.json").read_text())
    if shipped["source"]["version"] != torch.__version__:
        pytest.skip(f"the data is torch {shipped['source']['version']}'s, this is {torch.__version__}")
    assert aten_ops.collect()["ops"] == shipped["ops"]
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    assert has("aten::_weight_int4pack_mm", "CUDA") and not has("aten::_weight_int4pack_mm", "CPU")
    ops = cuda_only_aten_ops(None)
    assert "torch.ops.aten._weight_int4pack_mm" in ops and "torch._weight_int4pack_mm" in ops
    assert "torch.ops.aten._weight_int4pack_mm_for_cpu" not in ops  # the CPU's own op
    assert "torch.ops.aten.mm" not in ops and "torch.ops.aten.addmm" not in ops  # CPU kernels


@pytest.mark.parametrize("target", TARGETS)
def test_a_layer_whose_only_accelerator_path_is_a_cuda_only_op_is_left(target):
    new, findings = port(INT4_LAYER, target)
    # the layer's empty_cache and its "cuda" default stay; the generic step is still ported
    layer = INT4_LAYER.split("def _is_device")[1].split("def step")[0]
    assert layer in new and "torch.cuda.synchronize()" not in new
    left = [f for f in findings if f.code == "GUARD003"]
    assert len(left) == 1 and "`class Int4Linear`" in left[0].message
    assert (
        "calls `self.matmul()`" in left[0].message
        and "aten::_weight_int4pack_mm has kernels for CUDA" in left[0].message
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_that_calls_one_through_self_is_left(target):
    """Without `forward`, the class is ported method by method: `load` calls `self.pack`, which
    runs the CUDA-only op on every run off the CPU, so `load` and `pack` are left; a method that
    packs only under an `if` is ported."""
    code = INT4_LAYER.split("    def matmul")[0].replace(
        "    def pack(",
        "    def load(self, w):\n        self.pack(w)\n        torch.cuda.empty_cache()\n\n    def pack(",
    )
    new, findings = port(code, target)
    assert code.count("torch.cuda.empty_cache()") == 3
    assert new.count("torch.cuda.empty_cache()") == 2  # load's and pack's: initialize's is ported
    left = sorted(f.message.split(" only runs")[0] for f in findings if f.code == "GUARD003")
    assert left == ["`def load`", "`def pack`"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_portable_op_off_the_cpu_is_still_ported(target):
    """The same layer over ops with a CPU kernel (`torch.ops.aten.mm`) is ported."""
    code = INT4_LAYER.replace("_convert_weight_to_int4pack(", "relu(").replace("_weight_int4pack_mm(", "mm(")
    new, findings = port(code, target)
    assert "torch.cuda.empty_cache()" not in new
    assert not [f for f in findings if f.code == "GUARD003"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_cpu_arm_of_the_test_is_not_the_accelerators(target):
    """An op named only on the CPU's side of the test (`if not on the CPU: portable, else:
    CUDA-only`) is not on every accelerator run: the layer is ported."""
    code = INT4_LAYER.replace('if _is_device("cpu", ', 'if not _is_device("cpu", ')
    new, findings = port(code, target)
    assert "torch.cuda.empty_cache()" not in new
    assert not [f for f in findings if f.code == "GUARD003"]
