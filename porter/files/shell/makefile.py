"""Makefiles: their variables, and their recipes, which are shell.

tree-sitter-make parses the Makefile (rules, recipes, assignments, `export`); each recipe line
(its `@`, `-`, `+` prefixes left out) is shell text and goes to porter.files.shell.script. A
Make variable reference (`$(GPUS)`) reads in bash as a command substitution: it is no literal,
so nothing that depends on its value is rewritten.

GNU make reads some Makefiles that tree-sitter-make does not (llama.cpp's has
`$(shell ... grep -oP 'release (\\K[0-9]+)')`: parentheses inside quotes in a function call).
Such a Makefile is still read, report-only: what parsed as before, and each line of a part
that did not parse as an assignment (`NAME := value`) or, otherwise, as shell text (a recipe
line, a `$(shell ...)` call). Nothing in it is rewritten: the rewrite could not be checked by
parsing it again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from porter.config.settings import Settings
from porter.files.shell import env as envvars
from porter.files.shell.parse import Offsets, parse
from porter.files.shell.script import shell_sites
from porter.files.shell.words import text_of
from porter.files.sites import Site, Text


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    source = text.source
    tree = parse(source, "make")
    offsets = Offsets(text.text)
    out: list[Site] = []
    unread: list[tuple[int, int]] = []  # the lines (0-based, inclusive) of the parts that did not parse
    stack: list[Any] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            unread.append((node.start_point[0], node.end_point[0]))
            continue
        if node.type == "recipe_line":
            start, end = offsets.char(node.start_byte), offsets.char(node.end_byte)
            code = text.text[start:end]
            skip = len(code) - len(code.lstrip("@-+ \t"))
            out.extend(shell_sites(code[skip:], start + skip, text.text, settings.target))
            continue
        if node.type == "variable_assignment":
            out.extend(_assignment(node, source, offsets, text.text, settings.target))
            continue
        if node.type == "rule":
            out.extend(_rule(node, source, offsets))
        stack.extend(reversed(node.children if node.has_error else node.named_children))
    if not unread:
        return out
    out.extend(_unread_lines(text, unread, settings.target))
    seen: set[tuple[str, int, int]] = set()
    kept: list[Site] = []
    for site in out:
        if (site.code, site.start, site.end) not in seen:
            seen.add((site.code, site.start, site.end))
            kept.append(replace(site, replacement=None))
    return kept


_ASSIGNMENT = re.compile(
    r"[ \t]*(?:(?:export|override|private)[ \t]+)*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(?:::?=|:::=|\+=|\?=|!=|=)[ \t]*"
)


def _unread_lines(text: Text, spans: list[tuple[int, int]], target: str) -> list[Site]:
    """The sites of the lines tree-sitter-make did not read, each read on its own."""
    lines: set[int] = set()
    for first, last in spans:
        lines.update(range(first, last + 1))
    out: list[Site] = []
    starts = text.line_starts
    for number in sorted(lines):
        if number >= len(starts):
            continue
        start = starts[number]
        end = starts[number + 1] - 1 if number + 1 < len(starts) else len(text.text)
        line = text.text[start:end].rstrip("\r")
        header = _RULE_LINE.match(line)
        if header is not None and not line.startswith("\t") and _ASSIGNMENT.match(line) is None:
            out.extend(_rule_sites(header.group(1).split(), header.group(2).split(), start, start + len(line.rstrip())))
            continue
        match = _ASSIGNMENT.match(line)
        if match is not None and not line.startswith("\t"):
            name_span = (start + match.start(1), start + match.end(1))
            value = line[match.end() :].rstrip()
            value_span = (start + match.end(), start + match.end() + len(value))
            literal = None if "$" in value else value.strip()
            out.extend(envvars.assignment(text.text, target, match.group(1), name_span, literal, value_span))
            continue
        skip = len(line) - len(line.lstrip("@-+ \t"))
        out.extend(shell_sites(line[skip:], start + skip, text.text, target))
    return out


# a target or prerequisite named for CUDA (`build.cuda`, `test-cuda12`, `ggml-cuda/%.o`,
# `$(OBJ_CUDA)`) or a CUDA source (`%.cu`, `common.cuh`)
_CUDA_WORD = re.compile(r"(?:^|[^a-z0-9])(?:cuda|cudnn|nccl|nvidia|nvcc)|\.cuh?$", re.IGNORECASE)
# make's special targets (`.PHONY`, `.SECONDARY`, ...): their prerequisites are declarations
_SPECIAL = re.compile(r"\.[A-Z_]+")
# a rule's first line in a part tree-sitter-make did not read: `targets: prerequisites`, each
# group split into words (the spaces around the colon in a group: `[^:#=]*?[ \t]*` was quadratic)
_RULE_LINE = re.compile(r"([^\s:#=$][^:#=]*)::?(?![=:])([^=;#]*)(?:[;#].*)?$")


def _rule(node: Any, source: bytes, offsets: Offsets) -> list[Site]:
    """A rule whose target or prerequisites are named for CUDA: one site over its first line
    (with its continuation lines), the recipe's lines being read as shell on their own."""
    targets = next((c for c in node.named_children if c.type == "targets"), None)
    if targets is None:
        return []
    prerequisites = next((c for c in node.named_children if c.type == "prerequisites"), None)
    end = (prerequisites or targets).end_byte
    return _rule_sites(
        [text_of(w, source) for w in targets.named_children],
        [text_of(w, source) for w in prerequisites.named_children] if prerequisites is not None else [],
        offsets.char(node.start_byte),
        offsets.char(end),
    )


def _rule_sites(targets: list[str], prerequisites: list[str], start: int, end: int) -> list[Site]:
    if not targets or all(_SPECIAL.fullmatch(t) for t in targets):
        return []
    named = next((t for t in targets if _CUDA_WORD.search(t)), None)
    if named is not None:
        return [Site("LCH008", start, end, None, message=f"the Make target `{named}` builds or runs for CUDA")]
    needs = next((p for p in prerequisites if _CUDA_WORD.search(p)), None)
    if needs is not None:
        return [Site("LCH008", start, end, None, message=f"`{targets[0]}` depends on `{needs}`, which is for CUDA")]
    return []


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
