"""The twenty-sixth read's scaffold leftovers (issue 24, sleft of the twenty-seventh read): each test
failed on ec8b33c."""

from __future__ import annotations

import json
import os

import pytest
import torch
from typer.testing import CliRunner

from porter.analysis import native_ops
from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from porter.kernels.triton_ref import translate

# a key given by a macro: the file's own (`DEVICE_KEY`, `DEV`), and one it does not define
KEYED = b"""
#define DEVICE_KEY c10::DispatchKey::CUDA
#define DEV CUDA
static auto r = torch::RegisterOperators()
    .op(torch::RegisterOperators::options().schema("ts::a(Tensor x) -> Tensor").kernel<decltype(a), &a>(DEVICE_KEY))
    .op(torch::RegisterOperators::options().schema("ts::b(Tensor x) -> Tensor").kernel<decltype(b), &b>(OTHER_KEY))
    .op(torch::RegisterOperators::options().schema("ts::c(Tensor x) -> Tensor").catchAllKernel<decltype(c), &c>());
TORCH_LIBRARY_IMPL(ts, DEV, m) { m.impl("d", &d); }
TORCH_LIBRARY(ts, m) {
  m.def("e(Tensor x) -> Tensor");
  m.impl("e", DEVICE_KEY, &e);
  m.impl("f", HOST_KEY, &f);
  m.impl("g", torch::dispatch(c10::DispatchKey::CUDA, TORCH_FN(g)));
  m.def("h", h);
}
"""


def test_a_key_given_by_a_macro_is_read_where_the_file_defines_it():
    # each was "any device" (`d`'s the macro's name): `a`, `d`, `e` and `g` have a CUDA kernel only, and
    # lint said none of them; a macro the file does not define is no device porter names, never "any"
    assert native_ops.registrations(KEYED) == [
        ("ts", "a", "CUDA"),
        ("ts", "b", "unread:OTHER_KEY"),
        ("ts", "c", "any"),  # (a catch-all kernel: every device runs it)
        ("ts", "d", "CUDA"),
        ("ts", "e", "CUDA"),
        ("ts", "f", "unread:HOST_KEY"),
        ("ts", "g", "CUDA"),
        ("ts", "h", "any"),  # (`m.def(schema, fn)`: no key)
    ]
    assert sorted(native_ops.cuda_only_ops([("k.cpp", KEYED)])["ts"]) == ["a", "d", "e", "g"]


# torch-sparse 0.6.18's shape: ops registered in host `.cpp` files with the old API, the kernels in `.cu`
SPMM_CPP = """
#include <torch/script.h>
torch::Tensor spmm_sum(torch::Tensor x) { return spmm_fw(x); }
static auto registry = torch::RegisterOperators()
                           .op("torch_sparse::spmm_sum", &spmm_sum)
                           .op("torch_sparse::spmm_mean", &spmm_mean);
"""
FUSED_CU = """
#define KEY c10::DispatchKey::CUDA
__global__ void fused_kernel(float* x, int n) {}
static auto registry = torch::RegisterOperators().op(
    torch::RegisterOperators::options().schema("torch_sparse::fused(Tensor x) -> Tensor")
        .kernel<decltype(fused), &fused>(KEY));
"""


