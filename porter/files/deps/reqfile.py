"""requirements*.txt and constraints*.txt: pip's requirements file format, line by line.

pip reads these files itself (pip._internal is no API), and no maintained library gives the
place of each line's parts, which an edit that leaves every other byte alone needs; so the line
grammar of pip's docs ("Requirements File Format") is read here: a line ending in `\\` goes on
on the next one, `#` at the start or after a blank starts a comment, a line starting with `-`
is an option, any other line is a requirement (PEP 508, read by `packaging`) or a URL or path,
optionally followed by per-requirement options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from porter.config.settings import Settings
from porter.core.textsafe import printable
from porter.files.deps import requirement
from porter.files.deps.indexes import index_sites
from porter.files.deps.pip_options import REQUIREMENTS_FILE, long_option
from porter.files.deps.target_packages import added_message, insertion, missing_lines
from porter.files.sites import LINE_BREAK, Site, Text

_COMMENT = re.compile(r"(?:^|\s)#")
# (from the start of a run of spaces only: from each space of a run it ran to the run's end)
_REQ_OPTION = re.compile(r"(?<!\s)\s+--?[A-Za-z]")
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")


@dataclass(frozen=True)
class Line:
    """One logical line: [start, end) in the text without its line break (`next` is where
    the following line starts); `content` ends before a comment."""

    start: int
    end: int
    next: int
    content: str
    # (offset in `content`, offset in the text) where each joined physical line's part starts
    pieces: tuple[tuple[int, int], ...] = ((0, 0),)

    def text_offset(self, at: int) -> int:
        """Where `content[at]` is in the file's text (a joined line drops `\\`, line breaks, indents)."""
        piece = max(i for i, (c, _) in enumerate(self.pieces) if c <= at)
        return self.pieces[piece][1] + at - self.pieces[piece][0]

    def spans_a_join(self, start: int, end: int) -> bool:
        """Whether `content[start:end]` is written across a continuation (not whole in one line)."""
        return any(start < c < end for c, _ in self.pieces)


def lines(text: str) -> list[Line]:
    """The file's logical lines, ended as pip ends them (`str.splitlines`: CR-only files too) and
    joined as pip's `join_lines` joins them: a line ending in `\\` goes on to the next one unless
    it starts with a comment, a comment after a requirement included (`torch  # pinned \\`: the
    next line is part of that comment to pip, which installs nothing from it), and the last line
    too; the comment is cut from the joined line. porter read such a next line as a requirement of
    its own (DEP005 on a `cupy-cuda12x` pip never installs) and put its DEP004 line there, inside
    the comment: the ported file installed no target package (thirty-first read)."""
    out: list[Line] = []
    at = 0
    n = len(text)
    while at < n:
        start = at
        parts: list[str] = []
        pieces: list[tuple[int, int]] = []
        joined_len = 0  # (kept, not summed per part: a run of continued lines would be quadratic)
        while True:
            brk = LINE_BREAK.search(text, at)
            end = n if brk is None else brk.start()
            physical, written = text[at:end], at
            at = n if brk is None else brk.end()
            # (pip's `COMMENT_RE.match`: the line starts with a comment; `\s*#` was quadratic when searched)
            starts_a_comment = physical.lstrip().startswith("#")
            if physical.endswith("\\") and not starts_a_comment:
                part = physical.strip("\\")  # (pip strips each end of every backslash)
                pieces.append((joined_len, written + len(physical) - len(physical.lstrip("\\"))))
                parts.append(part)
                joined_len += len(part)
                continue
            part = " " + physical if parts and starts_a_comment else physical
            pieces.append((joined_len + len(part) - len(physical), written))
            parts.append(part)
            break
        joined = "".join(parts)
        comment = _COMMENT.search(joined)
        content = joined if comment is None else joined[: comment.start()]
        out.append(Line(start, end, at, content, tuple(pieces)))
    return out


def requirement_text(line: Line) -> str | None:
    """The requirement of a line (options after it cut off), or None for options and blanks."""
    content = line.content.strip()
    if not content or content.startswith("-"):
        return None
    cut = _REQ_OPTION.search(content)
    return content[: cut.start()] if cut else content


def option(line: Line) -> tuple[str, str] | None:
    """(option, value) of an option line (`--extra-index-url URL`, `-i=URL`), else None. A short
    option is one letter, its value may follow it at once (`-cpins.txt`, `-ihttps://…`: pip 23.2.1's
    optparse reads `-c pins.txt`; porter read an option `-cpins` with the value `.txt`)."""
    content = line.content.strip()
    if not content.startswith("-"):
        return None
    m = re.match(r"(--[A-Za-z][\w-]*|-[A-Za-z])(?:\s*=\s*|\s+)?(.*)", content)
    if m is None:
        return None
    return long_option(m.group(1), REQUIREMENTS_FILE), m.group(2).strip()  # (`--extra-index`: pip's)


def unparsable(text: str) -> list[int]:
    """1-based numbers of lines that are neither options, requirements, URLs nor paths."""
    bad = []
    for i, line in enumerate(lines(text), start=1):
        req = requirement_text(line)
        if req is None or requirement.parse(req) is not None:
            continue
        if "/" in req or ":" in req or req.startswith(".") or req.endswith((".whl", ".tar.gz", ".zip")):
            continue
        bad.append(i)
    return bad


