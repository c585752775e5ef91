"""User-controlled text (paths, messages, file contents) made safe for each place it is shown.

A file name or an exception message is data, never markup or terminal control: `x[/z].py`
must not be read as rich markup, and an escape sequence in a name must not move the cursor
or spoof a hyperlink. A name that is not UTF-8 is shown with `\\xNN` escapes, as git does,
so every output format can carry it.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable
from pathlib import PurePath


# Unicode's Bidi_Control characters: the marks (ALM, LRM, RLM), embeddings, overrides and
# isolates that reorder what a terminal shows (a name `x\u202eyp.txt` reads as `xtxt.py`:
# "Trojan Source"); one list, for every place text is shown
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
BIDI_CHARS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI}]")
# the invisible characters a terminal, a browser or a code view shows as nothing: Unicode's format
# characters (general category Cf: zero-width space, soft hyphen, word joiner, the byte-order mark,
# the TAG characters that can spell a hidden text) and the other Default_Ignorable_Code_Points: the
# combining grapheme joiner, the Hangul fillers that stand alone (U+3164, U+FFA0: the conjoining
# U+115F/U+1160 are part of a syllable), Khmer's inherent vowels, Mongolian's free variation
# selectors, the variation selectors VS1-VS14 and VS17-VS256 (VS15/VS16: UNSETTLED_WIDTH).
# `a<ZWSP>b.py` was shown as `ab.py`, the name of another file (seventeenth read); so were
# `a<VS1>b.py` and `葛<VS17>.py` (`葛.py`), a selector drawn as nothing where it picks no glyph
# (twenty-fourth read)
INVISIBLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200D), (0x2060, 0x2065), (0x206A, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0D),
    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE007F), (0xE0100, 0xE01EF),
)  # fmt: skip
INVISIBLE = "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in INVISIBLE_RANGES)
INVISIBLE_CHARS = "".join(chr(c) for a, b in INVISIBLE_RANGES for c in range(a, b + 1))
# the characters whose columns on a terminal depend on the character before them, and terminals
# count differently: the text and emoji presentation selectors (VS15, VS16: `❤️` is one column in
# xterm, VTE, Alacritty, Terminal.app, VS Code and pyte, two in kitty, iTerm2 and Ghostty, and one
# or two in rich by its version), the emoji skin-tone modifiers (`👍🏽` two or four) and the regional
# indicators (a flag of two: two columns or four). Shown as escapes, a name takes the same columns
# everywhere, so a table's border stays in its column on any terminal (a row of `❤️.py` ran one
# column past it or short of it: twentieth and twenty-first reads), and `❤️.py` and `❤.py`, two
# files, never read alike
UNSETTLED_WIDTH = "\ufe0e\ufe0f\U0001f1e6-\U0001f1ff\U0001f3fb-\U0001f3ff"
# the characters a terminal draws as blank columns, so `a<NBSP>b.py` reads as `a b.py` and
# `<U+2800>.py` as ` .py`: Unicode's space separators but the space itself (general category Zs:
# the list, not `unicodedata` at each import, which would walk 12,000 code points; a test checks it
# against `unicodedata`) and the braille blank U+2800 (a symbol, So: no property marks it blank)
BLANK = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800"
# the conjoining Hangul fillers U+115F and U+1160 that hold no letter of a syllable: a run of them
# with no other conjoining jamo on either side (alone, or after a precomposed syllable, which they
# leave unchanged) is two blank columns or nothing: `<U+115F><U+1160>x.py` read as `  x.py` (the
# twenty-third read). Beside a letter jamo they are the syllable's own (`<U+1100><U+1160>` is ㄱ)
_JAMO = "\u1100-\u11ff\ua960-\ua97c\ud7b0-\ud7fb"
LONE_FILLERS = f"(?<![{_JAMO}])[\u115f\u1160]+(?![{_JAMO}])"
# what an XML document may hold but a terminal obeys: DEL, C1 (CSI is U+009B), the line and
# paragraph separators and the bidi controls (JUnit on a terminal wrote U+2028 raw: sixteenth read),
# and what it draws blank (`a<NBSP>b.py` read as `a b.py` in `cat junit.xml`: twenty-fourth read)
_XML_REFERENCED = re.compile(f"[\x7f-\x9f\u2028\u2029{BIDI}{INVISIBLE}{BLANK}]|{LONE_FILLERS}")
# ... and in a serialized document, a CR: its own lines end at LF, so a CR is data (a name's), which
# an XML reader reads back as LF unless it is a reference (JUnit: seventeenth read)
_XML_DOCUMENT_REFERENCED = re.compile(f"[\r\x7f-\x9f\u2028\u2029{BIDI}{INVISIBLE}{BLANK}]|{LONE_FILLERS}")
# C0 and C1 control characters, DEL, the Unicode line/paragraph separators, the bidi controls,
# the invisible characters, those of an unsettled width and those drawn blank
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI}{INVISIBLE}{UNSETTLED_WIDTH}{BLANK}]|{LONE_FILLERS}")
# Unicode's noncharacters (U+FDD0-U+FDEF and the last two code points of each plane): an HTML page
# that holds one, raw or as a character reference, does not parse clean ("noncharacter-in-input-
# stream"): a file `<U+FFFF>.py` put one in the HTML report (thirty-fifth read, html5lib)
NONCHARACTERS = "\ufdd0-\ufdef" + "".join(chr(p + 0xFFFE) + chr(p + 0xFFFF) for p in range(0, 0x110000, 0x10000))
_NONCHARACTER = re.compile(f"[{NONCHARACTERS}]")
# what XML 1.0 cannot hold at all, not even as a character reference
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# a lone surrogate that is not a surrogate escape of an undecodable byte (U+DC80-U+DCFF): JSON
# holds any (`"\ud800"` in a trace manifest or a notebook), and UTF-8 can encode none
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
# the commands a CI log reads out of any line a step prints: GitHub's (and Azure's) `##[name]`,
# Azure Pipelines' `##vso[area.action]` (the agent's `IndexOf("##vso[", Ordinal)`: that case only)
# and TeamCity's `##teamcity[name]` anywhere in a line;
# GitHub's `::name::` at a line's start, after any white space (.NET's TrimStart: NBSP, U+3000
# too); lines end at CR as at LF. Text from the tree showing one is written with its first
# character escaped (the eighteenth read paused GitHub's runner only, on stderr: a step that
# drops stderr, a porter killed by SIGKILL, Azure and TeamCity were left: nineteenth read). Only
# those three forms: any `##word[` was escaped, a comment's `##tags[x]` shown `\x23#tags[x]`
# (twentieth read)
_HASH_COMMAND = re.compile(r"#(?=#(?:vso|teamcity)?\[)")
# (a line's start is the text's or a break's: a pattern that begins with the break lets the
# search skip to one, where `^` was tried at every character: 15 s over 27 MB)
_COLON_COMMAND = re.compile(r"([\r\n][^\S\r\n]*):(?=:)")
_COLON_FIRST = re.compile(r"([^\S\r\n]*):(?=:)")


def name(text: str) -> str:
    """A file system name as valid UTF-8: undecodable bytes (surrogate escapes) become `\\xNN`,
    any other lone surrogate `\\uXXXX`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def path_name(text: str) -> str:
    """A file's name as every output shows it: `name`'s `\\xNN` for each byte that is not
    UTF-8, and each backslash of the name itself doubled, so the two never read alike (a name
    holding the byte 0xFF shows `a\\xff.py`, one holding the four characters `\\xff` shows
    `a\\\\xff.py`); `name_bytes` reads it back."""
    return name(text.replace("\\", "\\\\"))


