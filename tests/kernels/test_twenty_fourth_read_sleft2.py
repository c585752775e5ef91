"""The twenty-fourth read's sleft leftovers, closed by its "sleft2" (issue 24): each failed on h9-sleft's tip."""

from __future__ import annotations

from porter.kernels.inventory import scan

K = "#pragma once\nG void k(float* x) { x[0] = 1; }\nvoid host(float* x) { }\n"


def _kernels_of(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return sorted((k.path, k.name, k.line) for k in scan(tmp_path, limit=None).kernels)


def test_a_macro_of_global_a_cu_defines_before_its_include_makes_a_kernel_header(tmp_path):
    """`#define G __global__` in a `.cu` before `#include "k.h"`: the compiler reads k.h's `G void k(`
    as a kernel (libclang: its CUDA attribute); k.h holds no `__global__` and was not read. The lines
    the compiler reads first decide: the `.cu`'s own, and a header's before the `#include`."""
    files = {
        "a.cu": '#define G __global__\n#include "k.h"\n#define V __global__ static void\n#include "sub/v.h"\n',
        "k.h": K,
        "sub/v.h": "#pragma once\nV v(float* x) { }\n",
    }
    assert _kernels_of(tmp_path, files) == [("k.h", "k", 2), ("sub/v.h", "v", 2)]
    for name, undone in [("u.h", "#undef G\n#define G\n"), ("w.h", "#undef G\n#define G __host__ __device__\n")]:
        (tmp_path / "a.cu").write_text(f'#define G __global__\n#include "{name}"\n#include "k.h"\n')
        (tmp_path / name).write_text("#pragma once\n" + undone)
        assert ("k.h", "k", 2) not in _kernels_of(tmp_path, {}), name  # libclang: no kernel


def test_the_trees_headers_without_global_are_read_once_for_its_macros(tmp_path, monkeypatch):
    """In a tree defining macros of `__global__` (cutlass's `CUTLASS_GLOBAL`), each header without
    `__global__` was read again for them, once per name it did not hold: three reads of `plain.h`
    for two names. The header using one is still a kernel header."""
    from pathlib import Path

    from porter.kernels import inventory

    files = {
        "g.h": "#pragma once\n#define G __global__\n#define H __global__ static\n",
        "k.h": "#pragma once\nG void k(float* x) { }\n",
        "plain.h": "#pragma once\ninline int twice(int v) { return 2 * v; }\n",
        "a.cu": '#include "g.h"\n#include "k.h"\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    reads: list[str] = []
    real_read = inventory.read_regular

    def counted(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(inventory, "read_regular", counted)
    found, names = inventory._cuda_files(tmp_path)[:2]
    assert sorted(p.name for p in found) == ["a.cu", "g.h", "k.h"] and names == {"G", "H"}
    assert sorted(reads) == sorted(files), reads


CAST = """import triton
import triton.language as tl


@triton.jit
def cast(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(tl.float32)
    b = tl.abs(tl.load(b_ptr + offs, mask=m)).to(tl.float32)
    tl.store(y_ptr + offs, a * b - tl.where(a > b, a, b), mask=m)
"""

# an fp16 and a bf16 load, each cast to fp32 before they meet, under Triton's interpreter, and the
# derived reference on the same tensors (or why it raised)
_CAST_RUN = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import cast
from porter.kernels.triton_ref import translate
a = torch.linspace(-0.1, 3.3, 64).to(torch.float16)
b = torch.linspace(-5.1, 0.7, 64).to(torch.bfloat16)
y, z = torch.zeros(64), torch.zeros(64)
cast.cast[(1,)](a, b, y, 64, BLOCK=64)
ns = {"torch": torch}
exec(translate(open(cast.__file__).read(), "cast").source(), ns)
try:
    ns["cast_reference"](a, b, z, 64)
    reference = z.tolist()
except NotImplementedError as exc:
    reference = str(exc)
print(json.dumps({"kernel": y.tolist(), "reference": reference}))
"""


def test_fp16_and_bf16_loads_cast_to_fp32_before_they_meet_are_derived(tmp_path):
    """Loads of fp16 and bf16 each cast to fp32 before they meet compute alike in Triton and torch
    (fp32), and the reference raised all the same: every load was checked, not the values that meet.
    Under TRITON_INTERPRET=1 the reference now equals the kernel; values meeting uncast still raise,
    and casts to fp16 and bf16 that meet are still not derived."""
    import torch

    from porter.kernels.triton_ref import translate, why_not
    from tests.deps import require
    from tests.helpers import run_interpreted

    require("triton")
    (tmp_path / "cast.py").write_text(CAST)
    outs = run_interpreted(_CAST_RUN, tmp_path)
    assert isinstance(outs["reference"], list), outs["reference"]
    torch.testing.assert_close(torch.tensor(outs["reference"]), torch.tensor(outs["kernel"]), rtol=0, atol=0)
    uncast = CAST.replace(
        "b = tl.abs(tl.load(b_ptr + offs, mask=m)).to(tl.float32)", "b = tl.load(b_ptr + offs, mask=m)"
    )
    uncast = uncast.replace("a = tl.load(a_ptr + offs, mask=m).to(tl.float32)", "a = -tl.load(a_ptr + offs, mask=m)")
    ns: dict = {"torch": torch}
    exec(translate(uncast, "cast").source(), ns)
    try:
        ns["cast_reference"](torch.ones(8, dtype=torch.float16), torch.ones(8, dtype=torch.bfloat16), torch.zeros(8), 8)
    except NotImplementedError as exc:
        assert "fp16 and bf16" in str(exc)
    else:
        raise AssertionError("fp16 and bf16 values meeting uncast were derived")
    halves = CAST.replace(").to(tl.float32)\n    b", ").to(tl.float16)\n    b").replace(
        ")).to(tl.float32)", ")).to(tl.bfloat16)"
    )
    assert translate(halves, "cast") is None and "fp16 and bf16" in (why_not(halves, "cast") or "")