def port(text: Text, path: str, settings: Settings) -> list[Site]:
    ctx = requirement.Context(settings.target, settings.imported_after_port)
    constraints = "constraint" in path.rsplit("/", 1)[-1].lower() or path in settings.constraint_files
    out: list[Site] = []
    torch_line: Line | None = None
    names: list[str] = []
    options: list[tuple[str, str]] = []
    for line in lines(text.text):
        opt = option(line)
        if opt is not None:
            options.append(opt)
            out.extend(_option_sites(text, line, opt, ctx))
            continue
        req = requirement_text(line)
        if req is None:
            continue
        out.extend(_requirement_sites(line, req, ctx))
        parsed = requirement.parse(req)
        if parsed is not None:
            names.append(parsed.name)
            if requirement.canonical(parsed.name) == "torch" and torch_line is None:
                torch_line = line
    if torch_line is not None and not constraints:
        option_values = [v for _, v in options]
        site = _target_packages(text, path, settings, torch_line, names, option_values)
        named_at = dict(settings.constraints_too).get(path)
        if site is not None and named_at is not None:
            site = _not_into_constraints(site, torch_line, named_at)
        elif site is not None and site.replacement and path in settings.given_by_name:
            site = replace(site, advice=_GIVEN_ALONE)
        if site is not None:
            out.append(site)
    return out


# (a pins file linted alone, `porter lint requirements-pins.txt`: the file naming it with `-c` is not read)
_GIVEN_ALONE = (
    "porter was given this file alone: where a file it did not read names it with `-c` (pip's constraints,"
    " no extras there), name it `constraints*.txt`."
)


def _not_into_constraints(site: Site, torch_line: Line, named_at: str) -> Site:
    """DEP004 reported on torch's line, not added: pip may read this file as constraints too (`named_at`: what
    names it with `-c`, as `constraint_files.constraint_roles` says it)."""
    return Site(
        "DEP004",
        torch_line.start,
        torch_line.end,
        None,
        message=site.message,
        # the naming file as every output shows a name: the text format's help line folds blanks, and
        # `a<LF>b/Dockerfile:3` read `a b/Dockerfile:3`, another file (thirty-fourth read)
        advice=f"{printable(named_at)}: pip refuses extras in constraints, so nothing is"
        " added here; install the target's packages from another requirements file.",
    )


def _requirement_sites(line: Line, req: str, ctx: requirement.Context) -> list[Site]:
    """The sites of the line's requirement, placed where its characters are written: one written
    across a continuation (`torch==2.3.0\\` then `+cu121`) was looked for whole in the text, not
    found (-1: "requirements.txt:0:-34", or another line's copy), and `rewrite` cut `+cu121` at
    the wrong place (`torch==2.3.121`; `torch==2.3.0+cu121 \\` then `; marker`: `torch==2.3.1`,
    another release). Now each site is placed by character, and no edit spans a continuation."""
    offset = len(line.content) - len(line.content.lstrip())  # (`requirement_text` strips, then cuts)
    place = requirement.Place(offset, (line.start, line.next))
    return _placed_in_text(line, requirement.sites(req, place, ctx), place.removable)


def _placed_in_text(line: Line, sites: list[Site], removable: tuple[int, int] | None) -> list[Site]:
    """Sites placed in the line's content, moved to where their characters are in the text."""
    out = []
    for site in sites:
        if (site.start, site.end) != removable:  # (in the content: the whole line's removal is the text's)
            inside = line.spans_a_join(site.start, site.end)
            start, end = line.text_offset(site.start), line.text_offset(max(site.start, site.end - 1)) + 1
            site = replace(site, start=start, end=max(start, end), replacement=None if inside else site.replacement)
        out.append(site)
    return out


def _option_sites(text: Text, line: Line, opt: tuple[str, str], ctx: requirement.Context) -> list[Site]:
    """An option line's sites: an index it names (`--extra-index-url URL`), or the requirement an
    editable install (`-e PATH`) names; other options have none."""
    name, value = opt
    if name in _INDEX_OPTIONS:
        at = text.text.find(value, line.start, line.end) if value else -1
        if at >= 0:
            return index_sites(text.text, at, value, ctx.target, (line.start, line.next))
        # a value written across a continuation (`--extra-index-url https://download.pytorch.org/whl/\` then
        # `cu121`: pip 23.2.1 joins the lines first and asks that index) is in no one place of the text: placed by
        # character, reported where the join splits it, never edited there (thirty-sixth read)
        value_at = line.content.find(value) if value else -1
        whole = (line.start, line.next)
        return (
            _placed_in_text(line, index_sites(line.content, value_at, value, ctx.target, whole), whole)
            if value_at >= 0
            else []
        )
    if name in ("-e", "--editable"):
        # placed by character as a requirement is: a value written across a continuation was looked for
        # whole in the text, and found in a later comment's copy (or nowhere: -1)
        value_at = len(line.content.rstrip()) - len(value)
        return _placed_in_text(line, requirement.sites(value, requirement.Place(value_at, None), ctx), None)
    return []


def _target_packages(
    text: Text, path: str, settings: Settings, torch_line: Line, names: list[str], option_values: list[str]
) -> Site | None:
    """DEP004 after torch's line where the target's packages are missing: an insertion, or, where
    the project's build reads the file as its package's requirements, advice and no edit."""
    torch = requirement.parse(requirement_text(torch_line) or "")
    if path not in settings.build_requirements:
        return insertion(text.text, torch_line.end, torch, names, option_values, settings.target)
    # the project's build code reads every line of this file as a requirement of its
    # package: no option line may go in, and the target's packages are no hard dependency
    lines_ = missing_lines(torch, names, option_values, settings.target, pip_options=False)
    if lines_ is None:
        return None
    target = settings.target
    return Site(
        "DEP004",
        torch_line.start,
        torch_line.end,
        None,
        message=added_message(lines_, target),
        advice="The project's build code reads this file as its package's requirements (each line a requirement): "
        f"leave it, and add {', '.join(f'`{x}`' for x in lines_)} as an opt-in, e.g. a "
        f"requirements-{target}.txt the build reads into an extra `{target!r}`, "
        f"installed with the target's index.",
    )