_SHOWN_ESCAPE = re.compile(rb"\\\\|\\x([89a-fA-F][0-9a-fA-F])")


def name_bytes(shown: str) -> bytes:
    """The bytes of the name `path_name` showed as `shown`."""
    return _SHOWN_ESCAPE.sub(
        lambda m: b"\\" if m.group(1) is None else bytes([int(m.group(1), 16)]), shown.encode("utf-8")
    )


def located_name(shown: str) -> str | None:
    """The name `path_name` showed as `shown` where it is UTF-8, for a format that locates the
    file (`a\\b.py` named no file: eighteenth read), else None: no text names
    those bytes, and `shown` (`a\\xff.py`) is the name of another file, the one whose name
    holds a backslash (a GitHub annotation's `file` attached it there: twenty-third read)."""
    if "\\" not in shown:
        return shown
    try:
        return name_bytes(shown).decode("utf-8")
    except UnicodeDecodeError:
        return None


def escaped_match(match: re.Match[str]) -> str:
    """A match of a control pattern as its escapes (`re.sub`'s replacement), each character its own
    (a run of Hangul fillers is one match)."""
    return "".join(map(escape_char, match.group()))


def escape_char(char: str) -> str:
    """One character as Python writes it in a string: `\\x1b`, `\\u200b`, `\\U000e0041` (a TAG
    character past U+FFFF was `\\ue0041`, which reads as U+E004 and a `1`)."""
    c = ord(char)
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


