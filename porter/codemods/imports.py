"""Imports after a rewrite: new ones join the file's torch import group; ones the rewrite made
unused go.

libcst's `AddImportsVisitor` puts a new import after the first block of imports (above
`sys.path` tweaks and the torch group that follows them), and `RemoveImportsVisitor` only
removes what a codemod names, so `import torch as t`, `import torch.backends.cudnn as cudnn`
or `from torch.nn.attention import sdpa_kernel` stayed behind once their last use was
rewritten. Here an import is removed only when the original file used it and the rewritten
file does not: an import the author left unused is theirs to keep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import cast

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, ImportItem

from porter.analysis.resolve import dotted


# -- adding ------------------------------------------------------------------------------

# the packages whose imports new ones join (torchvision, torchaudio… sort after them)
TORCH_GROUP = frozenset(("torch", "torch_xla", "torch_neuronx", "torch_tpu"))


def _plain_import(stmt: cst.CSTNode) -> cst.Import | cst.ImportFrom | None:
    if (
        type(stmt) is cst.SimpleStatementLine
        and len(stmt.body) == 1
        and isinstance(first := stmt.body[0], (cst.Import, cst.ImportFrom))
    ):
        return first
    return None


def _module_of(imp: cst.Import | cst.ImportFrom) -> str:
    if isinstance(imp, cst.Import):
        return dotted(imp.names[0].name) or ""
    if imp.relative:
        return "."
    return (dotted(imp.module) or "") if imp.module is not None else ""


def _present(module: cst.Module) -> set[tuple[str, str | None]]:
    have = set()
    for stmt in module.body:
        imp = _plain_import(stmt)
        if type(imp) is cst.Import:
            for alias in imp.names:
                asname = (
                    alias.asname.name.value
                    if alias.asname is not None and type(alias.asname.name) is cst.Name
                    else None
                )
                have.add((dotted(alias.name) or "", asname))
    return have


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        type(stmt) is cst.SimpleStatementLine
        and type(stmt.body[0]) is cst.Expr
        and type(stmt.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)
    )


def _anchor(body: Sequence[cst.BaseStatement]) -> int:
    """Index after which new imports go: the last top-level `torch…` import, else the end of
    the file's leading imports (after the docstring), else -1 (the top)."""
    torch_group = [
        i
        for i, s in enumerate(body)
        if (imp := _plain_import(s)) is not None and _module_of(imp).split(".")[0] in TORCH_GROUP
    ]
    if torch_group:
        return torch_group[-1]
    at = -1
    for i, stmt in enumerate(body):
        if _plain_import(stmt) is not None:
            at = i
        elif i == 0 and _is_docstring(stmt):
            at = i  # the docstring
        else:
            break
    return at


def add_imports(module: cst.Module, items: list[ImportItem], context) -> cst.Module:
    """Add `import m` / `import m as a` requests next to the torch imports; anything else
    (`from m import x`) goes through libcst's visitor."""
    plain: list[ImportItem] = []
    other: list[ImportItem] = []
    for item in items:
        (other if item.obj_name is not None or item.relative else plain).append(item)
    have = _present(module)
    new: list[cst.SimpleStatementLine] = []
    for item in sorted(plain, key=lambda i: i.module):
        key = (item.module, item.alias)
        if key in have:
            continue
        have.add(key)
        alias = cst.ImportAlias(
            name=cast("cst.Attribute | cst.Name", cst.parse_expression(item.module)),
            asname=cst.AsName(name=cst.Name(item.alias)) if item.alias else None,
        )
        new.append(cst.SimpleStatementLine(body=[cst.Import(names=[alias])]))
    if new:
        guarded = _torch_guard(module) if not _has_torch_binding(module.body) else None
        if guarded is not None:
            return _add_in_guard(module, guarded, new, other, context)
        body = list(module.body)
        at = _anchor(body)
        is_docstring_only = at == 0 and _plain_import(body[0]) is None
        if is_docstring_only:
            new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine()])
        if at + 1 < len(body) and _plain_import(body[at + 1]) is None and not body[at + 1].leading_lines:
            body[at + 1] = body[at + 1].with_changes(leading_lines=[cst.EmptyLine()])
        body[at + 1 : at + 1] = new
        module = module.with_changes(body=body)
    if other:
        context.scratch[AddImportsVisitor.CONTEXT_KEY] = other
        module = AddImportsVisitor(context).transform_module(module)
    return module


