"""KERN, LIB and PERF findings: what is reported, what is left alone, and idempotence."""

from __future__ import annotations

import pytest

from tests.helpers import port


def codes(findings):
    return [f.code for f in findings]


def test_ported_library_call_gets_no_kern003():
    src = "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v)\n"
    new, findings = port(src, "neuron")
    assert codes(findings) == ["LIB001"] and "flash_attn" not in new


def test_unported_parts_of_a_library_get_kern003():
    src = "from flash_attn.layers.rotary import RotaryEmbedding\nfrom flash_attn import flash_attn_func\nrot = RotaryEmbedding(64)\n"
    new, findings = port(src, "tpu")
    assert codes(findings) == ["KERN003"] and new == src


def test_kern003_when_lib_rule_is_ignored():
    src = "from apex.normalization import FusedLayerNorm\nln = FusedLayerNorm(8)\n"
    new, findings = port(src, "neuron", ignore=("LIB003",))
    assert new == src and "KERN003" in codes(findings)


def test_lowertriangular_inside_a_ported_call_is_not_reported_twice():
    src = "import xformers.ops as xops\nout = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())\n"
    _, findings = port(src, "neuron", unsafe=True)
    assert codes(findings) == ["LIB002"]
    _, findings = port(src, "neuron")  # not applied: the inner reference is still reported
    assert sorted(codes(findings)) == ["KERN003", "LIB002"]


@pytest.mark.parametrize(
    "call",
    [
        "flash_attn_func(q, k, v, window_size=(128, 0))",
        "flash_attn_func(q, k, v, alibi_slopes=slopes)",
        "flash_attn_func(q, k, v, return_attn_probs=True)",
        "flash_attn_func(*qkv)",
        "flash_attn_varlen_func(q, k, v, cu, cu, m, m)",
    ],
)
def test_flash_forms_without_sdpa_equivalent_are_manual(call):
    src = f"from flash_attn import flash_attn_func, flash_attn_varlen_func\nout = {call}\n"
    new, findings = port(src, "xla", unsafe=True)
    assert new == src and codes(findings) == ["LIB001"] and findings[0].applicability.value == "manual"


def test_tpu_advice_names_splash_sdpa():
    src = "from flash_attn import flash_attn_varlen_func\nout = flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n"
    _, findings = port(src, "tpu")
    assert "torch.tpu.ops.splash_sdpa" in findings[0].advice


def test_flash_reference_passed_as_value_is_manual():
    src = "from flash_attn import flash_attn_func\nATTN = {'flash': flash_attn_func}\n"
    new, findings = port(src, "neuron")
    assert new == src and codes(findings) == ["LIB001"]


def test_apex_optimizer_blocking_arguments():
    src = "from apex.optimizers import FusedAdam\nopt = FusedAdam(ps, lr=1e-3, bias_correction=False)\n"
    new, findings = port(src, "neuron")
    assert new == src and "bias_correction" in findings[0].message


def test_amp_initialize_with_other_names_and_master_params():
    src = (
        "import torch\nfrom apex import amp\n"
        "net, opt = amp.initialize(model, optimizer, opt_level='O2')\n"
        "torch.nn.utils.clip_grad_norm_(amp.master_params(opt), 1.0)\n"
    )
    new, findings = port(src, "neuron", unsafe=True)
    assert new == (
        "import torch\n"
        "net, opt = (model, optimizer)\n"
        'torch.nn.utils.clip_grad_norm_((p for group in opt.param_groups for p in group["params"]), 1.0)\n'
    )
    assert 'torch.autocast("neuron", dtype=torch.bfloat16)' in findings[0].advice


def test_scale_loss_of_an_expression():
    src = "from apex import amp\nwith amp.scale_loss(loss / 4, opt) as scaled:\n    scaled.backward()\n"
    new, _ = port(src, "xla", unsafe=True)
    assert new == "scaled = loss / 4\nscaled.backward()\n"


def test_bnb_quantized_layer_and_32bit_optimizer():
    src = "import torch\nimport bitsandbytes as bnb\nopt = bnb.optim.AdamW32bit(ps, lr=1e-4)\nlin = bnb.nn.Linear4bit(8, 8)\n"
    new, findings = port(src, "neuron")
    assert "torch.optim.AdamW(ps, lr=1e-4)" in new and "import bitsandbytes as bnb" in new
    assert sorted(codes(findings)) == ["KERN003", "LIB006"]


def test_kern_detection():
    src = (
        "import cupy as cp\n"
        "import numba\n"
        "from torch.utils.cpp_extension import load_inline, CppExtension\n"
        "mod = load_inline('m', cpp_sources=src, functions=['f'])\n"
        "ext = CppExtension('x', ['x.cpp'])\n"
        "@numba.cuda.jit\n"
        "def k(a):\n    pass\n"
        "src_file = 'kernel.cuh'\n"
    )
    new, findings = port(src, "neuron")
    assert new == src
    assert sorted(codes(findings)) == ["KERN001", "KERN001", "KERN003", "KERN003", "KERN004"]


