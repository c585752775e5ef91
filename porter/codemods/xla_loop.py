"""PyTorch/XLA only: cut the graph once per training step, feed batches with MpDeviceLoader,
and drop `pin_memory` (it needs an NVIDIA driver on some hosts).

XLA is lazy: without `torch_xla.sync()` a training loop keeps growing one graph until
something forces it. A loop is a training step when its own body (not a nested loop or
function) calls `.backward()` or an optimizer's `.step()`.
"""

from __future__ import annotations

import libcst as cst

from porter.codemods.family import Family
from porter.codemods.flow import assigned_values, is_param
from porter.findings import Applicability
from porter.resolve import dotted

SYNCS = {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.core.xla_model.optimizer_step"}


class _StepCalls(cst.CSTVisitor):
    def __init__(self, resolver) -> None:
        self.resolver = resolver
        self.steps = False
        self.synced = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            name = (dotted(func.value) or "").lower()
            if func.attr.value == "backward" or (func.attr.value == "step" and ("optim" in name or "scaler" in name)):
                self.steps = True
        qual = self.resolver.imports.qualify(dotted(func) or "")
        if qual in SYNCS:
            self.synced = True

    def visit_For(self, node) -> bool:
        return False  # a nested loop is its own step

    def visit_While(self, node) -> bool:
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _is_loader_call(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and (dotted(value.func) or "").endswith("DataLoader")


class XlaLoopFamily(Family):
    codes = ("XLA001", "XLA002", "XLA003")
    tokens = (b"backward", b".step(", b"DataLoader", b"pin_memory", b"loader")

    def _body_stats(self, loop: cst.For | cst.While) -> _StepCalls:
        stats = _StepCalls(self.ctx.resolver)
        for child in loop.body.children:
            child.visit(stats)
        return stats

    def leave_For(self, original: cst.For, updated: cst.For):
        updated = self._wrap_loader(original, updated)
        return self._sync(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While):
        return self._sync(original, updated)

    def _sync(self, original, updated):
        stats = self._body_stats(original)
        if not stats.steps or stats.synced:
            return updated
        if not isinstance(updated.body, cst.IndentedBlock):
            self.ctx.report("XLA001", original, "a one-line training loop: add `torch_xla.sync()` at the end of each step", applicability=Applicability.MANUAL)
            return updated
        sync = cst.SimpleStatementLine(body=[cst.Expr(value=cst.Call(func=self.ctx.ref("torch_xla.sync")))])
        body = updated.body.with_changes(body=[*updated.body.body, sync])
        new = updated.with_changes(body=body)
        if self.ctx.report("XLA001", original, "training-step loop: `torch_xla.sync()` added at the end of each iteration, so each step compiles and runs as one graph", replacement=sync):
            return new
        return updated

    def _wrap_loader(self, original: cst.For, updated: cst.For):
        it = original.iter
        target: cst.BaseExpression = it
        in_enumerate = isinstance(it, cst.Call) and dotted(it.func) == "enumerate" and it.args
        if in_enumerate:
            target = it.args[0].value
        if not isinstance(target, cst.Name):
            return updated
        scope = self.ctx.scopes.innermost or self.ctx.module
        values = assigned_values(scope, target.value)
        if values and all(_is_loader_call(v) for v in values):
            loader = self.ctx.expr("{pl}.MpDeviceLoader(%s, {torch_xla}.device())" % target.value)
            if in_enumerate:
                first = updated.iter.args[0].with_changes(value=loader)
                new_iter = updated.iter.with_changes(args=[first, *updated.iter.args[1:]])
            else:
                new_iter = loader
            new = updated.with_changes(iter=new_iter)
            if self.ctx.report("XLA002", original, f"`{target.value}` is wrapped in `MpDeviceLoader`, which moves batches to the XLA device in the background", replacement=new_iter):
                return new
            return updated
        if "loader" in target.value.lower() and self.ctx.scopes.innermost is not None and is_param(self.ctx.scopes.innermost, target.value) and self._body_stats(original).steps:
            self.ctx.report("XLA002", original, f"`{target.value}` comes from the caller: wrap the DataLoader in `torch_xla.distributed.parallel_loader.MpDeviceLoader(loader, torch_xla.device())` where it is made", applicability=Applicability.MANUAL)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        pin = self.kwarg(original, "pin_memory")
        if pin is not None and not (isinstance(pin.value, cst.Name) and pin.value.value == "False"):
            new = self.without_kwargs(updated, {"pin_memory"})
            if self.ctx.report("XLA003", pin, "`pin_memory` is removed: PyTorch/XLA moves host data itself, and pinning needs an NVIDIA driver on some hosts", replacement=new):
                return new
            return updated
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory" and not original.args:
            new = updated.func.value
            if self.ctx.report("XLA003", original, "`.pin_memory()` is removed on PyTorch/XLA", replacement=new):
                return new
        return updated
