"""Contract 5: user-controlled text is printed as text, never as markup or terminal
control, and escaped for each output format; a name that is not UTF-8 is a file like any
other."""

from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.safety.conftest import CUDA, PORTED, REPO, committed_repo, porter

FORMATS = ("full", "concise", "json", "junit", "sarif", "github", "gitlab")
ESC = "\x1b"
SPOOF = "\x1b]8;;https:evil.example\x1b\\ok\x1b]8;;\x1b\\"  # no "/": it is one file name


def test_markup_in_a_path_is_printed_as_text(tmp_path):
    repo = committed_repo(
        tmp_path / "repo",
        {"x[/z].py": CUDA, "x[/y].py": b"import torch\ndef f(:\n  torch.cuda()\n", "[bold]a.py": CUDA},
    )
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    err = out.stderr.decode()
    assert out.returncode == 2, err  # x[/y].py does not parse
    assert "MarkupError" not in err and "Traceback" not in err, err
    assert "warning: x[/y].py:" in err and "syntax error" in err
    text = out.stdout.decode()
    assert "x[/z].py" in text and "[bold]a.py" in text  # the summary survived, names intact
    assert (repo / "x[" / "z].py").read_bytes() == PORTED


def test_markup_in_a_baseline_path_is_printed_as_text(tmp_path):
    (tmp_path / "[red]").mkdir()
    base = tmp_path / "[red]" / "base[/].json"
    (tmp_path / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--write-baseline", str(base), cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 0 and "Traceback" not in err, err
    assert "base[/].json" in err


def test_escape_sequences_in_a_name_cannot_reach_the_terminal(tmp_path):
    bad = f"{SPOOF}.py"
    (tmp_path / bad).write_bytes(b"import torch\ndef f(:\n  torch.cuda()\n")
    (tmp_path / "ok.py").write_bytes(CUDA)
    for args in (["lint", ".", "--output-format", "concise"], ["lint", "."], ["rewrite", ".", "--allow-no-vcs"]):
        out = porter(*args, "--target", "xla", cwd=tmp_path)
        both = out.stdout.decode(errors="replace") + out.stderr.decode(errors="replace")
        assert "Traceback" not in both, both
        assert ESC not in both, repr(both)
        assert "\\x1b]8;;https:evil.example" in both  # shown, escaped


def _non_utf8(tmp_path: Path) -> Path:
    name = os.fsdecode(b"caf\xe9.py")
    try:
        (tmp_path / name).write_bytes(CUDA)
    except OSError:  # a file system that only takes UTF-8 names (APFS)
        pytest.skip("this file system refuses names that are not UTF-8")
    return tmp_path / name


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_utf8_name_is_linted_in_every_format(tmp_path, fmt):
    _non_utf8(tmp_path)
    out = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path)
    err = out.stderr.decode(errors="replace")
    assert out.returncode == 1, err
    assert "Traceback" not in err
    text = out.stdout.decode("utf-8")  # always valid UTF-8
    if fmt == "sarif":
        assert '"uri": "caf%E9.py"' in text  # a URI names the bytes
        return
    assert "caf\\xe9.py" in text or "caf\\\\xe9.py" in text  # JSON doubles the backslash
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    if fmt == "junit":
        ET.fromstring(text)


@pytest.mark.parametrize("suffix", ["html", "md", "json"])
def test_non_utf8_name_in_every_report(tmp_path, suffix):
    path = _non_utf8(tmp_path)
    committed = committed_repo(tmp_path, {})
    out = porter("rewrite", ".", "--target", "xla", "--allow-dirty", "--report", f"r.{suffix}", cwd=committed)
    err = out.stderr.decode(errors="replace")
    assert out.returncode == 0 and "Traceback" not in err, err
    report = (tmp_path / f"r.{suffix}").read_text(encoding="utf-8")
    assert "caf\\xe9.py" in (json.dumps(json.loads(report)["files"]) if suffix == "json" else report).replace(
        "\\\\", "\\"
    )
    assert path.read_bytes() == PORTED
    lint = porter("lint", ".", "--target", "xla", "--report", f"l.{suffix}", cwd=tmp_path)
    assert lint.returncode in (0, 1) and "Traceback" not in lint.stderr.decode(errors="replace")


