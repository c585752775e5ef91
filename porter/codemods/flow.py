"""Data flow for the codemods: what a name holds at a device site.

Across the project, through `porter.analysis.index` (parameters, attributes, returns, imports);
within one scope, `assigned_values` for the families that only look at their own function.
Anything porter cannot see is not guessed at: the caller flags the site with the chain.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import libcst as cst

from porter.analysis.kinds import MoveKind, NameKind
from porter.analysis.program import attributes_key, move_key, origin_key, stale_key
from porter.analysis.index import ProjectIndex
from porter.analysis.resolve import dotted, iter_statements, small_statements
from porter.codemods import cstwalk
from porter.config.settings import Settings


class Reading(NamedTuple):
    """What the caller reads of the file's names for the flow's reading of which statements run: whether a `with`
    statement's context manager may swallow an exception its body raises (`contextlib.suppress(...)`, one the file
    defines: its body may then stop part way and the code after it run), a name's qualified name (`sys.exit`,
    `typing.TYPE_CHECKING`), and the file's own top-level class or function a name called in the walk's scope
    stands for (None: another, or none)."""

    swallows: Callable[[cst.With], bool]
    qualname: Callable[[cst.BaseExpression], str | None]
    own: Callable[[str], cst.CSTNode | None]


# the calls after which Python runs nothing more of their block (twenty-ninth read): `SystemExit` raised, the
# process ended or replaced (typeshed gives each `NoReturn`, and mypy's `--warn-unreachable` reads them so)
NEVER_RETURNING = frozenset(
    ("sys.exit", "os._exit", "os.abort", "os.execv", "os.execve", "os.execl", "os.execle", "os.execlp", "os.execvp")
    + ("os.execlpe", "os.execvpe", "builtins.exit", "builtins.quit")
)
# ... and the return annotations that say so of a function of the file (`def die() -> NoReturn:`)
NO_RETURN_TYPES = frozenset(f"{m}.{t}" for m in ("typing", "typing_extensions") for t in ("NoReturn", "Never"))
# the names that are a constant `False` when Python runs the code (true for type checkers alone): `if
# TYPE_CHECKING:` never runs
RUN_TIME_FALSE = frozenset(("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"))


def assigned_values(scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str) -> list[cst.BaseExpression]:
    """Values of `name = value` statements directly in `scope`'s body (not nested defs)."""
    values: list[cst.BaseExpression] = []
    body = scope if isinstance(scope, cst.Module) else scope.body
    for small in small_statements(body, into_defs=False):
        if isinstance(small, cst.Assign):
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                values.append(small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == name:
                values.append(small.value)
    return values


def last_binding(
    scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str
) -> tuple[cst.BaseExpression, int | None] | None:
    """The value of the last `name = value` directly in `scope`'s body, with the place of `name` where
    it is unpacked from a flat tuple or list target (`a, name = value`: 1); None where none binds it."""
    return next(bindings(scope, name), None)


def bindings(
    scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str
) -> Iterator[tuple[cst.BaseExpression, int | None]]:
    """Every `name = value` directly in `scope`'s body (branches too, not nested defs), as `last_binding`
    gives one, the last in the source first: `iter_statements` walks a stack, last statement first."""
    body = scope if isinstance(scope, cst.Module) else scope.body
    for stmt in iter_statements(body, into_defs=False):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in reversed(stmt.body):
                found = _binding(small, name)
                if found is not None:
                    yield found


def binding_before(
    scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str, use: cst.BaseSmallStatement
) -> tuple[cst.BaseExpression, int | None] | None:
    """`last_binding` among those written before the small statement `use` of the scope: the one a use
    reads, where the name is bound again after it (`args.x = True` then `args = other()`); None where none
    precedes it. The same walk, last statement first, skipping those up to `use`."""
    body = scope if isinstance(scope, cst.Module) else scope.body
    seen = False
    for stmt in iter_statements(body, into_defs=False):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in reversed(stmt.body):
                seen = seen or small is use
                found = _binding(small, name) if seen and small is not use else None
                if found is not None:
                    return found
    return None


def reaching_bindings(
    scope: cst.Module | cst.FunctionDef | cst.Lambda, name: str, reading: Reading
) -> list[tuple[cst.BaseExpression, int | None]]:
    """The bindings of `name` that may hold at the end of `scope`: the last one written directly in its
    body (or in a block that always runs with it: `_always_run`) and every one after it in a branch or loop
    (`if c: name = a` / `else: name = b`: both), the last in the source first; all of them where none is
    written directly in the body."""
    body = scope if isinstance(scope, cst.Module) else scope.body
    top = _always_run(body.body if isinstance(body, (cst.Module, cst.IndentedBlock)) else (), reading)
    dead = dead_statements(body, reading)
    out: list[tuple[cst.BaseExpression, int | None]] = []
    for stmt in iter_statements(body, into_defs=False):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and id(stmt) not in dead:
            for small in reversed(stmt.body):
                found = _binding(small, name)
                if found is not None:
                    out.append(found)
                    if id(stmt) in top:
                        return out
    return out


def reaching_before(
    scope: cst.Module | cst.FunctionDef | cst.Lambda,
    name: str,
    use: cst.CSTNode,
    path: Sequence[cst.CSTNode],
    reading: Reading,
) -> list[tuple[cst.BaseExpression, int | None]]:
    """The bindings of `name` that may reach `use`, a small statement of `scope`, or a compound one whose header
    reads it (`if kernelize(...):`; `path`: the statements that hold it, outermost first, as the rewrite's walk
    keeps them): those written before it, the last in the source first, up to one in a block on the way to
    `use`, which every path to it passes. A binding after `use` (`F = False; kernelize(m, use_fallback=F);
    F = True`), or in the blocks of the compound statement whose header it is, is not read, nor one later in a
    loop."""
    body = scope if isinstance(scope, cst.Module) else scope.body
    passed = _blocks_on_path(body, path, reading)
    out: list[tuple[cst.BaseExpression, int | None]] = []
    for stmt, small, before in _smalls_around(body, use, _other_branches(path) | dead_statements(body, reading)):
        found = _binding(small, name) if before else None
        if found is not None:
            out.append(found)
            if id(stmt) in passed:
                return out
    return out


def reaching_next_pass(
    name: str, use: cst.CSTNode, path: Sequence[cst.CSTNode], reading: Reading
) -> list[tuple[cst.BaseExpression, int | None]]:
    """The bindings of `name` after `use` in each loop of `path` that holds it, which reach `use` at that loop's
    next pass (`for m in ms: kernelize(m, use_fallback=F); F = False`; an outer loop's too, after the inner
    loop: `for ms in g: for m in ms: kernelize(m, ...)` / `F = False`), a `while` whose header is `use`
    included (not a `for`'s: its iterable is read once)."""
    out: list[tuple[cst.BaseExpression, int | None]] = []
    for at in range(len(path) - 1, -1, -1):
        loop = path[at]
        if isinstance(loop, cst.While) or (isinstance(loop, cst.For) and loop is not use):
            out += _next_pass(name, use, loop, path[at:], reading)
    return out


def _next_pass(
    name: str, use: cst.CSTNode, loop: cst.For | cst.While, path: Sequence[cst.CSTNode], reading: Reading
) -> list[tuple[cst.BaseExpression, int | None]]:
    """`reaching_next_pass` for one loop (`path` starts at it): the last binding after `use` in a block every
    pass runs and those in branches after that one; none where such a block binds `name` before `use` (the
    next pass rebinds it first)."""
    passed = _blocks_on_path(loop.body, path, reading)
    out: list[tuple[cst.BaseExpression, int | None]] = []
    stop = False
    for stmt, small, before in _smalls_around(loop.body, use, dead_statements(loop.body, reading)):
        found = _binding(small, name)
        if found is not None and before and id(stmt) in passed:
            return []
        if found is not None and not before and not stop:
            out.append(found)
            stop = id(stmt) in passed
    return out


def _smalls_around(
    body: cst.CSTNode, use: cst.CSTNode, skip: set[int]
) -> Iterator[tuple[cst.CSTNode, cst.BaseSmallStatement, bool]]:
    """(its line, a small statement, whether it is written before `use`) for the small statements of `body` but
    `use` and those of the lines in `skip`, the last in the source first (`iter_statements` walks a stack). A
    compound `use` (a read in its header) is yielded before the statements of its blocks: they follow it in the
    source, so "before" begins after the last of them."""
    seen = False
    inside: set[int] = set()
    for stmt in iter_statements(body, into_defs=False):
        if stmt is use:
            inside = {id(s) for s in iter_statements(use, into_defs=False)}
        seen = seen or (bool(inside) and id(stmt) not in inside)
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) or id(stmt) in skip:
            continue
        for small in reversed(stmt.body):
            seen = seen or small is use
            if small is not use:
                yield stmt, small, seen


