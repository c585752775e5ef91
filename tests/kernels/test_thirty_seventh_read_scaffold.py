"""The thirty-seventh read of the scaffold writers and the registration readers (scaffold, issue 24): each test failed
on e4e00db6.

torch 2.9 is the oracle (docs/reads/55-scaffold-tools/oracle9.py.txt, check_tests.py.txt): each form below was
registered for real and its op called on a CPU tensor; NotImplementedError there makes it CUDA-only."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops

OPS = b"""import torch

@torch.library.custom_op("myops::a", mutates_args=(), device_types="cuda")
def a(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

@torch.library.custom_op("myops::b", mutates_args=(), device_types="cuda")
def b(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

@torch.library.custom_op("myops::c", mutates_args=(), device_types="cuda")
def c(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

"""


def _cuda_only(python: bytes) -> set[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", OPS + python)])
    return set(native_ops.cuda_only_ops([], kernels).get("myops", {}))


def test_a_custom_op_s_kernel_registered_through_another_name_bound_to_it_is_read() -> None:
    # `op = a` / `op.register_kernel("cpu")(fn)`: torch 2.9 runs `a` on a CPU tensor; `b`, given through its alias a
    # CUDA kernel only, and `c`, given nothing, stay CUDA-only (the controls)
    python = b"""
op = a
op.register_kernel("cpu")(lambda x: x.clone())
other = b
other.register_kernel("cuda")(lambda x: x.clone())
"""
    assert _cuda_only(python) == {"b", "c"}


def test_a_custom_op_s_kernel_registered_through_a_container_gives_no_verdict_on_a_guess() -> None:
    # `OPS["a"] = a` / `OPS["a"].register_kernel("cpu")(fn)`: torch runs `a` on a CPU tensor; porter cannot read which
    # op the item is: no op of the namespace is taken for CUDA-only (before, `a` was)
    python = b"""
REG = {"a": a, "b": b}
REG["a"].register_kernel("cpu")(lambda x: x.clone())
"""
    assert _cuda_only(python) == set()


def test_a_custom_op_s_cuda_kernel_through_a_container_keeps_its_ops_cuda_only() -> None:
    # the control: a CUDA kernel registered so changes nothing, and `torch.library.register_kernel` is read as before
    python = b"""
REG = [a, b]
REG[0].register_kernel("cuda")(lambda x: x.clone())
torch.library.register_kernel("myops::c", "cpu", lambda x: x.clone())
"""
    assert _cuda_only(python) == {"a", "b"}