# the name of `unencodable_escaped` as a codec error handler (`codecs.register_error`)
UNENCODABLE = "porter.unencodable"


def unencodable_escaped(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: the characters an output's encoding lacks (an ASCII locale,
    `PYTHONIOENCODING`) as `\\uXXXX`. Python's `backslashreplace` writes `é` as `\\xe9`, which is
    how `name` shows the byte 0xE9 of a name that is not UTF-8: `café.py` and `caf<0xE9>.py`, two
    files, both read `caf\\xe9.py` (twenty-fourth read)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else escape_char(c) for c in text), error.end


def encodable(text: str, encoding: str) -> str:
    """`text` as a stream in `encoding` writes it (`unencodable_escaped`): for a console to lay
    out, since the stream escapes after the layout was measured (`café.py` measured 7 cells and
    was written as 12, the table's border moved: twenty-fourth read)."""
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        codecs.register_error(UNENCODABLE, unencodable_escaped)  # (the CLI registers it too; idempotent)
        return text.encode(encoding, UNENCODABLE).decode(encoding)
    except LookupError:  # an encoding Python does not know: the stream's own error says so
        return text
    return text


def inert(text: str, escape: Callable[[str], str] = escape_char) -> str:
    """`text` with the first character of each CI log command in it (`##vso[`, `##teamcity[`,
    `##[`, `::` starting a line) written by `escape`: read by a person, never by the CI."""
    if "##" in text:  # (a search in C: most text holds neither, and a JSON document is megabytes)
        text = _HASH_COMMAND.sub(lambda m: escape("#"), text)
    if "::" in text:
        text = _COLON_COMMAND.sub(lambda m: m.group(1) + escape(":"), text)
        first = _COLON_FIRST.match(text)  # the text's own start
        if first is not None:
            text = first.group(1) + escape(":") + text[first.end() :]
    return text


def framed_for_a_log(text: str) -> str:
    """Lines that must go out as they are (a patch: `git apply` reads the file's own bytes), on
    a GitHub Actions runner (`GITHUB_ACTIONS=true`) between `::stop-commands::TOKEN` and
    `::TOKEN::` in the same stream: the runner reads no command in them, no text in them can
    resume it (the token is random), and a killed porter leaves at most the rest of one patch
    paused. Under TeamCity (`TEAMCITY_VERSION` set) between `##teamcity[disableServiceMessages]`
    and `##teamcity[enableServiceMessages]`, its pause (whose end is a fixed text: a line of the
    patch that holds it ends the pause). `git apply` and `patch` pass over the frame's lines.
    Elsewhere `text` itself: Azure Pipelines has no pause (docs/safety.md)."""
    if not text:
        return text
    end = "" if text.endswith("\n") else "\n"
    if os.environ.get("GITHUB_ACTIONS") == "true":
        token = os.urandom(16).hex()
        text = f"::stop-commands::{token}\n{text}{end}::{token}::\n"
        end = ""
    if os.environ.get("TEAMCITY_VERSION"):
        text = f"##teamcity[disableServiceMessages]\n{text}{end}##teamcity[enableServiceMessages]\n"
    return text


