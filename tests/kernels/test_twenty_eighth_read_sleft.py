"""The twenty-seventh read's scaffold leftovers (issue 24, sleft of the twenty-eighth read): each test
failed on 110255d."""

from __future__ import annotations

from pathlib import Path

import torch

from porter.analysis import native_ops
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

# flash-attn's form: a macro that ends at the kernel's parameters, its body written after each use
FLASH = """
#define KERNEL_PARAM_MODIFIER
#define DEFINE_FLASH_FORWARD_KERNEL(kernelName, ...) \\
template<typename Kernel_traits, __VA_ARGS__> \\
__global__ void kernelName(KERNEL_PARAM_MODIFIER const float* q, float* o, int n)

DEFINE_FLASH_FORWARD_KERNEL(flash_fwd_kernel, bool Is_dropout, bool Is_causal) {
    int i = threadIdx.x;
    if (i < n) o[i] = q[i];
}

struct Traits { static constexpr int kHeadDim = 64; };

void run(float* q, float* o, int n) {
    auto kernel = &flash_fwd_kernel<Traits, true, false>;
    kernel<<<1, 256>>>(q, o, n);
}
"""


def test_a_kernel_whose_macro_ends_at_its_parameters_is_attached_to_its_launch(tmp_path):
    # the kernel was listed with no body (the macro ends at `(...)`, the `{...}` follows the use), so
    # no launch was attached and the launch's note said no kernel of that name is listed
    (tmp_path / "fa.cu").write_text(FLASH)
    inv = scan(tmp_path, limit=None)
    (k,) = inv.kernels
    assert k.name == "flash_fwd_kernel"
    assert "o[i] = q[i];" in k.source
    assert [c.line for c in k.calls] == [16]
    assert not [p for p in inv.problems if "flash_fwd_kernel" in p]


# a comparison in parentheses among a pointed-to kernel's template arguments, and a launch's own
COMPARED = """
constexpr int X = 256;
template <typename T, bool Big, int N>
__global__ void fk(T* x, int n) { if (Big && threadIdx.x < n) x[threadIdx.x] *= N; }

void run(float* x, int n) {
    auto kernel = &fk<float, (X > 128), 2>;
    kernel<<<1, 256>>>(x, n);
    fk<float, (X > 128), 4><<<1, 256>>>(x, n);
}
"""


def test_a_comparison_in_parentheses_among_template_arguments_is_no_bracket(tmp_path):
    # the `>` of `(X > 128)` closed the argument list: the pointer's launch was a note ("a name no
    # kernel porter lists has"), and the direct launch's template arguments were `128), 4`
    (tmp_path / "fk.cu").write_text(COMPARED)
    inv = scan(tmp_path, limit=None)
    (k,) = inv.kernels
    assert [(c.line, c.template) for c in k.calls] == [
        (8, ["float", "(X > 128)", "2"]),
        (9, ["float", "(X > 128)", "4"]),
    ]
    assert not inv.problems


# integer tensors of no fixed-width type (LP64's), an accessor of int64_t, a pointer of a template type
INTS = """
__global__ void ka(const long* l, const size_t* s, float* out, int n) { out[0] = l[0] + s[0] + n; }
__global__ void kb(torch::PackedTensorAccessor32<int64_t, 2> a, torch::PackedTensorAccessor32<float, 3> b) {
  b[0][0][0] = a[0][0];
}
template <typename T>
__global__ void kd(T* x, int n) { x[threadIdx.x] = n; }
void run(torch::Tensor t, torch::Tensor u) {
  ka<<<1, 256>>>(t.data_ptr<long>(), (size_t*)t.data_ptr(), u.data_ptr<float>(), 3);
  kb<<<1, 1>>>(t.packed_accessor32<int64_t, 2>(), u.packed_accessor32<float, 3>());
  kd<<<1, 1>>>(t.data_ptr<int64_t>(), 3);
}
"""


