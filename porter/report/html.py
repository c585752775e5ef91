"""The HTML report: one self-contained file, no network, no external assets.

Summary and readiness, the per-rule table, the manual-work list (each item links to its line
in the diff and to the rule's explanation, inlined so it works offline), then one collapsible
side-by-side diff per file, and checkboxes that filter everything by rule family.

Built for big ports: the diff is a plain table from `difflib.SequenceMatcher` opcodes (not
`difflib.HtmlDiff`), only changed regions and manual sites with a few lines of context are
emitted, files past a row budget start collapsed (a closed <details> costs the browser almost
nothing to lay out), and the script does no work per diff row at load.
"""

from __future__ import annotations

import difflib
import html
import json
import re

from porter.core.textsafe import html_text, inert, printable
from porter.report.model import INFO, INFO_TITLES, FileReport, Hunk, ReportModel, Row

OPEN_ROWS_BUDGET = 3000  # diff rows shown expanded at load; later files start collapsed
MANUAL_ROWS = 300  # manual-work rows built at load; the rest on "show all"
MAX_INLINE_DIFF = 400  # longest line pair that gets character-level highlights


def _e(text: object, quote: bool = True) -> str:
    """HTML-escaped, with control characters shown as `\\x1b` (tabs and line ends kept, `html_text`):
    text from a trace manifest or a file reached the report raw, and `cat report.html` obeyed it."""
    return html.escape(html_text(str(text)), quote)


def _name(text: object) -> str:
    """A file's name, HTML-escaped, every control character shown as an escape: a tab or a
    newline kept raw (as `_e` keeps them in a diff) is a space on the page, and `a<TAB>b.py`,
    `a<LF>b.py` and `a b.py` read alike (eighteenth read)."""
    return html.escape(html_text(printable(text)))  # (and no noncharacter: `html_text`)


_TICKS = re.compile(r"`([^`]+)`")
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")


def _prose(text: str | None) -> str:
    """Escaped prose with `code` spans (rule messages and advice use them) as <code>."""
    return _TICKS.sub(r"<code>\1</code>", _e(text or ""))


CSS = """
:root{--bg:#fff;--fg:#1f2328;--mut:#656d76;--bd:#d0d7de;--add:#dafbe1;--addx:#aceebb;--del:#ffebe9;--delx:#ffcecb;
--man:#fff8c5;--sep:#ddf4ff;--card:#f6f8fa;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#8d96a0;--bd:#30363d;\
--add:#12261e;--addx:#1f6f3b;
--del:#25171c;--delx:#792e2e;--man:#2e2a12;--sep:#121d2f;--card:#161b22;--link:#4493f8}}
*{box-sizing:border-box}
body{margin:0;padding:16px 24px;font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;\
background:var(--bg);color:var(--fg)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:22px;margin:0 0 8px}\
h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid var(--bd);padding-bottom:4px}
code,.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0}
.card{background:var(--card);border:1px solid var(--bd);border-radius:6px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:24px}.card span{color:var(--mut);font-size:12px}
.bar{height:10px;background:var(--del);border-radius:5px;overflow:hidden;max-width:480px;margin:6px 0}
.bar i{display:block;height:100%;background:#2da44e}
table.t{border-collapse:collapse;margin:6px 0}
#manual table.t{table-layout:fixed;width:100%}#manual col.w{width:22%}#manual col.r{width:18%}#manual col.f{width:30%}
table.t th,table.t td{border:1px solid var(--bd);padding:3px 8px;text-align:left;vertical-align:top}
table.t td.n,table.t th.n{text-align:right}
.filters{position:sticky;top:0;background:var(--bg);padding:6px 0;border-bottom:1px solid var(--bd);z-index:2}
.filters label{margin-right:12px;white-space:nowrap}
.filters button{margin-left:6px}
.mut{color:var(--mut)}
details.file{border:1px solid var(--bd);border-radius:6px;margin:8px 0}
details.file>summary{padding:6px 10px;background:var(--card);cursor:pointer;position:sticky;top:34px;z-index:1}
details.file>summary .st{float:right;color:var(--mut)}
.add{color:#1a7f37}.del{color:#cf222e}
table.d{content-visibility:auto;border-collapse:collapse;width:100%;table-layout:fixed;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
table.d td{padding:0 6px;white-space:pre-wrap;word-break:break-all;vertical-align:top}
table.d td.n{width:48px;text-align:right;color:var(--mut);user-select:none;border-right:1px solid var(--bd)}
table.d col.n{width:52px}
tr.r td.o,tr.d td.o{background:var(--del)}tr.r td.w,tr.i td.w{background:var(--add)}
tr.r td.o .x{background:var(--delx)}tr.r td.w .x{background:var(--addx)}
tr.s td{background:var(--sep);color:var(--mut);padding:2px 8px}
tr.m td.o,tr.m td.w{box-shadow:inset 3px 0 #d4a72c;background:var(--man)}
tr.note td{background:var(--man);padding:3px 10px;\
font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",sans-serif;font-size:12.5px}
.tag{display:inline-block;border-radius:10px;padding:0 7px;font-size:11.5px;border:1px solid var(--bd)}
.tag.manual{background:var(--man)}.tag.unapplied{background:var(--del)}.tag.rewritten{background:var(--add)}
.tag.kept-on-cuda,.tag.note{background:var(--sep)}
.rule{border-left:3px solid var(--bd);padding:2px 10px;margin:8px 0}
:target{outline:2px solid #d4a72c}
section,td.n,.rule{scroll-margin-top:90px}
[hidden]{display:none!important}
"""

