"""The twenty-seventh read's second wave of the scaffold writer (issue 24): each test failed on f823e03."""

from __future__ import annotations

import importlib
import sys

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

INT_POINTERS = (
    "typedef long long LL;\n"
    "__global__ void ik(float* x, const int64_t* __restrict__ idx, int n, bool* m, const unsigned char* b,"
    " LL* ll, int32_t* s) { if (threadIdx.x < n) x[threadIdx.x] = idx[threadIdx.x]; }\n"
    "void go(float* x, int64_t* idx, int n, bool* m, unsigned char* b, LL* ll, int32_t* s) {\n"
    "  ik<<<1, 256>>>(x, idx, n, m, b, ll, s);\n}\n"
)


def test_make_inputs_makes_an_integer_pointer_s_tensor_of_its_integer_type(tmp_path, monkeypatch):
    # `const int64_t* idx` was `torch.randn(...)`, a float tensor: the op's `idx` could not index
    (tmp_path / "k.cu").write_text(INT_POINTERS)
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    monkeypatch.syspath_prepend(str(out))
    try:
        inputs = importlib.import_module("test_ik_xla_parity").make_inputs()
    finally:
        for name in ("test_ik_xla_parity", "ik_op"):
            sys.modules.pop(name, None)
    import torch

    dtypes = [getattr(v, "dtype", type(v)) for v in inputs]
    assert dtypes == [torch.float32, torch.int64, int, torch.bool, torch.uint8, torch.int64, torch.int32]
    assert 0 <= int(inputs[1].min()) and int(inputs[1].max()) < 1024  # in bounds of the float tensor
