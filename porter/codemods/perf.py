"""Performance lint (PERF family): code that runs on the target, slowly. Off by default
(`--extend-select PERF`), like ruff's opinionated rules; findings only, no edits.

- PERF001 host sync (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, printing the loss) inside a
  training-step loop. A site under an `if` whose test uses `%` (log every N steps) is not
  reported: that sync is paid once per N steps, by choice.
- PERF002 Python control flow on tensor values, and `.item()`, inside `forward`.
- PERF003 data-dependent shapes (`nonzero`, `unique`, `masked_select`, boolean-mask indexing)
  inside `forward`.
- PERF004 per-batch padding (`pad_sequence`, `padding=True` / `"longest"` without
  `pad_to_multiple_of`): a new shape per step, so a recompile per step.
- PERF005 float64 on neuron (downcast to 32 bits by the compiler).
- PERF006 collectives on tpu, split out of compiled graphs by default.
- PERF007 a loop that grows a tensor with `torch.cat` of itself and feeds it back (the
  sampling loop of a language model): a new shape, so a new compile, every iteration. On by
  default, like PERF008: these are the traps where a port never finishes.
- PERF008 `.item()` / `.tolist()` per element, in a loop over a tensor's elements.

fp16 where bf16 is native is AMP002, `torch.compile(dynamic=True)` is COMP003, and the XLA
step sync / MpDeviceLoader are XLA001 / XLA002: those rules already report the sites.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.candidates import LEAVES, fields_holding_nodes, parsed
from porter.codemods.family import Family, string_value
from porter.codemods.xla_loop import _appends_to_itself
from porter.analysis.resolve import dotted

SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
VALUE_METHODS = {"item", "any", "all", "is_nonzero", "equal", "allclose"}
REDUCTIONS = {"sum", "max", "min", "mean", "norm", "amax", "amin", "count_nonzero"}
TORCH_VALUE_FNS = {
    "torch.any",
    "torch.all",
    "torch.equal",
    "torch.allclose",
    "torch.is_nonzero",
    "torch.isnan",
    "torch.isinf",
}
DYNAMIC_METHODS = {"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere"}
DYNAMIC_FNS = {f"torch.{n}" for n in DYNAMIC_METHODS}
COLLECTIVES = {
    f"torch.distributed.{n}"
    for n in (
        "all_reduce",
        "all_gather",
        "all_gather_into_tensor",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "broadcast",
        "all_to_all",
        "all_to_all_single",
        "reduce",
    )
}
WRAPPERS = {
    "torch.nn.parallel.DistributedDataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
}
COLLATORS = (
    "DataCollatorWithPadding",
    "DataCollatorForSeq2Seq",
    "DataCollatorForTokenClassification",
    "DataCollatorForLanguageModeling",
)


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


class _Walk(cst.CSTVisitor):
    """Calls and subscripts in a body, not in nested functions or classes."""

    def __init__(self) -> None:
        self.calls: list[tuple[cst.Call, bool]] = []  # (call, under a `% N` condition)
        self.subscripts: list[cst.Subscript] = []
        self.tests: list[cst.BaseExpression] = []
        self.backward_of: set[str] = set()
        self._periodic = 0

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_If(self, node: cst.If) -> None:
        self.tests.append(node.test)
        if _has_modulo(node.test):
            self._periodic += 1

    def leave_If(self, node: cst.If) -> None:
        if _has_modulo(node.test):
            self._periodic -= 1

    def visit_While(self, node: cst.While) -> None:
        self.tests.append(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.tests.append(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self.tests.append(node.test)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self._periodic > 0))
        if (
            _method(node) == "backward"
            and isinstance(func := node.func, cst.Attribute)
            and isinstance(func.value, cst.Name)
        ):
            self.backward_of.add(func.value.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.subscripts.append(node)


def _has_modulo(test: cst.CSTNode) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_BinaryOperation(self, node):
            if isinstance(node.operator, cst.Modulo):
                found.append(node)

    cstwalk.visit(test, V())
    return bool(found)


def _walk(body: cst.CSTNode) -> _Walk:
    w = _Walk()
    for child in cstwalk.children(body):
        cstwalk.visit(child, w)
    return w


_DEFAULT_ON = ("PERF007", "PERF008")  # the only PERF rules on by default: they read loops only


class PerfFamily(Family):
    name = "perf"
    tokens = ()

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        if not super().wanted(ctx, source):
            return False
        if any(ctx.enabled(c) for c in cls.codes() if c not in _DEFAULT_ON):
            return True
        return any(t in source for t in (b"cat(", b"concat", b"item()", b"tolist()"))

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """The rules on by default read loops only: PERF007 a loop statement that assigns
        `torch.cat` of a tuple holding the name (`_appends_to_itself`, `Sites.grows`), PERF008
        `.item()`/`.tolist()` in a loop (`_may_have_per_element`). Any other PERF rule enabled: no
        cheaper condition."""
        if any(ctx.enabled(c) for c in cls.codes() if c not in _DEFAULT_ON):
            return True
        found = ctx.sites()
        if found is None:
            return True
        if ctx.enabled("PERF007") and found.grows():
            return True
        return ctx.enabled("PERF008") and _may_have_per_element(source, ctx.tree())

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()
        self._spmd_safe_depth = 0
        self._per_element: set[int] = set()  # `.item()` calls of PERF008 (PERF001 leaves them)

    # PERF008 -----------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        if not (self.ctx.source and (b"item()" in self.ctx.source or b"tolist()" in self.ctx.source)):
            return
        # (the libcst walk costs ~10x the `ast` scan that rules statements out)
        found: list[tuple[cst.Call, str, str]] = []
        for stmt in _per_element_statements(node, self.ctx.source, parsed(self.ctx.source)):
            cstwalk.visit(stmt, _PerElement(found))
        for call, method, element in found:
            self._per_element.add(id(call))
            if self.ctx.enabled("PERF008"):
                self._report(
                    "PERF008",
                    call,
                    f"`.{method}()` of `{element}` for each element: one device→host copy per element (on "
                    "XLA each also cuts and compiles a graph)",
                )

    def _report(self, code: str, node: cst.CSTNode, message: str) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        self.ctx.report(code, node, message)

    # PERF001 -----------------------------------------------------------------------------

    def visit_For(self, node: cst.For) -> None:
        self._step_loop(node)

    def visit_While(self, node: cst.While) -> None:
        self._step_loop(node)

    def _step_loop(self, loop) -> None:
        self._growing(loop)
        if not self.ctx.enabled("PERF001"):
            return
        w = _walk(loop.body)
        steps = any(
            _method(c) == "backward"
            or (
                _method(c) == "step" and "optim" in (dotted(cst.ensure_type(c.func, cst.Attribute).value) or "").lower()
            )
            for c, _ in w.calls
        )
        if not steps:
            return
        for call, periodic in w.calls:
            if periodic:
                continue
            m = _method(call)
            if id(call) in self._per_element:
                continue  # PERF008's
            if m in SYNC_METHODS and not call.args:
                self._report(
                    "PERF001",
                    call,
                    f"`.{m}()` in the training step waits for the device every step (on XLA it also cuts "
                    "and compiles the graph there)",
                )
            elif (
                isinstance(call.func, cst.Name)
                and call.func.value in ("print", "float", "int")
                and self._names_tensor(call, w.backward_of)
            ):
                self._report(
                    "PERF001",
                    call,
                    f"`{call.func.value}(...)` of a tensor in the training step copies it to the host every step",
                )

    def _growing(self, loop) -> None:
        """PERF007: `idx = torch.cat((idx, nxt), dim=1)` where `idx` is read again in the loop."""
        if not self.ctx.enabled("PERF007") or not isinstance(loop.body, cst.IndentedBlock):
            return
        statements = loop.body.body
        for stmt in statements:
            if not _appends_to_itself(stmt, self.ctx.resolver):
                continue
            assign = next(s for s in cst.ensure_type(stmt, cst.SimpleStatementLine).body if isinstance(s, cst.Assign))
            name = cst.ensure_type(assign.targets[0].target, cst.Name).value
            others = [s for s in statements if s is not stmt]
            if any(_reads(s, name) for s in others) or (isinstance(loop, cst.While) and _reads(loop.test, name)):
                self._report(
                    "PERF007",
                    assign.value,
                    f"`{name}` grows by `torch.cat` every iteration and is read again in the loop: a new "
                    f"shape each time, so {self.ctx.target.display} compiles a new graph per iteration",
                )
            return

    def _names_tensor(self, call: cst.Call, tensors: set[str]) -> bool:
        found = []

        class V(cst.CSTVisitor):
            def visit_Name(self, node):
                if node.value in tensors:
                    found.append(node)

        for arg in call.args:
            cstwalk.visit(arg.value, V())
        return bool(found)

    # PERF002 / PERF003 -------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            if (dotted(expr) or "").endswith("spmd_safe"):
                self._spmd_safe_depth += 1
        if node.name.value != "forward" or not (self.ctx.enabled("PERF002") or self.ctx.enabled("PERF003")):
            return
        w = _walk(node.body)
        self._tensor_branches(w)
        self._data_dependent_calls(w)
        self._mask_indexing(node, w)

    def _tensor_branches(self, w: _Walk) -> None:
        """PERF002: a Python branch on a tensor's value in `forward` (a graph break and a host
        sync)."""
        for test in w.tests:
            why = self._tensor_value(test)
            if why:
                self._report(
                    "PERF002",
                    test,
                    f"a Python branch on a tensor value ({why}) in `forward`: a graph break and a host "
                    "sync; each outcome may compile its own graph",
                )

    def _data_dependent_calls(self, w: _Walk) -> None:
        """PERF002 / PERF003: calls in `forward` that sync with the host (`.item()`) or return a
        shape that depends on the data (`nonzero`, one-argument `torch.where`)."""
        for call, _ in w.calls:
            m = _method(call)
            qual = self.ctx.qualname(call.func)
            if m in ("item", "tolist") and not call.args:
                self._report("PERF002", call, f"`.{m}()` in `forward`: a graph break and a host sync")
            if m in DYNAMIC_METHODS or qual in DYNAMIC_FNS:
                name = m if m in DYNAMIC_METHODS else (qual or "").split(".")[-1]
                self._report(
                    "PERF003",
                    call,
                    f"`{name}` in `forward` returns a data-dependent shape: dynamic shapes or a CPU "
                    "fallback on the target",
                )
            elif qual == "torch.where" and len(call.args) == 1:
                self._report(
                    "PERF003",
                    call,
                    "`torch.where(cond)` with one argument returns a data-dependent shape (it is `nonzero`)",
                )

    def _mask_indexing(self, node: cst.FunctionDef, w: _Walk) -> None:
        """PERF003: indexing with a boolean mask in `forward` (a data-dependent shape)."""
        masks = self._mask_names(node)
        for sub in w.subscripts:
            for el in sub.slice:
                index = el.slice.value if isinstance(el.slice, cst.Index) else None
                if isinstance(index, cst.Comparison) or (isinstance(index, cst.Name) and index.value in masks):
                    self._report(
                        "PERF003",
                        sub,
                        "boolean-mask indexing in `forward` returns a data-dependent shape: use "
                        "`torch.where(mask, x, 0)` or `masked_fill` to keep the shape",
                    )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        for dec in original.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            if (dotted(expr) or "").endswith("spmd_safe"):
                self._spmd_safe_depth -= 1
        return updated

    def _mask_names(self, fn: cst.FunctionDef) -> set[str]:
        names: set[str] = set()

        class V(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign):
                if isinstance(node.value, cst.Comparison) or (
                    isinstance(node.value, cst.Call)
                    and (_method(node.value) or "") in ("isnan", "isinf", "isfinite", "bool", "logical_not")
                ):
                    for t in node.targets:
                        if isinstance(t.target, cst.Name):
                            names.add(t.target.value)

        cstwalk.visit(fn.body, V())
        return names

    def _tensor_value(self, test: cst.BaseExpression) -> str | None:
        found: list[str] = []
        ctx = self.ctx

        class V(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call):
                m = _method(node)
                qual = ctx.qualname(node.func)
                if m in VALUE_METHODS:
                    found.append(f"`.{m}()`")
                elif qual in TORCH_VALUE_FNS:
                    found.append(f"`{qual}`")

            def visit_Comparison(self, node: cst.Comparison):
                for operand in [node.left, *(c.comparator for c in node.comparisons)]:
                    if isinstance(operand, cst.Call) and _method(operand) in REDUCTIONS:
                        found.append(f"`.{_method(operand)}()` compared")

        cstwalk.visit(test, V())
        return found[0] if found else None

    # PERF004 / PERF005 / PERF006 ---------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if not (self.ctx.enabled("PERF004") or self.ctx.enabled("PERF005") or self.ctx.enabled("PERF006")):
            return
        qual = self.ctx.qualname(node.func) or dotted(node.func) or ""
        last = qual.split(".")[-1]
        kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        bucket = "multiples of 128 on TPU" if self.ctx.target.name == "tpu" else "a few fixed lengths"
        if last == "pad_sequence":
            self._report(
                "PERF004",
                node,
                "`pad_sequence` pads to each batch's longest sequence: a new shape, so a new compile, "
                f"almost every step; pad to fixed buckets ({bucket})",
            )
        elif "padding" in kw and "pad_to_multiple_of" not in kw and "max_length" not in kw:
            value = kw["padding"]
            if _is_true(value) or string_value(value) == "longest":
                self._report(
                    "PERF004",
                    node,
                    f"`padding={self.ctx.code(value)}` pads to the batch's longest sequence: a new shape, "
                    f"so a new compile, almost every step; add `pad_to_multiple_of` ({bucket}) or pad to "
                    "`max_length`",
                )
        elif last in COLLATORS and "pad_to_multiple_of" not in kw:
            self._report(
                "PERF004", node, f"`{last}` pads to each batch's longest sequence: pass `pad_to_multiple_of` ({bucket})"
            )
        if _method(node) == "double" and not node.args and self.ctx.qualname(node.func) is None:
            self._report("PERF005", node, "`.double()`: float64 is computed in 32 bits on Neuron")
        if qual in COLLECTIVES or qual in WRAPPERS:
            if self._spmd_safe_depth == 0:
                name = qual.split(".")[-1]
                self._report(
                    "PERF006",
                    node,
                    f"`{name}`: on TorchTPU each collective splits the compiled graph by default, so "
                    "compute and communication do not overlap",
                )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("float64", "double") and self.ctx.qualname(node) in ("torch.float64", "torch.double"):
            self._report("PERF005", node, f"`{self.ctx.code(node)}`: float64 is computed in 32 bits on Neuron")


def _reads(node: cst.CSTNode, name: str) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                found.append(n)

    cstwalk.visit(node, V())
    return bool(found)


_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _may_have_per_element(source: bytes, tree: ast.Module | None = None) -> bool:
    """Whether `_PerElement` could find anything: a `.item()` / `.tolist()` without arguments
    inside a `for` loop or a comprehension, of a name one of them binds or of a tensor indexed
    by such names (an `ast` scan of `tree`, else of `source` parsed; True where `ast` cannot
    read the file)."""
    tree = _tree(source, tree)
    return tree is None or any(_per_element(stmt) for stmt in tree.body)


def _tree(source: bytes, tree: ast.Module | None) -> ast.Module | None:
    """`tree`, else `source` parsed; None where `ast` cannot read it (or, an empty module,
    where it holds no `.item()` / `.tolist()` to look at)."""
    if not (b"item()" in source or b"tolist()" in source):
        return ast.Module(body=[], type_ignores=[])
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return tree


def _per_element(top: ast.AST) -> bool:
    """`_may_have_per_element` within one top-level statement. The nodes are met in any order
    (the answer is whether one holds), less those under which no call or loop can stand
    (`candidates.LEAVES`: names, operators, ...), each type's fields read from the grammar."""
    # (node, the names the enclosing loops and comprehensions bind): `_PerElement` reports a
    # receiver that is one of them, or a tensor indexed by them (`t[i]`, `t[i, :]`)
    stack: list[tuple[ast.AST, frozenset[str]]] = [(top, frozenset())]
    leaves = LEAVES
    plans = fields_holding_nodes
    while stack:
        node, names = stack.pop()
        kind = type(node)
        if kind is ast.Call:
            if (
                names
                and type(node.func) is ast.Attribute  # type: ignore[attr-defined]
                and node.func.attr in ("item", "tolist")  # type: ignore[attr-defined]
                and not node.args  # type: ignore[attr-defined]
                and not node.keywords  # type: ignore[attr-defined]
                and _element(node.func.value, names)  # type: ignore[attr-defined]
            ):
                return True
        elif kind in (ast.For, ast.AsyncFor):
            names = names | _bound(node.target)  # type: ignore[attr-defined]
        elif kind in _LOOPS:
            names = names.union(*(_bound(g.target) for g in node.generators))  # type: ignore[attr-defined]
        for name, many in plans(kind):
            value: Any = getattr(node, name, None)
            if many:
                stack.extend([(v, names) for v in value if type(v) not in leaves])
            elif many is None:  # a type whose grammar `candidates` could not read: every child
                stack.extend((child, names) for child in ast.iter_child_nodes(node))
                break
            elif type(value) not in leaves:
                stack.append((value, names))
    return False