JS = """
(function(){
var boxes=[].slice.call(document.querySelectorAll('input.fam'));
var files=[].slice.call(document.querySelectorAll('details.file'));
// files past the row budget keep their diff in a <template> (parsed, never laid out) until opened
function fill(d){var t=d.querySelector('template');if(t){d.appendChild(t.content);t.parentNode.removeChild(t);apply();}}
files.forEach(function(d){d.addEventListener('toggle',function(){if(d.open)fill(d);});});
function apply(){
  var on={};boxes.forEach(function(b){if(b.checked)on[b.value]=1;});
  [].forEach.call(document.querySelectorAll('[data-family]'),function(el){el.hidden=!on[el.getAttribute('data-family')];});
  var shown=0;
  files.forEach(function(f){
    var fs=(f.getAttribute('data-families')||'').split(' ').filter(Boolean);
    var vis=!fs.length||fs.some(function(x){return on[x];});
    f.hidden=!vis;if(vis)shown++;
  });
  var c=document.getElementById('shown');if(c)c.textContent=shown+' of '+files.length+' files shown';
}
boxes.forEach(function(b){b.addEventListener('change',apply);});
// ?families=device,amp opens the report filtered (a link a reviewer can share); a malformed
// escape in a link (`?families=%`) is read as written: it threw, and the rest of this script never ran
function dec(s){try{return decodeURIComponent(s);}catch(e){return s;}}
var q=/[?&]families=([^&#]*)/.exec(location.search);
if(q){var want=dec(q[1]).split(',');boxes.forEach(function(b){b.checked=want.indexOf(b.value)>=0;});}
function all(v){return function(){boxes.forEach(function(b){b.checked=v;});apply();};}
var a=document.getElementById('fam-all'),n=document.getElementById('fam-none');
if(a)a.addEventListener('click',all(true));if(n)n.addEventListener('click',all(false));
function openAll(v){return function(){files.forEach(function(f){f.open=v;});};}
var ex=document.getElementById('expand'),co=document.getElementById('collapse');
if(ex)ex.addEventListener('click',openAll(true));if(co)co.addEventListener('click',openAll(false));
function reveal(){
  var id=dec(location.hash.slice(1));if(!id)return;
  var el=document.getElementById(id);
  if(!el){var m=/^f[0-9]+/.exec(id);var fd=m&&document.getElementById(m[0]);if(!fd)return;\
fill(fd);fd.open=true;el=document.getElementById(id);if(!el)return;el.scrollIntoView({block:'center'});return;}
  var d=el.closest('details');if(d&&!d.open){d.open=true;fill(d);el.scrollIntoView({block:'center'});}
}
var ms=document.getElementById('manual-show');
if(ms)ms.addEventListener('click',function(){var t=document.getElementById('manual-more');\
var b=document.getElementById('manual-more-rows');
  if(t){b.appendChild(t.content);t.parentNode.removeChild(t);}b.hidden=false;ms.hidden=true;apply();});
window.addEventListener('hashchange',reveal);reveal();
apply();
document.body.setAttribute('data-ready','1');
document.body.setAttribute('data-ready-ms',String(Math.round(performance.now())));
})();
"""


