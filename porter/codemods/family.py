"""Base class of a rule family: one concern, one module, the codes its rules own.

Which family owns which code is declared once, in the rule data: each rule in `rules/*.toml`
names its `family` (its file's, unless the rule names another), and a family's codes are the
rules that name it, as ruff's registry maps each code to one implementation. A rule added to
the data alone is therefore selected, ignored and run like any other of its family.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.candidates import Gate
from porter.codemods.context import PortContext
from porter.config.ruledata import family_codes
from porter.analysis.prefilter import rules_admit


class Family:
    # the `family` its rules name in rules/*.toml: the module's name, `_` spelled `-`
    name: ClassVar[str] = ""
    # a helper family owns no code: it prepares nodes for the family it serves (marks strings
    # that family must leave) and runs exactly when that one does
    serves: ClassVar[type[Family] | None] = None
    # bytes of which at least one must occur in a file for this family to matter
    tokens: ClassVar[tuple[bytes, ...]] = ()
    # False: the family only makes sense for a target-only port (--portable leaves it out)
    portable: ClassVar[bool] = True
    # True: its `candidate` reads the file's `ast` (asked after the families that need none)
    candidate_reads_ast: ClassVar[bool] = False

    def __init__(self, ctx: PortContext) -> None:
        self.ctx = ctx

    @classmethod
    def codes(cls) -> tuple[str, ...]:
        """The codes this family owns (reports): the rules that name it in the rule data."""
        return family_codes(cls.name)

    @classmethod
    def wanted(cls, ctx: PortContext, source: bytes) -> bool:
        if ctx.portable and not cls.portable:
            return False
        if cls.serves is not None:
            on = cls.serves.wanted(ctx, source)
        else:
            on = any(ctx.enabled(c) for c in cls.codes())
        return on and (not cls.tokens or any(t in source for t in cls.tokens))

    @classmethod
    def candidate(cls, ctx: Gate, source: bytes) -> bool:
        """Whether this family, `wanted` on `source`, may report or change anything in it: a
        necessary condition told without libcst (porter.codemods.candidates). The default
        reads the rule data: some enabled rule of the family has one of its `tokens` (and of
        its `requires`) in the file, the contract the prefilter already relies on per rule. A
        family with a rule that declares no tokens, or one `wanted` for reasons other than
        tokens, answers True (it keeps the prefilter's answer), unless it overrides this."""
        if cls.serves is not None:
            return cls.serves.candidate(ctx, source)
        return rules_admit(cls.codes(), ctx.enabled, source)

    # shared small helpers ------------------------------------------------------------------

    @staticmethod
    def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    @staticmethod
    def positional(call: cst.Call) -> list[cst.Arg]:
        return [a for a in call.args if a.keyword is None and not a.star]

    @staticmethod
    def without_kwargs(call: cst.Call, names: set[str]) -> cst.Call:
        args = [a for a in call.args if not (a.keyword is not None and a.keyword.value in names)]
        if args and call.args and args[-1] is not call.args[-1]:
            # the old last argument carried the layout before `)` (a newline and indent)
            last = call.args[-1]
            comma = last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
            args[-1] = args[-1].with_changes(whitespace_after_arg=last.whitespace_after_arg, comma=comma)
        return call.with_changes(args=fix_commas(args))

    @staticmethod
    def with_kwarg(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
        args = list(call.args)
        new = keyword_arg(name, value)
        for i, a in enumerate(args):
            if a.keyword is not None and a.keyword.value == name:
                args[i] = a.with_changes(value=value)
                return call.with_changes(args=args)
        if not args:
            return call.with_changes(args=[new])
        prev = args[-1]
        if isinstance(prev.comma, cst.Comma) and _multiline_comma(prev.comma):
            # one argument per line with a trailing comma: the new one goes on its own line
            between = call.whitespace_before_args
            if not isinstance(between, cst.ParenthesizedWhitespace):
                between = prev.comma.whitespace_after
            args[-1] = prev.with_changes(comma=cst.Comma(whitespace_after=between))
            new = new.with_changes(comma=prev.comma)
        else:
            # the last argument's layout before `)` moves to the new last argument
            args[-1] = prev.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                whitespace_after_arg=cst.SimpleWhitespace(""),
            )
            new = new.with_changes(whitespace_after_arg=prev.whitespace_after_arg)
        args.append(new)
        return call.with_changes(args=args)


class ReferenceTracker:
    """Which Name/Attribute nodes are whole references (`a.b.c`, not its `a.b` part, nor a
    keyword, definition name or assignment target). Mixed into families that report uses."""

    def _track_init(self) -> None:
        self._inner: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))
        self._inner.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._inner.add(id(node.keyword))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._inner.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._inner.add(id(node.name))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._inner.add(id(node.target))

    def visit_Param(self, node: cst.Param) -> None:
        self._inner.add(id(node.name))

    def whole_reference(self, node: cst.BaseExpression) -> bool:
        return id(node) not in self._inner


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spaced as PEP 8 writes keyword arguments."""
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Commas between arguments after some were added or removed; a trailing one is kept
    only where the call had one on a multi-line layout (the last arg's comma is left as is)."""
    out = []
    for i, a in enumerate(args):
        last = i == len(args) - 1
        if not last and a.comma is cst.MaybeSentinel.DEFAULT:
            a = a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif last and isinstance(a.comma, cst.Comma) and not _multiline_comma(a.comma):
            a = a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        out.append(a)
    return out


