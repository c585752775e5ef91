"""PyTorch/XLA only: keep each Parameter object through `Module.to(xla)`, as CUDA does.

On CUDA, `model.cuda()` / `model.to("cuda")` moves each parameter in place (`param.data = ...`),
so whatever held a parameter before the move (an optimizer built in a constructor, tied
weights, a parameter alias, an EMA copy) still holds the moved one. On XLA the storage types
are not shallow-copy compatible, so `Module.to()` creates new Parameter objects and every such
reference is silently cut: stable-baselines3 (optimizer built before the move) trains nothing,
Opacus's aliased parameters lose their gradients. PyTorch's own switch for this,
`torch.__future__.set_swap_module_params_on_conversion(True)`, makes `Module.to()` swap each
parameter's contents into the same object. It is process-wide, so one call in each ported file
that moves modules to the device is enough and harmless when repeated.

The swap exchanges the objects' `__dict__` with the temporary's, so attributes a project sets
on a Parameter (mup's `p.infshape`) are still dropped. Where the project index sees the
project set such attributes, each module move is wrapped: the attributes are taken by
parameter name before the move and set again after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from porter.codemods.family import Family
from porter.codemods.flow import Flow, FlowScopes, module_move
from porter.analysis.kinds import MoveKind
from porter.analysis.resolve import dotted

SWITCH = "torch.__future__.set_swap_module_params_on_conversion"
# codes whose applied fix moves tensors or modules to the XLA device (or picks it)
MOVES = frozenset({"DEV001", "DEV002", "DEV003", "DEV008", "DEV011", "DEV012"})
# the switch only matters where modules are: a file that never names one (moves only
# tensors) does not get the line
MODULE_WORDS = (b"Module", b".parameters(")
_OWN_FACTS = frozenset({MoveKind.ATTRIBUTES, MoveKind.STALE, MoveKind.TIED})  # the project-index facts its sites read
KEEP_NOTE = "Module.to() on XLA drops attributes set on a Parameter"  # also marks a file already done


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _after_imports(body: Sequence[cst.BaseStatement]) -> int:
    """Where the switch goes: after the last import that comes before the module's first
    function or class (`import sys; sys.path.insert(...); import torch` happens too), or
    after its docstring when it has no import there."""
    at = 1 if body and _is_docstring(body[0]) else 0
    for i, statement in enumerate(body):
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            break
        if _is_import(statement):
            at = i + 1
    return at


def _free(name: str, source: bytes) -> str:
    """`name`, or `name_2`, ...: an identifier the file does not use yet."""
    taken = set(re.findall(rb"\w+", source))
    candidate, n = name, 1
    while candidate.encode() in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


class KeepParametersFamily(FlowScopes, Family):
    name = "xla-params"
    tokens = (b"cuda", b".to(", b"accelerator", b"_get_available_device_type")  # where a move is ported

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """On xla only. Its own sites: a module move in a project that sets attributes on
        Parameters (an ATTRIBUTES fact), and the switch where the device family moves a module
        with tied or taken parameters (TIED, STALE: `ctx.moves_parameters`). The switch for a
        move another family's fix makes (`applied_codes() & MOVES`) needs that family's site,
        for which the file is parsed anyway."""
        return ctx.target.name == "xla" and any(f[2] in _OWN_FACTS for f in ctx.facts())

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flow = Flow(ctx.settings, ctx.path, ctx.source)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        """A module move in a project that sets attributes on Parameter objects: they are
        taken by name before the move and set again after it."""
        if self.ctx.target.name != "xla" or len(original.body) != 1 or len(updated.body) != 1:
            return updated
        move = module_move(original.body[0])
        if move is None or KEEP_NOTE.encode() in self.ctx.source:
            return updated
        holder, call = move
        where = self.flow.parameter_attributes(holder)
        if not where:
            return updated
        receiver = dotted(cst.ensure_type(call.func, cst.Attribute).value)
        message = f"this project sets attributes on Parameter objects ({where[0]}), and Module.to() on XLA drops them"
        if receiver is None:
            self.ctx.report(
                "XLA005",
                original.body[0],
                message,
                advice="Set the attributes again after the move (or move the module before setting them).",
            )
            return updated
        source = self.ctx.source
        kept, name, param = _free("kept_attributes", source), _free("kept_name", source), _free("kept_param", source)
        what = where[0].rpartition(", ")[0]  # "`p.infshape = ...`" without its path
        note = cst.EmptyLine(comment=cst.Comment(f"# {KEEP_NOTE} ({what})"))
        stash = cst.parse_statement(
            f"{kept} = {{n: vars(p).copy() for n, p in {receiver}.named_parameters()}}\n"
        ).with_changes(leading_lines=[*updated.leading_lines, note])
        restore = cst.parse_statement(
            f"for {name}, {param} in {holder}.named_parameters():\n    vars({param}).update({kept}[{name}])\n"
        )
        new = cst.FlattenSentinel([stash, updated.with_changes(leading_lines=()), restore])
        if self.ctx.report("XLA005", original.body[0], message + ": kept across the move", replacement=new):
            return new
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.ctx.target.name != "xla" or SWITCH.encode() in self.ctx.source:
            return updated
        if not self.ctx.moves_parameters and not (
            self.ctx.applied_codes() & MOVES and any(w in self.ctx.source for w in MODULE_WORDS)
        ):
            return updated
        call = cst.Expr(cst.Call(func=self.ctx.ref(SWITCH), args=[cst.Arg(cst.Name("True"))]))
        line = cst.SimpleStatementLine(
            body=[call],
            trailing_whitespace=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "),
                comment=cst.Comment("# Module.to() keeps each Parameter object on XLA, as on CUDA"),
            ),
        )
        body = list(updated.body)
        at = _after_imports(body)
        new = updated.with_changes(body=[*body[:at], line, *body[at:]])
        message = (
            "Module.to(xla) replaces every Parameter (optimizers, ties and aliases taken before the move are "
            "cut): keep them, as CUDA does"
        )
        anchor = (
            original.body[min(_after_imports(list(original.body)), len(original.body) - 1)]
            if original.body
            else original
        )
        if self.ctx.report("XLA005", anchor, message, replacement=line):
            return new
        return updated