def test_junit_is_well_formed_with_control_characters_in_a_name(tmp_path):
    (tmp_path / "a\x01b\x7f.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    root = ET.fromstring(out.stdout)
    assert root.find("testsuite").get("name") == "a\\x01b\x7f.py"


def test_sarif_uris_are_percent_encoded(tmp_path):
    (tmp_path / "a b#c%d?.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "sarif", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    [loc] = [r["locations"][0] for r in data["runs"][0]["results"]]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "a%20b%23c%25d%3F.py"


def test_diff_headers_quote_names_with_newlines_and_escapes(tmp_path):
    for name in ("new\nline.py", "esc\x1b[31m.py"):
        (tmp_path / name).write_bytes(CUDA)
    committed_repo(tmp_path, {})
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    patch = out.stdout
    assert b"\x1b" not in patch
    assert b'--- "a/new\\nline.py"' in patch and b'+++ "b/esc\\033[31m.py"' in patch
    (tmp_path / "p.diff").write_bytes(patch)
    check = subprocess.run(["git", "apply", "--check", "p.diff"], cwd=tmp_path, capture_output=True)
    assert check.returncode == 0, check.stderr


def test_terminal_diff_shows_escape_sequences_from_file_contents_escaped():
    import io

    from rich.console import Console

    from porter.pipeline.port import port_source
    from porter.report.terminal import print_diff
    from porter.config.settings import Settings

    source = b"import torch\n# \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\nx = torch.zeros(1).cuda()\n"
    result = port_source(source, "m.py", Settings(target="xla"))
    out = io.StringIO()
    print_diff(Console(file=out, force_terminal=True, width=200), result)
    assert "\x1b]8;;https://evil.example/" not in out.getvalue()
    assert "\\x1b]8;;https://evil.example/" in out.getvalue()


CLEAR = "\x1b[2J\x1b[H"


def test_control_sequences_in_a_source_line_are_shown_not_obeyed(tmp_path):
    """`lint --output-format full` prints the line of each finding: a comment holding a
    clear-screen and a spoofed hyperlink is shown with visible stand-ins, carets in place."""
    line = f"x = torch.zeros(1).cuda()  # {CLEAR}{SPOOF}\tend"
    (tmp_path / "m.py").write_text(f"import torch\n{line}\n")
    out = porter("lint", ".", "--target", "xla", "--output-format", "full", cwd=tmp_path)
    text = out.stdout.decode()
    assert out.returncode == 1, out.stderr
    assert ESC not in text and "\x07" not in text, repr(text)
    shown = next(ln for ln in text.splitlines() if ln.startswith("2 | "))
    assert "\u241b[2J" in shown  # ESC as its control picture: one column, like the original
    carets = next(ln for ln in text.splitlines() if "^" in ln)
    assert shown.index("torch.zeros") == carets.index("^")


def test_a_form_feed_does_not_shift_the_line_shown(tmp_path):
    (tmp_path / "m.py").write_bytes(b"import torch\n\x0c# section\nx = torch.zeros(1).cuda()\n")
    out = porter("lint", ".", "--target", "xla", "--output-format", "full", cwd=tmp_path)
    assert "3 | x = torch.zeros(1).cuda()" in out.stdout.decode(), out.stdout.decode()


def test_exception_text_in_parity_output_is_shown_not_obeyed(tmp_path):
    """parity-check runs the user's code: what it raises is reported, escaped."""
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "m.py").write_text(
        'def f():\n    raise RuntimeError("\\x1b[2Jboom\\x1b]8;;http://e\\x07x\\x1b]8;;\\x07")\n\n\n'
        "def example_inputs():\n    return ()\n"
    )
    out = porter("parity-check", "--original", "t", "--ported", "t", "--entry", "m:f", cwd=tmp_path, timeout=300)
    shown = out.stdout + out.stderr
    assert out.returncode == 2 and b"boom" in shown, shown
    assert ESC.encode() not in shown, shown
    assert b"\\x1b[2Jboom" in shown


def test_a_path_with_markup_in_the_progress_bar():
    """The interactive progress bar shows the path being ported: `x[/z].py` is a name."""
    import io

    from rich.console import Console

    from porter.report.progress import RunProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with RunProgress(console, total=2, delay=0.0, tty=True) as progress:
        progress.advance("x[/z].py")
        progress._bar.refresh()  # what the bar's refresh thread does every tick
        progress.advance("[bold]b.py")
        progress._bar.refresh()
    assert progress.done == 2 and "x[/z].py" in console.file.getvalue()


def test_a_path_with_control_characters_in_the_progress_bar():
    """rich's `Text` drops CR, BEL, BS, VT and FF: the bar showed `c<CR>r.py` as `cr.py`, another
    file's name, and a newline broke the bar's line (twenty-third read). Each is an escape."""
    import io

    from rich.console import Console

    from porter.report.progress import RunProgress

    names = ["c\rr.py", "n\nl.py", "b\x07e\x08l\x0bv\x0cf.py"]
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with RunProgress(console, total=len(names), delay=0.0, tty=True) as progress:
        for path in names:
            progress.advance(path)
            progress._bar.refresh()  # what the bar's refresh thread does every tick
    drawn = console.file.getvalue()
    for shown in ("c\\x0dr.py", "n\\x0al.py", "b\\x07e\\x08l\\x0bv\\x0cf.py"):
        assert shown in drawn, (shown, drawn)
    assert "cr.py" not in drawn and "l.py" not in drawn.replace("\\x0al.py", ""), drawn


@pytest.mark.parametrize("total", [210, 2100])
def test_the_progress_bar_s_count_is_whole_at_every_width(total):
    """rich cut every column of the bar to fit: on an 80-column terminal a run of 2,100 files
    counted `2100/2…`, at 59 columns 210 files `210/2…`, below 50 no count was left (twenty-sixth
    read). Columns are left out whole, the path first, and the path keeps its end."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    from porter.report.progress import RunProgress

    path = "verify/data/" + "p" * 40 + "/ops_xla.json"
    for width in range(12, 132):
        console = Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
        with RunProgress(console, total=total, delay=0.0, tty=True) as progress:
            progress.done = total - 1
            progress.advance(path)
            bar = progress._bar
            lines = console.render_lines(bar.make_tasks_table(bar.tasks), console.options, pad=False)
        drawn = ["".join(segment.text for segment in line) for line in lines]
        assert len(drawn) == 1 and cell_len(drawn[0]) <= width, (width, drawn)
        assert f"{total}/{total}" in drawn[0], (width, drawn)
        if "json" in drawn[0]:
            assert drawn[0].endswith("json"), (width, drawn)  # the path's end is kept


def test_a_terminal_one_row_high_gets_progress_lines_not_the_bar():
    """rich's bar, cleared at the end by moving the cursor up a row, left its last frame in the
    scrollback of a terminal one row high, which has no row above it (twenty-sixth read)."""
    import io

    from rich.console import Console

    from porter.report.progress import RunProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=80, height=1, color_system=None)
    with RunProgress(console, total=3, delay=0.0, every=0.0) as progress:
        for name in ("a.py", "b.py", "c.py"):
            progress.advance(name)
    drawn = console.file.getvalue()
    assert progress._bar is None and "\x1b[1A" not in drawn, drawn
    assert "porter: porting 3/3 files" in drawn and "porter: done 3/3 files" in drawn, drawn
    tall = Console(file=io.StringIO(), force_terminal=True, width=80, height=2)
    assert RunProgress(tall, total=3).tty  # a row above it: the bar


def test_brackets_in_advice_survive_the_rewrite_summary(tmp_path):
    """The summary's "Left for a person" lines print a rule's advice as text: `[i]` is kept."""
    (tmp_path / "m.py").write_bytes(b"import torch\nstate = torch.cuda.get_rng_state()\n")
    out = porter("rewrite", "m.py", "--target", "tpu", "--diff", cwd=tmp_path)
    assert "default_generators[i]" in out.stderr.decode(), out.stderr.decode()


def test_explain_off_a_terminal_is_plain_text_at_natural_width(tmp_path):
    """Piped to a file, `porter explain` is the rule's text as written (Markdown), not lines
    padded to thousands of columns."""
    out = porter("explain", "CUDA001", cwd=tmp_path, columns=False)
    text = out.stdout.decode()
    assert out.returncode == 0 and text.startswith("# CUDA001"), text[:200]
    assert len(out.stdout) < 8000, len(out.stdout)
    assert not [ln for ln in text.splitlines() if ln.endswith(" ")]
    assert max(len(ln) for ln in text.splitlines()) < 400


def test_rules_off_a_terminal_is_a_line_a_rule_not_a_padded_table(tmp_path):
    """Piped, `porter rules` is one line a rule, the summary last and unpadded: as a table every
    row was padded to the longest summary (373 KB for 143 rules)."""
    out = porter("rules", cwd=tmp_path, columns=False)
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 0 and lines[0].split() == ["code", "name", "neuron", "tpu", "xla", "summary"]
    assert not [ln for ln in lines if ln.endswith(" ")]
    assert lines[1].split()[0] == "AMP001" and len(lines) > 100
    assert len(out.stdout) < 4 * sum(len(ln.rstrip()) for ln in lines), len(out.stdout)


def _markdown_tokens(text: str) -> list:
    """Every token GitHub-flavoured parsing makes of `text` (markdown-it: rich's own parser)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    out = []
    for tok in md.parse(text):
        out.append(tok)
        out.extend(tok.children or [])
    return out


def test_a_markdown_report_cannot_be_broken_out_of(tmp_path):
    """The Markdown report is a pull-request comment: a newline in a file name, or a message
    or reason quoting a file, must not inject a heading, an image or HTML; and no rule link
    points at the local install (`file:///`)."""
    evil = "a\n# Injected\n![x](https:evil.example)\n<img src=x onerror=alert(1)>.py"  # no "/": one name
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / evil).write_bytes(
        b"import torch\nx = torch.zeros(1).cuda()\nname = torch.cuda.get_device_name(0)\n"
    )
    (tmp_path / "src" / "broken.py").write_bytes(
        b"import torch\nx = torch.zeros(1).cuda(\n# ![y](https://evil.example/y.png)\n"
    )
    out = porter("rewrite", "src", "--target", "xla", "--diff", "--report", "r.md", cwd=tmp_path)
    assert out.returncode in (1, 2), out.stderr  # (2 since broken.py does not parse)
    text = (tmp_path / "r.md").read_text()
    assert "file://" not in text
    tokens = _markdown_tokens(text)
    headings = [t for t in tokens if t.type == "heading_open"]
    inline_after = [tokens[tokens.index(h) + 1].content for h in headings]
    assert not [h for h in inline_after if "Injected" in h], inline_after
    assert not [t for t in tokens if t.type == "image"], [t.attrs for t in tokens if t.type == "image"]
    assert not [t for t in tokens if t.type in ("html_inline", "html_block") and "<img" in t.content.lower()]
    assert "porter explain" in text  # where the rule pages are


def test_bidirectional_controls_in_a_name_are_shown_not_obeyed(tmp_path):
    """A right-to-left override makes `x\\u202eyp.txt` read as `xtxt.py` ("Trojan Source")."""
    name = "evil\u202etxt.py"
    (tmp_path / name).write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=tmp_path)
    text = out.stdout.decode()
    assert "\u202e" not in text and "evil\\u202etxt.py" in text, text
    full = porter("lint", ".", "--target", "xla", cwd=tmp_path).stdout.decode()
    assert "\u202e" not in full


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # Unicode's Bidi_Control


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_bidirectional_control_in_a_name_is_escaped_in_every_format(tmp_path, fmt):
    """Each of Unicode's Bidi_Control characters (the Arabic letter mark U+061C was missing), in
    every lint format: JUnit XML wrote them raw (`lint --output-format junit` on a terminal), and
    the line and paragraph separators U+2028/U+2029 until the sixteenth read."""
    shown = BIDI + "\x9b\x85\x7f\u2028\u2029"  # and C1's CSI and NEL, DEL, the line separators
    for k, c in enumerate(shown):
        (tmp_path / f"n{k}{c}yp.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode == 1, text
    assert not [c for c in shown if c in text], [hex(ord(c)) for c in shown if c in text]
    if fmt == "junit":  # the name is the same data, written as character references
        names = {case.get("file") for case in ET.fromstring(out.stdout).iter("testcase")}
        assert f"n0{BIDI[0]}yp.py" in names, names


def test_a_diff_header_quotes_a_name_with_a_bidirectional_control(tmp_path):
    """`rewrite --diff` on a terminal: git quotes such a name (its bytes past ASCII in octal);
    porter wrote it raw, so `c<RLO>gnp.py` read `cpng.py`."""
    (tmp_path / "c\u202egnp.py").write_bytes(CUDA)
    committed_repo(tmp_path, {})
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    head = [line for line in out.stdout.split(b"\n") if line.startswith((b"--- ", b"+++ "))]
    assert head == [b'--- "a/c\\342\\200\\256gnp.py"', b'+++ "b/c\\342\\200\\256gnp.py"'], head
    (tmp_path / "p.diff").write_bytes(out.stdout)
    check = subprocess.run(["git", "apply", "--check", "p.diff"], cwd=tmp_path, capture_output=True)
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize("char", ["\u009b", "\u0085", "\u2028", "\x7f"])
def test_a_diff_header_quotes_a_name_with_a_c1_control_or_a_line_separator(tmp_path, char):
    """The same for C1 controls (CSI U+009B: a terminal reads `<CSI>2J` as ESC [2J), NEL and
    the Unicode line separators: the header wrote them raw (adversarial read 6)."""
    (tmp_path / f"a{char}2Jb.py").write_bytes(CUDA)
    committed_repo(tmp_path, {})
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert char.encode() not in out.stdout, out.stdout
    octal = "".join(f"\\{b:03o}" for b in char.encode()).encode()
    head = [line for line in out.stdout.split(b"\n") if line.startswith((b"--- ", b"+++ "))]
    assert head == [b'--- "a/a' + octal + b'2Jb.py"', b'+++ "b/a' + octal + b'2Jb.py"'], head
    (tmp_path / "p.diff").write_bytes(out.stdout)
    check = subprocess.run(["git", "apply", "--check", "p.diff"], cwd=tmp_path, capture_output=True)
    assert check.returncode == 0, check.stderr


def test_split_index_cannot_be_broken_out_of(tmp_path):
    """`rewrite --split DIR` writes index.md (read on GitHub as a PR description): a folder
    named with a newline and Markdown — an area of the series, and part of each file's path —
    injects no heading, image, link or tag, and no control character reaches index.md or a
    patch's description lines."""
    folder = "evil\n# Injected ![x](https:evil.example) [l](https:e.example) <img src=x>\x1b[2J"  # no "/": one name
    repo = committed_repo(tmp_path / "repo", {f"{folder}/m.py": CUDA, "top.py": CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--split", str(tmp_path / "series"), cwd=repo)
    assert out.returncode in (0, 1), out.stderr
    index = (tmp_path / "series" / "index.md").read_text()
    assert "evil.example" in index and "\x1b" not in index
    tokens = _markdown_tokens(index)
    headings = [tokens[tokens.index(h) + 1].content for h in tokens if h.type == "heading_open"]
    assert not [h for h in headings if "Injected" in h], headings
    assert not [t for t in tokens if t.type in ("image", "link_open")], [
        t.attrs for t in tokens if t.type in ("image", "link_open")
    ]
    assert not [t for t in tokens if t.type in ("html_inline", "html_block")]
    for patch in (tmp_path / "series").glob("*.patch"):
        head = patch.read_text(errors="replace").split("\n---", 1)[0].split("\ndiff ", 1)[0]
        assert "\x1b" not in head and not [ln for ln in head.splitlines() if ln.startswith("# Injected")], head


def test_markdown_report_diff_headers_quote_names(tmp_path):
    """A file's diff in the Markdown report names it as `--diff` does: a name holding a newline
    or an escape sequence is git-quoted, one header line with no control character."""
    name = "x\x1b[2J\nInjected.py"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_bytes(CUDA)
    out = porter("rewrite", "src", "--target", "xla", "--diff", "--report", "r.md", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    headers = [ln for ln in (tmp_path / "r.md").read_text().splitlines() if ln.startswith(("--- ", "+++ "))]
    assert headers == ['--- "a/src/x\\033[2J\\nInjected.py"', '+++ "b/src/x\\033[2J\\nInjected.py"'], headers


def test_markdown_report_diff_bodies_show_control_characters_escaped(tmp_path):
    """The third adversarial read: a source line's escape sequences reached `cat r.md` raw
    inside the diff's code block (clear-screen, a spoofed hyperlink, backspaces that hide
    what precedes them). They are shown as `\\x1b`; tabs and CRLF line ends stay;
    `--diff` keeps the bytes (a patch must)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_bytes(
        b"import torch\r\nx = torch.randn(3).cuda()  # \x1b[2J\x1b]8;;https:evil.example\x07ok\r\n"
        b"y = torch.zeros(1).cuda()\t# fine\r\nname = torch.cuda.get_device_name(0)  # hidden\x08\x08\x08shown\r\n"
    )
    (tmp_path / "src" / "only.py").write_bytes(
        b"import torch\nname = torch.cuda.get_device_name(0)  # \x1b[31mred\x08\n"
    )
    out = porter("rewrite", "src", "--target", "xla", "--diff", "--report", "r.md", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert b"\x1b[2J" in out.stdout  # the patch keeps the bytes
    text = (tmp_path / "r.md").read_bytes().decode()
    assert not [c for c in text if (ord(c) < 32 and c not in "\t\r\n") or 0x7F <= ord(c) < 0xA0], repr(text)
    assert "\\x1b[2J\\x1b]8;;https:evil.example\\x07ok" in text
    assert "# hidden\\x08\\x08\\x08shown" in text and "\\x1b[31mred\\x08" in text
    assert "\t# fine\r\n" in text  # a tab and a CRLF line end are not control sequences


def test_html_report_links_no_file_of_the_local_install(tmp_path):
    """The HTML report (a CI artifact, opened elsewhere) linked each rule to `file:///…` of the
    machine that ran porter: a dead link that also says where porter is installed."""
    (tmp_path / "m.py").write_bytes(b"import torch\nname = torch.cuda.get_device_name(0)\n")
    out = porter("lint", ".", "--target", "xla", "--report", "r.html", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    text = (tmp_path / "r.html").read_text()
    assert "file:" not in text and str(REPO) not in text
    assert "porter explain " in text


def test_an_emoji_code_in_a_name_is_shown_as_text(tmp_path):
    """rich replaces `:warning:` with ⚠ in the strings it prints: the rewrite summary showed
    `a:warning:b:rocket:.py` as `a⚠b🚀.py`, a name that is not the file's."""
    name = "a:warning:b:rocket:.py"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_bytes(CUDA)
    out = porter("rewrite", "src", "--target", "xla", "--out-dir", "o", cwd=tmp_path)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode == 0, text
    assert name in text, text
    assert "\u26a0" not in text and "\U0001f680" not in text, text


@pytest.mark.parametrize(
    "args",
    [
        ("lint", "--target", "xla"),  # click: "No such option: --x…"
        ("explain", "CUDA001"),  # "Got unexpected extra argument(s) (…)"
        ("kernels", "."),
    ],
)
def test_a_usage_error_quoting_the_command_line_shows_its_controls_escaped(tmp_path, args):
    """click's own usage errors quote the command line: a file named `--a<RLO>yp.py` in a
    repository (`porter lint $(git ls-files)`) reached the terminal with its bidi control raw
    (`No such option`, an unexpected extra argument), although click escapes C0 and C1."""
    name = "--a\u202e\u2066yp\u2028.py"
    (tmp_path / name).write_bytes(CUDA)
    out = porter(*args, name, cwd=tmp_path)
    err = out.stderr.decode()
    assert out.returncode == 2, err
    assert "Traceback" not in err, err
    assert "\\u202e" in err and "\\u2066" in err and "\\u2028" in err, err
    for raw in ("\u202e", "\u2066", "\u2028"):
        assert raw not in err, err


def test_porter_rules_shows_every_summary_whole(tmp_path):
    """The rules table printed each summary as rich markup: `kernel[grid](...)`, `t[i].item()`,
    `device_ids=[rank]`, `capabilities: [gpu]` lost their brackets (7 of the summaries)."""
    from porter.config.ruledata import all_rules

    out = porter("rules", cwd=tmp_path, columns=False)  # off a terminal: one row per line
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert [r.code for r in all_rules().values() if r.summary not in text] == []


def test_every_option_s_help_is_shown_whole(tmp_path):
    """typer renders help as rich markup: `--target`'s "parity-check reads [tool.porter.parity]
    first" showed as "parity-check reads first"."""
    import typer

    from porter.cli import app

    def commands(group, path):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from commands(cmd, [*path, name])
            else:
                yield [*path, name], cmd

    missing = []
    for path, cmd in commands(typer.main.get_command(app), []):
        out = porter(*path, "--help", cwd=tmp_path, env={"COLUMNS": "3000"})
        shown = " ".join(out.stdout.decode().replace("│", " ").split())
        for param in cmd.params:
            text = " ".join((getattr(param, "help", None) or "").replace("\\[", "[").split())
            if text not in shown:
                missing.append((" ".join(path), param.name, text))
    assert missing == []


def test_a_name_with_a_byte_that_is_not_utf8_and_one_with_a_backslash_read_apart(tmp_path):
    """`a<0xFF>.py` and a file literally named `a\\xff.py` were both shown as `a\\xff.py`, in
    every format but --diff, and SARIF named the second by the first's bytes (`a%FF.py`): the
    display escapes a name's own backslashes too (adversarial reads 12 and 14)."""
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"p"))
    with open(os.path.join(os.fsencode(tmp_path), b"p", b"a\xff.py"), "wb") as fh:
        fh.write(CUDA)
    (tmp_path / "p" / "a\\xff.py").write_bytes(b"x = 1\n")
    (tmp_path / "p" / "b\\xfe.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "json", cwd=tmp_path / "p")
    names = {f["path"] for f in json.loads(out.stdout)}
    assert names == {"a\\xff.py", "b\\\\xfe.py"}, names
    sarif = porter("lint", ".", "--target", "xla", "--output-format", "sarif", cwd=tmp_path / "p")
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(sarif.stdout)["runs"][0]["results"]
    }
    assert uris == {"a%FF.py", "b%5Cxfe.py"}, uris


def test_gitlab_gives_a_name_that_is_not_utf8_no_other_files_path(tmp_path):
    """GitLab's `location.path` of `q/b<0xFE>.py` was `q/b\\xfe.py`, the name of the file next
    to it whose name holds a backslash: it is the folder `q` now (the field is required), the
    description names the file, and stderr says why (twenty-third read)."""
    os.makedirs(os.path.join(os.fsencode(tmp_path), b"p", b"q"))
    with open(os.path.join(os.fsencode(tmp_path), b"p", b"q", b"b\xfe.py"), "wb") as fh:
        fh.write(CUDA)
    (tmp_path / "p" / "q" / "b\\xfe.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "gitlab", cwd=tmp_path / "p")
    issues = json.loads(out.stdout)
    paths = {i["location"]["path"] for i in issues}
    assert paths == {"q", "q/b\\xfe.py"}, paths
    described = [i["description"] for i in issues if i["location"]["path"] == "q"]
    assert described and all(d.startswith("q/b\\xfe.py:") for d in described), described
    assert "note: q/b\\xfe.py: GitLab's location.path cannot name" in out.stderr.decode(), out.stderr


# invisible characters (seventeenth read): a zero-width space, a soft hyphen, a word joiner, the
# byte-order mark, the Mongolian vowel separator, a zero-width joiner, a TAG character (past
# U+FFFF), the Hangul filler and the combining grapheme joiner; a terminal shows each as nothing
INVISIBLE = "\u200b\u00ad\u2060\ufeff\u180e\u200d\U000e0041\u3164\u034f"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_invisible_character_in_a_name_or_a_line_is_shown_in_every_format(tmp_path, fmt):
    """`a<ZWSP>b.py` was printed as `ab.py`, the name of another file, in the full, concise,
    github and junit formats (a source line's ZWSP raw under the carets too)."""
    for k, c in enumerate(INVISIBLE):
        (tmp_path / f"n{k}{c}yp.py").write_bytes(b"import torch\nx = 1  # " + f"{c}".encode() + b"\nx.cuda()\n")
    out = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode == 1, text
    assert not [c for c in INVISIBLE if c in text], [hex(ord(c)) for c in INVISIBLE if c in text]
    if fmt in ("full", "concise"):
        assert "n0\\u200byp.py" in text and "n6\\U000e0041yp.py" in text, text
    if fmt == "junit":  # the same data to an XML reader
        names = {case.get("file") for case in ET.fromstring(out.stdout).iter("testcase")}
        assert f"n0{INVISIBLE[0]}yp.py" in names, names


@pytest.mark.parametrize("fmt", ["full", "concise", "github"])
def test_a_variation_selector_that_picks_no_glyph_is_shown_as_its_escape(tmp_path, fmt):
    """`a<VS1>b.py` was printed as `ab.py` and `葛<VS17>.py` as `葛.py` (a terminal draws a
    selector as nothing), the names of other files: only VS15/VS16 were escaped (twenty-fourth
    read)."""
    for name in ("ab.py", "a\ufe00b.py", "\u845b.py", "\u845b\U000e0100.py"):
        (tmp_path / name).write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path)
    text = out.stdout.decode()
    assert out.returncode == 1 and "\ufe00" not in text and "\U000e0100" not in text, text
    assert "a\\ufe00b.py" in text and "\u845b\\U000e0100.py" in text, text


def test_the_carets_stand_under_a_finding_after_an_invisible_character(tmp_path):
    """In `full`, an invisible character of the source line is one visible picture, as a control is."""
    (tmp_path / "m.py").write_bytes("import torch\ny = '\u200b\u00ad'; x = torch.randn(3).cuda()\n".encode())
    out = porter("lint", "m.py", "--target", "xla", "--select", "DEV001", cwd=tmp_path)
    lines = out.stdout.decode().splitlines()
    src = next(line for line in lines if line.startswith("2 | "))
    carets = lines[lines.index(src) + 1]
    assert "\u200b" not in src and "\u00ad" not in src, src
    assert src.index("torch.randn") == carets.index("^"), (src, carets)


def test_a_source_line_shows_its_blank_columns_as_escapes_and_the_carets_follow(tmp_path):
    """In `full`, `'a<NBSP>b'` read as `'a b'`, another line: each character drawn blank is its
    escape, and the carets stay under the finding, whose span holds one (twenty-third read)."""
    blanks = "\u00a0\u3000\u2800\u115f\u1160\u2007"
    code = f"import torch\ny = '{blanks}'; x = torch.randn('\u3000').cuda()  # \u202f\n"
    (tmp_path / "m.py").write_bytes(code.encode())
    out = porter("lint", "m.py", "--target", "xla", "--select", "DEV001", cwd=tmp_path)
    lines = out.stdout.decode().splitlines()
    src = next(line for line in lines if line.startswith("2 | "))
    carets = lines[lines.index(src) + 1]
    shown = "y = '\\xa0\\u3000\\u2800\\u115f\\u1160\\u2007'; x = torch.randn('\\u3000').cuda()  # \\u202f"
    assert src == f"2 | {shown}", src
    span = "torch.randn('\\u3000').cuda()"
    assert carets.index("^") == src.index(span) and carets.count("^") == len(span), (src, carets)


@pytest.mark.parametrize("wide", ["", "\u4e00" * 30])
def test_hangul_fillers_at_a_cut_of_a_long_line_are_shown_as_escapes(wide):
    """A run of Hangul fillers beside a letter jamo (`ᄀᅠ`, the syllable's own) whose jamo the
    window's cut leaves out stands beside the `…` shown there: lone, blank columns. It was read
    with the character past the cut and shown raw (twenty-fifth read). Every cut position of the
    window over such a run, at either end (and past wide characters, which `_kept` cuts again)."""
    from porter.core.textsafe import LONE_FILLERS
    from porter.lint.formats.text import _window

    raw = []
    for gap in range(120):
        left = "a" * 100 + "\u1100" + "\u1160" * 3 + wide + "b" * gap
        line = left + "torch.cuda()" + wide + "c" * gap + "\u1160" * 3 + "\u1100" + "d" * 300
        shown, _, _ = _window(line, len(left), len(left) + 10)
        raw += [(gap, ascii(shown))] if re.search(LONE_FILLERS, shown) else []
    assert raw == [], raw[:3]


@pytest.mark.parametrize("blank", ["\u00a0", "\u3000", "\u115f\u1160", "\u4e00"])
@pytest.mark.parametrize("count", [60, 150, 300])
def test_a_long_source_line_is_cut_to_its_columns_after_the_escapes(tmp_path, blank, count):
    """The window of a long line (`MAX_SHOWN`, 200) was cut in characters before the blank ones
    became escapes: 300 NBSPs were shown as 800 columns, 150 (a line under 200 characters) as
    600, and a CJK line at two columns a character ran past it too. Now the columns shown are
    counted after the escapes, none of which is cut, and the carets stay under the finding
    (twenty-fourth read; the twenty-third read's leftover)."""
    from porter.core.textsafe import columns
    from porter.lint.formats.text import MAX_SHOWN

    code = f"import torch\ny = '{blank * count}'; x = torch.randn(3).cuda()\n"
    (tmp_path / "m.py").write_bytes(code.encode())
    out = porter("lint", "m.py", "--target", "xla", "--select", "DEV001", cwd=tmp_path)
    lines = out.stdout.decode().splitlines()
    src = next(line for line in lines if line.startswith("2 | "))
    carets = lines[lines.index(src) + 1]
    span = "torch.randn(3).cuda()"
    assert columns(src[4:]) <= MAX_SHOWN + 2, (columns(src[4:]), src)  # (and a `…` at each cut end)
    assert carets.index("^") == columns(src[: src.index(span)]) and carets.count("^") == len(span), (src, carets)
    body = src[4:].split("'")[-2].lstrip("…")  # (whole escapes: none is cut)
    assert set(body) == {blank} if blank == "\u4e00" else re.fullmatch(r"(\\x[0-9a-f]{2}|\\u[0-9a-f]{4})+", body), body


# characters drawn as blank columns (twenty-third read): the Hangul fillers holding no letter
# (alone, or after a precomposed syllable they leave unchanged), a no-break space, an ideographic
# space and the braille blank; `ᅟᅠx.py` read as `  x.py`, `a<NBSP>b.py` as `a b.py`
BLANK_NAMES = {
    "\u115f\u1160x.py": "\\u115f\\u1160x.py",
    "\uac00\u1160.py": "\uac00\\u1160.py",
    "a\u00a0b.py": "a\\xa0b.py",
    "c\u3000d.py": "c\\u3000d.py",
    "\u2800.py": "\\u2800.py",
    "e\u1160.py": "e\\u1160.py",
}


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "md"])
def test_a_name_drawn_as_blank_columns_is_shown_with_escapes(tmp_path, fmt):
    """A Hangul filler beside a letter jamo is the syllable's own and stays (`ᄀᅠ` is ㄱ)."""
    repo = committed_repo(tmp_path / "repo", {n: CUDA for n in (*BLANK_NAMES, "\u1100\u1160.py")})
    if fmt == "md":
        out = porter("rewrite", ".", "--target", "xla", "--report", "../r.md", cwd=repo)
        text = (out.stdout + out.stderr).decode() + (tmp_path / "r.md").read_text(encoding="utf-8")
    else:
        out = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=repo)
        text = (out.stdout + out.stderr).decode()
    assert out.returncode in (0, 1), text
    for n in BLANK_NAMES:
        assert n not in text and BLANK_NAMES[n] in text, (n, text)
    assert "\u1100\u1160.py" in text, text