def printable(text: object) -> str:
    """`text` with every control character (newline included) shown as an escape (a path as
    `path_name` shows it), and no CI log command in it (`inert`)."""
    shown = path_name(str(text)) if isinstance(text, PurePath) else name(str(text))
    return inert(_CONTROL.sub(escaped_match, shown))


def controls_escaped(text: str, keep: str = "") -> str:
    """`text` with its control characters shown as escapes, but those in `keep` (and as valid
    UTF-8: a lone surrogate as `\\uXXXX`), and no CI log command in it (`inert`)."""
    return inert(_controls(text, keep))


def _controls(text: str, keep: str) -> str:
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else escaped_match(m), name(text))


def inert_at(text: str, *points: int) -> tuple[str, list[int]]:
    """`inert(text)`, and where each index of `points` in `text` is in it (carets under a
    source line stay under the finding)."""
    escaped = [m.start() for m in _HASH_COMMAND.finditer(text)] if "##" in text else []
    if "::" in text:
        first = _COLON_FIRST.match(text)
        escaped += [first.end() - 1] if first else []
        escaped += [m.end() - 1 for m in _COLON_COMMAND.finditer(text)]
    if not escaped:
        return text, list(points)
    grown = len(escape_char(":")) - 1  # each escaped character's extra length
    return inert(text), [p + grown * sum(1 for i in escaped if i < p) for p in points]


def lines_printable(text: str) -> str:
    """Multi-line `text` for a terminal: control characters escaped, tabs and line ends (LF,
    CRLF) kept, no CI log command in any line (`inert`). A CR that ends no line is shown
    `\x0d`, as `block_text` shows it: a patch of a file with CR line ends (one patch line) was
    drawn as several lines on a terminal, all but the first without their `-` or `+`
    (twentieth read)."""
    text = name(text)
    return inert(
        _CONTROL.sub(
            lambda m: (
                m.group()
                if m.group() in "\t\n" or (m.group() == "\r" and text.startswith("\n", m.end()))
                else escaped_match(m)
            ),
            text,
        )
    )


def as_a_terminal_shows(text: str) -> str:
    """The lines of a program's output as a terminal leaves them: a carriage return goes back
    to the line's start and what follows writes over it (a progress bar shows its last state),
    a backspace goes back one column; a CR before a line end does nothing. Printed raw, the CRs
    were dropped (rich) and a bar's hundred states ran together on one line, or were written
    raw and went back over porter's own text. Nothing else is interpreted: what remains goes
    through `lines_printable`."""
    out = []
    for line in text.split("\n"):
        if "\r" not in line and "\b" not in line:
            out.append(line)
            continue
        cells: list[str] = []
        col = 0
        for ch in line:
            if ch == "\r":
                col = 0
            elif ch == "\b":
                col = max(0, col - 1)
            else:
                if col < len(cells):
                    cells[col] = ch
                else:
                    cells.append(ch)
                col += 1
        out.append("".join(cells))
    return "\n".join(out)


def block_text(text: str) -> str:
    """Lines of a file for a code block in a report (`cat report.md` on a terminal): control
    characters escaped, a bare carriage return and a backspace too (they overwrite what a
    terminal showed); tabs, newlines and CRLF line ends kept; bytes that are not UTF-8 as `\\xNN`."""
    text = name(text)
    return _CONTROL.sub(
        lambda m: (
            m.group()
            if m.group() in "\t\n" or (m.group() == "\r" and text.startswith("\n", m.end()))
            else escaped_match(m)
        ),
        text,
    )


_BARE_CR = re.compile(r"\r(?!\n|\Z)")


