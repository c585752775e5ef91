"""The thirty-fifth read's second-wave helper on the registration readers (scaf3, issue 24): the scaffold read's
leftovers. Each test failed on 3a31a86c.

torch 2.9 is the oracle (docs/reads/53-scaf3-tools/oracle7.py.txt): each form below was registered for real and its
op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.kernels import inventory
from tests.kernels.test_thirty_third_read_scaffold import _cuda_only


def test_a_partial_of_a_library_s_impl_registers_through_it() -> None:
    # `functools.partial(DEF.impl, dispatch_key="CPU")` / `cpu_impl("a", fn)`, and `partial` imported from functools
    # given the op first: torch runs `a` and `b` on a CPU tensor; `c`'s partial is a CUDA one (the control)
    python = b"""
import functools
from functools import partial as bind
cpu_impl = functools.partial(DEF.impl, dispatch_key="CPU")
reg_b = bind(DEF.impl, "b")
cuda_impl = functools.partial(DEF.impl, dispatch_key="CUDA")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
cpu_impl("a", lambda x: x.clone())
reg_b(lambda x: x.clone(), "CPU")
cuda_impl("c", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"c"}


def test_getattr_of_a_library_s_impl_registers_through_it() -> None:
    # `getattr(DEF, "impl")("a", fn, "CPU")` and a name bound to it: torch runs `a` and `b` on a CPU tensor; `c`'s is a
    # CUDA kernel (the control)
    python = b"""
reg = getattr(DEF, "impl")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
getattr(DEF, "impl")("a", lambda x: x.clone(), "CPU")
reg("b", lambda x: x.clone(), "CPU")
getattr(DEF, "impl")("c", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(python) == {"c"}


def test_a_scoped_library_a_stack_keeps_registers_for_its_key() -> None:
    # `cpu = stack.enter_context(torch.library._scoped_library("myops", "IMPL"))` / `cpu.impl("a", fn, "CPU")`: torch
    # runs `a` on a CPU tensor; `b`, through such a CUDA library, has a CUDA kernel only (the control)
    python = b"""
import contextlib
stack = contextlib.ExitStack()
cpu = stack.enter_context(torch.library._scoped_library("myops", "IMPL"))
cuda = stack.enter_context(torch.library._scoped_library("myops", "IMPL", "CUDA"))
DEF.impl("a", lambda x: x.clone(), "CUDA")
cpu.impl("a", lambda x: x.clone(), "CPU")
cuda.impl("b", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b"}


def test_a_scoped_library_of_a_with_block_gives_no_verdict() -> None:
    # `with torch.library._scoped_library("myops", "IMPL", "CPU") as cpu:`: torch runs `a` on a CPU tensor in the
    # block, and not after it: no verdict
    python = b"""
DEF.impl("a", lambda x: x.clone(), "CUDA")
with torch.library._scoped_library("myops", "IMPL", "CPU") as cpu:
    cpu.impl("a", lambda x: x.clone())
"""
    assert _cuda_only(python) == set()


def test_a_fresh_library_a_factory_gives_and_nothing_keeps_registers_nothing() -> None:
    # `make().impl("a", fn, "CPU")` of a factory returning a `Library` nothing keeps: torch 2.9 destroys it at once,
    # `a` has a CUDA kernel only (NotImplementedError on a CPU tensor); `b`'s factory keeps its library in a list, and
    # `c`'s is cached (`lru_cache`): torch runs both on a CPU tensor (the controls)
    python = b"""
import functools
KEEP = []
def make():
    return torch.library.Library("myops", "IMPL")
def make_local():
    lib = torch.library.Library("myops", "IMPL", "CPU")
    lib.impl("d", lambda x: x.clone())
    return lib
def kept():
    lib = torch.library.Library("myops", "IMPL", "CPU")
    KEEP.append(lib)
    return lib
@functools.lru_cache
def cached():
    return torch.library.Library("myops", "IMPL")
for op in ("a", "b", "c", "e"):
    DEF.impl(op, lambda x: x.clone(), "CUDA")
make().impl("a", lambda x: x.clone(), "CPU")
make_local().impl("e", lambda x: x.clone())
kept().impl("b", lambda x: x.clone())
cached().impl("c", lambda x: x.clone(), "CPU")
"""
    assert _cuda_only(python) == {"a", "e"}


def test_a_kernel_of_an_unread_namespace_is_said_in_the_kernels_notes() -> None:
    # `Library(*ARGS)`: its op `a` is taken for not CUDA-only in every namespace, and the table leaves it out: a note
    python = b"""import torch
ARGS = ("myops", "IMPL")
cpu = torch.library.Library(*ARGS)
cpu.impl("a", lambda x: x.clone(), "CPU")
cuda = torch.library.Library(*ARGS)
cuda.impl("b", lambda x: x.clone(), "CUDA")
"""
    problems: list[str] = []
    assert inventory._python_registered([("pkg/ops.py", python)], problems) == []
    assert [p for p in problems if "namespace porter cannot read" in p] == [
        "pkg/ops.py: registers a kernel for `CPU` of `a` in a namespace porter cannot read (given at run time): no op "
        "`a` of any namespace is taken for CUDA-only"
    ]