def _per_element_statements(module: cst.Module, source: bytes, tree: ast.Module | None) -> list[cst.CSTNode]:
    """What `_PerElement` needs to walk: the top-level statements of `module` in which
    `_per_element` finds a candidate (every loop's targets start afresh at the top level),
    the whole module where `ast` cannot read the file or its statements do not line up."""
    tree = _tree(source, tree)
    if tree is None:
        return [module]
    hits = {i for i, stmt in enumerate(tree.body) if _per_element(stmt)}
    if not hits:
        return []
    out: list[cst.CSTNode] = []
    at = 0
    for stmt in module.body:  # `a; b` is one libcst line of two `ast` statements
        count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        if not hits.isdisjoint(range(at, at + count)):
            out.append(stmt)
        at += count
    return out if at == len(tree.body) else [module]


def _bound(target: ast.expr) -> frozenset[str]:
    """The names a loop target binds (`_PerElement._names`: names, tuples and lists of them)."""
    if type(target) is ast.Name:
        return frozenset((target.id,))
    if type(target) in (ast.Tuple, ast.List):
        return frozenset().union(*(_bound(e) for e in target.elts))  # type: ignore[attr-defined]
    if type(target) is ast.Starred:  # `for a, *rest in ...`
        return _bound(target.value)
    return frozenset()


