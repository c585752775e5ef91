"""How a kind's porter says that it cannot read a file (the file is reported, the run goes on)."""

from __future__ import annotations


class Unreadable(Exception):
    """The file is not valid in its format: `reason`, at `line` when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


class NeedsExtra(Exception):
    """The kind's parser is an optional dependency that is not installed (the message says
    which extra brings it)."""