def test_the_blank_characters_are_the_space_separators_and_the_braille_blank():
    """`BLANK` is written out (no walk of `unicodedata` at each import): it must stay Unicode's Zs."""
    import re
    import sys
    import unicodedata

    from porter.core.textsafe import BLANK

    zs = {chr(c) for c in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"}
    assert {chr(c) for c in range(0x80, 0x10000) if re.fullmatch(f"[{BLANK}]", chr(c))} == zs | {"\u2800"}


@pytest.mark.parametrize("where", ["rewrite", "diff", "md", "html"])
def test_every_invisible_character_in_a_name_is_shown_by_rewrite_and_the_reports(tmp_path, where):
    repo = committed_repo(tmp_path / "repo", {f"n{k}{c}yp.py": CUDA for k, c in enumerate(INVISIBLE)})
    args = {"rewrite": ["--out-dir", "../o"], "diff": ["--diff"], "md": ["--report", "../r.md"]}
    args["html"] = ["--report", "../r.html"]
    out = porter("rewrite", ".", "--target", "xla", *args[where], cwd=repo)
    assert out.returncode in (0, 1), out.stderr.decode()
    text = (out.stdout + out.stderr).decode()
    if where in ("md", "html"):
        text += (tmp_path / f"r.{where}").read_text(encoding="utf-8")
    assert not [c for c in INVISIBLE if c in text], [hex(ord(c)) for c in INVISIBLE if c in text]
    if where == "diff":  # quoted as git quotes it, and applies
        (tmp_path / "p.diff").write_bytes(out.stdout)
        check = subprocess.run(["git", "apply", "--check", "../p.diff"], cwd=repo, capture_output=True)
        assert check.returncode == 0, check.stderr


@pytest.mark.parametrize("where", ["report", "split"])
def test_a_json_report_escapes_what_a_terminal_obeys(tmp_path, where):
    """`lint --output-format json` writes a name's NEL, U+2028, bidi controls and invisible
    characters as `\\u` escapes (json's ensure_ascii); the JSON report (`--report r.json`) and the
    `--split` series' index.json wrote them raw, so `cat r.json` showed `c<RLO>gnp.py` as
    `cpng.py` (seventeenth read). The escapes are the same data to a JSON reader."""
    shown = "\x85\x9b\u2028\u2029\u202e\u200b\U000e0041"
    repo = committed_repo(tmp_path / "repo", {f"d{k}{c}x/m{k}{c}y.py": CUDA for k, c in enumerate(shown)})
    args = ["--report", "../r.json"] if where == "report" else ["--split", "../series"]
    out = porter("rewrite", ".", "--target", "xla", *args, cwd=repo)
    assert out.returncode in (0, 1), out.stderr.decode()
    text = (tmp_path / ("r.json" if where == "report" else "series/index.json")).read_text(encoding="utf-8")
    assert not [c for c in shown if c in text], [hex(ord(c)) for c in shown if c in text]
    assert f"d0{shown[0]}x/m0{shown[0]}y.py" in json.dumps(json.loads(text), ensure_ascii=False)


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]


