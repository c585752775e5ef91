"""LIB rewrites against the original libraries' math, written in plain PyTorch.

The CUDA libraries cannot be installed here, so each reference implements what the library
documents (flash-attn: softmax(q k^T * scale + causal mask) v on (batch, seq, heads, dim), GQA
by repeating kv heads). The code under test is porter's actual output: each test ports a
snippet and executes the rewritten source, forward and backward, on the CPU in float64.
"""

from __future__ import annotations

import pytest

from tests.helpers import port

pytestmark = pytest.mark.torch
IMPORTED_WHEN_RUN = ("torch",)  # not at collection: .ci/run may still be installing it (tests/conftest.py)
torch = None


def run_ported(src: str, target: str = "neuron", unsafe: bool = True, **env):
    new, findings = port(src, target, unsafe=unsafe)
    assert "flash_attn" not in new and "xformers" not in new and "apex" not in new and "bitsandbytes" not in new, new
    again, _ = port(new, target, unsafe=unsafe)
    assert again == new  # idempotent
    ns = dict(env)
    exec(compile(new, "ported.py", "exec"), ns)
    return ns, new


def flash_reference(q, k, v, softmax_scale=None, causal=False):
    """flash-attn's math: (B, Sq, H, D) x (B, Sk, Hk, D); causal mask aligned bottom-right."""
    _, sq, h, d = q.shape
    sk, hk = k.shape[1], k.shape[2]
    k = k.repeat_interleave(h // hk, dim=2)
    v = v.repeat_interleave(h // hk, dim=2)
    scale = softmax_scale if softmax_scale is not None else d**-0.5
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        keep = torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=sk - sq)
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)


def leaves(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g, dtype=torch.float64, requires_grad=True) for s in shapes]


def assert_same_fwd_bwd(fn_a, fn_b, inputs):
    out_a = fn_a(*inputs)
    grad_out = torch.randn_like(out_a)
    ga = torch.autograd.grad(out_a, inputs, grad_out)
    out_b = fn_b(*inputs)
    assert out_a.shape == out_b.shape
    gb = torch.autograd.grad(out_b, inputs, grad_out)
    torch.testing.assert_close(out_a, out_b, rtol=1e-10, atol=1e-10)
    for a, b in zip(ga, gb):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads,kv_heads", [(4, 4), (4, 2), (4, 1)])
def test_flash_attn_func_matches_reference(causal, heads, kv_heads):
    src = (
        "from flash_attn import flash_attn_func\n"
        "def attn(q, k, v):\n"
        f"    return flash_attn_func(q, k, v, softmax_scale=0.3, causal={causal})\n"
    )
    ns, new = run_ported(src)
    assert "scaled_dot_product_attention" in new and "enable_gqa=True" in new
    inputs = leaves((2, 5, heads, 8), (2, 5, kv_heads, 8), (2, 5, kv_heads, 8))
    assert_same_fwd_bwd(ns["attn"], lambda q, k, v: flash_reference(q, k, v, 0.3, causal), inputs)


def test_flash_attn_default_scale_and_positional_args():
    src = "import flash_attn\ndef attn(q, k, v):\n    return flash_attn.flash_attn_func(q, k, v, 0.0, None, False)\n"
    ns, _ = run_ported(src, unsafe=False)
    inputs = leaves((1, 7, 2, 16), (1, 9, 2, 16), (1, 9, 2, 16))  # cross-attention lengths
    assert_same_fwd_bwd(ns["attn"], flash_reference, inputs)


def test_causal_with_unequal_lengths_is_why_the_fix_is_unsafe():
    src = (
        "from flash_attn import flash_attn_func\ndef attn(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
    )
    new, findings = port(src, "neuron", unsafe=False)
    assert new == src and any(f.code == "LIB001" and f.applicability.value == "unsafe" for f in findings)
    ns, _ = run_ported(src)
    q, k, v = leaves((1, 2, 1, 4), (1, 6, 1, 4), (1, 6, 1, 4))
    assert not torch.allclose(ns["attn"](q, k, v), flash_reference(q, k, v, causal=True))


