"""The thirty-second read's helper on the scaffold leftovers (sleft, issue 24): each test failed on 138fe441,
with what 49-scaffold, 49-scaf2 and 49-sleft left in the registration reader and the kernel listing."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops


def _regs(source: bytes) -> list[tuple[str | None, str, str]]:
    return sorted(native_ops.registrations(source, Path("a.cu")), key=repr)


def _cuda_only(source: bytes) -> set[str]:
    return set(native_ops.cuda_only_ops([("a.cu", source)]).get("myops", {}))


HELPER = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }
static void register_more(torch::Library &lib2) { lib2.impl("c", torch::kCPU, &c_cpu); }
void register_cpu(torch::Library& lib) {
  lib.impl("a", &a_cpu);
  register_more(lib);
}
void unused(torch::Library& m) { m.impl("b", &b_cpu); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { register_cpu(m); }
"""


def test_registrations_a_block_makes_through_a_function_of_the_file_are_read():
    # 49-scaffold's leftover: `register_cpu(m)` in a CPU block was no registration, and `a` (and `c`, through a
    # function of a function) said CUDA-only; a function no block calls (`unused`) registers nothing (the control)
    assert _regs(HELPER) == [
        ("myops", "a", "CPU"),
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CPU"),
        ("myops", "c", "CUDA"),
    ]
    assert _cuda_only(HELPER) == {"b"}


def test_a_schema_joined_with_a_macro_s_string_names_its_op():
    # 49-scaffold's leftover: `"myops::" NAME "(Tensor x) -> Tensor"` was read as an op `myops` every device runs,
    # and `a`'s function was lost (so `a`, with it, was said CUDA-only); a macro porter cannot read is no op
    source = (
        b'#define NAME "a"\n#define SUFFIX ".out"\n'
        b'TORCH_LIBRARY(myops, m) {\n  m.def("myops::" NAME "(Tensor x) -> Tensor", &a_any);\n'
        b'  m.def("b" SUFFIX "(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", &b_out_any);\n'
        b'  m.def("myops::" UNKNOWN "(Tensor x) -> Tensor", &u_any);\n}\n'
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("c", &c_cuda); }\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CUDA"),
        ("myops", "a", "any"),
        ("myops", "b.out", "any"),
        ("myops", "c", "CUDA"),
    ]
    assert _cuda_only(source) == {"c"}


KERNELS = """__global__ void ((k1))(float* x) { x[0] = 1; }
__attribute__((global)) void k2(float* x) { x[0] = 2; }
__attribute__ (( global )) static void k3(float* x, int n) { x[0] = n; }
__attribute__((noinline)) void host_only(float* x) { x[0] = 4; }
void go(float* x) { k1<<<1, 1>>>(x); k2<<<1, 1>>>(x); k3<<<1, 1>>>(x, 2); }
"""


def test_kernels_named_in_two_parentheses_or_declared_by_the_attribute_are_listed(tmp_path):
    # 49-scaffold's leftover: libclang 18.1.1 declares `k1`, `k2` and `k3` kernels (CUDAGLOBAL_ATTR); porter listed
    # none, and said their launches ran "a name no kernel porter lists has"; `host_only` is no kernel (the control)
    from porter.kernels.inventory import scan

    (tmp_path / "k.cu").write_text(KERNELS)
    inventory = scan(tmp_path)
    assert sorted((k.name, k.line, k.params, [c.line for c in k.calls]) for k in inventory.kernels) == [
        ("k1", 1, ["float* x"], [5]),
        ("k2", 2, ["float* x"], [5]),
        ("k3", 3, ["float* x", "int n"], [5]),
    ]
    assert not any("no kernel porter lists" in p for p in inventory.problems)


DEFAULTS = """__global__ void k(float* x, int n = 4, float eps = 1e-5f, bool flag = true, unsigned m = 0x10u) { x[0] = n; }
__global__ void j(float* x, int n = N, int s = 2) { x[0] = n; }
void go(float* x) { k<<<1, 1>>>(x); j<<<1, 1>>>(x); }
"""


def test_a_kernel_s_default_arguments_are_the_op_s(tmp_path):
    # 49-scaffold's leftover: `int n = 4` launched without `n` gave an op `k(x, n: int)` (torch 2.9's dispatcher:
    # `k(x)`, the launch's call, raises TypeError) and `n = 256` under a TODO; with the defaults `k(x)` runs (its
    # schema `SymInt n=4, float eps=1e-05, SymInt flag=1, SymInt m=16`). `j`'s `n = N`, a macro, ends the trailing
    # run there: only `s` has one (the control)
    from porter.kernels.inventory import scan
    from porter.kernels.scaffold import write_scaffolds

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(DEFAULTS)
    write_scaffolds(scan(tmp_path / "src"), tmp_path / "out", "xla")
    op = (tmp_path / "out" / "k_op.py").read_text()
    assert "def k(x: torch.Tensor, n: int = 4, eps: float = 1e-05, flag: int = 1, m: int = 16) -> None:" in op
    test = (tmp_path / "out" / "test_k_xla_parity.py").read_text()
    assert "    n = 4  # the kernel's default (k.cu:1)" in test and "TODO(porter): the value the call" not in test
    assert "def j(x: torch.Tensor, n: int, s: int = 2) -> None:" in (tmp_path / "out" / "j_op.py").read_text()
