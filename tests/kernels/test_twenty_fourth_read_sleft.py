"""The twenty-third read's scaffold leftovers, closed by the twenty-fourth read's "sleft" (issue 24):
each failed on 9d8198a."""

from __future__ import annotations

import os

from porter.kernels.inventory import scan

HEADER = """#pragma once
__global__ void scale_kernel(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * 2.0f;
}
"""
LAUNCH = """#include "k.h"
void run(float* o, const float* x, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(o, x, n); }
"""


def test_a_header_the_tree_holds_under_two_names_is_read_once(tmp_path):
    """A link to a kernel header beside it (and to a .cu) is one file to the compiler: its kernel was
    listed once per name, each given every launch (two scaffolds of one kernel)."""
    (tmp_path / "k.h").write_text(HEADER)
    (tmp_path / "a.cu").write_text(LAUNCH)
    os.symlink("k.h", tmp_path / "alias.h")
    os.symlink("a.cu", tmp_path / "a_link.cu")
    kernels = [(k.name, k.path, len(k.calls)) for k in scan(tmp_path).kernels]
    assert kernels == [("scale_kernel", "k.h", 1)]


def _kernels_of(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return sorted((k.name, k.path, k.line) for k in scan(tmp_path, limit=None).kernels)


def test_a_macro_of_global_static_void_is_read_in_the_file_and_from_a_header(tmp_path):
    """`#define K __global__ static void` (words between `__global__` and `void`): `K k(` was no
    kernel, and nothing said; libclang lists both (its CUDA attribute on each)."""
    files = {
        "g.h": "#pragma once\n#define HK __global__ static __launch_bounds__(128) void\n",
        "a.cu": '#include "g.h"\n#define K __global__ static void\nK one(float* x) { }\nHK two(float* x, int n) { }\n',
    }
    assert _kernels_of(tmp_path, files) == [("one", "a.cu", 3), ("two", "a.cu", 4)]


def test_an_undef_of_a_macro_of_global_in_another_header_is_followed(tmp_path):
    """A header's `#undef G` / `#define G` (empty, or `__host__ __device__`) makes `G void h(` a host
    function after its `#include`, whether `G` came from a header or the file: it was listed as a
    kernel (`#undef` was read in the file only). libclang lists `k1` and `k3` only."""
    files = {
        "g.h": "#pragma once\n#define G __global__\n",
        "u.h": "#pragma once\n#undef G\n#define G\n",
        "w.h": "#pragma once\n#undef W\n#define W __host__ __device__\n",
        "inner.h": '#pragma once\n#include "u.h"\n',
        "a.cu": '#include "g.h"\nG void k1(float* x) { }\n#include "inner.h"\nG void h(float* x) { }\n'
        '#define W __global__ static\nW void k3(float* x) { }\n#include "w.h"\nW void h2(float* x) { }\n',
    }
    assert _kernels_of(tmp_path, files) == [("k1", "a.cu", 2), ("k3", "a.cu", 6)]


MASKED = """import triton
import triton.language as tl


@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
"""

# the kernel under Triton's interpreter, one program of 32 lanes over n = 100, and the derived reference
_SHORT_GRID = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import masked
from porter.kernels.triton_ref import translate
x, y, z = torch.arange(1.0, 101.0), torch.zeros(100), torch.zeros(100)
masked.twice[(1,)](x, y, 100, BLOCK=32)
ns = {"torch": torch}
exec(translate(open(masked.__file__).read(), "twice").source(), ns)
ns["twice_reference"](x, z, 100)
print(json.dumps({"kernel": int(y.count_nonzero()), "reference": int(z.count_nonzero())}))
"""


def test_a_masked_reference_says_it_takes_the_grid_to_cover_its_bound(tmp_path):
    """A masked kernel writes its grid's lanes below `n`; its reference writes `[:n]`, whatever the
    launch's grid (one program of 32 over 100 elements: the kernel 32, the reference 100, under
    TRITON_INTERPRET=1). The op never receives the grid, so the reference says the assumption where
    it is written (it said nothing)."""
    from porter.kernels.triton_ref import translate
    from tests.deps import require
    from tests.helpers import run_interpreted

    require("triton")
    (tmp_path / "masked.py").write_text(MASKED)
    assert run_interpreted(_SHORT_GRID, tmp_path) == {"kernel": 32, "reference": 100}
    source = translate(MASKED, "twice").source()
    todo = " ".join(line.strip(" #") for line in source.splitlines() if line.lstrip().startswith("#"))
    assert "TODO(porter)" in todo and "triton.cdiv(n, BLOCK)" in todo and "grid" in todo


MIX = """import triton
import triton.language as tl