def test_triton_launch_in_a_shadowing_scope_is_not_a_launch():
    src = (
        "import triton\n@triton.autotune(configs=[], key=['n'])\n@triton.jit\ndef kern(x):\n    pass\n"
        "def run(kern):\n    kern[(1,)](x)\n"
        "def go():\n    kern[(4,)](y)\n"
    )
    _, findings = port(src, "tpu")
    lines = sorted(f.start.line for f in findings if f.code == "KERN002")
    assert lines == [4, 9]


def test_a_file_without_cuda_libraries_is_untouched_by_these_families():
    src = "import numpy as np\nimport apexcharts\nx = np.zeros(3)\n"
    _, findings = port(src, "neuron", extend_select=("PERF",))
    assert findings == []


# -- PERF ---------------------------------------------------------------------------------

PERF = {"extend_select": ("PERF",)}


def perf_codes(src, target="neuron"):
    _, findings = port(src, target, **PERF)
    return sorted(f.code for f in findings if f.code.startswith("PERF"))


def test_perf_off_by_default():
    src = "for x in data:\n    loss = f(x)\n    loss.backward()\n    print(loss.item())\n"
    _, findings = port(src, "neuron")
    assert not [f for f in findings if f.code.startswith("PERF")]


def test_host_sync_in_step_but_not_in_periodic_logging_or_eval_loops():
    src = (
        "for step, x in enumerate(data):\n"
        "    loss = f(x)\n    loss.backward()\n    optimizer.step()\n"
        "    print(loss)\n"
        "    if step % 100 == 0:\n        print(loss.item())\n"
        "for x in val:\n    acc.append(f(x).item())\n"
    )
    _, findings = port(src, "xla", **PERF)
    perf = [f for f in findings if f.code == "PERF001"]
    assert [f.start.line for f in perf] == [5]


def test_forward_control_flow_and_dynamic_shapes():
    src = (
        "class M(nn.Module):\n"
        "    def forward(self, x, mask):\n"
        "        if self.training and x is not None:\n            pass\n"
        "        if torch.isnan(x).any():\n            x = x.nan_to_num()\n"
        "        idx = x.nonzero()\n"
        "        u = torch.unique(x)\n"
        "        y = x[x > 0]\n"
        "        return x[mask.long()]\n"
    )
    assert perf_codes(src, "tpu") == ["PERF002", "PERF003", "PERF003", "PERF003"]


def test_padding_float64_and_collectives():
    src = (
        "import torch\nimport torch.distributed as dist\n"
        "b = tok(texts, padding='longest')\n"
        "ok = tok(texts, padding=True, pad_to_multiple_of=128)\n"
        "x = torch.zeros(3, dtype=torch.float64).double()\n"
        "dist.all_reduce(x)\n"
        "@torch.tpu.distributed.spmd_safe\ndef step(x):\n    dist.all_reduce(x)\n"
    )
    assert perf_codes(src, "neuron") == ["PERF004", "PERF005", "PERF005"]
    assert perf_codes(src, "tpu") == ["PERF004", "PERF006"]


def test_idempotent_on_a_mixed_file():
    src = (
        "import torch\nimport torch.nn.functional as F\nfrom flash_attn import flash_attn_func\n"
        "from apex.normalization import FusedRMSNorm\nfrom apex.optimizers import FusedAdam\n"
        "class Block(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.norm = FusedRMSNorm(64)\n"
        "    def forward(self, q, k, v):\n        b, s = q.shape[:2]\n"
        "        return flash_attn_func(self.norm(q), k, v, dropout_p=self.p if self.training else 0.0).view(b, s, -1)\n"
        "opt = FusedAdam(Block().parameters(), lr=3e-4, weight_decay=0.1)\n"
    )
    for target in ("neuron", "tpu", "xla"):
        new, findings = port(src, target, **PERF)
        assert "flash_attn" not in new and "apex" not in new
        assert "scaled_dot_product_attention(self.norm(q).transpose(1, 2)" in new
        assert "dropout_p=self.p if self.training else 0.0" in new and ".reshape(b, s, -1)" in new
        assert "torch.nn.RMSNorm(64, eps=1e-5)" in new and "torch.optim.AdamW(" in new
        again, _ = port(new, target, **PERF)
        assert again == new


def test_a_launch_of_a_triton_kernel_defined_under_if_has_triton_is_reported():
    """`porter kernels` lists a kernel defined under `if HAS_TRITON:` with its launch (seventeenth
    read); lint reported the kernel but not its launch, nor a launch spelled in another
    normalisation of its name (`ｓcale` is `scale` to Python). Eighteenth read of issue 24."""
    src = (
        "try:\n    import triton\n    HAS_TRITON = True\nexcept ImportError:\n    HAS_TRITON = False\n"
        "if HAS_TRITON:\n    @triton.jit\n    def kern(x):\n        pass\n"
        "    @triton.jit\n    def \uff53cale(x):\n        pass\n"
        "def go(x):\n    kern[(4,)](x)\n    scale[(4,)](x)\n"
    )
    _, findings = port(src, "tpu")
    lines = sorted(f.start.line for f in findings if f.code == "KERN002" and "launch" in f.message)
    assert lines == [14, 15], [(f.start.line, f.message) for f in findings]
