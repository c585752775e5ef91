"""The thirty-second read of the scaffold writers (issue 24): each test failed on 138fe441."""

from __future__ import annotations

from porter.analysis import native_ops

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
