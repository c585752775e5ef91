"""The thirty-sixth read's second-wave helper on the scaffold read's leftovers (scaf2, issue 24): each test failed on
c32022e2. The verdicts are the compiler's (`cpp -P` with each macro defined and undefined: docs/reads/54-scaf2-tools/
nsfuzz.py.txt, nestcmp.py.txt) and torch 2.9's (each form registered for real, its op called on a CPU tensor:
NotImplementedError there makes it CUDA-only; docs/reads/54-scaf2-tools/xsub.py.txt)."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from porter.core import preprocessor
from porter.kernels.inventory import scan

from tests.kernels.test_thirty_third_read_scaffold import DEFINED

# a kernel in a branch whose `#if` group's condition an enclosing branch settles, and the namespace `cpp -P` gives it
# in the one build that compiles it (`-DX`, or `-DY` for the `#elif`; nothing defined for the control)
SETTLED = {
    # (nsfuzz.py seed 1469000: the inner `#ifdef X` in the `#else` of `#ifndef X`, where `X` is defined)
    "namespace a {\n#ifndef X\n#else\n#ifdef X\n}\nnamespace b {\n#endif\nKERNEL#endif\n}\n": "b",
    "namespace a {\n#if !defined(X)\n#else\n#if defined(X)\n}\nnamespace b {\n#endif\nKERNEL#endif\n}\n": "b",
    # (the `#else` of an `#elif` chain: `X` undefined there, `Y` defined; `#ifndef X` taken, `#ifdef Y` too)
    "namespace a {\n#if defined(X)\n#elif !defined(Y)\n#else\n#ifndef X\n#ifdef Y\n}\nnamespace b {\n#endif\n"
    "#endif\nKERNEL#endif\n}\n": "b",
    # (an inner `#ifdef X` / `#else` in the `#else` of `#ifndef X`: its first branch taken, not the `#else`)
    "namespace a {\n#ifndef X\n#else\n#ifdef X\n}\nnamespace b {\n#else\n#endif\nKERNEL#endif\n}\n": "b",
    # (the control: an inner group of another name stays undecided, its braces those at its `#if`)
    "namespace a {\n#ifndef X\n#else\n#ifdef Y\n}\nnamespace b {\n#endif\nKERNEL#endif\n}\n": "a",
}


def test_a_kernel_in_a_branch_whose_inner_group_it_settles_is_in_the_compiler_s_namespace(tmp_path):
    # (c32022e2: the inner group's condition was read alone, undecided, and the braces at its `#if` went on after it:
    # `k` listed in `a` where `cpp -P -DX` has it in `b`)
    for i, head in enumerate(SETTLED):
        (tmp_path / f"k{i}.cu").write_text(head.replace("KERNEL", "__global__ void k(float* x) { x[0] = 1; }\n"))
    kernels = sorted(scan(tmp_path).kernels, key=lambda k: int(k.path.rpartition("k")[2].split(".")[0]))
    assert [k.namespace for k in kernels] == list(SETTLED.values())


def test_a_branch_an_enclosing_branch_rules_out_is_never_compiled():
    # (c32022e2: undecided; `cpp -P` compiles `b` in no build: `X` undefined in `#ifndef X`'s first branch. `c`: the
    # `#else` there, always taken then; `d`: another name, undecided, as before)
    code = "#ifndef X\n#ifdef X\nb\n#else\nc\n#endif\n#ifdef Y\nd\n#endif\n#endif\n"
    conditions = preprocessor.Conditions(code, lambda at: 0)
    taken = {word: preprocessor.compiled(conditions.around(code.index(f"\n{word}\n") + 1)) for word in "bcd"}
    assert taken == {"b": False, "c": None, "d": None}
    assert [branch[2] for branch in conditions.around(code.index("\nc\n") + 1)] == [None, True]


def test_a_define_in_the_branch_unsettles_its_name():
    # (the control: `#ifndef X` / `#define X` / `#ifdef X`: the name is the `#define`'s, not the branch's undefined;
    # since the thirty-seventh read (scleft) defined there, as `cpp -P` has it wherever the outer branch is taken)
    code = "#ifndef X\n#define X\n#ifdef X\nb\n#endif\n#endif\n"
    conditions = preprocessor.Conditions(code, lambda at: 0)
    assert [branch[2] for branch in conditions.around(code.index("\nb\n") + 1)] == [None, True]


LIB = b"""
class CpuLib(torch.library.Library):
    pass
