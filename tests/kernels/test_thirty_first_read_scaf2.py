"""The thirty-first read's second-wave helper on the registration reader and the kernel inventory (scaf2, issue
24): what the first wave's `native_ops` and `inventory` changes (44a35cbf) read wrong in combination; each test
failed on 44a35cbf, with `cpp -P` as the oracle of what the preprocessor makes."""

from __future__ import annotations

from tests.kernels.test_thirty_first_read_sleft import _cuda_only, _regs


CUDA = b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }\n'


def test_a_registering_macro_s_string_argument_with_a_comma_or_parenthesis_is_one_argument():
    # cpp: `REG(a, "x, y")` is `m.impl("a", &a_cpu)`, and `CPU_IMPL(b, "doc (")`, `CPU_IMPL(c, "doc, more")`
    # blocks with b's and c's CPU kernels; the string's comma or parenthesis was read as the use's, the use left
    # unexpanded, and the ops said CUDA-only
    source = (
        b"#define REG(op, doc) m.impl(#op, &op##_cpu)\n"
        b"#define CPU_IMPL(x, doc) TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(#x, &x##_cpu); }\n"
        + CUDA
        + b'TORCH_LIBRARY_IMPL(myops, CPU, m) { REG(a, "x, y"); }\nCPU_IMPL(b, "doc (")\nCPU_IMPL(c, "doc, more")\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CPU"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CPU"),
        ("myops", "c", "CUDA"),
    ]
    assert _cuda_only(source) == set()


def test_a_brace_in_a_string_of_a_macro_that_gives_a_block_whole_ends_nothing():
    # cpp: `CPU_IMPL(a)` is a CPU block with `TORCH_WARN("}")` and a's CPU kernel; the string's `}` ended the
    # block's body, a's CPU kernel was lost and `a` said CUDA-only
    source = (
        b'#define CPU_IMPL(x) TORCH_LIBRARY_IMPL(myops, CPU, m) { TORCH_WARN("}"); m.impl(#x, &x##_cpu); }\n'
        + CUDA
        + b"CPU_IMPL(a)\n"
    )
    assert ("myops", "a", "CPU") in _regs(source)
    assert _cuda_only(source) == {"b", "c"}


MACRO_NAMED_ATTRIBUTED = """#define KNAME(n) n##_kernel
__global__ void KNAME(foo) [[deprecated]] (float* x) { x[0] = 1; }
__global__ void KNAME(bar) __attribute__((noinline)) (float* y) { y[0] = 1; }
__global__ void plain_k(float* z) __attribute__((noinline)) { z[0] = 1; }
void go(float* x) { foo_kernel<<<1, 1>>>(x); bar_kernel<<<1, 1>>>(x); plain_k<<<1, 1>>>(x); }
"""


def test_a_macro_named_kernel_with_an_attribute_after_its_name_is_listed_with_its_launch(tmp_path):
    # cpp: `__global__ void foo_kernel [[deprecated]] (float* x)`; a kernel `KNAME` of a parameter `foo` was
    # listed, `foo_kernel` nowhere, and its launch said to run "a name no kernel porter lists has"
    from porter.kernels.inventory import scan

    (tmp_path / "k.cu").write_text(MACRO_NAMED_ATTRIBUTED)
    inventory = scan(tmp_path)
    assert sorted((k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels) == [
        ("bar_kernel", 3, ["float* y"], [5]),
        ("foo_kernel", 2, ["float* x"], [5]),
        ("plain_k", 4, ["float* z"], [5]),
    ]
    assert not any("no kernel porter lists" in p for p in inventory.problems)


def test_a_stringified_argument_that_holds_a_string_stays_one_string():
    # cpp: `CPU_IMPL(a, "x (")` is `{ TORCH_WARN("\"x (\""); m.impl("a", &a_cpu); }`; porter made `""x (""`, whose
    # `(` was code, and the `m.impl` after it was none: `a` said CUDA-only
    source = (
        b"#define CPU_IMPL(x, doc) TORCH_LIBRARY_IMPL(myops, CPU, m) { TORCH_WARN(#doc); m.impl(#x, &x##_cpu); }\n"
        + CUDA
        + b'CPU_IMPL(a, "x (")\n'
    )
    assert ("myops", "a", "CPU") in _regs(source)
    assert _cuda_only(source) == {"b", "c"}


def test_a_block_a_macro_gives_whole_with_a_string_argument_is_read():
    # cpp: `DEF(a, "a(Tensor x) -> Tensor")` is `TORCH_LIBRARY_FRAGMENT(myops, m) { m.def("a(Tensor x) -> Tensor",
    # &a_any); }`, a function every device runs; the block was dropped, unsaid (its expansion of the code and of
    # the source differed in length), and `a` said CUDA-only
    source = (
        b"#define DEF(name, schema) TORCH_LIBRARY_FRAGMENT(myops, m) { m.def(schema, &name##_any); }\n"
        + CUDA
        + b'DEF(a, "a(Tensor x) -> Tensor")\nDEF(b, R"(b(Tensor x) -> Tensor)")\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CUDA"),
        ("myops", "a", "any"),
        ("myops", "b", "CUDA"),
        ("myops", "b", "any"),
        ("myops", "c", "CUDA"),
    ]
    assert _cuda_only(source) == {"c"}
