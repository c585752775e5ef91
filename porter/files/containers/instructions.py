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
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    escape = "\\"
    out: list[Instruction] = []
    i = 0
    directives = True
    while i < len(lines):
        raw = lines[i]
        body = raw.rstrip("\r\n")
        stripped = body.strip()
        if directives:
            m = _DIRECTIVE.match(stripped)
            if m is not None:
                if m.group(1).lower() == "escape" and m.group(2) in ("\\", "`"):
                    escape = m.group(2)
                i += 1
                continue
            directives = False
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        m = _INSTRUCTION.match(body)
        if m is None:
            i += 1
            continue
        first = i
        args_start = starts[i] + m.end()
        # continuation lines: the line (comment lines aside) ends in the escape character
        end_line = i
        while body.rstrip().endswith(escape) and end_line + 1 < len(lines):
            end_line += 1
            body = lines[end_line].rstrip("\r\n")
            while body.strip().startswith("#") and end_line + 1 < len(lines):
                end_line += 1
                body = lines[end_line].rstrip("\r\n")
        args_end = starts[end_line] + len(lines[end_line].rstrip("\r\n"))
        inst = Instruction(m.group(1).upper(), starts[first] + m.start(1), (args_start, args_end), line=first + 1)
        i = end_line + 1
        for doc in _HEREDOC.finditer(text[args_start:args_end]):
            marker = doc.group(2)
            body_start = starts[i] if i < len(starts) else len(text)
            while i < len(lines) and lines[i].rstrip("\r\n").strip() != marker:
                i += 1
            body_end = starts[i] if i < len(lines) else len(text)
            inst.heredocs.append((body_start, body_end))
            i += 1
        out.append(inst)
    return out
