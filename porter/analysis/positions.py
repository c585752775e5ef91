"""Line/column positions for the few nodes that carry a finding.

libcst's `PositionProvider` tracks line and column through every token of the module to
give every node a range; porter needs ranges for a handful of nodes per file, and the
provider cost more than the rewrite itself on real code (profiled on lightning: ~30% of
the run). Here the module is generated once with plain codegen, the token index is noted
where each wanted node starts and ends its syntactic part, and only those offsets are turned
into positions. Results equal the provider's (tests/test_positions.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from porter.core.findings import Position

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=False)
class _MarkingState(CodegenState):
    wanted: set[int] = field(default_factory=set)
    marks: dict[int, tuple[int, int]] = field(default_factory=dict)
    starts: dict[int, int] = field(default_factory=dict)

    # whitespace-inclusive range, for nodes without a syntactic one (as the provider does)
    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted:
            self.starts[key] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.marks:
            self.marks[key] = (self.starts[key], len(self.tokens))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        key = id(node)
        if key not in self.wanted:
            yield
            return
        # an indented block's range is hoisted from its first and last statements
        if start_node is not None:
            self.wanted.add(id(start_node))
        if end_node is not None:
            self.wanted.add(id(end_node))
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            if start_node is not None and id(start_node) in self.marks:
                start = self.marks[id(start_node)][0]
            if end_node is not None and id(end_node) in self.marks:
                end = self.marks[id(end_node)][1]
            self.marks[key] = (start, end)


def positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[Position, Position]]:
    """(start, end) of each node in `nodes` (keyed by id), as libcst's PositionProvider gives."""
    state = _marked(module, module, {id(n) for n in nodes})
    tokens = state.tokens
    wanted_indices = sorted({i for pair in state.marks.values() for i in pair})
    if wanted_indices and wanted_indices[-1] > len(tokens):
        # a module without a final line break drops the newline its last line made (libcst reads
        # a CR-only file so); the provider counts it, so the last line's newline ends on a new line
        tokens = [*tokens, module.default_newline]
    text, offsets = _offsets(tokens, wanted_indices)
    line_starts = _line_starts(text)
    return {
        key: (_position(line_starts, offsets[start]), _position(line_starts, offsets[end]))
        for key, (start, end) in state.marks.items()
    }


@dataclass
class Units:
    """Where the statements that stand in a block (the module's or an indented one; an `elif`
    does not) are, as the rewrite's walk met them (porter.codemods.composite): such a statement
    prints alone as it does in its module, given the indentation of the blocks around it."""

    of: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(node) -> the innermost unit holding it
    parent: dict[int, cst.CSTNode | None] = field(default_factory=dict)  # id(unit) -> the unit holding it
    indent: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id(unit) -> its blocks' indentation

    def code(self, module: cst.Module, unit: cst.CSTNode, node: cst.CSTNode | None = None) -> str:
        """The text `node` (default: `unit`) prints as in `unit`'s place."""
        state = CodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            indent_tokens=list(self.indent[id(unit)]),
        )
        (unit if node is None else node)._codegen(state)
        return "".join(state.tokens)


def statement_positions(
    module: cst.Module, code: str, nodes: Iterable[cst.CSTNode], units: Units
) -> dict[int, tuple[Position, Position]] | None:
    """`positions`, generating only the statements that hold `nodes` rather than the whole
    module. `code` must be the module's code (a source libcst prints back byte for byte). A
    statement's text is placed where it occurs in `code`, and only where it occurs there once,
    at a line start (else the statement around it is tried); None where a node was not met in
    a unit or no unit around it occurs once (the caller asks `positions`)."""
    wanted: dict[int, tuple[cst.CSTNode, set[int]]] = {}
    for node in nodes:
        unit = units.of.get(id(node))
        if unit is None:
            return None
        wanted.setdefault(id(unit), (unit, set()))[1].add(id(node))
    out: dict[int, tuple[Position, Position]] = {}
    for unit, ids in wanted.values():
        found = None
        at: cst.CSTNode | None = unit
        while found is None and at is not None:
            found = _unit_positions(module, code, at, ids, units)
            at = units.parent.get(id(at))
        if found is None:
            return None
        out.update(found)
    return out


def _unit_positions(
    module: cst.Module, code: str, unit: cst.CSTNode, ids: set[int], units: Units
) -> dict[int, tuple[Position, Position]] | None:
    state = _MarkingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        indent_tokens=list(units.indent[id(unit)]),
        wanted=set(ids),
    )
    unit._codegen(state)
    if not ids <= state.marks.keys():
        return None  # (cannot be: a node inside its unit)
    tokens = state.tokens
    wanted_indices = sorted({i for pair in state.marks.values() for i in pair})
    if wanted_indices and wanted_indices[-1] > len(tokens):
        return None
    text, offsets = _offsets(tokens, wanted_indices)
    where = code.find(text)
    if not text or where < 0 or (where and code[where - 1] not in "\r\n") or code.find(text, where + 1) >= 0:
        return None  # not once at a line start: a repeated statement
    # the lines before it; it starts a line, so its columns are the module's
    before = code.count("\n", 0, where) if "\r" not in code else len(_LINE_BREAK.findall(code, 0, where))
    line_starts = _line_starts(text)
    out = {}
    for key, (start, end) in state.marks.items():
        if key in ids:
            s, e = _position(line_starts, offsets[start]), _position(line_starts, offsets[end])
            out[key] = (Position(s.line + before, s.column), Position(e.line + before, e.column))
    return out


def _marked(module: cst.Module, node: cst.CSTNode, wanted: set[int]) -> _MarkingState:
    """The codegen state of the module, with the token range of each node in `wanted` marked."""
    state = _MarkingState(default_indent=module.default_indent, default_newline=module.default_newline, wanted=wanted)
    node._codegen(state)
    return state


def _offsets(tokens: list[str], indices: list[int]) -> tuple[str, dict[int, int]]:
    """The text of `tokens`, and the character offset where each token index in `indices` starts."""
    offsets: dict[int, int] = {}
    total = 0
    cursor = 0
    for index in indices:
        while cursor < index:
            total += len(tokens[cursor])
            cursor += 1
        offsets[index] = total
    return "".join(tokens), offsets


def _line_starts(text: str) -> list[int]:
    line_starts = [0]
    if "\r" in text:  # lines end in CR LF, a lone CR or LF, as Python and the provider count them
        line_starts += [m.end() for m in _LINE_BREAK.finditer(text)]
    else:
        pos = text.find("\n")
        while pos != -1:
            line_starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
    return line_starts


def _position(line_starts: list[int], offset: int) -> Position:
    line = bisect_right(line_starts, offset)
    return Position(line, offset - line_starts[line - 1])