def test_the_kernels_and_backends_tables_show_every_control_of_a_name_and_stay_aligned(tmp_path):
    """The tables passed names to rich raw, escaped only as they were written: rich drops BEL,
    backspace, CR, VT and FF from a cell, so `a<BEL>b.cu` and `ab.cu` were both `ab.cu:1`, and
    laid the table out before the escapes widened the text, so a row ran past the border
    (seventeenth read)."""
    (tmp_path / "a\x07b.cu").write_bytes(b"__global__ void a_k(float* x) { x[0] = 1; }\n")
    (tmp_path / "ab.cu").write_bytes(b"__global__ void b_k(float* x) { x[0] = 1; }\n")
    (tmp_path / "acc\x08\x1b[2J").mkdir()
    (tmp_path / "acc\x08\x1b[2J" / "cuda_accelerator.py").write_bytes(CUDA_FAMILY)
    (tmp_path / "acc\x08\x1b[2J" / "cpu_accelerator.py").write_bytes(
        b"class CPU_Accelerator(Accelerator):\n    def sync(self):\n        pass\n"
    )
    kernels = porter("kernels", ".", cwd=tmp_path).stdout.decode()
    assert "a\\x07b.cu:1" in kernels and "ab.cu:1" in kernels, kernels
    backends = porter("backends", ".", "--target", "neuron", cwd=tmp_path).stdout.decode()
    assert "acc\\x08\\x1b[2J/cuda_accelerator.py" in backends, backends
    for text in (kernels, backends):
        rows = _table_rows(text)
        assert rows and len({len(row) for row in rows}) == 1, text