def test_qkvpacked_and_view_after_transpose():
    src = (
        "from flash_attn import flash_attn_qkvpacked_func\n"
        "def attn(qkv):\n"
        "    b, s = qkv.shape[:2]\n"
        "    return flash_attn_qkvpacked_func(qkv, causal=True).view(b, s, -1)\n"
    )
    ns, new = run_ported(src)
    assert ".reshape(b, s, -1)" in new

    def ref(qkv):
        q, k, v = qkv.unbind(2)
        return flash_reference(q, k, v, causal=True).reshape(qkv.shape[0], qkv.shape[1], -1)

    assert_same_fwd_bwd(ns["attn"], ref, leaves((2, 6, 3, 4, 8)))


def test_kvpacked_gqa():
    src = "from flash_attn import flash_attn_kvpacked_func\ndef attn(q, kv):\n    return flash_attn_kvpacked_func(q, kv, softmax_scale=0.5)\n"
    ns, _ = run_ported(src)
    assert_same_fwd_bwd(
        ns["attn"],
        lambda q, kv: flash_reference(q, *kv.unbind(2), softmax_scale=0.5),
        leaves((2, 4, 6, 8), (2, 5, 2, 3, 8)),
    )


def xformers_reference(q, k, v, bias=None, scale=None, causal=False):
    d = q.shape[-1]
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * (scale if scale is not None else d**-0.5)
    if bias is not None:
        scores = scores + bias
    if causal:  # LowerTriangularMask: top-left aligned
        keep = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)


def test_xformers_tensor_bias():
    src = "import xformers.ops as xops\ndef attn(q, k, v, bias):\n    return xops.memory_efficient_attention(q, k, v, attn_bias=bias, scale=0.2)\n"
    ns, new = run_ported(src)
    assert "attn_mask=bias" in new
    inputs = leaves((2, 5, 3, 8), (2, 7, 3, 8), (2, 7, 3, 8), (2, 3, 5, 7))
    assert_same_fwd_bwd(ns["attn"], lambda q, k, v, b: xformers_reference(q, k, v, b, 0.2), inputs)


def test_xformers_causal_mask():
    src = "from xformers.ops import memory_efficient_attention, LowerTriangularMask\ndef attn(q, k, v):\n    return memory_efficient_attention(q, k, v, LowerTriangularMask())\n"
    ns, new = run_ported(src)
    assert "LowerTriangularMask" not in new
    assert_same_fwd_bwd(
        ns["attn"],
        lambda q, k, v: xformers_reference(q, k, v, causal=True),
        leaves((1, 6, 2, 4), (1, 6, 2, 4), (1, 6, 2, 4)),
    )


def _module_parity(module, reference, x):
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
    params = list(module.parameters())
    out = module(x)
    grad_out = torch.randn_like(out)
    got = torch.autograd.grad(out, [x, *params], grad_out)
    ref_out = reference(x, *params)
    want = torch.autograd.grad(ref_out, [x, *params], grad_out)
    torch.testing.assert_close(out, ref_out, rtol=1e-10, atol=1e-12)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_apex_layer_norm():
    src = "from apex.normalization import FusedLayerNorm\nnorm = FusedLayerNorm(16, eps=1e-6)\n"
    ns, _ = run_ported(src, unsafe=False)
    norm = ns["norm"].double()

    def ref(x, w, b):  # apex fused_layer_norm_affine
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + 1e-6) * w + b

    _module_parity(norm, ref, leaves((3, 5, 16))[0])


def test_apex_rms_norm_keeps_apex_eps():
    src = "import apex\nnorm = apex.normalization.FusedRMSNorm(16)\n"
    ns, new = run_ported(src, unsafe=False)
    assert "import apex" not in new
    norm = ns["norm"].double()

    def ref(x, w):  # apex fused_rms_norm_affine, eps=1e-5
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w

    x = leaves((4, 16))[0] * 1e-2  # small activations: a different eps would show
    _module_parity(norm, ref, x.detach().requires_grad_())


