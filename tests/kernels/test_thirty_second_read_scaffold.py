"""The thirty-second read of the scaffold writers (issue 24): each test failed on 138fe441."""

from __future__ import annotations

from porter.analysis import cuda_only_index, native_ops
from porter.kernels.inventory import scan

TRANSFORM_KEYS = b"""#include <torch/library.h>
TORCH_LIBRARY(myops, m) {
  m.def("a(Tensor(a!) x) -> Tensor");
  m.def("b(Tensor x) -> Tensor");
  m.def("c(Tensor x) -> Tensor");
  m.def("d(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
}
TORCH_LIBRARY_IMPL(myops, Meta, m) { m.impl("a", &a_meta); }
TORCH_LIBRARY_IMPL(myops, Functionalize, m) { m.impl("a", &a_functionalize); }
TORCH_LIBRARY_IMPL(myops, FuncTorchBatched, m) { m.impl("b", &b_batch_rule); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("c", &c_cpu); }
TORCH_LIBRARY_IMPL(myops, SparseMeta, m) { m.impl("d", &d_sparse_meta); }
"""


def test_an_op_whose_other_kernel_is_a_transform_s_or_a_meta_layout_s_is_cuda_only():
    # a `Functionalize` (torch's recipe for a custom op that mutates), `FuncTorchBatched` (vmap) or `SparseMeta`
    # kernel was counted as another device's, so `a`, `b`, `d` were not said CUDA-only; torch 2.9 raises
    # NotImplementedError for each on a CPU tensor (`c`, with a CPU kernel, the control)
    assert set(native_ops.cuda_only_ops([("reg.cu", TRANSFORM_KEYS)]).get("myops", {})) == {"a", "b", "d"}


CUDA_OPS = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
  m.impl("e", &e_cuda);
  m.impl("f", &f_cuda);
  m.impl("g", &g_cuda);
}
"""
PYTHON_KERNELS = b"""import torch
from torch.library import register_kernel

lib = torch.library.Library("myops", "IMPL")


@torch.library.impl("myops::a", "cpu")
def a_cpu(x):
    return x * 2


@register_kernel("myops::b", ("cpu", "cuda"))
def b_any(x):
    return x * 2


lib.impl("c", lambda x: x * 2, "CompositeExplicitAutograd")
torch.library.impl(lib, "d", KEY)(lambda x: x * 2)


@torch.library.impl("myops::e", "cuda")
def e_again(x):
    return x * 2


@torch.library.register_fake("myops::f")
def f_fake(x):
    return x


@torch.library.impl("otherops::g", "cpu")
def g_other(x):
    return x
"""
USES = b"""import torch


def run(x):
    return [
        torch.ops.myops.a(x), torch.ops.myops.b(x), torch.ops.myops.c(x), torch.ops.myops.d(x),
        torch.ops.myops.e(x), torch.ops.myops.f(x), torch.ops.myops.g(x),
    ]
"""


def _cuda_only_uses(files):
    facts = cuda_only_index.cuda_only_facts(files, "tpu", (), [("csrc/ops.cu", CUDA_OPS)])
    return {fact[1] for fact in facts.get("pkg/use.py", ())}


def test_an_op_whose_other_kernel_python_registers_is_not_cuda_only():
    # `@torch.library.impl("myops::a", "cpu")`, `register_kernel("myops::b", ...)`, `lib.impl("c", fn, "...")` on a
    # `Library("myops", "IMPL")` and `torch.library.impl(lib, "d", KEY)` (a key porter cannot read) give other kernels:
    # GUARD001 said each op had "a CUDA kernel only ... for no other device" (`e` with a CUDA kernel again, `f` with a
    # fake one and `g`, whose CPU kernel is another namespace's: the controls)
    files = [("pkg/kernels.py", PYTHON_KERNELS), ("pkg/use.py", USES)]
    assert _cuda_only_uses(files) == {"torch.ops.myops.e", "torch.ops.myops.f", "torch.ops.myops.g"}
    assert _cuda_only_uses([("pkg/use.py", USES)]) == {f"torch.ops.myops.{n}" for n in "abcdefg"}


def test_the_cuda_only_facts_key_covers_a_python_kernel_registration():
    # the facts' cache key reads such a file's import lines only: a registration edited gave the old facts back
    with_kernel = b'import torch\n\n\n@torch.library.impl("myops::a", "cpu")\ndef a_cpu(x):\n    return x\n'
    assert cuda_only_index.part(with_kernel) != cuda_only_index.part(with_kernel.replace(b"myops::a", b"myops::b"))


PYTHON_ONLY = b"""import torch