CUDA_FAMILY = (
    b"import torch\n\n\nclass CUDA_Accelerator(Accelerator):\n    def sync(self):\n        torch.cuda.synchronize()\n"
)


@pytest.mark.parametrize("terminal", [True, False])
def test_parity_tables_show_every_control_of_a_cell_and_stay_aligned(terminal):
    """parity-check's tables (a module's name, an exception's text from the user's run): on a
    terminal rich dropped BEL, backspace and CR from a cell and laid the table out before the
    escapes widened it; off a terminal the columns were padded before the escapes (seventeenth read)."""
    import io

    from porter.report.console import make_console
    from porter.verify.report import print_sections

    console = make_console(file=io.StringIO(), force_terminal=terminal, width=200, color_system=None)
    rows = [["a\x07b", "x\x1b[2Jy", "1"], ["ab", "xy", "2"]]
    print_sections("parity-check: FAIL", "fail", [("modules", ["name", "error", "n"], rows, ["note \x08z"])], console)
    out = console.file.getvalue()
    assert "a\\x07b" in out and "x\\x1b[2Jy" in out and "note \\x08z" in out, out
    assert "\x07" not in out and "\x1b" not in out and "\x08" not in out, repr(out)
    lines = [line for line in out.splitlines() if "a\\x07b" in line or line.lstrip("│ ").startswith("ab ")]
    assert len(lines) == 2 and lines[0].index(" 1") == lines[1].index(" 2"), out