def _inline(old: str, new: str) -> tuple[str, str]:
    """Escaped old/new with the changed characters wrapped in <span class=x>."""
    if len(old) + len(new) > MAX_INLINE_DIFF:
        return _e(old), _e(new)
    # word-level, not character-level: `cuda` → `xla` reads better than c[u]d[a] → [x]l[a]
    ot, nt = _TOKENS.findall(old), _TOKENS.findall(new)
    sm = difflib.SequenceMatcher(None, ot, nt, autojunk=False)
    o: list[str] = []
    w: list[str] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        a, b = _e("".join(ot[i1:i2])), _e("".join(nt[j1:j2]))
        if tag == "equal":
            o.append(a)
            w.append(b)
        else:
            if a:
                o.append(f'<span class="x">{a}</span>')
            if b:
                w.append(f'<span class="x">{b}</span>')
    return "".join(o), "".join(w)


def _site_note(model: ReportModel, site) -> str:
    f = site.finding
    advice = f" — {_prose(f.advice)}" if f.advice else ""
    return (
        f'<tr class="note" data-family="{_e(site.family)}"><td></td><td colspan="3">'
        f'<span class="tag {site.outcome}">{_e(site.outcome)}</span> '
        f'<a href="#rule-{_e(f.code)}"><b>{_e(f.code)}</b> {_e(f.name)}</a>: {_prose(f.message)}{advice}</td></tr>'
    )


def _file_table(model: ReportModel, idx: int, f: FileReport, hunks: list[Hunk], nrows: int = 0) -> str:
    by_line: dict[int, list] = {}
    for s in f.marked_sites:
        by_line.setdefault(s.finding.start.line, []).append(s)
    # content-visibility skips layout and paint of tables off screen; the size is a guess
    # the browser replaces with the real one once it has laid the table out
    est = 18 * (nrows + len(hunks) + 2 * len(f.marked_sites))
    out = [
        f'<table class="d" style="contain-intrinsic-size:auto {est}px">'
        '<colgroup><col class="n"><col><col class="n"><col></colgroup>'
    ]
    for h in hunks:
        out.append(f'<tr class="s"><td colspan="4">@@ −{h.old_start} +{h.new_start} @@</td></tr>')
        for r in h.rows:
            out.append(_row(idx, r, r.old_no in by_line))
            if r.old_no in by_line:
                out.extend(_site_note(model, s) for s in by_line[r.old_no])
    out.append("</table>")
    return "".join(out)


_KIND = {"equal": "e", "replace": "r", "delete": "d", "insert": "i"}


def _row(idx: int, r: Row, manual: bool) -> str:
    if r.kind == "replace":
        old, new = _inline(r.old or "", r.new or "")
    else:
        old = "" if r.old is None else _e(r.old)
        new = "" if r.new is None else _e(r.new)
    cls = _KIND[r.kind] + (" m" if manual else "")
    on = "" if r.old_no is None else str(r.old_no)
    nn = "" if r.new_no is None else str(r.new_no)
    oid = f' id="f{idx}-L{r.old_no}"' if r.old_no is not None else ""
    return (
        f'<tr class="{cls}"><td class="n"{oid}>{on}</td><td class="o">{old}</td>'
        f'<td class="n">{nn}</td><td class="w">{new}</td></tr>'
    )


