"""A libcst node's children, and a read-only visit, without libcst's rebuild of every node.

libcst gives a node's children (`node.children`) and visits a tree (`node.visit(visitor)`)
through `_visit_and_replace_children`, which constructs (and validates) a new copy of every
node it passes, even for a visitor that changes nothing: on bench_lint_real.py's corpus those
copies were a fifth of the CPU of the rule families' own walks. Here the children come from
the node's fields, in the order `_visit_and_replace_children` visits them (`FIELDS`,
generated from libcst's source by `fields_from_libcst`; tests/codemods/test_cstwalk.py compares
them with `node.children` over the fixtures and real code), and `visit` calls a plain
`cst.CSTVisitor`'s `on_visit` / `on_leave` on the same nodes, in the same order, as
`node.visit` does. A libcst version other than the one `FIELDS` was made from, a node class
not in it, or a visitor with per-attribute hooks (`visit_Call_func`) take libcst's own path.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from importlib.metadata import PackageNotFoundError, version

import libcst as cst

# the libcst release FIELDS was generated from (python -m porter.codemods.cstwalk prints it again)
LIBCST_VERSION = "1.9.0"

# node class -> the fields `_visit_and_replace_children` visits, in its order
FIELDS: dict[str, tuple[str, ...]] = {
    "Add": ("whitespace_before", "whitespace_after"),
    "AddAssign": ("whitespace_before", "whitespace_after"),
    "And": ("whitespace_before", "whitespace_after"),
    "AnnAssign": ("target", "annotation", "equal", "value", "semicolon"),
    "Annotation": ("whitespace_before_indicator", "whitespace_after_indicator", "annotation"),
    "Arg": ("whitespace_after_star", "keyword", "equal", "value", "comma", "whitespace_after_arg"),
    "AsName": ("whitespace_before_as", "name", "whitespace_after_as"),
    "Assert": ("whitespace_after_assert", "test", "comma", "msg", "semicolon"),
    "Assign": ("targets", "value", "semicolon"),
    "AssignEqual": ("whitespace_before", "whitespace_after"),
    "AssignTarget": ("target", "whitespace_before_equal", "whitespace_after_equal"),
    "Asynchronous": ("whitespace_after",),
    "Attribute": ("lpar", "value", "dot", "attr", "rpar"),
    "AugAssign": ("target", "operator", "value", "semicolon"),
    "Await": ("lpar", "whitespace_after_await", "expression", "rpar"),
    "BinaryOperation": ("lpar", "left", "operator", "right", "rpar"),
    "BitAnd": ("whitespace_before", "whitespace_after"),
    "BitAndAssign": ("whitespace_before", "whitespace_after"),
    "BitInvert": ("whitespace_after",),
    "BitOr": ("whitespace_before", "whitespace_after"),
    "BitOrAssign": ("whitespace_before", "whitespace_after"),
    "BitXor": ("whitespace_before", "whitespace_after"),
    "BitXorAssign": ("whitespace_before", "whitespace_after"),
    "BooleanOperation": ("lpar", "left", "operator", "right", "rpar"),
    "Break": ("semicolon",),
    "Call": ("lpar", "func", "whitespace_after_func", "whitespace_before_args", "args", "rpar"),
    "ClassDef": (
        "leading_lines",
        "decorators",
        "lines_after_decorators",
        "whitespace_after_class",
        "name",
        "whitespace_after_name",
        "type_parameters",
        "whitespace_after_type_parameters",
        "lpar",
        "bases",
        "keywords",
        "rpar",
        "whitespace_before_colon",
        "body",
    ),
    "Colon": ("whitespace_before", "whitespace_after"),
    "Comma": ("whitespace_before", "whitespace_after"),
    "Comment": (),
    "CompFor": (
        "whitespace_before",
        "asynchronous",
        "whitespace_after_for",
        "target",
        "whitespace_before_in",
        "whitespace_after_in",
        "iter",
        "ifs",
        "inner_for_in",
    ),
    "CompIf": ("whitespace_before", "whitespace_before_test", "test"),
    "Comparison": ("lpar", "left", "comparisons", "rpar"),
    "ComparisonTarget": ("operator", "comparator"),
    "ConcatenatedString": ("lpar", "left", "whitespace_between", "right", "rpar"),
    "Continue": ("semicolon",),
    "Decorator": ("leading_lines", "whitespace_after_at", "decorator", "trailing_whitespace"),
    "Del": ("target", "whitespace_after_del", "semicolon"),
    "Dict": ("lpar", "lbrace", "elements", "rbrace", "rpar"),
    "DictComp": (
        "lpar",
        "lbrace",
        "key",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "value",
        "for_in",
        "rbrace",
        "rpar",
    ),
    "DictElement": ("key", "whitespace_before_colon", "whitespace_after_colon", "value", "comma"),
    "Divide": ("whitespace_before", "whitespace_after"),
    "DivideAssign": ("whitespace_before", "whitespace_after"),
    "Dot": ("whitespace_before", "whitespace_after"),
    "Element": ("value", "comma"),
    "Ellipsis": ("lpar", "rpar"),
    "Else": ("leading_lines", "whitespace_before_colon", "body"),
    "EmptyLine": ("whitespace", "comment", "newline"),
    "Equal": ("whitespace_before", "whitespace_after"),
    "ExceptHandler": ("leading_lines", "whitespace_after_except", "type", "name", "whitespace_before_colon", "body"),
    "ExceptStarHandler": (
        "leading_lines",
        "whitespace_after_except",
        "whitespace_after_star",
        "type",
        "name",
        "whitespace_before_colon",
        "body",
    ),
    "Expr": ("value", "semicolon"),
    "Finally": ("leading_lines", "whitespace_before_colon", "body"),
    "Float": ("lpar", "rpar"),
    "FloorDivide": ("whitespace_before", "whitespace_after"),
    "FloorDivideAssign": ("whitespace_before", "whitespace_after"),
    "For": (
        "leading_lines",
        "asynchronous",
        "whitespace_after_for",
        "target",
        "whitespace_before_in",
        "whitespace_after_in",
        "iter",
        "whitespace_before_colon",
        "body",
        "orelse",
    ),
    "FormattedString": ("lpar", "parts", "rpar"),
    "FormattedStringExpression": (
        "whitespace_before_expression",
        "expression",
        "equal",
        "whitespace_after_expression",
        "format_spec",
    ),
    "FormattedStringText": (),
    "From": ("whitespace_before_from", "whitespace_after_from", "item"),
    "FunctionDef": (
        "leading_lines",
        "decorators",
        "lines_after_decorators",
        "asynchronous",
        "whitespace_after_def",
        "name",
        "whitespace_after_name",
        "type_parameters",
        "whitespace_after_type_parameters",
        "whitespace_before_params",
        "params",
        "returns",
        "whitespace_before_colon",
        "body",
    ),
    "GeneratorExp": ("lpar", "elt", "for_in", "rpar"),
    "Global": ("whitespace_after_global", "names", "semicolon"),
    "GreaterThan": ("whitespace_before", "whitespace_after"),
    "GreaterThanEqual": ("whitespace_before", "whitespace_after"),
    "If": ("leading_lines", "whitespace_before_test", "test", "whitespace_after_test", "body", "orelse"),
    "IfExp": (
        "lpar",
        "body",
        "whitespace_before_if",
        "whitespace_after_if",
        "test",
        "whitespace_before_else",
        "whitespace_after_else",
        "orelse",
        "rpar",
    ),
    "Imaginary": ("lpar", "rpar"),
    "Import": ("whitespace_after_import", "names", "semicolon"),
    "ImportAlias": ("name", "asname", "comma"),
    "ImportFrom": (
        "whitespace_after_from",
        "relative",
        "module",
        "whitespace_before_import",
        "whitespace_after_import",
        "lpar",
        "names",
        "rpar",
        "semicolon",
    ),
    "ImportStar": (),
    "In": ("whitespace_before", "whitespace_after"),
    "IndentedBlock": ("header", "body", "footer"),
    "Index": ("whitespace_after_star", "value"),
    "Integer": ("lpar", "rpar"),
    "Is": ("whitespace_before", "whitespace_after"),
    "IsNot": ("whitespace_before", "whitespace_between", "whitespace_after"),
    "Lambda": ("lpar", "whitespace_after_lambda", "params", "colon", "body", "rpar"),
    "LazyImport": ("whitespace_after_lazy", "whitespace_after_import", "names", "semicolon"),
    "LazyImportFrom": (
        "whitespace_after_lazy",
        "whitespace_after_from",
        "relative",
        "module",
        "whitespace_before_import",
        "whitespace_after_import",
        "lpar",
        "names",
        "rpar",
        "semicolon",
    ),
    "LeftCurlyBrace": ("whitespace_after",),
    "LeftParen": ("whitespace_after",),
    "LeftShift": ("whitespace_before", "whitespace_after"),
    "LeftShiftAssign": ("whitespace_before", "whitespace_after"),
    "LeftSquareBracket": ("whitespace_after",),
    "LessThan": ("whitespace_before", "whitespace_after"),
    "LessThanEqual": ("whitespace_before", "whitespace_after"),
    "List": ("lpar", "lbracket", "elements", "rbracket", "rpar"),
    "ListComp": ("lpar", "lbracket", "elt", "for_in", "rbracket", "rpar"),
    "Match": (
        "leading_lines",
        "whitespace_after_match",
        "subject",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "cases",
        "footer",
    ),
    "MatchAs": ("lpar", "pattern", "whitespace_before_as", "whitespace_after_as", "name", "rpar"),
    "MatchCase": (
        "leading_lines",
        "whitespace_after_case",
        "pattern",
        "whitespace_before_if",
        "whitespace_after_if",
        "guard",
        "whitespace_before_colon",
        "body",
    ),
    "MatchClass": (
        "lpar",
        "cls",
        "whitespace_after_cls",
        "whitespace_before_patterns",
        "patterns",
        "kwds",
        "whitespace_after_kwds",
        "rpar",
    ),
    "MatchKeywordElement": ("key", "whitespace_before_equal", "whitespace_after_equal", "pattern", "comma"),
    "MatchList": ("lpar", "lbracket", "patterns", "rbracket", "rpar"),
    "MatchMapping": (
        "lpar",
        "lbrace",
        "elements",
        "whitespace_before_rest",
        "rest",
        "trailing_comma",
        "rbrace",
        "rpar",
    ),
    "MatchMappingElement": ("key", "whitespace_before_colon", "whitespace_after_colon", "pattern", "comma"),
    "MatchOr": ("lpar", "patterns", "rpar"),
    "MatchOrElement": ("pattern", "separator"),
    "MatchSequenceElement": ("value", "comma"),
    "MatchSingleton": ("value",),
    "MatchStar": ("whitespace_before_name", "name", "comma"),
    "MatchTuple": ("lpar", "patterns", "rpar"),
    "MatchValue": ("value",),
    "MatrixMultiply": ("whitespace_before", "whitespace_after"),
    "MatrixMultiplyAssign": ("whitespace_before", "whitespace_after"),
    "Minus": ("whitespace_after",),
    "Module": ("header", "body", "footer"),
    "Modulo": ("whitespace_before", "whitespace_after"),
    "ModuloAssign": ("whitespace_before", "whitespace_after"),
    "Multiply": ("whitespace_before", "whitespace_after"),
    "MultiplyAssign": ("whitespace_before", "whitespace_after"),
    "Name": ("lpar", "rpar"),
    "NameItem": ("name", "comma"),
    "NamedExpr": ("lpar", "target", "whitespace_before_walrus", "whitespace_after_walrus", "value", "rpar"),
    "Newline": (),
    "Nonlocal": ("whitespace_after_nonlocal", "names", "semicolon"),
    "Not": ("whitespace_after",),
    "NotEqual": ("whitespace_before", "whitespace_after"),
    "NotIn": ("whitespace_before", "whitespace_between", "whitespace_after"),
    "Or": ("whitespace_before", "whitespace_after"),
    "Param": ("whitespace_after_star", "name", "annotation", "equal", "default", "comma", "whitespace_after_param"),
    "ParamSlash": ("comma", "whitespace_after"),
    "ParamSpec": ("name", "whitespace_after_star"),
    "ParamStar": ("comma",),
    "Parameters": ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    "ParenthesizedWhitespace": ("first_line", "empty_lines", "last_line"),
    "Pass": ("semicolon",),
    "Plus": ("whitespace_after",),
    "Power": ("whitespace_before", "whitespace_after"),
    "PowerAssign": ("whitespace_before", "whitespace_after"),
    "Raise": ("whitespace_after_raise", "exc", "cause", "semicolon"),
    "Return": ("whitespace_after_return", "value", "semicolon"),
    "RightCurlyBrace": ("whitespace_before",),
    "RightParen": ("whitespace_before",),
    "RightShift": ("whitespace_before", "whitespace_after"),
    "RightShiftAssign": ("whitespace_before", "whitespace_after"),
    "RightSquareBracket": ("whitespace_before",),
    "Semicolon": ("whitespace_before", "whitespace_after"),
    "Set": ("lpar", "lbrace", "elements", "rbrace", "rpar"),
    "SetComp": ("lpar", "lbrace", "elt", "for_in", "rbrace", "rpar"),
    "SimpleStatementLine": ("leading_lines", "body", "trailing_whitespace"),
    "SimpleStatementSuite": ("leading_whitespace", "body", "trailing_whitespace"),
    "SimpleString": ("lpar", "rpar"),
    "SimpleWhitespace": (),
    "Slice": ("lower", "first_colon", "upper", "second_colon", "step"),
    "StarredDictComp": ("lpar", "lbrace", "whitespace_before_value", "value", "for_in", "rbrace", "rpar"),
    "StarredDictElement": ("whitespace_before_value", "value", "comma"),
    "StarredElement": ("lpar", "whitespace_before_value", "value", "rpar", "comma"),
    "Subscript": ("lpar", "value", "whitespace_after_value", "lbracket", "slice", "rbracket", "rpar"),
    "SubscriptElement": ("slice", "comma"),
    "Subtract": ("whitespace_before", "whitespace_after"),
    "SubtractAssign": ("whitespace_before", "whitespace_after"),
    "TemplatedString": ("lpar", "parts", "rpar"),
    "TemplatedStringExpression": (
        "whitespace_before_expression",
        "expression",
        "equal",
        "whitespace_after_expression",
        "format_spec",
    ),
    "TemplatedStringText": (),
    "TrailingWhitespace": ("whitespace", "comment", "newline"),
    "Try": ("leading_lines", "whitespace_before_colon", "body", "handlers", "orelse", "finalbody"),
    "TryStar": ("leading_lines", "whitespace_before_colon", "body", "handlers", "orelse", "finalbody"),
    "Tuple": ("lpar", "elements", "rpar"),
    "TypeAlias": (
        "whitespace_after_type",
        "name",
        "whitespace_after_name",
        "type_parameters",
        "whitespace_after_type_parameters",
        "whitespace_after_equals",
        "value",
        "semicolon",
    ),
    "TypeParam": ("param", "equal", "whitespace_after_star", "default", "comma"),
    "TypeParameters": ("lbracket", "params", "rbracket"),
    "TypeVar": ("name", "colon", "bound"),
    "TypeVarTuple": ("name", "whitespace_after_star"),
    "UnaryOperation": ("lpar", "operator", "expression", "rpar"),
    "While": ("leading_lines", "whitespace_after_while", "test", "whitespace_before_colon", "body", "orelse"),
    "With": (
        "leading_lines",
        "asynchronous",
        "whitespace_after_with",
        "lpar",
        "items",
        "rpar",
        "whitespace_before_colon",
        "body",
    ),
    "WithItem": ("item", "asname", "comma"),
    "Yield": ("lpar", "whitespace_after_yield", "value", "rpar"),
}


def _libcst_version() -> str | None:
    try:
        return version("libcst")
    except PackageNotFoundError:  # pragma: no cover - libcst imported, so installed
        return None


# whether the installed libcst is the release FIELDS was made from
KNOWN_LIBCST = _libcst_version() == LIBCST_VERSION


def _by_class() -> dict[type, tuple[str, ...]]:
    if not KNOWN_LIBCST:
        return {}  # every node takes libcst's own path
    out: dict[type, tuple[str, ...]] = {}
    for name, fields in FIELDS.items():
        cls = getattr(cst, name, None)
        if isinstance(cls, type):
            out[cls] = fields
    return out


_ORDER = _by_class()
ORDER = _ORDER  # (public: family.walk inlines `children`)
_DEFAULT = cst.MaybeSentinel.DEFAULT
_NODE = cst.CSTNode


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`: the same nodes in the same order, read from the node's fields."""
    fields = _ORDER.get(type(node))
    return node.children if fields is None else _in_fields(node, fields)