@pytest.mark.parametrize("terminal", [True, False])
def test_parity_tables_stay_aligned_on_a_stream_that_escapes_a_character(terminal):
    """On an ASCII stream a module's `é` was measured (rich) or padded (plain lines) as 1 column,
    then written as `\\u00e9`, 6: the row ran past its column (twenty-fourth read)."""
    import codecs
    import io

    from porter.core.textsafe import UNENCODABLE, unencodable_escaped
    from porter.report.console import make_console
    from porter.verify.report import print_sections

    codecs.register_error(UNENCODABLE, unencodable_escaped)  # as the CLI does
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors=UNENCODABLE, newline="\n")
    console = make_console(file=stream, force_terminal=terminal, width=200, color_system=None)
    rows = [["caf\u00e9.mlp", "1"], ["plain.mlp", "2"]]
    print_sections("parity-check: FAIL", "fail", [("modules", ["name", "n"], rows, [])], console)
    stream.flush()
    out = stream.buffer.getvalue().decode("ascii")
    lines = [line for line in out.splitlines() if "caf" in line or "plain.mlp" in line]
    assert len(lines) == 2 and "caf\\u00e9.mlp" in lines[0], out
    assert lines[0].index(" 1") == lines[1].index(" 2"), out


def test_a_table_of_more_rows_than_a_screen_is_streamed_as_plain_lines_on_a_terminal(monkeypatch):
    """On a terminal rich laid a table out whole, about 0.1 ms a cell: `trace compare` of two
    100,000-step traces took 109 s of CPU and 1.9 GB there (its loss table; nineteenth read's
    leftover "82 s and 0.95 GB"). A table of more than `RICH_ROWS` rows is now written as the
    plain lines a file gets, a chunk at a time, with its controls still escaped; shorter tables
    are rich's as before. Bounded by construction: no rich Table is made for the long one."""
    import io

    import rich.table

    from porter.core.textsafe import printable
    from porter.report.console import make_console
    from porter.verify import report

    made: list[int] = []
    real_init = rich.table.Table.__init__

    def counting_init(self, *args, **kwargs):
        made.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(rich.table.Table, "__init__", counting_init)
    rows = [[str(i), "x\x1b[2Jy" if i == 7 else "ok", f"{i * 0.5:g}"] for i in range(1500)]  # more than RICH_ROWS
    short = [["a", "b", "c"]]
    console = make_console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    report.print_sections(
        "trace compare: PASS",
        "pass",
        [("Loss curves", ["step", "what", "v"], rows, ["n1"]), ("Short", ["p", "q", "r"], short, [])],
        console,
    )
    out = console.file.getvalue()
    assert len(made) == 1, "a rich Table was made for the long table"  # the short one's only
    lines = out.splitlines()
    plain = report.plain_table(["step", "what", "v"], [[printable(c) for c in r] for r in rows])
    start = lines.index(plain[0])
    assert lines[start : start + len(plain)] == plain
    assert "x\\x1b[2Jy" in out and "\x1b" not in out, repr(out[:300])
    assert "  n1" in out and "Short" in out


