"""The twenty-ninth read of the scaffold writers (issue 24): each test failed on 944c10d."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops
from porter.kernels.inventory import scan

SPLICED = (
    "// the older kernel, kept for reference: C:\\old\\\n"
    "__global__ void hidden_k(float* x) { x[0] = 1; }\n"
    "// a plain comment, the control\n"
    "__global__ void real_k(float* x, int n) { x[0] = n; }\n"
    "void go(float* x, int n) {\n"
    "  hidden_k<<<1, 1>>>(x);\n"
    "  real_k<<<1, 1>>>(x, n);\n"
    "}\n"
)


def test_a_line_comment_ending_in_a_backslash_comments_out_the_next_line(tmp_path):
    # a `//` comment whose line ends in `\` runs on over the next line (lines are spliced before
    # comments are read; libclang 18: `hidden_k` undeclared): the kernel there was listed and
    # scaffolded, and its launch attached to it
    (tmp_path / "k.cu").write_text(SPLICED)
    inventory = scan(tmp_path)
    assert [(k.name, k.line) for k in inventory.kernels] == [("real_k", 4)]
    assert [(c.line, c.args) for c in inventory.kernels[0].calls] == [(7, ["x", "n"])]
    assert any("`hidden_k`, a name no kernel porter lists has" in p for p in inventory.problems)


COMMENTED = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor x) -> Tensor");
  m.def("b(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  // m.impl("c", &c_cuda);
}
// the CPU kernel is not built yet:
// TORCH_LIBRARY_IMPL(myops, CPU, m) {
//   m.impl("a", &a_cpu);
// }
/* TORCH_LIBRARY_IMPL(myops, CompositeExplicitAutograd, m) { m.impl("b", &b_any); } */
const char* kNote = "// not a comment"; TORCH_LIBRARY_IMPL(myops, Meta, m) { m.impl("a", &a_meta); }
"""


def test_a_registration_in_a_comment_is_none(tmp_path):
    # the registration reader read comments as code: the commented-out CPU and composite blocks gave
    # `a` and `b` other devices, so lint's reader said neither was CUDA-only, and `porter kernels`
    # listed a CPU registration the file does not make (a `//` in a string, the control)
    assert native_ops.registrations(COMMENTED) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "a", "Meta"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", COMMENTED)])["myops"]) == {"a", "b"}
    (tmp_path / "reg.cpp").write_bytes(COMMENTED)
    assert [(r.op, r.key) for r in scan(tmp_path).registered] == [("a", "CUDA"), ("b", "CUDA"), ("a", "Meta")]


UNBUILT = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
}
#if 0
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("a", &a_cpu);
}
static auto old = torch::RegisterOperators().op("myops::b", &b_any);
#endif
#ifdef WITH_CPU
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("c", &c_cpu); }
#endif
"""


def test_a_registration_no_build_compiles_is_none(tmp_path):
    # `#if 0` (kept for later) around a CPU block and an old-API catch-all: read as registrations,
    # so `a` and `b` had other devices and lint's reader said neither was CUDA-only; a branch porter
    # cannot decide (`#ifdef WITH_CPU`, the build's `-D`) is the control: still read
    assert native_ops.registrations(UNBUILT) == [("myops", "a", "CUDA"), ("myops", "b", "CUDA"), ("myops", "c", "CPU")]
    assert set(native_ops.cuda_only_ops([("reg.cpp", UNBUILT)])["myops"]) == {"a", "b"}
    # a `.cpp` is the host compiler's: its `#ifndef __CUDACC__` is taken there, so still read (a `.cu`'s is not)
    host = b'#ifndef __CUDACC__\nTORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("d", &d_cpu); }\n#endif\n'
    assert native_ops.registrations(host, Path("reg.cpp")) == [("myops", "d", "CPU")]
    assert native_ops.registrations(host, Path("reg.cu")) == []


CONTINUED = b"""#include <torch/library.h>
#define DEVICE_KEY \\
    torch::kCPU
#define IMPL_KEY \\
  CUDA
