"""The leftovers of the twenty-first read of the scaffold writers, closed in the twenty-second
("sleft", issue 24): each test failed on c17e310."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

KERNEL = """import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)
"""


def _package(tmp_path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_triton_launch_through_an_imported_module_s_attribute_is_a_call_of_its_kernel(tmp_path):
    # `ops.scale[grid](...)`: no call evidence, so `alpha` was typed by its name (a float by
    # guess) and make_inputs gave `n = 256` under a TODO, though the launch shows both
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ops/__init__.py": "",
            "pkg/ops/scale.py": KERNEL,
            "pkg/use.py": "from .ops import scale as ops\n\ndef run(x, out):\n"
            "    ops.scale[(1,)](x, out, x.numel(), 0.5, BLOCK=64)\n",
            "pkg/other.py": "import pkg.ops.scale as kernels\n\ndef run(x, out):\n"
            "    kernels.scale[(1,)](x, out, out.numel(), 2, BLOCK=64)\n",
        },
    )
    inv = scan(tmp_path)
    (k,) = inv.kernels
    assert sorted((c.path, c.line) for c in k.calls) == [("pkg/other.py", 4), ("pkg/use.py", 4)]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    test = (out / "test_scale_xla_parity.py").read_text()
    assert "n = out_ptr.numel()  # as the launch at pkg/other.py:4 passes it" in test
    assert "alpha: int" in (out / "scale_op.py").read_text()  # the first launch read passes `2`


def test_an_attribute_launch_runs_the_module_it_names_not_the_file_s_own_kernel_of_that_name(tmp_path):
    # a file that defines `scale` and launches `fast.scale[...]` of another module: the launch is
    # that module's kernel's
    other = KERNEL.replace("alpha, BLOCK", "alpha, beta, BLOCK")
    _package(
        tmp_path,
        {
            "fast.py": other,
            "main.py": KERNEL + "\nimport fast\n\ndef run(x, out):\n"
            "    fast.scale[(1,)](x, out, x.numel(), 2.0, 3.0, BLOCK=64)\n",
        },
    )
    calls = {k.path: [c.line for c in k.calls] for k in scan(tmp_path).kernels}
    assert calls == {"fast.py": [13], "main.py": []}


def test_a_launch_through_self_reads_the_kernel_assigned_to_it_or_says_it_cannot(tmp_path):
    # `self._kernel = scale` then `self._kernel[grid](...)`: a call of `scale`; `self.k[grid]`
    # never assigned here gives its kernel's scaffold a TODO that says so, not silence
    text = KERNEL + (
        "\n\nclass Op:\n    def __init__(self):\n        self._kernel = scale\n\n"
        "    def forward(self, x, out):\n        self._kernel[(1,)](x, out, x.numel(), 2.0, BLOCK=64)\n"
        "        self.scale[(1,)](x, out, 7, 2.0, BLOCK=64)\n"
    )
    _package(tmp_path, {"k.py": text, "other.py": KERNEL})  # (another `scale`: not said there)
    inv = scan(tmp_path)
    k, other = inv.kernels
    assert (k.path, other.path, other.unresolved, other.calls) == ("k.py", "other.py", [], [])
    assert [c.line for c in k.calls] == [16]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    test = (out / "test_scale_xla_parity.py").read_text()
    assert "# TODO(porter): launched as `self.scale[...](...)` at k.py:17, whose module porter cannot" in test
    many = text + "".join(f"        self.scale[(1,)](x, out, {i}, 2.0, BLOCK=64)\n" for i in range(20))
    (tmp_path / "k.py").write_text(many)
    write_scaffolds(scan(tmp_path), tmp_path / "many", "xla")
    test = (tmp_path / "many" / "test_scale_xla_parity.py").read_text()
    assert test.count("whose module porter cannot") == 8 and "# TODO(porter): and 13 more such launches" in test


def test_a_utf16_or_utf32_cu_file_is_named_as_not_read(tmp_path):
    # nvcc 13.0 (error: unrecognized token), gcc and clang compile no such file; porter decoded it
    # as UTF-8, found no kernel in it, and said nothing
    source = "__global__ void k(float* x) { x[0] = 1; }\n"
    (tmp_path / "a.cu").write_bytes(source.encode("utf-16"))
    (tmp_path / "b.cuh").write_bytes(source.encode("utf-32"))
    (tmp_path / "c.cu").write_bytes(b"\xef\xbb\xbf" + source.encode())  # UTF-8's mark: read
    inv = scan(tmp_path)
    assert [(k.name, k.path) for k in inv.kernels] == [("k", "c.cu")]
    assert sorted(p.split(":")[0] for p in inv.problems if "UTF-16/UTF-32 text" in p) == ["a.cu", "b.cuh"]
    assert len(inv.problems) == 2


DISPATCHED = """#include "dispatch.h"
template <typename T>
__global__ void axpy(T* out, const T* x, T alpha, int n) {
  out[0] = alpha * x[0] + n;
}

