"""CUDA-only code and the device checks that keep it away from other devices (GUARD001).

`if not x.is_cuda: return fallback(x)` or `torch.cuda.is_available() and
torch.cuda.get_device_capability() >= (8, 0)` choose between CUDA-only code (Triton, Helion,
a CUDA extension, DeepEP, CUDA graphs) and a portable path. Ported to the target device such
a check would send target tensors into code that cannot run there; kept on CUDA it is false
on the target, and the portable path it picks there is the port. So porter first finds what
in a file is CUDA-only (`cuda_only_facts`), then keeps the checks that protect it on CUDA
(`GuardsFamily` marks them in `ctx.keep_cuda`, which the device and torch.cuda families
honour) and reports each one. Registrations of CUDA-only kernels are the kernels family's
(KERN005), on the same facts.

What is CUDA-only is data (`[cuda_only]` in rules/guards.toml): modules, APIs, and the
extension builders whose result is a CUDA extension. From those seeds, a module-level
function (or autograd `Function` class, or assignment) that uses a CUDA-only name is
CUDA-only too, to a fixed point, so `f` -> `fused_op` -> `_kernel[grid](...)` is followed.
So is a class whose `__init__` or `__call__` is CUDA-only (making or calling one needs CUDA),
and a module global that a function sets with `global` from CUDA-only code (a DeepEP buffer).
A check that is its function's result (`return x.is_cuda and ...`) guards what that function's
callers guard with it, so predicates are followed to their call sites in the file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.context import CudaOnlyCode, one_line
from porter.codemods.device import cuda_device_index
from porter.codemods.family import Family, string_value
from porter.codemods.family import walk as _walk
from porter.codemods.host_backends import host_backend_for_cuda
from porter.codemods.literals import in_package
from porter.analysis.kinds import CudaOnlyKind, CudaOnlyTag

# has_token, runs_token: the bytes that make the analysis worth running
from porter.analysis.cuda_only_index import (
    CudaOnlyData,
    availability_predicates,
    cuda_only_data,
    names_package,
    has_token,
    packages,
    runs_token,
)
from porter.analysis.device_backends import ROCM_WORDS
from porter.analysis.resolve import ImportTable, dotted, name_assignments
from porter.config.cuda_packages import cuda_only_modules
from porter.core.findings import Applicability


def imported_cuda_only(settings) -> dict[str, str]:
    """Local name -> why, for the names this file imports from CUDA-only code elsewhere in
    the project (found per run by porter.analysis.cuda_only_index)."""
    return {
        f[1]: f[3][0]
        for f in (getattr(settings, "flow", None) or ())
        if f[2] == CudaOnlyKind.IMPORTED and f[3] and f[3][1:2] != (CudaOnlyTag.PREDICATE,)
    }


def imported_predicates(settings) -> dict[str, str]:
    """Local name -> why, for the functions this file imports from elsewhere in the project
    whose truth means a CUDA-only package is installed (cuda_only_index.availability_predicates)."""
    return {
        f[1]: f[3][0]
        for f in (getattr(settings, "flow", None) or ())
        if f[2] == CudaOnlyKind.IMPORTED and f[3][1:2] == (CudaOnlyTag.PREDICATE,)
    }


def imported_running(settings) -> frozenset[str]:
    """Of those, the names whose use runs CUDA-only code (a kernel launcher, not a capability query)."""
    return frozenset(
        f[1]
        for f in (getattr(settings, "flow", None) or ())
        if f[2] == CudaOnlyKind.IMPORTED and f[3][1:2] == (CudaOnlyTag.RUNS,)
    )


# the methods every use of a class runs: one of them CUDA-only makes the class CUDA-only
_ENTRIES = frozenset({"__init__", "__call__"})


@dataclass
class _Unit:
    """A function, class or module-level assignment: the names it uses and why it is CUDA-only."""

    node: cst.CSTNode
    names: tuple[str, ...]  # the names it binds
    refs: set[str] = field(default_factory=set)
    why: str | None = None
    runs: str | None = None  # why its own code runs CUDA-only code (not only asks about the device)
    propagates: bool = True  # whether using its name makes the user CUDA-only
    bound_in: str | None = None  # the function that binds a module-level name (`global x`)
    entries: list[_Unit] = field(
        default_factory=list
    )  # a class's `__init__` and `__call__` (an autograd Function's `forward`)
    # a module's `forward` (what calling an `nn.Module` runs): the class only runs on CUDA when it
    # does, though the class is not CUDA-only as a name (its other methods are judged one by one)
    runs_entries: list[_Unit] = field(default_factory=list)
    # what a function calls on every run (outside `if`, loops, `try`, `and`/`or`, comprehensions):
    direct: set[str] = field(default_factory=set)  # names (`f(x)`, `kernel[grid](x)`, `Fn.apply(x)`)
    self_reads: set[str] = field(default_factory=set)  # `self.<attr>` (`self.graph.replay()`)
    calls: set[str] = field(default_factory=set)  # a module-level assignment: the names its value calls, or aliases
    owner: _Unit | None = None  # a method's class
    attrs: dict[str, str] = field(
        default_factory=dict
    )  # a class's `self.<attr>` set to CUDA-only code (`torch.cuda.CUDAGraph()`)
    attr: str | None = None  # an assignment to `self.<attr>` (scanned for what it holds)
    # a class's `self.<attr>` bound to a name of the file (`self.loss = Transducer.apply`, `self.op = Op()`):
    # the attribute holds CUDA-only code when that name runs it (CudaOnly._spread_running)
    aliases: dict[str, str] = field(default_factory=dict)
    ops: set[str] = field(default_factory=set)  # the `torch.ops.<namespace>` it calls ops of


class _Scan(cst.CSTVisitor):
    """One walk: names each unit uses, and the CUDA-only modules/APIs it touches."""

    # (cstwalk.visit leaves out whitespace, comments, punctuation and operators: no method here
    # is for one, and on_visit / on_leave only count conditionals and CPU arms, none of them one)
    ignores_trivia = True

    def __init__(
        self,
        imports: ImportTable,
        data: CudaOnlyData,
        root: _Unit | None = None,
        dotted_names: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.imports = imports
        self.data = data
        self.dotted_names = dotted_names  # the project's CUDA-only names the file spells dotted (`pkg._C`)
        self.stack: list[_Unit] = [root] if root is not None else []
        self.units: dict[int, _Unit] = {}
        self.top: list[_Unit] = []
        self.extensions: dict[str, str] = {}  # module-level names bound to a built extension
        self._attr_parts: set[int] = set()
        self._in_def = 0
        self._globals: list[set[str]] = []  # per enclosing function: the names it declares `global`
        self._annotations = 0  # inside a type annotation: names there run nothing
        self._cond: list[int] = []  # per enclosing function: how deep in code that may not run
        self._exited: list[bool] = []  # per enclosing function: past an `if ...: return` (calls after it may not run)
        self._callees: set[int] = set()  # the names (and `self.<attr>`) a call calls: `f`, `k` in `k[grid](x)`
        self._off_cpu: set[int] = set()  # the arms of `if <on the CPU>:` that every run off the CPU takes

    def visit_Call(self, node: cst.Call) -> None:
        func: cst.BaseExpression = node.func
        while True:
            self._callees.add(id(func))
            if isinstance(func, (cst.Attribute, cst.Subscript)):
                func = func.value
            elif isinstance(func, cst.Call):
                func = func.func
            else:
                break

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._cond and isinstance(node, _CONDITIONAL):
            self._cond[-1] += 1
            if isinstance(node, cst.If) and (arm := _off_cpu_arm(node)) is not None:
                self._off_cpu.add(id(arm))
        elif self._cond and id(node) in self._off_cpu:
            self._cond[-1] -= 1  # every run off the CPU takes it
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if self._cond and id(original_node) in self._off_cpu:
            self._cond[-1] += 1
        if self._cond and isinstance(original_node, _CONDITIONAL):
            self._cond[-1] -= 1
            if (
                not self._cond[-1]
                and isinstance(original_node, (cst.If, cst.Try, cst.For, cst.While))
                and _exits(original_node)
            ):
                self._exited[-1] = True

    def _function(self, calls: bool = False) -> _Unit | None:
        """The innermost function, when the code being walked runs on each of its runs. A
        call after an early exit may not (`if not compatible: return gm` before a wrapper);
        the function's own CUDA graph or kernel code still makes it CUDA code."""
        if not self._cond or self._cond[-1] or self._annotations or (calls and self._exited[-1]):
            return None
        return next((u for u in reversed(self.stack) if isinstance(u.node, cst.FunctionDef)), None)

    def _open(self, unit: _Unit) -> None:
        self.units[id(unit.node)] = unit
        if self._in_def == 0:
            self.top.append(unit)
        self.stack.append(unit)

    def _mark(self, why: str, runs: bool = False) -> None:
        for unit in self.stack:
            if unit.why is None:
                unit.why = why
        if runs and not self._annotations:
            # the code that runs it: an assignment that keeps what it makes (`global x`, `self.x`),
            # and the innermost function, when it runs it on each of its runs
            for unit in reversed(self.stack):
                if isinstance(unit.node, cst.ClassDef):
                    break
                if isinstance(unit.node, cst.FunctionDef):
                    if unit.runs is None and self._function() is unit:
                        unit.runs = why
                    break
                if unit.runs is None:
                    unit.runs = why

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotations += 1

    def leave_Annotation(self, node: cst.Annotation) -> None:
        self._annotations -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        unit = _Unit(node, (node.name.value,))
        if self.stack and isinstance(self.stack[-1].node, cst.ClassDef):
            owner = unit.owner = self.stack[-1]
            if node.name.value in _ENTRIES or (owner.propagates and node.name.value == "forward"):
                owner.entries.append(unit)
            elif node.name.value == "forward":
                owner.runs_entries.append(unit)
        self._open(unit)
        self._in_def += 1
        self._globals.append(set())
        self._cond.append(0)
        self._exited.append(False)
        self._attr_parts.add(id(node.name))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._in_def -= 1
        self._globals.pop()
        self._cond.pop()
        self._exited.pop()
        self.stack.pop()

    def visit_Global(self, node: cst.Global) -> None:
        if self._globals:
            self._globals[-1].update(n.name.value for n in node.names)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # an autograd Function is used through its name (`Fn.apply`); an nn.Module that has one
        # CUDA-only method is not CUDA-only as a whole (its methods are judged one by one),
        # unless that method is `__init__` or `__call__`: then making or calling one needs CUDA
        autograd = any((dotted(b.value) or "").split(".")[-1] == "Function" for b in node.bases)
        self._open(_Unit(node, (node.name.value,), propagates=autograd))
        self._in_def += 1
        self._attr_parts.add(id(node.name))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._in_def -= 1
        self.stack.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._in_def or self.stack:
            self._global_assign(node)
            return  # only module-level assignments bind names other code can use
        names = tuple(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
        if not names:
            return
        value = node.value
        if isinstance(value, cst.Call) and self.imports.qualify(dotted(value.func) or "") in self.data.builders:
            for name in names:
                self.extensions[name] = f"the CUDA extension `{name}`"
        unit = _Unit(node, names)
        if isinstance(value, cst.Name):
            unit.calls.add(value.value)  # an alias runs what it names
        self._open(unit)

    def _global_assign(self, node: cst.Assign) -> None:
        """`global _buffer` ... `_buffer = HybridEPBuffer(...)` in a function binds a
        module-level name as surely as a module-level assignment: what it holds is CUDA-only
        when its value is (so `_buffer.combine(...)` elsewhere is CUDA-only too)."""
        declared = self._globals[-1] if self._globals else ()
        names = tuple(
            t.target.value for t in node.targets if isinstance(t.target, cst.Name) and t.target.value in declared
        )
        if names:
            function = next(u for u in reversed(self.stack) if isinstance(u.node, cst.FunctionDef))
            unit = _Unit(node, names, bound_in=function.names[0])
            self.units[id(node)] = unit
            self.top.append(unit)
            self.stack.append(unit)
            return
        # `self._graph = torch.cuda.CUDAGraph()` in a method: the attribute holds CUDA-only code
        attr = next(
            (
                t.target.attr.value
                for t in node.targets
                if isinstance(t.target, cst.Attribute) and _is_self_attr(t.target)
            ),
            None,
        )
        if attr is not None and any(u.owner is not None for u in self.stack if isinstance(u.node, cst.FunctionDef)):
            method = next(u for u in reversed(self.stack) if isinstance(u.node, cst.FunctionDef) and u.owner)
            root = _bound_name(node.value)
            if root is not None and method.owner is not None:
                method.owner.aliases.setdefault(attr, root)
            self.stack.append(_Unit(node, (), attr=attr))

    def leave_Assign(self, node: cst.Assign) -> None:
        if self.stack and self.stack[-1].node is node:
            unit = self.stack.pop()
            if unit.attr is not None and unit.runs:
                method = next(
                    u for u in reversed(self.stack) if isinstance(u.node, cst.FunctionDef) and u.owner is not None
                )
                assert method.owner is not None
                method.owner.attrs.setdefault(unit.attr, unit.runs)

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            name = dotted(alias.name)
            why = self.data.why(name)
            if why:
                self._mark(f"imports {why}", self.data.runs(name))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None:
            return False
        module = dotted(node.module) or ""
        why, runs = self.data.why(module), self.data.runs(module)
        if why is None and not isinstance(node.names, cst.ImportStar):
            found = next((q for a in node.names if self.data.why(q := f"{module}.{dotted(a.name)}")), None)
            why, runs = self.data.why(found), self.data.runs(found)
        if why:
            self._mark(f"imports {why}", runs)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if _is_self_attr(node) and id(node) in self._callees and (function := self._function()) is not None:
            function.self_reads.add(node.attr.value)
        self._attr_parts.add(id(node.attr))
        if id(node) in self._attr_parts:
            return
        value = node.value
        while isinstance(value, cst.Attribute):
            self._attr_parts.add(id(value))
            value = value.value
        if self.stack:
            name = dotted(node) or ""
            qual = self.imports.qualify(name)
            local = _spelled_prefix(name, self.dotted_names) if self.dotted_names else None
            if local:
                # `pkg._C.op(x)` of `import pkg._C`: a use of the name, as `_C.op(x)` of `from pkg
                # import _C` is, so that both say ``uses `f` → `pkg._C` (...)``
                self._use_name(local, id(node) in self._callees)
            elif why := self.data.why(qual):
                self._mark(f"uses {why}", self.data.runs(qual))
            parts = (qual or "").split(".")
            if len(parts) > 3 and parts[:2] == ["torch", "ops"]:
                # `torch.ops._ext_C.fwd(...)`: an op of the namespace a compiled extension the
                # file imports registers (`from . import _ext_C`): a use of that module's name
                self._use_name(parts[2], id(node) in self._callees)
                for unit in self.stack:
                    unit.ops.add(parts[2])

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._attr_parts.add(id(node.keyword))

    def _use_name(self, name: str, called: bool) -> None:
        for unit in self.stack:
            unit.refs.add(name)
        if called:
            if (function := self._function(calls=True)) is not None:
                function.direct.add(name)
            elif self.stack and self.stack[-1].node is not None and isinstance(self.stack[-1].node, cst.Assign):
                self.stack[-1].calls.add(name)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) in self._attr_parts or not self.stack:
            return
        self._use_name(node.value, id(node) in self._callees)
        if node.value in self.imports.names:
            qual = self.imports.qualify(node.value)
            why = self.data.why(qual)
            if why:
                self._mark(f"uses {why}", self.data.runs(qual))


