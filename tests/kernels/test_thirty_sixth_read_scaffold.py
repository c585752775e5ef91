"""The thirty-sixth read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed
on c5b375fb.

torch 2.9 is the oracle (docs/reads/54-scaffold-tools/oracle8.py.txt, check_tests.py.txt): each form below was
registered for real and its op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from tests.kernels.test_thirty_third_read_scaffold import DEFINED, _cuda_only


def test_a_subclass_of_library_registers_as_a_library() -> None:
    # `class CpuLib(torch.library.Library): pass` / `CpuLib("myops", "IMPL").impl("a", fn, "CPU")`: torch runs `a` on
    # a CPU tensor; `b`, through a subclass's CUDA library, and `c`, through a subclass of a subclass, have a CUDA
    # kernel only (the controls)
    python = b"""
from torch.library import Library as Lb
class CpuLib(torch.library.Library):
    pass
class Named(Lb):
    '''a library'''
class Deeper(Named):
    pass
DEF.impl("a", lambda x: x.clone(), "CUDA")
cpu = CpuLib("myops", "IMPL")
cpu.impl("a", lambda x: x.clone(), "CPU")
cuda = Named("myops", "IMPL", "CUDA")
cuda.impl("b", lambda x: x.clone())
deeper = Deeper("myops", "IMPL", "CUDA")
deeper.impl("c", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b", "c"}


def test_a_library_subclass_with_its_own_init_or_methods_gives_no_verdict_on_a_guess() -> None:
    # a subclass whose `__init__` gives `Library` its own key, or whose method registers through `self`: torch runs
    # `a` (then `b`) on a CPU tensor; porter cannot read their namespace and key: no verdict (said); `b` first, and
    # `d` beside a subclass whose method registers for CUDA only, stay CUDA-only (the controls)
    python = b"""
class CpuLib(torch.library.Library):
    def __init__(self):
        super().__init__("myops", "IMPL", "CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
keep = CpuLib()
keep.impl("a", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b"}
    helper = b"""
class Helper(torch.library.Library):
    def cpu(self, op, fn):
        self.impl(op, fn, "CPU")
DEF.impl("b", lambda x: x.clone(), "CUDA")
h = Helper("myops", "IMPL")
h.cpu("b", lambda x: x.clone())
"""
    assert _cuda_only(helper) == set()
    control = b"""
class CudaHelper(torch.library.Library):
    def cuda(self, op, fn):
        self.impl(op, fn, "CUDA")
h = CudaHelper("myops", "IMPL")
h.cuda("c", lambda x: x.clone())
DEF.impl("d", lambda x: x.clone(), "CUDA")
"""
    assert _cuda_only(control) == {"d"}


LIB = b"""
class CpuLib(torch.library.Library):
    pass
DEF.impl("a", lambda x: x.clone(), "CUDA")
"""


def test_a_library_subclass_imported_from_another_module_registers_there() -> None:
    # pkg/lib.py defines the subclass and `a`'s CUDA kernel; pkg/ops.py imports it and registers `a` for CPU: torch
    # runs `a` on a CPU tensor; `b`, through an imported subclass's CUDA library, has a CUDA kernel only (the control)
    lib = DEFINED + LIB
    ops = b"""from .lib import CpuLib as Made
cpu = Made("myops", "IMPL")
cpu.impl("a", lambda x: x.clone(), "CPU")
cuda = Made("myops", "IMPL", "CUDA")
cuda.impl("b", lambda x: x.clone())
"""
    files = [("pkg/__init__.py", b""), ("pkg/lib.py", lib), ("pkg/ops.py", ops)]
    kernels = python_ops.registered_kernels(files)
    assert set(native_ops.cuda_only_ops([], kernels).get("myops", {})) == {"b"}


def test_a_library_subclass_taken_through_a_module_or_a_star_import_registers_there() -> None:
    # `import pkg.lib as L` / `L.CpuLib(...)`, `from .lib import *`, `from . import lib` / `lib.CpuLib(...)`, and an
    # imported subclass of its own `__init__` (unread: no verdict): torch runs `a` on a CPU tensor in each; `b`, with
    # a CUDA kernel only, stays CUDA-only (the control; docs/reads/54-scaffold-tools/xmod2.py.txt runs them in torch)
    lib = (
        DEFINED
        + LIB
        + b"""
class Own(torch.library.Library):
    def __init__(self):
        super().__init__("myops", "IMPL", "CPU")
DEF.impl("b", lambda x: x.clone(), "CUDA")
"""
    )
    forms = [
        b'import pkg.lib as L\ncpu = L.CpuLib("myops", "IMPL")\ncpu.impl("a", lambda x: x.clone(), "CPU")\n',
        b'from .lib import *\ncpu = CpuLib("myops", "IMPL")\ncpu.impl("a", lambda x: x.clone(), "CPU")\n',
        b'from . import lib\ncpu = lib.CpuLib("myops", "IMPL")\ncpu.impl("a", lambda x: x.clone(), "CPU")\n',
        b'from .lib import Own\ncpu = Own()\ncpu.impl("a", lambda x: x.clone())\n',
    ]
    for ops in forms:
        files = [("pkg/__init__.py", b""), ("pkg/lib.py", lib), ("pkg/ops.py", ops)]
        kernels = python_ops.registered_kernels(files)
        assert set(native_ops.cuda_only_ops([], kernels).get("myops", {})) == {"b"}, ops
