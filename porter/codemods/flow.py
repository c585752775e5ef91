"""Local, visible data flow: what a plain name was assigned in its own scope.

porter follows a variable only where a reader would: simple `name = expr` assignments in the
same function (or module). Anything else is not guessed at; the caller flags the site.
"""

from __future__ import annotations

import libcst as cst

from porter.resolve import small_statements

RANK_NAMES = frozenset(
    {"local_rank", "rank", "gpu", "gpu_id", "gpu_idx", "device_id", "device_idx", "local_gpu", "gpu_index"}
)
_INT_CALL_SUFFIXES = ("get_rank", "get_local_rank", "current_device", "local_rank", "get_node_local_rank")


def assigned_values(scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Values of `name = value` statements directly in `scope`'s body (not nested defs)."""
    values: list[cst.BaseExpression] = []
    body = scope if isinstance(scope, cst.Module) else scope.body
    for small in small_statements(body, into_defs=False):
        if isinstance(small, cst.Assign):
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                values.append(small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == name:
                values.append(small.value)
    return values


def is_param(scope: cst.CSTNode, name: str) -> bool:
    params = getattr(scope, "params", None)
    if params is None:
        return False
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    return any(p.name.value == name for p in every)


def is_int_like(value: cst.BaseExpression) -> bool:
    """An expression that evaluates to a device index in the code people write."""
    if isinstance(value, cst.Integer):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        return name == "int" or name.endswith(_INT_CALL_SUFFIXES)
    if isinstance(value, cst.Attribute):
        return value.attr.value in RANK_NAMES
    return False


def int_device_binding(scope: cst.CSTNode | None, module: cst.Module, name: str) -> bool | None:
    """True: `name` visibly holds a device index; False: visibly something else;
    None: not visible here (a parameter, or assigned nowhere we look)."""
    for where in ([scope] if scope is not None else []) + [module]:
        if where is scope and is_param(where, name):
            return None
        values = assigned_values(where, name)
        if values:
            return all(is_int_like(v) for v in values)
    return None