def _in_fields(node: cst.CSTNode, fields: Sequence[str]) -> list[cst.CSTNode]:
    """The nodes `node` holds in `fields`, in their order."""
    out: list[cst.CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        # a field libcst visits holds a node, a sequence of nodes (a tuple or list), None or
        # MaybeSentinel.DEFAULT: told by exact types, as isinstance() on libcst's ABCs is slow
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(value)
        elif value is not None and value is not _DEFAULT:
            out.append(value)
    return out


# a per-attribute hook (`visit_Call_func`, `leave_Arg_keyword`), which libcst calls between
# a node's fields and `visit` does not
_ATTRIBUTE_HOOK = re.compile(r"(?:visit|leave)_[A-Z][A-Za-z]*_")


def _plain(cls: type) -> bool:
    """Whether `visit` may stand for `node.visit` with a visitor of this class: a
    `cst.CSTVisitor` that defines no per-attribute hook of its own."""
    if not issubclass(cls, cst.CSTVisitor):
        return False
    for klass in cls.__mro__:
        if klass is cst.CSTVisitor:
            return True
        if any(
            name in ("on_visit_attribute", "on_leave_attribute") or _ATTRIBUTE_HOOK.match(name) for name in vars(klass)
        ):
            return False
    return False  # pragma: no cover - a CSTVisitor has it in its MRO


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only looks (`cst.CSTVisitor`): the same
    `on_visit` and `on_leave` calls on the same nodes, in the same order, without the copies.
    A visitor that keeps libcst's `on_visit` / `on_leave` is called only where it has a
    `visit_<Node>` / `leave_<Node>` method (libcst's calls elsewhere do nothing), and never
    inside whitespace, comments, commas, brackets or operators when it has no method for those."""
    cls = type(visitor)
    if not _ORDER or not _plain(cls):
        node.visit(visitor)
        return
    if cls.on_visit is not cst.CSTVisitor.on_visit or cls.on_leave is not cst.CSTVisitor.on_leave:
        if getattr(cls, "ignores_trivia", False) and _TRIVIA_NAMES.isdisjoint(_own_methods(cls)):
            _visit_code(node, visitor.on_visit, visitor.on_leave)
        else:
            _visit(node, visitor.on_visit, visitor.on_leave)
        return
    visits: dict[str, Callable[[cst.CSTNode], object]] = {}
    leaves: dict[str, Callable[[cst.CSTNode], object]] = {}
    for klass in cls.__mro__:
        if klass is cst.CSTVisitor:
            break
        for name in vars(klass):
            if name.startswith("visit_") and name[6:] not in visits:
                visits[name[6:]] = getattr(visitor, name)
            elif name.startswith("leave_") and name[6:] not in leaves:
                leaves[name[6:]] = getattr(visitor, name)
    skip = _TRIVIA if _TRIVIA_NAMES.isdisjoint(visits) and _TRIVIA_NAMES.isdisjoint(leaves) else frozenset()
    _dispatch(node, visits, leaves, skip)


def _visit(node: cst.CSTNode, on_visit: Callable[[cst.CSTNode], bool], on_leave: Callable[[cst.CSTNode], None]) -> None:
    if on_visit(node):
        for child in children(node):
            _visit(child, on_visit, on_leave)
    on_leave(node)


def _own_methods(cls: type) -> set[str]:
    """The node names of the `visit_` / `leave_` methods a visitor class defines (not libcst's)."""
    out: set[str] = set()
    for klass in cls.__mro__:
        if klass is cst.CSTVisitor:
            break
        out.update(name[6:] for name in vars(klass) if name.startswith(("visit_", "leave_")))
    return out


def _visit_code(
    node: cst.CSTNode, on_visit: Callable[[cst.CSTNode], bool], on_leave: Callable[[cst.CSTNode], None]
) -> None:
    """`_visit` that does not enter whitespace, comments, punctuation or operators, nor read
    the fields that hold only those (`CODE_ORDER`): for a visitor whose own `on_visit` and
    `on_leave` say they do nothing with such nodes (`ignores_trivia = True`) and that has no
    method for them."""
    if on_visit(node):
        fields = CODE_ORDER.get(type(node))
        found: Sequence[cst.CSTNode] = node.children if fields is None else _in_fields(node, fields)
        for child in found:
            if type(child) not in _TRIVIA:
                _visit_code(child, on_visit, on_leave)
    on_leave(node)


def _dispatch(
    node: cst.CSTNode,
    visits: dict[str, Callable[[cst.CSTNode], object]],
    leaves: dict[str, Callable[[cst.CSTNode], object]],
    skip: frozenset[type],
) -> None:
    """libcst's `CSTVisitor.on_visit` / `on_leave` with the methods looked up once: children
    are visited unless `visit_<Node>` returned False; nodes of a `skip` type are left out."""
    name = type(node).__name__
    fn = visits.get(name)
    if fn is None or fn(node) is not False:
        for child in children(node):
            if type(child) not in skip:
                _dispatch(child, visits, leaves, skip)
    fn = leaves.get(name)
    if fn is not None:
        fn(node)


def transform(
    module: cst.Module,
    on_visit: Callable[[cst.CSTNode], bool],
    on_leave: Callable[[cst.CSTNode, cst.CSTNode], object],
    skip: frozenset[type] = frozenset(),
) -> object:
    """`module.visit(transformer)` for a transformer whose `on_visit_attribute` /
    `on_leave_attribute` do nothing, given its `on_visit` and `on_leave`: the same calls on the
    same nodes, in the same order, each handed the same `updated` node as far as its fields and
    text go, but a node none of whose children came back replaced is handed (as `updated`)
    itself rather than a copy, and only a node with a replaced child is rebuilt (by libcst's
    own `_visit_and_replace_children`, fed the children's results). Nodes of a `skip` type (the
    transformer does nothing with them or inside them) are not entered. Another libcst version
    than `FIELDS`'s takes libcst's own walk."""
    if not _ORDER:
        return module.visit(_Calls(on_visit, on_leave))
    result = _transformed(module, on_visit, on_leave, skip)
    if isinstance(result, cst.RemovalSentinel):
        return module.with_changes(body=(), header=(), footer=())  # (libcst's Module.visit)
    return result


def _transformed(
    node: cst.CSTNode,
    on_visit: Callable[[cst.CSTNode], bool],
    on_leave: Callable[[cst.CSTNode, cst.CSTNode], object],
    skip: frozenset[type],
) -> object:
    updated = node
    if on_visit(node):
        # skipping the trivia, the fields that hold nothing else are not read (`CODE_ORDER`):
        # the results are then those of the other children, the trivia put back on a rebuild
        code = skip is _TRIVIA
        fields = (CODE_ORDER if code else _ORDER).get(type(node))
        if fields is None:  # (a class FIELDS does not know: libcst's walk below it)
            updated = node._visit_and_replace_children(_Calls(on_visit, on_leave))
        else:
            results: list[object] = []
            replaced = False
            for name in fields:
                value = getattr(node, name)
                if value is None or value is _DEFAULT:
                    continue
                kind = type(value)
                for child in value if kind is tuple or kind is list else (value,):
                    if type(child) in skip:
                        if not code:
                            results.append(child)
                        continue
                    out = _transformed(child, on_visit, on_leave, skip)
                    results.append(out)
                    replaced = replaced or out is not child
            if replaced:
                updated = node._visit_and_replace_children(_Replay(_with_trivia(node, results) if code else results))
    result = on_leave(node, updated)
    if result is not updated and not isinstance(result, (_NODE, cst.RemovalSentinel, cst.FlattenSentinel)):
        raise cst.CSTValidationError(
            f"Expected a node of type CSTNode or a RemovalSentinel, but got a return value of {type(result).__name__}"
        )
    return result


def _with_trivia(node: cst.CSTNode, results: list[object]) -> list[object]:
    """The results of `node`'s children that are not trivia, in order, with each trivia child
    (itself: not entered) put back where libcst's walk visits it, for `_Replay`."""
    given = iter(results)
    out: list[object] = []
    for name in _ORDER[type(node)]:
        value = getattr(node, name)
        if value is None or value is _DEFAULT:
            continue
        kind = type(value)
        for child in value if kind is tuple or kind is list else (value,):
            out.append(child if type(child) in _TRIVIA else next(given))
    return out


class _Calls(cst.CSTTransformer):
    """A transformer made of an `on_visit` and an `on_leave` (libcst's walk with them)."""

    def __init__(self, on_visit: Callable[[cst.CSTNode], bool], on_leave: Callable[..., object]) -> None:
        super().__init__()
        self._on_visit = on_visit
        self._on_leave = on_leave

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self._on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        return self._on_leave(original_node, updated_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


class _Replay(cst.CSTTransformer):
    """Hands `_visit_and_replace_children` each child's result, worked out already, in the
    order it visits them (libcst then drops removed children, splices flattened ones and
    validates the node it builds, as in its own walk)."""

    def __init__(self, results: list[object]) -> None:
        super().__init__()
        self._results = iter(results)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> object:  # type: ignore[override]
        return next(self._results)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


def _trivia() -> frozenset[type]:
    """Node classes whose subtrees hold nothing but whitespace, comments, punctuation and
    operators (each of their fields is one of these classes: tests/codemods/test_cstwalk.py)."""
    names = [
        "SimpleWhitespace",
        "ParenthesizedWhitespace",
        "TrailingWhitespace",
        "EmptyLine",
        "Comment",
        "Newline",
        "Comma",
        "Dot",
        "Colon",
        "Semicolon",
        "AssignEqual",
        "LeftParen",
        "RightParen",
        "LeftSquareBracket",
        "RightSquareBracket",
        "LeftCurlyBrace",
        "RightCurlyBrace",
        "ImportStar",
        "Asynchronous",
    ]
    out = {getattr(cst, n) for n in names}
    for base in (cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp):
        out.update(
            getattr(cst, n)
            for n in FIELDS
            if isinstance(getattr(cst, n, None), type) and issubclass(getattr(cst, n), base)
        )
    return frozenset(out)


_TRIVIA = _trivia()
_TRIVIA_NAMES = frozenset(c.__name__ for c in _TRIVIA)
# (public, for a transformer that does nothing with these nodes: `transform`'s `skip`)
TRIVIA = _TRIVIA
TRIVIA_NAMES = _TRIVIA_NAMES


def _holds_code(annotation: object) -> bool:
    """Whether a field annotated so may hold a node that is not `TRIVIA`: a union or sequence
    any of whose members may, a node class any of whose kinds (itself, its subclasses that
    libcst makes) is not trivia; not None or MaybeSentinel. Anything else may."""
    if typing.get_origin(annotation) is not None:
        return any(_holds_code(a) for a in typing.get_args(annotation))
    if annotation is type(None) or annotation is cst.MaybeSentinel:
        return False
    if not (isinstance(annotation, type) and issubclass(annotation, cst.CSTNode)):
        return True
    todo = [annotation]
    while todo:
        kind = todo.pop()
        subclasses = kind.__subclasses__()
        todo.extend(subclasses)
        # (a class libcst's `add_slots` replaced lingers among the subclasses: not one it makes)
        made = kind in _ORDER or (not subclasses and getattr(cst, kind.__name__, None) is kind)
        if made and kind not in _TRIVIA:
            return True
    return False


def _code_order() -> dict[type, tuple[str, ...]]:
    """`ORDER` less the fields whose annotations say they hold trivia only (`whitespace_*`,
    `lpar`, `comma`, an operator): where a class's annotations cannot be read, all its fields."""
    out: dict[type, tuple[str, ...]] = {}
    for cls, fields in _ORDER.items():
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # (another libcst's annotations: every field, as `ORDER`)
            out[cls] = fields
            continue
        out[cls] = tuple(f for f in fields if f not in hints or _holds_code(hints[f]))
    return out


# (public: family.code_nodes) the fields of each class that may hold a node outside `TRIVIA`,
# in `ORDER`'s order; tests/codemods/test_cstwalk.py checks the walk it makes over real code
CODE_ORDER = _code_order()


def fields_from_libcst() -> dict[str, tuple[str, ...]]:
    """`FIELDS` as the installed libcst's `_visit_and_replace_children` reads: the field names of
    its `visit_*` calls in the order Python evaluates them."""
    import ast
    import inspect
    import textwrap

    def calls(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            yield from calls(child)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("visit_")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
        ):
            yield str(node.args[1].value)

    out: dict[str, tuple[str, ...]] = {}
    for name in sorted(dir(cst)):
        cls = getattr(cst, name)
        if not (isinstance(cls, type) and issubclass(cls, cst.CSTNode)) or inspect.isabstract(cls):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls._visit_and_replace_children)))
        order: list[str] = []
        for field in calls(tree):
            if field not in order:
                order.append(field)
        out[name] = tuple(order)
    return out


if __name__ == "__main__":
    print(f'LIBCST_VERSION = "{_libcst_version()}"')
    for name, fields in fields_from_libcst().items():
        print(f"    {name!r}: {fields!r},")