class Own(torch.library.Library):
    def __init__(self):
        super().__init__("myops", "IMPL", "CPU")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
"""


def _cuda_only(ops: bytes) -> set[str]:
    files = [("pkg/__init__.py", b""), ("pkg/lib.py", DEFINED + LIB), ("pkg/ops.py", ops)]
    return set(native_ops.cuda_only_ops([], python_ops.registered_kernels(files)).get("myops", {}))


def test_a_subclass_of_an_imported_library_subclass_registers_as_its_base():
    # (c32022e2: `class Mine(CpuLib)` of an imported `CpuLib` was read before the import was taken: no library, `a`'s
    # CPU kernel none, `a` said CUDA-only where torch 2.9 runs it on a CPU tensor; `f`, through the subclass's CUDA
    # library, was not said CUDA-only. Each form: torch says `b` (and `f`) CUDA-only, xsub.py)
    forms = [
        b"from .lib import CpuLib\nclass Mine(CpuLib):\n    pass\n",
        b"import pkg.lib as L\nclass Mine(L.CpuLib):\n    pass\n",
        b"from .lib import CpuLib as C\nclass Base(C):\n    pass\nclass Mine(Base):\n    pass\n",
    ]
    use = b'cpu = Mine("myops", "IMPL")\ncpu.impl("a", lambda x: x.clone(), "CPU")\n'
    cuda = b'cuda = Mine("myops", "IMPL", "CUDA")\ncuda.impl("f", lambda x: x.clone())\n'
    assert [_cuda_only(form + use + cuda) for form in forms] == [{"b", "f"}] * 3


def test_a_subclass_of_an_imported_subclass_with_its_own_init_gives_no_verdict_on_a_guess():
    # (c32022e2: `a` said CUDA-only; torch runs it on a CPU tensor. An `__init__` of its own, or a base of one: the
    # library's namespace and key are not read, no verdict on `a`; `b` stays CUDA-only, the control)
    forms = [
        b'from .lib import CpuLib\nclass Mine(CpuLib):\n    def __init__(self):\n        super().__init__("myops", '
        b'"IMPL", "CPU")\n',
        b"from .lib import Own\nclass Mine(Own):\n    pass\n",
    ]
    use = b'cpu = Mine()\ncpu.impl("a", lambda x: x.clone())\n'
    assert [_cuda_only(form + use) for form in forms] == [{"b"}] * 2


def test_a_block_closed_in_a_settled_inner_branch_keeps_its_registrations_apart():
    # (c32022e2: the inner `#if defined(X)` in the `#else` of `#if !defined(X)` was undecided, its `#else` read as the
    # branch going on, and the CUDA block's `}` blanked: `a_cpu` and the CPU block's `b_cuda` in one body, no verdict
    # on `b`. `cpp -P`: `b` has a CUDA kernel in the default build and no CPU one in either: CUDA-only; `a` has
    # `a_cpu` with `-DX`: regform.py)
    code = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) { m.def("a(Tensor x) -> Tensor"); m.def("b(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
#if !defined(X)
  m.impl("b", &b_cuda);
}
#else
#if defined(X)
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
#else
  m.impl("b", &b_cuda);
#endif
  m.impl("a", &a_cpu);
}
#endif
"""
    assert set(native_ops.cuda_only_ops([("a.cpp", code)]).get("myops", {})) == {"b"}


CPU_IMPL = b"""def _cpu_impl(self, op, fn, key=""):
    torch.library.Library.impl(self, op, fn, "CPU")
"""
METHOD = b'        def impl(self, op, fn, key=""):\n            super().impl(op, fn, "CPU")\n'


