"""`--portable`: one named device per module.

The accelerator's device type is one long expression (`torch.accelerator.current_accelerator()
.type if torch.accelerator.is_available() else "cpu"`). A module that needs it once keeps it
where it is needed (`.to()` takes `current_accelerator(check_available=True)` there); a module
that needs it more than once gets one small function after its imports, written from the
`device_type_helper` template (rules/targets.toml), and calls it at each site, as a person
would. A function, not a constant: the expression is evaluated where the code asked for CUDA,
never at import (asking for the devices at import initialises CUDA in a process that may fork).

While a file is rewritten, every site gets a call to the helper's name (`PortContext`); `finish`
then counts the calls in the new tree and either inlines the single one or defines the helper.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.imports import _is_docstring, _plain_import

NAMES = ("_device_type", "_accelerator_type", "_accelerator_device_type", "_porter_device_type")


def pick_name(source: bytes, helper_code: str) -> str:
    """The helper's name: one the module already defines with this very body (a second run), or
    the first candidate the source does not mention at all."""
    for name in NAMES:
        if helper_code.format(name=name).strip().encode() in source:
            return name
    for name in NAMES:
        if not re.search(rb"\b" + name.encode() + rb"\b", source):
            return name
    n = 2
    while re.search(rb"\b_device_type_%d\b" % n, source):
        n += 1
    return f"_device_type_{n}"


class _Calls(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.module_level: set[int] = set()  # indices of top-level statements that call it
        self._top = -1

    def on_visit(self, node: cst.CSTNode) -> bool:
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == self.name
            and not node.args
        ):
            self.count += 1
            self.module_level.add(self._top)
        return True


class _Inline(cst.CSTTransformer):
    """Replaces the one call by the expression itself (quotes swapped inside an f-string)."""

    def __init__(self, name: str, type_code: str, device_code: str) -> None:
        self.name = name
        self.type_code = type_code
        self.device_code = device_code
        self.quotes: list[str] = []
        self.to_args: set[int] = set()
        self.tuple_items: set[int] = set()

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self.tuple_items.update(id(el.value) for el in node.elements)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.quotes.append(node.start[-1])

    def leave_FormattedString(self, original, updated):
        self.quotes.pop()
        return updated

    def visit_Call(self, node: cst.Call) -> None:
        # `.to(<the device>)`: the current accelerator itself, None (stay) without one
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "to"
            and len(node.args) >= 1
            and node.args[0].keyword is None
        ):
            self.to_args.add(id(node.args[0].value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not (isinstance(original.func, cst.Name) and original.func.value == self.name and not original.args):
            return updated
        code = self.device_code if id(original) in self.to_args else self.type_code
        if self.quotes:
            other = "'" if self.quotes[-1] == '"' else '"'
            code = code.replace(self.quotes[-1], other)
        expr = cst.parse_expression(code)
        if original.lpar:
            return expr.with_changes(lpar=original.lpar, rpar=original.rpar)
        if isinstance(expr, cst.IfExp) and id(original) in self.tuple_items:  # `x if c else y, z` reads badly
            return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return expr


def _is_import_block(stmt: cst.CSTNode) -> bool:
    """An import, or a `try:`/`if` whose body is imports only (optional dependencies)."""
    if _plain_import(stmt) is not None:
        return True
    if isinstance(stmt, (cst.Try, cst.If)) and isinstance(stmt.body, cst.IndentedBlock):
        return all(
            _plain_import(s) is not None
            or (isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body))
            for s in stmt.body.body
        )
    return False


def _position(body: Sequence[cst.BaseStatement], first_use: int) -> int:
    """Where the helper goes: after the module's imports that come before its first use at
    module level (after the docstring and `__future__` when there are none)."""
    at = 0
    for i, stmt in enumerate(body[:first_use]):
        if _is_import_block(stmt) or (i == 0 and _is_docstring(stmt)):
            at = i + 1
    return at


def _two_blank_lines(
    stmt: cst.SimpleStatementLine | cst.BaseCompoundStatement,
) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    lines = list(stmt.leading_lines)
    blank = 0
    for line in lines:
        if line.comment is None:
            blank += 1
        else:
            break
    if blank >= 2:
        return stmt
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * (2 - blank) + lines)


def finish(module: cst.Module, name: str, helper_code: str, type_code: str, device_code: str) -> cst.Module:
    """The module with its sites' calls to `name` inlined (one call) or backed by the helper (more).
    `helper_code` is the template with `{name}`; `type_code` and `device_code` the inline forms."""
    calls = _Calls(name)
    for i, stmt in enumerate(module.body):
        calls._top = i
        cstwalk.visit(stmt, calls)
    if calls.count == 0:
        return module
    body = list(module.body)
    defined = any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in body)
    if defined:
        return module  # a second run: the module has its helper already
    if calls.count == 1:
        return module.visit(_Inline(name, type_code, device_code))
    helper = cst.parse_statement(helper_code.format(name=name).strip() + "\n")
    at = _position(body, min(calls.module_level))
    helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] if at > 0 else [])
    if at < len(body):
        body[at] = _two_blank_lines(body[at])
    body.insert(at, helper)
    return module.with_changes(body=body)
