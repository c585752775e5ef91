"""A shell command as porter reads it: its name and its words, each with its literal value.

tree-sitter-bash gives a `command` node whose children are the name, assignments and argument
nodes (words, quoted strings, concatenations, expansions); here each argument becomes a `Word`:
what is written, where, and its value when it is a literal (no expansion to run).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any

from porter.files.shell.parse import Offsets

ARGUMENT_TYPES = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "ansi_c_string",
        "arithmetic_expansion",
        "process_substitution",
        "translated_string",
    }
)


@dataclass(frozen=True)
class Word:
    raw: str
    value: str | None  # the literal value; None when it holds an expansion
    start: int  # characters in the file
    end: int

    @property
    def inner(self) -> tuple[int, int]:
        """The span of the value's characters (inside quotes) when they are written as they are."""
        if self.value is not None and self.raw != self.value:
            at = self.raw.find(self.value)
            if at >= 0:
                return self.start + at, self.start + at + len(self.value)
        return self.start, self.end


@dataclass(frozen=True)
class Command:
    name: str  # the program, without its folder (`nvidia-smi` for `/usr/bin/nvidia-smi`)
    name_word: Word
    args: tuple[Word, ...]
    start: int
    end: int

    def literal(self, i: int) -> str | None:
        return self.args[i].value if i < len(self.args) else None


def text_of(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


def heredocs(node: Any) -> Iterator[tuple[Any, Any, Any]]:
    """Each here-document of a `redirected_statement` node: its redirect, its start word and its body."""
    for redirect in (c for c in node.named_children if c.type == "heredoc_redirect"):
        parts = {c.type: c for c in redirect.named_children}
        if "heredoc_body" in parts and "heredoc_start" in parts:
            yield redirect, parts["heredoc_start"], parts["heredoc_body"]


def literal(node: Any, source: bytes) -> str | None:
    """The literal value of an argument node, or None when it holds an expansion."""
    kind = node.type
    raw = text_of(node, source)
    if kind in ("word", "number"):
        if "\\" in raw or "$" in raw or "`" in raw:
            return None if "$" in raw or "`" in raw else raw.replace("\\", "")
        return raw
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        if any(
            c.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion")
            for c in node.named_children
        ):
            return None
        inner = raw[1:-1]
        return None if "\\" in inner else inner
    if kind == "concatenation":
        parts = [literal(c, source) for c in node.children]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    return None


def word(node: Any, source: bytes, offsets: Offsets) -> Word:
    return Word(
        text_of(node, source), literal(node, source), offsets.char(node.start_byte), offsets.char(node.end_byte)
    )


def command(node: Any, source: bytes, offsets: Offsets) -> Command | None:
    """The `Command` of a tree-sitter `command` node (None for one without a name)."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name_word = word(name_node, source, offsets)
    name = (name_word.value or name_word.raw).rsplit("/", 1)[-1]
    args = tuple(word(c, source, offsets) for c in node.children_by_field_name("argument") if c.type in ARGUMENT_TYPES)
    return Command(name, name_word, args, offsets.char(node.start_byte), offsets.char(node.end_byte))
