"""The twenty-eighth read of the scaffold writers (issue 24): each test failed on 110255d."""

from __future__ import annotations

from porter.kernels.inventory import scan

RAW = (
    'static const char* kSrc = R"(\n'
    'extern "C" __global__ void jit_k(float* q) { q[0] = 1; }\n'
    "/* a comment opener in the NVRTC source\n"
    ')";\n'
    'static const char* kQuote = u8R"x(a quote " and "( )" inside)x";\n'
    "__global__ void real_k(float* x, int n) { x[0] = n; }\n"
    "void go(float* x, int n) { real_k<<<1, 1>>>(x, n); }\n"
    'const char* FOOR = "("; __global__ void after_k(float* x) { x[0] = 1; }\n'
)


def test_a_raw_string_literal_is_one_literal_to_its_delimiter(tmp_path):
    # a raw string (`R"(...)"`: an NVRTC source) was read as a plain string: its `/*` opened a
    # comment that blanked every kernel after it (real_k, its launch: listed nowhere), and the
    # `__global__` quoted in it was listed as a kernel of the file
    (tmp_path / "k.cu").write_text(RAW)
    inventory = scan(tmp_path)
    assert [(k.name, k.line) for k in inventory.kernels] == [("real_k", 6), ("after_k", 8)]
    assert [(c.line, c.args) for c in inventory.kernels[0].calls] == [(7, ["x", "n"])]


EX = (
    "template <typename T> __global__ void tk(T* p, char c, int n) { p[0] = c + n; }\n"
    "template <> __global__ void tk<double>(double* p, char c, int n) { p[0] = 2 * n; }\n"
    "__global__ void pk(float* p, int n) { p[0] = n; }\n"
    "__global__ void ck(float* p, int n) { p[0] = n; }\n"
    "void go(float* x, int n, cudaStream_t st) {\n"
    "  cudaLaunchConfig_t cfg = {};\n"
    "  cudaLaunchKernelEx(&cfg, tk<float>, x, 'c', n);\n"
    "  auto kernel = &pk;\n"
    "  cudaLaunchKernelEx(&cfg, kernel, x,\n"
    "                     n);\n"
    "  void* args[] = {&x, &n};\n"
    "  cudaLaunchKernelExC(&cfg, (const void*)ck, args);\n"
    "}\n"
    "template <typename... Args> void fwd(cudaLaunchConfig_t* cfg, Args... args) {\n"
    "  auto kernel = &ck;\n"
    "  cudaLaunchKernelEx(cfg, kernel, args...);\n"
    "}\n"
)


def test_cuda_launch_kernel_ex_s_arguments_are_read_as_a_launch_s(tmp_path):
    # the C++ `cudaLaunchKernelEx(&config, k<T>, a, b)` takes the kernel's arguments as a call does,
    # but was said to take "an array of their addresses" porter does not read (vllm 0.34.0: 42
    # launches), and `tk<float>`'s was given to the `template <>` specialization for double too
    (tmp_path / "k.cu").write_text(EX)
    kernels = {(k.name, k.line): k for k in scan(tmp_path).kernels}
    assert [(c.line, c.args, c.template) for c in kernels["tk", 1].calls] == [(7, ["x", "'c'", "n"], ["float"])]
    assert kernels["tk", 1].unresolved == [] and kernels["tk", 2].calls == kernels["tk", 2].unresolved == []
    assert [(c.line, c.args) for c in kernels["pk", 3].calls] == [(9, ["x", "n"])]
    # the C API's `void** args` (the control): still said, not read
    assert kernels["ck", 4].calls == []
    assert "`cudaLaunchKernelExC` at k.cu:12, whose arguments (an array" in kernels["ck", 4].unresolved[0]
    # a pack expansion (`args...`: vllm 0.34.0's launchers) is as many arguments as the pack holds: said
    assert "`cudaLaunchKernelEx` at k.cu:16, whose arguments (a parameter pack)" in kernels["ck", 4].unresolved[1]


HEURISTIC = (
    "import triton\n"
    "import triton.language as tl\n\n"
    '@triton.heuristics({"SHIFT": lambda args: 2})\n'
    "@triton.jit\n"
    "def hs_k(x_ptr, y_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + SHIFT, mask=offs < n)\n\n"
    '@triton.autotune(configs=[triton.Config({"SCALE": 2.0})], key=["n"])\n'
    "@triton.jit\n"
    "def at_k(x_ptr, y_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)\n\n"
    "@triton.jit\n"
    "def ln_k(x_ptr, y_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)\n"
)


def test_a_constexpr_a_decorator_gives_is_not_said_to_be_the_launch_s():
    # a tl.constexpr the math uses, given by `@triton.heuristics` or an autotune config, was said
    # to be one "whose value only the launch gives" in the scaffold's TODO: the launch passes none
    from porter.kernels.triton_ref import why_not

    assert "`SHIFT`, whose value the `@triton.heuristics` decorator gives, not the launch" in why_not(HEURISTIC, "hs_k")
    assert "`SCALE`, whose value the `@triton.autotune` decorator gives, not the launch" in why_not(HEURISTIC, "at_k")
    assert "`SCALE`, whose value only the launch gives" in why_not(HEURISTIC, "ln_k")  # (the control)


SELECTIVE = (
    "TORCH_LIBRARY_FRAGMENT(xformers, m) {\n"
    '  m.def(TORCH_SELECTIVE_SCHEMA("xformers::fwd(Tensor x) -> Tensor"));\n'
    "}\n"
    "TORCH_LIBRARY_IMPL(xformers, CUDA, m) {\n"
    "  m.impl(\n"
    '      TORCH_SELECTIVE_NAME("xformers::fwd"),\n'
    "      TORCH_FN(fwd_cuda));\n"
    "}\n"
    "TORCH_LIBRARY_IMPL(xformers, Meta, m) {\n"
    '  m.impl(TORCH_SELECTIVE_NAME("xformers::fwd"), TORCH_FN(fwd_meta));\n'
    '  m.impl("bare", fwd_meta);\n'
    "}\n"
)


def test_an_op_named_in_torch_selective_name_is_a_registration(tmp_path):
    # `m.impl(TORCH_SELECTIVE_NAME("ns::op"), TORCH_FN(f))` (xformers' every `TORCH_LIBRARY_IMPL`)
    # was read as no registration: `porter kernels` listed 4 of xformers 0.0.28's 62, unsaid
    (tmp_path / "ops.cpp").write_text(SELECTIVE)
    got = [(r.name, r.device) for r in scan(tmp_path).registered]
    assert got == [("xformers::fwd", "CUDA"), ("xformers::fwd", "Meta"), ("xformers::bare", "Meta")]
