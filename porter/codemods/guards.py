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

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from porter.codemods.family import Family, string_value
from porter.pipeline.cuda_only_index import KIND as IMPORTED  # the kind of the flow facts naming a CUDA-only import
from porter.pipeline.cuda_only_index import TOKENS  # the bytes that make the analysis worth running on a file
from porter.pipeline.resolve import ImportTable, dotted, iter_statements
from porter.config.ruledata import load_toml


def imported_cuda_only(settings) -> dict[str, str]:
    """Local name -> why, for the names this file imports from CUDA-only code elsewhere in
    the project (found per run by porter.pipeline.cuda_only_index)."""
    return {f[1]: f[3][0] for f in (getattr(settings, "flow", None) or ()) if f[2] == IMPORTED and f[3]}


@dataclass(frozen=True)
class CudaOnlyData:
    modules: tuple[str, ...]
    apis: tuple[str, ...]
    builders: frozenset[str]

    def why(self, qual: str | None) -> str | None:
        """Why the qualified name `qual` is CUDA-only, or None."""
        if not qual:
            return None
        for api in self.apis:
            if qual == api or qual.startswith(api + "."):
                return f"`{api}`"
        for mod in self.modules:
            if qual == mod or qual.startswith(mod + "."):
                return f"`{mod}`"
        return None


@lru_cache(maxsize=1)
def cuda_only_data() -> CudaOnlyData:
    table = load_toml("guards.toml").get("cuda_only", {})
    return CudaOnlyData(
        modules=tuple(table.get("modules", ())),
        apis=tuple(table.get("apis", ())),
        builders=frozenset(table.get("extension_builders", ())),
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
    propagates: bool = True  # whether using its name makes the user CUDA-only
    bound_in: str | None = None  # the function that binds a module-level name (`global x`)
    entries: list[_Unit] = field(default_factory=list)  # a class's `__init__` and `__call__`


class _Scan(cst.CSTVisitor):
    """One walk: names each unit uses, and the CUDA-only modules/APIs it touches."""

    def __init__(self, imports: ImportTable, data: CudaOnlyData, root: _Unit | None = None) -> None:
        super().__init__()
        self.imports = imports
        self.data = data
        self.stack: list[_Unit] = [root] if root is not None else []
        self.units: dict[int, _Unit] = {}
        self.top: list[_Unit] = []
        self.extensions: dict[str, str] = {}  # module-level names bound to a built extension
        self._attr_parts: set[int] = set()
        self._in_def = 0
        self._globals: list[set[str]] = []  # per enclosing function: the names it declares `global`

    def _open(self, unit: _Unit) -> None:
        self.units[id(unit.node)] = unit
        if self._in_def == 0:
            self.top.append(unit)
        self.stack.append(unit)

    def _mark(self, why: str) -> None:
        for unit in self.stack:
            if unit.why is None:
                unit.why = why

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        unit = _Unit(node, (node.name.value,))
        if self.stack and isinstance(self.stack[-1].node, cst.ClassDef) and node.name.value in _ENTRIES:
            self.stack[-1].entries.append(unit)
        self._open(unit)
        self._in_def += 1
        self._globals.append(set())
        self._attr_parts.add(id(node.name))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._in_def -= 1
        self._globals.pop()
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
        self._open(_Unit(node, names))

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

    def leave_Assign(self, node: cst.Assign) -> None:
        if self.stack and self.stack[-1].node is node:
            self.stack.pop()

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            why = self.data.why(dotted(alias.name))
            if why:
                self._mark(f"imports {why}")
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None:
            return False
        module = dotted(node.module) or ""
        why = self.data.why(module)
        if why is None and not isinstance(node.names, cst.ImportStar):
            why = next((w for a in node.names if (w := self.data.why(f"{module}.{dotted(a.name)}"))), None)
        if why:
            self._mark(f"imports {why}")
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attr_parts.add(id(node.attr))
        if id(node) in self._attr_parts:
            return
        value = node.value
        while isinstance(value, cst.Attribute):
            self._attr_parts.add(id(value))
            value = value.value
        if self.stack:
            why = self.data.why(self.imports.qualify(dotted(node) or ""))
            if why:
                self._mark(f"uses {why}")

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._attr_parts.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) in self._attr_parts or not self.stack:
            return
        for unit in self.stack:
            unit.refs.add(node.value)
        if node.value in self.imports.names:
            why = self.data.why(self.imports.qualify(node.value))
            if why:
                self._mark(f"uses {why}")


