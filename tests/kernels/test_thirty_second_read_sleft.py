"""The thirty-second read's helper on the scaffold leftovers (sleft, issue 24): each test failed on 138fe441,
with what 49-scaffold, 49-scaf2 and 49-sleft left in the registration reader and the kernel listing."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops
from tests.kernels.test_thirty_first_read_sleft import _cuda_only, _regs


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
    # and `a`'s function was lost (so `a`, with it, was said CUDA-only); `FIRST "(...)"` was none (`d` said CUDA-only);
    # a macro porter cannot read is no op, nor one defined only after its use (`LATE`: no C++, cpp leaves the word)
    source = (
        b'#define NAME "a"\n#define SUFFIX ".out"\n#define FIRST "d"\n'
        b'TORCH_LIBRARY(myops, m) {\n  m.def("myops::" NAME "(Tensor x) -> Tensor", &a_any);\n'
        b'  m.def("b" SUFFIX "(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", &b_out_any);\n'
        b'  m.def("myops::" UNKNOWN "(Tensor x) -> Tensor", &u_any);\n  m.def(FIRST "(Tensor x) -> Tensor", &d_any);\n'
        b'  m.def("myops::" LATE "(Tensor x) -> Tensor", &e_any);\n}\n#define LATE "e"\n'
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("c", &c_cuda); m.impl("d", &d_cuda); }\n'
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("e", &e_cuda); }\n'
    )
    assert _regs(source) == [
        ("myops", "a", "CUDA"),
        ("myops", "a", "any"),
        ("myops", "b.out", "any"),
        ("myops", "c", "CUDA"),
        ("myops", "d", "CUDA"),
        ("myops", "d", "any"),
        ("myops", "e", "CUDA"),
    ]
    assert _cuda_only(source) == {"c", "e"}


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


OVERLOADS = b"""TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("a.out", &a_out_cpu); }
"""


def test_an_op_taken_as_a_value_gets_no_fact_where_an_overload_of_it_runs_elsewhere():
    # 49-sleft's leftover: `op = torch.ops.myops.a; op.out(x, out=y)` got the fact of `torch.ops.myops.a`, which
    # covers `op.out`, said CUDA-only; torch 2.9 runs `a.out` on a CPU tensor (and refuses `a`'s default there).
    # `b`, with no other overload, taken as a value, and `a` only called, keep theirs (the controls)
    from porter.analysis.cuda_only_index import cuda_only_imports

    files = [
        ("bound.py", b"import torch\n\ndef f(x, y):\n    op = torch.ops.myops.a\n    return op.out(x, out=y)\n"),
        ("got.py", b'import torch\n\ndef f(x, y):\n    return getattr(torch.ops.myops.a, "out")(x, out=y)\n'),
        ("called.py", b"import torch\n\ndef f(x):\n    return torch.ops.myops.a (x)\n"),
        ("bbound.py", b"import torch\n\ndef f(x):\n    op = torch.ops.myops.b\n    return op(x)\n"),
    ]
    facts = cuda_only_imports(files, None, (), [("csrc/ops.cu", OVERLOADS)])
    named = {path: sorted(f[1] for f in found) for path, found in facts.items()}
    assert named == {"called.py": ["torch.ops.myops.a"], "bbound.py": ["torch.ops.myops.b"]}


RUN = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)


def add(x, pool):
    y = torch.empty_like(x)
    add_kernel.run(x, y, x.numel(), BLOCK=128, grid=(triton.cdiv(x.numel(), 128),), warmup=False)
    pool.run(x, grid=4)
    return y
"""


def test_a_triton_kernel_run_with_its_grid_is_a_launch(tmp_path):
    # 49-scaffold's leftover: `add_kernel.run(..., grid=..., warmup=False)` (triton 3.5.0's interpreter runs the
    # kernel: `add(x)` is `x + 1`) was no launch, and the kernel was listed with no call sites; `pool.run`, no
    # kernel's, is none (the control)
    from porter.kernels.inventory import scan

    (tmp_path / "m.py").write_text(RUN)
    inventory = scan(tmp_path)
    assert [(k.name, [(c.line, c.args) for c in k.calls]) for k in inventory.kernels] == [
        ("add_kernel", [(14, ["x", "y", "x.numel()", "BLOCK=128"])])
    ]