def test_a_bare_carriage_return_is_shown_in_the_html_report_and_a_parity_title(tmp_path):
    """A CR not followed by LF sends a terminal back to the line's start (`cat r.html`, a parity
    or trace table piped to a log), so what follows hides what came before: the Markdown report
    shows it as `\\x0d`, the HTML reports (a file's name, a trace's label or error) and the
    title of `trace ops`/`trace compare` off a terminal wrote it raw (seventeenth read)."""
    import io

    from porter.report.console import make_console
    from porter.verify.report import print_sections

    (tmp_path / "a\rb.py").write_bytes(CUDA)
    (tmp_path / "crlf.py").write_bytes(CUDA.replace(b"\n", b"\r\n"))
    out = porter("lint", ".", "--target", "xla", "--report", "r.html", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "a\\x0db.py" in page and "\r" not in page.replace("\r\n", ""), page
    console = make_console(file=io.StringIO(), force_terminal=False, width=200)
    print_sections("trace ops: on tpu\rok", "pass", [("ops", ["op"], [["x\ry"]], [])], console)
    shown = console.file.getvalue()
    assert "\r" not in shown and "tpu\\x0dok" in shown and "x\\x0dy" in shown, repr(shown)


def test_junit_carries_a_carriage_return_of_a_name_as_a_reference(tmp_path):
    """JUnit wrote a name's CR raw in a failure's text: an XML reader reads a raw CR as LF (the
    name came back `a<LF>b.py`), and on a terminal the CR went back over the line (seventeenth
    read). As `&#xd;` it is the same CR to the reader."""
    (tmp_path / "a\rb.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    assert b"\r" not in out.stdout, out.stdout
    root = ET.fromstring(out.stdout)
    assert {case.get("file") for case in root.iter("testcase")} == {"a\rb.py"}
    assert all(f.text.startswith("a\rb.py:2:") for f in root.iter("failure")), [f.text for f in root.iter("failure")]


# drawn as blank columns: NBSP, U+3000, the braille blank, a lone pair of Hangul fillers
BLANKS = ("\u00a0", "\u3000", "\u2800", "\u115f\u1160")


def test_junit_and_the_json_report_carry_a_blank_drawn_character_as_a_reference(tmp_path):
    """JUnit and the JSON report wrote a name's NBSP, U+3000, U+2800 and lone Hangul fillers
    raw: `cat junit.xml` showed `a<NBSP>b.py` as `a b.py`, another file's name, where the console
    and `lint` escape them (the twenty-third read's leftover). As `&#xa0;` and `\\u00a0` they are
    the same characters to a reader."""
    names = [f"a{c}b.py" for c in BLANKS]
    repo = committed_repo(tmp_path / "repo", {n: CUDA for n in names})
    out = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=repo)
    assert out.returncode == 1, out.stderr.decode()
    rewrite = porter("rewrite", ".", "--target", "xla", "--report", "../r.json", cwd=repo)
    assert rewrite.returncode in (0, 1), rewrite.stderr.decode()
    report = (tmp_path / "r.json").read_text(encoding="utf-8")
    for text in (out.stdout.decode("utf-8"), report):
        assert not [c for c in "".join(BLANKS) if c in text], [hex(ord(c)) for c in "".join(BLANKS) if c in text]
    assert {case.get("file") for case in ET.fromstring(out.stdout).iter("testcase")} == set(names)
    assert all(n in json.dumps(json.loads(report), ensure_ascii=False) for n in names)


# characters whose width terminals count differently: VS16 after a text-default emoji, VS15 after an
# emoji, a skin-tone modifier, a flag's two regional indicators (terminfo.dev's VS16 probe: two columns
# in kitty, iTerm2, Ghostty; one in xterm.js, Alacritty, Terminal.app, VS Code; rich by its version)
UNSETTLED = {
    "heart": "\u2764\ufe0f",
    "face": "\U0001f600\ufe0e",
    "thumb": "\U0001f44d\U0001f3fd",
    "flag": "\U0001f1fa\U0001f1f8",
}


def test_a_table_row_naming_an_emoji_of_unsettled_width_takes_the_same_columns_on_every_terminal(tmp_path):
    """`❤️.py` in the readiness table: rich (15) laid the row out with `❤️` as two columns, a
    terminal that counts it one (xterm, VTE, pyte) drew the border one column short; rich 14
    and kitty the other way round. Shown `❤\\ufe0f.py`, every measure agrees (twentieth read's
    leftover)."""
    from rich.cells import cell_len

    from porter.core.textsafe import columns

    repo = committed_repo(tmp_path / "repo", {f"{k}{c}.py": CUDA for k, c in UNSETTLED.items()} | {"ok.py": CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--out-dir", "../o", cwd=repo)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode == 0, text
    assert "heart\u2764\\ufe0f.py" in text and "flag\\U0001f1fa\\U0001f1f8.py" in text, text
    rows = _table_rows(text)
    assert len(rows) > 5, text
    # rich aligns each table by its own measure: the two agree on every row, so a terminal that counts
    # each character (pyte, xterm) and one that counts clusters draw the same borders
    assert [columns(row) for row in rows] == [cell_len(row) for row in rows], [
        (columns(r), cell_len(r), r) for r in rows
    ]


def test_a_plain_table_grows_with_its_cells_not_with_rows_times_its_widest_cell():
    """Off a terminal, every row of a plain table was padded to its widest cell: a trace naming
    one module with a 20 MB key printed 120 MB (`trace compare`'s module table, six rows), 40
    rows 800 MB. A cell wider than `PAD_MAX` now runs on past its column, shown whole; the rows
    of an ordinary table are laid out as before."""
    from porter.verify import report

    wide = "k" * 200_000
    rows = [[wide, "Linear", "pass"]] + [[f"m{i}", "Linear", "pass"] for i in range(39)]
    lines = report.plain_table(["module", "type", "result"], rows)
    assert sum(map(len, lines)) < len(wide) + 41 * 1040  # PAD_MAX (1,000) and the other columns
    assert lines[2] == f"{wide}  Linear  pass" and wide in lines[2]
    narrow = report.plain_table(["module", "type"], [["a", "Linear"], ["bb", "LayerNorm"]])
    assert narrow == ["module  type", "------  ---------", "a       Linear", "bb      LayerNorm"]


def test_a_cell_wider_than_pad_max_is_written_once_on_a_terminal_not_folded():
    """On a terminal rich folded a long cell into its column: a 2 MB module key printed 7.5 MB
    of lines in 27 s (the twenty-first trace read's leftover). A table holding a cell wider than
    `PAD_MAX` columns is written as the plain lines a file gets: the key once, whole (what is
    written shows which way it went: rich's fold writes the key in pieces, so no time is taken)."""
    import io

    from porter.report.console import make_console
    from porter.verify import report

    key = "m" * 400_000
    console = make_console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    report.print_sections(
        "trace compare: FAIL", "fail", [("Modules", ["module", "result"], [[key, "FAIL"]], [])], console
    )
    out = console.file.getvalue()
    assert out.count(key) == 1 and len(out) < len(key) + 3 * report.PAD_MAX, len(out)  # header, rule
    assert f"{key}  FAIL" in out


def _on_a_terminal(show) -> str:
    """What porter's console writes for `show(console)` on a terminal, its styling taken off."""
    import io

    from porter.report.console import make_console

    out = io.StringIO()
    show(make_console(file=out, force_terminal=True, width=200, color_system=None))
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue())


def _trace_wrote(console, text: str) -> None:
    from rich.text import Text

    from porter.cli.trace import _wrote

    console.print(Text(_wrote(Path(f"{text}.pt"), 1024, {"side": {"label": text}, "stopped": text})))


def _report_section(console, text: str) -> None:
    from types import SimpleNamespace

    from porter.report.model import Section
    from porter.report.terminal import _print_sections

    _print_sections(console, SimpleNamespace(sections=[Section(id="s", title="t", text=text)]))


@pytest.mark.parametrize("control", ["\r", "\x07", "\x08", "\x0b", "\x0c", "\x1b[2J", "\x9b", "\u202e"])
@pytest.mark.parametrize("show", [_trace_wrote, _report_section], ids=["trace record's wrote line", "report section"])
def test_text_a_site_gives_rich_by_hand_shows_every_control_as_an_escape(control, show):
    """Two lines porter gave rich as a str or `Text` it built by hand, without `printable`: the
    line `trace record` ends with (the -o name; the side's label and how the run stopped, which
    the user's run writes) and the text of a report's section (a run's reasons: the user's
    exception text). rich drops CR, BEL, BS, VT and FF from a `Text` (`a<CR>z` was said as
    `az`); now each is shown as its escape, as the console shows ESC, C1 and bidi (twenty-fifth
    read)."""
    shown = _on_a_terminal(lambda console: show(console, f"a{control}z"))
    escape = f"\\x{ord(control[0]):02x}" if ord(control[0]) < 0x100 else f"\\u{ord(control[0]):04x}"
    assert f"a{escape}" in shown, shown
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", shown), shown


def test_markup_in_a_report_section_s_text_is_text():
    shown = _on_a_terminal(lambda console: _report_section(console, "a[bold]b[/] :warning:"))
    assert "a[bold]b[/] :warning:" in shown
