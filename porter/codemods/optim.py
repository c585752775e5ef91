"""Fused optimizers: `fused=True` asks for CUDA (or CPU/MPS) kernels the targets lack.

A literal `fused=True` on a `torch.optim` optimizer (or in its `dict(fused=True)` arguments)
becomes `fused=False`: the unfused (foreach) implementation computes the same update.

Real code mostly asks with a flag (nanoGPT: `use_fused = fused_available and device_type ==
"cuda"`, `dict(fused=True) if use_fused else dict()`, `print(f"using fused AdamW:
{use_fused}")`), often computed in another function or module. The port turns CUDA tests into
target tests, which would switch fusion on for the target. `porter.analysis.fused_flags`
follows each flag back through the project and says where to cut it; this family applies the
cuts in each file: a comparison of a device made in the project with `"cuda"` stays as it is
(False on the target: no edit at all), anything else that only feeds the flag becomes
`False` where it is made, so what the program prints about the flag stays true.
"""

from __future__ import annotations

import ast

import libcst as cst

from porter.codemods.family import Family, string_value
from porter.codemods.flow import Flow, FlowScopes
from porter.analysis.fused_flags import fused_key
from porter.analysis.kinds import FusedKind
from porter.analysis.index import ProjectIndex
from porter.analysis.resolve import dotted


_CUTS = (FusedKind.FALSE, FusedKind.KEEP)


def _fused_true(node: cst.CSTNode) -> bool:
    if type(node) is not cst.Call:
        return False
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "fused":
            return type(arg.value) is cst.Name and arg.value.value == "True"
    return False


def _norm(code: str) -> str | None:
    """`code` in `ast.unparse` spelling, as `porter.analysis.fused_flags` keys its facts."""
    try:
        return ast.unparse(ast.parse("(" + code + ")", mode="eval").body)
    except SyntaxError:
        return None


def _chain(chain: tuple[str, ...]) -> str:
    return " ← ".join(chain)


