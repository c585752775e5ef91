"""Base class of a rule family: one concern, its codes declared next to it (as TorchFix does)."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from porter.codemods.context import PortContext


class Family:
    codes: ClassVar[tuple[str, ...]] = ()
    # bytes of which at least one must occur in a file for this family to matter
    tokens: ClassVar[tuple[bytes, ...]] = ()

    def __init__(self, ctx: PortContext) -> None:
        self.ctx = ctx

    @classmethod
    def wanted(cls, ctx: PortContext, source: bytes) -> bool:
        return any(ctx.enabled(c) for c in cls.codes) and (
            not cls.tokens or any(t in source for t in cls.tokens)
        )

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
        return call.with_changes(args=fix_commas(args))

    @staticmethod
    def with_kwarg(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
        args = list(call.args)
        new = cst.Arg(
            keyword=cst.Name(name),
            value=value,
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        for i, a in enumerate(args):
            if a.keyword is not None and a.keyword.value == name:
                args[i] = a.with_changes(value=value)
                return call.with_changes(args=args)
        args.append(new)
        return call.with_changes(args=fix_commas(args))


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
