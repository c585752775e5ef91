"""The thirty-fifth read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed
on 5a077b66.

torch 2.9 is the oracle (docs/reads/53-scaffold-tools/oracle6.py.txt): each form below was registered for real and its
op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from tests.kernels.test_thirty_third_read_scaffold import _cuda_only


def test_a_library_a_function_keeps_and_returns_registers_where_its_call_is_used_at_once() -> None:
    # `get_lib().impl("a", fn, "CPU")` of a library the function keeps in a global: torch runs `a` on a CPU tensor;
    # `b`, through such a CUDA library, has a CUDA kernel only (torch: NotImplementedError), the control
    python = b"""
_LIB = None
def get_lib():
    global _LIB
    if _LIB is None:
        _LIB = torch.library.Library("myops", "FRAGMENT")
    return _LIB
_CU = None
def get_cuda():
    global _CU
    if _CU is None:
        _CU = torch.library.Library("myops", "IMPL", "CUDA")
    return _CU
DEF.impl("a", lambda x: x.clone(), "CUDA")
get_lib().impl("a", lambda x: x.clone(), "CPU")
get_cuda().impl("b", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b"}


def test_a_library_whose_namespace_is_unread_still_gives_its_op_a_kernel() -> None:
    # `Library(*ARGS)`: torch runs `a` on a CPU tensor; `c` has a CUDA kernel only (the control)
    python = b"""
ARGS = ("myops", "IMPL", "CPU")
cpu = torch.library.Library(*ARGS)
DEF.impl("a", lambda x: x.clone(), "CUDA")
cpu.impl("a", lambda x: x.clone())
DEF.impl("c", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(python) == {"c"}


def test_a_name_bound_to_a_library_s_impl_registers_through_it() -> None:
    # `reg = DEF.impl` / `reg("a", fn, "CPU")`: torch runs `a` on a CPU tensor; `b`'s kernel through such a name is a
    # CUDA one (the control)
    python = b"""
reg = DEF.impl
creg = DEF.impl
DEF.impl("a", lambda x: x.clone(), "CUDA")
reg("a", lambda x: x.clone(), "CPU")
creg("b", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(python) == {"b"}


def test_a_global_fallback_for_another_device_leaves_no_op_cuda_only() -> None:
    # `Library("_", "IMPL").fallback(fn, "CPU")`: every op without a CPU kernel calls it there (torch runs `a` on a
    # CPU tensor); a `SparseCUDA` fallback reaches no CPU tensor, `a` stays CUDA-only (the control; torch refuses a
    # `Meta` one: it has its own)
    python = b"""
g = torch.library.Library("_", "IMPL")
g.fallback(lambda op, *args, **kwargs: None, "CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(python) == set()
    assert _cuda_only(python.replace(b'"CPU"', b'"SparseCUDA"')) == {"a"}


def test_an_impl_given_its_arguments_by_a_mapping_is_a_kernel_of_an_unread_op() -> None:
    # `DEF.impl(**kw)` with `op_name="a"`, `dispatch_key="CPU"`: torch runs `a` on a CPU tensor; through a CUDA
    # library, the mapping's kernel (`b`'s) is a CUDA one, and `a` stays CUDA-only (the control)
    python = b"""
kw = dict(op_name="a", fn=lambda x: x.clone(), dispatch_key="CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl(**kw)
"""
    assert _cuda_only(python) == set()
    control = b"""
cuda = torch.library.Library("myops", "IMPL", "CUDA")
kw = dict(op_name="b", fn=lambda x: x.clone())
DEF.impl("a", lambda x: x.clone(), "CUDA")
cuda.impl(**kw)
"""
    assert _cuda_only(control) == {"a"}
