"""The Markdown report: fits a pull-request comment (GitHub caps a comment at 65,536 chars).

Summary, per-rule table, per-file readiness, the manual-work checklist, then one collapsed
`<details>` block per file with its diff. When the diffs would not fit, the later ones are
left out with a line saying how many, so the summary always survives.
"""

from __future__ import annotations

import html
import re

from porter.report.model import INFO, INFO_TITLES, FileReport, ReportModel
from porter.core.textsafe import block_text, inert, markdown_text, path_name, printable

MAX_CHARS = 60_000  # under GitHub's 65,536 with room for a bot's own header
MAX_MANUAL_ITEMS = 200
MAX_FILE_DIFF_CHARS = 20_000
MAX_LINE_CHARS = 1_000  # of one source line quoted for a manual site


def _cell(text: object) -> str:
    """Running text from a file, a message or an exception for a table cell: `_inline`'s
    escaping, and a pipe inside a code span escaped for the table too (GFM takes `\\|` out of
    a cell before it reads its spans, code spans included). Its backslashes are not doubled
    again: that would undo `_inline`'s escapes (`\\[x](url)` → `\\\\[x](url)`, a link)."""
    return _inline(text, table=True)


def _name_cell(text: object) -> str:
    """A name from the tree (a folder's, as `--split` names an area) for a table cell: `_cell`,
    but its spaces kept as they are and every line break and tab shown as an escape (`d<TAB>ir`
    and `d<LF>ir` were both `d ir`: eighteenth read), its own backslashes doubled as
    `path_name` shows them (so a folder `d\\x09ir` is not read as `d<TAB>ir`)."""
    return _inline(path_name(str(text)), table=True, name=True)


def _code_cell(text: str) -> str:
    """A name as inline code in a table cell."""
    return _code(text).replace("|", "\\|")


# what Markdown (and GitHub's) reads as markup or HTML in running text: escaped with `\`
_MARKUP = re.compile(r"([\\*_\[\]<>!#|~&`])")
# what GitHub reads in a comment's text (not in code) after Markdown is parsed, so no escape stops
# it but code: an @-mention notifies the user, or a whole team (`@org/team`); an issue reference
# (`#123`, already `\#` by `_MARKUP`; `owner/repo#123` in another repository) links it and puts a
# "mentioned this" event on that timeline (twenty-third read). The `@` or `#` is written as
# code. (`www.x.com` is linked too, but to the text it shows, and notifies no one: left as text)
_PINGS = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])|\\#(?=[0-9])")


def _one_line(text: object) -> str:
    """Text on one line, its control characters as `\\xNN`: a newline in a file name cannot
    end a code span or start a heading."""
    return printable(" ".join(str(text).split()))


def _inline(text: object, table: bool = False, name: bool = False) -> str:
    """Running text from a file, a message or an exception, for a Markdown line: one line, the
    `code` spans it holds kept as code, everything else with Markdown's and HTML's specials
    escaped (no link, image, heading or tag can be injected). A `name` keeps its spaces as
    they are, where running text has its whitespace collapsed."""
    parts = (printable(text) if name else _one_line(text)).split("`")
    if len(parts) % 2 == 0:  # an odd backtick: the last one is a character, not a span
        parts[-2:] = [parts[-2] + "`" + parts[-1]]  # escaped below with the rest of the text
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            code = _code(part) if part else "\\`\\`"
            out.append(code.replace("|", "\\|") if table else code)
        else:
            # a string from the tree in a message (`backend 'nccl @team'`) pinged whoever it named
            # when the report was a PR comment (eighteenth read); an issue `#123` was linked (twenty-third)
            out.append(_PINGS.sub(lambda m: f"`{m.group()[-1]}`", _MARKUP.sub(r"\\\1", part)))
    return "".join(out)


def _fence(body: str) -> str:
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return ticks