def _element(receiver: ast.expr, names: frozenset[str]) -> bool:
    """Whether `_PerElement` may take `receiver` for a loop's element."""
    if type(receiver) is ast.Name:
        return receiver.id in names
    if type(receiver) is not ast.Subscript or type(receiver.value) not in (ast.Name, ast.Attribute):
        return False
    index = receiver.slice
    parts = index.elts if type(index) is ast.Tuple else [index]
    indices = [p for p in parts if type(p) is not ast.Slice]
    return bool(indices) and all(type(i) is ast.Name and i.id in names for i in indices)


class _PerElement(cst.CSTVisitor):
    """`.item()` / `.tolist()` of a loop's element: `for v in t: v.item()`, `t[i].item()` in
    `for i in range(...)`, and the same in comprehensions."""

    def __init__(self, found: list[tuple[cst.Call, str, str]]) -> None:
        self.found = found
        self._targets: list[set[str]] = []

    @staticmethod
    def _names(target: cst.BaseExpression) -> set[str]:
        if isinstance(target, cst.Name):
            return {target.value}
        if isinstance(target, (cst.Tuple, cst.List)):
            return {n for e in target.elements for n in _PerElement._names(e.value)}
        return set()

    def visit_For(self, node: cst.For) -> None:
        # a loop over batches (`for x, y in loader`) syncs per batch (PERF001), not per element
        source = (
            dotted(node.iter) or (dotted(node.iter.func) if isinstance(node.iter, cst.Call) else "") or ""
        ).lower()
        batches = any(word in source for word in ("loader", "data", "batch"))
        self._targets.append(set() if batches else self._names(node.target))

    def leave_For(self, node: cst.For) -> None:
        self._targets.pop()

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets.append(self._names(node.target))

    def leave_CompFor(self, node: cst.CompFor) -> None:
        self._targets.pop()

    def _comprehension(self, node) -> None:
        # the element expression is visited before its `for` clause: read the targets first
        self._targets.append(set().union(*(self._names(f.target) for f in _clauses(node.for_in))))

    def _leave_comprehension(self, node) -> None:
        self._targets.pop()

    visit_ListComp = visit_GeneratorExp = visit_SetComp = _comprehension
    leave_ListComp = leave_GeneratorExp = leave_SetComp = _leave_comprehension  # type: ignore[assignment]

    def visit_Call(self, node: cst.Call) -> None:
        method = _method(node)
        if method not in ("item", "tolist") or node.args or not self._targets:
            return
        receiver = cst.ensure_type(node.func, cst.Attribute).value
        names = set().union(*self._targets)
        if isinstance(receiver, cst.Name) and receiver.value in names:
            self.found.append((node, method, receiver.value))
        elif isinstance(receiver, cst.Subscript) and isinstance(receiver.value, (cst.Name, cst.Attribute)):
            index = [e.slice.value for e in receiver.slice if isinstance(e.slice, cst.Index)]
            if index and all(isinstance(i, cst.Name) and i.value in names for i in index):
                self.found.append((node, method, dotted(receiver.value) or "the tensor"))


def _clauses(clause: cst.CompFor) -> list[cst.CompFor]:
    out = [clause]
    while clause.inner_for_in is not None:
        clause = clause.inner_for_in
        out.append(clause)
    return out


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