def _pct_bar(share: float | None) -> str:
    w = 100 if share is None else round(share * 100, 1)
    return f'<div class="bar" title="readiness"><i style="width:{w}%"></i></div>'


def _head(model: ReportModel) -> list[str]:
    """The document head and title line: inline style only, and a policy that forbids any fetch."""
    return [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        # no network: forbid every fetch; only the inline style and script may run
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(model.title)}</title><style>{CSS}</style></head>",
        '<body data-ready="0">',
        f"<h1>{_e(model.title)}</h1>",
        f'<div class="mut">porter {_e(model.version)} · generated {_e(model.generated_at)}</div>',
    ]


def _summary_cards(model: ReportModel) -> list[str]:
    """The readiness cards: what a reader sees first, so the counts agree with the tables below."""
    r = model.readiness
    c = model.counts
    verb = "ported automatically" if model.kind == "rewrite" else "portable automatically"
    p = ['<section id="summary"><div class="cards">']
    unwritten = len(model.not_written)  # (checked and ported, but the port is not on disk)
    unchecked = len(model.not_checked) - unwritten
    of = " of the files checked and written" if unwritten else " of the files checked" if unchecked else ""
    p.append(f'<div class="card" id="readiness"><b>{_e(r.percent())}</b><span>readiness{of}</span></div>')
    if unchecked:  # a run that checked less than the tree is no full pass (twenty-fourth read)
        p.append(f'<div class="card del" id="unchecked-card"><b>{unchecked}</b><span>files not checked</span></div>')
    if unwritten:
        p.append(f'<div class="card del" id="unwritten-card"><b>{unwritten}</b><span>files not written</span></div>')
    p.append(f'<div class="card"><b>{r.ported}/{r.sites}</b><span>CUDA-specific sites {verb}</span></div>')
    # the same count as the "Left for a person" table below: manual sites and unsafe fixes not applied
    left_note = (
        f" ({r.manual} manual, {r.unapplied} unsafe fix{'es' if r.unapplied != 1 else ''} not applied)"
        if r.unapplied
        else ""
    )
    p.append(f'<div class="card" id="left-card"><b>{r.left}</b><span>left for a person{_e(left_note)}</span></div>')
    if r.kept:
        p.append(
            f'<div class="card" id="kept-card"><b>{r.kept}</b><span>kept on CUDA by design (no action)</span></div>'
        )
    if r.notes:
        p.append(f'<div class="card" id="notes-card"><b>{r.notes}</b><span>notes (no action)</span></div>')
    p.append(f'<div class="card"><b>{c["changed"]}/{c["scanned"]}</b><span>files changed</span></div>')
    p.append("</div>")
    return p


def _summary(model: ReportModel) -> list[str]:
    """The summary section: cards, readiness bar and text, file counts, and why files were left out."""
    r = model.readiness
    c = model.counts
    p = _summary_cards(model)
    p.append(_pct_bar(r.share))
    p.append(f'<p id="readiness-text">{_e(model.readiness_text())}</p>')
    p.append(
        f"<p>Files: {c['scanned']} scanned, {c['changed']} changed, {c['unchanged']} unchanged, "
        f"{c['skipped']} skipped, {c['errors']} failed.</p>"
    )
    if model.skipped or model.error_files:
        p.append("<ul>")
        for reason, n in model.skipped.items():
            p.append(f"<li>skipped {n}: {_e(reason)}</li>")
        for err in model.error_files:
            where = f"{err.path}:{err.error_line}" if err.error_line else err.path
            p.append(f'<li class="del">failed <code>{_e(where)}</code>: {_e(err.reason or "")}</li>')
        p.append("</ul>")
    p.append("</section>")
    return p


