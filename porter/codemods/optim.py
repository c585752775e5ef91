"""Fused optimizers: `fused=True` asks for CUDA (or CPU/MPS) kernels the targets lack.

Real code often gates it on `device_type == "cuda"` (nanoGPT does), and porting that
comparison would switch fusion on for the target; this family switches it off instead.
The unfused (foreach) implementation computes the same update.
"""

from __future__ import annotations

import libcst as cst

from porter.codemods.family import Family
from porter.resolve import dotted


class OptimizerFamily(Family):
    codes = ("OPT001",)
    tokens = (b"fused",)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        fused = self.kwarg(original, "fused")
        if fused is None or not (isinstance(fused.value, cst.Name) and fused.value.value == "True"):
            return updated
        qual = self.ctx.qualname(original.func) or ""
        if not (qual.startswith("torch.optim.") or dotted(original.func) == "dict"):
            return updated
        new = self.with_kwarg(updated, "fused", cst.Name("False"))
        if self.ctx.report(
            "OPT001",
            original,
            f"`fused=True` needs fused optimizer kernels that {self.ctx.target.display} does not have; the unfused implementation computes the same update",
            replacement=new,
        ):
            return new
        return updated
