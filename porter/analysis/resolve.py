"""Cheap qualified-name resolution for the few nodes that can be CUDA-related.

libcst's `QualifiedNameProvider` costs about ten times the parse, because it builds scopes for
every name in the module. porter needs names only for a handful of candidate nodes per file,
so it reads the module's import table once and checks, per candidate, whether an enclosing
function rebinds the head name. `tests/test_resolve.py` holds this to the provider on the
alias and scoping cases.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

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


_TORCH_USE = re.compile(rb"(?<![\w.])torch\.")


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
        # local name -> (".module", obj) of a relative `from .m import obj`: never qualified (the
        # package is unknown here), read only to recognise a re-exported Triton (twenty-second read)
        self.relative: dict[str, tuple[str, str]] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> ImportTable:
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
        if isinstance(stmt.names, cst.ImportStar):  # relative ones too: `from .imports import *`
            self.star_modules.append("." * len(stmt.relative) + (_module_name(stmt.module) if stmt.module else ""))
            return
        if stmt.relative:
            where = "." * len(stmt.relative) + (_module_name(stmt.module) if stmt.module else "")
            for alias in stmt.names:
                obj = _module_name(alias.name)
                self.relative[alias.asname.name.value if alias.asname else obj] = (where, obj)  # type: ignore[union-attr]
            return
        if stmt.module is None:
            return
        module = _module_name(stmt.module)
        for alias in stmt.names:
            obj = _module_name(alias.name)
            local = alias.asname.name.value if alias.asname else obj  # type: ignore[union-attr]
            self.names[local] = f"{module}.{obj}"
            self.sources[local] = (module, obj, local if alias.asname else None)

    def bind_torch_from_star(self, source: bytes) -> None:
        """`torch` used but bound by no import, next to a star import (fastai's `from .imports
        import *`, a project's `from utils import *`): the star import provides it, and it
        can only be torch."""
        if self.star_modules and "torch" not in self.names and _TORCH_USE.search(source):
            self.names["torch"] = "torch"

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


def iter_statements(body: cst.CSTNode | Sequence[cst.CSTNode], *, into_defs: bool) -> Iterator[cst.CSTNode]:
    """Every statement under `body` (a node or a list of them), without visiting expressions.

    Statement-level facts (imports, assignments, loop targets) are all porter reads before a
    pass, and a full visitor costs far more: this walks suites, branches and handlers only. The
    statements of one body come last in the source first (a stack), which `porter.codemods.flow` reads.
    With `into_defs=False` nested functions and classes are yielded but not entered.
    """
    stack: list[cst.CSTNode] = [body] if isinstance(body, cst.CSTNode) else list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield node
            continue
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            stack.extend(node.body)
            continue
        yield node
        if not into_defs and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        inner = getattr(node, "body", None)
        if isinstance(inner, cst.CSTNode):
            stack.append(inner)
        stack.extend(getattr(node, "handlers", ()) or ())  # before `else` and `finally`: popped last first
        for attr in ("orelse", "finalbody"):
            extra = getattr(node, attr, None)
            if isinstance(extra, cst.CSTNode):
                stack.append(extra)
        if isinstance(node, cst.Match):
            stack.extend(node.cases)


def name_assignments(body: cst.CSTNode | Sequence[cst.CSTNode]) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) of each `name = value` statement under `body`, in `iter_statements`'
    order, not entering nested functions and classes."""
    for stmt in iter_statements(body, into_defs=False):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    yield small.targets[0].target.value, small.value


def small_statements(body: cst.CSTNode | Sequence[cst.CSTNode], *, into_defs: bool) -> Iterator[cst.BaseSmallStatement]:
    for stmt in iter_statements(body, into_defs=into_defs):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from stmt.body


def _import_statements(module: cst.Module) -> Iterator[cst.Import | cst.ImportFrom]:
    for small in small_statements(module, into_defs=True):
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            yield small


def import_bindings(body: cst.CSTNode | Sequence[cst.CSTNode], *, into_defs: bool = False) -> set[str]:
    """Names the import statements under `body` bind (`import torch.cuda` binds `torch`);
    with `into_defs=False`, not those of nested functions and classes."""
    bound: set[str] = set()
    for small in small_statements(body, into_defs=into_defs):
        if isinstance(small, cst.Import):
            for alias in small.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound.add(alias.asname.name.value)
                else:
                    bound.add(_module_name(alias.name).split(".")[0])
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound.add(alias.asname.name.value)
                else:
                    bound.add(_module_name(alias.name))
    return bound


def imported_modules(body: cst.CSTNode | Sequence[cst.CSTNode], *, into_defs: bool) -> set[str]:
    """Top-level package of every absolute import under `body` (`from torch.cuda import x`: torch)."""
    found: set[str] = set()
    for small in small_statements(body, into_defs=into_defs):
        if isinstance(small, cst.Import):
            found.update(_module_name(a.name).split(".")[0] for a in small.names)
        elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
            found.add(_module_name(small.module).split(".")[0])
    return found


def function_bindings(node: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
    """Names the function binds locally, read from its statements only.

    A full visitor over the body cost more than the rewrite on real code (profiled); binding
    sites are statements (assignments, loops, with, except, defs, imports) plus parameters,
    so expressions are never walked. Walrus targets are the one expression-level binding,
    and are not seen: a `(torch := ...)` inside a function is not a pattern real code uses.
    """
    bound = _parameter_names(node.params)
    if isinstance(node, cst.Lambda):
        return frozenset(bound)
    declared_global: set[str] = set()
    for stmt in iter_statements(node.body, into_defs=False):
        _statement_bindings(stmt, bound, declared_global)
    return frozenset(bound - declared_global)


def _statement_bindings(stmt: cst.CSTNode, bound: set[str], declared_global: set[str]) -> None:
    """What one statement of the function's own binds into `bound` (and declares global or
    nonlocal into `declared_global`); a nested def or class binds only its own name."""
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        for small in stmt.body:
            _small_bindings(small, bound, declared_global)
    elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        bound.add(stmt.name.value)  # a nested scope binds only its own name here
    elif isinstance(stmt, cst.For):
        _bind_targets(stmt.target, bound)
    elif isinstance(stmt, cst.With):
        for item in stmt.items:
            if item.asname is not None:
                _bind_targets(item.asname.name, bound)
    elif isinstance(stmt, cst.ExceptHandler) and stmt.name is not None:
        _bind_targets(stmt.name.name, bound)


def _parameter_names(params: cst.Parameters) -> set[str]:
    """The names of every parameter, `*args` and `**kwargs` included."""
    bound: set[str] = set()
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        bound.add(p.name.value)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            bound.add(star.name.value)
    return bound


def _small_bindings(small: cst.BaseSmallStatement, bound: set[str], declared_global: set[str]) -> None:
    """What a simple statement binds (assignments) into `bound`, or declares global or
    nonlocal (not bound here, then) into `declared_global`."""
    if isinstance(small, cst.Assign):
        for t in small.targets:
            _bind_targets(t.target, bound)
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        _bind_targets(small.target, bound)
    elif isinstance(small, (cst.Global, cst.Nonlocal)):
        declared_global.update(n.name.value for n in small.names)


def _bind_targets(t: cst.BaseExpression, bound: set[str]) -> None:
    """The names an assignment target binds (through tuples, lists and starred names)."""
    if isinstance(t, cst.Name):
        bound.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for el in t.elements:
            _bind_targets(el.value, bound)
    elif isinstance(t, cst.StarredElement):
        _bind_targets(t.value, bound)


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

    @property
    def functions(self) -> list[cst.FunctionDef]:
        """The enclosing `def`s, outermost first."""
        return [fn for fn in self._stack if isinstance(fn, cst.FunctionDef)]

    def imports_in_scope(self, name: str) -> bool:
        """An enclosing function imports `name` itself (`def f(): import torch`)."""
        for fn in self.functions:
            key = -id(fn)
            bound = self._cache.get(key)
            if bound is None:
                bound = self._cache[key] = frozenset(import_bindings(fn.body))
            if name in bound:
                return True
        return False


class Resolver:
    """Qualified names for Name/Attribute chains, honouring imports and local shadowing."""

    def __init__(self, imports: ImportTable, scopes: ScopeStack) -> None:
        self.imports = imports
        self.scopes = scopes
        # several families ask about the same node; original nodes live for the whole pass
        self._cache: dict[int, str | None] = {}

    def qualname(self, node: cst.BaseExpression) -> str | None:
        key = id(node)
        try:
            return self._cache[key]
        except KeyError:
            pass
        result = self._resolve(node)
        self._cache[key] = result
        return result

    def _resolve(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        qualified = self.imports.qualify(name)
        if qualified is None:
            return None
        if self.scopes.shadows(name.split(".")[0]):
            return None
        return qualified
