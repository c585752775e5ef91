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


def documents(text: Text) -> list[Node]:
    try:
        return load_all(text.text)
    except ValueError as exc:
        raise Unreadable(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise Unreadable("YAML nested too deep") from None


def span(text: Text, node: Node) -> tuple[int, int]:
    """[start, end) of `node` in the text (marks' line and column are in characters)."""
    start = text.offset(node.start_mark.line + 1, node.start_mark.column)
    end = text.offset(node.end_mark.line + 1, node.end_mark.column) if node.end_mark.line < len(text.line_starts) else len(text.text)
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
