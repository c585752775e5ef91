"""Device-generic selection on xla: `torch.accelerator.*`, `torch._utils._get_available_device_type()`.

Code that already picks its device generically runs unchanged on the native targets
(TorchNeuron and TorchTPU implement `torch.accelerator`), so nothing is touched there. The
PyTorch/XLA runtime is not a `torch.accelerator` backend: `is_available()` is False and the
"port" silently trains on the CPU. On xla the selection is pointed at the XLA device.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from porter.codemods.family import Family
from porter.core.findings import Applicability

_AVAILABLE = "torch.accelerator.is_available"
_COUNT = "torch.accelerator.device_count"
_CURRENT = "torch.accelerator.current_accelerator"
_DEVICE_TYPE = "torch._utils._get_available_device_type"
_CALLS = frozenset((_AVAILABLE, _COUNT, _CURRENT, _DEVICE_TYPE))
# what an availability test may gate that PyTorch/XLA does not have: the accelerator's streams, events
# and device index (`torch.Stream(torch_xla.device())`: "Backend doesn't support create a new Stream";
# `torch.accelerator.current_stream()`, `synchronize()`, `set_device_index()` ask CUDA, torch-xla 2.9 on
# the CPU). Any `torch.accelerator.` name but the selection's own (`_CALLS`), and these:
_RUNTIME = frozenset(("torch.Stream", "torch.Event"))


class AcceleratorFamily(Family):
    name = "accelerator"
    tokens = (b"accelerator", b"_get_available_device_type")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._bare: set[int] = set()  # expressions whose position needs no parentheses
        self._gated: set[int] = set()  # the calls of a test that gates the accelerator's runtime, and its branch's
        self._text: set[int] = set()  # expressions read as text: `str(x)`, `f"{x}"`

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
        self._gate(node.test, node.body)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._bare.add(id(node.test))
        self._gate(node.test, node.body)

    def _runtime_call(self, call: cst.Call) -> str | None:
        qual = self.ctx.qualname(call.func) or ""
        return qual if qual in _RUNTIME or (qual.startswith("torch.accelerator.") and qual not in _CALLS) else None

    def _gate(self, test: cst.BaseExpression, branch: cst.CSTNode) -> None:
        """`if torch.accelerator.is_available(): torch.accelerator.synchronize()` (torchft 0.2.0): the test
        gates the accelerator's streams or device index, which PyTorch/XLA does not have. Pointed at the XLA
        device it would run them there and raise; it stays (False on XLA), a manual DEV012 says so."""
        tested = [
            c for c in m.findall(test, m.Call()) if self.ctx.qualname(cst.ensure_type(c, cst.Call).func) == _AVAILABLE
        ]
        if not tested:
            return
        calls = [cst.ensure_type(c, cst.Call) for c in m.findall(branch, m.Call())]
        used = next((q for c in calls if (q := self._runtime_call(c))), None)
        if used is None:
            return
        self._gated.update(id(c) for c in [*tested, *calls])
        self.ctx.report(
            "DEV012",
            tested[0],
            f"`{_AVAILABLE}()` gates `{used}`, which PyTorch/XLA does not have (it raises there): kept, so "
            "that code does not run on XLA",
            applicability=Applicability.MANUAL,
            advice="Give XLA its own path (`torch_xla.sync()` for a synchronize; XLA has no streams).",
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bare.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        """`str(torch.accelerator.current_accelerator())` is "cuda" on CUDA: the device type, no index
        (speechbrain 1.1.2's `infer_device` appends `f":{local_rank}"` to it)."""
        if m.matches(node.func, m.Name("str")) and len(node.args) == 1 and not node.args[0].keyword:
            self._text.add(id(node.args[0].value))

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if node.format_spec is None and node.conversion in (None, "s"):
            self._text.add(id(node.expression))

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
        if id(original) in self._gated:
            return updated
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
            if id(original) in self._text:
                # `str(torch_xla.device())` is "xla:0": with a rank appended, "xla:0:0" is no device string
                new = cst.Attribute(value=new, attr=cst.Name("type"))
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
