"""Cheap qualified-name resolution for the few nodes that can be CUDA-related.

libcst's `QualifiedNameProvider` costs about ten times the parse, because it builds scopes for
every name in the module. porter needs names only for a handful of candidate nodes per file,
so it reads the module's import table once and checks, per candidate, whether an enclosing
function rebinds the head name. `tests/test_resolve.py` holds this to the provider on the
alias and scoping cases.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression) -> str:
    name = dotted(node)
    assert name is not None
    return name


class ImportTable:
    """Local name -> qualified name, from every import statement in the module.

    Imports inside functions are included: they bind the same way, and a wrong positive only
    costs one scope check.
    """

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.star_modules: list[str] = []
        # local name -> (module, obj, asname) of the import that bound it
        self.sources: dict[str, tuple[str, str | None, str | None]] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportTable":
        table = cls()
        for stmt in _import_statements(module):
            table.add(stmt)
        return table

    def add(self, stmt: cst.Import | cst.ImportFrom) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                full = _module_name(alias.name)
                if alias.asname is not None:
                    local = alias.asname.name.value  # type: ignore[union-attr]
                    self.names[local] = full
                    self.sources[local] = (full, None, local)
                else:
                    head = full.split(".")[0]
                    # `import torch.cuda` binds `torch`; keep the shortest binding.
                    self.names.setdefault(head, head)
            return
        if stmt.relative or stmt.module is None:
            return
        module = _module_name(stmt.module)
        if isinstance(stmt.names, cst.ImportStar):
            self.star_modules.append(module)
            return
        for alias in stmt.names:
            obj = _module_name(alias.name)
            local = alias.asname.name.value if alias.asname else obj  # type: ignore[union-attr]
            self.names[local] = f"{module}.{obj}"
            self.sources[local] = (module, obj, local if alias.asname else None)

    def qualify(self, name: str) -> str | None:
        head, _, rest = name.partition(".")
        base = self.names.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def local_name_for(self, qualified: str) -> str | None:
        """The local spelling of `qualified` under the current imports, if any.

        The plain spelling wins (`torch.x` under both `import torch` and `import torch as t`),
        then the shortest.
        """
        best: str | None = None
        for local, full in self.names.items():
            if qualified == full:
                cand = local
            elif qualified.startswith(full + "."):
                cand = local + qualified[len(full) :]
            else:
                continue
            if cand == qualified:
                return cand
            if best is None or len(cand) < len(best):
                best = cand
        return best


def _import_statements(module: cst.Module) -> Iterator[cst.Import | cst.ImportFrom]:
    """Every import statement, found without a full visitor pass.

    Walks statement bodies only (imports are statements), which skips all expressions.
    """
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        body = getattr(node, "body", None)
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small
            continue
        if isinstance(body, (list, tuple)):
            stack.extend(body)
        elif isinstance(body, cst.BaseSuite):
            stack.append(body)
        for attr in ("orelse", "finalbody"):
            extra = getattr(node, attr, None)
            if isinstance(extra, cst.CSTNode):
                stack.append(extra)
        handlers = getattr(node, "handlers", None)
        if handlers:
            stack.extend(handlers)
        if isinstance(node, cst.Match):
            stack.extend(node.cases)


class _BindingCollector(cst.CSTVisitor):
    """Names a function binds locally (params, assignments, loop/with/except targets)."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.globals: set[str] = set()

    def _targets(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            self.bound.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._targets(el.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound.add(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.globals.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.globals.update(n.name.value for n in node.names)

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # an import binds the imported module: the import table covers it

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    # Nested scopes bind their own names: only their names are bound here.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bound.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bound.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def function_bindings(node: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
    collector = _BindingCollector()
    node.params.visit(collector)
    body = node.body
    if isinstance(body, cst.BaseExpression):  # lambda
        pass
    else:
        for child in body.children:
            child.visit(collector)
    return frozenset(collector.bound - collector.globals)


class ScopeStack:
    """Enclosing functions of the node being visited, with lazily computed bindings."""

    def __init__(self) -> None:
        self._stack: list[cst.FunctionDef | cst.Lambda] = []
        self._cache: dict[int, frozenset[str]] = {}

    def push(self, node: cst.FunctionDef | cst.Lambda) -> None:
        self._stack.append(node)

    def pop(self) -> None:
        self._stack.pop()

    def shadows(self, name: str) -> bool:
        for fn in reversed(self._stack):
            key = id(fn)
            bound = self._cache.get(key)
            if bound is None:
                bound = self._cache[key] = function_bindings(fn)
            if name in bound:
                return True
        return False

    @property
    def innermost(self) -> cst.FunctionDef | cst.Lambda | None:
        return self._stack[-1] if self._stack else None


class Resolver:
    """Qualified names for Name/Attribute chains, honouring imports and local shadowing."""

    def __init__(self, imports: ImportTable, scopes: ScopeStack) -> None:
        self.imports = imports
        self.scopes = scopes

    def qualname(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        qualified = self.imports.qualify(name)
        if qualified is None:
            return None
        if self.scopes.shadows(name.split(".")[0]):
            return None
        return qualified