def _adam_reference(params, grads_per_step, lr, betas, eps, wd, adam_w_mode):
    """apex FusedAdam (bias_correction=True): ADAM_MODE_1 = decoupled decay, 0 = L2."""
    params = [p.detach().clone() for p in params]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    b1, b2 = betas
    for step, grads in enumerate(grads_per_step, start=1):
        for i, (p, g) in enumerate(zip(params, grads)):
            if not adam_w_mode:
                g = g + wd * p
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            update = (m[i] / (1 - b1**step)) / ((v[i] / (1 - b2**step)).sqrt() + eps)
            if adam_w_mode:
                update = update + wd * p
            params[i] = p - lr * update
    return params


def _run_optimizer(opt_factory, params, grads_per_step):
    params = [p.detach().clone().requires_grad_() for p in params]
    opt = opt_factory(params)
    for grads in grads_per_step:
        for p, g in zip(params, grads):
            p.grad = g.clone()
        opt.step()
    return params


@pytest.mark.parametrize(
    "call,wd,adam_w_mode",
    [
        ("FusedAdam(params, lr=0.01, betas=(0.8, 0.9))", 0.0, True),
        ("FusedAdam(params, 0.01, betas=(0.8, 0.9), weight_decay=0.1)", 0.1, True),
        (
            "FusedAdam(params, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, adam_w_mode=False, set_grad_none=True)",
            0.1,
            False,
        ),
    ],
)
def test_apex_fused_adam(call, wd, adam_w_mode):
    src = f"from apex.optimizers import FusedAdam\ndef make(params):\n    return {call}\n"
    ns, new = run_ported(src, unsafe=False)
    assert ("AdamW" in new) == adam_w_mode
    g = torch.Generator().manual_seed(2)
    params = [torch.randn(5, 3, generator=g, dtype=torch.float64), torch.randn(3, generator=g, dtype=torch.float64)]
    grads = [[torch.randn(p.shape, generator=g, dtype=torch.float64) for p in params] for _ in range(4)]
    got = _run_optimizer(ns["make"], params, grads)
    want = _adam_reference(params, grads, 0.01, (0.8, 0.9), 1e-8, wd, adam_w_mode)
    for a, b in zip(got, want):
        torch.testing.assert_close(a.detach(), b, rtol=1e-10, atol=1e-12)


def test_bnb_adamw_matches_unquantized_adamw_math():
    """bitsandbytes AdamW's update rule (weight_decay 1e-2 decoupled) without the 8-bit
    state quantization, which is the numerical difference the unsafe fix accepts."""
    src = "import bitsandbytes as bnb\ndef make(params):\n    return bnb.optim.AdamW8bit(params, lr=0.01, percentile_clipping=100)\n"
    ns, _ = run_ported(src)
    g = torch.Generator().manual_seed(3)
    params = [torch.randn(4, 4, generator=g, dtype=torch.float64)]
    grads = [[torch.randn(4, 4, generator=g, dtype=torch.float64)] for _ in range(3)]
    got = _run_optimizer(ns["make"], params, grads)
    want = _adam_reference(params, grads, 0.01, (0.9, 0.999), 1e-8, 1e-2, True)
    torch.testing.assert_close(got[0].detach(), want[0], rtol=1e-10, atol=1e-12)


def test_apex_fused_sgd():
    src = "from apex.optimizers import FusedSGD\ndef make(params):\n    return FusedSGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)\n"
    ns, _ = run_ported(src, unsafe=False)
    g = torch.Generator().manual_seed(4)
    params = [torch.randn(6, generator=g, dtype=torch.float64)]
    grads = [[torch.randn(6, generator=g, dtype=torch.float64)] for _ in range(3)]
    got = _run_optimizer(ns["make"], params, grads)
    p, buf = params[0].clone(), None
    for (gr,) in grads:  # apex FusedSGD, wd_after_momentum=False: weight decay first
        gr = gr + 0.01 * p
        buf = gr.clone() if buf is None else 0.9 * buf + gr
        p = p - 0.1 * buf
    torch.testing.assert_close(got[0].detach(), p, rtol=1e-10, atol=1e-12)