def test_the_listing_names_the_ops_lint_reads(tmp_path, monkeypatch):
    # `porter kernels` listed no op of a host `.cpp` (torch-sparse's 21) and read no `RegisterOperators`
    # op as a `.cu` kernel's binding; lint read them all (`native_ops`)
    (tmp_path / "csrc" / "cuda").mkdir(parents=True)
    (tmp_path / "csrc" / "spmm.cpp").write_text(SPMM_CPP)
    (tmp_path / "csrc" / "cuda" / "fused.cu").write_text(FUSED_CU)
    inv = scan(tmp_path)
    (kernel,) = inv.kernels
    assert kernel.detail == "__global__; binds: fused"
    listed = sorted((r.path, r.namespace, r.op, r.key) for r in inv.registered)
    monkeypatch.chdir(tmp_path)  # (lint's reader: names from the working folder)
    read = sorted(
        (name, *registration)
        for name, source in native_ops.read(
            [os.path.join("csrc", "spmm.cpp"), os.path.join("csrc", "cuda", "fused.cu")]
        )
        for registration in native_ops.registrations(source)
    )
    assert (
        listed
        == read
        == [
            ("csrc/cuda/fused.cu", "torch_sparse", "fused", "CUDA"),
            ("csrc/spmm.cpp", "torch_sparse", "spmm_mean", "any"),
            ("csrc/spmm.cpp", "torch_sparse", "spmm_sum", "any"),
        ]
    )
    document = json.loads(CliRunner().invoke(app, ["kernels", str(tmp_path), "--json"]).stdout)
    assert document["registered"] == [
        {"op": "torch_sparse::fused", "device": "CUDA", "path": "csrc/cuda/fused.cu"},
        {"op": "torch_sparse::spmm_sum", "device": "any device", "path": "csrc/spmm.cpp"},
        {"op": "torch_sparse::spmm_mean", "device": "any device", "path": "csrc/spmm.cpp"},
    ]
    table = CliRunner().invoke(app, ["kernels", str(tmp_path)], env={"COLUMNS": "200"}).stdout
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table.splitlines() if "torch_sparse::" in line]
    assert rows == [
        ["torch_sparse::fused", "CUDA", "csrc/cuda/fused.cu"],
        ["torch_sparse::spmm_sum", "any device", "csrc/spmm.cpp"],
        ["torch_sparse::spmm_mean", "any device", "csrc/spmm.cpp"],
    ]
    assert table.rstrip().endswith("3 op registration(s)")


WRAPPED = """
import torch
import triton
import triton.language as tl
from torch.library import wrap_triton


@triton.jit
def k_a(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def k_b(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def k_c(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - 1, mask=offs < n)


@triton.jit
def k_d(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - 2, mask=offs < n)


KERNELS = {"c": wrap_triton(k_c)}


def by_tuple(x):
    launch, n = wrap_triton(k_a), x.numel()
    launch[(1,)](x, n, BLOCK=128)


class Op:
    def __init__(self):
        self.launch = wrap_triton(k_b)

    def run(self, x):
        self.launch[(1,)](x, x.numel(), BLOCK=64)


def by_container(x, op):
    KERNELS[op][(1,)](x, x.numel(), BLOCK=32)


def unpaired(x, pair):
    first, *rest = wrap_triton(k_d), pair
    first[(1,)](x, x.numel(), BLOCK=16)
"""


def test_a_wrapped_kernel_is_followed_through_a_tuple_an_attribute_and_a_container(tmp_path):
    # `launch, n = wrap_triton(k_a), ...`, `self.launch = wrap_triton(k_b)` and `{"c": wrap_triton(k_c)}`:
    # each kernel was listed with no launch, unsaid; a tuple porter cannot pair is said
    (tmp_path / "t.py").write_text(WRAPPED.lstrip("\n"))
    inv = scan(tmp_path)
    kernels = {k.name: k for k in inv.kernels}
    assert [c.describe() for c in kernels["k_a"].calls] == ["t.py:36 (x, n, BLOCK=128)"]
    assert [c.describe() for c in kernels["k_b"].calls] == ["t.py:44 (x, x.numel(), BLOCK=64)"]
    assert kernels["k_c"].unresolved == [
        "launched as `KERNELS[...][...](...)` at t.py:48, one of the kernels `KERNELS` holds, picked at run "
        "time: its arguments are not read as this kernel's"
    ]
    assert kernels["k_d"].calls == []
    assert inv.problems == [
        "t.py:52: `first, *rest = wrap_triton(k_d), pair` binds a kernel's `wrap_triton(...)` to a tuple porter "
        "cannot pair with its value (a starred target, a value of another length or built at run time): the "
        "launches of its names are not read"
    ]


KERNEL = (
    "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef {name}(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
)
RUN_TIME = "from pkg import ops\n\n\ndef run(x, name):\n    getattr(ops, name)[(1,)](x, x.numel(), BLOCK=32)\n"


