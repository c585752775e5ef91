"""The thirty-seventh read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed
on e4e00db6.

torch 2.9 is the oracle (docs/reads/55-scaffold-tools/oracle9.py.txt, check_tests.py.txt): each form below was
registered for real and its op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from porter.kernels import triton_ref

OPS = b"""import torch

@torch.library.custom_op("myops::a", mutates_args=(), device_types="cuda")
def a(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

@torch.library.custom_op("myops::b", mutates_args=(), device_types="cuda")
def b(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

@torch.library.custom_op("myops::c", mutates_args=(), device_types="cuda")
def c(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

"""


def _cuda_only(python: bytes) -> set[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", OPS + python)])
    return set(native_ops.cuda_only_ops([], kernels).get("myops", {}))


def test_a_custom_op_s_kernel_registered_through_another_name_bound_to_it_is_read() -> None:
    # `op = a` / `op.register_kernel("cpu")(fn)`: torch 2.9 runs `a` on a CPU tensor; `b`, given through its alias a
    # CUDA kernel only, and `c`, given nothing, stay CUDA-only (the controls)
    python = b"""
op = a
op.register_kernel("cpu")(lambda x: x.clone())
other = b
other.register_kernel("cuda")(lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b", "c"}


def test_a_custom_op_s_kernel_registered_through_a_container_gives_no_verdict_on_a_guess() -> None:
    # `OPS["a"] = a` / `OPS["a"].register_kernel("cpu")(fn)`: torch runs `a` on a CPU tensor; porter cannot read which
    # op the item is: no op of the namespace is taken for CUDA-only (before, `a` was)
    python = b"""
REG = {"a": a, "b": b}
REG["a"].register_kernel("cpu")(lambda x: x.clone())
"""
    assert _cuda_only(python) == set()


def test_a_custom_op_s_cuda_kernel_through_a_container_keeps_its_ops_cuda_only() -> None:
    # the control: a CUDA kernel registered so changes nothing, and `torch.library.register_kernel` is read as before
    python = b"""
REG = [a, b]
REG[0].register_kernel("cuda")(lambda x: x.clone())
torch.library.register_kernel("myops::c", "cpu", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"a", "b"}


def _cpp_cuda_only(source: bytes) -> set[str]:
    return set(native_ops.cuda_only_ops([("csrc/k.cpp", source)]).get("myops", {}))


CUDA_BLOCK = b"""
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", a_cuda); m.impl("b", b_cuda); }
"""


def test_a_key_macro_defined_as_another_key_in_each_branch_of_an_undecided_group_gives_no_verdict() -> None:
    # `cpp -P -DWITH_X` expands `KEY` to CPU, `cpp -P` to CUDA: `a` has a CPU kernel in one build (the last
    # definition, CUDA, was read: `a` said CUDA-only); `b`, CUDA's only, stays CUDA-only (the control)
    source = b"""
#ifdef WITH_X
#define KEY CPU
#else
#define KEY CUDA
#endif
TORCH_LIBRARY_IMPL(myops, KEY, m) { m.impl("a", a_k); }
"""
    assert _cpp_cuda_only(source + CUDA_BLOCK) == {"b"}
    redefined = b"""
#define KEY CUDA
#if defined(WITH_X) && !defined(WITH_Y)
#undef KEY
#define KEY CPU
#endif
TORCH_LIBRARY_IMPL(myops, KEY, m) { m.impl("a", a_k); }
"""
    assert _cpp_cuda_only(redefined + CUDA_BLOCK) == {"b"}


def test_a_key_macro_every_build_defines_alike_is_read_as_before() -> None:
    # the controls: the same key in both branches, a definition only one branch makes (a build without it compiles
    # no block), a decided `#if 0` branch: `a` CUDA-only in each (`cpp -P`, every build)
    for source in (
        b"#ifdef WITH_X\n#define KEY CUDA\n#else\n#define KEY CUDA\n#endif\n",
        b"#ifdef WITH_CUDA\n#define KEY CUDA\n#endif\n",
        b"#if 0\n#define KEY CPU\n#else\n#define KEY CUDA\n#endif\n",
    ):
        block = b'TORCH_LIBRARY_IMPL(myops, KEY, m) { m.impl("a", a_k); }\n'
        assert _cpp_cuda_only(source + block + CUDA_BLOCK) == {"a", "b"}


TRITON = """
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 64}, pre_hook=_fill)]


@triton.autotune(configs=CONFIGS_GIVEN, key=["n"])
@triton.jit
def acc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)
"""


def test_a_triton_kernel_whose_autotune_config_has_a_pre_hook_gets_no_derived_reference() -> None:
    # `triton.Config({...}, pre_hook=fill)`: Triton calls `fill(nargs)` before every launch (triton 3's
    # `Autotuner.run`; the interpreter: `out_ptr` filled with 2, then `out += x`: 2 + x, the derived reference 1 + x
    # on `out` of ones): the reference is left to write, with the reason
    for configs in (
        '[triton.Config({"BLOCK": 64}, pre_hook=_fill)]',
        "CONFIGS",
        '[triton.Config({"BLOCK": 64}, 4, 3, 1, None, _fill)]',
    ):
        source = TRITON.replace("CONFIGS_GIVEN", configs)
        assert "pre_hook" in (triton_ref.why_not(source, "acc_kernel") or "")


def test_a_triton_kernel_autotuned_without_a_config_pre_hook_is_derived_as_before() -> None:
    # the controls: `reset_to_zero=` (run when tuning only: the interpreter and the reference agree), `pre_hook=None`,
    # and another kernel's hooked config in a module whose kernel lists its own
    for configs in (
        '[triton.Config({"BLOCK": 64})], reset_to_zero=["out_ptr"]',
        '[triton.Config({"BLOCK": 64}, pre_hook=None)]',
    ):
        source = TRITON.replace("CONFIGS_GIVEN", configs)
        assert triton_ref.why_not(source, "acc_kernel") is None


def test_a_registering_macro_defined_apart_in_an_undecided_group_registers_what_each_build_does() -> None:
    # `cpp -P -DWITH_X` registers `a_k` for the CPU through each macro below (a whole block, an `m.impl` line, a
    # `torch::dispatch` key), `cpp -P` for CUDA or nothing: `a` is not CUDA-only (the last definition was read: it
    # was said so); `b`, CUDA's only, stays CUDA-only (the control)
    whole = b"""
