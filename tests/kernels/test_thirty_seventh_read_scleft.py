"""The thirty-seventh read's helper on the scaffold read's leftovers (scleft, issue 24): each test but the controls
failed on e4e00db6. The verdicts are torch 2.9's (each form registered for real, its op called on a CPU tensor:
NotImplementedError there with a CUDA kernel makes it CUDA-only; docs/reads/55-scleft-tools/m_impl.py.txt) and `cpp -P`'s
(docs/reads/55-scleft-tools/guard.py.txt)."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from porter.core import preprocessor
from porter.kernels.inventory import scan

HEAD = b"""import torch
import torch.library
DEF = torch.library.Library("myops", "DEF")
for name in "abcd":
    DEF.define(name + "(Tensor x) -> Tensor")
DEF.impl("a", lambda x: x.clone(), "CUDA")
DEF.impl("b", lambda x: x.clone(), "CUDA")
DEF.impl("c", lambda x: x.clone(), "CUDA")
"""


def _cuda_only(code: bytes) -> list[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", HEAD + code)])
    return sorted(native_ops.cuda_only_ops([], kernels).get("myops", {}))


# a subclass registering through the library's C++ handle `self.m` (torch 2.9: `_DispatchModule.impl(name, dispatch,
# func, with_keyset)`), reached by torch's own `register_fake(..., lib=lib)` or the class's helper: torch runs `a` on
# a CPU tensor (`b`, `c` CUDA-only); porter may say nothing of the namespace (it cannot read which op), never `a`
THROUGH_SELF = {
    "override": b"""class Sub(torch.library.Library):
    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        self.m.impl(op_name, "CPU", fn, False)
lib = Sub("myops", "FRAGMENT")
torch.library.register_fake("myops::a", lambda x: x.clone(), lib=lib)
""",
    "subclass_of_subclass": b"""class Sub(torch.library.Library):
    pass
class Sub2(Sub):
    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        self.m.impl(op_name, "CPU", fn, False)
lib = Sub2("myops", "FRAGMENT")
torch.library.register_fake("myops::a", lambda x: x.clone(), lib=lib)
""",
    "helper": b"""class Sub(torch.library.Library):
    def cpu(self, op, fn):
        self.m.impl(op, "CPU", fn)