class CudaOnly:
    """What in one file is CUDA-only, and why."""

    def __init__(self, module: cst.Module | None, imports: ImportTable, imported: dict[str, str] | None = None) -> None:
        self.imports = imports
        self.data = cuda_only_data()
        self.names: dict[str, str] = {}  # module-level name -> why it is CUDA-only
        self._units: dict[int, _Unit] = {}
        self._module = module
        self._calls: dict[str, list[list[cst.CSTNode]]] | None = None  # see _call_sites
        if module is None:
            return
        scan = _Scan(imports, self.data)
        module.visit(scan)
        self._units = scan.units
        for local, qual in imports.names.items():
            why = self.data.why(qual)
            if why:
                self.names[local] = f"`{local}`" if why == f"`{local}`" else f"`{local}` from {why}"
        self.names.update(scan.extensions)
        self.names.update(imported or {})
        changed = True
        while changed:
            changed = False
            for unit in scan.top:
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

    def unit_reason(self, node: cst.CSTNode) -> str | None:
        """Why the function/class `node` (from this module's tree) is CUDA-only."""
        unit = self._units.get(id(node))
        return self._why(unit) if unit is not None else None

    def name_reason(self, name: str) -> str | None:
        return self.names.get(name)

    def region_reason(self, node: cst.CSTNode) -> str | None:
        """Why the code in `node`'s subtree touches CUDA-only code."""
        unit = _Unit(node, ())
        node.visit(_Scan(self.imports, self.data, root=unit))
        return self._why(unit)

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
        if why is None and function is not None and id(function) not in _seen and _decides_result(here):
            why = self._caller_reason(statements, function, _seen | {id(function)})
        return why

    def _local_reason(self, here: cst.CSTNode, function: cst.FunctionDef | None, whole_function: bool) -> str | None:
        if isinstance(here, (cst.If, cst.While)):
            why = self.region_reason(here)
            if why or not _exits_early(here) or function is None:
                return why
            return self.unit_reason(function)
        if isinstance(here, cst.SimpleStatementLine):
            if whole_function and function is not None:
                return self.unit_reason(function)
            return self.region_reason(here)
        return None

    def _caller_reason(self, statements: list[cst.CSTNode], function: cst.FunctionDef, seen: frozenset[int]) -> str | None:
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
        scope.visit(uses)
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
                self._module.visit(sites)
            self._calls = sites.found
        return self._calls


_DECIDES = (cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef)


class _CallSites(cst.CSTVisitor):
    """Each call of a name (`f(...)`) or of a method on self/cls (`self.f(...)`), or each
    use of one `name`, with its enclosing statements as the rewrite sees them
    (`ctx.current_statements`)."""

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
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
                key = "self." + func.attr.value
            if key is not None:
                self.found.setdefault(key, []).append(list(self.stack))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, _DECIDES):
            self.stack.pop()


def _decides_result(here: cst.CSTNode) -> bool:
    """Whether a check in `here` gives its function's result: `return <check>`, or
    `if <check>: return True` (or False)."""
    if isinstance(here, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Return) and s.value is not None for s in here.body)
    if isinstance(here, cst.If):
        body = here.body.body
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine):
            last = last.body[-1]
        return isinstance(last, cst.Return) and isinstance(last.value, cst.Name) and last.value.value in ("True", "False")
    return False


def _named(name: str, unit: _Unit, used: str | None) -> str:
    """`name` and why it is CUDA-only: its unit's own reason, or the CUDA-only name it uses."""
    if unit.bound_in:
        return f"`{name}` (set in `{unit.bound_in}`, which {unit.why or f'uses {used}'})"
    return f"`{name}` ({unit.why})" if unit.why else f"`{name}` → {used}"


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
        wanted = any(t in ctx.source for t in TOKENS) or bool(imported) if ctx.source else True
        facts = CudaOnly(ctx.module if wanted else None, ctx.imports, imported)
        ctx._cuda_only = facts
    return facts