def test_make_inputs_follows_the_integer_types_and_ranks_the_file_gives(tmp_path):
    # `long*`, `size_t*`, an accessor of `int64_t` and `T*` of `data_ptr<int64_t>()` were float tensors,
    # and an accessor of rank 3 a tensor of rank 2 (libclang, x86_64-linux: long 8 bytes, size_t unsigned 8)
    (tmp_path / "k.cu").write_text(INTS)
    write_scaffolds(scan(tmp_path, limit=None), tmp_path / "out", "xla")
    made = {n: _inputs(tmp_path / "out" / f"test_{n}_xla_parity.py") for n in ("ka", "kb", "kd")}
    assert [(t.dtype, t.shape) for t in made["ka"][:3]] == [
        (torch.int64, (4, 256)),
        (torch.uint64, (4, 256)),
        (torch.float32, (4, 256)),
    ]
    assert [(t.dtype, t.shape) for t in made["kb"]] == [(torch.int64, (4, 256)), (torch.float32, (4, 16, 16))]
    assert made["kd"][0].dtype == torch.int64


def _inputs(test: Path) -> list:
    """What a written test's `make_inputs()` returns (its function run as written)."""
    text = test.read_text()
    start = text.index("def make_inputs")
    space: dict = {"torch": torch}
    exec(compile(text[start : text.index("\n\n\n", start)], str(test), "exec"), space)
    return space["make_inputs"]("cpu")


# a key given by a macro of a header the file includes (and one of a header that header includes)
KEYS_H = b'#pragma once\n#include "more/dev.h"\n#define DEVICE_KEY c10::DispatchKey::CUDA\n'
DEV_H = b"#define DEV CUDA\n"
REGISTERS = b"""
#include "keys.h"
#include "absent.h"
TORCH_LIBRARY(ts, m) {
  m.def("a(Tensor x) -> Tensor");
  m.impl("a", DEVICE_KEY, &a);
  m.impl("b", OTHER_KEY, &b);
}
TORCH_LIBRARY_IMPL(ts, DEV, m) { m.impl("c", &c); }
"""


def test_a_key_given_by_a_macro_of_an_included_header_is_read(tmp_path, monkeypatch):
    # each macro of a header was "not read" (a macro this file does not define), and lint took
    # `ts::a` and `ts::c`, with a CUDA kernel only, for ops of some other device too
    (tmp_path / "more").mkdir()
    (tmp_path / "keys.h").write_bytes(KEYS_H)
    (tmp_path / "more" / "dev.h").write_bytes(DEV_H)
    (tmp_path / "ops.cu").write_bytes(REGISTERS)
    monkeypatch.chdir(tmp_path)  # (lint's reader: the sources named from the working folder)
    only = native_ops.cuda_only_ops(native_ops.read(["ops.cu"]))
    assert sorted(only["ts"]) == ["a", "c"]
    devices = {r.name: r.device for r in scan(tmp_path, limit=None).registered}
    assert devices == {
        "ts::a": "CUDA",
        "ts::b": "not read: `OTHER_KEY`, a macro this file does not define",
        "ts::c": "CUDA",
    }
    got = native_ops.registrations(REGISTERS, tmp_path / "ops.cu")
    assert sorted(got) == [("ts", "a", "CUDA"), ("ts", "b", native_ops.UNREAD + "OTHER_KEY"), ("ts", "c", "CUDA")]
    # (no file given: its own `#define`s only)
    assert native_ops.registrations(REGISTERS) == [
        ("ts", "a", native_ops.UNREAD + "DEVICE_KEY"),
        ("ts", "b", native_ops.UNREAD + "OTHER_KEY"),
        ("ts", "c", native_ops.UNREAD + "DEV"),
    ]


def test_a_launch_of_a_kernel_named_past_ascii_is_attached(tmp_path):
    # `ké<<<1, 1>>>(x, 3)` was dropped: neither attached to the listed kernel `ké` nor said
    source = (
        "__global__ void k\u00e9(float* x, int n) { x[0] = n; }\nvoid run(float* x) {\n  k\u00e9<<<1, 1>>>(x, 3);\n}\n"
    )
    (tmp_path / "k.cu").write_text(source, encoding="utf-8")
    inv = scan(tmp_path, limit=None)
    (k,) = inv.kernels
    assert [(c.line, c.args) for c in k.calls] == [(3, ["x", "3"])]
    assert not inv.problems