torch.library.define("myq::gemm", "(Tensor a, Tensor b) -> Tensor")
torch.library.define("myq::unpack", "(Tensor a) -> Tensor")


@torch.library.impl("myq::gemm", ["CUDA"])
def gemm_cuda(a, b):
    return a @ b


@torch.library.impl("myq::unpack", ["CUDA"])
def unpack_cuda(a):
    return a


@torch.library.impl("myq::unpack", "default")
def unpack_any(a):
    return a


cuda_lib = torch.library.Library("myq", "IMPL", "CUDA")
cuda_lib.impl("scan", lambda a: a)


@torch.library.custom_op("myq::norm", mutates_args=())
def norm(a: torch.Tensor) -> torch.Tensor:
    return a.clone()


@torch.library.custom_op("myq::fused", mutates_args=(), device_types="cuda")
def fused(a: torch.Tensor) -> torch.Tensor:
    return a.clone()


torch.library.register_kernel("myq::norm", "cuda")(lambda a: a.clone())
"""
PYTHON_USES = b"""import torch


def run(a, b):
    out = torch.ops.myq.gemm(a, b), torch.ops.myq.unpack(a), torch.ops.myq.scan(a)
    return out, torch.ops.myq.norm(a), torch.ops.myq.fused(a)
"""


def test_an_op_python_gives_a_cuda_kernel_only_is_cuda_only():
    # optimum-quanto 0.2.7's `gemm_f16i4_awq`: `torch.library.define`, then `@torch.library.impl(..., ["CUDA"])` and no
    # other kernel: nothing was said, and `if a.is_cuda:` around its call was rewritten to the target's check (DEV004,
    # "safe") where GUARD001 is due; `scan`'s, given no key, is its `Library`'s (`unpack`, with a "default" kernel, the
    # control, and `norm`, a `custom_op` of no `device_types`, whose function every device runs, beside its CUDA kernel;
    # `fused`, one of `device_types="cuda"`, is CUDA-only)
    files = [("pkg/ops.py", PYTHON_ONLY), ("pkg/use.py", PYTHON_USES)]
    facts = cuda_only_index.cuda_only_facts(files, "tpu", (), [])
    expected = {"torch.ops.myq.gemm", "torch.ops.myq.scan", "torch.ops.myq.fused"}
    assert {fact[1] for fact in facts.get("pkg/use.py", ())} == expected


BRANCH_CLOSED_NAMESPACE = """namespace ns {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800

__global__ void k(float* x, int n) {}

}  // namespace ns

void go(float* x, int n) {}

#else

__global__ void k(float* x, int n) { x[0] = n; }

}  // namespace ns

void go(float* x, int n) { ns::k<<<1, 32>>>(x, n); }

#endif

__global__ void after_k(float* x) { x[0] = 1; }
"""


def test_a_namespace_each_branch_of_an_if_closes_holds_the_else_branch_s_kernel(tmp_path):
    # optimum-quanto 0.2.7's gptq_marlin_repack.cu: `namespace gptq_marlin {` closed in both branches of `#if
    # __CUDA_ARCH__ < 800` / `#else`; the first `}` ended it, so the `#else` branch's kernel was listed in no namespace
    # (no twin of the stub) and the launch `ns::k<<<` went to the stub alone (`after_k`, past both, the control)
    (tmp_path / "k.cu").write_text(BRANCH_CLOSED_NAMESPACE)
    kernels = scan(tmp_path).kernels
    assert [(k.name, k.namespace, k.line, [c.line for c in k.calls]) for k in kernels] == [
        ("k", "ns", 5, [17]),
        ("after_k", "", 21, []),
    ]
    assert "also defined at line 13" in kernels[0].detail


def test_a_launch_of_a_parenthesised_template_kernel_is_attached_with_its_arguments(tmp_path):
    # `(tk<float>)<<<...>>>` (a launch macro's `(K)<<<` given `tk<float>`) was said "a launch of `(tk<float>)`, a
    # name no kernel porter lists has", of a kernel porter lists (`(ok_k)<<<`, the control)
    (tmp_path / "p.cu").write_text(
        "template <typename T>\n__global__ void tk(T* x, int n) { x[0] = n; }\n"
        "__global__ void ok_k(float* x, int n) { x[0] = n; }\n"
        "void go(float* x, int n) {\n  (tk<float>)<<<1, 32>>>(x, n);\n  ( ok_k )<<<1, 32>>>(x, n);\n}\n"
    )
    inventory = scan(tmp_path)
    assert [(k.name, [(c.line, c.template) for c in k.calls]) for k in inventory.kernels] == [
        ("tk", [(5, ["float"])]),
        ("ok_k", [(6, [])]),
    ]
    assert inventory.problems == []
