"""What a reviewer would tidy by hand after a rewrite, done where the rewrite made the need.

Rewrites leave constants (`torch.cuda.is_bf16_supported()` becomes `True`), emptied branches
(every statement of `if args.deterministic:` was a cuDNN flag) and repeated statements
(`torch.cuda.manual_seed_all(s)` becomes a second `torch.manual_seed(s)`). The statement
walker (`composite.PortTransformer`) calls these helpers only on nodes porter changed, so
code the user wrote this way is never touched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from porter.codemods import cstwalk
import libcst as cst

_EMPTY = cst.Module(body=[])
_SPACE = re.compile(r"\s+")
_SEED_CALL = re.compile(r"(^|\.)(manual_seed|manual_seed_all|seed|seed_all)$")


def constant(node: cst.CSTNode) -> bool | None:
    """True/False for the literal names, else None."""
    if type(node) is cst.Name and node.value in ("True", "False"):
        return node.value == "True"
    return None


def porter_constant(original: cst.CSTNode, updated: cst.CSTNode) -> bool | None:
    """The constant `updated` is, when the rewrite made it one (the original was not)."""
    value = constant(updated)
    if value is None or constant(original) is not None:
        return None
    return value


def _keep_parens(outer: cst.BaseExpression, inner: cst.BaseExpression) -> cst.BaseExpression:
    if outer.lpar and not inner.lpar:
        return inner.with_changes(lpar=outer.lpar, rpar=outer.rpar)
    return inner


def fold_boolean(original: cst.BooleanOperation, updated: cst.BooleanOperation) -> cst.BaseExpression:
    """`x and True` -> `x`, `x or False` -> `x`, `x and False` -> `False`, `x or True` -> `True`
    (the constant side came from a rewrite: a CUDA query answered for the target)."""
    is_and = type(updated.operator) is cst.And
    for mine, other, orig_mine in (
        (updated.right, updated.left, original.right),
        (updated.left, updated.right, original.left),
    ):
        value = porter_constant(orig_mine, mine)
        if value is None:
            continue
        if value is is_and:  # `x and True`, `x or False`: the other side decides
            return _keep_parens(updated, other)
        if mine is updated.right and not _pure(other):
            return updated  # `f() and False` still calls f()
        return _keep_parens(updated, mine)
    return updated


def fold_ifexp(original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
    value = porter_constant(original.test, updated.test)
    if value is None:
        return updated
    return _keep_parens(updated, updated.body if value else updated.orelse)


def fold_not(original: cst.UnaryOperation, updated: cst.UnaryOperation) -> cst.BaseExpression:
    if type(updated.operator) is not cst.Not:
        return updated
    inner = updated.expression
    if type(inner) is cst.Comparison and not inner.lpar and type(original.expression) is not cst.Comparison:
        # `not torch.cuda.is_available()` became `not xr.global_runtime_device_count() > 0`
        flipped = negate(inner)
        if type(flipped) is cst.Comparison:
            return _keep_parens(updated, flipped)
    value = porter_constant(original.expression, updated.expression)
    if value is None:
        return updated
    return _keep_parens(updated, cst.Name("False" if value else "True"))


_LOOSE = frozenset(
    (
        cst.Comparison,
        cst.BooleanOperation,
        cst.BinaryOperation,
        cst.IfExp,
        cst.Lambda,
        cst.NamedExpr,
        cst.UnaryOperation,
    )
)


_BELOW_ARITHMETIC = frozenset((cst.Comparison, cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr))


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` in parentheses when it is an operator expression without them (as an
    attribute's, subscript's or callee's head, only a rewrite can have put it there)."""
    if type(node) in _LOOSE and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def parenthesized_operand(node: cst.BaseExpression) -> cst.BaseExpression:
    """An arithmetic operand: only what binds looser than arithmetic needs parentheses
    (`a + b * c` and `a + -b` are the user's and stay as written)."""
    loose = type(node) in _BELOW_ARITHMETIC or (type(node) is cst.UnaryOperation and type(node.operator) is cst.Not)
    if loose and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def parenthesized_branch(node: cst.BaseExpression) -> cst.BaseExpression:
    """A conditional expression's body or test that is itself one (or a lambda)."""
    if type(node) in (cst.IfExp, cst.Lambda) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def with_field(node: cst.CSTNode, name: str, fix) -> cst.CSTNode:
    """`node` with `fix` applied to one child; the same node when `fix` changed nothing."""
    child = getattr(node, name)
    new = fix(child)
    return node if new is child else node.with_changes(**{name: new})


def parenthesize_comparison(node: cst.Comparison) -> cst.Comparison:
    """Comparisons chain: an operand that is itself a comparison needs parentheses."""
    loose = (cst.Comparison, cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)

    def fix(e: cst.BaseExpression) -> cst.BaseExpression:
        return e.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if type(e) in loose and not e.lpar else e

    left = fix(node.left)
    comps = [c.with_changes(comparator=fix(c.comparator)) for c in node.comparisons]
    if left is node.left and all(a.comparator is b.comparator for a, b in zip(comps, node.comparisons)):
        return node
    return node.with_changes(left=left, comparisons=comps)