def _filters(model: ReportModel) -> list[str]:
    """The sticky bar of family checkboxes (the script filters rows and files by them)."""
    p = ['<div class="filters" id="filters"><b>Rule families:</b> ']
    for fam in model.families:
        n = sum(x.found for x in model.rules if x.family == fam)
        p.append(
            f'<label><input type="checkbox" class="fam" value="{_e(fam)}" checked> {_e(fam)} '
            f'<span class="mut">({n})</span></label>'
        )
    p.append('<button id="fam-all" type="button">all</button><button id="fam-none" type="button">none</button>')
    p.append(
        '<button id="expand" type="button">expand files</button>'
        '<button id="collapse" type="button">collapse files</button>'
    )
    p.append(' <span class="mut" id="shown"></span></div>')
    return p


def _rules_table(model: ReportModel) -> list[str]:
    """Sites by rule, with a total row that matches the readiness figures."""
    r = model.readiness
    p = ['<section id="rules-table"><h2>Sites by rule</h2><table class="t"><thead><tr>']
    p.append(
        f'<th>code</th><th>rule</th><th>family</th><th class="n">found</th><th class="n">{_e(model.ported_label)}</th>'
    )
    p.append(
        '<th class="n">unsafe, not applied</th><th class="n">manual</th><th class="n">info (no action)</th>'
        "<th>what to do</th></tr></thead><tbody>"
    )
    for x in model.rules:
        todo = _prose(x.advice) if (x.manual or x.unapplied) else ""
        p.append(
            f'<tr data-family="{_e(x.family)}"><td><a href="#rule-{_e(x.code)}">{_e(x.code)}</a></td>'
            f'<td>{_e(x.name)}</td><td>{_e(x.family)}</td><td class="n">{x.found}</td>'
            f'<td class="n">{x.rewritten}</td><td class="n">{x.unapplied}</td><td class="n">{x.manual}</td>'
            f'<td class="n">{x.info}</td><td>{todo}</td></tr>'
        )
    p.append(
        f'</tbody><tfoot><tr><td></td><td><b>total</b></td><td></td><td class="n"><b>{r.sites + r.info}</b></td>'
        f'<td class="n"><b>{r.ported}</b></td><td class="n"><b>{r.unapplied}</b></td>'
        f'<td class="n"><b>{r.manual}</b></td>'
        f'<td class="n"><b>{r.info}</b></td><td></td></tr></tfoot></table></section>'
    )
    return p


def _site_link(f: FileReport, line: int, i: int | None) -> str:
    """`path:line` as code, linked to its row in the diff when the file's diff is in the report."""
    where = _name(f"{f.path}:{line}")
    return f'<a href="#f{i}-L{line}"><code>{where}</code></a>' if i is not None else f"<code>{where}</code>"


def _manual_row(model: ReportModel, f: FileReport, s, i: int | None, rule_advice: dict) -> str:
    """One site left for a person; repeats advice only where it differs from its rule's."""
    fd = s.finding
    loc = _site_link(f, fd.start.line, i)
    tag = ' <span class="tag unapplied">unsafe fix, not applied</span>' if s.outcome == "unapplied" else ""
    # the rule's advice is in the table above and the rule notes below: repeat only
    # advice particular to this site
    if fd.advice and fd.advice != rule_advice.get(fd.code):
        todo = _prose(fd.advice)
    else:
        todo = f'<a href="#rule-{_e(fd.code)}" class="mut">as for {_e(fd.code)}</a>'
    return (
        f'<tr data-family="{_e(s.family)}"><td>{loc}</td><td><a href="#rule-{_e(fd.code)}">{_e(fd.code)}</a> '
        f"{_e(fd.name)}{tag}</td><td>{_prose(fd.message)}</td><td>{todo}</td></tr>"
    )


