"""The thirty-third read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed on
6d9b5ff1.

torch 2.9 is the oracle (docs/reads/51-scaffold-tools/oracle2.py.txt): each form below was registered for real and its
op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

import pytest

from porter.analysis import native_ops, python_ops

DEFINED = b"""import torch
import torch.library

DEF = torch.library.Library("myops", "DEF")
for name in "abcdef":
    DEF.define(name + "(Tensor x) -> Tensor")
"""


def _cuda_only(python: bytes) -> set[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", DEFINED + python)])
    return set(native_ops.cuda_only_ops([], kernels).get("myops", {}))


def test_a_library_s_impl_given_an_empty_key_registers_for_the_library_s_key() -> None:
    # torch's `Library.impl(op, fn, dispatch_key="")` takes the library's key: `a`, `b` and `c` have a CUDA kernel
    # only (torch: NotImplementedError on a CPU tensor); `d`'s empty key on a library of none is every device's
    python = b"""
cuda = torch.library.Library("myops", "IMPL", "CUDA")
cuda.impl("a", lambda x: x.clone(), "")
cuda.impl("b", lambda x: x.clone(), dispatch_key="")
torch.library.impl(cuda, "c", "")(lambda x: x.clone())
any_device = torch.library.Library("myops", "IMPL")
DEF.impl("d", lambda x: x.clone(), "CUDA")
any_device.impl("d", lambda x: x.clone(), "")
"""
    assert _cuda_only(python) == {"a", "b", "c"}


def test_a_kernel_given_torch_s_fallthrough_kernel_is_no_kernel() -> None:
    # a fallthrough computes nothing: the next key's kernel runs, and there is none for a CPU tensor (torch 2.9:
    # NotImplementedError for `a`-`d`); `e`'s CPU kernel computes (the control)
    python = b"""
from torch.library import fallthrough_kernel as passes
lib = torch.library.Library("myops", "IMPL")
lib.impl("a", lambda x: x.clone(), "CUDA")
lib.impl("a", torch.library.fallthrough_kernel, "CPU")
lib.impl("b", lambda x: x.clone(), "CUDA")
lib.impl("b", passes, "CPU")
torch.library.impl("myops::c", "cuda", lambda x: x.clone(), lib=DEF)
torch.library.impl("myops::c", "cpu", torch.library.fallthrough_kernel, lib=DEF)
lib.impl("d", lambda x: x.clone(), "CUDA")
torch.library.impl(lib, "d", "AutogradCPU")(torch.library.fallthrough_kernel)
lib.impl("e", lambda x: x.clone(), "CUDA")
lib.impl("e", lambda x: x.clone(), "CPU")
"""
    assert _cuda_only(python) == {"a", "b", "c", "d"}


def test_a_library_name_is_read_by_its_binding_where_it_is_used() -> None:
    # `lib` is a CUDA library in `_cuda` and where `a`, `c` are registered, a CPU one in `_cpu` and after: torch 2.9
    # runs `b` and `d` on a CPU tensor, not `a` and `c`
    python = b"""
def _cuda():
    lib = torch.library.Library("myops", "IMPL", "CUDA")
    lib.impl("a", lambda x: x.clone())
    lib.impl("b", lambda x: x.clone())
    return lib


def _cpu():
    lib = torch.library.Library("myops", "IMPL", "CPU")
    lib.impl("b", lambda x: x.clone())
    return lib


KEEP = [_cuda(), _cpu()]
lib = torch.library.Library("myops", "IMPL", "CUDA")
lib.impl("c", lambda x: x.clone())
lib.impl("d", lambda x: x.clone())
KEEP.append(lib)
lib = torch.library.Library("myops", "IMPL", "CPU")
lib.impl("d", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"a", "c"}


def test_a_class_s_own_library_is_read_in_its_other_methods() -> None:
    # `self.lib` is a CUDA library in `CudaOps`, a CPU one in `CpuOps`, each bound in `__init__` and used in
    # `register`: torch 2.9 runs `b` on a CPU tensor, not `a`
    python = b"""
class CudaOps:
    def __init__(self):
        self.lib = torch.library.Library("myops", "IMPL", "CUDA")

    def register(self):
        self.lib.impl("a", lambda x: x.clone())


class CpuOps:
    def __init__(self):
        self.lib = torch.library.Library("myops", "IMPL", "CPU")

    def register(self):
        self.lib.impl("b", lambda x: x.clone())


KEEP = [CudaOps(), CpuOps()]
for ops in KEEP:
    ops.register()
DEF.impl("b", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(python) == {"a"}


def test_a_library_porter_cannot_name_makes_no_op_cuda_only() -> None:
    # a class's library (`R.lib`), one in a list, one bound by `:=`: each gives its op a CPU kernel (torch 2.9 runs
    # `a`, `b`, `c` on a CPU tensor); a library used at once and dropped registers nothing that lasts (`d`: torch
    # destroys it, NotImplementedError), and `e` has a CUDA kernel only (the controls)
    python = b"""
class R:
    lib = torch.library.Library("myops", "IMPL", "CPU")


LIBS = [torch.library.Library("myops", "IMPL", "CPU")]
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
DEF.impl("c", lambda x: x.clone(), "CUDA")
DEF.impl("d", lambda x: x.clone(), "CUDA")
DEF.impl("e", lambda x: x.clone(), "CUDA")
R.lib.impl("a", lambda x: x.clone())
LIBS[0].impl("b", lambda x: x.clone())
(cpu := torch.library.Library("myops", "IMPL", "CPU")).impl("c", lambda x: x.clone())
torch.library.Library("myops", "IMPL", "CPU").impl("d", lambda x: x.clone())
"""
    kernels = python_ops.registered_kernels([("pkg/ops.py", DEFINED + python)])
    assert {op for _, _, op, key in kernels if key != "CUDA"} == {"a", "b", "c"}
    assert _cuda_only(python) == {"d", "e"}


CUDA_AB = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }
"""


@pytest.mark.parametrize(
    "cpu",
    [
        b'TORCH_LIBRARY_IMPL(myops, CPU, m) {\n#if 0\n}\n#endif\n  m.impl("a", &a_cpu);\n}\n',
        b'void reg(torch::Library& m) {\n#if 0\n}\n#endif\n  m.impl("a", &a_cpu);\n}\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg(m); }\n",
        b'void reg(torch::Library& m) {\n#if 0\n  if (old) {\n#endif\n  m.impl("a", &a_cpu);\n}\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg(m); }\n",
    ],
    ids=["block_closed_in_if0", "function_closed_in_if0", "function_opened_in_if0"],
)
def test_a_brace_on_a_line_no_build_compiles_closes_no_block_or_function(cpu: bytes) -> None:
    # `cpp -P` drops the `#if 0` lines: the CPU block reaches `a`'s CPU kernel, and `b` alone is CUDA-only
    # (docs/reads/51-scaffold-tools/block_if.py.txt)
    assert set(native_ops.cuda_only_ops([("csrc/ops.cpp", CUDA_AB + cpu)]).get("myops", {})) == {"b"}
