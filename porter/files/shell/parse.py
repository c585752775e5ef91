"""Shell parsed with tree-sitter-bash (and Makefiles with tree-sitter-make), not line patterns.

tree-sitter's grammars are maintained with the tree-sitter project and parse real-world bash
(arrays, `[[ ]]`, arithmetic, here-documents, `case`) with error recovery; bashlex, the pure
Python choice, is GPL-licensed and stopped at bash's older subset. The grammars are compiled
wheels, so they are porter's `shell` extra: without them a shell script is reported as not
read, with the command that installs them.
"""

from __future__ import annotations

import importlib
from bisect import bisect_right
from functools import lru_cache
from typing import Any

from porter.files.errors import NeedsExtra

EXTRA = "pip install 'porter[shell]'"


@lru_cache(maxsize=2)
def _parser(grammar: str) -> Any:
    try:
        import tree_sitter
    except ImportError:
        raise NeedsExtra(f"reading shell needs tree-sitter: {EXTRA}") from None
    try:
        module = importlib.import_module("tree_sitter_bash" if grammar == "bash" else "tree_sitter_make")
    except ImportError:
        raise NeedsExtra(
            f"reading {'shell' if grammar == 'bash' else 'Makefiles'} needs tree-sitter-{grammar}: {EXTRA}"
        ) from None
    return tree_sitter.Parser(tree_sitter.Language(module.language()))


def parse(source: bytes, grammar: str = "bash") -> Any:
    return _parser(grammar).parse(source)


def available() -> bool:
    try:
        _parser("bash")
    except NeedsExtra:
        return False
    return True


def error_lines(root: Any) -> list[int]:
    """1-based lines of the parse errors (ERROR and MISSING nodes) under `root`."""
    if not root.has_error:
        return []
    out: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            out.append(node.start_point[0] + 1)
            continue
        if node.has_error:
            stack.extend(node.children)
    return sorted(out)


def errors(text: str) -> list[int]:
    """Lines where `text` does not parse as bash."""
    return error_lines(parse(text.encode("utf-8", "surrogateescape")).root_node)


class Offsets:
    """tree-sitter speaks UTF-8 bytes, porter's sites characters: the one from the other."""

    def __init__(self, text: str, base: int = 0) -> None:
        self.base = base
        self.ascii = text.isascii()
        if not self.ascii:
            # byte offset at which each character starts
            starts: list[int] = []
            at = 0
            for ch in text:
                starts.append(at)
                at += len(ch.encode("utf-8", "surrogateescape"))
            starts.append(at)
            self._starts = starts

    def char(self, byte: int) -> int:
        if self.ascii:
            return self.base + byte
        return self.base + bisect_right(self._starts, byte) - 1
