"""YAML documents with the place of every node, from PyYAML's composer.

PyYAML (a dependency of libcst, so already installed with porter) composes a document into
nodes that carry their start and end marks. An edit then replaces a scalar's characters and
nothing else: every comment, quote style, indentation and blank line stays as written, which
a round-trip dumper (ruamel.yaml re-emits the document from its model) does not promise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from porter.files.errors import Unreadable
from porter.files.sites import Text

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_all(text: str) -> list[Node]:
    """The documents' root nodes; ValueError when the text is no YAML."""
    try:
        return [n for n in yaml.compose_all(text, Loader=_LOADER) if n is not None]
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).splitlines()[0] if str(exc) else "YAML error") from None


# An alias (`*name`) is its anchor's node again: walked as a tree, a few lines of nested
# aliases ("billion laughs": nine aliases of nine aliases of ...) are billions of nodes, and
# each of their scalars a finding at the anchor's place. The walkers see every alias as the
# node it names (a compose service merging `<<: *defaults` has its keys), so a document is
# refused when its aliases expand it to far more nodes than it holds.
ALIAS_EXPANSION = 10  # nodes walked per node written, past `ALIAS_SLACK`
ALIAS_SLACK = 2_000
_CYCLE = float("inf")


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [c for pair in node.value for c in pair]
    return list(node.value) if isinstance(node, SequenceNode) else []


def expansion(roots: list[Node]) -> tuple[float, int]:
    """(the nodes the walkers visit under `roots`, each alias expanded — infinite for an alias
    to an enclosing node; the nodes written), in time linear in the nodes written."""
    sizes: dict[int, float] = {}
    open_: set[int] = set()  # nodes whose children are being counted: their ancestors' line
    for root in roots:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if done:
                open_.discard(key)
                sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
                continue
            if key in sizes:
                continue
            if key in open_:  # an alias of an enclosing node: it never ends
                sizes[key] = _CYCLE
                continue
            open_.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in _children(node))
    return sum(sizes[id(r)] for r in roots), len(sizes)


def documents(text: Text) -> list[Node]:
    try:
        docs = load_all(text.text)
    except ValueError as exc:
        raise Unreadable(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise Unreadable("YAML nested too deep") from None
    if "*" in text.text:
        walked, written = expansion(docs)
        if walked > ALIAS_EXPANSION * written + ALIAS_SLACK:
            if walked == _CYCLE:
                raise Unreadable("an alias names a node that holds it: the document never ends")
            raise Unreadable(
                f'its aliases expand it to {walked:,.0f} nodes from {written:,} (a "billion laughs"): not read'
            )
    return docs


def span(text: Text, node: Node) -> tuple[int, int]:
    """[start, end) of `node` in the text (marks' line and column are in characters)."""
    start = text.offset(node.start_mark.line + 1, node.start_mark.column)
    end = (
        text.offset(node.end_mark.line + 1, node.end_mark.column)
        if node.end_mark.line < len(text.line_starts)
        else len(text.text)
    )
    return start, end


@dataclass(frozen=True)
class Scalar:
    """A scalar as written: its value, span, and the span of its characters inside any quotes
    when they are its value (a plain or simply quoted scalar, no escape, one line)."""

    node: ScalarNode
    value: str
    start: int
    end: int
    inner: tuple[int, int] | None

    @property
    def editable(self) -> bool:
        return self.inner is not None


def scalar(text: Text, node: ScalarNode) -> Scalar:
    start, end = span(text, node)
    raw = text.text[start:end]
    inner: tuple[int, int] | None = None
    if node.style in (None, "") and raw == node.value:
        inner = (start, end)
    elif node.style in ("'", '"') and raw[1:-1] == node.value and "\\" not in raw and "''" not in raw:
        inner = (start + 1, end - 1)
    return Scalar(node, node.value, start, end, inner)


def items(node: Node) -> list[tuple[str, ScalarNode | None, Node]]:
    """A mapping's (key, key node, value node); [] for anything else."""
    if not isinstance(node, MappingNode):
        return []
    out = []
    for key, value in node.value:
        if isinstance(key, ScalarNode):
            out.append((key.value, key, value))
    return out


def get(node: Node, key: str) -> Node | None:
    for name, _, value in items(node):
        if name == key:
            return value
    return None


def sequence(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def scalars(node: Node, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], ScalarNode, ScalarNode | None]]:
    """Every scalar value under `node` with its key path and its key node (None in a list)."""
    if isinstance(node, MappingNode):
        for key, key_node, value in items(node):
            if isinstance(value, ScalarNode):
                yield (*path, key), value, key_node
            else:
                yield from scalars(value, (*path, key))
    elif isinstance(node, SequenceNode):
        for i, value in enumerate(node.value):
            if isinstance(value, ScalarNode):
                yield (*path, str(i)), value, None
            else:
                yield from scalars(value, (*path, str(i)))


def item_line(text: Text, node: Node) -> tuple[int, int] | None:
    """The whole line of a sequence item (`  - value  # comment`, its line break included) when
    the line holds that item alone: what removing the item removes; else None."""
    start, end = span(text, node)
    line = text.position(start).line
    first, last = text.line_span(line)
    if text.position(end).line != line:
        return None
    before = text.text[first:start].strip()
    after = text.text[end:last].strip()
    if before != "-" or (after and not after.startswith("#")):
        return None
    nxt = text.line_starts[line] if line < len(text.line_starts) else len(text.text)
    return first, nxt
