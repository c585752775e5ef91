"""The twenty-fifth read of the scaffold writers (issue 24): each test failed on 5907f51."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

COMBINED = (
    "import triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef _maxc(a, b):\n    return tl.maximum(a, b)\n\n\n"
    "@triton.jit\ndef _addc(a, b):\n    return a + b\n\n\n"
    "@triton.jit\ndef k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    x = tl.load(x_ptr + tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n, other=0.0)\n"
    "    tl.store(y_ptr, tl.reduce(x, 0, _maxc))\n"
    "    tl.store(y_ptr + 1, tl.associative_scan(x, 0, combine_fn=_addc))\n\n\n"
    "@triton.jit\ndef unlaunched(x_ptr):\n    tl.store(x_ptr, 1.0)\n\n\n"
    "def run(x, y):\n    k[(1,)](x, y, x.numel(), BLOCK=64)\n"
)


def test_a_combine_function_passed_to_tl_reduce_is_a_helper(tmp_path):
    # torch inductor's triton_helpers.py passes six `@triton.jit` functions to `tl.reduce` by name
    # (`tl.reduce(input, axis, _prod_accumulate)`): each was listed as a kernel of its own and got an
    # op, a skeleton and a parity test that no code runs; a called helper was already none
    (tmp_path / "k.py").write_text(COMBINED)
    inv = scan(tmp_path)
    details = {k.name: k.detail for k in inv.kernels}
    assert details["_maxc"] == "@triton.jit; a helper of k: passed as a function in their code, never launched"
    assert details["_addc"] == "@triton.jit; a helper of k: passed as a function in their code, never launched"
    assert details["unlaunched"] == "@triton.jit"  # the control: named by no kernel
    passed: list[str] = []
    written = {p.name for p in write_scaffolds(inv, tmp_path / "out", "xla", passed=passed)}
    assert {"k_op.py", "unlaunched_op.py"} <= written
    assert not any("maxc" in name or "addc" in name for name in written), written
    assert sorted(passed) == [
        "k.py:11: _addc: no scaffold written: a @triton.jit helper of k",
        "k.py:6: _maxc: no scaffold written: a @triton.jit helper of k",
    ]


API_LAUNCHED = (
    "__global__ void by_api(float* y, int n) { y[threadIdx.x] = 5.0f; }\n"
    "template <typename T>\n__global__ void by_ex(T* y, int n) { y[threadIdx.x] = T(1); }\n"
    "__global__ void by_pointer(float* y, int n) { y[threadIdx.x] = 1.0f; }\n"
    "__global__ void by_chevrons(float* y, int n) { y[threadIdx.x] = 2.0f; }\n"
    "void run(float* y, int n, cudaStream_t stream, cudaLaunchConfig_t cfg) {\n"
    "  void* args[] = {&y, &n};\n"
    "  cudaLaunchKernel((void*)by_api, dim3(1), dim3(32), args, 0, stream);\n"
    "  cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(&by_ex<float>), args);\n"
    "  auto kernel = &by_pointer;\n"
    "  cudaLaunchCooperativeKernel((void *)kernel, dim3(1), dim3(32), (void **)args, 0, stream);\n"
    "  by_chevrons<<<1, 32, 0, stream>>>(y, n);\n"
    "}\n"
)


def test_a_kernel_launched_through_the_runtime_api_says_so(tmp_path):
    # `cudaLaunchKernel((void*)k, grid, block, args, smem, stream)` (and its cooperative and `Ex`
    # forms: flash-attn's layer norm launches its kernels cooperatively through such a pointer)
    # takes the kernel's arguments as an array of their addresses: such a kernel was listed with
    # no launch and its `make_inputs` raised with no word of one
    (tmp_path / "k.cu").write_text(API_LAUNCHED)
    inv = scan(tmp_path)
    said = {k.name: k.unresolved for k in inv.kernels}
    assert said["by_api"] == [
        "launched through `cudaLaunchKernel` at k.cu:8, whose arguments (an array of their addresses) porter does not read"
    ]
    assert [w.split(" at ")[0] for w in said["by_ex"]] == ["launched through `cudaLaunchKernelExC`"]
    assert [w.split(" at ")[0] for w in said["by_pointer"]] == ["launched through `cudaLaunchCooperativeKernel`"]
    assert said["by_chevrons"] == []  # the control: a launch porter reads
    test = next(p for p in write_scaffolds(inv, tmp_path / "out", "xla") if p.name == "test_by_api_xla_parity.py")
    assert "# TODO(porter): launched through `cudaLaunchKernel` at k.cu:8" in test.read_text()


HELD = (
    "import functools\nimport triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef add_one(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n\n\n"
    "@triton.jit\ndef sub_one(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) - 1, mask=offs < n)\n\n\n"
    "@triton.jit\ndef scale(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n\n\n"
    "@triton.jit\ndef direct(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)\n\n\n"
    'KERNELS = {"add": add_one, "sub": sub_one}\n\n\n'
    "def run(x, op):\n"
    "    KERNELS[op][(1,)](x, x.numel(), BLOCK=64)\n"
    "    launch = functools.partial(scale[(1,)], BLOCK=64)\n"
    "    launch(x, x.numel())\n"
    "    direct[(1,)](x, x.numel(), BLOCK=64)\n"
)


def test_a_kernel_launched_from_a_dict_or_through_a_partial_says_so(tmp_path):
    # `KERNELS[op][grid](...)` and `functools.partial(scale[grid], ...)` run the kernels: each was
    # listed with no launch and its scaffold made up inputs with no word of where it runs
    (tmp_path / "k.py").write_text(HELD)
    inv = scan(tmp_path)
    said = {k.name: k.unresolved for k in inv.kernels}
    held = "launched as `KERNELS[...][...](...)` at k.py:34, one of the kernels `KERNELS` holds, picked at run time"
    assert said["add_one"] == said["sub_one"] == [held + ": its arguments are not read as this kernel's"]
    assert said["scale"] == [
        "launched as `scale[...]` at k.py:35, not called there (passed on or kept: `functools.partial`, a variable)"
        ": its arguments are not read as this kernel's"
    ]
    assert said["direct"] == []  # the control: a launch porter reads
    assert [c.line for c in next(k for k in inv.kernels if k.name == "direct").calls] == [37]
    test = next(p for p in write_scaffolds(inv, tmp_path / "out", "xla") if p.name == "test_add_one_xla_parity.py")
    assert f"# TODO(porter): {held}" in test.read_text()