def _code(text: str) -> str:
    """Inline code that survives backticks (and newlines) in the text: its control characters
    shown as escapes, its spaces kept as they are. Whitespace was collapsed to one space, and
    `a<TAB>b.py`, `a<LF>b.py`, `a<CR>b.py`, `a<U+2028>b.py` and `a b.py` were all shown as
    `a b.py` (eighteenth read)."""
    text = printable(text)
    ticks = "`"
    while ticks in text:
        ticks += "`"
    # CommonMark takes one space off each end of a span that begins and ends with one
    ends = text.startswith("`") or text.endswith("`") or (text[:1] == text[-1:] == " " and text.strip(" ") != "")
    pad = " " if ends else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _rule_link(model: ReportModel, code: str) -> str:
    """A rule by code and name. No link: porter's rule pages are files of the local install
    (`file:///…`), which mean nothing in a pull-request comment; `porter explain CODE` prints
    the rule anywhere porter is installed (the report's rule table says so)."""
    r = next((r for r in model.rules if r.code == code), None)
    return f"**{_inline(code)}** {_code(r.name)}" if r is not None else f"**{_inline(code)}**"


def summary_markdown(model: ReportModel) -> list[str]:
    out = [f"## {model.title}", ""]
    if not model.counts_files:
        return out
    r = model.readiness
    text = model.readiness_text()
    if text.startswith("Readiness:"):
        head, rest = text.split(" — ", 1)
        text = f"**{head}** — {rest}"
    out.append(text)
    out.append("")
    c = model.counts
    out.append(
        f"Files: {c['scanned']} scanned, {c['changed']} changed, {c['unchanged']} unchanged, "
        f"{c['skipped']} skipped, {c['errors']} failed."
    )
    for reason, n in model.skipped.items():
        out.append(f"- skipped {n}: {_inline(reason)}")
    for err in model.error_files:
        where = f"{err.path}:{err.error_line}" if err.error_line else err.path
        out.append(f"- failed {_code(where)}: {_inline(err.reason)}")
    out.append("")
    if model.rules:
        ported = model.ported_label
        out += [
            "### Sites by rule",
            "",
            f"| code | rule (`porter explain CODE`) | family | found | {ported} "
            "| unsafe, not applied | manual | info (no action) | what to do |",
            "|---|---|---|--:|--:|--:|--:|--:|---|",
        ]
        for rule in model.rules:
            name = _code_cell(rule.name)
            todo = _cell(rule.advice or "") if (rule.manual or rule.unapplied) else ""
            out.append(
                f"| {_cell(rule.code)} | {name} | {_cell(rule.family)} | {rule.found} | {rule.rewritten} | "
                f"{rule.unapplied} | {rule.manual} | {rule.info} | {todo} |"
            )
        out.append(
            f"| | **total** | | **{r.sites + r.info}** | **{r.ported}** | **{r.unapplied}** | **{r.manual}** "
            f"| **{r.info}** | |"
        )
        out.append("")
    files = model.files_with_sites
    if len(files) > 1:
        out += ["### Readiness by file", "", "| file | sites | ported | left | readiness |", "|---|--:|--:|--:|--:|"]
        for f in sorted(files, key=lambda f: (-f.readiness.left, f.path))[:50]:
            rd = f.readiness
            out.append(f"| {_code_cell(f.path)} | {rd.sites} | {rd.ported} | {rd.left} | {rd.percent()} |")
        if len(files) > 50:
            out.append(f"| … {len(files) - 50} more files | | | | |")
        out.append(f"| **overall** | **{r.sites}** | **{r.ported}** | **{r.left}** | **{r.percent()}** |")
        out.append("")
    return out


