"""CUDA backend flags: `torch.backends.cudnn.*`, TF32 switches, SDPA kernel selection.

They tune NVIDIA libraries and do nothing on the targets, so setting them is removed;
reading them cannot be ported mechanically and is reported. In a project that picks its
device generically (`ctx.device_generic`) the port still runs on CUDA, where they still
matter: the switches stay (FLAG004 says so), and an SDPA kernel preference is left with a finding.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from porter.codemods.literals import in_package

from porter.codemods.family import Family
from porter.core.findings import Applicability

CUDNN = "torch.backends.cudnn."
CUDA = "torch.backends.cuda."
TF32 = {"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"}
PRECISION_FLAGS = {
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.fp32_precision",
    "torch.backends.cudnn.fp32_precision",
}
SDP_CONTEXTS = {"torch.backends.cuda.sdp_kernel", "torch.nn.attention.sdpa_kernel"}
SDP_SWITCHES = {
    "torch.backends.cuda.enable_flash_sdp",
    "torch.backends.cuda.enable_mem_efficient_sdp",
    "torch.backends.cuda.enable_math_sdp",
    "torch.backends.cuda.enable_cudnn_sdp",
    "torch.backends.cuda.preferred_linalg_library",
    "torch.backends.cuda.preferred_blas_library",
}


def _code_for(qual: str) -> str:
    if qual in TF32 or qual in PRECISION_FLAGS:
        return "FLAG002"
    if qual.startswith(CUDNN):
        return "FLAG001"
    return "FLAG002"


class BackendFlagsFamily(Family):
    portable = False  # cuDNN/TF32 flags do nothing off CUDA: a portable port keeps them
    name = "backend-flags"
    tokens = (b"backends", b"sdp", b"cudnn")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._handled: set[int] = set()
        self._inner: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        self._inner.add(id(node.func))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._handled.add(id(t.target))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        quals = [self.ctx.qualname(t.target) for t in original.targets]
        if not quals or not all(q and (q.startswith(CUDNN) or q.startswith(CUDA)) for q in quals):
            return updated
        qual = quals[0]
        assert qual is not None  # every target's name resolved (checked above)
        if self.ctx.device_generic:  # harmless on the target, still in force on CUDA: kept, said
            self.ctx.report(
                "FLAG004",
                original,
                f"`{qual} = ...` stays: the project picks its device generically, so the port still runs "
                f"on CUDA, where it applies; on {self.ctx.target.display} it does nothing",
                applicability=Applicability.MANUAL,
            )
            return updated
        if self.ctx.target.name in ("neuron", "tpu") and in_package(
            self.ctx
        ):  # a library's CUDA behaviour (a documented `benchmark=` option, a deterministic mode)
            self.ctx.report(
                "FLAG004",
                original,
                f"`{qual} = ...` stays: in a package it is part of the library's behaviour on CUDA, where "
                f"the port still runs; on {self.ctx.target.display} it does nothing",
                applicability=Applicability.MANUAL,
            )
            return updated
        code = _code_for(qual)
        t = self.ctx.target
        value = original.value
        if (
            t.name == "tpu"
            and qual == "torch.backends.cuda.matmul.allow_tf32"
            and isinstance(value, cst.Name)
            and value.value in ("True", "False")
        ):
            precision = "high" if value.value == "True" else "highest"
            call = self.ctx.expr('{torch}.set_float32_matmul_precision("%s")' % precision)
            if self.ctx.report(
                code,
                original,
                f'TF32 switch becomes `torch.set_float32_matmul_precision("{precision}")`, which TorchTPU honours',
                replacement=call,
            ):
                self.ctx.statement_edits.replace[id(original)] = [cst.Expr(value=call)]
            return updated
        msg = f"`{qual} = ...` tunes an NVIDIA library and has no effect on {t.display}: removed"
        if qual == "torch.backends.cudnn.deterministic":
            msg += " (for deterministic results use `torch.use_deterministic_algorithms(True)`)"
        if self.ctx.report(code, original, msg, replacement=cst.RemovalSentinel.REMOVE):
            self.ctx.statement_edits.remove.add(id(original))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qual = self.ctx.qualname(original.func)
        if qual in SDP_SWITCHES:
            statement = self.ctx.statement_of.get(id(original))
            if isinstance(statement, cst.Expr):
                if self.ctx.report(
                    "FLAG003",
                    original,
                    f"`{qual}()` selects CUDA kernels: removed",
                    replacement=cst.RemovalSentinel.REMOVE,
                ):
                    self.ctx.statement_edits.remove.add(id(statement))
            else:
                self.ctx.report(
                    "FLAG003", original, f"`{qual}()` selects CUDA kernels", applicability=Applicability.MANUAL
                )
            self._handled.add(id(original.func))
        return updated

    def leave_With(self, original: cst.With, updated: cst.With):
        """`with sdp_kernel(...)` / `with sdpa_kernel(...)`: keep the body, drop the selection."""
        keep = []
        dropped = []
        for orig_item, item in zip(original.items, updated.items):
            call = orig_item.item
            if isinstance(call, cst.Call) and self.ctx.qualname(call.func) in SDP_CONTEXTS and orig_item.asname is None:
                dropped.append(orig_item)
                self._handled.add(id(call.func))
            else:
                keep.append(item)
        if not dropped:
            return updated
        if self.ctx.device_generic:
            self.ctx.report(
                "FLAG003",
                dropped[0],
                "SDPA backend selection in device-generic code: it stays for CUDA; on the target it must "
                "leave a kernel the target has",
                applicability=Applicability.MANUAL,
                advice=(
                    "Keep `SDPBackend.MATH` in the list (or select backends only when the device is CUDA), so "
                    "the target can run its own SDPA."
                ),
            )
            return updated
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new: cst.With | cst.FlattenSentinel[Any] = updated.with_changes(items=keep)
        elif isinstance(updated.body, cst.IndentedBlock):
            body: list[Any] = list(
                updated.body.body
            )  # statements: libcst's BaseStatement does not declare leading_lines
            body[0] = body[0].with_changes(leading_lines=[*updated.leading_lines, *body[0].leading_lines])
            new = cst.FlattenSentinel(body)
        else:
            self.ctx.report(
                "FLAG003", original, "SDPA kernel selection on a one-line `with`", applicability=Applicability.MANUAL
            )
            return updated
        if self.ctx.report(
            "FLAG003",
            dropped[0],
            "SDPA backend selection names CUDA kernels (flash, mem-efficient, cuDNN): the target picks "
            "its own; the `with` is dropped, its body kept",
            replacement=new,
        ):
            return new
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) in self._inner or id(original) in self._handled:
            return updated
        qual = self.ctx.qualname(original)
        if qual and (qual.startswith(CUDNN) or qual.startswith(CUDA)):
            self.ctx.report(
                _code_for(qual),
                original,
                f"`{qual}` reads a CUDA backend setting, which means nothing on {self.ctx.target.display}",
                applicability=Applicability.MANUAL,
            )
        return updated