def test_a_library_subclass_binding_impl_in_any_form_of_its_body_is_not_read_as_library():
    # (c32022e2: only its `def`s and plain assignments were its own: `impl` annotated, unpacked, defined under an `if`
    # or a `try`, a `for`'s or a `:=`'s was read as `Library.impl`, and `lib.impl("a", fn, "CUDA")` said `a` CUDA-only
    # where torch 2.9 registers it for the CPU and runs it on a CPU tensor: override.py. Now no verdict on `a`)
    forms = [
        b"    impl: Any = _cpu_impl\n",
        b"    impl, other = _cpu_impl, 1\n",
        b"    if True:\n" + METHOD,
        b"    try:\n" + METHOD + b"    except Exception:\n        pass\n",
        b"    for impl in (_cpu_impl,):\n        pass\n",
        b"    x = (impl := _cpu_impl)\n",
    ]
    use = (
        b'lib = Sub("myops", "IMPL")\nlib.impl("a", lambda x: x.clone(), "CUDA")\nDEF.impl("b", lambda x: x, "CUDA")\n'
    )
    head = b"from typing import Any\n" + DEFINED + CPU_IMPL + b"class Sub(torch.library.Library):\n"
    found = [native_ops.cuda_only_ops([], python_ops.registered_kernels([("ops.py", head + f + use)])) for f in forms]
    assert [set(ops.get("myops", {})) for ops in found] == [{"b"}] * len(forms)


def test_a_library_subclass_overriding_what_impl_does_not_call_stays_a_library():
    # (the control: a `_register_fake` of its own, and a method's local `impl`, change nothing `impl` registers:
    # torch 2.9 says `a` CUDA-only, as porter)
    forms = [
        b"    def _register_fake(self, *args, **kwargs):\n        return super()._register_fake(*args, **kwargs)\n",
        b"    def helper(self):\n        impl = 1\n        return impl\n",
    ]
    use = b'lib = Sub("myops", "IMPL")\nlib.impl("a", lambda x: x.clone(), "CUDA")\n'
    head = DEFINED + b"class Sub(torch.library.Library):\n"
    found = [native_ops.cuda_only_ops([], python_ops.registered_kernels([("ops.py", head + f + use)])) for f in forms]
    assert [set(ops.get("myops", {})) for ops in found] == [{"a"}] * len(forms)


CPP_OPS = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) { m.def("a(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", a_cuda); }
"""


def test_a_cpp_global_cpu_fallback_takes_no_op_for_cuda_only_and_is_said(tmp_path):
    # (c32022e2: read as nothing and said nowhere, `a` said CUDA-only; torch's dispatcher calls a `(_, CPU)` fallback
    # for every op with no CPU kernel on a CPU tensor, as the Python form `Library("_", "IMPL").fallback(fn, "CPU")`
    # that torch 2.9 runs and porter reads (thirty-fifth read): cxx_fallback.py)
    fallback = b"TORCH_LIBRARY_IMPL(_, CPU, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&boxed>()); }\n"
    assert native_ops.cuda_only_ops([("k.cpp", CPP_OPS + fallback)]) == {}
    (tmp_path / "k.cpp").write_text((CPP_OPS + fallback).decode())
    notes = scan(tmp_path).problems
    assert any("k.cpp:4: the CPU block of the global namespace `_` registers `m.fallback(" in n for n in notes), notes


def test_a_fallthrough_or_another_key_s_cpp_fallback_keeps_an_op_cuda_only(tmp_path):
    # (the controls: a fallthrough is no kernel; torch's own fallbacks are of other keys, `BackendSelect`, `Python`,
    # `FuncTorchBatched`, a backend's `cpu_fallback` that redispatches to the CPU kernel `a` lacks: `a` stays CUDA-only)
    fallbacks = [
        b"TORCH_LIBRARY_IMPL(_, CPU, m) { m.fallback(torch::CppFunction::makeFallthrough()); }\n",
        b"TORCH_LIBRARY_IMPL(_, XLA, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&xla_fallback>()); }\n",
        b"TORCH_LIBRARY_IMPL(_, Python, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&python>()); }\n",
        b"TORCH_LIBRARY_IMPL(_, BackendSelect, m) { m.fallback(torch::CppFunction::makeFallthrough()); }\n",
    ]
    assert [set(native_ops.cuda_only_ops([("k.cpp", CPP_OPS + f)]).get("myops", {})) for f in fallbacks] == [{"a"}] * 4
