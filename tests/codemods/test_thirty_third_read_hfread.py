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

import sageattention
import torch


def pick():
    return partial(sageattention.sageattn_qk_int8_pv_fp16_triton, tensor_layout="NHD", quantization_backend="cuda")


def run(q, k, v):
    return some_lib.attn(q, k, v, backend="cuda", attn_backend="cuda")


y = torch.zeros(3, device="cuda")
"""


@pytest.mark.parametrize("target", ["tpu", "neuron", "xla"])
def test_a_cuda_given_to_a_keyword_named_for_a_backend_is_the_librarys_word_not_a_device(tmp_path, target):
    """yunchang 0.6.4 (`kernels/__init__.py`) passes sageattention's `quantization_backend="cuda"`,
    whose choices are "cuda" and "triton" (sageattention 1.0.6): porter made it `"tpu"`, a safe DEV002
    fix to a value the library rejects. It stays, noted (DEV015); a `device=` (the control) is ported."""
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