def test_head_and_registering_macros_of_an_included_header_are_read(tmp_path):
    # 49-sleft's leftover: only the file's own `#define`s were expanded, so a block opened by `ops.h`'s `CPU_LIB` or
    # `LIB(CPU)`, and `REG_CPU(b)` in a CPU block, were none (`cpp -P -x c++`: three CPU blocks) and `a`, `b`, `c`
    # said CUDA-only; `d`, a CUDA kernel only, the control
    (tmp_path / "ops.h").write_bytes(
        b"#pragma once\n#define CPU_LIB TORCH_LIBRARY_IMPL(myops, CPU, m)\n#define REG_CPU(op) m.impl(#op, &op##_cpu)\n"
        b"#define LIB(dev) TORCH_LIBRARY_IMPL(myops, dev, m)\n"
    )
    source = (
        b'#include "ops.h"\nTORCH_LIBRARY_IMPL(myops, CUDA, m) {\n'
        b'  m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); m.impl("d", &d_cuda);\n}\n'
        b'CPU_LIB { m.impl("a", &a_cpu); }\nTORCH_LIBRARY_IMPL(myops, CPU, m) { REG_CPU(b); }\n'
        b'LIB(CPU) { m.impl("c", &c_cpu); }\n'
    )
    (tmp_path / "a.cu").write_bytes(source)
    found = native_ops.registrations(source, tmp_path / "a.cu", tmp_path)
    assert sorted(op for _, op, key in found if key == "CPU") == ["a", "b", "c"]
    assert set(native_ops.cuda_only_ops([(str(tmp_path / "a.cu"), source)])["myops"]) == {"d"}


SPELLED_NAMED = """#define KNAME(n) n##_kernel
#define GLOBAL __global__
#define EXPORT
GLOBAL void KNAME(bar)(float* y) { y[0] = 1; }
__attribute__((global)) static void KNAME(baz)(float* y) { y[0] = 1; }
EXPORT void KNAME(host)(float* y) { y[0] = 1; }
void go(float* x) { bar_kernel<<<1, 1>>>(x); baz_kernel<<<1, 1>>>(x); }
"""


def test_a_macro_named_kernel_whose_global_a_macro_or_the_attribute_spells_is_listed(tmp_path):
    # 49-sleft's leftover: only `__global__ void KNAME(foo)(` was read; libclang 18.1.1 declares `bar_kernel` and
    # `baz_kernel` kernels (CUDAGLOBAL_ATTR), porter listed neither and said their launches ran "a name no kernel
    # porter lists has"; `EXPORT void KNAME(host)(`, a host function, is none (the control)
    from porter.kernels.inventory import scan

    (tmp_path / "k.cu").write_text(SPELLED_NAMED)
    inventory = scan(tmp_path)
    assert sorted((k.name, k.line, [c.line for c in k.calls]) for k in inventory.kernels) == [
        ("bar_kernel", 4, [7]),
        ("baz_kernel", 5, [7]),
    ]
    assert not any("no kernel porter lists" in p for p in inventory.problems)


def test_a_block_that_registers_through_another_file_s_function_is_said_and_decides_nothing(tmp_path):
    # seen while fixing S1: `register_cpu(m)` defined in `b.cpp` (no `TORCH_LIBRARY` there, so not read): `a` was
    # said CUDA-only, unsaid; now no op of `myops` is, and `porter kernels` says why. `other::z`, whose CUDA block
    # passes its library to `register_cuda` (more CUDA kernels at most), stays CUDA-only (the control)
    from porter.kernels.inventory import scan

    a = (
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); }\nvoid register_cpu(torch::Library& m);\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { register_cpu(m); if (sizeof(m)) {} }\n"
        b'TORCH_LIBRARY_IMPL(other, CUDA, m) { m.impl("z", &z_cuda); register_cuda(m); }\n'
    )
    b = b'#include <torch/library.h>\nvoid register_cpu(torch::Library& lib) { lib.impl("a", &a_cpu); }\n'
    assert native_ops.cuda_only_ops([("a.cu", a), ("b.cpp", b)]) == {
        "other": {
            "z": "the project's op `other::z` has a CUDA kernel only: registered for CUDA in a.cu, for no other device"
        }
    }
    (tmp_path / "a.cu").write_bytes(a)
    (tmp_path / "b.cpp").write_bytes(b)
    notes = [p for p in scan(tmp_path).problems if "a function this file does not define" in p]
    assert notes == [
        "a.cu:3: the CPU block of `myops` passes its library to `register_cpu`, a function this file does not "
        "define: what it registers is not read, so no op of `myops` is taken for CUDA-only",
    ]


def test_a_function_defined_above_a_cuda_block_is_read_to_its_own_closing_brace():
    """The lead's review of this read: a function above the blocks was read with the blocks' forward-only brace
    search, to the end of the block that calls it, so the CUDA block between was counted as CPU kernels too
    (`b`, CUDA only, was not CUDA-only); a function whose braces never close is said, not read to the file's end."""
    source = b"""void register_cpu(torch::Library& m) { m.impl("a", &a_cpu); }
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { register_cpu(m); }
"""
    assert _regs(source) == [("myops", "a", "CPU"), ("myops", "a", "CUDA"), ("myops", "b", "CUDA")]
    assert _cuda_only(source) == {"b"}
    unclosed = b'void register_cpu(torch::Library& m) { m.impl("a", &a_cpu);\nTORCH_LIBRARY_IMPL(myops, CPU, m) { register_cpu(m); }\n'
    assert native_ops.registrations_and_unread(unclosed, Path("a.cu")) == (
        [],
        [("myops", "CPU", "register_cpu", 2, True)],
    )