# code in a function that may not run on each of its runs
# (a loop's body is not: what a function does in a loop, an autotuner's launches over its
# candidate sizes, is what it does whenever it runs)
_CONDITIONAL = (
    cst.If,
    cst.Try,
    cst.IfExp,
    cst.BooleanOperation,
    cst.Lambda,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def _cpu_test(test: cst.BaseExpression) -> bool | None:
    """Whether an `if` test asks that a device is the CPU (True), that it is not (False), or
    neither (None): `x.device.type == "cpu"`, `x.is_cpu`, `_is_device("cpu", x.device)`, and
    their negations."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _cpu_test(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cpu":
        return True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        sides = (test.left, test.comparisons[0].comparator)
        if any((string_value(side) or "").split(":")[0] == "cpu" for side in sides):
            op = test.comparisons[0].operator
            if isinstance(op, (cst.Equal, cst.Is)):
                return True
            if isinstance(op, (cst.NotEqual, cst.IsNot)):
                return False
    if isinstance(test, cst.Call) and any(string_value(a.value) == "cpu" for a in test.args if a.keyword is None):
        return True  # a predicate asked about the CPU (`_is_device("cpu", x.device)`)
    return None


def _off_cpu_arm(node: cst.If) -> cst.CSTNode | None:
    """The arm of `if <CPU test>: ... else: ...` that every run off the CPU takes: its `else`
    after a test that the device is the CPU, its body after one that it is not. Code there runs
    on each of the function's runs on an accelerator: a CUDA-only op (`_weight_int4pack_mm`)
    beside the CPU's own (`_weight_int4pack_mm_for_cpu`) leaves the function no path there but CUDA's."""
    on_cpu = _cpu_test(node.test)
    if on_cpu is None:
        return None
    if on_cpu:
        return node.orelse if isinstance(node.orelse, cst.Else) else None
    return node.body


class _Exit(cst.CSTVisitor):
    found = False

    def visit_Return(self, node: cst.Return) -> None:
        # `return fallback(x)`, `return x * 2`: another path. `return out`, `return None` for an
        # empty input (a Triton launcher's `if x.numel() == 0: return out`) is none: the work
        # that follows still runs whenever there is work
        if node.value is not None and not isinstance(
            node.value, (cst.Name, cst.Attribute, cst.SimpleString, cst.Integer, cst.Float, cst.Tuple)
        ):
            self.found = True

    def visit_Raise(self, node: cst.Raise) -> None:
        pass  # an error is no other path: the code after it is what runs

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _calls_ops(nodes: Sequence[cst.CSTNode], namespaces: set[str]) -> bool:
    """Whether `nodes` call an op of one of `namespaces` (`torch.ops._ext_C.fwd(...)`)."""
    return any(
        isinstance(n, cst.Call)
        and (parts := (dotted(n.func) or "").split("."))[:2] == ["torch", "ops"]
        and len(parts) > 3
        and parts[2] in namespaces
        for node in nodes
        for n in _walk(node)
    )


def _chooses_ops(function: cst.FunctionDef, check: cst.CSTNode, namespaces: set[str]) -> bool:
    """Whether `function` uses `check` (or a name set to code holding it: `fast = <check>`) as
    the test of an `if` (or `a if t else b`) one side of which calls the ops of `namespaces`
    and the other does not: the check chooses between the extension and code for any device.
    An `if` without `else` that leaves the function has the statements after it as its other side."""
    holds = lambda node: any(n is check for n in _walk(node))  # noqa: E731
    flags = {name for name, value in name_assignments(function.body) if holds(value)}

    def tested(test: cst.BaseExpression) -> bool:
        return holds(test) or any(isinstance(n, cst.Name) and n.value in flags for n in _walk(test))

    def blocks(node: cst.CSTNode):
        for n in _walk(node):
            body = getattr(n, "body", None)
            if isinstance(body, cst.IndentedBlock):
                yield list(body.body)
            orelse = getattr(n, "orelse", None)
            if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                yield list(orelse.body.body)

    for block in blocks(function):
        for i, stmt in enumerate(block):
            if not isinstance(stmt, cst.If) or not tested(stmt.test):
                continue
            other: Sequence[cst.CSTNode] = (
                [stmt.orelse] if stmt.orelse is not None else block[i + 1 :] if _exits_early(stmt) else []
            )
            if _calls_ops([stmt.body], namespaces) != _calls_ops(other, namespaces):
                return True
    return any(
        isinstance(n, cst.IfExp)
        and tested(n.test)
        and _calls_ops([n.body], namespaces) != _calls_ops([n.orelse], namespaces)
        for n in _walk(function)
    )


def _exits(node: cst.CSTNode) -> bool:
    """Whether a statement may leave its function for another path (a `return` that computes)."""
    scan = _Exit()
    cstwalk.visit(node, scan)
    return scan.found


def _kernel_taking(stmt: cst.CSTNode, name: str, running: dict[str, str]) -> str | None:
    """Where the plain statement `stmt` hands `name` to a call that runs CUDA-only code (its
    callee, or another of its arguments, is a name in `running` or an attribute of one):
    what it is handed to, with why; else None."""
    if type(stmt) is not cst.SimpleStatementLine:
        return None
    for call in _calls_in(stmt):
        if not any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.args):
            continue
        for part in (call.func, *(a.value for a in call.args)):
            base = part
            while isinstance(base, (cst.Attribute, cst.Subscript, cst.Call)):
                base = base.func if isinstance(base, cst.Call) else base.value
            if isinstance(base, cst.Name) and base.value in running and base.value != name:
                return f"`{dotted(part) or base.value}`, whose use runs {running[base.value]}"
    return None


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    cstwalk.visit(node, _Calls())
    return found


def _spelled_prefix(name: str, names: frozenset[str]) -> str | None:
    """The longest of `names` that `name` starts with, by its dotted parts (`pkg._C` of `pkg._C.op`)."""
    parts = name.split(".")
    return next((p for end in range(len(parts), 1, -1) if (p := ".".join(parts[:end])) in names), None)


def _is_self_attr(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _bound_name(value: cst.BaseExpression) -> str | None:
    """The name of the file an attribute is bound to: `Transducer.apply` (speechbrain 1.1.2's
    `self.loss = Transducer.apply`, an autograd Function of numba CUDA kernels), `Op(...)`, `f`."""
    if isinstance(value, cst.Call):
        value = value.func
    while isinstance(value, cst.Attribute):
        value = value.value
    return value.value if isinstance(value, cst.Name) and value.value != "self" else None


def _self_calls(node: cst.CSTNode) -> list[str]:
    """The attributes of `self` a subtree calls (`self.loss(x)`), in order."""
    return [
        func.attr.value
        for c in _walk(node)
        if isinstance(c, cst.Call) and _is_self_attr(func := c.func) and isinstance(func, cst.Attribute)
    ]


class CudaOnly:
    """What in one file is CUDA-only, and why."""

    def __init__(
        self,
        module: cst.Module | None,
        imports: ImportTable,
        imported: dict[str, str] | None = None,
        running: frozenset[str] = frozenset(),
        target: str | None = None,
        own: frozenset[str] = frozenset(),
    ) -> None:
        self.imports = imports
        self.data = cuda_only_data(target).without(own)
        self.names: dict[str, str] = {}  # module-level name -> why it is CUDA-only
        # of those, the names whose use runs CUDA-only code (a kernel, a CUDA graph), not only asks
        self.running: dict[str, str] = {}
        self._top: list[_Unit] = []
        self._checks: dict[int, bool] = {}  # id(unit node) -> it checks the device itself (see _checks_device)
        self._judging: set[int] = set()  # the methods whose `self.<method>()` calls are being followed (recursion)
        self._units: dict[int, _Unit] = {}
        self._module = module
        self._calls: dict[str, list[list[cst.CSTNode]]] | None = None  # see _call_sites
        # the project's CUDA-only names the file reaches dotted (`pkg._C` of `import pkg._C`)
        self._dotted = frozenset(n for n in imported or () if "." in n and n in running)
        if module is None:
            return
        # the project's CUDA-only code the file reaches by a dotted name (`torch.ops._C.op`,
        # `ops.op` of `import vllm._custom_ops as ops`): qualified, each runs it
        self.data = self.data.with_project(
            {imports.qualify(n) or n: w for n, w in (imported or {}).items() if "." in n and n in running}
        )
        scan = _Scan(imports, self.data, dotted_names=self._dotted)
        cstwalk.visit(module, scan)
        self._units = scan.units
        self._imported_names(imports, scan, imported or {}, running)
        self._top = scan.top
        self._spread_names(scan.top)
        self._spread_running(scan)

    def _imported_names(
        self, imports: ImportTable, scan: _Scan, imported: dict[str, str], running: frozenset[str]
    ) -> None:
        """The names CUDA-only code is bound to before the file's own code is judged: imported
        ones the data knows (and whether each runs such code), the file's CUDA extensions, and
        the project's CUDA-only names the caller found it importing (`running`: those that run
        such code)."""
        for local, qual in imports.names.items():
            why = self.data.why(qual)
            if why:
                self.names[local] = f"`{local}`" if why == f"`{local}`" else f"`{local}` from {why}"
            if why and self.data.runs(qual):
                self.running[local] = self.names[local]
        self.names.update(scan.extensions)
        self.running.update(scan.extensions)
        self.names.update(imported)
        self.running.update((n, w) for n, w in imported.items() if n in running)

    def _spread_names(self, top: list[_Unit]) -> None:
        """Mark the module-level units that are CUDA-only, until nothing changes: one that is so
        itself or uses a CUDA-only name, or a class (not an autograd Function: its methods are
        judged one by one) whose `__init__` or `__call__` is; each name marked can make another
        unit CUDA-only."""
        changed = True
        while changed:
            changed = False
            for unit in top:
                if all(n in self.names for n in unit.names):
                    continue
                if not unit.propagates:
                    entry = next(((e, w) for e in unit.entries if (w := self._why(e))), None)
                    if entry is not None:
                        self.names[unit.names[0]] = f"`{unit.names[0]}` (its `{entry[0].names[0]}` {entry[1]})"
                        changed = True
                    continue
                used = self._used(unit)
                if unit.why or used:
                    for n in unit.names:
                        self.names.setdefault(n, _named(n, unit, self.names[used] if used else None))
                    changed = True

    def _spread_running(self, scan: _Scan) -> None:
        """Mark the module-level units whose every run runs CUDA-only code (see _runs), until
        nothing changes; skipped where nothing known runs such code."""
        changed = bool(self.running) or any(u.runs for u in scan.units.values())
        while changed:
            changed = False
            for unit in scan.units.values():
                for attr, name in unit.aliases.items():
                    if attr not in unit.attrs and name in self.running and name not in unit.names:
                        unit.attrs[attr] = f"holds {self.running[name]}"
                        changed = True
            for unit in scan.top:
                if all(n in self.running for n in unit.names):
                    continue
                why = self._runs(unit)
                if why:
                    for n in unit.names:
                        self.running.setdefault(n, f"`{n}` ({why})")
                    changed = True

    @property
    def active(self) -> bool:
        return bool(self.names) or any(u.why for u in self._units.values())

    def _used(self, unit: _Unit) -> str | None:
        """The first (by name) CUDA-only name the unit uses, other than its own."""
        return min((n for n in unit.refs if n in self.names and n not in unit.names), default=None)

    def _why(self, unit: _Unit) -> str | None:
        if unit.why:
            return unit.why
        used = self._used(unit)
        return f"uses {self.names[used]}" if used else None

    def _runs(self, unit: _Unit) -> str | None:
        """Why every run of the unit runs CUDA-only code: its own code runs a CUDA-only library
        or API, or it uses a name that does, and it checks no device on the way (a function
        that does is a dispatcher: its other path is the port). A class: when its `__init__`
        or `__call__` does (an autograd Function: its `forward`). Only what runs on each run
        counts (not a use under an `if`), so `if cfg.graphs: capture(...)` is not CUDA-only;
        a method also runs what it reads from `self.<attr>` set to CUDA-only code."""
        if isinstance(unit.node, cst.ClassDef):
            entry = next(((e, w) for e in (*unit.entries, *unit.runs_entries) if (w := self._runs(e))), None)
            return f"its `{entry[0].names[0]}` {entry[1]}" if entry else None
        why = unit.runs
        function = isinstance(unit.node, cst.FunctionDef)
        if why is None:
            used = min(
                (n for n in (unit.direct if function else unit.calls) if n in self.running and n not in unit.names),
                default=None,
            )
            why = f"uses {self.running[used]}" if used else None
        if why is None and unit.owner is not None:
            attr = min((a for a in unit.self_reads if a in unit.owner.attrs), default=None)
            why = f"uses `self.{attr}` ({unit.owner.attrs[attr]})" if attr else None
        if why is None and unit.owner is not None and id(unit.node) not in self._judging:
            why = self._method_runs(unit)
        if why and isinstance(unit.node, cst.FunctionDef) and self._checks_device(unit):
            return None
        return why

    def _method_runs(self, unit: _Unit) -> str | None:
        """Why a method runs CUDA-only code through a method of its class it calls on each
        run (`self.pack(w)`, where `pack` runs a CUDA-only op off the CPU), or None."""
        self._judging.add(id(unit.node))
        try:
            for method in sorted(unit.self_reads):
                callee = next((u for u in self._units.values() if u.owner is unit.owner and u.names == (method,)), None)
                if callee is not None and (why := self._runs(callee)):
                    return f"calls `self.{method}()`, which {why}"
            return None
        finally:
            self._judging.discard(id(unit.node))

    def _checks_device(self, unit: _Unit) -> bool:
        """Whether the function asks which device it is on (itself, or through a function of
        the file that does, `if not _eligible(x): return None`) or catches errors: then it
        has a path for other devices."""
        known = self._checks.get(id(unit.node))
        if known is None:
            self._checks[id(unit.node)] = False  # (recursion)
            scan = _DeviceChecks(self.imports)
            cstwalk.visit(unit.node, scan)
            known = scan.found or any(
                self._checks_device(u)
                for u in self._top
                if isinstance(u.node, cst.FunctionDef) and u.names[0] in unit.refs and u is not unit
            )
            self._checks[id(unit.node)] = known
        return known

    def runs_only(self, node: cst.CSTNode) -> str | None:
        """Why the function or class `node` only ever runs on CUDA (see `_runs`), or None."""
        unit = self._units.get(id(node))
        return self._runs(unit) if unit is not None else None

    def tested(self, node: cst.FunctionDef) -> str | None:
        """Why a test function tests CUDA-only code: it calls a CUDA-only name (not one that
        only asks about the device) and puts its data on CUDA. Such a test stays a CUDA test."""
        unit = self._units.get(id(node))
        if unit is None:
            return None
        used = sorted(
            n for n in unit.refs if n in self.names and n not in unit.names and not self.asks_only(self.names[n])
        )
        if not used:
            return None
        scan = _CudaUse(self.imports)
        cstwalk.visit(node, scan)
        return f"a test of CUDA-only code: it calls {self.names[used[0]]} on CUDA" if scan.found else None

    def asks_only(self, why: str) -> bool:
        """Whether a reason names only APIs that ask about the device (a capability query)."""
        named = set(re.findall(r"`([\w.]+)`", why))
        known = {m for m in named if self.data.why(m)}
        return bool(known) and all(any(m == a or m.startswith(a + ".") for a in self.data.asks) for m in known)

    def unit_reason(self, node: cst.CSTNode) -> str | None:
        """Why the function/class `node` (from this module's tree) is CUDA-only."""
        unit = self._units.get(id(node))
        return self._why(unit) if unit is not None else None

    def name_reason(self, name: str) -> str | None:
        return self.names.get(name)

    def region_reason(self, node: cst.CSTNode, function: cst.FunctionDef | None = None) -> str | None:
        """Why the code in `node`'s subtree touches CUDA-only code; in a method (`function`), a call
        of a `self.<attr>` its class binds to CUDA-only code counts too."""
        unit = _Unit(node, ())
        cstwalk.visit(node, _Scan(self.imports, self.data, root=unit, dotted_names=self._dotted))
        why = self._why(unit)
        method = self._units.get(id(function)) if why is None and function is not None else None
        if method is not None and method.owner is not None:
            attrs = method.owner.attrs
            attr = next((a for a in _self_calls(node) if a in attrs), None)
            why = f"calls `self.{attr}`, which {attrs[attr]}" if attr else None
        return why

    def guard_reason(
        self, statements: list[cst.CSTNode], *, whole_function: bool, _seen: frozenset[int] = frozenset()
    ) -> str | None:
        """Why a device check, in the statement at the end of `statements` (the enclosing
        statements, outermost first), protects CUDA-only code.

        In an `if`/`while` test it protects that statement's branches, and with an early exit
        (`if not x.is_cuda: return fallback(x)`) the rest of its function. In a plain
        statement (`assert x.is_cuda`, `use_kernel = x.is_cuda and ...`) it protects its
        function when `whole_function` is set, else only that statement. A check that is
        its function's result (`return x.is_cuda and ...`) protects what its callers guard
        with that function (`if not _eligible(x): return None`).
        """
        if not self.active or not statements:
            return None
        here = statements[-1]
        function = next((s for s in reversed(statements) if isinstance(s, cst.FunctionDef)), None)
        why = self._local_reason(here, function, whole_function)
        if why is None and function is not None and id(function) not in _seen and _decides_result(here, function):
            why = self._caller_reason(statements, function, _seen | {id(function)})
        return why

    def _local_reason(self, here: cst.CSTNode, function: cst.FunctionDef | None, whole_function: bool) -> str | None:
        if isinstance(here, (cst.If, cst.While)):
            why = self.region_reason(here, function)
            if why or not _exits_early(here) or function is None:
                return why
            return self.unit_reason(function)
        if isinstance(here, cst.SimpleStatementLine):
            if whole_function and function is not None:
                return self.unit_reason(function)
            return self.region_reason(here)
        return None

    def _caller_reason(
        self, statements: list[cst.CSTNode], function: cst.FunctionDef, seen: frozenset[int]
    ) -> str | None:
        """Why a call of the predicate `function` guards CUDA-only code, at any of its call
        sites in this file: `f(...)` for a function, `self.f(...)` for a method."""
        at = statements.index(function)
        method = at > 0 and isinstance(statements[at - 1], cst.ClassDef)
        name = function.name.value
        for stack in self._call_sites().get(("self." if method else "") + name, ()):
            why = self.guard_reason(stack, whole_function=True, _seen=seen)
            if why:
                caller = next((s.name.value for s in reversed(stack) if isinstance(s, cst.FunctionDef)), None)
                where = f" in `{caller}`" if caller else ""
                return f"through `{name}()`{where}, which {why}"
        return None

    def flag_reason(self, statements: list[cst.CSTNode], flag: str) -> str | None:
        """Why the flag set at the end of `statements` (`is_rocm = torch.cuda.is_available()
        and ...`) protects CUDA-only code: where its function (or the module) reads it."""
        at = next((i for i in range(len(statements) - 1, -1, -1) if isinstance(statements[i], cst.FunctionDef)), None)
        scope = statements[at] if at is not None else self._module
        if scope is None:
            return None
        prefix = statements[:at] if at is not None else []
        uses = _CallSites(flag)
        cstwalk.visit(scope, uses)
        for stack in uses.found.get(flag, ()):
            if stack and stack[-1] is statements[-1]:
                continue  # the assignment itself
            why = self.guard_reason(prefix + stack, whole_function=False)
            if why:
                return f"through `{flag}`, which {why}"
        return None

    def _call_sites(self) -> dict[str, list[list[cst.CSTNode]]]:
        if self._calls is None:
            sites = _CallSites()
            if self._module is not None:
                cstwalk.visit(self._module, sites)
            self._calls = sites.found
        return self._calls


class _CudaUse(cst.CSTVisitor):
    """Whether a subtree puts data on CUDA or asks for it: a `"cuda[:N]"` string, `.cuda()`,
    `.is_cuda`, a `torch.cuda` API."""

    ignores_trivia = True  # (cstwalk.visit: on_visit reads strings and attributes only)

    def __init__(self, imports: ImportTable) -> None:
        super().__init__()
        self.imports = imports
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        if isinstance(node, cst.SimpleString):
            self.found = (string_value(node) or "").split(":")[0] == "cuda"
        elif isinstance(node, cst.Attribute):
            if node.attr.value in ("cuda", "is_cuda"):
                self.found = True
            elif (self.imports.qualify(dotted(node) or "") or "").startswith("torch.cuda."):
                self.found = True
        return not self.found


def is_test_file(path: str) -> bool:
    """Whether pytest (or unittest discovery) would read tests from this file."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test") and name.endswith(".py") or name.endswith("_test.py") or "/tests/" in f"/{path}"


class _DeviceChecks(cst.CSTVisitor):
    """Whether a subtree checks the device (`x.is_cuda`, `torch.cuda.is_available()`, a
    comparison with "cuda") or has a `try` (a fallback when the CUDA-only code raises)."""

    ignores_trivia = True  # (cstwalk.visit: on_visit reads `try`s, attributes, calls, comparisons)

    def __init__(self, imports: ImportTable) -> None:
        super().__init__()
        self.imports = imports
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        if isinstance(node, cst.Try):
            # a handler that only raises again (`except ImportError as e: raise ImportError(...)
            # from e`) and `try/finally` are no other path
            # and nor is one that imports a CUDA-only package itself (`nvsmi(...)`, else `import
            # pynvml`: NVIDIA's either way)
            self.found = not all(_raises(h.body) or _imports_cuda_only(h) for h in node.handlers)
        elif isinstance(node, cst.Attribute) and node.attr.value == "is_cuda":
            self.found = True
        elif isinstance(node, cst.Call):
            self.found = self.imports.qualify(dotted(node.func) or "") == "torch.cuda.is_available"
        elif isinstance(node, cst.Comparison):
            sides = [node.left, *(c.comparator for c in node.comparisons)]
            self.found = any((string_value(s) or "").split(":")[0] == "cuda" for s in sides)
        return not self.found


def _imports_cuda_only(handler: cst.ExceptHandler) -> bool:
    """Whether an `except` handler imports a CUDA-only package (porter.config.cuda_packages)."""
    for node in _walk(handler.body):
        if isinstance(node, cst.Import):
            names = [dotted(a.name) or "" for a in node.names]
        elif isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
            names = [dotted(node.module) or ""]
        else:
            continue
        if any(n.split(".")[0].encode() in packages() for n in names):
            return True
    return False


class _DeviceTests(_DeviceChecks):
    """Whether a subtree checks the device (as _DeviceChecks, a `try` aside)."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Try):
            return not self.found
        return super().on_visit(node)


_DECIDES = (cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef)


class _CallSites(cst.CSTVisitor):
    """Each call of a name (`f(...)`) or of a method on self/cls (`self.f(...)`), or each
    use of one `name`, with its enclosing statements as the rewrite sees them
    (`ctx.current_statements`)."""

    ignores_trivia = True  # (cstwalk.visit: on_visit / on_leave read statements, names, calls)

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self.name = name  # given: every read of this name instead of calls
        self.stack: list[cst.CSTNode] = []
        self.found: dict[str, list[list[cst.CSTNode]]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _DECIDES):
            self.stack.append(node)
        elif self.name is not None:
            if isinstance(node, cst.Name) and node.value == self.name:
                self.found.setdefault(self.name, []).append(list(self.stack))
        elif isinstance(node, cst.Call):
            func = node.func
            key = None
            if isinstance(func, cst.Name):
                key = func.value
            elif (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value in ("self", "cls")
            ):
                key = "self." + func.attr.value
            if key is not None:
                self.found.setdefault(key, []).append(list(self.stack))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, _DECIDES):
            self.stack.pop()