lib = Sub("myops", "IMPL")
lib.cpu("a", lambda x: x.clone())
""",
}


def test_a_subclass_registering_through_its_handle_leaves_no_op_said_cuda_only_that_torch_runs_on_a_cpu():
    # (e4e00db6: `self.m.impl(...)` was no kernel: `a` said CUDA-only where torch 2.9 runs it on a CPU tensor)
    for name, code in THROUGH_SELF.items():
        assert "a" not in _cuda_only(code), name


def test_an_instance_s_handle_registers_the_key_it_is_given():
    # (e4e00db6: `lib.m.impl("a", "CUDA", fn)` read as a kernel of an unread key: `a` not said CUDA-only where torch
    # 2.9 has it so; the controls, CPU kernels by position and by keyword, as before)
    cuda = b'lib = torch.library.Library("myops", "IMPL")\nlib.m.impl("a", "CUDA", lambda x: x.clone())\n'
    assert _cuda_only(cuda) == ["a", "b", "c"]
    cpu = b'lib = torch.library.Library("myops", "IMPL")\nlib.m.impl("a", "CPU", lambda x: x.clone(), False)\n'
    assert _cuda_only(cpu) == ["b", "c"]
    keyword = b'lib = torch.library.Library("myops", "IMPL")\nlib.m.impl("myops::c", dispatch="CPU", func=len)\n'
    assert _cuda_only(keyword) == ["a", "b"]


def test_an_attribute_m_of_no_library_is_no_kernel():
    # (the control: `h.m.impl("a", "CPU", fn)` of an object that is no library: read as on e4e00db6, a kernel of an
    # unread key of a library porter cannot follow (54-scleft's price: `a` unjudged), `b` and `c` still CUDA-only)
    code = b"class H:\n    def __init__(self):\n        self.m = self\n    def impl(self, *a):\n        pass\n"
    assert _cuda_only(code + b'h = H()\nh.m.impl("a", "CPU", len)\n') == ["b", "c"]


# `#define X` in a branch that holds exactly where `X` is undefined: `X` defined in every build after the group (`cpp
# -P` with `X`, `Y` each defined and undefined: docs/reads/55-scleft-tools/guard.py.txt); the controls: a branch that
# holds in fewer builds (`#ifdef Y` around it, `&& !defined(Y)`), a define undone in the branch, and an `#elif` after
# such a branch, which the builds without `X` never reach
GUARDED = {
    "#ifndef X\n#define X\n#endif\n#ifdef X\nk\n#endif\n": True,
    "#if !defined(X)\n#define X 1\n#endif\n#ifndef X\nk\n#endif\n": False,
    "#ifdef X\n#else\n#define X\n#endif\n#ifdef X\nk\n#endif\n": True,
    "#ifndef X\n#ifdef Y\n#define X\n#endif\n#endif\n#ifdef X\nk\n#endif\n": None,
    "#if !defined(X) && !defined(Y)\n#define X\n#endif\n#ifdef X\nk\n#endif\n": None,
    "#ifndef X\n#define X\n#undef X\n#endif\n#ifdef X\nk\n#endif\n": None,
    "#ifndef X\n#define X 1\n#elif !defined(Y)\n#define Y 1\n#endif\n#ifndef Y\nk\n#endif\n": None,
}


def test_a_name_an_include_guard_defines_is_defined_after_its_group():
    # (e4e00db6: undecided after the group, a kernel in `#ifdef X` read as maybe compiled where every build compiles
    # it, one in `#ifndef X` where none does)
    got = {}
    for code in GUARDED:
        conditions = preprocessor.Conditions(code, lambda at: 0)
        got[code] = preprocessor.compiled(conditions.around(code.index("\nk\n") + 1))
    assert got == GUARDED


def test_a_kernel_after_an_include_guard_is_in_the_namespace_every_build_gives_it(tmp_path):
    # (e4e00db6: `k` listed in `a`; `cpp -P`, with `X` defined or not: in `b`)
    head = "namespace a {\n#ifndef X\n#define X\n#endif\n#ifdef X\n}\nnamespace b {\n#endif\n"
    (tmp_path / "k.cu").write_text(head + "__global__ void k(float* x) { x[0] = 1; }\n}\n")
    assert [k.namespace for k in scan(tmp_path).kernels] == ["b"]


# a block closed in a branch and going on after the group (the braces at the `#if` go on where no branch is surely
# taken): a kernel in the branch after its `}` is in the branch's blocks alone, as `cpp -P -DX` (the one build that
# compiles it) has it (the default build's namespace where both compile it) (docs/reads/54-scaf2-tools/nsfuzz.py.txt, seeds 1770000 and 1771000); the controls: the block
# going on after the group, and a branch surely taken
HOLES = {
    "namespace n1 {\n#ifdef X\n}\nnamespace n2 {\nKERNEL#endif\n}\n": "n2",
    "namespace n0 {\n#ifdef X\n}\nKERNEL#else\n}\n#endif\n": "",
    "namespace n1 {\n#ifdef X\n}\nnamespace n2 {\n#endif\nKERNEL}\n": "n1",
    "namespace n1 {\n#if 1\n}\nnamespace n2 {\n#endif\nKERNEL}\n": "n2",
    "namespace n1 {\n#ifdef X\n}\nnamespace n2 {\n#endif\nnamespace n3 {\nKERNEL}\n}\n": "n1::n3",
}


def test_a_kernel_after_a_brace_its_branch_closes_is_not_in_the_closed_block(tmp_path):
    # (e4e00db6: the closed block read as one span to the end, `k` in `n1::n2`, `n0`; `cpp -P -DX`: `n2`, none)
    for i, head in enumerate(HOLES):
        (tmp_path / f"k{i}.cu").write_text(head.replace("KERNEL", "__global__ void k(float* x) { x[0] = 1; }\n"))
    kernels = sorted(scan(tmp_path).kernels, key=lambda k: int(k.path.rpartition("k")[2].split(".")[0]))
    assert [k.namespace for k in kernels] == list(HOLES.values())
