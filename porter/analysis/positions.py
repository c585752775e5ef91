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
    state = _MarkingState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        wanted={id(n) for n in nodes},
    )
    module._codegen(state)
    tokens = state.tokens
    wanted_indices = sorted({i for pair in state.marks.values() for i in pair})
    if wanted_indices and wanted_indices[-1] > len(tokens):
        # a module without a final line break drops the newline its last line made (libcst reads
        # a CR-only file so); the provider counts it, so the last line's newline ends on a new line
        tokens = [*tokens, module.default_newline]
    offsets: dict[int, int] = {}
    total = 0
    cursor = 0
    for index in wanted_indices:
        while cursor < index:
            total += len(tokens[cursor])
            cursor += 1
        offsets[index] = total
    text = "".join(tokens)
    line_starts = [0]
    if "\r" in text:  # lines end in CR LF, a lone CR or LF, as Python and the provider count them
        line_starts += [m.end() for m in _LINE_BREAK.finditer(text)]
    else:
        pos = text.find("\n")
        while pos != -1:
            line_starts.append(pos + 1)
            pos = text.find("\n", pos + 1)

    def to_position(offset: int) -> Position:
        line = bisect_right(line_starts, offset)
        return Position(line, offset - line_starts[line - 1])

    return {key: (to_position(offsets[start]), to_position(offsets[end])) for key, (start, end) in state.marks.items()}