def _binds_torch(stmt: cst.CSTNode) -> bool:
    """`import torch` / `import torch.x` (binds `torch` itself) at this statement."""
    imp = _plain_import(stmt)
    return type(imp) is cst.Import and any(
        alias.asname is None and (dotted(alias.name) or "").split(".")[0] == "torch" for alias in imp.names
    )


def _has_torch_binding(body: Sequence[cst.BaseStatement]) -> bool:
    return any(_binds_torch(s) for s in body)


def _imports_torch(stmt: cst.CSTNode) -> bool:
    imp = _plain_import(stmt)
    return imp is not None and _module_of(imp).split(".")[0] in TORCH_GROUP


def _torch_guard(module: cst.Module) -> int | None:
    """Index of the module-level `try:` (or `if`) whose body imports torch, where the module
    imports torch nowhere else at its top level: torch is optional there (composer's
    `try: import torch.utils.collect_env … except ImportError`), and a new `import torch`
    belongs inside that guard, not above it where a torch-less install fails on import."""
    if any(_imports_torch(s) for s in module.body):
        return None
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, (cst.Try, cst.If)) and isinstance(stmt.body, cst.IndentedBlock):
            if any(_imports_torch(s) for s in stmt.body.body):
                return i
    return None


def _add_in_guard(module: cst.Module, at: int, new: list[cst.SimpleStatementLine], other, context) -> cst.Module:
    guard = module.body[at]
    assert isinstance(guard, (cst.Try, cst.If)) and isinstance(guard.body, cst.IndentedBlock)
    inner = list(guard.body.body)
    first = next(i for i, s in enumerate(inner) if _imports_torch(s))
    there = inner[first]
    assert isinstance(there, cst.SimpleStatementLine)  # _imports_torch: a plain import line
    new[0] = new[0].with_changes(leading_lines=there.leading_lines)
    inner[first] = there.with_changes(leading_lines=[])
    inner[first:first] = new
    body = list(module.body)
    body[at] = guard.with_changes(body=guard.body.with_changes(body=inner))
    module = module.with_changes(body=body)
    if other:
        context.scratch[AddImportsVisitor.CONTEXT_KEY] = other
        module = AddImportsVisitor(context).transform_module(module)
    return module


# -- removing ----------------------------------------------------------------------------


class _Uses:
    """Whether the code reads a name or a dotted chain, outside the module's import lines.

    Read from the text, not the tree: walking both trees of every changed file cost more than
    the rewrite itself. A word in a comment or a string counts as a use, which keeps an import
    (the safe direction for the rewritten file); `x.cudnn` does not count for `cudnn`.
    """

    def __init__(self, module: cst.Module, text: str) -> None:
        for i, stmt in enumerate(module.body):
            if _plain_import(stmt) is not None or (i == 0 and _is_docstring(stmt)):
                text = text.replace(_EMPTY.code_for_node(stmt), "\n", 1)
        self.text = text
        self._seen: dict[str, bool] = {}

    def reads(self, dotted_name: str) -> bool:
        hit = self._seen.get(dotted_name)
        if hit is None:
            pattern = r"(?<![\w.])" + re.escape(dotted_name) + r"\b"
            hit = self._seen[dotted_name] = re.search(pattern, self.text) is not None
        return hit


_EMPTY = cst.Module(body=[])


def uses(module: cst.Module, text: str | None = None) -> _Uses:
    return _Uses(module, module.code if text is None else text)


def _binding(alias: cst.ImportAlias, imp: cst.Import | cst.ImportFrom) -> tuple[str, str | None]:
    """(local name, dotted chain that must be read for a bare `import a.b.c` to be used)."""
    if alias.asname is not None and type(alias.asname.name) is cst.Name:
        return alias.asname.name.value, None
    name = dotted(alias.name) or ""
    if type(imp) is cst.Import and "." in name:
        return name.split(".")[0], name
    return name, None