def _manual(model: ReportModel, index: dict[int, int]) -> list[str]:
    """Left for a person: the first MANUAL_ROWS rows at load, the rest in a template built on demand."""
    work = model.manual_work()
    p = [f'<section id="manual"><h2>Left for a person ({len(work)})</h2>']
    if not work:
        p.append("<p>Nothing: every CUDA-specific site was handled.</p>")
        p.append("</section>")
        return p
    p.append('<table class="t"><colgroup><col class="w"><col class="r"><col class="f"><col></colgroup>')
    p.append("<thead><tr><th>where</th><th>rule</th><th>what porter found</th><th>what to do</th></tr></thead><tbody>")
    rule_advice = {x.code: x.advice for x in model.rules}
    long = len(work) > MANUAL_ROWS
    for n, (f, s) in enumerate(work):
        if n == MANUAL_ROWS and long:
            # a long list: the rest is built when asked for (keeps the first load light)
            p.append('</tbody><tbody id="manual-more-rows" hidden><template id="manual-more">')
        p.append(_manual_row(model, f, s, index.get(id(f)), rule_advice))
    if long:
        p.append("</template>")
    p.append("</tbody></table>")
    if long:
        p.append(f'<button type="button" id="manual-show">show all {len(work)} sites</button>')
    p.append("</section>")
    return p


def _info_groups(model: ReportModel, index: dict[int, int]) -> list[str]:
    """One table per kind of information finding: no action, kept apart from the work list."""
    p: list[str] = []
    for group in INFO:
        items = model.info_findings(group)
        if not items:
            continue
        p.append(f'<section id="{group}"><h2>{_e(INFO_TITLES[group])} ({len(items)})</h2>')
        p.append('<p class="mut">No action needed; not counted in readiness.</p>')
        p.append(
            '<table class="t"><thead><tr><th>where</th><th>rule</th><th>what porter found</th></tr></thead><tbody>'
        )
        for f, s in items:
            fd = s.finding
            loc = _site_link(f, fd.start.line, index.get(id(f)))
            p.append(
                f'<tr data-family="{_e(s.family)}"><td>{loc}</td><td><a href="#rule-{_e(fd.code)}">{_e(fd.code)}</a> '
                f"{_e(fd.name)}</td><td>{_prose(fd.message)}</td></tr>"
            )
        p.append("</tbody></table></section>")
    return p


def _by_file(model: ReportModel, index: dict[int, int]) -> list[str]:
    """Readiness per file, the files with the most left first."""
    r = model.readiness
    p = ['<section id="by-file"><h2>Readiness by file</h2><table class="t"><thead><tr><th>file</th>']
    p.append(
        '<th class="n">sites</th><th class="n">ported</th><th class="n">left</th><th class="n">readiness</th>'
        "</tr></thead><tbody>"
    )
    for f in sorted(model.files_with_sites, key=lambda f: (-f.readiness.left, f.path)):
        rd = f.readiness
        i = index.get(id(f))
        name = f'<a href="#f{i}"><code>{_name(f.path)}</code></a>' if i is not None else f"<code>{_name(f.path)}</code>"
        p.append(
            f'<tr><td>{name}</td><td class="n">{rd.sites}</td><td class="n">{rd.ported}</td>'
            f'<td class="n">{rd.left}</td><td class="n">{_e(rd.percent())}</td></tr>'
        )
    p.append(
        f'</tbody><tfoot><tr><td><b>overall</b></td><td class="n">{r.sites}</td><td class="n">{r.ported}</td>'
        f'<td class="n">{r.left}</td><td class="n">{_e(r.percent())}</td></tr></tfoot></table></section>'
    )
    return p


def _extra_sections(model: ReportModel) -> list[str]:
    """The sections a caller adds (text and a table), rendered as given."""
    p: list[str] = []
    for sec in model.sections:
        p.append(f'<section id="sec-{_e(sec.id)}"><h2>{_e(sec.title)}</h2>')
        if sec.text:
            p.append(f'<p style="white-space:pre-wrap">{_e(sec.text)}</p>')
        if sec.rows:
            p.append(
                '<table class="t"><thead><tr>'
                + "".join(f"<th>{_e(str(h))}</th>" for h in sec.columns)
                + "</tr></thead><tbody>"
            )
            for row in sec.rows:
                p.append("<tr>" + "".join(f"<td>{_e('' if v is None else str(v))}</td>" for v in row) + "</tr>")
            p.append("</tbody></table>")
        p.append("</section>")
    return p


