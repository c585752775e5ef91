"""The twenty-eighth read's second wave of the scaffold writers (scaf2, issue 24): each test failed on 45ebd98."""

from __future__ import annotations

from porter.kernels.inventory import scan

API = (
    "template <typename T, int N> __global__ void tk(T* x, int n) { x[0] = N; }\n"
    "__global__ void pk(float* x, int n) { x[0] = n; }\n"
    "typedef void (*K)(float*, int);\n"
    "void go(float* x, int n, K* table, int i) {\n"
    "  cudaLaunchConfig_t cfg = {};\n"
    "  cudaLaunchKernelEx(&cfg, tk<float, (3 > 2) ? 4 : 8>, x, n);\n"
    "  cudaLaunchKernelEx(&cfg, table[i], x, n);\n"
    "  cudaLaunchKernel((const void*)pick(i), dim3(1), dim3(1), nullptr, 0, 0);\n"
    "}\n"
)


def test_an_api_launch_of_a_kernel_porter_cannot_name_is_said_and_a_comparison_is_no_bracket(tmp_path):
    # `tk<float, (3 > 2) ? 4 : 8>`: the `>` in parentheses was counted as the template's, so no name
    # was read; that launch and those of `table[i]` and of `pick(i)` were dropped, said nowhere
    (tmp_path / "k.cu").write_text(API)
    inventory = scan(tmp_path)
    tk = inventory.kernels[0]
    assert [(c.line, c.args, c.template) for c in tk.calls] == [(6, ["x", "n"], ["float", "(3 > 2) ? 4 : 8"])]
    said = [p for p in inventory.problems if "no kernel's name porter reads" in p]
    assert [p.split(":", 2)[:2] for p in said] == [["k.cu", "7"], ["k.cu", "8"]]
    assert "`table[i]`" in said[0] and "`(const void*)pick(i)`" in said[1]


def test_an_api_launch_of_a_name_no_kernel_has_is_said(tmp_path):
    # `cudaLaunchKernel((void*)ext_k, ...)` of a kernel outside the tree: dropped, said nowhere (a
    # `<<<` launch of such a name is said); a cast's operand is still read (`static_cast<...>(pk)`)
    (tmp_path / "k.cu").write_text(
        "__global__ void pk(float* x, int n) { x[0] = n; }\n"
        "void go(void** args) {\n"
        "  cudaLaunchKernel((void*)ext_k, dim3(1), dim3(1), args, 0, 0);\n"
        "  cudaLaunchKernel(static_cast<const void*>(pk), dim3(1), dim3(1), args, 0, 0);\n"
        "}\n"
    )
    inventory = scan(tmp_path)
    assert [p for p in inventory.problems if "ext_k" in p] == [
        "`ext_k` launched through `cudaLaunchKernel` at k.cu:3, whose arguments (an array of their addresses) "
        "porter does not read: a name no kernel porter lists has (a function pointer, a launcher's parameter, "
        "a kernel outside the tree)"
    ]
    assert "`cudaLaunchKernel` at k.cu:4" in inventory.kernels[0].unresolved[0]


MADE = (
    "import triton\n"
    "import triton.language as tl\n\n\n"
    "def make():\n"
    "    @triton.jit\n"
    "    def inner_k(x_ptr, n, BLOCK: tl.constexpr):\n"
    "        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "        tl.store(x_ptr + offs, 1.0, mask=offs < n)\n\n"
    "    return inner_k\n\n\n"
    "def go(x, n):\n"
    "    k = make()\n"
    "    k[(1,)](x, n, BLOCK=64)\n"
    "    make()[(2,)](x, n, BLOCK=32)\n"
)


def test_a_triton_kernel_a_function_returns_is_launched_through_its_result(tmp_path):
    # `k = make(); k[grid](...)` (45-scaffold's leftover): the kernel `make` defines and returns was
    # listed with no launch, and the launch was said nowhere
    (tmp_path / "m.py").write_text(MADE)
    (kernel,) = scan(tmp_path).kernels
    assert [(c.line, c.args) for c in kernel.calls] == [(16, ["x", "n", "BLOCK=64"]), (17, ["x", "n", "BLOCK=32"])]


def test_a_kernel_body_in_digraphs_is_a_body(tmp_path):
    # `<% ... %>` is `{ ... }` to the compiler (45-scaffold's leftover): the kernel was listed with
    # no body, and its launch a note of "a name no kernel porter lists has" (untrue)
    (tmp_path / "k.cu").write_text(
        "__global__ void digraph_k(float* a, int n) <% a<:0:> = n; %>\n"
        'const char* s = "%>";\n'
        "void run(float* y) <% digraph_k<<<1, 1>>>(y, 3); %>\n"
    )
    inventory = scan(tmp_path)
    (kernel,) = inventory.kernels
    assert [(c.line, c.args) for c in kernel.calls] == [(3, ["y", "3"])]
    assert inventory.problems == []


def test_a_kernel_named_in_an_ifdef_branch_of_its_head_is_listed(tmp_path):
    # `__global__ void` then `#ifdef FOO` / `foo_k(float* a)` / `#else` / `bar_k(...)` / `#endif`
    # (45-scaffold's leftover): `foo_k(float* a)` was read as an attribute macro's arguments, and
    # the kernel of the `#ifdef` branch was listed nowhere
    (tmp_path / "k.cu").write_text(
        "__global__ void\n#ifdef FOO\nfoo_k(float* a)\n#else\nbar_k(float* a, int n)\n#endif\n{ a[0] = 1; }\n"
        "__global__\n#if A\n__launch_bounds__(256)\n#else\n__launch_bounds__(128)\n#endif\nvoid baz_k(float* a) { a[0] = 2; }\n"
    )
    kernels = scan(tmp_path).kernels
    assert sorted((k.name, k.line, k.params) for k in kernels) == [
        ("bar_k", 1, ["float* a", "int n"]),
        ("baz_k", 8, ["float* a"]),
        ("foo_k", 1, ["float* a"]),
    ]