def _multiline_comma(comma: cst.Comma) -> bool:
    return isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def one_comparison(
    node: cst.CSTNode, operator: type[cst.BaseCompOp]
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(left, right) of `left OP right` with one operator of the kind `operator`, else None."""
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        (target,) = node.comparisons
        if isinstance(target.operator, operator):
            return node.left, target.comparator
    return None


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        prefix = node.prefix.lower()
        if "b" in prefix:
            return None
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - libcst parsed it, so it evaluates
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)
        if left is None or right is None:
            return None
        return left + right
    return None


def replace_string(node: cst.SimpleString, new_value: str) -> cst.SimpleString:
    """Same quotes and prefix, new content (the content must need no escaping)."""
    prefix = node.prefix
    body = node.value[len(prefix) :]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
    return node.with_changes(value=f"{prefix}{quote}{new_value}{quote}")


_DEFAULT = cst.MaybeSentinel.DEFAULT


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it. Not libcst's `node.visit(CSTVisitor)`: that rebuilds
    every node it passes, at about the cost of the port itself (docs/performance.md)."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    order = cstwalk.ORDER
    while stack:
        n = pop()
        yield n
        # (cstwalk.children, inlined: a call and a list less per node)
        fields = order.get(type(n))
        if fields is None:
            extend(n.children)
            continue
        for name in fields:
            value = getattr(n, name)
            kind = type(value)
            if kind is tuple or kind is list:
                extend(value)
            elif value is not None and value is not _DEFAULT:
                push(value)


def code_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of `walk(node)`, in its order, less whitespace, comments, punctuation and
    operators (`cstwalk.TRIVIA`, whose subtrees hold nothing else): for a scan that reads no
    such node (one that asks for `Call`s, `Assign`s, ...), about a third of the nodes. The
    fields that hold only those are not read (`cstwalk.CODE_ORDER`)."""
    trivia = cstwalk.TRIVIA
    if type(node) in trivia:
        return []
    out: list[cst.CSTNode] = []
    stack = [node]
    pop, push, add = stack.pop, stack.append, out.append
    order = cstwalk.CODE_ORDER
    while stack:
        n = pop()
        add(n)
        fields = order.get(type(n))
        if fields is None:
            stack.extend([c for c in n.children if type(c) not in trivia])
            continue
        for name in fields:
            value = getattr(n, name)
            kind = type(value)
            if kind is tuple or kind is list:
                stack.extend([c for c in value if type(c) not in trivia])
            elif value is not None and value is not _DEFAULT and kind not in trivia:
                push(value)
    return out
