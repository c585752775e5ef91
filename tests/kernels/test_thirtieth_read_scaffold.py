"""The thirtieth read of the scaffold writers (issue 24): each test failed on 34fb428."""

from __future__ import annotations

from porter.analysis import native_ops
from porter.kernels.inventory import scan

DEVICE_TYPES = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor x) -> Tensor");
  m.def("b(Tensor x) -> Tensor");
  m.def("c(Tensor x) -> Tensor");
  m.impl("a", torch::dispatch(c10::DeviceType::CUDA, TORCH_FN(a_cuda)));
  m.impl("b", torch::dispatch(at::DeviceType::CUDA, &b_cuda));
  m.impl("c", torch::dispatch(torch::kCUDA, &c_cuda));
}
"""


def test_a_key_given_as_a_device_type_is_read(tmp_path):
    # torch's `dispatch(c10::DeviceType, fn)` maps a device type to the key of its name (torch/library.h),
    # but `c10::DeviceType::CUDA` was read as no key ("any", every device): `a` and `b` have a CUDA kernel
    # only and were not said to (`torch::kCUDA`, a DeviceType constant already read, the control)
    assert native_ops.registrations(DEVICE_TYPES) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", DEVICE_TYPES)])["myops"]) == {"a", "b", "c"}
    (tmp_path / "reg.cpp").write_bytes(DEVICE_TYPES)
    assert [(r.op, r.key) for r in scan(tmp_path).registered] == [("a", "CUDA"), ("b", "CUDA"), ("c", "CUDA")]


QUOTED = b"""#include <torch/library.h>
static const char* kHelp = "TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(\\"a\\", &a_cpu); }";
static const char* kRaw = R"doc(
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("b", &b_cpu);
}
static auto r = torch::RegisterOperators().op("myops::a", &a_any);
)doc";
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("d", [](const at::Tensor& x) { TORCH_CHECK(x.dim() > 0, "want {dims}, got }"); return x; });
  m.impl("c", &c_cpu);
}
"""


def test_a_registration_quoted_in_a_string_is_none_and_a_brace_in_one_ends_no_block(tmp_path):
    # a block in a string (a help text, a raw string of generated code) was read as a CPU registration
    # of `a` and `b`, so neither was said to be CUDA-only; a `}` in a string ended its block, and the
    # CPU kernel of `c` after it was lost: `c` was said to be CUDA-only (`d`'s lambda, the control)
    assert native_ops.registrations(QUOTED) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
        ("myops", "d", "CPU"),
        ("myops", "c", "CPU"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", QUOTED)])["myops"]) == {"a", "b"}
    (tmp_path / "reg.cpp").write_bytes(QUOTED)
    assert [(r.op, r.key) for r in scan(tmp_path).registered][:3] == [("a", "CUDA"), ("b", "CUDA"), ("c", "CUDA")]


UCN = (
    "__global__ void k\\u00f6(float* w, int n) { w[0] = n; }\n"
    "__global__ void plain_k(float* w, int n) { w[0] = n; }\n"
    'const char* kName = "k\\\\u00f6";\n'
    "void go(float* w, int n) {\n"
    "  k\\u00f6<<<1, 32>>>(w, n);\n"
    "  plain_k<<<1, 32>>>(w, n);\n"
    "}\n"
)


def test_a_kernel_named_by_a_universal_character_name_is_listed_with_its_launch(tmp_path):
    # `k\u00f6` is C++'s ASCII spelling of `kö` (libclang 18 declares `kö`): the kernel was listed nowhere
    # and its launch said as one of a kernel named `u00f6` (`plain_k`, the control; an escaped `\\u00f6`
    # in a string is no name)
    (tmp_path / "k.cu").write_text(UCN)
    inventory = scan(tmp_path)
    assert [(k.name, k.line, [(c.line, c.args) for c in k.calls]) for k in inventory.kernels] == [
        ("kö", 1, [(5, ["w", "n"])]),
        ("plain_k", 2, [(6, ["w", "n"])]),
    ]
    assert not any("u00f6" in p for p in inventory.problems)


MACRO_IN_STRING = b"""#include <torch/library.h>
#define REG(op) m.impl(#op, &op##_cpu)
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  REG(a);
  TORCH_WARN("REG(b) is gone");
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
}
"""


def test_a_registering_macro_named_in_a_string_is_not_expanded():
    # the registering macro's name in a string of a block (`"REG(b) is gone"`) was expanded there, and
    # read as a CPU registration of `b`: `b`, with a CUDA kernel only, was not said to be (`REG(a)`, the control)
    assert native_ops.registrations(MACRO_IN_STRING) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", MACRO_IN_STRING)])["myops"]) == {"b"}


TAGGED = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor x) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("b(Tensor x) -> Tensor", std::vector<at::Tag>{at::Tag::needs_fixed_stride_order});
  m.def("c(Tensor x) -> Tensor", &c_any, {at::Tag::pt2_compliant_tag});
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
}
"""


