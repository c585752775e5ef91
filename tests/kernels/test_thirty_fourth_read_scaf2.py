"""The thirty-fourth read of the registration readers (scaf2, issue 24: the scaffold and scleft forms together):
each test failed on ebd7eb7e.

torch 2.9 is the oracle (docs/reads/52-scaf2-tools/oracle5.py.txt): each form below was registered for real and its
op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from porter.kernels import inventory

DEFINED = b"""import torch
import torch.library

DEF = torch.library.Library("myops", "DEF")
for name in "abcdef":
    DEF.define(name + "(Tensor x) -> Tensor")
"""


def _cuda_only(python: bytes, ns: str = "myops") -> set[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", DEFINED + python)])
    return set(native_ops.cuda_only_ops([], kernels).get(ns, {}))


def test_an_op_porter_cannot_read_leaves_its_namespace_without_a_cuda_only_verdict() -> None:
    # torch runs `a` on a CPU tensor in each: its CPU kernel's op is an f-string of a loop's name, `"{}::a".format(NS)`,
    # `NS + "::a"`, `"%s::a" % NS`, a function's parameter, a walrus, a class's constant
    forms = [
        'for n in ("a", "b"):\n    torch.library.impl(f"myops::{n}", "cpu", lambda x: x.clone(), lib=DEF)\n',
        'NS = "myops"\ntorch.library.impl("{}::a".format(NS), "cpu", lambda x: x.clone(), lib=DEF)\n',
        'NS = "myops"\ntorch.library.impl(NS + "::a", "cpu", lambda x: x.clone(), lib=DEF)\n',
        'NS = "myops"\ntorch.library.register_kernel("%s::a" % NS, "cpu", lambda x: x.clone(), lib=DEF)\n',
        'def reg(lib, name):\n    lib.impl(name, lambda x: x.clone(), "CPU")\nreg(DEF, "a")\n',
        'NS = "myops"\ntorch.library.impl((op := f"{NS}::a"), "cpu", lambda x: x.clone(), lib=DEF)\n',
        'class C:\n    NS = "myops"\ntorch.library.impl(f"{C.NS}::a", "cpu", lambda x: x.clone(), lib=DEF)\n',
        'late = "f"\nlate = "a"\nDEF.impl(late, lambda x: x.clone(), "CPU")\n',
    ]
    for form in forms:
        assert _cuda_only(b'DEF.impl("a", lambda x: x.clone(), "CUDA")\n' + form.encode()) == set(), form
    # the controls: an unread op registered for CUDA only leaves `a` CUDA-only; one spelled in another namespace
    # (`f"other::{n}"`) leaves this one's verdicts; another object's `impl` is none of torch's
    controls = [
        'for n in ("a",):\n    torch.library.impl(f"myops::{n}", "cuda", lambda x: x.clone(), lib=DEF)\n',
        'for n in ("a",):\n    torch.library.impl(f"other::{n}", "cpu", lambda x: x.clone())\n',
        'for n in ("a",):\n    registry.impl(f"{n}", "cpu")\n',
    ]
    for form in controls:
        assert _cuda_only(b'DEF.impl("a", lambda x: x.clone(), "CUDA")\n' + form.encode()) == {"a"}, form
    # (the kernels table reads the same kernels: an unread op is no row of its own, `myops::?`)
    python = DEFINED + forms[0].encode()
    assert [r.op for r in inventory._python_registered([("pkg/ops.py", python)])] == []


def test_a_library_a_name_is_bound_to_by_another_name_or_a_loop_registers_through_it() -> None:
    # `other = cpu` / `other.impl("a", ...)` and `for lib in (cpu,): lib.impl("b", ...)`: torch runs `a`, `b` on a
    # CPU tensor; `c` keeps its CUDA kernel only (the control)
    python = b"""
cpu = torch.library.Library("myops", "IMPL", "CPU")
other = cpu
for cuda in ("a", "b", "c"):
    DEF.impl(cuda, lambda x: x.clone(), "CUDA")
other.impl("a", lambda x: x.clone())
for lib in (cpu,):
    lib.impl("b", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"c"}


def test_a_loop_over_a_constant_tuple_of_op_names_is_read() -> None:
    # `OPS = ("a", "b")` / `for op in OPS: DEF.impl(op, fn, "CPU")`: torch runs `a`, `b`; `c` stays CUDA-only
    python = b"""
OPS = ("a", "b")
for cuda in ["a", "b", "c"]:
    DEF.impl(cuda, lambda x: x.clone(), "CUDA")
for op in OPS:
    DEF.impl(op, lambda x: x.clone(), "CPU")
"""
    assert _cuda_only(python) == {"c"}