def manual_markdown(model: ReportModel, budget: int = MAX_CHARS // 3) -> list[str]:
    work = model.manual_work()
    if not work:
        return []
    out = ["### Left for a person", ""]
    rule_advice = {r.code: r.advice for r in model.rules}
    lines = []
    for f, s in work[:MAX_MANUAL_ITEMS]:
        fd = s.finding
        tag = " (unsafe fix, not applied)" if s.outcome == "unapplied" else ""
        # the rule's advice is in the table above; repeat only advice particular to the site
        advice = f" — {_inline(fd.advice)}" if fd.advice and fd.advice != rule_advice.get(fd.code) else ""
        lines.append(
            f"- [ ] {_code(f'{f.path}:{fd.start.line}')} {_rule_link(model, fd.code)}{tag}: "
            f"{_inline(fd.message)}{advice}"
        )
    out += _within(lines, len(work), budget)
    out.append("")
    return out


def _within(lines: list[str], total: int, budget: int) -> list[str]:
    """As many of `lines` as fit in `budget` characters, then how many of `total` were left out."""
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > budget:
            break
        out.append(line)
        used += len(line) + 1
    if total > len(out):
        out.append(f"- … and {total - len(out)} more (see the JSON or HTML report)")
    return out


def info_markdown(model: ReportModel, budget: int = MAX_CHARS // 6) -> list[str]:
    """The info findings under their headings: no checkbox, there is nothing to do."""
    out: list[str] = []
    for group in INFO:
        items = model.info_findings(group)
        if not items:
            continue
        out += [f"### {INFO_TITLES[group]} ({len(items)})", "", "_No action needed; not counted in readiness._", ""]
        lines = [
            f"- {_code(f'{f.path}:{s.finding.start.line}')} {_rule_link(model, s.finding.code)}: "
            f"{_inline(s.finding.message)}"
            for f, s in items[:MAX_MANUAL_ITEMS]
        ]
        out += _within(lines, len(items), budget)
        out.append("")
    return out


def sections_markdown(model: ReportModel) -> list[str]:
    out: list[str] = []
    for sec in model.sections:
        out += [f"### {_inline(sec.title)}", ""]
        if sec.text:
            out += ["  \n".join(_inline(line) for line in sec.text.splitlines() if line.strip()), ""]
        if sec.rows:
            out.append("| " + " | ".join(_cell(c) for c in sec.columns) + " |")
            out.append("|" + "---|" * len(sec.columns))
            for row in sec.rows:
                out.append("| " + " | ".join(_cell("" if c is None else c) for c in row) + " |")
            out.append("")
    return out


def file_details(f: FileReport, limit: int = MAX_FILE_DIFF_CHARS) -> str:
    added, removed = f.line_counts()
    bits = [f"+{added} −{removed}", *f.status_bits()]
    summary = f"<code>{html.escape(printable(f.path))}</code> — {', '.join(bits)}"
    body = f.unified_diff()
    note = ""
    if not body:
        # a file with manual sites only: show those lines
        # each line once, however many sites it holds, and no longer than the block can show:
        # 20,000 sites on one 560 KB line took 17 GB and three minutes (the line once per site)
        lines = f.old_lines()
        rows: list[str] = []
        size = 0
        for number in dict.fromkeys(s.finding.start.line for s in f.marked_sites):
            text = lines[number - 1] if 0 < number <= len(lines) else ""
            text = text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"
            rows.append(f"{number:>5}  {text}\n")
            size += len(rows[-1])
            if size > limit:
                break
        body = "".join(rows)
        lang = "python"
    else:
        lang = "diff"
    # a source line's control characters shown as `\x1b` (`cat report.md` obeys none of
    # them); `--diff` keeps the bytes, as a patch must
    body = block_text(body)
    if len(body) > limit:
        cut = body.rfind("\n", 0, limit)
        body = body[: cut + 1 if cut > 0 else limit]
        note = "\n_Diff cut short to fit; the HTML or JSON report has all of it._\n"
    fence = _fence(body)
    return f"<details><summary>{summary}</summary>\n\n{fence}{lang}\n{body}{fence}\n{note}\n</details>\n"


def render_markdown(model: ReportModel, *, max_chars: int = MAX_CHARS) -> str:
    # a report is `cat` in CI steps too: no line of it is a CI log's command, its code blocks'
    # source and diff lines included (their `##vso[` shown `\x23#vso[`, as on a terminal;
    # twentieth read)
    head = markdown_text(
        inert(
            "\n".join(
                summary_markdown(model)
                + manual_markdown(model, budget=max_chars // 3)
                + info_markdown(model, budget=max_chars // 6)
                + sections_markdown(model)
            )
        )
    )
    parts = [head]
    used = len(head)
    shown = model.shown_files()
    if shown:
        parts.append("### Files\n")
        used += 12
    left_out = 0
    for i, f in enumerate(shown):
        block = markdown_text(inert(file_details(f)))
        if used + len(block) > max_chars - 200:
            left_out = len(shown) - i
            break
        parts.append(block)
        used += len(block)
    if left_out:
        parts.append(
            f"_{left_out} more file{'s' if left_out != 1 else ''} left out to fit a comment; "
            "see the HTML or JSON report._\n"
        )
    parts.append(f"<sub>porter {model.version} · {model.kind} · {model.generated_at}</sub>\n")
    return "\n".join(parts)
