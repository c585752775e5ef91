"""The twenty-third read's leftover of the scaffold writers ("grid", issue 24): failed on 8a55a6a."""

from __future__ import annotations


import torch

from porter.kernels.triton_ref import translate, why_not
from tests.deps import require
from tests.helpers import run_interpreted

UNMASKED = """import triton
import triton.language as tl


@triton.jit
def twice(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)
"""

# the kernel under Triton's interpreter, 2 programs of 32 lanes over 128 elements, and the derived
# reference (where there is one) on the same inputs
_RUN = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import unmasked
from porter.kernels.triton_ref import translate
x = torch.arange(1.0, 129.0)
outs = {}
y = torch.zeros(128)
unmasked.twice[(2,)](x, y, BLOCK=32)
outs["kernel"] = y.tolist()
derived = translate(open(unmasked.__file__).read(), "twice")
if derived is not None:
    ns = {"torch": torch}
    exec(derived.source(), ns)
    y = torch.zeros(128)
    ns["twice_reference"](x, y)
    outs["reference"] = y.tolist()
print(json.dumps(outs))
"""


def test_an_unmasked_kernel_whose_grid_may_cover_part_of_the_tensor_is_not_derived(tmp_path):
    """An unmasked kernel reads and writes its grid's lanes (grid × BLOCK, the launch's); its
    "derived" reference took whole-tensor views and wrote all 128 elements where the kernel (two
    programs of 32) wrote 64 (tfuzz3 seed 475). Run against the kernel under TRITON_INTERPRET=1."""
    require("triton")
    (tmp_path / "unmasked.py").write_text(UNMASKED)
    outs = run_interpreted(_RUN, tmp_path)
    kernel = torch.tensor(outs["kernel"])
    assert kernel[:64].eq(torch.arange(1.0, 65.0) * 2).all() and not kernel[64:].any()  # the kernel's 64 lanes
    if "reference" in outs:  # 8a55a6a: derived, 128 elements written
        torch.testing.assert_close(torch.tensor(outs["reference"]), kernel, rtol=0, atol=0)
    assert "grid" in (why_not(UNMASKED, "twice") or "")


def test_a_kernel_masked_by_its_bound_is_still_derived():
    source = UNMASKED.replace("BLOCK: tl.constexpr", "n, BLOCK: tl.constexpr").replace(
        "tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)",
        "tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)",
    )
    derived = translate(source, "twice")
    assert derived is not None, why_not(source, "twice")
    ns: dict = {"torch": torch}
    exec(derived.source(), ns)
    x, y = torch.arange(1.0, 129.0), torch.zeros(128)
    ns["twice_reference"](x, y, 100)
    torch.testing.assert_close(y, torch.cat([x[:100] * 2, torch.zeros(28)]), rtol=0, atol=0)


def _listed(tmp_path, source):
    from porter.kernels.inventory import scan

    (tmp_path / "k.cu").write_text(source)
    return [(k.name, k.line) for k in scan(tmp_path).kernels]


def test_a_macro_of_global_void_is_read_as_the_compiler_reads_it(tmp_path):
    """`#define K __global__ void`: the `#define` line's own `__global__ void` made the next function,
    a host one, a kernel, and the kernels `K one(` and `K two(` were not listed."""
    source = (
        "#define K __global__ void\n"
        "static int helper(int a) { return a; }\n"
        "K one(float* x) { x[0] = 1; }\n"
        "K two(float* x) { x[0] = helper(2); }\n"
    )
    assert _listed(tmp_path, source) == [("one", 3), ("two", 4)]


def test_a_macro_of_global_undefined_then_defined_empty_declares_a_host_function(tmp_path):
    """After `#undef G` and `#define G` (empty), `G void h(` is a host function: it was listed."""
    source = (
        "#define G __global__\n"
        "G void f(float* x) { x[0] = 1; }\n"
        "#undef G\n"
        "#define G\n"
        "G void h(float* x) { x[0] = 2; }\n"
        "#undef G\n"
        "#define G __global__\n"
        "G void g(float* x) { x[0] = 3; }\n"
    )
    assert _listed(tmp_path, source) == [("f", 2), ("g", 8)]
