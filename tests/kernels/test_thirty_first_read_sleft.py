"""The thirty-first read's helper on the scaffold leftovers (sleft, issue 24): each test failed on db3dd76,
with what 48-scaffold, 48-scaf2 and 48-sleft left in the registration reader."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops


def _regs(source: bytes) -> list[tuple[str | None, str, str]]:
    return sorted(native_ops.registrations(source, Path("a.cu")), key=repr)


def _cuda_only(source: bytes) -> set[str]:
    return set(native_ops.cuda_only_ops([("a.cu", source)]).get("myops", {}))


def test_a_library_block_opened_by_the_project_s_own_macro_is_read():
    # 48-scaf2's `a5_head_define.cu` and `c4_fn_head_macro.cu`: no block (cpp: a CPU one), so `a` and `b`
    # were said CUDA-only
    source = (
        b"#define CPU_LIB TORCH_LIBRARY_IMPL(myops, CPU, m)\n#define LIB(dev) TORCH_LIBRARY_IMPL(myops, dev, m)\n"
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }\n'
        b'CPU_LIB { m.impl("a", &a_cpu); }\n'
        b'LIB(CPU) { m.impl("b", &b_cpu); }\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CPU"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CUDA"),
    ]
    assert _cuda_only(source) == {"c"}  # (the control)


def test_a_head_macro_is_read_by_its_definition_in_effect():
    # `#undef LIB` / `#define LIB(dev) ...` between two uses: each use by the definition in effect (cpp), a use
    # after `#undef` by none
    source = (
        b"#define LIB(dev) TORCH_LIBRARY_IMPL(myops, dev, m)\n"
        b'LIB(CUDA) { m.impl("a", &a_cuda); }\n'
        b"#undef LIB\n#define LIB(dev) TORCH_LIBRARY_IMPL(other, dev, m)\n"
        b'LIB(CPU) { m.impl("a", &a_cpu); }\n'
        b"#undef LIB\n"
        b'LIB(CPU) { m.impl("b", &b_cpu); }\n'
    )
    assert _regs(source) == [("myops", "a", "CUDA"), ("other", "a", "CPU")]


def test_a_library_head_whose_word_a_backslash_newline_splits_is_read():
    # 48-scaf2's `c5_splice_in_keyword.cu`: `TORCH_LIBRARY_IM\` then `PL(`: no block (cpp: a CPU one)
    source = (
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }\n'
        b'TORCH_LIBRARY_IM\\\nPL(myops, CPU, m) { m.impl("a", &a_cpu); }\n'
        b'TORCH_LIBRARY_IMPL(my\\\r\nops, CP\\\nU, m) { m.impl("b", &b_cpu); }\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CPU"),
        ("myops", "b", "CUDA"),
    ]


def test_a_schema_s_tags_given_by_a_variable_are_no_implementation():
    # `std::vector<at::Tag> tags = {...}; m.def(schema, tags)`: read as an implementation every device runs
    # ("any"), so `a`, with a CUDA kernel only, was not said to be; a function `b_any` stays one
    source = (
        b"TORCH_LIBRARY(myops, m) {\n"
        b"  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag};\n"
        b"  auto more = std::vector<at::Tag>{at::Tag::core};\n"
        b'  m.def("a(Tensor x) -> Tensor", tags);\n  m.def("c(Tensor x) -> Tensor", more);\n'
        b'  m.def("b(Tensor x) -> Tensor", b_any);\n'
        b'  m.impl("a", torch::kCUDA, &a_cuda);\n  m.impl("b", torch::kCUDA, &b_cuda);\n'
        b'  m.impl("c", torch::kCUDA, &c_cuda);\n}\n'
    )
    assert _cuda_only(source) == {"a", "c"}


OVERLOADS = (
    b'TORCH_LIBRARY(myops, m) {\n  m.def("a(Tensor x) -> Tensor");\n'
    b'  m.def("a.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");\n}\n'
    b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("a.out", &a_out_cuda); }\n'
    b'TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("a.out", &a_out_cpu); }\n'
    b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("b", &b_cuda); m.impl("b.out", &b_out_cuda); }\n'
    b'TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("b", &b_cpu); }\n'
)


def test_an_overload_s_kernel_is_its_own_op_s_not_its_default_s():
    # 48-scaffold's `torch_dispatch_oracle.py`: `a`, CUDA only, raises NotImplementedError on a CPU tensor
    # while `a.out` runs; the `.out` was dropped, so `a` had a CPU kernel and was not said CUDA-only
    assert _cuda_only(OVERLOADS) == {"a", "b.out"}


def test_a_file_that_calls_an_overload_gets_the_fact_of_that_overload():
    from porter.analysis.cuda_only_index import cuda_only_imports

    files = [
        ("default.py", b"import torch\n\ndef f(x):\n    return torch.ops.myops.a(x)\n"),
        ("out.py", b"import torch\n\ndef f(x, y):\n    return torch.ops.myops.a.out(x, out=y)\n"),
        (
            "both.py",
            b"import torch\n\ndef f(x, y):\n    torch.ops.myops.a.default(x)\n    torch.ops.myops.a.out(x, out=y)\n",
        ),
        ("bout.py", b"import torch\n\ndef f(x, y):\n    return torch.ops.myops.b.out(x, out=y)\n"),
    ]
    facts = cuda_only_imports(files, None, (), [("csrc/ops.cu", OVERLOADS)])
    named = {path: sorted(f[1] for f in found) for path, found in facts.items()}
    # `both.py`: a fact of `torch.ops.myops.a` covers `a.out` too, which runs on a CPU tensor: none
    assert named == {"default.py": ["torch.ops.myops.a"], "bout.py": ["torch.ops.myops.b.out"]}


def test_a_library_block_a_macro_gives_whole_is_read():
    # `#define CPU_IMPL(x) TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(#x, &x##_cpu); }`, `CPU_IMPL(d)`: no
    # block (cpp: a CPU one), so `d` was said CUDA-only; `e`, a CUDA kernel only, the control
    source = (
        b"#define CPU_IMPL(x) TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(#x, &x##_cpu); }\n"
        b'#define KEY torch::kCPU\n#define ANY_IMPL TORCH_LIBRARY(myops, m) { m.impl("f", KEY, &f_cpu); }\n'
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("d", &d_cuda); m.impl("e", &e_cuda); m.impl("f", &f_cuda); }\n'
        b"CPU_IMPL(d)\nANY_IMPL\n"
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("g", &g_cuda); }\n'
    )
    assert _regs(source) == [
        ("myops", "d", "CPU"),
        ("myops", "d", "CUDA"),
        ("myops", "e", "CUDA"),
        ("myops", "f", "CPU"),
        ("myops", "f", "CUDA"),
        ("myops", "g", "CUDA"),
    ]


MACRO_NAMED = """#define KNAME(n) n##_kernel
__global__ void KNAME(foo)(float* x, int n) { x[0] = n; }
#define ATTR(x)
__global__ void ATTR(1)(float* x) { }
__global__ void plain_k(float* y) { }
void go(float* x, int n) { foo_kernel<<<1, 1>>>(x, n); plain_k<<<1, 1>>>(x); bar_kernel<<<1, 1>>>(x); }
__global__ static void __launch_bounds__(256) KNAME(bar)(float* z) { }
"""


def test_a_kernel_whose_name_a_function_like_macro_makes_is_listed_with_its_launch(tmp_path):
    # 48-scaffold's `h6_macro_named.cu`: `foo_kernel` (libclang's name) was listed nowhere and its launch
    # said to run "a name no kernel porter lists has"; `ATTR(1)`, which makes no name, is still none
    from porter.kernels.inventory import scan

    (tmp_path / "k.cu").write_text(MACRO_NAMED)
    inventory = scan(tmp_path)
    assert sorted((k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels) == [
        ("bar_kernel", 7, ["float* z"], [6]),
        ("foo_kernel", 2, ["float* x", "int n"], [6]),
        ("plain_k", 5, ["float* y"], [6]),
    ]
    assert not any("foo_kernel" in p or "bar_kernel" in p for p in inventory.problems)


WRAPPED = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }
TORCH_LIBRARY_IMPL(myops, Autograd, m) { m.impl("a", &a_autograd); m.impl("c", &c_autograd); }
TORCH_LIBRARY_IMPL(myops, ADInplaceOrView, m) { m.impl("b", &b_view); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("c", &c_cpu); }
"""