def _used(alias, imp, seen: _Uses) -> bool:
    local, chain = _binding(alias, imp)
    return seen.reads(chain if chain is not None else local)


class _DropAliases(cst.CSTTransformer):
    def __init__(self, before: _Uses, after: _Uses, binders: dict[str, int]) -> None:
        super().__init__()
        self.before, self.after, self.binders = before, after, binders
        self.removed = 0
        self.markers: set[int] = set()

    def visit_FunctionDef(self, node) -> bool:
        return False  # module-level imports only: a function's imports are its own business

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Try(self, node) -> bool:
        return False  # `try: import x` guards an optional dependency

    def visit_If(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original, updated):
        imp = _plain_import(updated)
        if (
            imp is None
            or type(imp.names) is cst.ImportStar
            or (type(imp) is cst.ImportFrom and _module_of(imp) == "__future__")
        ):
            return updated
        keep = []
        for alias in imp.names:
            local, chain = _binding(alias, imp)
            gone = _used(alias, imp, self.before) and not _used(alias, imp, self.after)
            if gone and chain is not None and self.after.reads(local) and self.binders.get(local, 0) < 2:
                # `import a.b` is also what binds `a`, still read: `import a` says what is used
                keep.append(alias.with_changes(name=cst.Name(local)))
                self.removed += 1
                continue
            if gone:
                self.binders[local] = self.binders.get(local, 1) - 1
                self.removed += 1
            else:
                keep.append(alias)
        if len(keep) == len(imp.names) and all(k is a for k, a in zip(keep, imp.names)):
            return updated
        if not keep:
            if not updated.leading_lines:
                return cst.RemovalSentinel.REMOVE
            marker = updated.with_changes(body=[cst.Pass()])
            self.markers.add(id(marker))
            return marker
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_imp = imp.with_changes(names=keep)
        if type(imp) is cst.ImportFrom and imp.lpar is not None and len(keep) == 1:
            new_imp = new_imp.with_changes(lpar=None, rpar=None)
        return updated.with_changes(body=[new_imp])


def remove_made_unused(original: cst.Module, new: cst.Module, source: bytes) -> tuple[cst.Module, str | None]:
    """Drop module-level imports the original read and the rewrite no longer does. Also
    returns the new module's code when nothing was dropped (it was generated here)."""
    new_text = new.code
    before = uses(original, source.decode(original.encoding, errors="replace"))
    after = uses(new, new_text)
    binders: dict[str, int] = {}
    for stmt in new.body:
        imp = _plain_import(stmt)
        if type(imp) is cst.Import:
            for alias in imp.names:
                if alias.asname is None:
                    top = (dotted(alias.name) or "").split(".")[0]
                    binders[top] = binders.get(top, 0) + 1
    if not any(_plain_import(stmt) is not None and _import_used_only_before(stmt, before, after) for stmt in new.body):
        return new, new_text
    dropper = _DropAliases(before, after, binders)
    result = new.visit(dropper)
    if not dropper.removed:
        return new, new_text
    return (_drop_markers(result, dropper.markers) if dropper.markers else result), None


def _import_used_only_before(stmt, before: _Uses, after: _Uses) -> bool:
    imp = _plain_import(stmt)
    if imp is None or isinstance(imp.names, cst.ImportStar):
        return False
    return any(_used(a, imp, before) and not _used(a, imp, after) for a in imp.names)


def _drop_markers(module: cst.Module, markers: set[int]) -> cst.Module:
    """A removed import with comments or a blank line above it became a marker: those lines go
    to the next statement (a blank line between import groups stays)."""
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    carried: list[cst.EmptyLine] = []
    for stmt in module.body:
        if id(stmt) in markers:
            carried.extend(stmt.leading_lines)
            continue
        if carried:
            if any(line.comment for line in carried) or not stmt.leading_lines:
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
            carried = []
        body.append(stmt)
    return module.with_changes(body=body)
