"""The thirty-third read, real packages end to end (hfread): what lint, rewrite and kernels made of
ring-flash-attn 0.1.8, native-sparse-attention-pytorch 0.2.3, yunchang 0.6.4 and other pinned packages
that no read had taken, checked against the libraries' own sources and torch itself."""

from __future__ import annotations

import pytest


def _port(tmp_path, text, target="tpu"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    new = (result.new_source or result.original_source or b"").decode()
    return new, [(f.code, f.start.line) for f in result.findings]


YUNCHANG = """from functools import partial

import quantlib
import torch


def pick():
    return partial(quantlib.sageattn_qk_int8_pv_fp16_triton, tensor_layout="NHD", quantization_backend="cuda")


def run(q, k, v):
    return some_lib.attn(q, k, v, backend="cuda", attn_backend="cuda")


y = torch.zeros(3, device="cuda")
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_cuda_given_to_a_keyword_named_for_a_backend_is_the_librarys_word_not_a_device(tmp_path, target):
    """yunchang 0.6.4 (`kernels/__init__.py`) passes sageattention's `quantization_backend="cuda"`,
    whose choices are "cuda" and "triton" (sageattention 1.0.6): porter made it `"tpu"`, a safe DEV002
    fix to a value the library rejects (the library here is named `quantlib`: sageattention itself is CUDA-only
    now, so its module's devices stay CUDA's). It stays, noted (DEV015); a `device=` (the control) is ported."""
    new, found = _port(tmp_path, YUNCHANG, target)
    assert new.count('quantization_backend="cuda"') == 1
    assert 'backend="cuda", attn_backend="cuda"' in new
    assert 'device="cuda"' not in new
    assert [line for code, line in found if code == "DEV015"] == [8, 12, 12]
    assert [line for code, line in found if code == "DEV002"] == [15]


@pytest.mark.parametrize(
    "library, call",
    [("gemlite", "gemlite.GemLiteLinear(x)"), ("sageattention", "sageattention.sageattn(x, x, x)")],
)
def test_an_import_of_gemlite_or_sageattention_is_reported_as_a_cuda_only_library(tmp_path, library, call):
    """yunchang 0.6.4 imports sageattention (CUDA extensions built for compute capability 8.0-12.1,
    its setup.py): lint said nothing at its import. GemLite is in KERN003's own list (and in
    rules/cuda_only/packages.json), yet `import gemlite` was silent too: the library table had
    neither row. Both are KERN003 now; pynvml (the control) always was."""
    text = f"import {library}\nimport pynvml\n\n\ndef f(x):\n    pynvml.nvmlInit()\n    return {call}\n"
    _, found = _port(tmp_path, text)
    assert ("KERN003", 1) in found
    assert ("KERN003", 2) in found


LITGPT = """import lightning as L
import torch


def make():
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    return L.Fabric(accelerator=accelerator, devices=1)


def pick():
    if torch.cuda.is_available():
        device = "cuda"
    elif torch.backends.mps.is_available():
        device = "mps"
    else:
        device = "cpu"
    return torch.zeros(2, device=device)
"""


@pytest.mark.parametrize("target, name", [("tpu", "tpu"), ("neuron", "neuron"), ("xla", "xla")])
def test_a_device_switch_that_sets_lightnings_accelerator_gets_no_target_branch(tmp_path, target, name):
    """litgpt 0.5.13 (`api.py`) sets `accelerator = "cuda"` / `"mps"` / `"cpu"` for
    `L.Fabric(accelerator=accelerator)`: porter added `elif ...: accelerator = "tpu"` (`"neuron"`,
    `"xla"`), names Lightning does not have for these targets (its XLA accelerator is `"tpu"`). The
    switch is reported (BACK002), no branch written; a switch over `device` (the control) gets one."""
    new, found = _port(tmp_path, LITGPT, target)
    assert f'accelerator = "{name}"' not in new
    assert f'device = "{name}"' in new
    assert ("BACK002", 6) in found


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_backend_map_of_one_pair_is_read_as_torch_reads_it(tmp_path, target):
    """torch 2.9's `BackendConfig` reads `init_process_group(backend="cuda:nccl")` as the map
    {"cuda": "nccl"}, which has no pair for the target's device; porter read a map only from two pairs
    on, so the one-pair map got no finding (D1's `backend=` rule leaves it, a map being no device).
    The two-pair map (the control) always got DIST001."""
    text = (
        "import torch.distributed as dist\n\n"
        'dist.init_process_group(backend="cuda:nccl")\n'
        'dist.init_process_group(backend="cpu:gloo,cuda:nccl")\n'
    )
    new, found = _port(tmp_path, text, target)
    assert [line for code, line in found if code == "DIST001"] == [3, 4]
    assert 'backend="cuda:nccl"' in new