class OptimizerFamily(FlowScopes, Family):
    name = "optim"
    tokens = (b"fused",)

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """A fused-flag fact of the project index (`_load`: every cut and kept comparison is
        one; `Gate.facts` builds the file's own index where it is ported alone, as `_load`
        does), or `fused=` passed to a call `leave_Call` reads: a callee an import qualifies
        under `torch.optim.`, or `dict`."""
        if any(f[2] in (*_CUTS, FusedKind.SITE) for f in ctx.facts()):
            return True
        found = ctx.sites()
        if found is None:
            return True
        return any(
            name == "dict" or any(q.startswith("torch.optim.") for q in found.qualified(name))
            for name, keywords in found.dotted_calls.items()
            if "fused" in keywords
        )

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        """Also where the project index cut a fused flag that this file makes (the driver's
        `create_optimizer(model, ..., torch.cuda.is_available())` never says `fused`)."""
        if super().wanted(ctx, source):
            return True
        flow = ctx.settings.flow or ()
        return any(f[2] in _CUTS for f in flow) and any(ctx.enabled(c) for c in cls.codes())

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flow = Flow(ctx.settings, ctx.path, ctx.source)
        self._gated: set[int] = set()  # `X(fused=True)` of a gate whose flag the cuts handle
        self._facts: dict[tuple[str | None, str], tuple[str, tuple[str, ...]]] | None = None
        self._scopes: set[str | None] = set()
        self._keeps: set[str | None] = set()  # scopes with a comparison to keep (OPT002)

    # -- scopes and facts --------------------------------------------------------------------

    def _load(self) -> None:
        if self._facts is None:
            facts = self.ctx.settings.flow
            if facts is None and b"fused" in self.ctx.source:  # a file ported alone: its own index
                facts = ProjectIndex.build([(self.ctx.path, self.ctx.source)]).fused_flags(self.ctx.path)
            self._facts = {(f[0], f[1]): (f[2], f[3]) for f in facts or () if f[2] in (*_CUTS, FusedKind.SITE)}
            self._scopes = {scope for scope, _ in self._facts}
            self._keeps = {scope for (scope, _), (kind, _) in self._facts.items() if kind == FusedKind.KEEP}

    def _fact(self, where: str, node: cst.CSTNode, kinds: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
        """(kind, chain) of the fused-flag fact for `node` at `where` in this scope."""
        self._load()
        assert self._facts is not None
        if self.flow.scope not in self._scopes:
            return None
        text = _norm(self.ctx.code(node))
        found = self._facts.get((self.flow.scope, fused_key(where, text))) if text is not None else None
        return found if found is not None and found[0] in kinds else None

    # -- cuts ------------------------------------------------------------------------------

    def _off(self, original: cst.BaseExpression, chain: tuple[str, ...]) -> bool:
        """Report the cut of `original` to False; True when it is applied."""
        if self.ctx.portable and '"cuda"' in self.ctx.code(original).replace("'", '"'):
            return False  # --portable: a test for CUDA is right on every device as it stands
        self.ctx.supersede(original)
        return self.ctx.report(
            "OPT001",
            original,
            f"`{self.ctx.code(original).strip()}` only switches fused optimizer kernels on ({_chain(chain)}): "
            f"it becomes False, since {self.ctx.target.display} has none (the unfused implementation "
            "computes the same update)",
            replacement=cst.Name("False"),
        )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._load()
        if self.flow.scope not in self._keeps:
            return
        found = self._fact(f"keep {self.ctx.position(node)[0].line}", node, (FusedKind.KEEP,))
        if found is None:
            return
        strings = [c.comparator for c in node.comparisons] + [node.left]
        self.ctx.keep_cuda.update(id(s) for s in strings if (string_value(s) or "").startswith("cuda"))
        self.ctx.report(
            "OPT002",
            node,
            f"`{self.ctx.code(node).strip()}` switches fused optimizer kernels on ({_chain(found[1])}): kept, "
            f"since the device it tests is ported, it is False on {self.ctx.target.display} and True on CUDA",
        )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if _fused_true(node.body) and self._fact("gate", node, (FusedKind.SITE,)) is not None:
            self._gated.add(id(node.body))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        found = self._fact("gate", original, (FusedKind.FALSE,)) if _fused_true(original.body) else None
        if found is None:
            return updated
        self.ctx.supersede(original)
        new = updated.orelse.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else updated.orelse
        if self.ctx.report(
            "OPT001",
            original,
            f"`{self.ctx.code(original.test).strip()}` is not only the fused-optimizer flag ({_chain(found[1])}): "
            f"the `fused=True` branch goes, since {self.ctx.target.display} has no fused optimizer kernels",
            replacement=new,
        ):
            return new
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) != 1:
            return updated
        target = dotted(original.targets[0].target)
        found = self._fact(f"{target} =", original.value, (FusedKind.FALSE,)) if target is not None else None
        if found is not None and self._off(original.value, found[1]):
            return updated.with_changes(value=cst.Name("False"))
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return):
        found = self._fact("return", original.value, (FusedKind.FALSE,)) if original.value is not None else None
        if found is not None and self._off(original.value, found[1]):  # type: ignore[arg-type]
            return updated.with_changes(value=cst.Name("False"))
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param):
        found = (
            self._fact(f"default {original.name.value} =", original.default, (FusedKind.FALSE,))
            if original.default is not None
            else None
        )
        if found is not None and self._off(original.default, found[1]):  # type: ignore[arg-type]
            return updated.with_changes(default=cst.Name("False"))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        updated = self._cut_arguments(original, updated)
        if id(original) in self._gated or not _fused_true(original):
            return updated
        qual = self.ctx.qualname(original.func) or ""
        if not (qual.startswith("torch.optim.") or dotted(original.func) == "dict"):
            return updated
        new = self.with_kwarg(updated, "fused", cst.Name("False"))
        if self.ctx.report(
            "OPT001",
            original,
            f"`fused=True` needs fused optimizer kernels that {self.ctx.target.display} does not have; the "
            "unfused implementation computes the same update",
            replacement=new,
        ):
            return new
        return updated

    def _cut_arguments(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`create_optimizer(model, cfg, torch.cuda.is_available())` where that argument only
        feeds a fused flag: it becomes False."""
        if self.flow.scope not in self._scopes and self._facts is not None:
            return updated
        func = _norm(self.ctx.code(original.func))
        args = list(updated.args)
        position = 0
        for i, arg in enumerate(original.args):
            if arg.star:
                break
            slot = arg.keyword.value if arg.keyword is not None else str(position)
            position += arg.keyword is None
            found = self._fact(f"call {func}({slot})", arg.value, (FusedKind.FALSE,))
            if found is not None and self._off(arg.value, found[1]):
                args[i] = args[i].with_changes(value=cst.Name("False"))
        return updated.with_changes(args=args) if args != list(updated.args) else updated
