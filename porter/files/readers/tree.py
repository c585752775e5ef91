"""One shape for the values of YAML, JSON and TOML configs: a tree whose nodes know their place.

The config checks (porter.files.configs.checks) read accelerate's, Lightning's and DeepSpeed's
keys the same way in every format; each format's reader builds this tree (YAML from PyYAML's
composer, JSON from `jsonpos`), keeping for each scalar the span of the characters that are
its value, when an edit may replace them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from porter.files.readers.yamlpos import scalar, span
from porter.files.sites import Text


@dataclass
class Value:
    kind: str  # "map", "seq", "scalar"
    start: int
    end: int
    scalar: str | bool | int | float | None = None  # a scalar's value (YAML's are their text)
    inner: tuple[int, int] | None = None  # a scalar's editable characters
    entries: list[tuple[str, tuple[int, int], Value]] = field(default_factory=list)  # map: (key, key span, value)
    items: list[Value] = field(default_factory=list)  # seq

    def get(self, key: str) -> Value | None:
        """The value of `key`: its last entry where the map repeats it, as `json.loads` and
        PyYAML read it (Jupyter, the program that reads the config); the first would be a
        value no reader of the file sees."""
        for name, _, value in reversed(self.entries):
            if name == key:
                return value
        return None

    @property
    def text(self) -> str | None:
        """A scalar's value as text (`true` for YAML's true, as written)."""
        if self.kind != "scalar" or self.scalar is None:
            return None
        if isinstance(self.scalar, bool):
            return "true" if self.scalar else "false"
        return str(self.scalar)


def from_yaml(text: Text, node: Node) -> Value:
    start, end = span(text, node)
    if isinstance(node, ScalarNode):
        s = scalar(text, node)
        return Value("scalar", start, end, scalar=node.value, inner=s.inner)
    if isinstance(node, MappingNode):
        value = Value("map", start, end)
        for key, child in node.value:
            if isinstance(key, ScalarNode):
                value.entries.append((key.value, span(text, key), from_yaml(text, child)))
        return value
    if isinstance(node, SequenceNode):
        return Value("seq", start, end, items=[from_yaml(text, child) for child in node.value])
    return Value("scalar", start, end)


def walk(value: Value, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], tuple[int, int] | None, Value]]:
    """Every node under `value` with its key path and the span of its key (None in a list)."""
    out: list[tuple[tuple[str, ...], tuple[int, int] | None, Value]] = []
    stack: list[tuple[tuple[str, ...], tuple[int, int] | None, Value]] = [(path, None, value)]
    while stack:
        here, key_span, node = stack.pop()
        out.append((here, key_span, node))
        if node.kind == "map":
            stack.extend(((*here, k), ks, v) for k, ks, v in reversed(node.entries))
        elif node.kind == "seq":
            stack.extend(((*here, str(i)), None, v) for i, v in reversed(list(enumerate(node.items))))
    return out