def html_text(text: str) -> str:
    """Text for an HTML page (before `html.escape`): control characters escaped, tabs, newlines
    and a CR that ends a line (CRLF, or a diff row's own line end) kept, noncharacters escaped (no
    page may hold them: `NONCHARACTERS`). A CR within a line was
    kept too, and `cat report.html` went back to the line's start over what came before (a file
    `a<CR>b.py`; the Markdown report shows it as `\\x0d`: seventeenth read)."""
    kept = _controls(text, keep="\t\n\r")  # a page for a browser, not a CI log: shown as written
    return _NONCHARACTER.sub(escaped_match, _BARE_CR.sub(r"\\x0d", kept))


def markdown_text(text: str) -> str:
    """Markdown for a PR comment, noncharacters escaped: its renderer (markdown-it-py, GitHub's
    cmark-gfm) passes them into the page raw, where no page may hold them (`NONCHARACTERS`), and a
    browser draws nothing for `<U+FFFF>` in `a<U+FFFF>.py` (thirty-fifth read's leftover)."""
    return _NONCHARACTER.sub(escaped_match, text)


def plain(text: object) -> str:
    """`text` for a rich console: control characters escaped, markup brackets escaped."""
    from rich.markup import escape  # (only a run that prints to a console imports rich)

    return escape(printable(text))


def xml_document(text: str) -> str:
    """A serialized XML document whose CR, DEL, C1, line separators, bidi controls, invisible and
    blank-drawn characters (data: a name, a message) are character references: the same
    characters to an XML reader (which reads a raw CR as LF), none obeyed or hidden by a
    terminal."""
    text = _XML_DOCUMENT_REFERENCED.sub(lambda m: "".join(f"&#x{ord(c):x};" for c in m.group()), text)
    return inert(text, lambda c: f"&#x{ord(c):x};")  # the same data, no CI log command


def json_document(text: str) -> str:
    """A serialized JSON document (`ensure_ascii=False`) whose DEL, C1, line separators, bidi
    controls, invisible and blank-drawn characters are `\\uXXXX` escapes: they stand only inside
    strings, so the data is the same to a reader, and `cat report.json` obeys none (the JSON
    report wrote a name's NEL, U+2028 and right-to-left override raw, where `lint
    --output-format json` escapes them)."""
    return json_inert(_XML_REFERENCED.sub(lambda m: json.dumps(m.group()).strip('"'), text))


def json_inert(text: str) -> str:
    """A serialized JSON document with no CI log command in it: `#` stands only inside strings,
    so `\\u0023` is the same data to a reader (a line of JSON never starts with `::`)."""
    return text if "##" not in text else _HASH_COMMAND.sub(r"\\u0023", text)


def xml(text: str) -> str:
    """`text` with the characters XML 1.0 forbids shown as escapes (tab and newline kept)."""
    return _NOT_XML.sub(escaped_match, text)


def git_quoted(path: str) -> str:
    """A path for a diff header, quoted as git quotes one (`"a/x\\033y.py"`, bytes past ASCII
    in octal) when it holds a control character, a quote, a backslash or bytes that are not
    UTF-8; `git apply` and `patch` read the quoted form."""
    raw = path.encode("utf-8", "surrogateescape")
    # C0, DEL, C1 (CSI is U+009B, NEL U+0085), the line/paragraph separators and the bidi
    # controls (git quotes every byte past ASCII by default: core.quotePath)
    if name(path) == path and not _CONTROL.search(path) and '"' not in path and "\\" not in path:
        return path
    special = {
        0x07: "\\a",
        0x08: "\\b",
        0x09: "\\t",
        0x0A: "\\n",
        0x0B: "\\v",
        0x0C: "\\f",
        0x0D: "\\r",
        0x22: '\\"',
        0x5C: "\\\\",
    }
    out = []
    for b in raw:
        if b in special:
            out.append(special[b])
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def columns(text: str) -> int:
    """The columns `text` takes on a terminal: a CJK character or an emoji two, a combining
    mark or a zero-width character none (as ruff counts them: carets under a finding, a plain
    table's columns)."""
    if text.isascii():
        return len(text)
    import unicodedata  # (only text past ASCII is measured)

    def width(c: str) -> int:
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf") or "\u1160" <= c <= "\u11ff":
            return 0
        return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1

    return sum(width(c) for c in text)