def statement_path(body: cst.CSTNode, value: cst.BaseExpression) -> tuple[cst.BaseSmallStatement | None, list]:
    """The small statement of `body` whose value is `value` (a binding `reaching_before` gave) and the statements
    that hold it, outermost first, ending with its line: as the rewrite's walk keeps them where it is visited,
    for a read at a statement the walk is not in (HF016: the names inside a bound value). (None, []) where none
    is. A walk of the statements only, made at the site that asks."""
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(body, [])]
    while stack:
        node, path = stack.pop()
        for stmt in _block_statements(node):
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                small = next((s for s in stmt.body if getattr(s, "value", None) is value), None)
                if small is not None:
                    return small, [*path, stmt]
            elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                stack += [(block, [*path, stmt]) for block in _compound_blocks(stmt)]
    return None, []


def _block_statements(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statements a block holds: an indented body's; a one-line suite, or an `elif`, itself."""
    if isinstance(node, (cst.Module, cst.IndentedBlock)):
        return node.body
    return [node] if isinstance(node, (cst.SimpleStatementSuite, cst.If)) else []


def _compound_blocks(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The blocks of a compound statement (its body, `else`, `finally`, handlers, cases; an `elif` as itself)."""
    found = [getattr(stmt, "body", None)]
    for attr in ("orelse", "finalbody"):
        extra = getattr(stmt, attr, None)
        found.append(extra if isinstance(extra, cst.If) else getattr(extra, "body", None))
    found += [h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
    return [b for b in found if isinstance(b, cst.CSTNode)]


def holding_small(line: cst.CSTNode, node: cst.CSTNode) -> cst.BaseSmallStatement | None:
    """The small statement of a simple statement `line` that holds `node` anywhere in it (`m =
    kernelize(...).eval()`, `return kernelize(...)`); None where none does. A walk of that line only."""
    if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    for small in line.body:
        stack: list[cst.CSTNode] = [small]
        while stack:  # by hand: a libcst visitor would dispatch on every node; this needs identity only
            here = stack.pop()
            if here is node:
                return small
            stack.extend(cstwalk.children(here))
    return None


def _other_branches(path: Sequence[cst.CSTNode]) -> set[int]:
    """The ids of the statements in the branch of each `if` of `path` that does not hold the next statement
    of it: a binding there never reaches the last (`if c: G = False` / `else: use(G)`)."""
    other: set[int] = set()
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, cst.If):
            branches = (parent.body, parent.orelse)
            for branch in branches:
                inside = branch is not None and any(s is child for s in iter_statements(branch, into_defs=False))
                if branch is not None and not inside:
                    other.update(id(s) for s in iter_statements(branch, into_defs=False))
    return other


def _blocks_on_path(body: cst.CSTNode, path: Sequence[cst.CSTNode], reading: Reading) -> set[int]:
    """The ids of the statements in the scope's body and in each block of `path` that holds the next
    statement of it (an `if`'s body or its `else`, a handler), and of the blocks that always run with
    them (`_always_run`): those run on every way to the last."""
    passed: list[cst.CSTNode] = list(body.body) if isinstance(body, (cst.Module, cst.IndentedBlock)) else []
    for parent, child in zip(path, path[1:]):
        handlers = [h.body for h in getattr(parent, "handlers", ())]
        orelse = getattr(parent, "orelse", None)
        final = getattr(parent, "finalbody", None)
        blocks = [getattr(parent, "body", None), *handlers, getattr(orelse, "body", None), getattr(final, "body", None)]
        for block in blocks:
            if block is child:  # `if c: F = False; use(F)`: a suite on one line
                passed.append(block)
            elif isinstance(block, cst.IndentedBlock) and any(s is child for s in block.body):
                passed += block.body
    return _always_run(passed, reading)


def _always_run(statements: Sequence[cst.CSTNode], reading: Reading) -> set[int]:
    """The ids of `statements` and of the statements of the blocks Python runs whole whenever one of them runs
    to its end (twenty-seventh read): a `with`'s body (unless its context manager may swallow an exception:
    `swallows`), a `finally`, a loop's `else` where the loop has no `break` of its own. A binding there is
    read as one written beside them, not as a branch."""
    out: set[int] = set()
    stack = list(statements)
    while stack:
        stmt = stack.pop()
        out.add(id(stmt))
        if isinstance(stmt, cst.With) and not reading.swallows(stmt):
            stack += _block_statements(stmt.body)
        elif isinstance(stmt, (cst.Try, cst.TryStar)) and stmt.finalbody is not None:
            stack += _block_statements(stmt.finalbody.body)
        elif isinstance(stmt, (cst.For, cst.While)) and stmt.orelse is not None and not _breaks(stmt):
            stack += _block_statements(stmt.orelse.body)
    return out


def dead_statements(body: cst.CSTNode, reading: Reading) -> set[int]:
    """The ids of the statements of a scope's `body` that never run (twenty-eighth read): those after a
    statement of their block that never ends normally (`ends`: a `return`, a `try` whose body returns and
    whose handlers all do ...), and what they hold; a block that never runs (`_dead_blocks`). A walk of the
    statements only, made at the site that asks."""
    blocks: list[cst.CSTNode] = [body]
    dead: set[int] = set()
    for stmt in iter_statements(body, into_defs=False):
        for never in _dead_blocks(stmt, reading):
            dead.update(id(s) for s in iter_statements(never, into_defs=False))
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.FunctionDef, cst.ClassDef)):
            blocks += _compound_blocks(stmt)
    for block in blocks:
        statements = _block_statements(block)
        ending = next((at for at, s in enumerate(statements) if ends(s, reading)), len(statements))
        for later in statements[ending + 1 :]:
            dead.update(id(s) for s in iter_statements(later, into_defs=False))
    return dead


def _dead_blocks(stmt: cst.CSTNode, reading: Reading) -> list[cst.CSTNode]:
    """A statement's blocks that never run: a `try`'s `else` after a body that ends; the branch a constant test
    never takes (`if False:`, `while 0:`, an `if True:`'s `else`, which CPython's compiler drops; a `while
    True:`'s `else` too, `break` or not: only a test that fails runs it)."""
    if isinstance(stmt, (cst.Try, cst.TryStar)) and stmt.orelse is not None and _block_ends(stmt.body, reading):
        return [stmt.orelse.body]
    if not isinstance(stmt, (cst.If, cst.While)):
        return []
    known = _constant_truth(stmt.test, reading)
    if known is False:
        return [stmt.body]
    return [stmt.orelse] if known is True and stmt.orelse is not None else []


def reached(body: cst.CSTNode, use: cst.CSTNode, path: Sequence[cst.CSTNode], reading: Reading) -> bool:
    """Whether Python may run `use` (a small statement of the scope's `body`, or a compound one; `path`: the
    statements that hold it, outermost first, as the rewrite's walk keeps them): not where a statement
    before it in its line or in a block on the way ends (`dead_statements`)."""
    line = path[-1] if path else None
    smalls = getattr(line, "body", ()) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    for small in smalls:
        if small is use:
            break
        if small_ends(small, reading):
            return False
    dead = dead_statements(body, reading)
    return not any(id(s) in dead for s in (*path, use))


# a small statement after which the rest of its block never runs
_ENDING = (cst.Return, cst.Raise, cst.Break, cst.Continue)


def small_ends(small: cst.BaseSmallStatement, reading: Reading) -> bool:
    """Whether the rest of a small statement's block never runs after it: a `return`, `raise`, `break` or
    `continue`, or a call that never returns (`sys.exit(1)`, a function of the file annotated `NoReturn`)."""
    if isinstance(small, _ENDING):
        return True
    call = small.value if isinstance(small, cst.Expr) else None
    if not isinstance(call, cst.Call):
        return False
    if reading.qualname(call.func) in NEVER_RETURNING:
        return True
    own = _own_function(call.func, reading)
    returns = own.returns.annotation if own is not None and own.returns is not None else None
    if isinstance(returns, cst.SimpleString):  # `-> "NoReturn"`
        try:
            returns = cst.parse_expression(str(returns.evaluated_value))
        except (cst.ParserSyntaxError, TypeError):
            return False
    return returns is not None and reading.qualname(returns) in NO_RETURN_TYPES


def _own_function(func: cst.BaseExpression, reading: Reading) -> cst.FunctionDef | None:
    """The file's own function a call calls: a top-level one (`die()`), or a method of a top-level class called
    through the class (`Fatal.die()`); None for any other callee."""
    if isinstance(func, cst.Name):
        own = reading.own(func.value)
        return own if isinstance(own, cst.FunctionDef) else None
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    cls = reading.own(func.value.value)
    body = cls.body.body if isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock) else ()
    methods = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value]
    return methods[-1] if methods else None


def _block_ends(block: cst.CSTNode | None, reading: Reading) -> bool:
    """Whether a block never runs to its end: one of its statements ends (`ends`)."""
    return block is not None and any(ends(s, reading) for s in _block_statements(block))


def ends(stmt: cst.CSTNode, reading: Reading) -> bool:
    """Whether a statement never ends normally, as Python runs it: a line with a `return`, `raise`, `break` or
    `continue`; an `if` whose every branch ends; a `with` whose body ends (unless its context manager may
    swallow: the code after it then runs); a `try` (`_try_ends`); a loop or a `match` (`_loop_ends`,
    `_match_ends`, twenty-eighth rules2 read)."""
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(small_ends(s, reading) for s in stmt.body)
    if isinstance(stmt, cst.If):
        return _if_ends(stmt, reading)
    if isinstance(stmt, cst.With):
        return not reading.swallows(stmt) and _block_ends(stmt.body, reading)
    if isinstance(stmt, (cst.For, cst.While)):
        return _loop_ends(stmt, reading)
    if isinstance(stmt, cst.Match):
        return _match_ends(stmt, reading)
    return isinstance(stmt, (cst.Try, cst.TryStar)) and _try_ends(stmt, reading)


def _if_ends(stmt: cst.If, reading: Reading) -> bool:
    """An `if` never ends normally where every branch ends, or where its test is a constant (`if True:`) the
    branch it always takes ends."""
    body = _block_ends(stmt.body, reading)
    other = stmt.orelse is not None and _ends_else(stmt.orelse, reading)
    known = _constant_truth(stmt.test, reading)
    if known is None:
        return body and other
    return body if known else other


def _try_ends(stmt: cst.Try | cst.TryStar, reading: Reading) -> bool:
    """A `try` never ends normally where its `finally` ends, or its body (or `else`) and every handler end (a
    handler may run after any statement of the body)."""
    if stmt.finalbody is not None and _block_ends(stmt.finalbody.body, reading):
        return True
    body = _block_ends(stmt.body, reading) or (stmt.orelse is not None and _block_ends(stmt.orelse.body, reading))
    return body and all(_block_ends(h.body, reading) for h in stmt.handlers)


def _loop_ends(loop: cst.For | cst.While, reading: Reading) -> bool:
    """A loop with no `break` of its own never ends normally where it never stops (`while True:`) or its `else`,
    which then always runs, ends. One with a `break` goes on after it."""
    if _breaks(loop):
        return False
    return _forever(loop, reading) or (loop.orelse is not None and _block_ends(loop.orelse.body, reading))


def _forever(loop: cst.For | cst.While, reading: Reading) -> bool:
    """Whether a loop's test is a constant Python reads as true (`while True:`, `while 1:`): it stops only by a
    `break`, `return` or `raise` (CPython compiles no test for it)."""
    return isinstance(loop, cst.While) and _constant_truth(loop.test, reading) is True


def _constant_truth(test: cst.BaseExpression, reading: Reading) -> bool | None:
    """The truth of a test that is a constant (`True`, `False`, `None`, a number, a string, `...`), as CPython's
    compiler reads it (it drops the branch never taken), or `TYPE_CHECKING` (`RUN_TIME_FALSE`), and `not` of one;
    None for any other test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _constant_truth(test.expression, reading)
        return None if inner is None else not inner
    if isinstance(test, cst.Name) and test.value in ("True", "False", "None"):
        return test.value == "True"
    if isinstance(test, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):  # `if "":`, `while 1.0:`
        return bool(test.evaluated_value)
    if isinstance(test, cst.Ellipsis):
        return True
    return False if reading.qualname(test) in RUN_TIME_FALSE else None


def _match_ends(stmt: cst.Match, reading: Reading) -> bool:
    """A `match` never ends normally where every case's body ends and one case takes any subject (`case _:`, a
    bare capture, with no guard): without one, a subject no case takes goes on after the `match`."""
    catch_all = any(c.guard is None and _takes_any(c.pattern) for c in stmt.cases)
    return catch_all and all(_block_ends(c.body, reading) for c in stmt.cases)


def _takes_any(pattern: cst.MatchPattern) -> bool:
    """Whether a case's pattern takes any subject: `_`, a bare capture, or an or-pattern holding one (`1 | _`)."""
    if isinstance(pattern, cst.MatchOr):
        return any(_takes_any(p.pattern) for p in pattern.patterns)
    return isinstance(pattern, cst.MatchAs) and pattern.pattern is None


