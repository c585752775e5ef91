"""The thirty-first read of the scaffold writers (issue 24): each test failed on db3dd76."""

from __future__ import annotations

from porter.analysis import native_ops
from porter.kernels.inventory import scan
from porter.kernels.triton_ref import why_not

RAW_SCHEMAS = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def(R"(a(Tensor x) -> Tensor)", &a_any);
  m.def(R"sch(
    b(Tensor x,
      Tensor y) -> Tensor)sch", &b_any);
  m.def(R"(c(Tensor x) -> Tensor)");
  m.def("d(Tensor x) -> Tensor", &d_any);
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
}
"""


def test_a_schema_given_as_a_raw_string_is_read():
    # `m.def(R"(a(Tensor x) -> Tensor)", &a_any)` (DeepGEMM's and Ascend extensions' schemas are raw strings)
    # was no definition: its function, which every device runs, was lost, and `a` and `b` were said to have
    # a CUDA kernel only (`c`, defined with no function, and `d`, a plain string: the controls)
    assert ("myops", "a", "any") in native_ops.registrations(RAW_SCHEMAS)
    assert ("myops", "b", "any") in native_ops.registrations(RAW_SCHEMAS)
    assert set(native_ops.cuda_only_ops([("reg.cu", RAW_SCHEMAS)])["myops"]) == {"c"}


SCHEMA_CALLS = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def(torch::schema("a(Tensor x) -> Tensor", c10::AliasAnalysisKind::PURE_FUNCTION), &a_any);
  m.def(torch::schema(
            "myops::b(Tensor x, "
            "Tensor y) -> Tensor",
            c10::AliasAnalysisKind::CONSERVATIVE),
        b_any);
  m.def(torch::schema("c(Tensor x) -> Tensor", c10::AliasAnalysisKind::FROM_SCHEMA));
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
}
"""


def test_a_schema_given_by_torch_schema_is_read():
    # torch's `schema(const char*, c10::AliasAnalysisKind)` (intel-extension-for-pytorch's `m.def(torch::schema(
    # ..., PURE_FUNCTION), fn)`): the definition and its function were none, and `a` and `b` were said to have a
    # CUDA kernel only (`c`, defined with no function, the control)
    found = native_ops.registrations(SCHEMA_CALLS)
    assert ("myops", "a", "any") in found and ("myops", "b", "any") in found
    assert set(native_ops.cuda_only_ops([("reg.cu", SCHEMA_CALLS)])["myops"]) == {"c"}


QUOTED_CALLS = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  static const char* kMoved = R"(a moved: register it with m.impl("a", &a_cpu) in your own library)";
  m.impl("b", &b_cpu);
}
"""


def test_a_library_call_quoted_in_a_raw_string_is_none():
    # a raw string in a CPU block holding `m.impl("a", &a_cpu)` (a help text) was read as a CPU kernel of `a`,
    # an op with a CUDA kernel only, and it was not said to be (`b`'s CPU kernel, the control)
    assert native_ops.registrations(QUOTED_CALLS) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "b", "CPU"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cu", QUOTED_CALLS)])["myops"]) == {"a"}


GLOBAL_KEYS = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor x) -> Tensor");
  m.def("b(Tensor x) -> Tensor");
  m.def("c(Tensor x) -> Tensor");
  m.impl("a", torch::dispatch(::c10::DispatchKey::CUDA, &a_cuda));
  m.impl("b", ::torch::dispatch(::c10::DeviceType::CUDA, &b_cuda));
  m.impl("c", c10::DispatchKey::CUDA, &c_cuda);
}
"""


def test_a_key_named_from_the_global_namespace_is_read():
    # `::c10::DispatchKey::CUDA` was read as no key ("any", every device), so `a` and `b`, with a CUDA kernel
    # only, were not said to be (`c10::DispatchKey::CUDA`, the control)
    assert native_ops.registrations(GLOBAL_KEYS) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cu", GLOBAL_KEYS)])["myops"]) == {"a", "b", "c"}