def _available_flags(scope: cst.Module | cst.FunctionDef, qualname) -> set[str]:
    """Names `scope` assigns a `torch.cuda.is_available()` test to (alone or first in an
    `and` chain): `ok = torch.cuda.is_available()`, `is_rocm = torch.cuda.is_available() and ...`."""
    flags = set()
    for stmt in iter_statements(scope.body, into_defs=False):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                if any(_is_call_of(o, qualname, "torch.cuda.is_available") for o in _operands(small.value, cst.And)):
                    flags.add(small.targets[0].target.value)
    return flags


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
        return super().wanted(ctx, source) and (any(t in source for t in TOKENS) or bool(imported_cuda_only(ctx.settings)))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._facts: CudaOnly | None = None
        self._queries = not ctx.source or b"get_device_capability" in ctx.source or b"get_device_properties" in ctx.source
        self._after_available = 0  # inside an `and`/`or` chain that asks torch.cuda.is_available()
        self._counted: set[int] = set()
        self._negated: set[int] = set()  # operands of `not` (and of `or`): a new `and` gets parentheses
        self._tests: dict[int, bool] = {}  # id(if/while) -> its test asks torch.cuda.is_available()
        self._flag_sets: dict[int, frozenset[str]] = {}  # id(function or module) -> its flags

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

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "is_cuda" or self.ctx.qualname(node) is not None or not self.facts.active:
            return
        if id(node) in self.ctx.keep_cuda:
            return
        why = self.facts.guard_reason(self.ctx.current_statements, whole_function=True)
        if why:
            self._keep(node, [node], why)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`x.device.type == "cuda"`, `str(x.device).startswith(...)` is left to the device family."""
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        strings = [s for s in sides if (string_value(s) or "").split(":")[0] == "cuda"]
        if not strings or not self.facts.active:
            return
        why = self.facts.guard_reason(self.ctx.current_statements, whole_function=True)
        if why:
            self._keep(node, strings, why)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`torch.cuda.is_available() and <CUDA-only check>` (or its `not ... or` mirror)."""
        if isinstance(node.operator, cst.Or):
            self._negated.update((id(node.left), id(node.right)))  # read best in parentheses too
        if self._queries:
            scan = _Queries(self.ctx.qualname, self._flags())
            node.left.visit(scan)
            if scan.available:
                self._after_available += 1
                self._counted.add(id(node))
        op = type(node.operator)
        operands = _operands(node.with_changes(lpar=[], rpar=[]), op)
        if len(operands) < 2:
            return
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

    def visit_Call(self, node: cst.Call) -> None:
        """`if torch.cuda.is_available(): <CUDA-only code>` keeps its CUDA test."""
        if id(node) in self.ctx.keep_cuda or not _is_call_of(node, self.ctx.qualname, "torch.cuda.is_available"):
            return
        if not self.facts.active:
            return
        statements = self.ctx.current_statements
        why = self.facts.guard_reason(statements, whole_function=False)
        flag = _flag_set_here(statements, node, self._flags())
        if why is None and flag is not None:
            why = self.facts.flag_reason(statements, flag)
        if why:
            self._keep(node, [node], why)

    def leave_BooleanOperation(self, original: cst.BooleanOperation, updated: cst.BooleanOperation):
        if id(original) in self._counted:
            self._after_available -= 1
        return updated

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._negated.add(id(node.expression))

    def _inside_available_test(self) -> bool:
        for stmt in self.ctx.current_statements:
            if isinstance(stmt, (cst.If, cst.While)):
                known = self._tests.get(id(stmt))
                if known is None:
                    scan = _Queries(self.ctx.qualname, self._flags())
                    stmt.test.visit(scan)
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
        original.visit(scan)
        if not scan.capability or scan.available or self._after_available or self._inside_available_test():
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
