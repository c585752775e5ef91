"""Fused optimizers: `fused=True` asks for CUDA (or CPU/MPS) kernels the targets lack.

Real code often gates it on `device_type == "cuda"` (nanoGPT does), and porting that
comparison would switch fusion on for the target; this family switches it off instead.
The unfused (foreach) implementation computes the same update.

Where the fused arguments hang on a flag (`use_fused = fused_available and device_type ==
"cuda"; extra = dict(fused=True) if use_fused else dict(); print(f"using fused AdamW:
{use_fused}")`), the flag itself becomes False, so what the program prints stays true.
"""

from __future__ import annotations

import re

import libcst as cst

from porter.codemods.family import Family
from porter.codemods.flow import assigned_values
from porter.pipeline.resolve import dotted


_FUSED_TRUE = re.compile(rb"\bfused\s*=\s*True\b")


def _fused_true(node: cst.CSTNode) -> bool:
    if type(node) is not cst.Call:
        return False
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "fused":
            return type(arg.value) is cst.Name and arg.value.value == "True"
    return False


class _Gates(cst.CSTVisitor):
    """`X(fused=True) if flag else ...` in one function (not nested ones): flag -> call ids."""

    def __init__(self) -> None:
        self.gates: dict[str, set[int]] = {}

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if type(node.test) is cst.Name and _fused_true(node.body):
            self.gates.setdefault(node.test.value, set()).add(id(node.body))


class OptimizerFamily(Family):
    name = "optim"
    tokens = (b"fused",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._flags: list[dict[str, set[int]]] = []  # per function: flag name -> gated calls
        self._gated: set[int] = set()
        # the gate scan walks each function: only where a `fused=True` can be gated at all
        self._scan = _FUSED_TRUE.search(ctx.source) is not None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._scan:
            self._flags.append({})
            return
        found = _Gates()
        for stmt in node.body.children:
            stmt.visit(found)
        # a flag assigned in this function is set to False; one from elsewhere keeps the call rewrite
        flags = {name: ids for name, ids in found.gates.items() if assigned_values(node, name)}
        for ids in flags.values():
            self._gated |= ids
        if self.ctx.portable:
            # a flag that asks for CUDA (`device_type == "cuda"`) is already right everywhere
            flags = {n: ids for n, ids in flags.items() if not any('cuda' in self.ctx.code(v) for v in assigned_values(node, n))}
            self._gated -= {i for ids in flags.values() for i in ids}
        self._flags.append(flags)

    def leave_FunctionDef(self, original, updated):
        self._flags.pop()
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if not self._flags or len(original.targets) != 1 or type(original.targets[0].target) is not cst.Name:
            return updated
        name = original.targets[0].target.value
        if name not in self._flags[-1] or (type(original.value) is cst.Name and original.value.value == "False"):
            return updated
        new = updated.with_changes(value=cst.Name("False"))
        self.ctx.supersede(original.value)
        if self.ctx.report(
            "OPT001",
            original,
            f"`{name}` gates `fused=True`: it becomes False, since {self.ctx.target.display} has no fused optimizer kernels (the unfused implementation computes the same update)",
            replacement=new,
        ):
            return new
        for ids in (self._flags[-1].pop(name),):
            self._gated -= ids  # not applied: the calls are rewritten as usual
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self._gated or not _fused_true(original):
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