@pytest.mark.parametrize(
    ("ops", "runs"),
    [
        ("from .kern import k_a as ka\n", ["k_a"]),
        ("from .kern import *\nfrom .more import *\n", ["k_a", "k_b", "k_c"]),
    ],
)
def test_a_module_that_only_imports_its_kernels_is_read(tmp_path, ops, runs):
    # `pkg/ops.py` spells no kernel's token (no `triton`, no `[`): it was not parsed, and
    # `getattr(ops, name)[grid](x)` was a note that porter "finds no Triton kernel that module defines
    # or imports"; a star import was read as none
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(KERNEL.format(name="k_a") + "\n\n" + KERNEL.format(name="k_b"))
    (tmp_path / "pkg" / "more.py").write_text(KERNEL.format(name="k_c"))
    (tmp_path / "pkg" / "ops.py").write_text(ops)
    (tmp_path / "pkg" / "use.py").write_text(RUN_TIME)
    inv = scan(tmp_path)
    assert sorted(k.name for k in inv.kernels if k.unresolved) == runs
    assert inv.problems == []


# nerfacc 0.5.3's scan: a template type parameter taken by value, deduced from what each launch passes
DEDUCED = """
template <typename T, typename DataIteratorT, typename Op>
__global__ void scan_kernel(DataIteratorT tgt_, DataIteratorT src_, T init, Op op, int n) {}
void launch(torch::Tensor outputs, torch::Tensor inputs, int n) {
  scan_kernel<float><<<1, 1>>>(
      thrust::make_reverse_iterator(outputs.data_ptr<float>() + n),
      thrust::make_reverse_iterator((inputs * outputs).data_ptr<float>() + n), 0.f, std::plus<float>(), n);
  scan_kernel<float><<<1, 1>>>(outputs.data_ptr<float>(), inputs.data_ptr<float>(), 1.f, std::multiplies<float>(), n);
}
"""


def test_a_template_type_is_deduced_from_the_pointers_the_launches_pass(tmp_path):
    # `DataIteratorT tgt_` was a float "no launch found gives it" (its make_inputs gave it 256); what a
    # launch passes there is a tensor's data (or an iterator over it); `Op op` is deduced from an argument
    # porter does not read the type of, said with it
    (tmp_path / "k.cu").write_text(DEDUCED)
    inv = scan(tmp_path)
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    op = (out / "scan_kernel_op.py").read_text()
    assert "def scan_kernel(tgt: torch.Tensor, src: torch.Tensor, init: float, op: float, n: int)" in op
    assert "DataIteratorT" not in op
    assert (
        "# TODO(porter): `Op op` is of one of the kernel's template types, taken as a float (its launches deduce it "
        "from `std::plus<float>()`, `std::multiplies<float>()`, whose type porter does not read): check its type"
    ) in op


def test_make_inputs_binds_a_tensor_before_a_number_sized_from_it(tmp_path):
    # `n = x.numel()` came before `x = torch.randn(...)`: make_inputs raised NameError
    (tmp_path / "k.cu").write_text(
        "__global__ void k(int n, float* x) { x[0] = n; }\n"
        "void launch(torch::Tensor x) {\n  k<<<1, 1>>>(x.numel(), x.data_ptr<float>());\n}\n"
    )
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    namespace: dict = {}
    text = (out / "test_k_xla_parity.py").read_text()
    exec(
        compile(text[text.index("def make_inputs") : text.index("\n\n\n", text.index("def make_inputs"))], "t", "exec"),
        {"torch": torch},
        namespace,
    )
    n, x = namespace["make_inputs"]("cpu")
    assert n == x.numel() == 1024


MIX = """import triton
import triton.language as tl


@triton.jit
def mix(x_ptr, y_ptr, z_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x * s + y, mask=mask)
"""


def test_a_value_times_a_float_argument_is_no_half_where_it_meets_another():
    # a compiled kernel computes an fp16 `x` times a float argument `s` in fp32 (the argument is an
    # fp32 tensor), so `x * s + y` of a bf16 `y` mixes no halves; `x * s` was still counted as fp16
    # and the reference raised "fp16 and bf16 tensors meet". Of an int `s` it is fp16: still raised
    ns: dict = {"torch": torch}
    exec(translate(MIX, "mix").source(), ns)
    x, y = torch.linspace(-3, 3, 64).half(), torch.linspace(-1, 2, 64).bfloat16()
    z = torch.zeros(64)
    ns["mix_reference"](x, y, z, 64, 0.3)
    torch.testing.assert_close(z, x.float() * torch.tensor(0.3) + y.float(), rtol=0, atol=0)
    with pytest.raises(NotImplementedError, match="fp16 and bf16"):
        ns["mix_reference"](x, y, z, 64, 3)