#ifdef WITH_X
#define CPU_IMPL(op) TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(#op, op##_k); }
#else
#define CPU_IMPL(op) TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl(#op, op##_k); }
#endif
CPU_IMPL(a)
"""
    line = b"""
#ifdef WITH_X
#define IMPL(op) m.impl(#op, op##_k)
#else
#define IMPL(op)
#endif
TORCH_LIBRARY_IMPL(myops, CPU, m) { IMPL(a); }
"""
    dispatch = b"""
#ifdef WITH_X
#define REG(op) m.impl(#op, torch::dispatch(c10::DispatchKey::CPU, op##_k))
#else
#define REG(op) m.impl(#op, torch::dispatch(c10::DispatchKey::CUDA, op##_k))
#endif
TORCH_LIBRARY_FRAGMENT(myops, m) { REG(a); }
"""
    assert [_cpp_cuda_only(source + CUDA_BLOCK) for source in (whole, line, dispatch)] == [{"b"}, {"b"}, {"b"}]


def test_a_registering_macro_every_build_defines_alike_is_read_as_before() -> None:
    # the controls: the definition a decided `#if 0` branch holds is none, and one defined alike in both branches is
    # expanded once: `a` CUDA-only in every build (`cpp -P`)
    decided = b"""
#if 0
#define IMPL(op) m.impl(#op, op##_k)
#else
#define IMPL(op)
#endif
TORCH_LIBRARY_IMPL(myops, CPU, m) { IMPL(a); }
"""
    alike = b"""
#ifdef WITH_X
#define CUDA_IMPL(op) TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl(#op, op##_k); }
#else
#define CUDA_IMPL(op) TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl(#op, op##_k); }
#endif
CUDA_IMPL(a)
"""
    assert [_cpp_cuda_only(source + CUDA_BLOCK) for source in (decided, alike)] == [{"a", "b"}, {"a", "b"}]