def _ends_else(other: cst.If | cst.Else, reading: Reading) -> bool:
    """`ends` for an `if`'s `elif` (itself an `if`) or `else`."""
    return ends(other, reading) if isinstance(other, cst.If) else _block_ends(other.body, reading)


def _breaks(loop: cst.For | cst.While) -> bool:
    """Whether `loop`'s body holds a `break` of its own: not one in a nested loop's body (it ends that loop),
    but one in a nested loop's `else`, nor one in a nested function or class."""
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(isinstance(s, cst.Break) for s in node.body):
                return True
        elif isinstance(node, cst.IndentedBlock):
            stack += node.body
        elif isinstance(node, (cst.For, cst.While)):
            stack += [node.orelse.body] if node.orelse is not None else []
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            stack += _compound_blocks(node)
    return False


def _binding(small: cst.BaseSmallStatement, name: str) -> tuple[cst.BaseExpression, int | None] | None:
    """`last_binding` for one small statement (its last target that binds `name`)."""
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        targets, value = [small.target], small.value
    elif isinstance(small, cst.Assign):
        targets, value = [t.target for t in small.targets], small.value
    else:
        return None
    found: tuple[cst.BaseExpression, int | None] | None = None
    for target in targets:
        if isinstance(target, cst.Name) and target.value == name:
            found = (value, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
            if name in names and not any(isinstance(e, cst.StarredElement) for e in target.elements):
                found = (value, names.index(name))
    return found


def is_param(scope: cst.CSTNode, name: str) -> bool:
    params = getattr(scope, "params", None)
    if params is None:
        return False
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    return any(p.name.value == name for p in every)


class Flow:
    """The project index's answers for the file being rewritten, by scope and dotted name.

    Families call `enter`/`leave` for each class and function so that `scope` names the
    same scopes as `porter.analysis.index` ("Trainer._run_epoch"). Without a project index (one file
    ported alone) the file is indexed by itself, lazily: only when a site asks.
    """

    def __init__(self, settings: Settings, path: str, source: bytes) -> None:
        self._given = settings.flow
        self._path, self._source = path, source
        self._facts: dict[tuple[str | None, str], tuple[str, tuple[str, ...]]] | None = None
        self._names: list[str] = []

    def enter(self, name: str) -> None:
        self._names.append(name)

    def leave(self) -> None:
        self._names.pop()

    @property
    def scope(self) -> str:
        return ".".join(self._names)

    def lookup(self, node: cst.BaseExpression | str) -> tuple[str, tuple[str, ...]] | None:
        """(kind, chain) of what a `name` / `self.attr` at a device site holds, else None."""
        name = node if isinstance(node, str) else dotted(node)
        if name is None:
            return None
        if self._facts is None:
            facts = self._given
            if facts is None:
                facts = ProjectIndex.build([(self._path, self._source)]).facts(self._path)
            self._facts = {(scope, expr): (kind, chain) for scope, expr, kind, chain in facts}
        return self._facts.get((self.scope, name))

    def moved(self, holder: str) -> tuple[str, ...] | None:
        """The re-tie statements after `holder.to(device)` of a module with tied weights."""
        found = self.lookup(move_key(holder))
        return found[1] if found is not None and found[0] == MoveKind.TIED else None

    def stale_before(self, holder: str) -> str | None:
        """The call that took `holder`'s parameters before `holder.to(device)`, if any."""
        found = self.lookup(stale_key(holder))
        return found[1][0] if found is not None and found[0] == MoveKind.STALE else None

    def parameter_attributes(self, holder: str) -> tuple[str, ...] | None:
        """Where the project sets attributes on Parameters, for a move of the module `holder`."""
        found = self.lookup(attributes_key(holder))
        return found[1] if found is not None and found[0] == MoveKind.ATTRIBUTES else None

    def origin(self, name: str, value: Callable[[], str]) -> tuple[str, ...] | None:
        """The chain of an integer assigned as `name = value()` that is ported where it is made
        (`name` is used only as a device, and holds "cpu" on its other paths). `value` gives
        the assigned code: asked only when the index has an origin for `name` here (printing
        every assignment's value cost ~3% of a file)."""
        self.lookup(name)  # loads the facts
        prefix = origin_key(name, "")
        if not any(scope == self.scope and key.startswith(prefix) for scope, key in self._facts or ()):
            return None
        try:
            text = ast.unparse(ast.parse(value().strip(), mode="eval"))  # the index's spelling
        except SyntaxError:
            return None
        found = self.lookup(origin_key(name, text))
        return found[1] if found is not None and found[0] == NameKind.ORIGIN else None


def module_move(small: cst.BaseSmallStatement) -> tuple[str, cst.Call] | None:
    """(the name that holds the module afterwards, the call) of `m.to(x)` / `m.cuda()` /
    `m = ....to(x)`, as `porter.analysis.index` records moves."""
    if isinstance(small, cst.Expr):
        call = small.value
        holder = (
            dotted(call.func.value) if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) else None
        )
    elif isinstance(small, cst.Assign) and len(small.targets) == 1:
        call, holder = small.value, dotted(small.targets[0].target)
    else:
        return None
    if holder is None or not (
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda")
    ):
        return None
    return holder, call


class FlowScopes:
    """Mixed into a family that reads `self.flow`: keeps the flow's scope in step with the
    classes and functions the traversal is in (declared once for every such family)."""

    flow: Flow

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        parent = getattr(super(), "visit_ClassDef", None)  # ReferenceTracker's, where mixed in
        if parent is not None:
            parent(node)
        self.flow.enter(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.flow.leave()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = getattr(super(), "visit_FunctionDef", None)
        if parent is not None:
            parent(node)
        self.flow.enter(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.flow.leave()
        return updated
