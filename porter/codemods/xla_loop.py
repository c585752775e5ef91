"""PyTorch/XLA only: cut the graph once per training step, feed batches with MpDeviceLoader,
and drop `pin_memory` (it needs an NVIDIA driver on some hosts).

XLA is lazy: without `torch_xla.sync()` a training loop keeps growing one graph until
something forces it. A loop is a training step when its own body (not a nested loop or
function) calls `.backward()` or an optimizer's `.step()`.
"""

from __future__ import annotations

import ast

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.candidates import TORCH_CAT, Sites, callee_names, dotted_name, is_step_callee, nodes
from porter.codemods.family import Family
from porter.codemods.flow import assigned_values, is_param
from porter.core.findings import Applicability
from porter.analysis.resolve import dotted

SYNCS = {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.core.xla_model.optimizer_step"}
CUDA_SYNC = "torch.cuda.synchronize"  # becomes `torch_xla.sync()` on xla
OPT_STEPS = {"torch_xla.core.xla_model.optimizer_step"}


def _is_step(node: cst.Call, resolver) -> bool:
    """`optimizer.step()`, `scaler.step(opt)`, `scaler.update()`, `xm.optimizer_step(opt)`."""
    func = node.func
    if isinstance(func, cst.Attribute):
        name = (dotted(func.value) or "").lower()
        if func.attr.value == "step" and ("optim" in name or "scaler" in name or name in ("opt", "optim")):
            return True
        if func.attr.value == "update" and "scaler" in name:
            return True
    return resolver.imports.qualify(dotted(func) or "") in OPT_STEPS


class _StepCalls(cst.CSTVisitor):
    """What one loop's own body (not nested loops or functions) does."""

    def __init__(self, resolver) -> None:
        self.resolver = resolver
        self.backward = False
        self.optimizer_step = False
        self.synced = False

    @property
    def steps(self) -> bool:
        return self.backward or self.optimizer_step

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self.backward = True
        if _is_step(node, self.resolver):
            self.optimizer_step = True
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


def _calls(stmt: cst.CSTNode, pred) -> bool:
    """Whether `stmt` (not a nested loop or function in it) makes a call `pred` accepts."""
    found = False

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            found = found or pred(node)

        def visit_For(self, node) -> bool:
            return False  # a nested loop is its own step

        def visit_While(self, node) -> bool:
            return False

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

    cstwalk.visit(stmt, _V())
    return found


_PICKERS = ("multinomial", "argmax", "topk", "sample")


def _picks_tokens(body: cst.BaseSuite) -> bool:
    """The loop chooses a next token (`torch.multinomial`, `argmax`, `topk`, `sample`): what
    tells a decoding loop from a forward pass that concatenates in a loop."""
    found = False

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
            found = found or name.endswith(_PICKERS)

    cstwalk.visit(body, _V())
    return found


def _appends_to_itself(stmt: cst.CSTNode, resolver) -> bool:
    """`idx = torch.cat((idx, nxt), dim=1)`: the step of an autoregressive decoding loop."""
    if type(stmt) is not cst.SimpleStatementLine:
        return False
    for small in stmt.body:
        if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
            continue
        value = small.value
        if type(value) is not cst.Call or resolver.qualname(value.func) not in TORCH_CAT:
            continue
        name = small.targets[0].target.value
        if value.args and isinstance(seq := value.args[0].value, (cst.Tuple, cst.List)):
            if any(type(e.value) is cst.Name and e.value.value == name for e in seq.elements):
                return True
    return False


# the nodes a loop's or a function's own body ends at: `_StepCalls` and `_calls` walk no deeper
_OWN_BODY_ENDS = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own_calls(body: list[ast.stmt]) -> list[ast.Call]:
    """The calls of a loop's or a function's own body, as `_StepCalls` visits it: not those of
    a nested loop, function or lambda (libcst's `For` and `FunctionDef` are also `async`)."""
    out: list[ast.Call] = []
    todo: list[ast.AST] = [s for s in body if type(s) not in _OWN_BODY_ENDS]
    while todo:
        node = todo.pop()
        if type(node) is ast.Call:
            out.append(node)
        todo.extend(c for c in ast.iter_child_nodes(node) if type(c) not in _OWN_BODY_ENDS)
    return out


def _step_call(call: ast.Call, found: Sites) -> bool:
    """What `_StepCalls` counts as a step (`.backward()`, `_is_step`), or more: `Sites.steps`'
    test of one call (`is_step_callee`), or a callee an import qualifies into `OPT_STEPS`."""
    if is_step_callee(call.func, callee_names(call.func)[0]):
        return True
    name = dotted_name(call.func)
    return name is not None and any(q in OPT_STEPS for q in found.qualified(name))


def placed_steps(tree: ast.Module | None, found: Sites) -> bool:
    """Whether a step sits where XLA001 or XLA002 reads one: in a `for`/`while` loop's own body
    (`_sync`'s `_body_stats`; XLA002's manual form asks the same of its loop), or a function
    whose own body calls `.backward()` and steps an optimizer (`_step_function` needs both).
    A step anywhere else (a method that only calls `self.optimizer.step()`, a module-level
    `loss.backward()`) is no site of the family. True where `ast` cannot parse the file."""
    if tree is None:
        return True
    for node in nodes(tree):
        kind = type(node)
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            if any(_step_call(c, found) for c in _own_calls(node.body)):  # type: ignore[attr-defined]
                return True
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            calls = _own_calls(node.body)  # type: ignore[attr-defined]
            if any(callee_names(c.func)[0] == "backward" for c in calls) and any(
                callee_names(c.func)[0] != "backward" and _step_call(c, found) for c in calls
            ):
                return True
    return False


def _exits(stmt: cst.CSTNode) -> bool:
    """`break`, `continue`, `return`, or an `if` that leads to one: the end of a step."""
    found = False

    class _V(cst.CSTVisitor):
        def visit_Break(self, node) -> None:
            nonlocal found
            found = True

        visit_Continue = visit_Return = visit_Break

        def visit_For(self, node) -> bool:
            return False

        def visit_While(self, node) -> bool:
            return False

        def visit_FunctionDef(self, node) -> bool:
            return False

    cstwalk.visit(stmt, _V())
    return found


def _is_backward(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"


def _prepared(scope: cst.CSTNode) -> frozenset[str]:
    """The names of `model, opt, loader = accelerator.prepare(model, opt, loader)`: loaders a
    library has made ready for the device. accelerate 1.16 wraps them for XLA itself
    (`MpDeviceLoaderWrapper`, which moves each batch and cuts the graph per batch): no
    MpDeviceLoader and no per-step sync to add. Read from the assignments of `scope`, not its
    nested functions."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return node is scope

        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if not (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "prepare"
            ):
                return
            for t in node.targets:
                names = (
                    [e.value for e in t.target.elements] if isinstance(t.target, (cst.Tuple, cst.List)) else [t.target]
                )
                found.update(n.value for n in names if isinstance(n, cst.Name))

    cstwalk.visit(scope, _V())
    return frozenset(found)


def _iterated_name(loop: cst.For) -> str | None:
    """`x` of `for b in x` / `for i, b in enumerate(x)`."""
    it = loop.iter
    if isinstance(it, cst.Call) and dotted(it.func) == "enumerate" and it.args:
        it = it.args[0].value
    return it.value if isinstance(it, cst.Name) else None


def _is_loader_call(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and (dotted(value.func) or "").endswith("DataLoader")


class XlaLoopFamily(Family):
    name = "xla-loop"
    tokens = (b"backward", b".step(", b"DataLoader", b"pin_memory", b"loader", b"cat(", b"concat")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """XLA001 needs a step where `_sync` or `_step_function` reads one (`placed_steps`),
        XLA002 a loop over a name an assignment binds to a `...DataLoader(...)` call
        (`_wrap_loader` reads `assigned_values` of that name, each a loader call) or (its manual
        form) a step in a loop's own body, XLA003 a `pin_memory=` not `False` or a bare
        `.pin_memory()` (`leave_Call`: `Sites.pins`), XLA004 a loop statement that assigns
        `torch.cat` of a tuple holding the name assigned (`_appends_to_itself`, `Sites.grows`)."""
        found = ctx.sites()
        if found is None:
            return True
        if ctx.enabled("XLA003") and found.pins:
            return True
        if ctx.enabled("XLA002") and not found.loop_names.isdisjoint(found.loader_names):
            return True
        if ctx.enabled("XLA004") and found.grows():
            return True
        # (`optimizer_step` imported under another name: `_is_step` qualifies the callee)
        steps = found.steps or any(q in OPT_STEPS for name in found.dotted_calls for q in found.qualified(name))
        return steps and (ctx.enabled("XLA001") or ctx.enabled("XLA002")) and placed_steps(ctx.tree(), found)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._loops: list[_StepCalls | None] = []  # enclosing loops of the node being visited
        self._prepared_names: dict[int, frozenset[str]] = {}  # id(scope) -> its `prepare`d names (one walk a scope)

    def _body_stats(self, loop: cst.For | cst.While) -> _StepCalls:
        stats = _StepCalls(self.ctx.resolver)
        for child in cstwalk.children(loop.body):
            cstwalk.visit(child, stats)
            # an unconditional `torch.cuda.synchronize()` in the step becomes `torch_xla.sync()`
            if type(child) is cst.SimpleStatementLine and any(
                type(s) is cst.Expr and type(s.value) is cst.Call and self.ctx.qualname(s.value.func) == CUDA_SYNC
                for s in child.body
            ):
                stats.synced = True
        return stats

    def visit_For(self, node: cst.For) -> None:
        self._loops.append(self._body_stats(node))

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(self._body_stats(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._loops.append(None)  # loops outside a function are not this function's steps

    def leave_FunctionDef(self, original, updated):
        self._loops.pop()
        return self._step_function(original, updated)

    def _step_function(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        """A function whose own body (not a loop in it) steps an optimizer is a training step
        that a framework calls per iteration (ignite's `Engine`, a `train_step`): the sync goes
        right after the step, as in a loop."""
        if type(original.body) is not cst.IndentedBlock:
            return updated
        if self.ctx.source and b"backward" not in self.ctx.source:
            # no `.backward()` call anywhere: no function is a step (and the walk below is a third
            # of a file's cost)
            return updated
        stats = _StepCalls(self.ctx.resolver)
        for child in original.body.body:
            cstwalk.visit(child, stats)
        if not (stats.optimizer_step and stats.backward) or stats.synced:
            return updated  # (an optimizer's own `step()` wrapping another is not a training step)
        new_body = list(updated.body.body)
        hits = [i for i, s in enumerate(new_body) if _calls(s, lambda c: _is_step(c, self.ctx.resolver))]
        if not hits:
            return updated
        sync = cst.SimpleStatementLine(body=[cst.Expr(value=cst.Call(func=self.ctx.ref("torch_xla.sync")))])
        new_body.insert(hits[-1] + 1, sync)
        new = updated.with_changes(body=updated.body.with_changes(body=new_body))
        if self.ctx.report(
            "XLA001",
            original,
            f"`{original.name.value}` steps the optimizer once per call: `torch_xla.sync()` added after "
            "the step, so each call compiles and runs as one graph",
            replacement=sync,
        ):
            return new
        return updated

    def _may_concatenate(self) -> bool:
        """False when no `torch.cat`/`concat`/`concatenate` can be named in the file (each is
        spelled with `cat`): no loop is a decoding loop, and its walk for a token picker is skipped."""
        return not self.ctx.source or b"cat" in self.ctx.source

    def leave_For(self, original: cst.For, updated: cst.For):
        updated = self._wrap_loader(original, updated)
        return self._sync(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While):
        return self._sync(original, updated)

    def _prepared_in(self, scope: cst.CSTNode) -> frozenset[str]:
        names = self._prepared_names.get(id(scope))
        if names is None:
            names = self._prepared_names[id(scope)] = _prepared(scope)
        return names

    def _sync(self, original, updated):
        stats = self._loops.pop()
        if isinstance(original, cst.For) and b"prepare" in (self.ctx.source or b"prepare"):
            name = _iterated_name(original)
            if name is not None and name in self._prepared_in(self.ctx.scopes.innermost or self.ctx.module):
                return updated  # accelerate's XLA loader cuts the graph at every batch
        if stats.synced or not isinstance(original.body, cst.IndentedBlock):
            if stats.steps and not stats.synced:
                self.ctx.report(
                    "XLA001",
                    original,
                    "a one-line training loop: add `torch_xla.sync()` at the end of each step",
                    applicability=Applicability.MANUAL,
                )
            return updated
        kind = self._loop_kind(original, stats)
        if kind is None:
            return updated
        pred, code, msg = kind
        new_body = list(updated.body.body)
        at = self._sync_position(new_body, pred)
        sync = cst.SimpleStatementLine(body=[cst.Expr(value=cst.Call(func=self.ctx.ref("torch_xla.sync")))])
        new_body.insert(at + 1, sync)
        new = updated.with_changes(body=updated.body.with_changes(body=new_body))
        if self.ctx.report(code, original, msg, replacement=sync):
            return new
        return updated

    def _loop_kind(self, original, stats: _StepCalls):
        """(the statement the sync follows, as a predicate on calls or None for a token append;
        the rule; its message) for a training-step loop (XLA001: after the optimizer step, or
        the backward pass where no loop around it steps) or a decoding loop (XLA004); None for
        any other loop."""
        outer_steps = False
        for outer in reversed(self._loops):
            if outer is None:
                break
            outer_steps = outer_steps or outer.optimizer_step or outer.synced
        if stats.optimizer_step or (stats.backward and not outer_steps):
            # right after the optimizer step (or the backward pass of a loop that has none),
            # before any `break`, logging or callback that follows it
            pred = (lambda c: _is_step(c, self.ctx.resolver)) if stats.optimizer_step else _is_backward
            return (
                pred,
                "XLA001",
                "training-step loop: `torch_xla.sync()` added after the optimizer step, so each step "
                "compiles and runs as one graph",
            )
        if (
            not stats.steps
            and self._may_concatenate()
            and any(_appends_to_itself(s, self.ctx.resolver) for s in original.body.body)
            and _picks_tokens(original.body)  # (a walk of the body: after the statement-level test)
        ):
            return (
                None,
                "XLA004",
                "decoding loop: `torch_xla.sync()` added after each generated token, so the lazy graph "
                "does not grow with every token",
            )
        return None

    def _sync_position(self, new_body: list, pred) -> int:
        """The index of the statement the sync goes after: the last one that makes the step
        (`pred`) or appends the token; for a hand-written update after the backward pass, the
        body's last statement before its exits."""
        if pred is None:
            hits = [i for i, s in enumerate(new_body) if _appends_to_itself(s, self.ctx.resolver)]
        else:
            hits = [i for i, s in enumerate(new_body) if _calls(s, pred)]
        at = hits[-1] if hits else len(new_body) - 1  # a rewrite moved the call: end of the step
        if pred is _is_backward:
            # no optimizer porter knows: the update is hand-written (`sgd([w, b], lr)`) and
            # follows the backward pass, so the step ends with the body, before its exits
            floor = hits[-1] if hits else len(new_body) - 1
            at = len(new_body) - 1
            while at > floor and _exits(new_body[at]):
                at -= 1
        return at

    def _wrap_loader(self, original: cst.For, updated: cst.For):
        it = original.iter
        target: cst.BaseExpression = it
        in_enumerate = isinstance(it, cst.Call) and dotted(it.func) == "enumerate" and it.args
        if in_enumerate:
            target = cst.ensure_type(it, cst.Call).args[0].value
        if not isinstance(target, cst.Name):
            return updated
        scope = self.ctx.scopes.innermost or self.ctx.module
        if b"prepare" in (self.ctx.source or b"prepare") and target.value in self._prepared_in(scope):
            return updated  # accelerate wraps it for XLA itself
        values = assigned_values(scope, target.value)
        if values and all(_is_loader_call(v) for v in values):
            loader = self.ctx.expr("{pl}.MpDeviceLoader(%s, {torch_xla}.device())" % target.value)
            if in_enumerate:
                call = cst.ensure_type(updated.iter, cst.Call)
                first = call.args[0].with_changes(value=loader)
                new_iter: cst.BaseExpression = call.with_changes(args=[first, *call.args[1:]])
            else:
                new_iter = loader
            new = updated.with_changes(iter=new_iter)
            if self.ctx.report(
                "XLA002",
                original,
                f"`{target.value}` is wrapped in `MpDeviceLoader`, which moves batches to the XLA device "
                "in the background",
                replacement=new_iter,
            ):
                return new
            return updated
        if (
            "loader" in target.value.lower()
            and self.ctx.scopes.innermost is not None
            and is_param(self.ctx.scopes.innermost, target.value)
            and self._body_stats(original).steps
        ):
            self.ctx.report(
                "XLA002",
                original,
                f"`{target.value}` comes from the caller: wrap the DataLoader in "
                "`torch_xla.distributed.parallel_loader.MpDeviceLoader(loader, torch_xla.device())` where "
                "it is made",
                applicability=Applicability.MANUAL,
            )
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        pin = self.kwarg(original, "pin_memory")
        if pin is not None and not (isinstance(pin.value, cst.Name) and pin.value.value == "False"):
            new: cst.BaseExpression = self.without_kwargs(updated, {"pin_memory"})
            if self.ctx.report(
                "XLA003",
                pin,
                "`pin_memory` is removed: PyTorch/XLA moves host data itself, and pinning needs an NVIDIA "
                "driver on some hosts",
                replacement=new,
            ):
                return new
            return updated
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory" and not original.args:
            statement = self.ctx.statement_of.get(id(original))
            if isinstance(statement, cst.Expr) and statement.value is original:
                # `t.pin_memory()` alone on its line (its result unused): the line goes, not `t`
                if self.ctx.report(
                    "XLA003",
                    original,
                    "`.pin_memory()` is removed on PyTorch/XLA",
                    replacement=cst.RemovalSentinel.REMOVE,
                ):
                    self.ctx.statement_edits.remove.add(id(statement))
                return updated
            new = cst.ensure_type(updated.func, cst.Attribute).value
            if self.ctx.report("XLA003", original, "`.pin_memory()` is removed on PyTorch/XLA", replacement=new):
                return new
        return updated
