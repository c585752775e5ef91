"""The thirty-fourth read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed
on 73040789.

torch 2.9 is the oracle (docs/reads/52-scaffold-tools/oracle3.py.txt): each form below was registered for real and its
op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from tests.kernels.test_thirty_third_read_scaffold import _cuda_only


def test_a_library_and_its_impl_given_by_keywords_are_read() -> None:
    # torch runs `a` (a library made by keywords) and `b` (`impl` given by keywords) on a CPU tensor; `c`'s CPU
    # library made by keywords registers for `d` only, and `c` keeps a CUDA kernel only (the control)
    python = b"""
cpu = torch.library.Library(ns="myops", kind="IMPL", dispatch_key="CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
cpu.impl("a", lambda x: x.clone())
DEF.impl("b", lambda x: x.clone(), "CUDA")
DEF.impl(op_name="b", fn=lambda x: x.clone(), dispatch_key="CPU")
DEF.impl("c", lambda x: x.clone(), "CUDA")
DEF.impl("d", lambda x: x.clone(), "CUDA")
cpu.impl(fn=lambda x: x.clone(), op_name="d")
"""
    assert _cuda_only(python) == {"c"}


def test_a_torch_library_function_assigned_to_a_name_registers_through_it() -> None:
    # `I = torch.library.impl` then `I("myops::a", "cpu", fn, lib=DEF)`: torch runs `a` and `b` on a CPU tensor;
    # `c`'s kernel through the same name is a CUDA one (the control)
    python = b"""
I = torch.library.impl
rk = torch.library.register_kernel
L = torch.library.Library
DEF.impl("a", lambda x: x.clone(), "CUDA")
I("myops::a", "cpu", lambda x: x.clone(), lib=DEF)
DEF.impl("b", lambda x: x.clone(), "CUDA")
rk("myops::b", "cpu", lambda x: x.clone(), lib=DEF)
I("myops::c", "cuda", lambda x: x.clone(), lib=DEF)
DEF.impl("d", lambda x: x.clone(), "CUDA")
cpu = L("myops", "IMPL", "CPU")
cpu.impl("d", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"c"}


def test_a_library_bound_to_two_names_at_once_is_read_by_each() -> None:
    # `lib = keep = Library("myops", "IMPL", "CUDA")`: `a` has a CUDA kernel only (torch: NotImplementedError on a
    # CPU tensor); `b`, through a CPU library bound so, runs (the control)
    python = b"""
lib = keep = torch.library.Library("myops", "IMPL", "CUDA")
lib.impl("a", lambda x: x.clone())
DEF.impl("b", lambda x: x.clone(), "CUDA")
cpu = other = torch.library.Library("myops", "IMPL", "CPU")
other.impl("b", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"a"}


def test_an_op_given_by_a_name_the_file_binds_once_is_read_by_its_values() -> None:
    # the CUDA kernels by a loop over a literal list; torch runs `a`-`e` on a CPU tensor (an op by a constant, a loop
    # over literal names, a dict's keys, an op object in a variable, `getattr` on `torch.ops`); `late`, bound twice,
    # is not followed (the CPU kernel is `g`'s by then): `f` stays CUDA-only (the control, torch agrees)
    python = b"""
NAME = "a"
for cuda in ["a", "b", "c", "d", "e", "f"]:
    DEF.impl(cuda, lambda x: x.clone(), "CUDA")
DEF.impl(NAME, lambda x: x.clone(), "CPU")
for op in ("b",):
    DEF.impl(op, lambda x: x.clone(), "CPU")
late = "f"
DEF.define("g(Tensor x) -> Tensor")
late = "g"
DEF.impl(late, lambda x: x.clone(), "CPU")
for key, fn in {"c": lambda x: x.clone()}.items():
    DEF.impl(key, fn, "CPU")
obj = torch.ops.myops.d.default
torch.library.register_kernel(obj, "cpu", lambda x: x.clone(), lib=DEF)
DEF.impl(getattr(torch.ops.myops, "e").default, lambda x: x.clone(), "CPU")
"""
    assert _cuda_only(python) == {"f"}


def test_a_key_given_by_a_name_the_file_binds_once_is_read() -> None:
    # `KEY = "CUDA"`: `a` (a library made with it) and `b` (an `impl` given it) have a CUDA kernel only (torch:
    # NotImplementedError on a CPU tensor); `c`, registered for each key of a loop over ("CUDA", "CPU"), runs (the
    # control)
    python = b"""
KEY = "CUDA"
lib = torch.library.Library("myops", "IMPL", KEY)
lib.impl("a", lambda x: x.clone())
DEF.impl("b", lambda x: x.clone(), KEY)
for each in ("CUDA", "CPU"):
    DEF.impl("c", lambda x: x.clone(), each)
"""
    assert _cuda_only(python) == {"a", "b"}
