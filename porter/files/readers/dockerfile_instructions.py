"""A Dockerfile's instructions, each with its place, by the Dockerfile reference's rules.

The reference fixes the format: parser directives (`# escape=`), comment lines, instructions
whose line ends in the escape character going on on the next line (comment lines between
them dropped), and BuildKit's here-documents (`RUN <<EOF ... EOF`). dockerfile-parse, the
Python library, reads a here-document's lines as instructions of their own and keeps no
character places, which an edit inside a RUN line needs; so the instructions are split here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from porter.core.reading import lines_of

_DIRECTIVE = re.compile(r"#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$")
_INSTRUCTION = re.compile(r"\s*([A-Za-z]+)(\s+|$)")
_HEREDOC = re.compile(r"<<-?\s*([\"']?)([A-Za-z0-9_]+)\1")


@dataclass
class Instruction:
    keyword: str  # upper case: FROM, RUN, ENV ...
    start: int  # the keyword's first character
    args: tuple[int, int]  # [start, end) of its arguments (continuation lines included, the last line break not)
    heredocs: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each here-document's body
    line: int = 0  # 1-based line of the keyword


def instructions(text: str) -> list[Instruction]:
    # lines as Docker ends them: a form feed or U+2028 (where str.splitlines also ends one) is
    # part of an instruction, and cut there it hid the rest (`RUN echo hi<U+2028> && pip install
    # cupy-cuda12x`: no DEP005)
    lines = lines_of(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    escape, i = _directives(lines)
    out: list[Instruction] = []
    while i < len(lines):
        body = lines[i].rstrip("\r\n")
        stripped = body.strip()
        m = _INSTRUCTION.match(body) if stripped and not stripped.startswith("#") else None
        if m is None:
            i += 1
            continue
        end_line = _last_line(lines, i, escape)
        args = (starts[i] + m.end(), starts[end_line] + len(lines[end_line].rstrip("\r\n")))
        inst = Instruction(m.group(1).upper(), starts[i] + m.start(1), args, line=i + 1)
        i = _heredocs(inst, text, lines, starts, end_line + 1)
        out.append(inst)
    return out


def _directives(lines: list[str]) -> tuple[str, int]:
    """The escape character the parser directives at the top set (a `# escape=` line), and the index of
    the first line after them: directives are read only before any other line."""
    escape = "\\"
    for i, raw in enumerate(lines):
        m = _DIRECTIVE.match(raw.rstrip("\r\n").strip())
        if m is None:
            return escape, i
        if m.group(1).lower() == "escape" and m.group(2) in ("\\", "`"):
            escape = m.group(2)
    return escape, len(lines)


def _last_line(lines: list[str], first: int, escape: str) -> int:
    """The index of an instruction's last line: while a line ends in the escape character the
    instruction goes on (comment lines between its lines skipped)."""
    end_line = first
    body = lines[first].rstrip("\r\n")
    while body.rstrip().endswith(escape) and end_line + 1 < len(lines):
        end_line += 1
        body = lines[end_line].rstrip("\r\n")
        while body.strip().startswith("#") and end_line + 1 < len(lines):
            end_line += 1
            body = lines[end_line].rstrip("\r\n")
    return end_line


def _heredocs(inst: Instruction, text: str, lines: list[str], starts: list[int], i: int) -> int:
    """Adds the bodies of the here-documents `inst` opens (`RUN <<EOF`), which follow it one after
    another from line `i`, each up to its marker line; returns the line after the last marker."""
    args_start, args_end = inst.args
    for doc in _HEREDOC.finditer(text[args_start:args_end]):
        marker = doc.group(2)
        body_start = starts[i] if i < len(starts) else len(text)
        while i < len(lines) and lines[i].rstrip("\r\n").strip() != marker:
            i += 1
        body_end = starts[i] if i < len(lines) else len(text)
        inst.heredocs.append((body_start, body_end))
        i += 1
    return i
