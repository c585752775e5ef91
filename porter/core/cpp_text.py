"""Where a C/C++/CUDA source's comments and literals are, for the readers that look for code in it
by regular expressions (the kernel inventory, the registration reader): a kernel or a
registration commented out is none. Read as a C++ lexer meets them, in time linear in the text."""

from __future__ import annotations

import re
from collections.abc import Iterator

# C/C++ comments, string literals and character literals (one character or escape: `1'000`'s
# digit separators are not one), in the order a C++ lexer meets them. A string always matches,
# to where it stops; one that did not close there (group 1 empty) is no literal (`not_code`).
# A raw string (`R"(...)"`, `u8R"x(...)x"`: NVRTC sources) runs to its `)delimiter"` (or the end,
# as an unclosed comment does): read as a plain string, a `"` or `/*` in it opened a literal
# or a comment that blanked the kernels after it, and a `__global__` in it was listed
# (twenty-eighth read). A `//` comment runs on over a line that ends in a backslash (the lines are
# spliced before comments are read): the kernel on the next line is commented out too, and was
# listed (twenty-ninth read). A splice may join a comment's own `/` and `*` too: `/* ... *\` then `/`
# closes the comment there, and a comment read on to the next `*/` hid the kernels between (its leftover)
_SPLICES = r"(?:\\\r?\n)*"
_LINE_COMMENT = r"/" + _SPLICES + r"/(?:\\\r?\n|[^\n])*"
_BLOCK_COMMENT = r"/" + _SPLICES + r"\*.*?(?:\*" + _SPLICES + r"/|\Z)"
NOT_CODE = re.compile(
    _LINE_COMMENT + "|" + _BLOCK_COMMENT + r"|\"(?:\\.|[^\"\\\n])*(\"?)"
    r"|(?<!\w)(?:u8|[uUL])?R\"(?P<raw>[^()\\\s]{0,16})\(.*?(?:\)(?P=raw)\"|\Z)|'(?:\\.|[^'\\\n])'",
    re.S,
)
_BUT_STRINGS = re.compile(_LINE_COMMENT + "|" + _BLOCK_COMMENT + r"|'(?:\\.|[^'\\\n])'", re.S)
_BUT_STRINGS_START = re.compile(r"/" + _SPLICES + r"[/*]|'")
_NOT_NEWLINE = re.compile(r"[^\n]")

# C++'s digraphs, each as the token it is, padded to its length (offsets kept): `<% %>` bodies were
# none, their launches unsaid (twenty-eighth read); `%:define`, `%:if 0` and `<: :>` were not read as
# `#define`, `#if 0` and `[ ]` (a macro's parameter listed as a kernel, its uses' kernels nowhere:
# twenty-eighth read's leftover). `<::` is `<` then `::` unless `:` or `>` follows, as C++11 reads it.
_DIGRAPH = re.compile(r"%:%:|%:|<%|%>|<:(?!:(?![:>]))|:>")
_DIGRAPH_TOKEN = {"%:%:": "##  ", "%:": "# ", "<%": "{ ", "%>": " }", "<:": "[ ", ":>": " ]"}


def undigraphed(code: str) -> str:
    """`code` (no comment or literal in it) with its digraphs as the tokens they are, offsets kept."""
    return _DIGRAPH.sub(lambda m: _DIGRAPH_TOKEN[m.group()], code)


def has_digraphs(text: str) -> bool:
    """Whether `text` may hold a digraph (the cheap test before `undigraphed`)."""
    return any(d in text for d in ("<%", "%:", "<:"))


def not_code(text: str) -> Iterator[re.Match[str]]:
    """The comments and literals of `text`, in time linear in it. A `"` whose string does not
    close on its line opens none, and the scan goes on after it; every `"` before where that
    string stopped is escaped in its reading, so opens none either: up to there only comments
    and character literals are looked for (tried from each `"` again, the scan was quadratic)."""
    pos = 0
    while (m := NOT_CODE.search(text, pos)) is not None:
        if m.group(1) != "":  # not a string, or one that closed
            yield m
            pos = m.end()
            continue
        pos, stop = m.start() + 1, m.end()
        while (start := _BUT_STRINGS_START.search(text, pos, stop)) is not None:
            hit = _BUT_STRINGS.match(text, start.start())
            if hit is None:
                pos = start.start() + 1
                continue
            yield hit
            pos = hit.end()
        pos = max(pos, stop)


def is_comment(m: re.Match[str]) -> bool:
    """Whether a match of `not_code` is a comment (not a string or character literal)."""
    return m.group(0)[0] == "/"


def blanked(text: str, strings: bool) -> str:
    """`text` with its comments (and, where `strings`, its string literals) as spaces and its digraphs
    as the tokens they are (`undigraphed`), lines and offsets kept: a kernel or a registration
    commented out (or quoted in a string) is none."""
    spelled = undigraphed if has_digraphs(text) else str
    out: list[str] = []
    at = 0
    for m in not_code(text):
        kept = not strings and not is_comment(m)
        out += [spelled(text[at : m.start()]), m.group(0) if kept else _NOT_NEWLINE.sub(" ", m.group(0))]
        at = m.end()
    out.append(spelled(text[at:]))
    return "".join(out)


def blank_comments(source: bytes) -> bytes:
    """`source` with each comment's bytes as spaces (its newlines kept), its literals as they are and
    its digraphs as the tokens they are (`blanked`): the same length and lines, so offsets into it
    are the source's. A registration in a comment (`// TORCH_LIBRARY_IMPL(ns, CPU, m) { ... }`, a CPU
    kernel not built yet) was read as one, and an op registered for CUDA only was not said to be
    (twenty-ninth read); one in `<% %>` (or by a `%:define`d macro) was none, and an op with a CPU
    kernel was said to be CUDA-only (twenty-ninth read, second wave)."""
    text = source.decode("latin-1")  # one character a byte: offsets kept
    if "/" not in text and not has_digraphs(text):
        return source
    return blanked(text, strings=False).encode("latin-1")