def _file_stats(f: FileReport) -> str:
    """A file's summary line: lines added and removed, then readiness and what is left, when any."""
    added, removed = f.line_counts()
    st = [f'<span class="add">+{added}</span> <span class="del">−{removed}</span>']
    return " · ".join(st + [_e(bit) for bit in f.status_bits()])


def _files(model: ReportModel, shown: list[FileReport], open_rows: int) -> list[str]:
    """One diff per file; past the row budget a file starts closed with its table in a <template>."""
    p = [f'<section id="files"><h2>Files ({len(shown)})</h2>']
    budget = open_rows
    for i, f in enumerate(shown):
        hunks = f.hunks()
        nrows = sum(len(h.rows) for h in hunks)
        is_open = nrows <= budget
        if is_open:
            budget -= nrows
        else:
            budget = 0  # keep the order: once one file is closed, later ones are too
        p.append(
            f'<details class="file" id="f{i}" data-families="{_e(" ".join(f.families))}"{" open" if is_open else ""}>'
            f'<summary><code>{_name(f.path)}</code><span class="st">{_file_stats(f)}</span></summary>'
        )
        table = _file_table(model, i, f, hunks, nrows)
        p.append(table if is_open else f"<template>{table}</template>")
        p.append("</details>")
    p.append("</section>")
    return p


def _rule_docs(model: ReportModel) -> list[str]:
    """Each rule's explanation inlined, so the links from the tables work offline."""
    p = ['<section id="rule-docs"><h2>Rules in this report</h2>']
    for x in model.rules:
        p.append(
            f'<div class="rule" id="rule-{_e(x.code)}" data-family="{_e(x.family)}"><b>{_e(x.code)}</b> '
            f"<code>{_e(x.name)}</code> "
        )
        p.append(f'<span class="mut">({_e(x.family)})</span><div>{_prose(x.summary)}</div>')
        if x.advice:
            p.append(f"<div><b>What to do on {_e(model.target)}:</b> {_prose(x.advice)}</div>")
        # no link: porter's rule pages are files of the local install (`file:///…`), which
        # mean nothing in a report opened elsewhere and tell its readers where porter lives;
        # `porter explain CODE` prints the rule anywhere porter is installed (as in Markdown)
        p.append(
            f'<div class="mut">Full explanation: <code>porter explain {_e(x.code)}</code> '
            f"(docs/rules.md#{_e(x.anchor)} in porter's documentation).</div>"
        )
        p.append("</div>")
    p.append("</section>")
    return p


def _tail(model: ReportModel, nfiles: int) -> list[str]:
    """The machine-readable summary (for tools reading the page) and the script."""
    data = {
        "schema_version": 1,
        "kind": model.kind,
        "target": model.target,
        "readiness": model.readiness.to_dict(),
        "files": nfiles,
    }
    blob = json.dumps(data).replace("</", "<\\/")
    return [
        f'<script type="application/json" id="report-data">{blob}</script>',
        f"<script>{JS}</script></body></html>",
    ]


def render_html(model: ReportModel, *, open_rows: int = OPEN_ROWS_BUDGET) -> str:
    shown = model.shown_files()
    index = {id(f): i for i, f in enumerate(shown)}
    p = _head(model)
    if model.counts_files:
        p += _summary(model)
    if model.families:
        p += _filters(model)
    if model.rules:
        p += _rules_table(model)
    if model.counts_files:
        p += _manual(model, index)
    p += _info_groups(model, index)
    if model.files_with_sites:
        p += _by_file(model, index)
    p += _extra_sections(model)
    if model.counts_files:
        p += _files(model, shown, open_rows)
    if model.rules:
        p += _rule_docs(model)
    p += _tail(model, len(shown))
    # `cat report.html` in a CI step: no line is a CI log's command (`&#x23;` is the same `#` to a
    # browser; the style and script hold none: tested). Twentieth read
    return inert("".join(p), lambda c: f"&#x{ord(c):x};")