@triton.jit
def mix(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(a_ptr + offs, mask=m) * tl.load(b_ptr + offs, mask=m), mask=m)
"""

# an fp16 times a bf16 load under Triton's interpreter (which computes it as a compiled kernel does:
# `computation_type_impl`), and the derived reference on the same tensors, or why it raised
_HALF_MIX = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import mix
from porter.kernels.triton_ref import translate
a = torch.linspace(0.1, 3.3, 64).to(torch.float16)
b = torch.linspace(0.7, 5.1, 64).to(torch.bfloat16)
y, z = torch.zeros(64), torch.zeros(64)
mix.mix[(1,)](a, b, y, 64, BLOCK=64)
ns = {"torch": torch}
exec(translate(open(mix.__file__).read(), "mix").source(), ns)
try:
    ns["mix_reference"](a, b, z, 64)
    reference = z.tolist()
except NotImplementedError as exc:
    reference = str(exc)
print(json.dumps({"kernel": y.tolist(), "fp16": (a * b.half()).float().tolist(), "reference": reference}))
"""


def test_fp16_and_bf16_meeting_are_not_derived_as_torch_mixes_them(tmp_path):
    """Triton computes fp16 * bf16 in fp16 (its rule 3 comes before bf16's), torch in fp32: the
    derived reference was 0.0078 apart from the kernel under TRITON_INTERPRET=1 (which agrees with
    the compiler here). Loads of both (known only at the call) raise, saying why; casts to both are
    not derived."""
    import torch

    from porter.kernels.triton_ref import translate, why_not
    from tests.deps import require
    from tests.helpers import run_interpreted

    require("triton")
    (tmp_path / "mix.py").write_text(MIX)
    outs = run_interpreted(_HALF_MIX, tmp_path)
    assert outs["kernel"] == outs["fp16"]  # the kernel's product is fp16's
    if isinstance(outs["reference"], list):  # 9d8198a: fp32's product
        torch.testing.assert_close(torch.tensor(outs["reference"]), torch.tensor(outs["kernel"]), rtol=0, atol=0)
    assert "fp16" in outs["reference"] and "bf16" in outs["reference"]
    same = {"torch": torch}
    exec(translate(MIX, "mix").source(), same)
    a, z = torch.ones(8, dtype=torch.bfloat16), torch.zeros(8)
    same["mix_reference"](a, a, z, 8)  # one half type: derived as before
    assert z.eq(1).all()
    casts = MIX.replace("mask=m) * tl.load(b_ptr", "mask=m).to(tl.float16) * tl.load(b_ptr").replace(
        "b_ptr + offs, mask=m)", "b_ptr + offs, mask=m).to(tl.bfloat16)"
    )
    assert translate(casts, "mix") is None and "fp16 and bf16" in (why_not(casts, "mix") or "")


MUL = """import triton
import triton.language as tl


@triton.jit
def mul(x_ptr, y_ptr, k, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m).to(tl.int8) * k + 100, mask=m)
"""


def test_an_int_argument_equal_to_1_is_weak_as_the_compiled_kernel_takes_it():
    """Triton compiles an int argument equal to 1 as a constexpr (`specialize_impl`: `arg == 1` ->
    `("constexpr", 1)`), a weak number, unless `do_not_specialize` names it: `x.to(tl.int8) * k + 100`
    stays int8 (and wraps) for k = 1, int32 for k = 7. The reference made it int32 for both. The
    interpreter types every int as i32, so this follows Triton's source, read here."""
    import inspect

    import torch

    from porter.kernels.triton_ref import translate
    from tests.deps import require

    require("triton")
    from triton.runtime import jit

    assert "arg == 1 and specialize_value" in inspect.getsource(jit.create_specialize_impl)
    x = torch.arange(20.0, 84.0)
    for source, k, want in [
        (MUL, 1, (x.to(torch.int8) * 1 + 100).to(torch.int8)),  # int8 wraps: 120 + 100 is -36
        (MUL, 7, x.to(torch.int32) * 7 + 100),
        (MUL.replace("@triton.jit", '@triton.jit(do_not_specialize=["k"])'), 1, x.to(torch.int32) + 100),
    ]:
        ns: dict = {"torch": torch}
        exec(translate(source, "mul").source(), ns)
        y = torch.zeros(64)
        ns["mul_reference"](x, y, k, 64)
        torch.testing.assert_close(y, want.float(), rtol=0, atol=0)


def test_a_cu_files_headers_are_read_once_for_all_its_readers(tmp_path, monkeypatch):
    """A `.cu` whose kernels use a header's macro of `__global__`, its alias of `void` and its type
    alias read the header once per reader (macros, `void` aliases, parameters): three times."""
    from pathlib import Path

    from porter.kernels import inventory

    (tmp_path / "defs.h").write_text("#pragma once\n#define G __global__\ntypedef void V;\ntypedef float real;\n")
    cu = tmp_path / "a.cu"
    cu.write_text('#include "defs.h"\nG void k1(real* x) { }\n__global__ V k2(real* y) { }\n')
    reads: list[str] = []
    real_read = inventory.read_regular

    def counted(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(inventory, "read_regular", counted)
    inv = inventory.Inventory()
    search = inventory._Search(tmp_path, (), frozenset({"G"}))
    inventory._scan_cuda(cu, "a.cu", inv, None, search)
    assert sorted(k.name for k in inv.kernels) == ["k1", "k2"]
    assert [k.aliases for k in inv.kernels] == [{"real": "float"}] * 2  # the header's alias, read
    assert reads.count("defs.h") == 1, reads
