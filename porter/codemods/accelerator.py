"""Device-generic selection on xla: `torch.accelerator.*`, `torch._utils._get_available_device_type()`.

Code that already picks its device generically runs unchanged on the native targets
(TorchNeuron and TorchTPU implement `torch.accelerator`), so nothing is touched there. The
PyTorch/XLA runtime is not a `torch.accelerator` backend: `is_available()` is False and the
"port" silently trains on the CPU. On xla the selection is pointed at the XLA device.
"""

from __future__ import annotations

import libcst as cst

from porter.codemods.family import Family

_AVAILABLE = "torch.accelerator.is_available"
_COUNT = "torch.accelerator.device_count"
_CURRENT = "torch.accelerator.current_accelerator"
_DEVICE_TYPE = "torch._utils._get_available_device_type"
_CALLS = frozenset((_AVAILABLE, _COUNT, _CURRENT, _DEVICE_TYPE))


class AcceleratorFamily(Family):
    name = "accelerator"
    tokens = (b"accelerator", b"_get_available_device_type")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._bare: set[int] = set()  # expressions whose position needs no parentheses

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        return ctx.target.name == "xla" and super().wanted(ctx, source)

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every finding is a call `leave_Call` knows (`leave_BooleanOperation` rewrites what
        it wrote): a dotted callee an import qualifies to one of `_CALLS`."""
        found = ctx.sites()
        if found is None:
            return True
        return any(q in _CALLS for name in found.dotted_calls for q in found.qualified(name))

    def visit_If(self, node: cst.If) -> None:
        self._bare.add(id(node.test))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._bare.add(id(node.test))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bare.add(id(node.value))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._bare.update((id(node.left), id(node.right)))

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        """`_get_available_device_type() or "cpu"`: the device type is "xla", never falsy."""
        left = original.left
        if (
            isinstance(original.operator, cst.Or)
            and isinstance(left, cst.Call)
            and self.ctx.qualname(left.func) == _DEVICE_TYPE
            and isinstance(updated.left, cst.SimpleString)
        ):
            return updated.left.with_changes(lpar=original.lpar, rpar=original.rpar)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qual = self.ctx.qualname(original.func)
        if qual == _AVAILABLE:
            new: cst.BaseExpression = self.ctx.expr("{xr}.global_runtime_device_count() > 0")
            if id(original) not in self._bare:
                new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            why = "is False under PyTorch/XLA (not a torch.accelerator backend): the port would run on the CPU"
        elif qual == _COUNT:
            new = self.ctx.expr("{xr}.global_runtime_device_count()")
            why = "counts no XLA devices (0 under PyTorch/XLA)"
        elif qual == _CURRENT:
            new = self.ctx.device()
            why = "does not name the XLA device (with torch-xla 2.9 on a CUDA build of torch it says `cuda`)"
        elif qual == _DEVICE_TYPE:
            new = cst.SimpleString('"xla"')
            why = "never names xla (None under PyTorch/XLA)"
        else:
            return updated
        message = f"`{qual}()` {why}: becomes `{self.ctx.code_of_new(new)}`"
        if self.ctx.report("DEV012", original, message, replacement=new):
            return new
        return updated
