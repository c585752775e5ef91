"""A process group's backend registered for CUDA's device where that backend takes CPU and CUDA
tensors only (torchft 0.2.0: `if torch.cuda.is_available(): pg._register_backend(torch.device("cuda"),
ProcessGroup.BackendType.GLOO, gloo)`).

Ported to the target's device, the registration hands the target's tensors to Gloo: on TorchTPU and
TorchNeuron Gloo refuses them, and on XLA (torch_xla 2.9, PJRT_DEVICE=CPU) an allreduce of XLA
tensors through it returns each rank's own values, reduced nowhere. The statement is CUDA's, and
the check in front of it stays CUDA's (GUARD001), so the target registers nothing there.
"""

from __future__ import annotations

import libcst as cst

from porter.analysis.resolve import dotted
from porter.codemods.family import string_value
from porter.config.ruledata import load_toml

_REGISTER = "_register_backend"


def _backends() -> frozenset[str]:
    return frozenset(b.lower() for b in load_toml("guards.toml").get("cuda_only", {}).get("host_backends", ()))


def _cuda_device(node: cst.BaseExpression) -> bool:
    """`torch.device("cuda")`, `torch.device("cuda", 0)`, `"cuda"`, `"cuda:0"`."""
    if isinstance(node, cst.Call) and (dotted(node.func) or "").endswith("device") and node.args:
        node = node.args[0].value
    value = string_value(node)
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def _backend_named(node: cst.BaseExpression) -> str | None:
    """`ProcessGroup.BackendType.GLOO` or `"gloo"`: the backend's name in lower case."""
    if isinstance(node, cst.Attribute):
        return node.attr.value.lower()
    value = string_value(node)
    return value.lower() if value is not None else None


def host_backend_for_cuda(stmt: cst.CSTNode) -> str | None:
    """The backend (`gloo`) that the statement `x._register_backend(<CUDA's device>, <backend>, ...)`
    registers for CUDA, where that backend takes no device but the CPU and CUDA; else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == _REGISTER
        and len(call.args) >= 2
        and all(a.keyword is None for a in call.args[:2])
        and _cuda_device(call.args[0].value)
    ):
        return None
    backend = _backend_named(call.args[1].value)
    return backend if backend in _backends() else None