#define PLAIN_KEY CUDA
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor x) -> Tensor");
  m.impl("a", DEVICE_KEY, &a_cpu);
}
TORCH_LIBRARY_IMPL(myops, PLAIN_KEY, m) { m.impl("a", &a_cuda); }
TORCH_LIBRARY_IMPL(myops, IMPL_KEY, m) { m.impl("b", &b_cuda); }
"""


def test_a_key_macro_continued_over_two_lines_is_read(tmp_path):
    # `#define DEVICE_KEY \\` then `torch::kCPU`: its body was read as `\\`, said "a macro this file
    # defines as no key porter reads" (untrue), and `b`, registered for CUDA by such a macro only, was
    # not said to be CUDA-only (`PLAIN_KEY` on one line, the control)
    assert native_ops.registrations(CONTINUED) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
    ]
    assert native_ops.cuda_only_ops([("reg.cpp", CONTINUED)]) == {
        "myops": {
            "b": "the project's op `myops::b` has a CUDA kernel only: registered for CUDA in reg.cpp, for no other device"
        }
    }
    (tmp_path / "reg.cpp").write_bytes(CONTINUED)
    assert [r.device for r in scan(tmp_path).registered] == ["CPU", "CUDA", "CUDA"]


CASTS = """
import triton
import triton.language as tl


@triton.jit
def bitcast_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(tl.int32, bitcast=True), mask=mask)


@triton.jit
def cast_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(tl.int32), mask=mask)
"""


def test_a_bitcast_is_not_derived_as_a_cast_of_values():
    # `x.to(tl.int32, bitcast=True)` keeps the bits (Triton's interpreter: 1.0 -> 1065353216) but was
    # derived as `x.to(torch.int32)`, the values (1.0 -> 1): a reference that disagrees with the kernel.
    # Now said, untranslated; a plain `.to(tl.int32)` (the control) is still derived
    from porter.kernels.triton_ref import why_not

    assert "`x.to(tl.int32, bitcast=True)` is a cast with keywords" in (why_not(CASTS, "bitcast_k") or "")
    assert why_not(CASTS, "cast_k") is None


def test_a_key_macro_with_a_comment_after_its_key_is_read(tmp_path):
    # `#define KEY CUDA /* the device */`, in the file or in a header it includes: read as "CUDA /* the
    # device */", said "a macro this file defines as no key porter reads", and `a`, `b` not CUDA-only
    (tmp_path / "keys.h").write_bytes(b"#define HDR_KEY CUDA /* the device */\n")
    source = (
        b'#include <torch/library.h>\n#include "keys.h"\n#define OWN_KEY CUDA /* own */\n'
        b'TORCH_LIBRARY_IMPL(myops, HDR_KEY, m) { m.impl("a", &a_cuda); }\n'
        b'TORCH_LIBRARY_IMPL(myops, OWN_KEY, m) { m.impl("b", &b_cuda); }\n'
    )
    (tmp_path / "reg.cpp").write_bytes(source)
    assert native_ops.registrations(source, tmp_path / "reg.cpp") == [("myops", "a", "CUDA"), ("myops", "b", "CUDA")]


def test_a_key_macro_defined_in_the_rocm_branch_is_not_the_cuda_build_s(tmp_path):
    # `#ifndef USE_ROCM` / `#define DEV_KEY CUDA` / `#else` / `#define DEV_KEY HIP`: the file's last
    # definition (HIP) was read, and in a header (`#ifdef USE_ROCM` first) its first: both ops were
    # registered for HIP, so neither was CUDA-only. A default nvcc build defines the CUDA one
    (tmp_path / "rk.h").write_bytes(b"#ifdef USE_ROCM\n#define HK HIP\n#else\n#define HK CUDA\n#endif\n")
    source = (
        b'#include <torch/library.h>\n#include "rk.h"\n'
        b"#ifndef USE_ROCM\n#define DEV_KEY CUDA\n#else\n#define DEV_KEY HIP\n#endif\n"
        b'TORCH_LIBRARY_IMPL(myops, DEV_KEY, m) { m.impl("a", &a_cuda); }\n'
        b'TORCH_LIBRARY_IMPL(myops, HK, m) { m.impl("b", &b_cuda); }\n'
    )
    (tmp_path / "reg.cpp").write_bytes(source)
    assert native_ops.registrations(source, tmp_path / "reg.cpp") == [("myops", "a", "CUDA"), ("myops", "b", "CUDA")]