def _pure(node: cst.CSTNode) -> bool:
    """No call anywhere in `node` (reading names and attributes has no effect we keep)."""
    if type(node) is cst.Call:
        return False
    return all(_pure(c) for c in cstwalk.children(node))


pure = _pure


def negate(test: cst.BaseExpression) -> cst.BaseExpression:
    """`not test`, written as a person would: `a == b` -> `a != b`, `not x` -> `x`."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not and not test.lpar:
        return test.expression
    flips: dict[type[cst.BaseCompOp], Any] = {
        cst.Equal: cst.NotEqual,
        cst.NotEqual: cst.Equal,
        cst.In: cst.NotIn,
        cst.NotIn: cst.In,
        cst.Is: cst.IsNot,
        cst.IsNot: cst.Is,
        cst.GreaterThan: cst.LessThanEqual,
        cst.LessThanEqual: cst.GreaterThan,
        cst.LessThan: cst.GreaterThanEqual,
        cst.GreaterThanEqual: cst.LessThan,
    }
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and not test.lpar:
        # every comparison operator has whitespace_before/after; libcst's BaseCompOp does not declare them
        op: Any = test.comparisons[0].operator
        comparator = test.comparisons[0].comparator
        if (
            type(op) is cst.GreaterThan
            and type(comparator) is cst.Integer
            and comparator.value == "0"
            and _is_count(test.left)
        ):
            # `not count() > 0` is `count() == 0`: a count is never negative
            return test.with_changes(
                comparisons=[
                    test.comparisons[0].with_changes(
                        operator=cst.Equal(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
                    )
                ]
            )
        flip = flips.get(type(op))
        if flip is not None:
            if flip in (cst.NotIn, cst.IsNot):
                new_op = flip(
                    whitespace_before=op.whitespace_before,
                    whitespace_after=op.whitespace_after,
                    whitespace_between=cst.SimpleWhitespace(" "),
                )
            else:
                new_op = flip(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
            return test.with_changes(comparisons=[test.comparisons[0].with_changes(operator=new_op)])
    inner = test
    if type(test) in (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr) and not test.lpar:
        inner = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=inner)


def _is_count(node: cst.BaseExpression) -> bool:
    if type(node) is not cst.Call:
        return False
    func = node.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    return name.endswith("count")


def _unguarded(stmt: cst.CSTNode) -> cst.CSTNode:
    """`try: X` / `except ...: pass` (fastai's `try: torch.cuda.manual_seed_all(s)`) says what
    `X` says, errors ignored: its one statement, for comparing; anything else as it is."""
    if type(stmt) is not cst.Try or stmt.orelse is not None or stmt.finalbody is not None or not stmt.handlers:
        return stmt
    if not all(_only_pass(h.body) for h in stmt.handlers):
        return stmt
    body = stmt.body
    if type(body) is cst.SimpleStatementSuite:
        return cst.SimpleStatementLine(body=body.body)
    if type(body) is cst.IndentedBlock and len(body.body) == 1:
        return body.body[0]
    return stmt


def _only_pass(block: cst.BaseSuite) -> bool:
    smalls = (
        block.body
        if type(block) is cst.SimpleStatementSuite
        else [small for line in block.body if type(line) is cst.SimpleStatementLine for small in line.body]
        if len(block.body) == 1
        else []
    )
    return len(smalls) == 1 and type(smalls[0]) is cst.Pass


def statement_key(stmt: cst.CSTNode) -> str | None:
    """A simple statement's code without layout or comments (None for compound ones)."""
    stmt = _unguarded(stmt)
    if type(stmt) is not cst.SimpleStatementLine:
        return None
    code = "".join(_EMPTY.code_for_node(s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)) for s in stmt.body)
    return _SPACE.sub("", code)


def _seed_statement(stmt: cst.CSTNode) -> bool:
    stmt = _unguarded(stmt)
    if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if type(small) is not cst.Expr or type(small.value) is not cst.Call:
        return False
    func = small.value.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    return bool(_SEED_CALL.search(name))


def repeats(stmt: cst.CSTNode, before: Sequence[cst.CSTNode]) -> bool:
    """`stmt` says again what the statement just before it said, or, for seeding, what an
    earlier statement said with only other seeding in between (`torch.manual_seed(s);
    np.random.seed(s); torch.manual_seed(s)`)."""
    key = statement_key(stmt)
    if key is None or not before:
        return False
    for prev in reversed(before):
        if statement_key(prev) == key:
            return True
        if not (_seed_statement(stmt) and _seed_statement(prev)):
            return False
    return False
