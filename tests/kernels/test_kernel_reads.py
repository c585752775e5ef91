"""`porter kernels`: CUDA kernels read as a C++ compiler reads them (twentieth adversarial read of
issue 24: every `__global__` function clang 18 sees in eight libraries' `.cu`/`.cuh` files,
checked against the listing)."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import _signature


def test_a_cuda_kernel_whose_void_is_spelled_as_a_template_is_listed(tmp_path):
    """vllm 0.34.0's `__global__ std::enable_if_t<(width > 0) && _typeConvert<scalar_t>::exists>
    fused_add_rms_norm_kernel(` (and its `(width == 0) || ...` twin, and
    `fused_add_rms_norm_static_fp8_quant_kernel`): a `__global__` function returns void, here
    spelled as a type that is void where it is instantiated (SFINAE). The kernels were not listed:
    the head was read with `void` only. So was C++11's trailing `auto k(...) -> void`."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <typename scalar_t, int width>\n"
        "__global__ std::enable_if_t<(width > 0) && _typeConvert<scalar_t>::exists>\n"
        "fused20(scalar_t* __restrict__ input, const scalar_t* __restrict__ weight, const float eps) {\n"
        "  input[0] = weight[0] * eps;\n}\n"
        "template <typename T>\n"
        "__global__ typename std::enable_if<std::is_same<T, float>::value, void>::type sf20(T* out, int n) {}\n"
        "__global__ __launch_bounds__(128) ::std::enable_if_t<true> qual20(int* p) {}\n"
        "__global__ auto trail20(float* out) -> void { out[0] = 1; }\n"
    )
    kernels = {k.name: k for k in scan(src).kernels}
    assert {n: (k.line, k.params) for n, k in kernels.items()} == {
        "fused20": (2, ["scalar_t* __restrict__ input", "const scalar_t* __restrict__ weight", "const float eps"]),
        "sf20": (7, ["T* out", "int n"]),
        "qual20": (8, ["int* p"]),
        "trail20": (9, ["float* out"]),
    }
    sig = _signature(kernels["fused20"], None, "fused20")
    assert (sig.params, sig.mutates) == (["input", "weight", "eps"], ["input"])
    assert _signature(kernels["trail20"], None, "trail20").mutates == ["out"]


def test_a_cuda_parameter_s_pointer_is_read_from_its_declarator(tmp_path):
    """flash-attn 2.8.3.post2's CUTLASS `template <typename Epilogue> __global__ void
    kernel_epilogue_workspace(typename Epilogue::Params params)`, beside the launcher's `using
    Epilogue = EpilogueWorkspace<Shape, kWarpCount, Array<int, Shape::kCount / (kWarpCount *
    kWarpSize)>>` (the alias it is typed as): the struct was a tensor, the `*` of a multiplication
    in the template arguments read as a pointer; so was the `*` of a default value (`int n = 2 *
    3`). An array whose extent is a name (`float x[N]`) was named after the extent, and a `const`
    array was written."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <typename Epilogue>\n"
        "__global__ void ew20(typename Epilogue::Params params, cutlass::Array<int, 4 * 2> frag, int n = 2 * 3,\n"
        "                     float x[N], const int idx[kMax], float y[4][N], int* const* slots) {\n"
        "  x[0] = idx[0]; y[0][0] = 1; int* r = slots[0]; r[0] = 1;\n}\n"
        "void run() {\n  using Epilogue = cutlass::EpilogueWorkspace<Shape, cutlass::Array<int, 128 / (4 * 32)>>;\n}\n"
    )
    (k,) = scan(src).kernels
    sig = _signature(k, None, "ew20")
    assert (sig.params, sig.kinds, sig.mutates) == (
        ["n", "x", "idx", "y"],
        {"n": "int", "x": "tensor", "idx": "tensor", "y": "tensor"},
        ["x", "y"],
    )
    assert sig.arrays == ["int* const* slots"]  # pointers, one per tensor: no tensor (twenty-fourth read)
    assert sig.structs == [
        "typename Epilogue::Params params",
        "cutlass::Array<int, 4 * 2> frag",
    ]
