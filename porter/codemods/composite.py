"""One traversal for every rule family.

libcst's traversal, not the rules, is most of a codemod's cost; running eight transformers
would walk each tree eight times. `PortTransformer` walks once and hands each node to every
family that has a `visit_<Node>` / `leave_<Node>` method, in family order. It also owns the
statement-level mechanics every family shares: removing or replacing statements without
losing their comments, and `--annotate` comments at manual sites.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import libcst as cst

from porter.analysis.positions import Units
from porter.codemods.context import PortContext, StatementEdits
from porter.codemods.family import Family
from porter.codemods import cstwalk, tidy

_COMPOUND = (
    cst.If,
    cst.For,
    cst.While,
    cst.With,
    cst.Try,
    cst.FunctionDef,
    cst.ClassDef,
)
# libcst nodes are ABCs, so isinstance() on them is slow: the hot path compares exact types
_STATEMENT_TYPES = frozenset((cst.SimpleStatementLine, *_COMPOUND))
_SCOPE_TYPES = frozenset((cst.FunctionDef, cst.Lambda))
_VALUE_HOLDERS = frozenset((cst.Expr, cst.Assign, cst.AugAssign, cst.AnnAssign))
_BLOCK_TYPES = frozenset((cst.IndentedBlock, cst.Module))
# a rewrite may put an operator expression (`xr.global_runtime_device_count() > 0`) where a
# call was: these parents bind tighter than it, so it needs parentheses there, and only there
_BINDS_TIGHTER: dict[type[cst.CSTNode], Callable[[Any], cst.CSTNode]] = {
    cst.Attribute: lambda n: tidy.with_field(n, "value", tidy.parenthesized),
    cst.Subscript: lambda n: tidy.with_field(n, "value", tidy.parenthesized),
    cst.Call: lambda n: tidy.with_field(n, "func", tidy.parenthesized),
    cst.BinaryOperation: lambda n: tidy.with_field(
        tidy.with_field(n, "left", tidy.parenthesized_operand), "right", tidy.parenthesized_operand
    ),
    cst.Comparison: tidy.parenthesize_comparison,
    cst.IfExp: lambda n: tidy.with_field(
        tidy.with_field(n, "body", tidy.parenthesized_branch), "test", tidy.parenthesized_branch
    ),
}
_FOLDS: dict[type[cst.CSTNode], Callable[[Any, Any], cst.CSTNode]] = {
    cst.BooleanOperation: tidy.fold_boolean,
    cst.IfExp: tidy.fold_ifexp,
    cst.UnaryOperation: tidy.fold_not,
}


class PortTransformer(cst.CSTTransformer):
    def __init__(self, ctx: PortContext, families: list[Family]) -> None:
        super().__init__()
        self.ctx = ctx
        self.families = families
        self._visits: dict[str, list] = {}
        self._leaves: dict[str, list] = {}
        for fam in families:
            # a family none of whose rules is reported (`--select` others) runs for the facts it
            # gives the families that are (GUARD001's kept checks, DEV001's moves, BACK001's
            # switches): what it would change is dropped, as its fixes are not applied
            muted = not _reports(ctx, type(fam))
            for attr in dir(type(fam)):
                if attr.startswith("visit_"):
                    fn = getattr(fam, attr)
                    self._visits.setdefault(attr[6:], []).append(self._muted(fn, False) if muted else fn)
                elif attr.startswith("leave_"):
                    fn = getattr(fam, attr)
                    self._leaves.setdefault(attr[6:], []).append(self._muted(fn, True) if muted else fn)
        # keyed by id, holding the node: a node kept alive keeps its id (a freed one's id is
        # reused by the next node made, which would then be taken for a marker)
        self._removed_markers: dict[int, cst.CSTNode] = {}
        self._rewritten: dict[int, cst.CSTNode] = {}  # statement lines a fix changed (result nodes)
        self._emptied: dict[int, cst.CSTNode] = {}  # the `pass` left where a rewrite emptied a block
        self._applied_at: list[int] = []  # ctx.applied when each simple statement was entered
        self._elifs: set[int] = set()  # `If` nodes that are another If's `elif`
        # whether any node came back other than as libcst rebuilt it: while False, the new
        # tree equals the old one, so a findings-only run need not generate its text
        self.replaced = False
        # the statements that stand in a block, as met (porter.analysis.positions.Units): the
        # findings' positions and `changed_text` print these rather than the whole module
        self.units = Units()
        self._units: list[cst.CSTNode] = []  # the units the walk is in, innermost last
        self._indents: list[str] = []  # the indentation of the blocks the walk is in
        self._default_indent = ctx.module.default_indent
        # id(unit) -> (the unit, what it became), for each unit a node was replaced in (inside
        # it, not inside a unit within it); and whether a node outside every unit was (the
        # module's body or lines). Every other unit prints as before.
        self.replaced_in: dict[int, tuple[cst.CSTNode, Any] | None] = {}
        self.replaced_outside = False

    def _muted(self, fn: Callable[..., Any], leave: bool) -> Callable[..., Any]:
        """`fn` of a family run for its facts alone: the node it is handed stays as it is (a
        leave_ returns it), and what it queues for the file (imports, statement edits, the
        device helper) is dropped."""
        ctx = self.ctx

        def call(*args: Any) -> Any:
            saved = (ctx.statement_edits, ctx.device_helper, ctx.device_helper_code)
            ctx.statement_edits = StatementEdits()
            ctx.muted = True
            try:
                out = fn(*args)
            finally:
                ctx.muted = False
                ctx.statement_edits, ctx.device_helper, ctx.device_helper_code = saved
            return args[-1] if leave else out

        return call

    # -- dispatch --------------------------------------------------------------------------

    # Dispatch on the exact type, read once (`cls is X`): mypy cannot narrow a node through
    # `cls`, so the nodes are typed Any in on_visit and on_leave.
    def on_visit(self, node: Any) -> bool:
        cls = type(node)
        self._enter_unit(node, cls)
        if cls is cst.Import or cls is cst.ImportFrom:
            return False  # never rewrite inside an import; unused ones are removed later
        if cls in _SCOPE_TYPES:
            self.ctx.scopes.push(node)
        if cls in _STATEMENT_TYPES:
            self._enter_statement(node, cls)
        elif cls in _VALUE_HOLDERS:
            self.ctx.statement_of[id(node.value)] = node
        fns = self._visits.get(cls.__name__)
        if fns is None:
            return True
        descend = True
        for fn in fns:
            if fn(node) is False:
                descend = False
        return descend

    def _enter_unit(self, node: Any, cls: type) -> None:
        """Track the units (the statements standing in a block; an `elif` belongs to its `if`)
        and the indentation the walk is in: `Units` prints findings and changed text from
        them, so every node, an import included, is recorded before anything else."""
        units = self._units
        if cls in _STATEMENT_TYPES and not (cls is cst.If and id(node) in self._elifs):
            self.units.parent[id(node)] = units[-1] if units else None
            self.units.indent[id(node)] = tuple(self._indents)
            units.append(node)
        elif cls is cst.IndentedBlock or cls is cst.Match:  # (the two nodes that indent what they hold)
            self._indents.append(self._default_indent if node.indent is None else node.indent)
        if units:
            self.units.of[id(node)] = units[-1]

    def _enter_statement(self, node: Any, cls: type) -> None:
        """The statement bookkeeping the families read: the statements the walk is in, how many
        fixes were applied when a simple statement began (on_leave tells a rewritten one from
        it), and which `If` nodes are `elif`s (not units, not folded on their own)."""
        self.ctx.current_statements.append(node)
        if cls is cst.SimpleStatementLine:
            self._applied_at.append(self.ctx.applied)
        elif cls is cst.If and type(node.orelse) is cst.If:
            self._elifs.add(id(node.orelse))

    def transform(self, module: cst.Module) -> cst.Module:
        """`module.visit(self)` without libcst's copy of every node it passes
        (`cstwalk.transform`: a node nothing below replaced is handed on as itself), and,
        where no family looks at them, without entering whitespace, comments, punctuation
        and operators, which this walk's own bookkeeping leaves alone too."""
        names = self._visits.keys() | self._leaves.keys()
        skip = cstwalk.TRIVIA if cstwalk.TRIVIA_NAMES.isdisjoint(names) else frozenset()
        return cast("cst.Module", cstwalk.transform(module, self.on_visit, self.on_leave, skip))

    # families are handed whole nodes only (no `visit_<Node>_<field>` methods anywhere):
    # libcst's default looks two of those up by name for every field of every node
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        cls = type(original_node)
        result = updated_node
        unit = self._units[-1] if self._units else None
        for fn in self._leaves.get(cls.__name__, ()):
            result = fn(original_node, result)
            if type(result) is not cls:
                break  # replaced by another kind of node: the rest no longer applies
        same = type(result) is cls
        result = self._tidied(cls, original_node, result, same)
        if cls is cst.FunctionDef and same and self.ctx.local_imports:
            result = self._with_wanted_imports(original_node, result)
        if cls in _STATEMENT_TYPES:
            result = self._leave_statement(original_node, result)
        if cls in _SCOPE_TYPES:
            self.ctx.scopes.pop()
        if result is not updated_node:
            self._note_replaced(unit)
        if unit is original_node:
            self._units.pop()
            if id(unit) in self.replaced_in:
                self.replaced_in[id(unit)] = (unit, result)
        elif cls is cst.IndentedBlock or cls is cst.Match:
            self._indents.pop()
        return result

    def _tidied(self, cls: type, original: Any, result: Any, same: bool) -> Any:
        """The walk's own share of leaving a node the families have handled: a statement line's
        edits applied (and a rewritten one marked, whatever it became), and, where the node is
        still of its kind, suite edits, removed statements dropped from blocks, constants
        folded, operators parenthesised and emptied branches folded."""
        if cls is cst.SimpleStatementLine:
            changed = self.ctx.applied != self._applied_at.pop()
            if same:
                result = self._apply_statement_edits(original, result)
            if changed:
                self._mark_rewritten(result)
            return result
        if not same:
            return result
        if cls is cst.SimpleStatementSuite:
            return self._apply_suite_edits(original, result)
        if cls in _BLOCK_TYPES:
            return self._drop_removed(result)
        if cls in _FOLDS or cls in _BINDS_TIGHTER:
            if cls in _FOLDS:
                result = _FOLDS[cls](original, result)
            if type(result) is cls and cls in _BINDS_TIGHTER:
                result = _BINDS_TIGHTER[cls](result)
            return result
        return self._tidied_compound(cls, original, result)

    def _tidied_compound(self, cls: type, original: Any, result: Any) -> Any:
        """An `if`, `try` or `else` a rewrite left constant or emptied, folded (see _fold_if and
        _fold_try); a folded `try` that still stands is marked rewritten (it may now repeat the
        statement before it)."""
        if cls is cst.If:
            return self._fold_if(original, result)
        if cls is cst.Try:
            result = self._fold_try(result)
            if type(result) is cst.Try and not original.deep_equals(result):
                self._rewritten[id(result)] = result  # a rewritten `try: X` may repeat the one before
            return result
        if cls is cst.Else and self._is_emptied(result.body) and not self._comments_of(result.body):
            return cst.RemovalSentinel.REMOVE  # an emptied `else:` goes; its `if` stays
        return result

    def _with_wanted_imports(self, original: cst.FunctionDef, result: cst.FunctionDef) -> cst.FunctionDef:
        """The local imports a family asked for in this function (a module that imports a
        package only where it is used), put at its top; asked for once, so taken off the list."""
        wanted = self.ctx.local_imports.pop(id(original), None)
        if wanted:
            result = _with_local_imports(result, wanted)
        return result

    def _leave_statement(self, original: Any, result: Any) -> Any:
        """Leave the statement the families were told the walk is in, and with `--annotate`
        put the manual sites' comments above what it became (unless it was removed or split)."""
        self.ctx.current_statements.pop()
        if (
            self.ctx.settings.annotate
            and type(result) is not cst.RemovalSentinel
            and type(result) is not cst.FlattenSentinel
        ):
            result = self._annotate(original, result)
        return result

    def _note_replaced(self, unit: cst.CSTNode | None) -> None:
        """A node came back other than as libcst rebuilt it: record the unit it was replaced in
        (or that it was outside every unit), which changed_text then compares."""
        self.replaced = True
        if unit is None:
            self.replaced_outside = True
        elif id(unit) not in self.replaced_in:
            self.replaced_in[id(unit)] = None

    def changed_text(self, module: cst.Module) -> bool | None:
        """Whether the new module's text differs from `module`'s, told from the units a node was
        replaced in alone (each printed with the indentation it stands at); None where that does
        not tell (a node outside every unit was replaced, or the texts differ by the same
        length: the caller compares the modules)."""
        if self.replaced_outside:
            return None
        grew = 0
        differs = False
        for key, entry in self.replaced_in.items():
            if entry is None:
                return None  # (a unit never left: cannot be)
            unit, result = entry
            if self._inside_replaced(key):
                continue  # printed with the unit around it
            old = self.units.code(module, unit)
            if type(result) is cst.FlattenSentinel:
                new = "".join(self.units.code(module, unit, n) for n in result.nodes)
            elif isinstance(result, cst.CSTNode):
                new = self.units.code(module, unit, result)
            elif result is cst.RemovalSentinel.REMOVE:
                new = ""  # (a block it leaves empty is replaced itself: the unit around it is compared)
            else:
                return None
            grew += len(new) - len(old)
            differs = differs or new != old
        if not differs:
            return False  # each unit prints as before: so does the module
        return True if grew else None

    def _inside_replaced(self, key: int) -> bool:
        parent = self.units.parent.get(key)
        while parent is not None:
            if id(parent) in self.replaced_in:
                return True
            parent = self.units.parent.get(id(parent))
        return False

    # -- statements ------------------------------------------------------------------------

    def _edited_smalls(
        self, original: list[cst.BaseSmallStatement], updated: list[cst.BaseSmallStatement]
    ) -> list[cst.BaseSmallStatement]:
        edits = self.ctx.statement_edits
        out: list[cst.BaseSmallStatement] = []
        for orig, new in zip(original, updated):
            key = id(orig)
            if key in edits.remove:
                continue
            if key in edits.replace:
                out.extend(edits.replace[key])
            else:
                out.append(new)
        if out:
            # the last small statement must not keep a dangling semicolon
            last = out[-1]
            if getattr(last, "semicolon", None) not in (None, cst.MaybeSentinel.DEFAULT):
                out[-1] = last.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            out[:-1] = [
                s
                if getattr(s, "semicolon", cst.MaybeSentinel.DEFAULT) is not cst.MaybeSentinel.DEFAULT
                else s.with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
                for s in out[:-1]
            ]
        return out

    def _apply_statement_edits(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        edits = self.ctx.statement_edits
        if not (edits.remove or edits.replace):
            return updated
        if not any(id(s) in edits.remove or id(s) in edits.replace for s in original.body):
            return updated
        smalls = self._edited_smalls(list(original.body), list(updated.body))
        if not smalls:
            if any(line.comment is not None for line in updated.leading_lines):
                marker = updated.with_changes(body=[cst.Pass()])
                self._removed_markers[id(marker)] = marker
                return marker
            return cst.RemovalSentinel.REMOVE
        if len(original.body) == 1 and len(smalls) > 1:
            # one statement became several: one line each, as a person would write them
            lines = []
            for i, small in enumerate(smalls):
                small = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                lines.append(
                    cst.SimpleStatementLine(
                        body=[small],
                        leading_lines=updated.leading_lines if i == 0 else (),
                        trailing_whitespace=updated.trailing_whitespace
                        if i == len(smalls) - 1
                        else cst.TrailingWhitespace(),
                    )
                )
            return cst.FlattenSentinel(lines)
        return updated.with_changes(body=smalls)

    def _apply_suite_edits(self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite):
        edits = self.ctx.statement_edits
        if not any(id(s) in edits.remove or id(s) in edits.replace for s in original.body):
            return updated
        smalls = self._edited_smalls(list(original.body), list(updated.body))
        if not smalls:
            # `if flag: t.pin_memory()` lost its only statement: marked, so the `if` folds
            marker = cst.Pass()
            self._emptied[id(marker)] = marker
            return updated.with_changes(body=[marker])
        return updated.with_changes(body=smalls)

    def _mark_rewritten(self, result) -> None:
        if type(result) is cst.FlattenSentinel:
            self._rewritten.update((id(n), n) for n in result.nodes)
        elif type(result) is cst.SimpleStatementLine:
            self._rewritten[id(result)] = result

    def _drop_removed(self, block: cst.IndentedBlock | cst.Module):
        """Drop removal markers (handing their comment lines to the next statement) and
        statements a rewrite made repeat the one before them (`torch.manual_seed(s)` twice)."""
        body = list(block.body)
        if not (self._removed_markers or self._rewritten) and body:
            return block
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        changed = False
        for stmt in body:
            assert isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # what a block holds
            if (
                id(stmt) in self._removed_markers
                or (id(stmt) in self._rewritten and tidy.repeats(stmt, out))
                or self._seeds_again(stmt, out)
            ):
                carried.extend(stmt.leading_lines)
                changed = True
                continue
            if carried:
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
                carried = []
            out.append(stmt)
        if not changed and out:
            return block
        if carried and not out and isinstance(block, cst.IndentedBlock):
            # nothing is left in this block: it needs a statement, the comments stay on it
            marker = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried)
            self._emptied[id(marker)] = marker
            out.append(marker)
        # (comments of removed statements at the end of a block that keeps statements go with them)
        if not out and isinstance(block, cst.IndentedBlock):
            marker = cst.SimpleStatementLine(body=[cst.Pass()])
            self._emptied[id(marker)] = marker
            out.append(marker)
        return block.with_changes(body=out)

    def _seeds_again(self, stmt: cst.CSTNode, before: list[cst.BaseStatement]) -> bool:
        """`torch.manual_seed(s)` then `if torch.cuda.is_available(): torch.cuda.manual_seed(s)`
        (ColossalAI's `seed_all`), the seeds in the `if` rewritten to `torch.manual_seed(s)`:
        the `if` only says again what was said before it, and its test (an availability
        question) only chose whether to."""
        if type(stmt) is not cst.If or stmt.orelse is not None or type(stmt.body) is not cst.IndentedBlock:
            return False
        test = stmt.test
        if not (
            type(test) is cst.Call
            and not test.args
            and type(test.func) is cst.Attribute
            and test.func.attr.value == "is_available"
            and tidy.pure(test.func)
        ):
            return False
        inner = stmt.body.body
        return bool(inner) and all(id(s) in self._rewritten and tidy.repeats(s, before) for s in inner)

    # -- constant conditions and emptied branches ------------------------------------------

    def _is_emptied(self, block) -> bool:
        return (
            type(block) in (cst.IndentedBlock, cst.SimpleStatementSuite)
            and len(block.body) == 1
            and id(block.body[0]) in self._emptied
        )

    def _comments_of(self, block) -> list[cst.EmptyLine]:
        if type(block) is not cst.IndentedBlock or not self._is_emptied(block):
            return []  # a one-line suite (`if x: pass`) has no comment lines of its own
        first = cst.ensure_type(block.body[0], cst.SimpleStatementLine)  # the `pass` marker
        return [line for line in first.leading_lines if line.comment is not None]

    def _fold_if(self, original: cst.If, updated: cst.If):
        """`if True:` -> its body; a branch a rewrite emptied -> the branch that is left."""
        elif_ = id(original) in self._elifs
        value = tidy.porter_constant(original.test, updated.test)
        if value is not None and not elif_:
            return self._fold_constant_if(updated, value)
        if not self._is_emptied(updated.body):
            return updated
        comments = self._comments_of(updated.body)
        if updated.orelse is None:
            if elif_:
                return cst.RemovalSentinel.REMOVE if not comments else updated
            return self._gone(updated, comments)
        if type(updated.orelse) is cst.Else and not elif_:
            return self._else_as_if(updated, updated.orelse, comments)
        return updated  # an emptied branch before an `elif`: left for a person

    def _fold_constant_if(self, updated: cst.If, value: bool):
        """An `if` whose test a rewrite made a constant: the branch it takes stands in its place
        (nothing where that is a missing `else`); an `elif` after it is left as it is."""
        if value:
            return self._inline(updated, updated.body)
        if type(updated.orelse) is cst.Else:
            return self._inline(updated, updated.orelse.body)
        if updated.orelse is None:
            return self._gone(updated, [])
        return updated

    def _else_as_if(self, updated: cst.If, orelse: cst.Else, comments: list[cst.EmptyLine]) -> cst.If:
        """`if t: <emptied> else: B` -> `if not t: B`, the comments left in the emptied branch
        moved above B's first statement."""
        body = orelse.body
        if comments and isinstance(body, cst.SimpleStatementSuite):
            # `else: x()` on one line: the comments need a line of their own above it
            body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)])
        if comments:
            first = body.body[0]
            # libcst's BaseStatement does not declare the leading_lines every statement has
            leading = [*comments, *first.leading_lines]  # type: ignore[union-attr]
            body = body.with_changes(body=[first.with_changes(leading_lines=leading), *body.body[1:]])
        return updated.with_changes(test=tidy.negate(updated.test), body=body, orelse=None)

    def _fold_try(self, updated: cst.Try):
        """`finally: pass` (its only statement was removed) goes; a `try` left with no handler
        becomes its body. An emptied `try` body makes the handlers dead: the `finally` is left."""
        fin = updated.finalbody
        if self._is_emptied(updated.body) and not self._comments_of(updated.body):
            if fin is not None and not self._is_emptied(fin.body):
                return self._inline(updated, fin.body)
            return self._gone(updated, [])
        if fin is None or not self._is_emptied(fin.body) or self._comments_of(fin.body):
            return updated
        if updated.handlers or updated.orelse is not None:
            return updated.with_changes(finalbody=None)
        return self._inline(updated, updated.body)

    def _inline(
        self, node: cst.If | cst.Try, block: cst.BaseSuite
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel | cst.FlattenSentinel[cst.BaseStatement]:
        # a block's statements (each has leading_lines, which libcst's BaseStatement does not declare)
        stmts: list[Any] = (
            list(block.body)
            if type(block) is cst.IndentedBlock
            else [cst.SimpleStatementLine(body=[*cast("cst.SimpleStatementSuite", block).body])]
        )
        if not stmts:
            return self._gone(node, [])
        stmts[0] = stmts[0].with_changes(leading_lines=[*node.leading_lines, *stmts[0].leading_lines])
        return cst.FlattenSentinel(stmts)

    def _gone(
        self, node: cst.If | cst.Try, comments: list[cst.EmptyLine]
    ) -> cst.RemovalSentinel | cst.SimpleStatementLine:
        """Remove a whole `if`; the comments above it move to what follows (those inside it
        described the statements removed with it, and go)."""
        lines = [line for line in node.leading_lines if line.comment is not None]
        if not lines:
            return cst.RemovalSentinel.REMOVE
        marker = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=lines)
        self._removed_markers[id(marker)] = marker
        return marker

    # -- annotations -----------------------------------------------------------------------

    def _annotate(self, original: cst.CSTNode, result: cst.CSTNode) -> cst.CSTNode:
        sites = self.ctx.manual_sites_in(original)
        if not sites or not hasattr(result, "leading_lines"):
            return result
        existing = {line.comment.value for line in result.leading_lines if line.comment is not None}
        new_lines = []
        for site in sites:
            # one comment line: a message quoting source (a triple-quoted string holding a
            # carriage return, a line break to Python) must not end it — libcst refused the
            # node and the whole file failed as an internal error
            text = " ".join(f"# porter[{site.rule.code}]: {site.message}".replace("\r", "\n").split("\n"))
            if text not in existing:
                existing.add(text)
                new_lines.append(cst.EmptyLine(indent=True, comment=cst.Comment(text)))
        if not new_lines:
            return result
        return result.with_changes(leading_lines=[*result.leading_lines, *new_lines])


def _reports(ctx: PortContext, family: type[Family]) -> bool:
    """Whether some rule of `family` (or of the family it serves) is reported."""
    owner = family.serves or family
    return any(ctx.reports(c) for c in owner.codes())


def _with_local_imports(fn: cst.FunctionDef, modules: list[tuple[str, str | None]]) -> cst.FunctionDef:
    """`import m [as a]` at the top of `fn` (after its docstring and its own leading imports),
    for a module that imports `m`'s package only where it is used."""
    if not isinstance(fn.body, cst.IndentedBlock):
        return fn
    body = list(fn.body.body)
    at = 0
    for i, stmt in enumerate(body):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        is_doc = (
            i == 0
            and isinstance(small, cst.Expr)
            and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
        )
        if is_doc or isinstance(small, (cst.Import, cst.ImportFrom)):
            at = i + 1
        else:
            break
    new = [cst.parse_statement(f"import {m} as {a}\n" if a else f"import {m}\n") for m, a in sorted(modules, key=str)]
    body[at:at] = new
    return fn.with_changes(body=fn.body.with_changes(body=body))
