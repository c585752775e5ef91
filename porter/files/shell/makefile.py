"""Makefiles: their variables, and their recipes, which are shell.

tree-sitter-make parses the Makefile (rules, recipes, assignments, `export`); each recipe line
(its `@`, `-`, `+` prefixes left out) is shell text and goes to porter.files.shell.script. A
Make variable reference (`$(GPUS)`) reads in bash as a command substitution: it is no literal,
so nothing that depends on its value is rewritten.
"""

from __future__ import annotations

from typing import Any

from porter.config.settings import Settings
from porter.files.errors import Unreadable
from porter.files.shell import env as envvars
from porter.files.shell.parse import Offsets, error_lines, parse
from porter.files.shell.script import shell_sites
from porter.files.shell.words import text_of
from porter.files.sites import Site, Text


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    source = text.source
    tree = parse(source, "make")
    bad = error_lines(tree.root_node)
    if bad:
        raise Unreadable(f"does not parse as a Makefile (line {bad[0]}): left unchanged", bad[0])
    offsets = Offsets(text.text)
    out: list[Site] = []
    stack: list[Any] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "recipe_line":
            start, end = offsets.char(node.start_byte), offsets.char(node.end_byte)
            code = text.text[start:end]
            skip = len(code) - len(code.lstrip("@-+ \t"))
            out.extend(shell_sites(code[skip:], start + skip, text.text, settings.target))
            continue
        if node.type == "variable_assignment":
            out.extend(_assignment(node, source, offsets, text.text, settings.target))
            continue
        stack.extend(reversed(node.named_children))
    return out


def _assignment(node: Any, source: bytes, offsets: Offsets, text: str, target: str) -> list[Site]:
    name = node.child_by_field_name("name") or next((c for c in node.named_children if c.type == "word"), None)
    if name is None:
        return []
    value = node.child_by_field_name("value") or next((c for c in node.named_children if c.type == "text"), None)
    name_span = (offsets.char(name.start_byte), offsets.char(name.end_byte))
    if value is None:
        return envvars.assignment(text, target, text_of(name, source), name_span, "", None)
    raw = text_of(value, source).rstrip("\n")
    value_span = (offsets.char(value.start_byte), offsets.char(value.start_byte) + len(raw))
    literal = None if "$" in raw else raw.strip()
    return envvars.assignment(text, target, text_of(name, source), name_span, literal, value_span)
