"""The thirty-sixth read's leftover helper on the scaffold surface (scleft, issue 24): each test failed on
c5b375fb. The verdicts are the packages' own (nvidia-cutlass-dsl 4.8.1's wheels read), torch 2.9's (each program
registered for real, the op called on a CPU tensor) and the compiler's (`cpp -P`, libclang):
docs/reads/54-scleft-tools."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops, python_ops
from porter.kernels import inventory

CUTE = (
    "# a CuTe DSL kernel (not triton)\nfrom cutlass import cute\nfrom cutlass import Int32\n\n@cute.jit\n"
    "def store_256b(gmem_addr, values):\n"
    "    gmem_ptr = cute.make_ptr(Int32, gmem_addr, cute.AddressSpace.gmem, assumed_align=32)\n"
    '    cute.arch.store(gmem_ptr, values, level1_eviction_priority="evict_no_allocate")\n'
)


def _kinds(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    (tmp_path / "k.py").write_text(text)
    return [(k.name, k.kind) for k in inventory.scan(tmp_path).kernels]


def test_a_cute_dsl_kernel_is_no_triton_kernel(tmp_path: Path) -> None:
    # (nvidia-cutlass-dsl 4.8.1 requires no Triton and no file of its wheels imports triton: `cute.jit` is CuTe
    # DSL's; porter listed `store_256b` as kind "triton", its detail "taken as Triton's", and scaffolded it so)
    assert _kinds(tmp_path, CUTE) == []
    assert _kinds(tmp_path, CUTE.replace("from cutlass import cute", "import cutlass.cute as cute")) == []


def test_a_decorator_of_a_module_porter_has_not_read_is_still_taken_as_triton_s(tmp_path: Path) -> None:
    # (the control: the same body under a module no read wheel covers (vllm's re-export, not in the tree) stays the
    # guess it was, said in its detail)
    text = CUTE.replace("from cutlass import cute", "from vllm.triton_utils import triton as cute")
    assert _kinds(tmp_path, text) == [("store_256b", "triton")]


PY_DEF = (
    "import torch\nfrom torch.library import Library\n"
    'DEF = Library("myops", "DEF")\nDEF.define("a(Tensor x) -> Tensor")\nDEF.define("b(Tensor x) -> Tensor")\n'
    'DEF.impl("a", lambda x: x, "CUDA")\nDEF.impl("b", lambda x: x, "CUDA")\n'
)


def _py_cuda_only(body: str) -> list[str]:
    """The ops of `myops` porter reads as CUDA-only in a module `PY_DEF` + `body`."""
    kernels = python_ops.registered_kernels([("m.py", (PY_DEF + body).encode())])
    return sorted(native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {}))


def test_a_library_a_method_returns_and_its_object_keeps_is_no_cuda_only_verdict() -> None:
    # (torch 2.9: `r.make()` returns `self.lib`, which `r` keeps: `a` runs on a CPU tensor, `b` raises
    # NotImplementedError; porter read `r.make().impl(...)` as nothing and said `a` CUDA-only)
    kept = (
        "class R:\n    def make(self):\n"
        '        self.lib = torch.library.Library("myops", "IMPL")\n        return self.lib\n'
        'r = R()\nr.make().impl("a", lambda x: x + 1, "CPU")\n'
    )
    assert _py_cuda_only(kept) == ["b"]
    # (a function returning the module's library: torch runs `a`; porter said it CUDA-only)
    assert _py_cuda_only('def get():\n    return DEF\nget().impl("a", lambda x: x + 1, "CPU")\n') == ["b"]
    # (the control: a library a factory makes and nothing keeps registers nothing: torch 2.9 has `a` CUDA-only there,
    # as porter read it before)
    fresh = 'def make():\n    return Library("myops", "IMPL")\nmake().impl("a", lambda x: x + 1, "CPU")\n'
    assert _py_cuda_only(fresh) == ["a", "b"]


def test_an_impl_of_a_library_porter_cannot_follow_is_a_kernel_of_an_unread_key() -> None:
    # (torch 2.9 runs `a` and `b` on a CPU tensor in each: `lib`'s kernels through a dict, a conditional, a `with`'s
    # name, a list's item, `globals()`; porter read `b`'s and said `a` CUDA-only)
    lib = 'lib = Library("myops", "IMPL", "CPU")\nlib.impl("b", lambda x: x + 1)\n'
    forms = [
        'LIBS = {"cpu": lib}\nLIBS["cpu"].impl("a", lambda x: x + 1)\n',
        '(lib if True else None).impl("a", lambda x: x + 1)\n',
        'import contextlib\nwith contextlib.nullcontext(lib) as x:\n    x.impl("a", lambda x: x + 1)\n',
        'K = [lib]\nK[-1].impl("a", lambda x: x + 1)\n',
        'globals()["lib"].impl("a", lambda x: x + 1)\n',
    ]
    assert [_py_cuda_only(lib + form) for form in forms] == [[]] * len(forms)
    # (the control: an object of a class of the file with its own `impl` is no library, made there or bound to a
    # name: `a` stays CUDA-only, as torch 2.9 has it)
    own = "class R:\n    def impl(self, *a):\n        pass\n"
    assert _py_cuda_only(lib + own + 'R().impl("a", lambda x: x)\n') == ["a"]
    assert _py_cuda_only(lib + own + 'r = R()\nr.impl("a", lambda x: x)\n') == ["a"]