void run(torch::Tensor out, torch::Tensor x, double a) {
  AT_DISPATCH_INTEGRAL_TYPES(x.scalar_type(), "axpy", [&] {
    axpy<scalar_t><<<1, 1>>>(out.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), (scalar_t)a, x.numel());
  });
}

template <typename T>
__global__ void half_axpy(T* out, T alpha) { out[0] = alpha; }

void run_half(torch::Tensor out, double a) {
  MY_DISPATCH_HALF_TYPES(out.scalar_type(), "half_axpy", [&] {
    half_axpy<scalar_t><<<1, 1>>>(out.data_ptr<scalar_t>(), (scalar_t)a);
  });
}
"""
# a project's dispatch macro, as vllm 0.34.0's csrc/dispatch_utils.h writes its own
HEADER = """#pragma once
#define MY_DISPATCH_CASE_HALF_TYPES(...)              \\
  AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__) \\
  AT_DISPATCH_CASE(at::kBFloat16, __VA_ARGS__)
#define MY_DISPATCH_HALF_TYPES(TYPE, NAME, ...) \\
  AT_DISPATCH_SWITCH(TYPE, NAME, MY_DISPATCH_CASE_HALF_TYPES(__VA_ARGS__))
"""


def test_scalar_t_of_an_at_dispatch_macro_types_the_kernel_s_template_numbers(tmp_path):
    # `T alpha` given `scalar_t` inside AT_DISPATCH_INTEGRAL_TYPES was a float by guess ("its
    # launches give `scalar_t`"); it is an int, and a project's own dispatch macro (read from the
    # header it is defined in, down to ATen's AT_DISPATCH_CASE) binds it to half types: a float
    (tmp_path / "k.cu").write_text(DISPATCHED)
    (tmp_path / "dispatch.h").write_text(HEADER)
    inv = scan(tmp_path)
    calls = {k.name: k.calls for k in inv.kernels}
    assert [(c.dispatch, c.dispatched) for c in calls["axpy"]] == [
        ("AT_DISPATCH_INTEGRAL_TYPES", ["uint8_t", "int8_t", "int", "int64_t", "int16_t"])
    ]
    assert [(c.dispatch, c.dispatched) for c in calls["half_axpy"]] == [
        ("MY_DISPATCH_HALF_TYPES", ["at::Half", "at::BFloat16"])
    ]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    op = (out / "axpy_op.py").read_text()
    assert "alpha: int" in op and "template types, taken as a float" not in op
    half = (out / "half_axpy_op.py").read_text()
    assert "alpha: float" in half and "template types, taken as a float" not in half
    test = (out / "test_half_axpy_xla_parity.py").read_text()
    assert "# TODO(porter): `T` is the `scalar_t` of MY_DISPATCH_HALF_TYPES at k.cu:18: at::Half, at::BFloat16" in test


def test_scalar_t_of_a_dispatch_porter_cannot_read_is_said_with_its_macro(tmp_path):
    (tmp_path / "k.cu").write_text(DISPATCHED.replace('#include "dispatch.h"', ""))
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    half = (out / "half_axpy_op.py").read_text()
    assert (
        "taken as a float (its launches give `scalar_t of MY_DISPATCH_HALF_TYPES, whose types porter does not read`)"
        in " ".join(half.replace("\n# ", " ").split())
    )


def test_the_dispatch_types_are_aten_s_own():
    # porter's table of ATen's dispatch macros against the Dispatch.h of the torch installed
    import re
    from pathlib import Path

    import pytest

    from porter.kernels.inventory import _DISPATCH_TYPES
    from tests.deps import need

    torch = need("torch")
    header = Path(torch.__file__).parent / "include" / "ATen" / "Dispatch.h"
    if not header.is_file():
        pytest.skip("torch is installed without its C++ headers")
    text = header.read_text().replace("\\\n", " ")
    bodies = dict(re.findall(r"#define AT_DISPATCH_CASE_(\w+)\(\.\.\.\)([^\n]*)", text))

    def cases(base: str) -> list[str]:
        out = []
        for m in re.finditer(r"AT_DISPATCH_CASE_(\w+)\(__VA_ARGS__\)|at::ScalarType::(\w+)", bodies[base]):
            out += cases(m.group(1)) if m.group(1) else [m.group(2)]
        return out

    assert {base: tuple(cases(base)) for base in _DISPATCH_TYPES} == _DISPATCH_TYPES


LOCALS = """__global__ void rms(float* out, const float* x, int rows, int cols, int stride, float eps, int blocks) {
  out[0] = x[0] * rows * cols * stride * eps * blocks;
}

