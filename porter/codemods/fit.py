"""A line porter lengthens past the project's own formatter limit is split as the formatter would.

`.cuda()` -> `.to(torch.accelerator.current_accelerator())` adds 37 characters: in a project
whose black or ruff allows 100 (megatron-core's `[tool.black] line_length = 100`), the edited
line is one its CI rejects, and a reviewer asks for the formatter's layout. The runner reads the
limit from the configuration that governs the file (`porter.config.line_length`) into the file's
settings, and `fit` splits a line the port changed that no longer fits the way black's
right-hand split does: the contents of the line's last bracket pair on a line of their own, one
level deeper, the closing bracket on the next:

    local_len = torch.tensor([n], dtype=torch.int32).to(
        torch.accelerator.current_accelerator()
    )

Only a line that is a whole statement by itself, ends with that bracket and has no comment is
split, only where every part then fits, and only when the file's syntax tree is the same after
(the split changes layout, nothing else). A project that declares no limit is left as porter
wrote it. Lines porter did not change are never touched.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from porter.core.reading import lines_of


_OPEN = {")": "(", "]": "[", "}": "{"}
# a comment line that turns the formatter off or on again (black's and ruff's `# fmt: off` /
# `# fmt: on`, yapf's `# yapf: disable` / `# yapf: enable`, which black honours too)
_FORMATTER = re.compile(r"#\s*(?:fmt:\s*(off|on)|yapf:\s*(disable|enable))\s*$")


def fit(old: bytes, new: bytes, limit: int | None, encoding: str = "utf-8") -> bytes:
    """`new` with each line porter made (not in `old`) longer than `limit` split as black's
    right-hand split does, where it can be (not where `# fmt: off` turns the formatter off);
    `new` itself where nothing changes."""
    if not limit:
        return new
    try:
        text = new.decode(encoding)
        before = {line.rstrip("\r\n") for line in lines_of(old.decode(encoding))}
    except (UnicodeDecodeError, LookupError):
        return new
    # lines where Python ends them: str.splitlines also cut at a U+2028 or a form feed in a
    # string, and the two pieces, neither a statement, were left too long
    lines = lines_of(text)
    changed = False
    off = False  # between `# fmt: off` and `# fmt: on`, where the formatter keeps lines as written
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        switch = _FORMATTER.match(body.strip())
        if switch is not None:
            off = switch.group(1) == "off" or switch.group(2) == "disable"
        if off or len(body) <= limit or body in before:
            continue
        split = _right_hand_split(body, limit)
        if split is not None:
            ending = line[len(body) :]
            lines[i] = (ending or "\n").join(split) + ending
            changed = True
    if not changed:
        return new
    out = "".join(lines)
    try:
        if ast.dump(ast.parse(out)) != ast.dump(ast.parse(text)):
            return new
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return new
    return out.encode(encoding)


def _right_hand_split(line: str, limit: int) -> list[str] | None:
    """The three lines of black's right-hand split of `line` (head and opening bracket, the
    contents one level deeper, the closing bracket), or None where it does not apply or fit."""
    lead = line[: len(line) - len(line.lstrip())]
    indent = lead.replace("\x0c", "")  # a form feed (a page break) stays on the first line only
    code = line.strip()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    stack: list[int] = []
    last: tuple[int, int] | None = None  # (column of the opening bracket, of the closing one)
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL) or tok.start[0] > 2:
            return None  # a comment, or more than one line
        if tok.type != tokenize.OP:
            continue
        if tok.string in "([{":
            stack.append(tok.start[1])
        elif tok.string in ")]}":
            if not stack:
                return None
            last = (stack.pop(), tok.start[1])
    if stack or last is None or last[1] != len(code) - 1:
        return None
    opening, closing = last
    head, inner, tail = code[: opening + 1], code[opening + 1 : closing].strip(), code[closing:]
    if not inner or not head.strip("([{ "):
        return None
    parts = [lead + head, indent + "    " + inner, indent + tail]
    return None if any(len(p) > limit for p in parts) else parts
