"""The thirty-fourth read's second-wave tidy (tidy, on 862af2d1; docs/reads/52-tidy-attempts.md): a defect found
while folding two readers of one rule into one; it failed there.

torch 2.9 is the oracle (docs/reads/52-tidy-tools/oracle.py.txt): the form below registered for real, each op called
on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.analysis import python_ops
from tests.kernels.test_thirty_third_read_scaffold import DEFINED, _cuda_only


def test_a_module_constant_a_functions_parameter_shadows_is_not_read_in_that_function() -> None:
    # torch: `a` has its CUDA kernel only (NotImplementedError on a CPU tensor), `b` runs on a CPU tensor. The
    # scaffold read's names bound once counted parameters and the scleft read's string constants did not, so
    # `lib.impl(OP, ...)` in `reg(lib, OP)` was read as the module's `OP = "a"`: a CPU kernel of `a`, said to run
    # everywhere. Now one count of the names bound once serves both: `OP` there is the parameter, unread.
    python = b"""
cpu = torch.library.Library("myops", "IMPL", "CPU")
OP = "a"
def reg(lib, OP):
    lib.impl(OP, lambda x: x.clone(), "CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
reg(cpu, "b")
"""
    kernels = python_ops.registered_kernels([("pkg/ops.py", DEFINED + python)])
    assert ("myops", "a", "CPU") not in {k[1:] for k in kernels}, kernels
    # (scaf2's rule, merged after: an op porter cannot read, the parameter, leaves its namespace with no verdict,
    # never a wrong one; before scaf2, `a` alone was said CUDA-only here)
    assert _cuda_only(python) == set()
    # (the control: the module's constant read where no parameter shadows it)
    assert _cuda_only(python.replace(b"def reg(lib, OP)", b"def reg(lib, _op)")) == set()