def _decides_result(here: cst.CSTNode, function: cst.FunctionDef | None = None) -> bool:
    """Whether a check in `here` gives its function's result: `return <check>`,
    `if <check>: return True` (or False), or `ok = <check> and ...` in a function that ends
    in `return ok`."""
    if isinstance(here, cst.SimpleStatementLine):
        if any(isinstance(s, cst.Return) and s.value is not None for s in here.body):
            return True
        result = _returned_name(function)
        return result is not None and any(
            isinstance(s, cst.Assign)
            and [t.target for t in s.targets if isinstance(t.target, cst.Name) and t.target.value == result]
            for s in here.body
        )
    if isinstance(here, cst.If):
        body = here.body.body
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine):
            last = last.body[-1]
        return (
            isinstance(last, cst.Return) and isinstance(last.value, cst.Name) and last.value.value in ("True", "False")
        )
    return False


def _returned_name(function: cst.FunctionDef | None) -> str | None:
    """The name a function's last statement returns (`return supported`), if any."""
    body = getattr(function.body, "body", ()) if function is not None else ()
    last = body[-1] if body else None
    if (
        isinstance(last, cst.SimpleStatementLine)
        and isinstance(last.body[-1], cst.Return)
        and isinstance(last.body[-1].value, cst.Name)
    ):
        return last.body[-1].value.value
    return None


def _named(name: str, unit: _Unit, used: str | None) -> str:
    """`name` and why it is CUDA-only: its unit's own reason, or the CUDA-only name it uses."""
    if unit.bound_in:
        return f"`{name}` (set in `{unit.bound_in}`, which {unit.why or f'uses {used}'})"
    return f"`{name}` ({unit.why})" if unit.why else f"`{name}` → {used}"


def _counted(codes: list[str]) -> str:
    return ", ".join(f"{c} ×{codes.count(c)}" if codes.count(c) > 1 else c for c in dict.fromkeys(codes))