LAYOUT_KEYS = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
  m.impl("e", &e_cuda);
}
TORCH_LIBRARY_IMPL(myops, SparseCUDA, m) { m.impl("a", &a_sparse); }
TORCH_LIBRARY_IMPL(myops, SparseCsrCUDA, m) { m.impl("b", &b_csr); }
TORCH_LIBRARY_IMPL(myops, QuantizedCUDA, m) { m.impl("c", &c_quantized); }
TORCH_LIBRARY_IMPL(myops, NestedTensorCUDA, m) { m.impl("d", &d_nested); }
TORCH_LIBRARY_IMPL(myops, SparseCPU, m) { m.impl("e", &e_sparse_cpu); }
"""


def test_an_op_whose_other_kernel_is_for_a_cuda_layout_is_cuda_only():
    # c10's `SparseCUDA`, `SparseCsrCUDA`, `QuantizedCUDA`, `NestedTensorCUDA` keys are reached by CUDA tensors
    # only, but counted as another device's: `a`-`d` were not said to be CUDA-only (`e`, with a SparseCPU
    # kernel, the control)
    assert set(native_ops.cuda_only_ops([("reg.cu", LAYOUT_KEYS)]).get("myops", {})) == {"a", "b", "c", "d"}


NO_KERNELS = b"""#include <torch/library.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
}
TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  m.impl("a", torch::autograd::autogradNotImplementedFallback());
  m.impl("b", torch::CppFunction::makeFallthrough());
  m.impl("d", &d_autograd);
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("c", torch::CppFunction::makeFallthrough());
}
"""


def test_a_fallthrough_or_autograd_s_not_implemented_fallback_is_no_kernel():
    # a fallthrough goes on to the next key and autograd's not-implemented fallback redispatches below autograd
    # (torch 2.9: an op with a CUDA kernel and such an Autograd or CPU one fails on a CPU tensor), but each was
    # read as another device's kernel: `a`-`c` were not said to be CUDA-only (`d`, whose Autograd kernel is a
    # function porter cannot see into, the control)
    assert set(native_ops.cuda_only_ops([("reg.cu", NO_KERNELS)]).get("myops", {})) == {"a", "b", "c"}


SUPERSCRIPT = (
    "__global__ void k\\u00b2(float* w, int n) { w[0] = n; }\n"
    "__global__ void plain_k(float* w, int n) { w[0] = n; }\n"
    "void go(float* w, int n) {\n"
    "  k\\u00b2<<<1, 32>>>(w, n);\n"
    "  plain_k<<<1, 32>>>(w, n);\n"
    "}\n"
)


def test_a_kernel_named_by_a_universal_character_name_of_a_digit_is_listed_with_its_launch(tmp_path):
    # `k\u00b2` is `k²` (C++17's Annex E takes U+00B2 in a name; libclang 18 declares `k²`), a name porter reads
    # when spelled in UTF-8, but only a UCN Python takes in a name was read: the kernel was listed nowhere and
    # its launch said as one of `u00b2` (`plain_k`, the control)
    (tmp_path / "k.cu").write_text(SUPERSCRIPT)
    inventory = scan(tmp_path)
    assert [(k.name, k.line, [(c.line, c.args) for c in k.calls]) for k in inventory.kernels] == [
        ("k²", 1, [(4, ["w", "n"])]),
        ("plain_k", 2, [(5, ["w", "n"])]),
    ]
    assert not any("u00b2" in p for p in inventory.problems)


def test_a_launch_of_a_kernel_whose_name_python_refuses_is_attached(tmp_path):
    # `__global__ void k²(...)` (UTF-8) was listed, but its launch `k²<<<1, 32>>>(w, n)` was dropped, unsaid:
    # a launch's name had to be a Python identifier (`ké`, the control)
    (tmp_path / "k.cu").write_text(
        "__global__ void k²(float* w, int n) { w[0] = n; }\n"
        "__global__ void ké(float* w, int n) { w[0] = n; }\n"
        "void go(float* w, int n) {\n  k²<<<1, 32>>>(w, n);\n  ké<<<1, 32>>>(w, n);\n}\n",
        encoding="utf-8",
    )
    inventory = scan(tmp_path)
    assert [(k.name, [c.line for c in k.calls]) for k in inventory.kernels] == [("k²", [4]), ("ké", [5])]


ATTRIBUTED = """__global__ void attr_k(float* x, int n) __attribute__((noinline)) { x[0] = n; }
__global__ void plain_k(float* x, int n) { x[0] = n; }
void go(float* x, int n) {
  attr_k<<<1, 32>>>(x, n);
  plain_k<<<1, 32>>>(x, n);
}
"""


def test_a_kernel_whose_parameters_an_attribute_follows_is_listed(tmp_path):
    # `__global__ void attr_k(float* x, int n) __attribute__((noinline)) {` (libclang 18: `attr_k`) was listed as
    # a kernel named `__attribute__` of the parameter `(noinline)`, `attr_k` nowhere and its launch "a name no
    # kernel porter lists has" (`plain_k`, the control)
    (tmp_path / "k.cu").write_text(ATTRIBUTED)
    inventory = scan(tmp_path)
    assert [(k.name, k.params, [c.line for c in k.calls]) for k in inventory.kernels] == [
        ("attr_k", ["float* x", "int n"], [4]),
        ("plain_k", ["float* x", "int n"], [5]),
    ]
    assert inventory.problems == []


BRACKETED = """__global__ void a_k(float* x, int n) { x[0] = n; }
__global__ void b_k(float* x, int n) { x[0] = n; }
typedef void (*kfn)(float*, int);
void go(float* x, int n, kfn* kernel_ptrs_, int idx) {
  (a_k)<<<1, 32>>>(x, n);
  kfn fp = &b_k;
  (*fp)<<<1, 32>>>(x, n);
  if (n) (a_k)<<<1, 32>>>(x, n);
  kernel_ptrs_[idx]<<<1, 32, 0>>>(x, n);
  b_k<<<1, 32>>>(x, n);
}
"""


def test_a_launch_of_a_parenthesised_name_or_of_a_table_of_kernels_is_read(tmp_path):
    # `(a_k)<<<...>>>`, `(*fp)<<<...>>>` and `kernel_ptrs_[idx]<<<...>>>` (timemachine's table of kernels) were
    # dropped, unsaid: the first two are launches of `a_k` and `b_k`, the third of a kernel porter cannot name,
    # now said (`b_k<<<`, the control)
    (tmp_path / "k.cu").write_text(BRACKETED)
    inventory = scan(tmp_path)
    assert [(k.name, [c.line for c in k.calls]) for k in inventory.kernels] == [("a_k", [5, 8]), ("b_k", [7, 10])]
    assert [p.split(", a name")[0] for p in inventory.problems] == ["k.cu:9: a launch of `kernel_ptrs_[idx]`"]


QUOTED_UNDECIDED = b"""#include <torch/library.h>
#ifdef WITH_HELP
static const char* kHelp = "register with TORCH_LIBRARY_IMPL(myops, CPU, m) { ... } in your own source";
static const char* kOld = "or torch::RegisterOperators().op(...)";
#endif
#ifdef WITH_CPU
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("b", &b_cpu); }
#endif
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); }
"""


def test_a_registration_quoted_in_an_undecided_branch_is_not_said_to_be_one():
    # a help text's `"TORCH_LIBRARY_IMPL(myops, CPU, m) ..."` (and `"...RegisterOperators()..."`) under `#ifdef
    # WITH_HELP` was said as a registration "read as compiled, so the op is not taken for CUDA-only" (`a` is; the
    # block under `#ifdef WITH_CPU`, the control)
    assert native_ops.undecided(QUOTED_UNDECIDED) == [(7, "`#ifdef WITH_CPU` of the `#if` at line 6")]


def test_a_triton_statement_porter_cannot_translate_is_placed_by_the_kernel_s_own_lines(tmp_path):
    # the TODO's "line N of the kernel" counted the lines of the text read, which holds the blank lines and
    # comments above the decorator: `tl.device_print` on the kernel's 5th line (its `def` the 1st) was "line 10"
    (tmp_path / "t.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n# a comment\n# and another\n@triton.jit\n"
        "def pr_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    x = x + 1.0\n"
        "    tl.device_print('x', x)\n"
        "    tl.store(y_ptr + offs, x, mask=offs < n)\n"
    )
    [kernel] = scan(tmp_path).kernels
    assert kernel.line == 8
    assert why_not(kernel.source, kernel.name).endswith("`tl.device_print('x', x)` (line 5 of the kernel)")


def test_a_kernel_whose_name_an_attribute_follows_is_listed(tmp_path):
    # `__global__ void a3_k [[deprecated]] (float* x, int n)` (an attribute after the declarator's name; libclang
    # 18: `a3_k`) was listed nowhere and its launch said as "a name no kernel porter lists has" (`plain_k`, the control)
    (tmp_path / "k.cu").write_text(
        "__global__ void a3_k [[deprecated]] (float* x, int n) { x[0] = n; }\n"
        "__global__ void plain_k(float* x, int n) { x[0] = n; }\n"
        "void go(float* x, int n) {\n  a3_k<<<1, 32>>>(x, n);\n  plain_k<<<1, 32>>>(x, n);\n}\n"
    )
    inventory = scan(tmp_path)
    assert [(k.name, k.params, [c.line for c in k.calls]) for k in inventory.kernels] == [
        ("a3_k", ["float* x", "int n"], [4]),
        ("plain_k", ["float* x", "int n"], [5]),
    ]
    assert inventory.problems == []


def test_a_kernel_whose_void_comes_before_global_is_listed(tmp_path):
    # natten 0.21.7's reference kernels are `void __global__ fna_reference_kernel(...)` (libclang 18: four kernels):
    # listed nowhere, their launches said as "a name no kernel porter lists has" (`plain_k`, the control)
    (tmp_path / "k.hpp").write_text(
        "template <typename T>\nvoid __global__ vg_k(T* x, int n) { x[0] = n; }\n"
        "static void __global__ svg_k(float* x, int n) { x[0] = n; }\n"
        "__global__ void plain_k(float* x, int n) { x[0] = n; }\n"
        "void go(float* x, int n) {\n  vg_k<float><<<1, 32>>>(x, n);\n  svg_k<<<1, 32>>>(x, n);\n"
        "  plain_k<<<1, 32>>>(x, n);\n}\n"
    )
    inventory = scan(tmp_path)
    assert [(k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels] == [
        ("vg_k", 2, ["T* x", "int n"], [6]),
        ("svg_k", 3, ["float* x", "int n"], [7]),
        ("plain_k", 4, ["float* x", "int n"], [8]),
    ]
    assert inventory.problems == []