def test_a_key_given_by_a_constant_of_a_constant_or_an_f_string_is_read() -> None:
    # `KEY = K` (`K = "CUDA"`), `f"{DEV}"`: torch has `a`, `b` CUDA-only (they were given no verdict); `c`, given
    # `CPU` so too, runs (the control)
    python = b"""
K = "CUDA"
KEY = K
DEV = "CUDA"
HOST = "CPU"
DEF.impl("a", lambda x: x.clone(), KEY)
DEF.impl("b", lambda x: x.clone(), f"{DEV}")
DEF.impl("c", lambda x: x.clone(), KEY)
DEF.impl("c", lambda x: x.clone(), f"{HOST}")
"""
    assert _cuda_only(python) == {"a", "b"}


def test_the_library_class_method_given_the_library_reads_its_key() -> None:
    # `torch.library.Library.impl(DEF, "a", fn, "CUDA")`: torch has `a` CUDA-only (no verdict was given); `b` has a
    # CPU kernel so too (the control: torch runs it)
    python = b"""
torch.library.Library.impl(DEF, "a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
torch.library.Library.impl(DEF, "b", lambda x: x.clone(), "CPU")
"""
    assert _cuda_only(python) == {"a"}


def _cpp_cuda_only(cpu_body: str) -> set[str]:
    cuda = b'#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CUDA, m) {\n  m.impl("d", &d_cuda);\n}\n'
    cpu = ("#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CPU, m) {\n  " + cpu_body + "\n}\n").encode()
    return set(native_ops.cuda_only_ops([("a.cu", cuda), ("b.cpp", cpu)]).get("myops", {}))


def test_an_op_string_in_an_undecided_branch_inside_the_call_is_no_op_read() -> None:
    # `m.impl(` / `#ifdef SOMETHING_UNSET` / `"x",` / `#else` / `"d",` / `#endif`: g++ registers `d`'s CPU kernel
    # (the macro unset); the first string was read, and `d` said CUDA-only
    undecided = 'm.impl(\n#ifdef SOMETHING_UNSET\n  "x",\n#else\n  "d",\n#endif\n  &d_cpu);'
    assert _cpp_cuda_only(undecided) == set()
    # (the controls: a branch porter decides is read as the compiler reads it)
    assert _cpp_cuda_only('m.impl(\n#if 0\n  "d",\n#else\n  "x",\n#endif\n  &x_cpu);') == {"d"}
    assert _cpp_cuda_only('m.impl(\n#if 1\n  "d",\n#else\n  "x",\n#endif\n  &d_cpu);') == set()


def test_a_function_another_module_may_call_with_another_library_gives_no_verdict() -> None:
    # ops.py gives `reg` a CUDA library, cpu.py (`from .ops import reg`) a CPU one: torch runs `a` on a CPU tensor
    ops = b"""import torch
from torch.library import Library
DEF = Library("myops", "DEF")
DEF.define("a(Tensor x) -> Tensor")
cuda = Library("myops", "IMPL", "CUDA")
def reg(lib):
    lib.impl("a", lambda x: x.clone())
reg(cuda)
"""
    cpu = b'from torch.library import Library\nfrom .ops import reg\nreg(Library("myops", "IMPL", "CPU"))\n'
    files = [("pkg/__init__.py", b""), ("pkg/ops.py", ops), ("pkg/cpu.py", cpu)]
    assert native_ops.cuda_only_ops([], python_ops.registered_kernels(files)).get("myops", {}) == {}
    # (the control: no other module names `reg`: `a` has its CUDA kernel only)
    alone = python_ops.registered_kernels([("pkg/__init__.py", b""), ("pkg/ops.py", ops)])
    assert set(native_ops.cuda_only_ops([], alone).get("myops", {})) == {"a"}


def test_a_namespace_constant_imported_from_another_module_is_read() -> None:
    # mase-triton 0.0.7's form: `from .about import PACKAGE_NAME`, then a `Library` and an f-string op of it; torch
    # runs `a` and `b` on a CPU tensor (docs/reads/52-scaf2-tools/imported_const.py); `c` stays CUDA-only (the control)
    ops = b"""import torch
from torch.library import Library
from .about import PACKAGE_NAME
DEF = Library("myops", "DEF")
for name in ("a", "b", "c"):
    DEF.define(name + "(Tensor x) -> Tensor")
    DEF.impl(name, lambda x: x.clone(), "CUDA")
cpu = Library(PACKAGE_NAME, "IMPL", "CPU")
cpu.impl("a", lambda x: x.clone())
torch.library.impl(f"{PACKAGE_NAME}::b", "cpu", lambda x: x.clone(), lib=DEF)
"""
    files = [("pkg/__init__.py", b""), ("pkg/about.py", b'PACKAGE_NAME = "myops"\n'), ("pkg/ops.py", ops)]
    assert set(native_ops.cuda_only_ops([], python_ops.registered_kernels(files)).get("myops", {})) == {"c"}