def _cuda_sense(node: cst.BaseExpression, qualname) -> int:
    """1: true only on CUDA (`x.is_cuda`, `torch.cuda.is_available()`, `t == "cuda"`);
    -1: true only off CUDA (`not x.is_cuda`, `t != "cuda"`); 0: neither."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return -_cuda_sense(node.expression, qualname)
    if isinstance(node, cst.Attribute):
        return 1 if node.attr.value == "is_cuda" else 0
    if isinstance(node, cst.Call):
        return 1 if qualname(node.func) == "torch.cuda.is_available" else 0
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and _cuda_strings(node):
        # (`t in ("cuda", "xpu")` is true on CUDA and other GPUs, never on the target)
        op = node.comparisons[0].operator
        return 1 if isinstance(op, (cst.Equal, cst.In)) else -1 if isinstance(op, (cst.NotEqual, cst.NotIn)) else 0
    return 0


def _cuda_strings(node: cst.Comparison) -> list[cst.BaseExpression]:
    """The `"cuda"` strings a comparison tests against: a side (`t == "cuda"`), or an entry
    of the tuple, list or set a value is looked up in (`t in ("cuda", "xpu")`)."""
    sides = [node.left, *(c.comparator for c in node.comparisons)]
    found = [s for s in sides if (string_value(s) or "").split(":")[0] == "cuda"]
    for c in node.comparisons:
        if isinstance(c.operator, (cst.In, cst.NotIn)) and isinstance(c.comparator, (cst.Tuple, cst.List, cst.Set)):
            found.extend(
                e.value for e in c.comparator.elements if (string_value(e.value) or "").split(":")[0] == "cuda"
            )
    return found


def _contains(tree: cst.CSTNode, ids: set[int]) -> bool:
    if id(tree) in ids:
        return True
    return any(_contains(c, ids) for c in cstwalk.children(tree))


def _block_around(parent: cst.CSTNode, stmt: cst.CSTNode) -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
    """The statements before and after `stmt` in the block of `parent` that holds it (its body,
    `else`, handlers or `finally`); two empty lists where none holds it."""
    blocks: list = [getattr(parent, "body", None)]
    orelse = getattr(parent, "orelse", None)
    if isinstance(orelse, cst.Else):
        blocks.append(orelse.body)
    blocks.extend(h.body for h in getattr(parent, "handlers", ()))
    final = getattr(parent, "finalbody", None)
    if final is not None:
        blocks.append(final.body)
    for block in blocks:
        body = getattr(block, "body", block)
        if isinstance(body, (list, tuple)):
            for i, s in enumerate(body):
                if s is stmt:
                    return list(body[:i]), list(body[i + 1 :])
    return [], []


def _after(parent: cst.CSTNode, stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements after `stmt` in the block of `parent` that holds it."""
    return _block_around(parent, stmt)[1]


after = _after  # for backends.py (the code past a check that demands CUDA)


def _exits_early(stmt: cst.If | cst.While) -> bool:
    body = stmt.body.body
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine) or isinstance(stmt.body, cst.SimpleStatementSuite):
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) else last
        return isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break))
    return False


def cuda_only_facts(ctx) -> CudaOnly:
    """The file's facts, computed once per file and only when a CUDA-only token occurs."""
    facts = getattr(ctx, "_cuda_only", None)
    if facts is None:
        imported = imported_cuda_only(ctx.settings)
        wanted = has_token(ctx.source) or bool(imported) if ctx.source else True
        facts = CudaOnly(
            ctx.module if wanted else None,
            ctx.imports,
            imported,
            imported_running(ctx.settings),
            ctx.target.name,
            ctx.own_top_modules,
        )
        ctx._cuda_only = facts
    return facts


def _available_flags(scope: cst.Module | cst.FunctionDef, qualname) -> set[str]:
    """Names `scope` assigns a `torch.cuda.is_available()` test to (alone or first in an
    `and` chain): `ok = torch.cuda.is_available()`, `is_rocm = torch.cuda.is_available() and ...`."""
    return {
        name
        for name, value in name_assignments(scope.body)
        if any(_is_call_of(o, qualname, "torch.cuda.is_available") for o in _operands(value, cst.And))
    }


def _cuda_flags(
    scope: cst.Module | cst.FunctionDef, qualname, target: str | None = None
) -> dict[str, tuple[cst.CSTNode, ...]]:
    """Names `scope` assigns a test that is true only on CUDA (alone or in an `and` chain),
    each with the nodes that make it so: fla's `IS_NVIDIA = (device_platform == 'cuda')`;
    and names set to `True` in a `try` that imports a CUDA-only package (`try: import
    transformer_engine.pytorch as te; te_installed = True`), true only where that package
    imports (nothing to keep for it: `()`)."""
    flags: dict[str, tuple[cst.CSTNode, ...]] = _import_flags(scope, target)
    for name, value in name_assignments(scope.body):
        nodes = _cuda_test_nodes(value, qualname, flags)
        if nodes is not None:
            flags[name] = nodes
    return flags


def _import_flags(scope: cst.Module | cst.FunctionDef, target: str | None) -> dict[str, tuple[cst.CSTNode, ...]]:
    """`te_installed` of `try: import transformer_engine.pytorch as te` / `te_installed = True`
    / `except ImportError: te_installed = False`: a flag true only where a CUDA-only package
    (porter.config.cuda_packages) imports."""
    body = scope.body.body if isinstance(scope, cst.FunctionDef) else scope.body
    if isinstance(body, cst.BaseSuite):
        return {}
    modules = cuda_only_modules(target)
    flags: dict[str, tuple[cst.CSTNode, ...]] = {}
    for stmt in body:
        if not isinstance(stmt, cst.Try) or not isinstance(stmt.body, cst.IndentedBlock):
            continue
        lines = [s for s in stmt.body.body if isinstance(s, cst.SimpleStatementLine)]
        imported = [
            dotted(a.name) or ""
            for line in lines
            for small in line.body
            if isinstance(small, cst.Import)
            for a in small.names
        ] + [
            dotted(small.module) or ""
            for line in lines
            for small in line.body
            if isinstance(small, cst.ImportFrom) and small.module
        ]
        if not any(m == c or m.startswith(c + ".") for m in imported for c in modules):
            continue
        for line in lines:
            for small in line.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Name)
                    and small.value.value == "True"
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    flags[small.targets[0].target.value] = ()
    return flags


def _sense_nodes(node: cst.BaseExpression) -> tuple[cst.CSTNode, ...]:
    """The nodes of a CUDA test (`_cuda_sense`) that the device family would rewrite."""
    if isinstance(node, cst.UnaryOperation):
        return _sense_nodes(node.expression)
    if isinstance(node, cst.Attribute):
        return (node,)
    if isinstance(node, cst.Comparison):
        return tuple(
            s for s in (node.left, node.comparisons[0].comparator) if (string_value(s) or "").split(":")[0] == "cuda"
        )
    return ()


def _cuda_test_nodes(
    test: cst.BaseExpression, qualname, flags: dict[str, tuple[cst.CSTNode, ...]]
) -> tuple[cst.CSTNode, ...] | None:
    """When `test` is true only on CUDA (one of its `and` operands is: `x.is_cuda`, `t ==
    "cuda"`, `torch.cuda.is_available()`, a name set to such a test), the nodes that make it
    so (for it to stay true only on CUDA they must stay CUDA's); else None."""
    for o in _operands(_bare(test), cst.And):
        if _cuda_sense(o, qualname) == 1:
            return _sense_nodes(o)
        if isinstance(o, cst.Name) and o.value in flags:
            return flags[o.value]
    return None


def _not_cuda_test_nodes(
    test: cst.BaseExpression, qualname, flags: dict[str, tuple[cst.CSTNode, ...]]
) -> tuple[cst.CSTNode, ...] | None:
    """When `test` is true whenever the device is not CUDA's (`t != "cuda"`, `not x.is_cuda`,
    `not IS_NVIDIA or ...`: past `if <test>: raise` only CUDA goes on), the nodes that make it so."""
    for o in _operands(_bare(test), cst.Or):
        if _cuda_sense(o, qualname) == -1:
            return _sense_nodes(o)
        if isinstance(o, cst.UnaryOperation) and isinstance(o.operator, cst.Not):
            nodes = _cuda_test_nodes(o.expression, qualname, flags)
            if nodes is not None:
                return nodes
    return None