def test_a_schema_defined_with_tags_is_no_implementation():
    # torch's `def(schema, tags)` (torch-harmonics 0.8.1 writes `{at::Tag::pt2_compliant_tag}`): the tags were
    # read as an implementation every device runs, so `a` and `b`, with a CUDA kernel only, were not said to
    # be (`c`, given a function before its tags, the control)
    assert native_ops.registrations(TAGGED) == [
        ("myops", "c", "any"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", TAGGED)])["myops"]) == {"a", "b"}


EXCEPTION_SPECS = """template <typename T>
__global__ void spec_k(float* __restrict__ x, const int n) noexcept(true) { x[0] = n; }
__global__ void thr_k(float* x, int n) throw() { x[0] = n; }
template <typename T>
__global__ void req_k(T* x, int n) requires (sizeof(T) == 4) { x[0] = n; }
__global__ void plain_k(float* x, int n) noexcept { x[0] = n; }
void go(float* x, int n) {
  spec_k<float><<<1, 1>>>(x, n);
  thr_k<<<1, 1>>>(x, n);
  req_k<float><<<1, 1>>>(x, n);
  plain_k<<<1, 1>>>(x, n);
}
"""


def test_a_kernel_whose_parameters_a_noexcept_throw_or_requires_clause_follows_is_listed(tmp_path):
    # `noexcept(true)`, `throw()` and a trailing `requires (...)` after the parameters (libclang 18: each a
    # `__global__` definition of its name): listed as kernels named `noexcept`, `throw` and `requires` (of the
    # "parameters" `true` and `sizeof(T) == 4`), the kernels nowhere, their launches said to run "a name no
    # kernel porter lists has" (a bare `noexcept`, the control)
    (tmp_path / "f.cu").write_text(EXCEPTION_SPECS)
    inventory = scan(tmp_path)
    assert [(k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels] == [
        ("spec_k", 2, ["float* __restrict__ x", "const int n"], [8]),
        ("thr_k", 3, ["float* x", "int n"], [9]),
        ("req_k", 5, ["T* x", "int n"], [10]),
        ("plain_k", 6, ["float* x", "int n"], [11]),
    ]
    assert inventory.problems == []


PARENTHESIZED = """__global__ void (paren_k)(float* y, int n) { y[0] = n; }
__global__ void ( spaced_k )  (float* y) { y[0] = 1; }
__global__ void plain_k(float* y) { y[0] = 2; }
void go(float* y, int n) {
  paren_k<<<1, 32>>>(y, n);
  spaced_k<<<1, 32>>>(y);
  plain_k<<<1, 32>>>(y);
}
"""


def test_a_kernel_whose_name_is_in_parentheses_is_listed(tmp_path):
    # `__global__ void (paren_k)(float* y, int n)` declares `paren_k` (libclang 18): it was listed nowhere
    # and its launch said to run "a name no kernel porter lists has" (`plain_k`, the control)
    (tmp_path / "k.cu").write_text(PARENTHESIZED)
    inventory = scan(tmp_path)
    assert [(k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels] == [
        ("paren_k", 1, ["float* y", "int n"], [5]),
        ("spaced_k", 2, ["float* y"], [6]),
        ("plain_k", 3, ["float* y"], [7]),
    ]
    assert inventory.problems == []


CHAINED = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("c(Tensor x) -> Tensor", &c_any)
   .def("d(Tensor x) -> Tensor", &d_any)
   .def("e(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("a", &a_cpu).impl("b", &b_cpu);
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda).impl("d", &d_cuda).impl("e", &e_cuda);
}
"""


def test_calls_chained_to_a_library_s_call_are_read():
    # `Library::impl` and `def` return the library, so calls chain: only the first of a chain was read, and
    # `b` (a CPU kernel) and `d` (a kernel every device runs) were said to be CUDA-only (`e`, defined with no
    # function in a chain, the control: CUDA-only)
    assert native_ops.registrations(CHAINED) == [
        ("myops", "c", "any"),
        ("myops", "d", "any"),
        ("myops", "a", "CPU"),
        ("myops", "b", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
        ("myops", "d", "CUDA"),
        ("myops", "e", "CUDA"),
    ]
    assert set(native_ops.cuda_only_ops([("reg.cpp", CHAINED)])["myops"]) == {"e"}


EXPAND_DEFINED = b"""#include <torch/library.h>
#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) \\
  TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)

// the CUDA kernels
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("b", &b_cuda);
}
"""


def test_a_library_head_in_a_define_is_no_block_s_head():
    # vllm's `#define TORCH_LIBRARY_IMPL_EXPAND(...) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)`, with only a
    # comment before the next block: the define's head was read as that block's, its namespace the text
    # between (none), so `a`, with a CUDA kernel only, was not said to be (`b`'s block, the control)
    assert native_ops.registrations(EXPAND_DEFINED) == [("myops", "a", "CUDA"), ("myops", "b", "CUDA")]
    assert set(native_ops.cuda_only_ops([("reg.cpp", EXPAND_DEFINED)])["myops"]) == {"a", "b"}


AUTOCAST = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
}
TORCH_LIBRARY_IMPL(myops, Autocast, m) { m.impl("a", &a_autocast); }
TORCH_LIBRARY_IMPL(myops, AutocastCUDA, m) { m.impl("b", &b_autocast); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("c", &c_cpu); }
"""


def test_an_op_whose_other_kernel_is_for_autocast_is_cuda_only():
    # c10's `Autocast` key is `AutocastCUDA` (DispatchKey.h): only a CUDA tensor reaches its kernel, but it
    # was read as another device's, and xformers 0.0.28.post3's five CUDA ops with one (`silu_bw_fused`,
    # `gemm_fused_operand_sum`, ...) were not said to be CUDA-only (`c`, with a CPU kernel, the control)
    assert set(native_ops.cuda_only_ops([("reg.cpp", AUTOCAST)]).get("myops", {})) == {"a", "b"}