def test_an_op_whose_other_kernels_only_wrap_is_said(tmp_path):
    # 48-scaffold's `torch_dispatch_oracle.py`: an op with a CUDA kernel and a redispatching Autograd one
    # fails on a CPU tensor, one whose ADInplaceOrView kernel computes runs; porter counted either as another
    # device's, unsaid. `c`, with a CPU kernel, gets no note (the control)
    from porter.kernels.inventory import scan

    (tmp_path / "r.cpp").write_bytes(WRAPPED)
    notes = [p for p in scan(tmp_path).problems if "does not read which" in p]
    assert len(notes) == 2
    assert "`myops::a` has a CUDA kernel and Autograd ones only" in notes[0]
    assert "`myops::b` has a CUDA kernel and ADInplaceOrView ones only" in notes[1]
    assert _cuda_only(WRAPPED) == set()  # (lint's reading is unchanged: no verdict on what it cannot tell)


def test_a_name_spelled_decomposed_in_one_file_and_composed_in_another_is_said(tmp_path):
    # 48-sleft's leftover: `ko` + U+0308 declared in k.cu, `kö` (U+00F6) launched in go.cu: one name to
    # porter, two to a compiler, and the launch was listed with the kernel, unsaid (D5 said it in one file)
    (tmp_path / "k.cu").write_text("__global__ void ko\u0308(float* x) { }\n", encoding="utf-8")
    (tmp_path / "go.cu").write_text("void go(float* x) { k\u00f6<<<1, 1>>>(x); }\n", encoding="utf-8")
    (tmp_path / "same.cu").write_text(
        "__global__ void s\u00e9(float* x) { }\nvoid g(float* x) { s\u00e9<<<1, 1>>>(x); }\n"
    )
    from porter.kernels.inventory import scan

    notes = [p for p in scan(tmp_path).problems if "decomposed" in p]
    assert len(notes) == 1 and notes[0].startswith("go.cu: `k\u00f6` is spelled here composed (NFC) and in k.cu")