def _bare(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` without its parentheses (`(a and b)` is an `and` chain too)."""
    if isinstance(node, cst.Tuple) or not getattr(node, "lpar", None):
        return node  # (a tuple's parentheses may be its syntax: `()`)
    return node.with_changes(lpar=[], rpar=[])


def _before(parent: cst.CSTNode, stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements before `stmt` in the block of `parent` that holds it."""
    return _block_around(parent, stmt)[0]


def only_cuda_reaches(
    ctx, flags: dict[str, tuple[cst.CSTNode, ...]], enclosing: bool = True
) -> cst.If | cst.While | None:
    """The `if` that lets only CUDA reach the current statement, or None: an enclosing `if`
    whose test is true only on CUDA holds it (where `enclosing`), or an earlier `if <not CUDA>:
    raise/return` of its block lets only CUDA past (either test kept CUDA's; `flags`: names set
    to such tests)."""
    chain: list[cst.CSTNode] = [ctx.module, *ctx.current_statements]
    for parent, child in zip(chain, chain[1:]):
        if (
            enclosing
            and isinstance(parent, (cst.If, cst.While))
            and isinstance(parent.body, cst.IndentedBlock)
            and any(s is child for s in parent.body.body)
        ):
            nodes = _cuda_test_nodes(parent.test, ctx.qualname, flags)
            if nodes is not None and all(id(n) in ctx.keep_cuda for n in nodes):
                return parent
        for earlier in _before(parent, child):
            if isinstance(earlier, cst.If) and _exits_early(earlier):
                nodes = _not_cuda_test_nodes(earlier.test, ctx.qualname, flags)
                if nodes is not None and all(id(n) in ctx.keep_cuda for n in nodes):
                    return earlier
    return None


def _flag_set_here(statements: list[cst.CSTNode], call: cst.Call, flags: frozenset[str]) -> str | None:
    """The flag the statement at the end of `statements` sets with `call` in its value, if any."""
    here = statements[-1] if statements else None
    if not flags or not isinstance(here, cst.SimpleStatementLine):
        return None
    for small in here.body:
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            name = small.targets[0].target.value
            if name in flags and any(o is call for o in _operands(small.value, cst.And)):
                return name
    return None


def _is_call_of(node: cst.BaseExpression, qualname, name: str) -> bool:
    return isinstance(node, cst.Call) and qualname(node.func) == name


def _operands(node: cst.BaseExpression, op: type) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, op) and not node.lpar:
        return _operands(node.left, op) + _operands(node.right, op)
    return [node]


# a Triton kernel defined in the file (`@triton.jit`, `@triton.autotune(...)`, `@jit` from triton)
_TRITON_KERNEL = re.compile(rb"^[ \t]*@(?:triton\.)?(?:jit|autotune)\b", re.MULTILINE)
_TRITON_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+triton\b|from[ \t]+triton\b)", re.MULTILINE)


def triton_module(source: bytes) -> bool:
    """Whether the file is a module of Triton kernels: it imports Triton and defines kernels.
    Its compiled helpers run beside those kernels, on the GPUs they were written for."""
    return (
        bool(source)
        and b"triton" in source
        and bool(_TRITON_IMPORT.search(source))
        and bool(_TRITON_KERNEL.search(source))
    )


CAPABILITY_QUERIES = frozenset({"torch.cuda.get_device_capability", "torch.cuda.get_device_properties"})


class _Queries(cst.CSTVisitor):
    """Whether a subtree calls a capability query (and, separately, `torch.cuda.is_available`)."""

    def __init__(self, qualname, flags: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.qualname = qualname
        self.flags = flags  # names set to a `torch.cuda.is_available()` test (`_available_flags`)
        self.capability = False
        self.available = False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.flags:
            self.available = True

    def visit_Call(self, node: cst.Call) -> None:
        qual = self.qualname(node.func)
        if qual in CAPABILITY_QUERIES:
            self.capability = True
        elif qual == "torch.cuda.is_available":
            self.available = True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class GuardsFamily(Family):
    """Marks the device checks that protect CUDA-only code, before any family ports them,
    and gives a bare capability check the short-circuit it needs off CUDA (GUARD002)."""

    name = "guards"
    tokens = (b"cuda",)

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        return super().wanted(ctx, source) and (
            has_token(source)
            or bool(imported_cuda_only(ctx.settings))
            or bool(imported_predicates(ctx.settings))  # `if is_sagemaker_dp_enabled():` (GUARD003)
            or names_package(source)  # a predicate of a CUDA-only package defined here (GUARD003)
            or (b"raise" in source and _OFF_CUDA.search(source) is not None)  # a class only for CUDA (GUARD004)
            or (b"assert" in source and _ASSERTS_CUDA.search(source) is not None)  # (GUARD004)
            or (b"cuda" in source and _rocm_module(ctx.path) is not None)  # ROCm's module (GUARD004)
            or (b"nccl" in source and _NCCL_C_BYTES.search(source) is not None)  # NCCL's C API (GUARD004)
            or _CUDA_IPC_BYTES.search(source) is not None  # CUDA IPC (GUARD004)
        )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._facts: CudaOnly | None = None
        self._fallbacks: dict[str, bool] = {}  # name -> the module binds it to a fallback too (`_has_fallback`)
        self._assigned: dict[str, list[cst.BaseExpression]] | None = None  # name -> the values assigned to it
        self._queries = (
            not ctx.source or b"get_device_capability" in ctx.source or b"get_device_properties" in ctx.source
        )
        self._after_available = 0  # inside an `and`/`or` chain that asks torch.cuda.is_available()
        self._predicates: dict[str, str] | None = None  # see _predicate_branch
        self._behind_available: set[int] = set()  # comparisons in the CUDA arm of `x if <available test> else y`
        self._needs: str | None | bool = False  # _module_needs, read once
        self._class_needs: dict[int, str | None] = {}  # id(class) -> _class_needs
        self._registrations: set[int] = set()  # the device types of kernel registrations (KERN005's)
        self._counted: set[int] = set()
        self._negated: set[int] = set()  # operands of `not` (and of `or`): a new `and` gets parentheses
        self._tests: dict[int, bool] = {}  # id(if/while) -> its test asks torch.cuda.is_available()
        self._flag_sets: dict[int, frozenset[str]] = {}  # id(function or module) -> its flags
        self._cuda_flag_sets: dict[
            int, dict[str, tuple[cst.CSTNode, ...]]
        ] = {}  # id(function or module) -> names of a test true only on CUDA
        # every call of each name in the module, with its enclosing statements (GUARD002 skips a
        # private function called only behind CUDA tests)
        self._module_calls: dict[str, list[list[cst.CSTNode]]] | None = None
        # code that only runs on CUDA is left as it is (GUARD003): only where something can run CUDA-only code
        self._leave = ctx.enabled("GUARD003") and (
            not ctx.source or runs_token(ctx.source) or bool(imported_running(ctx.settings))
        )
        # a test of CUDA-only code stays a CUDA test (GUARD003): in test files that use such code
        self._test_file = (
            ctx.enabled("GUARD003")
            and is_test_file(ctx.path)
            and (self._leave or bool(imported_cuda_only(ctx.settings)))
        )

    def _flags(self) -> frozenset[str]:
        """The names the current function (or the module) sets to a `torch.cuda.is_available()`
        test, such as `is_rocm = torch.cuda.is_available() and torch.version.hip is not None`."""
        functions = [s for s in self.ctx.current_statements if isinstance(s, cst.FunctionDef)]
        module: cst.Module | None = self.ctx.module
        scopes = [module, *functions][-2:]
        found: frozenset[str] = frozenset()
        for scope in scopes:
            if scope is None:
                continue
            if id(scope) not in self._flag_sets:
                self._flag_sets[id(scope)] = frozenset(_available_flags(scope, self.ctx.qualname))
            found |= self._flag_sets[id(scope)]
        return found

    def _cuda_flags(self) -> dict[str, tuple[cst.CSTNode, ...]]:
        """The names the current function (or the module) sets to a test true only on CUDA
        that stayed CUDA's (its CUDA nodes were kept: `IS_NVIDIA` kept by GUARD001)."""
        functions = [s for s in self.ctx.current_statements if isinstance(s, cst.FunctionDef)]
        module: cst.Module | None = self.ctx.module
        scopes = [module, *functions][-2:]
        found: dict[str, tuple[cst.CSTNode, ...]] = {}
        for scope in scopes:
            if scope is None:
                continue
            if id(scope) not in self._cuda_flag_sets:
                self._cuda_flag_sets[id(scope)] = _cuda_flags(scope, self.ctx.qualname, self.ctx.target.name)
            found.update(self._cuda_flag_sets[id(scope)])
        return {name: nodes for name, nodes in found.items() if self._stays(nodes)}

    def _stays(self, nodes: Sequence[cst.CSTNode]) -> bool:
        return all(id(n) in self.ctx.keep_cuda for n in nodes)

    def _only_cuda_here(self) -> bool:
        """Whether only CUDA reaches the current statement (`only_cuda_reaches`)."""
        return only_cuda_reaches(self.ctx, self._cuda_flags()) is not None

    def _called_only_on_cuda(self) -> bool:
        """Whether the module's private function that holds the current statement
        (`_conv2d_gradfix`) is called in this file only under an `if` whose test passes only on
        CUDA: a CUDA test, or a predicate of the module that returns False off CUDA
        (`_should_use_custom_op`: `if input.device.type != "cuda": return False`), whose CUDA
        test stayed CUDA's. A private name has no callers outside its module."""
        statements = self.ctx.current_statements
        outer = statements[0] if statements else None
        if (
            self.ctx.module is None
            or not isinstance(outer, cst.FunctionDef)
            or not outer.name.value.startswith("_")
            or outer.name.value.startswith("__")
        ):
            return False
        if self._module_calls is None:
            sites = _CallSites()
            cstwalk.visit(self.ctx.module, sites)
            self._module_calls = sites.found
        stacks = self._module_calls.get(outer.name.value, [])
        # (a call inside the function itself, as a backward pass makes its own, is reached from there)
        return bool(stacks) and all(stack[:1] == [outer] or self._under_cuda_test(stack) for stack in stacks)

    def _under_cuda_test(self, stack: list[cst.CSTNode]) -> bool:
        """Whether a call site (its enclosing statements) sits in the body of an `if` whose test
        passes only on CUDA (the test's CUDA nodes kept), directly or through a predicate."""
        flags = self._cuda_flags()
        for parent, child in zip(stack, stack[1:]):
            if not (
                isinstance(parent, cst.If)
                and isinstance(parent.body, cst.IndentedBlock)
                and any(s is child for s in parent.body.body)
            ):
                continue
            nodes = _cuda_test_nodes(parent.test, self.ctx.qualname, flags)
            if nodes is not None and self._stays(nodes):
                return True
            for operand in _operands(_bare(parent.test), cst.And):
                nodes = self._predicate_nodes(operand)
                if nodes is not None and self._stays(nodes):
                    return True
        return False

    def _predicate_nodes(self, node: cst.BaseExpression) -> tuple[cst.CSTNode, ...] | None:
        """For a call of a module-level function that returns False unless the device is CUDA's
        (`if x.device.type != "cuda": return False`, after only other `return False` exits), the
        nodes of that CUDA test; else None."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name) or self.ctx.module is None:
            return None
        function = next(
            (s for s in self.ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == node.func.value),
            None,
        )
        if function is None or not isinstance(function.body, cst.IndentedBlock):
            return None
        for stmt in function.body.body:
            if isinstance(stmt, cst.SimpleStatementLine) and not any(isinstance(b, cst.Return) for b in stmt.body):
                continue  # `assert isinstance(x, torch.Tensor)`
            if not isinstance(stmt, cst.If) or stmt.orelse is not None or not _exits_early(stmt):
                return None
            last = stmt.body.body[-1]
            returned = last.body[-1] if isinstance(last, cst.SimpleStatementLine) else None
            if not (
                isinstance(returned, cst.Return)
                and isinstance(returned.value, cst.Name)
                and returned.value.value == "False"
            ):
                return None
            nodes = _not_cuda_test_nodes(stmt.test, self.ctx.qualname, {})
            if nodes is not None:
                return nodes
        return None

    def _cuda_wrapper(self, check: cst.CSTNode) -> str | None:
        """Why the enclosing function is CUDA's wrapper, or None: it calls the ops of a compiled
        CUDA extension (`torch.ops._ext_C.fwd`, from `from . import _ext_C`) on its paths and
        checks no device (a dispatcher that does has a path for the target), nor uses the
        capability `check` to choose between those ops and other code (the target's path)."""
        function = next((f for f in reversed(self.ctx.current_statements) if isinstance(f, cst.FunctionDef)), None)
        if function is None or not self.facts.active:
            return None
        unit = self.facts._units.get(id(function))
        if unit is None or self.facts._checks_device(unit):
            return None
        extensions = {n for n in unit.ops if n in self.facts.running}
        if not extensions or _chooses_ops(function, check, extensions):
            return None
        name = min(extensions)
        return f"`def {function.name.value}` calls the ops of the project's compiled CUDA extension `{name}`"

    def _cuda_before_query(self, node: cst.BooleanOperation) -> bool:
        """`x.is_cuda and <capability query>`, `IS_NVIDIA and ...`, `q.device.type != "cuda" or
        <capability query>`: only CUDA gets past the left, so the query needs no guard of its
        own; the left stays CUDA's (GUARD001)."""
        flags = self._cuda_flags()
        if isinstance(node.operator, cst.And):
            nodes = _cuda_test_nodes(node.left, self.ctx.qualname, flags)
        elif isinstance(node.operator, cst.Or):
            nodes = _not_cuda_test_nodes(node.left, self.ctx.qualname, flags)
        else:
            return False
        if nodes is None:
            return False
        if not self._stays(nodes):
            right = _Queries(self.ctx.qualname)
            cstwalk.visit(node.right, right)
            if not right.capability:
                return False
            shown = next(
                q for q in ("get_device_capability", "get_device_properties") if q in self.ctx.code(node.right)
            )
            self._keep(nodes[0], nodes, f"`torch.cuda.{shown}` behind it raises without CUDA")
        return True

    @property
    def facts(self) -> CudaOnly:
        """Computed on the first check that needs it: most files with a token have none."""
        if self._facts is None:
            self._facts = cuda_only_facts(self.ctx)
        return self._facts

    def _keep(self, report_at: cst.CSTNode, kept: Sequence[cst.CSTNode], why: str) -> None:
        if self.ctx.report(
            "GUARD001",
            report_at,
            f"`{self.ctx.code(report_at)}` keeps CUDA-only code ({why}) away from other devices: "
            f"kept on CUDA, so {self.ctx.target.display} takes the other path",
        ) or self.ctx.enabled("GUARD001"):
            self.ctx.keep_cuda.update(id(n) for n in kept)
            self._leave_branch(kept, why)

    # -- code that only runs on CUDA (GUARD003) ----------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        """A library's module of Triton kernels (a module of a package that imports Triton and
        defines `@triton.jit` kernels): its code runs beside those kernels, on the GPUs they
        are written for, and the target never runs it; it is left as it is (GUARD003), its
        kernels reported by the kernel families (`porter kernels` scaffolds the target's)."""
        if not self.ctx.enabled("GUARD003") or not triton_module(self.ctx.source or b"") or not in_package(self.ctx):
            return
        first = next((s for s in node.body), None)
        if first is None:
            return
        region = CudaOnlyCode(
            first,
            "this module of Triton kernels",
            "its code runs beside its `@triton.jit` kernels, on the GPUs they are written for",
        )
        for stmt in node.body:
            self.ctx.cuda_only_code.setdefault(id(stmt), region)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._leave_unit(node, f"`def {node.name.value}`")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._leave_unit(node, f"`class {node.name.value}`")

    def _leave_unit(self, node: cst.FunctionDef | cst.ClassDef, what: str) -> None:
        """A function or class that only runs on CUDA (it runs a CUDA-only library or a CUDA
        graph on every path) is left as it is: the target never runs it."""
        if not (self._leave or self._test_file) or self.ctx.in_cuda_only_code() is not None or not self.facts.active:
            return
        why = self.facts.runs_only(node) if self._leave else None
        if why is None and self._test_file and isinstance(node, cst.FunctionDef) and node.name.value.startswith("test"):
            why = self.facts.tested(node)
        if why:
            self.ctx.cuda_only_code[id(node)] = CudaOnlyCode(node.name, what, why)

    def _leave_branch(self, kept: Sequence[cst.CSTNode], why: str) -> None:
        """The branch of an `if` that a check kept on CUDA lets run only on CUDA is left as it
        is: `if x.is_cuda and ...:` its body; `if not x.is_cuda:` (or `!= "cuda"`) its `else`,
        and with an early exit the rest of its block."""
        statements = self.ctx.current_statements
        if (
            not self._leave
            or not statements
            or type(statements[-1]) is not cst.If
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        stmt = statements[-1]
        assert isinstance(stmt, cst.If)
        ids = {id(n) for n in kept}
        senses = [_cuda_sense(o, self.ctx.qualname) if _contains(o, ids) else 0 for o in _operands(stmt.test, cst.And)]
        negative = [_cuda_sense(o, self.ctx.qualname) if _contains(o, ids) else 0 for o in _operands(stmt.test, cst.Or)]
        region = CudaOnlyCode(
            stmt.test, f"the code behind `if {self.ctx.code(stmt.test)}`", f"the check stays CUDA: {why}"
        )
        only: list[cst.CSTNode] = []
        if 1 in senses and isinstance(stmt.body, cst.IndentedBlock):
            only.extend(stmt.body.body)
        elif -1 in negative:
            if isinstance(stmt.orelse, cst.Else) and isinstance(stmt.orelse.body, cst.IndentedBlock):
                only.extend(stmt.orelse.body.body)
            elif isinstance(stmt.orelse, cst.If):
                only.append(stmt.orelse)
            if _exits_early(stmt) and len(statements) > 1:
                only.extend(_after(statements[-2], stmt))
        for s in only:
            self.ctx.cuda_only_code.setdefault(id(s), region)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        seen: set[int] = set()
        for region in self.ctx.cuda_only_code.values():
            if id(region) in seen or not region.left or region.code != "GUARD003":
                continue
            seen.add(id(region))
            said = (
                f"{region.what} only runs on CUDA ({region.why}): left as it is, since "
                f"{self.ctx.target.display} never runs it"
            )
            self.ctx.report("GUARD003", region.node, f"{said} (fixes not applied there: {_counted(region.left)})")
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "is_cuda" or self.ctx.qualname(node) is not None or not self.facts.active:
            return
        if id(node) in self.ctx.keep_cuda:
            return
        why = self.facts.guard_reason(self.ctx.current_statements, whole_function=True)
        if why:
            self._keep(node, [node], why)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`x.device.type == "cuda"`, `x.device.type in ("cuda", "xpu")` (CUDA's entry of the
        devices a kernel runs on); `str(x.device).startswith(...)` is left to the device family."""
        strings = _cuda_strings(node)
        if not strings or not self.facts.active or all(id(s) in self.ctx.keep_cuda for s in strings):
            return  # (kept already: CUDA's branch of a device switch, porter/codemods/backends.py)
        why = self.facts.guard_reason(self.ctx.current_statements, whole_function=True)
        if why:
            self._keep(node, strings, why)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`torch.cuda.is_available() and <CUDA-only check>` (or its `not ... or` mirror)."""
        if isinstance(node.operator, cst.Or):
            self._negated.update((id(node.left), id(node.right)))  # read best in parentheses too
        if self._queries:
            scan = _Queries(self.ctx.qualname, self._flags())
            cstwalk.visit(node.left, scan)
            # `IS_NVIDIA and <capability query>`, `x.is_cuda and ...`: only CUDA gets past the left
            if scan.available or self._cuda_before_query(node):
                self._after_available += 1
                self._counted.add(id(node))
        op = type(node.operator)
        operands = _operands(node.with_changes(lpar=[], rpar=[]), op)
        if len(operands) < 2:
            return
        if op is cst.And:
            self._device_beside_capability(operands)
        available = []
        for o in operands:
            inner = o.expression if isinstance(o, cst.UnaryOperation) and isinstance(o.operator, cst.Not) else o
            negated = inner is not o
            if _is_call_of(inner, self.ctx.qualname, "torch.cuda.is_available") and negated == (op is cst.Or):
                available.append(inner)
        if not available or any(id(a) in self.ctx.keep_cuda for a in available) or not self.facts.active:
            return
        rest = [o for o in operands if not any(a is o or getattr(o, "expression", None) is a for a in available)]
        why = next((w for o in rest if (w := self.facts.region_reason(o))), None)
        if why:
            self._keep(available[0], available, why)

    def _device_beside_capability(self, operands: Sequence[cst.BaseExpression]) -> None:
        """`_is_device("cuda", t.device) and _is_mslk_available() and is_sm_at_least_90()`
        (torchao's preshuffled int4): beside a question about the CUDA GPU's architecture (a
        capability query, or a name imported from the project that asks one), the `"cuda"`
        the chain tests the device against is CUDA's; the target's device never has an SM
        version. Kept, GUARD001."""
        imported = imported_cuda_only(self.ctx.settings)
        if imported:
            running = imported_running(self.ctx.settings)
            imported = {n: w for n, w in imported.items() if n not in running}  # those that only ask
        asks = next(
            (
                self.ctx.code(o)
                for o in operands
                if isinstance(o, cst.Call)
                and (
                    self.ctx.qualname(o.func) in CAPABILITY_QUERIES
                    or (isinstance(o.func, cst.Name) and o.func.value in imported)
                )
            ),
            None,
        )
        if asks is None:
            return
        strings = [
            n
            for o in operands
            for n in _walk(o)
            if isinstance(n, cst.SimpleString) and string_value(n) == "cuda" and id(n) not in self.ctx.keep_cuda
        ]
        if strings:
            self._keep(strings[0], strings, f"the same test asks `{asks}`, a question about a CUDA GPU's architecture")

    def visit_With(self, node: cst.With) -> None:
        """`with torch.cuda.device(x.device): kernel[grid](...)`: a CUDA context around a
        launch of CUDA-only code (a Triton kernel) on each run of its body is CUDA's own, left
        as it is (GUARD003): `torch.accelerator.device_index(...)` there changes nothing the
        target runs."""
        if not self._leave or self.ctx.in_cuda_only_code() is not None:
            return
        if not any(
            isinstance(i.item, cst.Call) and (self.ctx.qualname(i.item.func) or "").startswith("torch.cuda.")
            for i in node.items
        ):
            return
        if not self.facts.active or not self.facts.running or not isinstance(node.body, cst.IndentedBlock):
            return
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                value = getattr(small, "value", None)
                if not isinstance(value, cst.Call):
                    continue
                func: cst.BaseExpression = value.func
                while isinstance(func, (cst.Subscript, cst.Attribute, cst.Call)):
                    func = func.value if not isinstance(func, cst.Call) else func.func
                if isinstance(func, cst.Name) and func.value in self.facts.running:
                    what = f"`with {self.ctx.code(node.items[0].item)}`"
                    self.ctx.cuda_only_code[id(node)] = CudaOnlyCode(
                        node.items[0].item, what, f"its body runs {self.facts.running[func.value]}"
                    )
                    return

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        """`buf = torch.cuda.IntTensor([0])` then `applier(fused_optim.l2norm, buf, ...)` in the
        same block, where `fused_optim` runs CUDA-only code (a CUDA extension's kernels): the
        value is made for a CUDA kernel, so the assignment is left as it is (GUARD003)."""
        if not self._leave or self.ctx.in_cuda_only_code() is not None or not self.facts.active:
            return
        running = {n: w for n, w in self.facts.running.items() if not self._has_fallback(n)}
        if not running:
            return
        body = list(node.body)
        for at, stmt in enumerate(body):
            if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
                continue
            small = stmt.body[0]
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                continue
            name = small.targets[0].target.value
            kernel = None
            for later in body[at + 1 :]:
                if type(later) is not cst.SimpleStatementLine and _exits(later):
                    break  # `if not x.is_cuda: return -x`: a path for other devices before the kernel
                if (kernel := _kernel_taking(later, name, running)) is not None:
                    break
            if kernel is not None:
                self.ctx.cuda_only_code.setdefault(
                    id(stmt),
                    CudaOnlyCode(small.targets[0].target, f"`{name} = ...`", f"`{name}` is handed to {kernel}"),
                )

    def _has_fallback(self, name: str) -> bool:
        """Whether the module also binds `name` to something that runs no CUDA-only code
        (`multi_tensor_applier = local_multi_tensor_applier` after a failed import of
        transformer-engine's): then what it runs depends on the host. `None` is no fallback."""
        if name not in self._fallbacks:
            running = self.facts.running
            found = False
            for value in self._assignments_by_name().get(name, ()):
                if isinstance(value, cst.Name) and value.value == "None":
                    continue
                while isinstance(value, (cst.Attribute, cst.Subscript, cst.Call)):
                    value = value.func if isinstance(value, cst.Call) else value.value
                if not (isinstance(value, cst.Name) and value.value in running and value.value != name):
                    found = True
                    break
            self._fallbacks[name] = found
        return self._fallbacks[name]

    def _assignments_by_name(self) -> dict[str, list[cst.BaseExpression]]:
        """The values the module assigns to each plain name, read in one walk for every name
        `_has_fallback` asks about (a walk per name took seconds in attn-gym's 5,900-line kernels)."""
        if self._assigned is None:
            self._assigned = {}
            for n in _walk(self.ctx.module):
                if isinstance(n, cst.Assign):
                    for t in n.targets:
                        if isinstance(t.target, cst.Name):
                            self._assigned.setdefault(t.target.value, []).append(n.value)
        return self._assigned

    def visit_If(self, node: cst.If) -> None:
        """`if gemlite is None: raise ImportError(...)`: the rest of the block runs only where
        the CUDA-only package is there, so it is CUDA-only code, left as it is (GUARD003)."""
        self._imported_flag(node)
        if not self._leave or not _exits_early(node) or self.ctx.in_cuda_only_code() is not None:
            return
        test = _bare(node.test)
        name = None
        if (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal))
        ):
            if (
                isinstance(test.left, cst.Name)
                and isinstance(test.comparisons[0].comparator, cst.Name)
                and test.comparisons[0].comparator.value == "None"
            ):
                name = test.left.value
        elif (
            isinstance(test, cst.UnaryOperation)
            and isinstance(test.operator, cst.Not)
            and isinstance(test.expression, cst.Name)
        ):
            name = test.expression.value
        if name is None or not self.facts.active or name not in self.facts.running:
            return
        statements = self.ctx.current_statements
        parent = statements[-2] if len(statements) > 1 else self.ctx.module
        rest = _after(parent, node)
        if not rest:
            return
        region = CudaOnlyCode(
            node.test,
            f"the code after `if {self.ctx.code(node.test)}`",
            f"it runs only where {self.facts.running[name]} is there",
        )
        for stmt in rest:
            self.ctx.cuda_only_code.setdefault(id(stmt), region)

    def _imported_flag(self, node: cst.If) -> None:
        """`if _SUPPORTS_FLEX_ATTENTION:` where the name is imported from a module that sets it
        from CUDA's own API (`torch.cuda.is_available() and torch.cuda.get_device_capability()
        >= (7, 5)`, kept there: GUARD001): true only on CUDA, so its branch is CUDA-only code,
        left as it is (GUARD003); the target takes the `else`."""
        if not self.ctx.enabled("GUARD003") or self.ctx.in_cuda_only_code() is not None:
            return
        if not isinstance(node.body, cst.IndentedBlock):
            return
        self._predicate_branch(node)
        imported = imported_cuda_only(self.ctx.settings)
        if not imported:
            return
        running = imported_running(self.ctx.settings)
        name = next(
            (
                o.value
                for o in _operands(_bare(node.test), cst.And)
                if isinstance(o, cst.Name) and o.value in imported and o.value not in running
            ),
            None,
        )
        if name is None:
            return
        region = CudaOnlyCode(
            node.test,
            f"the code behind `if {self.ctx.code(node.test)}`",
            f"{imported[name]} is set by CUDA's own API in the module it comes from",
        )
        for stmt in node.body.body:
            self.ctx.cuda_only_code.setdefault(id(stmt), region)

    def _predicate_branch(self, node: cst.If) -> None:
        """`elif is_sagemaker_dp_enabled():`, a function (of this module or imported from the
        project) whose truth means a CUDA-only package is installed (SageMaker's smdistributed):
        its branch runs only where that package is, on CUDA, so it is CUDA-only code, left as it
        is (GUARD003). So is the branch of an `and` with such a call, or of an `or` of them."""
        if self._predicates is None:
            self._predicates = {
                **availability_predicates(self.ctx.source or b"", cuda_only_data(self.ctx.target.name)),
                **imported_predicates(self.ctx.settings),
            }
        if not self._predicates or not isinstance(node.body, cst.IndentedBlock):
            return
        test = _bare(node.test)
        asked = [
            self._predicates.get(o.func.value)
            if isinstance(o, cst.Call) and isinstance(o.func, cst.Name) and not o.args
            else None
            for o in _operands(test, cst.Or)
        ]
        why = asked[0] if all(asked) else None
        if why is None:
            why = next(
                (
                    self._predicates[o.func.value]
                    for o in _operands(test, cst.And)
                    if isinstance(o, cst.Call) and isinstance(o.func, cst.Name) and o.func.value in self._predicates
                ),
                None,
            )
        if why is None:
            return
        region = CudaOnlyCode(node.test, f"the code behind `if {self.ctx.code(node.test)}`", why)
        for stmt in node.body.body:
            self.ctx.cuda_only_code.setdefault(id(stmt), region)

    def _comprehension(self, node: cst.GeneratorExp | cst.ListComp | cst.SetComp) -> None:
        """`[torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]`:
        what the loop counts feeds a CUDA capability query, so it counts CUDA's devices (the
        target's count would hand the query devices it raises on)."""
        if not self._queries:
            return
        scan = _Queries(self.ctx.qualname)
        cstwalk.visit(node.elt, scan)
        if not scan.capability:
            return
        loop: cst.CompFor | None = node.for_in
        while loop is not None:
            calls = [
                n
                for n in _walk(loop.iter)
                if isinstance(n, cst.Call) and (self.ctx.qualname(n.func) or "").startswith("torch.cuda.")
            ]
            fresh = [c for c in calls if id(c) not in self.ctx.keep_cuda]
            if fresh:
                shown = (
                    "get_device_properties"
                    if "get_device_properties" in self.ctx.code(node.elt)
                    else "get_device_capability"
                )
                self._keep(fresh[0], fresh, f"the loop feeds `torch.cuda.{shown}`, which raises without CUDA")
            loop = loop.inner_for_in

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._comprehension(node)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._comprehension(node)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._comprehension(node)

    # -- a module that needs a CUDA-only package to be imported (GUARD004) ---------------

    def _module_needs(self) -> str | None:
        """The CUDA-only package (Helion, FlashInfer, DeepEP ...) this module imports at its top
        level, outside any `if`/`try` (importing the module needs it), and uses beyond the
        import, or None (read once per file)."""
        if self._needs is False:
            self._needs = (
                _module_needs(self.ctx.module, self.ctx.target.name, self.ctx.own_top_modules) or self._imported_needs()
            )
            if self._needs is not None and self.ctx.module is not None:
                # a module that checks the device (`if not x.is_cuda: return x + 1`) has a
                # path for other devices beside its CUDA-only code: it is ported as usual
                scan = _DeviceTests(self.ctx.imports)
                cstwalk.visit(self.ctx.module, scan)
                if scan.found:
                    self._needs = None
        return self._needs  # type: ignore[return-value]

    def _imported_needs(self) -> str | None:
        """The CUDA-only package whose kernels this module imports at its top level from the
        project's package of them (porter.analysis.cuda_only_index: `from
        colossalai.kernel.triton.x import f`) and uses, shown as `package`; None if none."""
        prefix = CudaOnlyTag.NEEDS.value + ":"
        wanted = {
            f[1]: f[3][2][len(prefix) :]
            for f in (getattr(self.ctx.settings, "flow", None) or ())
            if f[2] == CudaOnlyKind.IMPORTED and len(f[3]) > 2 and str(f[3][2]).startswith(prefix)
        }
        if not wanted or self.ctx.module is None:
            return None
        uses = _NameUses(set(wanted))
        cstwalk.visit(self.ctx.module, uses)
        return f"`{wanted[min(uses.found)]}`" if uses.found else None

    def _device_literal(self, node: cst.CSTNode, module_only: bool = False) -> None:
        """A CUDA device named in a module that needs a CUDA-only package: the module runs on
        CUDA only (the package runs nowhere else), so the device stays CUDA's; the target
        needs a path of its own beside the module. `module_only`: only for that reason (or
        ROCm's module), not for a function's or class's (a `torch.cuda` call)."""
        if (
            id(node) in self.ctx.keep_cuda
            or id(node) in self._registrations
            or self.ctx.in_cuda_only_code() is not None
        ):
            return
        package = self._module_needs()
        why = (
            f"this module imports {package} at its top level (it cannot be imported without it) and uses it, "
            f"and {package} runs only on NVIDIA GPUs"
        )
        if package is None and (rocm := _rocm_module(self.ctx.path)) is not None:
            package, why = (
                rocm,
                (
                    f"this module is ROCm's (its path names `{rocm}`), and ROCm's torch device is also called "
                    '"cuda" (AMD GPUs run on torch\'s `cuda` device)'
                ),
            )
        if package is None and module_only:
            return
        if package is None:
            function = next((f for f in reversed(self.ctx.current_statements) if isinstance(f, cst.FunctionDef)), None)
            if function is not None and id(function) not in self._class_needs:
                self._class_needs[id(function)] = _calls_nccl(function) or _shares_through_cuda_ipc(
                    function, self.ctx.imports
                )
            cls = next((c for c in reversed(self.ctx.current_statements) if isinstance(c, cst.ClassDef)), None)
            if cls is not None and id(cls) not in self._class_needs:
                self._class_needs[id(cls)] = _class_needs(cls, self.ctx.target.name, self.ctx.code) or (
                    (_keeps_cuda_only(cls, self.facts.running) or self._serves_cuda_only(cls))
                    if self.facts.active
                    else None
                )
            found = (self._class_needs[id(function)] if function is not None else None) or (
                self._class_needs[id(cls)] if cls is not None else None
            )
            if found is None:
                return
            why = found
        self.ctx.keep_cuda.add(id(node))
        shown = (
            f"`{self.ctx.code(node.func)}()`"
            if module_only and isinstance(node, cst.Call)
            else "`.cuda()`"
            if isinstance(node, cst.Call)
            else f"`{self.ctx.code(node)}`"
        )
        t = self.ctx.target.display
        self.ctx.report(
            "GUARD004",
            node,
            f"{shown} stays CUDA's: {why}, so this is CUDA's code; {t} needs a path of its own beside it "
            "(the project's portable implementation, or a kernel for the target)",
            applicability=Applicability.MANUAL,
        )

    def _serves_cuda_only(self, cls: cst.ClassDef) -> str | None:
        """Why `cls` serves CUDA-only code alone, or None: the module binds its instances to
        module-level names (`g_workspace = SM100Workspace(...)`), and each is read only by
        code that only runs on CUDA, or kept by a class in `self.<attr>` (`self._workspace =
        g_workspace`) that only such methods of it read (`forward_mqa` hands
        `self._workspace.get_buf()` to a CUDA-only op). What the class allocates is for that
        code, on CUDA."""
        module = self.ctx.module
        name = cls.name.value
        instances = _instances(module, cls, name)
        if instances is None:
            return None
        reads = self._instance_reads(module, instances)
        if reads is None:
            return None
        found, kept = reads
        for owner, attr in kept:
            readers = _self_attr_readers(owner, attr)
            if not readers:
                return None
            for method in readers:
                why = self.facts.runs_only(method)
                if why is None:
                    return None
                found = found or f"`{owner.name.value}.{method.name.value}` (through `self.{attr}`), which {why}"
        if found is None:
            return None
        return f"class `{name}` only serves CUDA-only code: its instances are used only by {found}"

    def _instance_reads(
        self, module: cst.Module, instances: list[tuple[cst.CSTNode, str]]
    ) -> tuple[str | None, list[tuple[cst.ClassDef, str]]] | None:
        """Where the instances are read, for _serves_cuda_only: (the first function that only
        runs on CUDA and reads one, the (class, attribute) pairs that keep one in
        `self.<attr>`); None where one is read anywhere else."""
        found: str | None = None
        kept: list[tuple[cst.ClassDef, str]] = []
        for statement, instance in instances:
            reads = _CallSites(instance)
            module.visit(reads)
            for stack in reads.found.get(instance, ()):
                if stack and stack[-1] is statement:
                    continue
                function = next((s for s in reversed(stack) if isinstance(s, cst.FunctionDef)), None)
                if function is not None and (why := self.facts.runs_only(function)):
                    found = found or f"`{function.name.value}`, which {why}"
                    continue
                holder = _self_attr_bound(stack, instance)
                if holder is None:
                    return None
                kept.append(holder)
        return found, kept

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "cuda" in node.value and cuda_device_index(string_value(node))[0]:
            self._device_literal(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        parts = node.parts
        if parts and isinstance(parts[0], cst.FormattedStringText) and parts[0].value.startswith("cuda:"):
            self._device_literal(node)

    def visit_Call(self, node: cst.Call) -> None:
        """`if torch.cuda.is_available(): <CUDA-only code>` keeps its CUDA test."""
        self._note_registrations(node)
        self._device_call(node)
        if id(node) in self.ctx.keep_cuda or not _is_call_of(node, self.ctx.qualname, "torch.cuda.is_available"):
            return
        if self._asked_again(node) or self._attribute_flag(node):
            return
        statements = self.ctx.current_statements
        if self._host_backend_branch(node, statements):
            return
        if not self.facts.active:
            return
        why = self.facts.guard_reason(statements, whole_function=False)
        flag = _flag_set_here(statements, node, self._flags())
        if why is None and flag is not None:
            why = self.facts.flag_reason(statements, flag)
        if why:
            self._keep(node, [node], why)

    def _host_backend_branch(self, node: cst.Call, statements: Sequence[cst.CSTNode]) -> bool:
        """`if torch.cuda.is_available(): pg._register_backend(torch.device("cuda"), GLOO, gloo)`:
        Gloo takes CPU and CUDA tensors only, so the registration is CUDA's and the check stays
        CUDA's; its body is left as it is (porter/codemods/host_backends.py)."""
        stmt = statements[-1] if statements else None
        if not (isinstance(stmt, cst.If) and stmt.test is node and isinstance(stmt.body, cst.IndentedBlock)):
            return False
        backends = {host_backend_for_cuda(s) for s in stmt.body.body}
        if None in backends or not backends:
            return False
        named = ", ".join(sorted(f"`{b}`" for b in backends if b))
        why = (
            f"it registers {named} for CUDA's device, and {named} takes CPU and CUDA tensors only "
            "(torch's `Backend.backend_capability`): a process group on the target needs its own backend there"
        )
        self._keep(node, [node], why)
        if id(node) in self.ctx.keep_cuda:
            region = CudaOnlyCode(
                stmt.test, f"the code behind `if {self.ctx.code(stmt.test)}`", f"the check stays CUDA: {why}"
            )
            for s in stmt.body.body:
                self.ctx.cuda_only_code.setdefault(id(s), region)
        return True

    def _note_registrations(self, node: cst.Call) -> None:
        """The nodes of a kernel registration's arguments (`op.register_kernel("cuda")`,
        `custom_op(..., device_types="cuda")`): the kernels family's, not device literals."""
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _REGISTERS:
            self._registrations.update(id(n) for a in node.args if a.keyword is None for n in _walk(a.value))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device_types":
                # `custom_op(..., device_types="cuda")`: a kernel registration, the kernels
                # family's (KERN005)
                self._registrations.update(id(n) for n in _walk(arg.value))

    def _device_call(self, node: cst.Call) -> None:
        """A call that is CUDA's device in code only CUDA runs: `x.cuda()`, or a `torch.cuda.*`
        call in a module that runs only on CUDA (see _device_literal)."""
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "cuda"
            and self.ctx.qualname(node.func) is None
            and not node.args
        ):
            self._device_literal(node)  # `x.cuda()`
        elif (self.ctx.qualname(node.func) or "").startswith("torch.cuda."):
            # `torch.cuda.current_stream()` in a module that runs only on CUDA (or ROCm's): that
            # module's CUDA code, the same on CUDA after a rewrite, never run on the target
            self._device_literal(node, module_only=True)

    def _attribute_flag(self, node: cst.Call) -> bool:
        """`self.gpu_available = torch.cuda.is_available()` followed, in the same block, by
        `if self.gpu_available:` under which a CUDA-only package is imported (Composer's system
        metrics monitor: `import pynvml`, then `pynvml.nvmlInit()`): the attribute is that
        package's guard, and keeps CUDA's test (GUARD001). True when so."""
        statements = self.ctx.current_statements
        here = statements[-1] if statements else None
        if not isinstance(here, cst.SimpleStatementLine):
            return False
        target = next(
            (
                dotted(small.targets[0].target)
                for small in here.body
                if isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Attribute)
                and any(o is node for o in _operands(small.value, cst.And))
            ),
            None,
        )
        if not target:
            return False
        parent = statements[-2] if len(statements) > 1 else self.ctx.module
        packages = cuda_only_modules(self.ctx.target.name)
        for stmt in _after(parent, here):
            if not isinstance(stmt, cst.If) or dotted(stmt.test) != target:
                continue
            package = next(
                (
                    p
                    for n in _walk(stmt.body)
                    if isinstance(n, (cst.Import, cst.ImportFrom)) and (p := _package_of(n, packages))
                ),
                None,
            )
            if package is not None:
                self._keep(node, [node], f"through `{target}`, under which `{package}` is imported")
                return True
        return False

    def _asked_again(self, node: cst.Call) -> bool:
        """`torch.cuda.is_available()` inside a block entered on a kept `torch.cuda.is_available()`
        (accelerate's Colab launch: `elif in_colab and (not torch.cuda.is_available() or
        get_gpu_info()[1] < 2):` then `if torch.cuda.is_available(): print("... one GPU")`): the
        same question about CUDA, asked again, keeps the answer the enclosing test kept. True when so."""
        for stmt in self.ctx.current_statements[:-1]:
            if not isinstance(stmt, (cst.If, cst.While)):
                continue
            kept = next(
                (
                    n
                    for n in _walk(stmt.test)
                    if id(n) in self.ctx.keep_cuda
                    and isinstance(n, cst.Call)
                    and _is_call_of(n, self.ctx.qualname, "torch.cuda.is_available")
                ),
                None,
            )
            if kept is None:
                continue
            if self.ctx.report(
                "GUARD001",
                node,
                f"`{self.ctx.code(node)}` asks again what the enclosing `{one_line(self.ctx.code(stmt.test), 60)}` "
                "asked and kept on CUDA: kept with it, so the two answers agree",
            ) or self.ctx.enabled("GUARD001"):
                self.ctx.keep_cuda.add(id(node))
                return True
        return False

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        if id(original) in self._counted:
            self._after_available -= 1
        return updated

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._negated.add(id(node.expression))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`<capability check> if is_cuda else False`, where `is_cuda = torch.cuda.is_available()
        and ...`: the arm the test lets only CUDA reach is behind it already, as the body of an
        `if` whose test asks torch.cuda.is_available() is (`_inside_available_test`)."""
        if not self._queries:
            return
        test, arm = _bare(node.test), node.body
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, arm = _bare(test.expression), node.orelse
        flags = self._flags()
        if any(
            (isinstance(o, cst.Name) and o.value in flags)
            or _is_call_of(o, self.ctx.qualname, "torch.cuda.is_available")
            for o in _operands(test, cst.And)
        ):
            self._behind_available.update(id(n) for n in _walk(arm) if isinstance(n, cst.Comparison))

    def _inside_available_test(self) -> bool:
        for stmt in self.ctx.current_statements:
            if isinstance(stmt, (cst.If, cst.While)):
                known = self._tests.get(id(stmt))
                if known is None:
                    scan = _Queries(self.ctx.qualname, self._flags())
                    cstwalk.visit(stmt.test, scan)
                    known = self._tests[id(stmt)] = scan.available
                if known:
                    return True
        return False

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison):
        """`torch.cuda.get_device_capability()[0] >= 8` raises where there is no CUDA: behind
        `torch.cuda.is_available() and` it is false there, so the target takes the other path."""
        if not self._queries:
            return updated
        scan = _Queries(self.ctx.qualname)
        cstwalk.visit(original, scan)
        if (
            not scan.capability
            or scan.available
            or self._after_available
            or id(original) in self._behind_available
            or self._inside_available_test()
            or self._only_cuda_here()
            or self._called_only_on_cuda()
        ):
            return updated
        wrapper = self._cuda_wrapper(original)
        if wrapper is not None:
            self.ctx.report(
                "GUARD003",
                original,
                f"capability check `{self.ctx.code(original)}` stays as it is: {wrapper}, with no path for another "
                f"device, so only CUDA runs it ({self.ctx.target.display} never calls it)",
            )
            return updated
        available = cst.Call(func=self.ctx.ref("torch.cuda.is_available"))
        self.ctx.keep_cuda.add(id(available))
        inner = updated.with_changes(lpar=[], rpar=[])
        new = cst.BooleanOperation(left=available, operator=cst.And(), right=inner)
        if original.lpar:
            new = new.with_changes(lpar=original.lpar, rpar=original.rpar)
        elif id(original) in self._negated:
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.ctx.supersede(original)
        if self.ctx.report(
            "GUARD002",
            original,
            f"capability check `{self.ctx.code(original)}` raises without CUDA: behind "
            f"`torch.cuda.is_available() and` it is false on {self.ctx.target.display}, which takes the other path",
            replacement=new,
        ):
            return new
        return updated


def _rocm_module(path: str) -> str | None:
    """The part of `path` that names AMD's ROCm (a folder `rocm/`, a module `rocm_aiter_moe.py`:
    a word of its name between `_`, `-` or `.`), or None. Such a module is ROCm's code, and ROCm's
    torch device is also `cuda`: its "cuda" is AMD's GPU, not NVIDIA's and not a target's."""
    for part in path.replace("\\", "/").removeprefix("./").split("/"):
        stem = part[:-3] if part.endswith(".py") else part
        if any(word in ROCM_WORDS for word in re.split(r"[_.\-]+", stem.lower())):
            return part
    return None


def _module_needs(module: cst.Module | None, target: str, own: frozenset[str] = frozenset()) -> str | None:
    """The CUDA-only third-party package (porter.config.cuda_packages) that `module` imports
    with a statement of its own body (not under `if`/`try`: importing the module needs it) and
    whose names it uses elsewhere (a kernel decorator, a call), shown as `package`; None if none.
    A file that only imports it (for a flag) is not such a module, nor one whose import finds
    the project's own module of that name (`own`: `cuda.py` beside it)."""
    if module is None:
        return None
    packages = [p for p in cuda_only_modules(target) if p.split(".")[0] not in own]
    bound: dict[str, str] = {}  # local name -> the package
    skipped = _bind_top(module, packages, bound)
    if bound:
        uses = _NameUses(set(bound))
        cstwalk.visit(module, uses)
        if uses.found:
            return f"`{bound[min(uses.found)]}`"
    return f"`{skipped}`" if skipped else None


def _bind_top(module: cst.Module, packages: Sequence[str], bound: dict[str, str]) -> str | None:
    """The names the module's own top-level statements bind to one of `packages`, into `bound`;
    and the package of a bare `pytest.importorskip("pkg")` among them (the first), if any."""
    skipped = None
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                _bind_import(small, packages, bound)
            elif (
                isinstance(small, cst.ImportFrom)
                and not small.relative
                and small.module is not None
                and not isinstance(small.names, cst.ImportStar)
            ):
                _bind_from_import(small.module, small.names, packages, bound)
            elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name) and (package := _importorskip(small.value, packages)):
                    bound[target.value] = package
            elif isinstance(small, cst.Expr):
                skipped = skipped or _importorskip(small.value, packages)
    return skipped


def _importorskip(call: cst.BaseExpression, packages: Sequence[str]) -> str | None:
    """The CUDA-only package of `pytest.importorskip("pkg")`, bound to a name or not (pytest: the
    call skips the whole module where the package cannot be imported, as an `import` of it fails
    there; thunder's test_cudnn_executor.py binds `cudnn`, test_transformer_engine_v1_executor.py
    binds nothing): the module runs only where the package is, on CUDA (for _module_needs)."""
    if not isinstance(call, cst.Call) or dotted(call.func) != "pytest.importorskip":
        return None
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "modname"), None)
    if arg is None and call.args and call.args[0].keyword is None:
        arg = call.args[0]
    name = (string_value(arg.value) if arg is not None else None) or ""
    if not name:
        return None
    return next((p for p in packages if name == p or name.startswith(p + ".")), None)


def _bind_import(small: cst.Import, packages: Sequence[str], bound: dict[str, str]) -> None:
    """`import pkg.sub [as a]` of a CUDA-only package: the name it binds (`a`, else `pkg`) ->
    the package, into `bound` (for _module_needs)."""
    for alias in small.names:
        name = dotted(alias.name) or ""
        package = next((p for p in packages if name == p or name.startswith(p + ".")), None)
        if package is not None:
            local = alias.evaluated_alias or name.split(".")[0]
            bound[local] = package


def _bind_from_import(
    module: cst.Attribute | cst.Name,
    names: Sequence[cst.ImportAlias],
    packages: Sequence[str],
    bound: dict[str, str],
) -> None:
    """`from pkg.mod import n [as a]` (absolute, not a star) where the module or `pkg.mod.n` is
    CUDA-only: the name it binds -> the package, into `bound` (for _module_needs)."""
    name = dotted(module) or ""
    for alias in names:
        # `from lmcache.v1.gpu_connector import VLLMPagedMemGPUConnectorV2`: the data may
        # name one class of a package that has other devices' paths beside it
        imported = dotted(alias.name) or ""
        package = _covering(packages, name) or _covering(packages, f"{name}.{imported}")
        if package is not None:
            bound[alias.evaluated_alias or imported] = package


# `dev.type != "cuda"`: what an `__init__` that demands CUDA tests (_class_needs)
_OFF_CUDA = re.compile(rb"!=\s*[\"']cuda[\"']")
# `assert "cuda" in device`, `assert dev.type == "cuda"`: what an `__init__` that demands CUDA asserts
_ASSERTS_CUDA = re.compile(rb"assert\b[^\n]*(?:[\"']cuda[\"']\s+in\b|==\s*[\"']cuda[\"'])")

# `op.register_kernel("cuda")`, `lib.impl(name, fn, "CUDA")`: the device a kernel is registered for
_REGISTERS = frozenset({"register_kernel", "impl", "register_fake", "register_autocast"})


def _package_of(node: cst.Import | cst.ImportFrom, packages: Sequence[str]) -> str | None:
    """The CUDA-only package an import statement imports (from), if any."""
    if isinstance(node, cst.Import):
        names = [dotted(a.name) or "" for a in node.names]
    elif node.relative or node.module is None:
        return None
    else:
        module = dotted(node.module) or ""
        names = [module]
        if not isinstance(node.names, cst.ImportStar):
            names += [f"{module}.{dotted(a.name) or ''}" for a in node.names]
    return next((p for n in names if (p := _covering(packages, n)) is not None), None)


def _covering(packages: Sequence[str], name: str) -> str | None:
    """The entry of `packages` that `name` is (or is under), if any."""
    return next((p for p in packages if name == p or name.startswith(p + ".")), None)


def _class_needs(cls: cst.ClassDef, target: str, code) -> str | None:
    """Why `cls` is CUDA's class, or None: a method imports a CUDA-only third-party package as
    a statement of its own body (not under `if`/`try`: a DeepEP all-to-all manager), or its
    `__init__` raises unless its device is CUDA's (`if dev.type != "cuda": raise ...`: a CUDA
    virtual-memory buffer). `code` prints a node."""
    packages = cuda_only_modules(target)
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    name = cls.name.value
    for method in body:
        if not isinstance(method, cst.FunctionDef) or not isinstance(method.body, cst.IndentedBlock):
            continue
        why = _method_needs(method, method.body, name, packages, code)
        if why is None and method.name.value == "__init__":
            why = _init_asserts_cuda(method, name, code)
        if why is not None:
            return why
    return None


def _method_needs(
    method: cst.FunctionDef, block: cst.IndentedBlock, name: str, packages: Sequence[str], code
) -> str | None:
    """For _class_needs, a statement of `method`'s own body that makes class `name` CUDA's: an
    import of a CUDA-only package, or (in `__init__`) an `if` that raises off CUDA."""
    for stmt in block.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and (p := _package_of(small, packages)):
                    return (
                        f"class `{name}` imports `{p}` in its methods (it is `{p}`'s class), and `{p}` runs only on "
                        "NVIDIA GPUs"
                    )
        elif (
            method.name.value == "__init__"
            and isinstance(stmt, cst.If)
            and _raises(stmt.body)
            and _cuda_sense(stmt.test, lambda n: dotted(n)) == -1
        ):
            return f"the `__init__` of class `{name}` raises unless its device is CUDA's (`if {code(stmt.test)}`)"
    return None


def _init_asserts_cuda(method: cst.FunctionDef, name: str, code) -> str | None:
    """For _class_needs, an assertion anywhere in `__init__` that its device is CUDA's, with a
    message that says CUDA."""
    for n in _walk(method.body):
        if (
            isinstance(n, cst.Assert)
            and n.msg is not None
            and _SAYS_CUDA.search(code(n.msg))
            and _cuda_sense(n.test, lambda x: dotted(x)) == 1
        ):
            # `assert "cuda" in device, "only cuda devices are supported"` (Megatron's
            # NCCL memory-pool allocator)
            return f"the `__init__` of class `{name}` asserts its device is CUDA's (`assert {code(n.test)}`)"
    return None


# the message of an assertion that demands CUDA
_SAYS_CUDA = re.compile(r"(?i)\bcuda\b")
# a name of NCCL's C API (`ncclCommProperties`, `ncclGetUniqueId`): NCCL (and ROCm's RCCL, which
# keeps its names) runs on torch's `cuda` device only
_NCCL_C_NAME = re.compile(r"nccl[A-Z]\w*")
_NCCL_C_BYTES = re.compile(rb"\bnccl[A-Z]")


def _calls_nccl(function: cst.FunctionDef) -> str | None:
    """Why `function` is NCCL's code, or None: it uses NCCL's C API directly (through ctypes,
    `from .pynccl_wrapper import ncclCommProperties`), so the device it names is the one its
    NCCL communicator runs on."""
    for n in _walk(function.body):
        name = n.value if isinstance(n, cst.Name) else n.attr.value if isinstance(n, cst.Attribute) else None
        if name is not None and _NCCL_C_NAME.fullmatch(name):
            return (
                f"`def {function.name.value}` calls NCCL's C API directly (`{name}`), and NCCL runs on CUDA's "
                "device only"
            )
    return None


# torch.multiprocessing's reductions that share a device tensor with another process: a tensor's
# storage on a device is shared only as CUDA's IPC handle (`storage._share_cuda_()`, rebuilt by
# rebuild_cuda_tensor); other devices' storages take the CPU path, which cannot share them
_CUDA_IPC = ("torch.multiprocessing.reductions.reduce_tensor", "torch.multiprocessing.reductions.rebuild_cuda_tensor")
# CUDA's IPC runtime calls by name (`cudaIpcGetMemHandle` through ctypes or cupy)
_CUDA_IPC_C_NAME = re.compile(r"cudaIpc[A-Z]\w*")
_CUDA_IPC_BYTES = re.compile(rb"\breduce_tensor\b|\brebuild_cuda_tensor\b|\bcudaIpc[A-Z]")


def _shares_through_cuda_ipc(function: cst.FunctionDef, imports: ImportTable) -> str | None:
    """Why `function` is CUDA IPC's code, or None: it exports or rebuilds tensors through
    torch.multiprocessing's CUDA IPC (`reduce_tensor`, `rebuild_cuda_tensor`, imported at the
    top of the module or in the function) or calls CUDA's IPC runtime (`cudaIpc*`), so the
    device of the tensors it shares is CUDA's: no target shares device memory that way."""
    local = ImportTable()
    for n in _walk(function.body):
        if isinstance(n, (cst.Import, cst.ImportFrom)):
            local.add(n)
    for n in _walk(function.body):
        if isinstance(n, cst.Call):
            callee = dotted(n.func) or ""
            if (local.qualify(callee) or imports.qualify(callee)) in _CUDA_IPC:
                return (
                    f"`def {function.name.value}` shares tensors with another process through CUDA IPC "
                    f"(`{callee}`: torch.multiprocessing shares a device tensor's memory only as a CUDA IPC handle)"
                )
        name = n.value if isinstance(n, cst.Name) else None
        if name is not None and _CUDA_IPC_C_NAME.fullmatch(name):
            return f"`def {function.name.value}` calls CUDA's IPC runtime (`{name}`), which shares CUDA memory only"
    return None


def _keeps_cuda_only(cls: cst.ClassDef, running: dict[str, str]) -> str | None:
    """Why `cls` is CUDA's class, or None: a method keeps what a CUDA-only function returns in
    an attribute (`self._m2n = import_m2n()`, where `import_m2n` imports NCCL's M2N library),
    so the class drives that CUDA-only code wherever it uses the attribute."""
    for n in _walk(cls.body):
        if (
            isinstance(n, cst.Assign)
            and isinstance(n.value, cst.Call)
            and isinstance(n.value.func, cst.Name)
            and n.value.func.value in running
            and any(_self_attr_of(t.target) for t in n.targets)
        ):
            attr = next(a for t in n.targets if (a := _self_attr_of(t.target)) is not None)
            return (
                f"class `{cls.name.value}` keeps what `{n.value.func.value}()` returns in `self.{attr.attr.value}`, "
                f"and {running[n.value.func.value]} is CUDA-only code"
            )
    return None


def _instances(module: cst.Module, cls: cst.ClassDef, name: str) -> list[tuple[cst.CSTNode, str]] | None:
    """For _serves_cuda_only, each use of class `name` outside itself as (the module-level
    statement, the name it binds to `name(...)`); None where a use is anything else."""
    uses = _CallSites(name)
    module.visit(uses)
    instances = []
    for stack in uses.found.get(name, ()):
        if stack and stack[-1] is cls:
            continue  # its own name
        target = _bound_by_call(stack, name) if len(stack) == 1 else None
        if target is None:
            return None
        instances.append((stack[-1], target))
    return instances


def _bound_by_call(stack: list[cst.CSTNode], name: str) -> str | None:
    """The module-level name that the statement at the end of `stack` binds to `name(...)`
    (`g_workspace = SM100Workspace(...)`), or None."""
    stmt = stack[-1]
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and isinstance(small.value, cst.Call)
        and isinstance(small.value.func, cst.Name)
        and small.value.func.value == name
    ):
        return small.targets[0].target.value
    return None


def _self_attr_bound(stack: list[cst.CSTNode], name: str) -> tuple[cst.ClassDef, str] | None:
    """(the class, the attribute) where the statement at the end of `stack` is `self.<attr> =
    name` in a method, else None."""
    stmt = stack[-1] if stack else None
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or len(stack) < 3:
        return None
    small = stmt.body[0]
    function, owner = stack[-2], stack[-3]
    if (
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value == name
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Attribute)
        and _is_self_attr(small.targets[0].target)
        and isinstance(function, cst.FunctionDef)
        and isinstance(owner, cst.ClassDef)
    ):
        return owner, small.targets[0].target.attr.value
    return None


def _self_attr_readers(cls: cst.ClassDef, attr: str) -> list[cst.FunctionDef]:
    """The methods of `cls` that read `self.<attr>` (not only set it)."""
    out = []
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for method in body:
        if not isinstance(method, cst.FunctionDef):
            continue
        targets = {id(t.target) for n in _walk(method) if isinstance(n, cst.Assign) for t in n.targets}
        if any(
            isinstance(n, cst.Attribute) and _is_self_attr(n) and n.attr.value == attr and id(n) not in targets
            for n in _walk(method)
        ):
            out.append(method)
    return out


def _self_attr_of(target: cst.BaseExpression) -> cst.Attribute | None:
    """`self.x` for a target `self.x` or `self.x[key]` (an entry of a cache the class keeps)."""
    if isinstance(target, cst.Subscript):
        target = target.value
    return target if isinstance(target, cst.Attribute) and _is_self_attr(target) else None


def _raises(body: cst.BaseSuite) -> bool:
    last = body.body[-1] if body.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, cst.Raise)


class _NameUses(cst.CSTVisitor):
    """The names of `wanted` used outside import statements."""

    def __init__(self, wanted: set[str]) -> None:
        super().__init__()
        self.wanted = wanted
        self.found: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        cstwalk.visit(node.value, self)  # `helion.Settings`: `helion`, not an attribute named like it
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.wanted:
            self.found.add(node.value)