void run(torch::Tensor out, torch::Tensor x, torch::Tensor other, double epsilon) {
  int cols = x.size(-1);
  const auto stride = x.stride(0);
  int64_t rows = x.numel() / cols;
  int blocks = other.size(0);
  int later = 4;
  later += 1;
  if (rows > 0) {
    int cols = 7;  // a block closed before the launch
  }
  rms<<<rows, 256>>>(out.data_ptr<float>(), x.data_ptr<float>(), static_cast<int>(rows), cols, stride,
                     (float)epsilon, blocks);
  count<<<1, 1>>>(out.data_ptr<float>(), later);
  int tail = out.numel();
  count<<<1, 1>>>(out.data_ptr<float>(), tail);
}

__global__ void count(float* out, int n) { out[0] = n; }

void host(torch::Tensor out) {
  int width = out.numel();
#define LAUNCH_COUNT(o) \
  count<<<1, 1>>>(o.data_ptr<float>(), width)
  LAUNCH_COUNT(out);
}
"""


def test_a_launch_s_locals_give_make_inputs_their_values(tmp_path):
    # `int cols = x.size(-1);` then `rms<<<...>>>(..., cols, ...)`: each such number was 256 under a
    # TODO; now the local's initializer, rebuilt from the tensors the launch passes. One of a tensor
    # it does not pass (`other`) or one written after its declaration (`later += 1`) keeps the TODO,
    # which names the local
    (tmp_path / "k.cu").write_text(LOCALS)
    out = tmp_path / "out"
    inv = scan(tmp_path)
    calls = {k.name: k.calls for k in inv.kernels}
    # `later` is written; `width` is named in a macro, whose uses may be anywhere: neither is read
    assert [c.locals for c in calls["count"]] == [{}, {"tail": ("out.numel()", 18)}, {}]
    said = [c for k in inv.kernels if k.name == "count" for c in k.to_dict()["calls"]]  # (`--json`)
    assert [c.get("locals") for c in said] == [None, {"tail": ("out.numel()", 18)}, None]
    assert not any("dispatch" in c or "dispatched" in c for c in said)
    write_scaffolds(inv, out, "xla")
    test = (out / "test_rms_xla_parity.py").read_text()
    assert "rows = x.numel() // x.size(-1)  # as the launch at k.cu:15 passes it" in test
    assert "cols = x.size(-1)  # as the launch at k.cu:15 passes it" in test
    assert "stride = x.stride(0)  # as the launch at k.cu:15 passes it" in test
    assert (
        "blocks = 256  # TODO(porter): the value the call site passes (the launch at k.cu:15 passes `blocks`,"
        " initialized `other.size(0)` at line 9)"
    ) in test
    assert "eps = 256  # TODO(porter): the value the call site passes\n" in test  # (a parameter: no local)
    count = (out / "test_count_xla_parity.py").read_text()
    assert "n = out.numel()  # as the launch at k.cu:19 passes it" in count


TWINS = """#if defined(__CUDACC__) && !defined(__gfx942__)
  #define ON_CUDA 1
#endif

#ifdef USE_ROCM
__global__ void scale(float* out, const float* x, int n) { out[0] = x[0] * n; }
#elif !defined(ON_CUDA)
__global__ void scale(float* out, const float* x, int n) { out[1] = x[0] * n; }
#else
__global__ void scale(float* out, const float* x, int n) { }
#endif

#if ENABLE_FP8
__global__ void fp8(float* out, int n) { out[0] = n; }
#else
__global__ void fp8(float* out, int n) { }
#endif
"""


def test_if_twins_read_the_branch_nvcc_compiles_or_say_which_was_read(tmp_path):
    # the first body was read: the ROCm branch's, which writes `out` (mutates_args=('out',)), where
    # nvcc compiles the `#else` branch (nvcc 13.0 defines no USE_ROCM, __HIPCC__ nor __gfx*__; gcc's
    # cpp with nvcc's __CUDACC__ keeps the same definitions of vllm 0.34.0's ten ROCm twins). A
    # branch the build's -D flags choose (`#if ENABLE_FP8`) keeps the first, and says so
    (tmp_path / "k.cu").write_text(TWINS)
    inv = scan(tmp_path)
    kernels = {k.name: k for k in inv.kernels}
    assert [(k.name, k.line) for k in inv.kernels] == [("scale", 10), ("fp8", 14)]
    assert (
        "also defined at line 6, of the same parameters, in a branch nvcc does not compile" in kernels["scale"].detail
    )
    assert "line 8, of the same parameters, in a branch nvcc does not compile (`#elif !defined(ON_CUDA)`" in (
        kernels["scale"].detail
    )
    assert (
        "also defined at line 16, of the same parameters, in another #if branch (`#else`, where the one read is in"
        " `#if ENABLE_FP8`, of the `#if` at line 13): the first is read"
    ) in kernels["fp8"].detail
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    assert "mutates_args=()" in (out / "scale_op.py").read_text()
