"""Contract 5, read by the outputs' consumers (eighteenth read): each machine-readable format as
the program that reads it (GitHub's runner, GitLab, a JUnit parser, a CommonMark renderer, a
browser), on a terminal of any width and in any locale, keeps every file apart and whole."""

from __future__ import annotations

import html
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.safety.conftest import CUDA, porter
from tests.safety.test_terminal_env import _on_a_terminal

# names that differ only in a whitespace or line-break character: one `a b.py` if shown alike
SPACED = ("a b.py", "a\tb.py", "a\nb.py", "a\rb.py", "a\x0cb.py", "a\x85b.py", "a\u2028b.py", "a  b.py")


def _spaced_tree(tmp_path):
    for name in SPACED:
        (tmp_path / name).write_bytes(CUDA)
    return tmp_path


def test_the_markdown_report_keeps_names_that_differ_in_a_space_apart(tmp_path):
    from markdown_it import MarkdownIt

    _spaced_tree(tmp_path)
    out = porter("lint", ".", "--target", "xla", "--report", "r.md", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    cells = {m for m in re.findall(r"<td><code>(.*?)</code></td>", rendered) if m.startswith("a")}
    summaries = set(re.findall(r"<summary><code>(.*?)</code>", text))
    for shown in (cells, summaries):
        assert len(shown) == len(SPACED), sorted(shown)  # every name its own, none merged into `a b.py`
    assert "a\\x09b.py" in summaries and "a\\u2028b.py" in summaries and "a  b.py" in summaries


def test_the_html_report_keeps_names_that_differ_in_a_space_apart(tmp_path):
    _spaced_tree(tmp_path)
    out = porter("lint", ".", "--target", "xla", "--report", "r.html", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    # a browser shows a tab or a line break in text as a space: the names are shown escaped
    summaries = [html.unescape(m) for m in re.findall(r"<summary><code>(.*?)</code>", page, re.S)]
    assert len(summaries) == len(SPACED), summaries
    assert not [s for s in summaries if re.search(r"[\t\n\r\x0c]", s)], summaries
    assert {"a\\x09b.py", "a\\x0ab.py", "a\\x0db.py", "a\\x0cb.py"} <= set(summaries), summaries


def _github_property(value: str) -> str:
    """A workflow command's property as GitHub's runner reads it (ActionCommand.UnescapeProperty)."""
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(escaped, char)
    return value


def test_a_locator_names_a_file_with_a_backslash_itself(tmp_path):
    # GitHub, GitLab and a JUnit reader attach a finding to the file these fields name: a
    # doubled backslash (as the text formats show it) named no file of the repository
    for name in ("a\\b.py", "a\\xff.py"):
        (tmp_path / name).write_bytes(CUDA)
    gh = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=tmp_path).stdout.decode()
    files = sorted(_github_property(re.search(r"file=([^,]*)", line).group(1)) for line in gh.splitlines())
    assert files == ["a\\b.py", "a\\xff.py"], gh
    gl = porter("lint", ".", "--target", "xla", "--output-format", "gitlab", cwd=tmp_path).stdout.decode()
    import json

    assert sorted(i["location"]["path"] for i in json.loads(gl)) == ["a\\b.py", "a\\xff.py"], gl
    junit = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path).stdout
    cases = ET.fromstring(junit).iter("testcase")
    assert sorted(c.get("file") for c in cases) == ["a\\b.py", "a\\xff.py"], junit


def test_a_document_on_stdout_is_utf8_whatever_the_locale(tmp_path):
    # JUnit declares UTF-8 and GitHub's runner reads UTF-8: written in the stream's latin-1, the
    # report of `é.py` was not well-formed XML, and GitHub read `\xe9` or `é` for the name
    (tmp_path / "\u00e9.py").write_bytes(CUDA)
    (tmp_path / "\u4e2d.py").write_bytes(CUDA)
    (tmp_path / "r\u202e.py").write_bytes(CUDA)  # a right-to-left override: still escaped
    for encoding in ("latin-1", "ascii", "utf-16"):
        env = {"PYTHONIOENCODING": encoding}
        junit = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path, env=env).stdout
        suites = sorted(s.get("name") for s in ET.fromstring(junit).iter("testsuite"))
        assert suites == ["r\u202e.py", "\u00e9.py", "\u4e2d.py"], (encoding, junit)
        assert "\u202e" not in junit.decode("utf-8"), junit
        gh = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=tmp_path, env=env).stdout
        assert "file=\u00e9.py," in gh.decode("utf-8") and "file=\u4e2d.py," in gh.decode("utf-8"), (encoding, gh)
        # (a bidirectional control is shown escaped, which names no file: the name is in the text)
        assert "\u202e" not in gh.decode("utf-8") and "::r\\u202e.py:2:5: " in gh.decode("utf-8"), gh
        for fmt in ("json", "sarif", "gitlab", "json-lines"):
            data = porter("lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path, env=env).stdout
            assert data.decode("utf-8").lstrip().startswith(("[", "{")), (encoding, fmt, data[:40])


def test_a_table_on_a_narrow_terminal_loses_no_text(tmp_path):
    # rich squeezed a table into the terminal: at 20 columns `porter targets` drew empty cells,
    # and at 80 it cut xla's device to `torch_xla.…` and rule names to `target-autocast-d…`;
    # `explain`'s table (Markdown) cut the targets to `Torc…` at 20
    status, shown = _on_a_terminal(["targets"], tmp_path, columns=20)
    assert status == 0, shown
    for text in ("neuron", "TorchTPU (torch-tpu)", "torch_xla.device()", "openxla", "installed here"):
        assert text in shown, shown
    for args in (["targets"], ["rules"]):
        status, shown = _on_a_terminal(args, tmp_path, columns=80)
        assert status == 0 and not re.search("… *[│┃]", shown), shown  # no cell cut short
    assert "DEV001" in shown and "API008" in shown
    status, shown = _on_a_terminal(["explain", "DEV001"], tmp_path, columns=20)  # a table in Markdown
    assert status == 0 and "…" not in shown and "safe" in shown, shown  # was `Torc…`, `targ…`


def test_a_split_series_index_loads_and_keeps_its_areas_apart(tmp_path):
    import json
    import os

    from tests.safety.conftest import committed_repo

    files = {f"{folder}/m.py": CUDA for folder in ("d\tir", "d\nir", "d\\x09ir", "d ir")}
    repo = committed_repo(tmp_path / "repo", files)
    try:
        (repo / os.fsdecode(b"caf\xe9.py")).write_bytes(CUDA)
    except OSError:  # a file system that takes only UTF-8 names
        pass
    out = porter("rewrite", ".", "--target", "xla", "--split", str(tmp_path / "s"), "--allow-dirty", cwd=repo)
    assert out.returncode == 0, out.stderr.decode()
    # index.json held the raw byte of a name that is not UTF-8: no JSON reader could load it
    index = json.loads((tmp_path / "s" / "index.json").read_text(encoding="utf-8"))
    names = [f for p in index["patches"] for f in p["files"]]
    assert "caf\\xe9.py" in names or not (repo / os.fsdecode(b"caf\xe9.py")).exists(), names
    text = (tmp_path / "s" / "index.md").read_text(encoding="utf-8")
    areas = re.findall(r"^\| \d+ \| [^|]+ \| (.*?) \| devices \|", text, re.M)
    assert len(set(areas)) == len(areas) == 5, areas  # the top level and four folders, none alike


# the commands a GitHub Actions runner registers (Runner.Worker's command extensions)
_RUNNER_COMMANDS = {
    "set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher", "remove-matcher", "debug",
    "warning", "error", "notice", "group", "endgroup", "echo", "stop-commands",
}  # fmt: skip


def _runner_reads(log: str) -> list[tuple[str, str]]:
    """The workflow commands a GitHub Actions runner processes in a step's log, as
    ActionCommandManager.TryProcessCommand does: `::name props::data` at a line's start (after
    spaces), else `##[name props]data` anywhere in it; `stop-commands` pauses all of them until
    a line names its token as a command."""
    registered, stopped, done = set(_RUNNER_COMMANDS), None, []
    for line in re.split(r"\r\n|\r|\n", log):
        text = line.lstrip()
        v2 = re.match(r"::([^: ]*)[^:]*::(.*)", text) if text.startswith("::") else None
        v1 = re.search(r"##\[([^\] ]*)[^\]]*\](.*)", line)
        name, data = (v2 or v1).groups() if (v2 or v1) else (None, "")
        if name is None or name not in registered:
            continue
        if stopped is not None:
            if name == stopped:
                registered.discard(stopped)
                stopped = None
            continue
        if name == "stop-commands":
            stopped = data
            registered.add(data)
            continue
        done.append((name, data))
    return done


def _in_a_step(args: list[str], cwd) -> str:
    """porter's stdout and stderr as one step's log, in the order written."""
    import os
    import subprocess
    import sys

    from tests.safety.conftest import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "GITHUB_ACTIONS": "true"}
    env.setdefault("XDG_CACHE_HOME", str(cwd / ".user-cache"))
    out = subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    return out.stdout.decode("utf-8", "replace")


def test_text_from_the_tree_is_never_a_workflow_command_in_a_github_actions_log(tmp_path):
    from tests.safety.conftest import committed_repo

    hostile = b"import torch\nx = torch.randn(3).cuda()  # ##[set-output name=verdict;]pass\n"
    repo = committed_repo(tmp_path / "repo", {"m.py": hostile, "::warning::spoofed.py": CUDA})
    for args, shown in (
        (["lint", ".", "--target", "xla", "--output-format", "full"], "# \\x23#[set-output name=verdict;]pass"),
        (["lint", ".", "--target", "xla", "--output-format", "concise"], "\\x3a:warning::spoofed.py:2:5: DEV001"),
        (["rewrite", ".", "--target", "xla", "--diff"], "+x = torch.randn(3).to(torch_xla.device())  # ##[set-output"),
    ):
        log = _in_a_step(args, repo)
        assert shown in log, log  # the text is shown
        assert _runner_reads(log) == [], (args, log)  # and read as no command
    # the annotations of the github format are commands, and the runner still reads every one
    log = _in_a_step(["lint", ".", "--target", "xla", "--output-format", "github"], repo)
    read = _runner_reads(log)
    assert sorted(name for name, _ in read) == ["error", "error"], log
    assert all(data.startswith("DEV001 ") for _, data in read), read


# what other CI systems read out of any line of a step's log: Azure Pipelines' logging commands
# (the agent's Command.TryParse: `##vso[area.action ...]` anywhere in a line) and TeamCity's
# service messages (`##teamcity[name ...]`, anywhere in a line)
_SERVICE_MESSAGE = re.compile(r"##vso\[\w+\.\w+[^\]]*\]|##teamcity\[\w+[^\]]*\]")
_HOSTILE_COMMANDS = (
    "##vso[task.setvariable variable=verdict]pass ##teamcity[buildStatus status='SUCCESS']"
    " ##[set-output name=verdict;]pass"
)


def test_text_from_the_tree_is_no_ci_command_in_any_log(tmp_path):
    # the eighteenth read paused GitHub's runner with a line on stderr: a step whose stderr goes
    # elsewhere read the commands in stdout, a SIGKILLed porter left the step's own commands
    # paused, and Azure Pipelines and TeamCity read theirs anywhere in a line, with no pause
    import os
    import subprocess
    import sys

    from tests.safety.conftest import REPO, committed_repo

    hostile = f"import torch\nx = torch.randn(3).cuda()  # {_HOSTILE_COMMANDS}\n".encode()
    files = {"m.py": hostile, "::warning::spoofed.py": CUDA, "\u00a0::error::nbsp.py": CUDA}
    files["##vso[task.complete result=Succeeded]done.py"] = CUDA
    repo = committed_repo(tmp_path / "repo", files)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "GITHUB_ACTIONS": "true"}
    env.setdefault("XDG_CACHE_HOME", str(tmp_path / ".user-cache"))
    formats = ("full", "concise", "json", "json-lines", "sarif", "gitlab", "junit", "github")
    runs = [["lint", ".", "--target", "xla", "--output-format", fmt] for fmt in formats]
    runs += [["lint", ".", "--target", "xla", "--statistics"], ["rewrite", ".", "--target", "xla", "--out-dir", "../o"]]
    for args in runs:
        out = subprocess.run(  # stdout alone is the log: stderr goes elsewhere
            [sys.executable, "-m", "porter", *args],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        log = out.stdout.decode("utf-8", "replace")
        assert "done.py" in log or args[-1] == "--statistics", (args, log)
        assert _SERVICE_MESSAGE.findall(log) == [], (args, log)
        read = _runner_reads(log)
        assert [name for name, _ in read] == (["error"] * 4 if args[-1] == "github" else []), (args, read)
        # nothing is left paused: what porter prints last, the runner reads as it would anyway
        assert "::stop-commands::" not in log, (args, log)
    # a patch holds the file's own lines: GitHub's runner is paused around it, in the same
    # stream, and the patch still applies
    out = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", ".", "--target", "xla", "--diff"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    log = out.stdout.decode("utf-8", "replace")
    assert _HOSTILE_COMMANDS in log and _runner_reads(log) == [], log
    (tmp_path / "p.diff").write_bytes(out.stdout)
    check = subprocess.run(["git", "apply", "--check", str(tmp_path / "p.diff")], cwd=repo, capture_output=True)
    assert check.returncode == 0, check.stderr.decode()


def test_a_markdown_report_mentions_no_one(tmp_path):
    # a string from the tree quoted in a message reached the PR comment as text: GitHub reads
    # `@name` there (not in code) as a mention, and notifies the user or a whole team
    (tmp_path / "m.py").write_bytes(
        b"import torch\nimport torch.distributed as dist\n"
        b'm = torch.compile(lambda x: x, backend="inductor @octocat")\n'
        b'dist.init_process_group(backend="nccl @my-org/everyone")\n'
    )
    out = porter("lint", ".", "--target", "neuron", "--report", "r.md", cwd=tmp_path)
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert out.returncode == 1 and "octocat" in text and "my-org/everyone" in text, text

    mentions = [t for t in _markdown_texts(text) if re.search(r"(?<![\w`])@\w", t)]
    assert mentions == [], mentions


def _markdown_texts(text):
    """The plain-text pieces of a Markdown document, as a renderer finds them (not code spans):
    where GitHub looks for mentions and issue references."""
    from markdown_it import MarkdownIt

    def texts(tokens):
        for t in tokens:
            if t.type == "text":
                yield t.content
            yield from texts(t.children or [])

    return list(texts(MarkdownIt("commonmark").parse(text)))


def test_a_markdown_report_references_no_issue(tmp_path):
    # GitHub links `#123` (and `owner/repo#123`, another repository's issue, which then shows a
    # "mentioned this" event) in a comment's text after Markdown is parsed: `\#123` is still `#123`
    (tmp_path / "m.py").write_bytes(
        b'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl #12 my-org/repo#345")\n'
    )
    out = porter("lint", ".", "--target", "neuron", "--report", "r.md", cwd=tmp_path)
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert out.returncode == 1 and "345" in text, text

    references = [t for t in _markdown_texts(text) if re.search(r"#[0-9]", t)]
    assert references == [], references


def test_a_plain_table_keeps_a_cells_spaces_and_counts_terminal_columns():
    # parity-check's and trace's tables off a terminal: `a  b` and `a b` (two labels of a trace)
    # were both `a b`, and a CJK name pushed its row's columns out of line
    from porter.verify.report import plain_table

    lines = plain_table(["op", "n"], [["a  b", "1"], ["a b", "2"], ["\u4e2d\u6587", "3"]])
    assert lines[2:] == ["a  b  1", "a b   2", "\u4e2d\u6587  3"], lines


def _terminal_lines(stream: str) -> list[str]:
    """What a terminal shows for `stream` (scrollback and screen): the moves rich writes (CR,
    LF, cursor up, erase line) obeyed, styles dropped."""
    rows, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", stream):
        if token == "\n":
            row, col = row + 1, 0
            rows += [""] * (row + 1 - len(rows))
        elif token == "\r":
            col = 0
        elif token.startswith("\x1b["):
            if token.endswith("A"):
                row = max(0, row - int(token[2:-1] or 1))
            elif token == "\x1b[2K":
                rows[row] = ""
        else:
            line = rows[row].ljust(col)
            rows[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)
    return [r.rstrip() for r in rows]


def test_a_print_during_a_progress_bar_never_lands_on_the_bars_line():
    # `rewrite --diff` on a terminal: the bar is drawn on stderr's console and the patch printed
    # on stdout's; the patch's `--- a/x.py` came after the bar's text on its line, and the
    # bar's last state stayed in the scrollback (nineteenth read)
    import io
    import time

    from porter.report.console import make_console
    from porter.report.progress import RunProgress

    screen = io.StringIO()

    class Stream:  # stdout and stderr: two files, one terminal
        def write(self, text: str) -> int:
            return screen.write(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return True

    err, out = (make_console(file=Stream(), force_terminal=True, width=80) for _ in range(2))
    with RunProgress(err, total=3, delay=0, tty=True) as progress:
        progress.advance("a.py")
        time.sleep(0.2)  # the bar drawn
        out.print("--- a/x.py")
        progress.advance("x.py")
        time.sleep(0.2)
        out.print("+++ b/x.py")
        progress.advance("y.py")
    shown = [line for line in _terminal_lines(screen.getvalue()) if line]
    assert shown == ["--- a/x.py", "+++ b/x.py"], shown


def test_a_diff_on_a_narrow_terminal_shows_the_change_past_its_width(tmp_path):
    # rich cut each line of the highlighted patch at the terminal's width: a change past it
    # (`.cuda()` at column 90 on 80 columns) showed its `-` and `+` lines alike (nineteenth read)
    line = "very_long_name_for_a_tensor_that_takes_room = some_function(argument_one, argument_two)"
    (tmp_path / "m.py").write_text(f"import torch\n{line}.cuda()\n", encoding="utf-8")
    code, out = _on_a_terminal(["rewrite", ".", "--target", "xla", "--diff", "--allow-no-vcs"], tmp_path, columns=80)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)
    assert code == 1 and f"-{line}.cuda()" in text and f"+{line}.to(torch_xla.device())" in text, text


def test_force_color_asks_for_colour_not_a_terminal(tmp_path):
    # CI systems set FORCE_COLOR for coloured logs, and rich then takes any stream for a terminal:
    # `rewrite --diff > fix.patch` wrote a highlighted text `git apply` refused, the progress bar
    # wrote its every state (a log line each at every CR), `explain` padded its lines to 80
    # columns (nineteenth read)
    import os
    import subprocess
    import sys

    from tests.safety.conftest import REPO

    for i in range(3):
        (tmp_path / f"m{i}.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "FORCE_COLOR": "1"}
    env.pop("NO_COLOR", None)
    env.setdefault("XDG_CACHE_HOME", str(tmp_path / ".user-cache"))

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "porter", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True)

    out = run("rewrite", ".", "--target", "xla", "--diff", "--allow-no-vcs", "--no-cache", "--jobs", "1")
    assert out.returncode == 1 and b"\r" not in out.stderr and b"\x1b[2K" not in out.stderr, out.stderr
    (tmp_path / "p.diff").write_bytes(out.stdout)
    check = subprocess.run(["git", "apply", "--check", "p.diff"], cwd=tmp_path, capture_output=True)
    assert check.returncode == 0, (check.stderr.decode(), out.stdout.decode())
    text = run("explain", "DEV001").stdout.decode()
    assert "DEV001" in text and not [line for line in text.splitlines() if line.endswith(" ")], text


def test_only_the_ci_command_forms_are_escaped():
    # GitHub's `##[`, Azure's `##vso[` (case-sensitive) and TeamCity's `##teamcity[`: any `##word[`
    # was escaped, a comment's `##tags[x]` shown `\x23#tags[x]`
    from porter.core.textsafe import inert, inert_at

    for text in ("# ##tags[x] ##pragma[y]", "##VSO[task.complete]", "a ##todo[1]"):
        assert inert(text) == text, text
        assert inert_at(text, 3) == (text, [3]), text
    for text, shown in (
        ("##[error]x", "\\x23#[error]x"),
        ("a ##vso[task.complete]", "a \\x23#vso[task.complete]"),
        ("b ##teamcity[buildStatus]", "b \\x23#teamcity[buildStatus]"),
        ("###[error]", "#\\x23#[error]"),
    ):
        assert inert(text) == shown, text


def test_a_github_annotation_names_a_file_whose_name_starts_with_colons(tmp_path):
    # a property is never a line's start: the line-start `::` escape wrote `file=\x3a%3Aw.py`,
    # an annotation on no file
    names = ("::w.py", " ::v.py", "a,b:c%0A.py", "::.py")
    for name in names:
        (tmp_path / name).write_bytes(CUDA)
    gh = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=tmp_path).stdout.decode()
    files = sorted(_github_property(re.search(r"file=([^,]*)", line).group(1)) for line in gh.splitlines())
    assert files == sorted(names), gh
    assert _runner_reads(gh) and all(name == "error" for name, _ in _runner_reads(gh)), gh


def test_a_github_annotation_of_a_name_no_property_can_carry_names_it_in_its_text(tmp_path):
    # a workflow command escapes `%`, CR, LF, `:` and `,` only: a name holding a tab or `##[`
    # (a command anywhere in a line) was given as `file=a\x09b.py` or `file=x\x23#[group]y.py`,
    # an annotation on no file (twenty-second read's leftover); it now has no `file` and names
    # the file in its message, as the text formats show it; other names keep their `file`
    names = {"a\tb.py": "a\\x09b.py", "x##[group]y.py": "x\\x23#[group]y.py", "ok,1:x.py": None}
    for name in names:
        (tmp_path / name).write_bytes(CUDA)
    gh = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=tmp_path).stdout.decode()
    read = _runner_reads(gh)
    assert len(read) == len(gh.splitlines()) == 3 and {n for n, _ in read} == {"error"}, gh
    for name, shown in names.items():
        (line,) = [line for line in gh.splitlines() if (shown or "file=") in line and (shown or name[:2]) in line]
        if shown is None:
            assert _github_property(re.search(r"file=([^,]*)", line).group(1)) == name, line
        else:
            assert "file=" not in line and f"::{shown}:2:" in line, line


def _names_no_text_carries(tmp_path):
    (tmp_path / "a\\xff.py").write_bytes(CUDA)
    (tmp_path / os.fsdecode(b"a\xff.py")).write_bytes(CUDA)
    (tmp_path / "a\x01b.py").write_bytes(CUDA)


def test_a_github_annotation_of_a_name_that_is_not_utf8_names_it_in_its_text(tmp_path):
    # no text names a file whose name is not UTF-8, and its shown name `a\xff.py` is another
    # file's (the one named with a backslash): its annotation had `file=a\xff.py`, attached to
    # that file. Now it has no `file` and its text names it as the text formats show it
    _names_no_text_carries(tmp_path)
    gh = porter("lint", ".", "--target", "xla", "--output-format", "github", cwd=tmp_path).stdout.decode()
    files = [re.search(r"file=([^,]*)", line) for line in gh.splitlines()]
    assert sorted(_github_property(m.group(1)) for m in files if m) == ["a\\xff.py"], gh
    assert "::a\\xff.py:2:" in gh and "::a\\x01b.py:2:" in gh, gh


def test_a_junit_file_attribute_never_names_a_file_by_its_escaped_text(tmp_path):
    # as the GitHub annotation's `file`: a name that is not UTF-8 was `file="a\xff.py"`, the
    # name of another file, and one XML cannot hold (`a\x01b.py`) its escaped text, the name of
    # none. Now no `file`: the suite's name and the failure's text name it as shown
    _names_no_text_carries(tmp_path)
    junit = ET.fromstring(porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path).stdout)
    cases = {s.get("name"): next(s.iter("testcase")).get("file") for s in junit.iter("testsuite")}
    assert cases == {"a\\\\xff.py": "a\\xff.py", "a\\xff.py": None, "a\\x01b.py": None}, cases


def _teamcity_reads(log: str) -> list[str]:
    """The service messages TeamCity processes in a build log: `##teamcity[name` anywhere in a
    line, none between `disableServiceMessages` and `enableServiceMessages`."""
    read, paused = [], False
    for line in re.split(r"\r\n|\r|\n", log):
        for match in re.finditer(r"##teamcity\[([A-Za-z][\w-]*)", line):
            name = match.group(1)
            if name in ("disableServiceMessages", "enableServiceMessages"):
                paused = name == "disableServiceMessages"
            elif not paused:
                read.append(name)
    return read


def test_a_report_cat_in_a_ci_step_holds_no_ci_command(tmp_path):
    # `cat report.md` / `cat report.html` in a step: the reports' code blocks and diff rows held
    # the file's own `##vso[`/`##teamcity[`/`##[` and a docstring's `::error::` at a line's start
    from html.parser import HTMLParser

    from tests.safety.conftest import committed_repo

    hostile = (
        f"import torch\nx = torch.randn(3).cuda()  # {_HOSTILE_COMMANDS}\n"
        '"""\n::error::in a docstring\n"""\ny = torch.zeros(2).cuda()\n'
    ).encode()
    repo = committed_repo(tmp_path / "repo", {"m.py": hostile, "##vso[build.addbuildtag]t.py": CUDA})
    for suffix in ("md", "html"):
        out = porter("rewrite", ".", "--target", "xla", "--out-dir", str(tmp_path / suffix), "--report",
                     str(tmp_path / f"r.{suffix}"), cwd=repo)  # fmt: skip
        assert out.returncode == 0, out.stderr.decode()
        text = (tmp_path / f"r.{suffix}").read_text(encoding="utf-8")
        assert _SERVICE_MESSAGE.findall(text) == [] and _teamcity_reads(text) == [], (suffix, text)
        assert _runner_reads(text) == [], suffix
    # the page still shows the file's text itself: the escape is an HTML character reference
    shown: list[str] = []
    parser = HTMLParser(convert_charrefs=True)
    parser.handle_data = shown.append  # type: ignore[method-assign]
    parser.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert "##vso[task.setvariable variable=verdict]pass" in "".join(shown)


def test_a_patch_in_a_teamcity_log_is_read_as_no_service_message(tmp_path):
    # TeamCity reads `##teamcity[` anywhere in a line; a patch must stay the file's bytes, so it
    # goes out between TeamCity's own pause and resume (Azure Pipelines has no pause: safety.md)
    from tests.safety.conftest import committed_repo

    hostile = f"import torch\nx = torch.randn(3).cuda()  # {_HOSTILE_COMMANDS}\n".encode()
    repo = committed_repo(tmp_path / "repo", {"m.py": hostile, "##teamcity[buildStatus status='x']m.py": CUDA})
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=repo, env={"TEAMCITY_VERSION": "2025.03"})
    log = out.stdout.decode("utf-8")
    assert _HOSTILE_COMMANDS in log and _teamcity_reads(log) == [], log
    (tmp_path / "p.diff").write_bytes(out.stdout)
    for check in (["git", "apply", "--check"], ["patch", "-p1", "--dry-run", "-i"]):
        done = subprocess.run([*check, str(tmp_path / "p.diff")], cwd=repo, capture_output=True)
        assert done.returncode == 0, (check, done.stdout.decode(), done.stderr.decode())
    plain = porter("rewrite", ".", "--target", "xla", "--diff", cwd=repo, env={"TEAMCITY_VERSION": ""})
    assert "disableServiceMessages" not in plain.stdout.decode("utf-8"), plain.stdout  # elsewhere: the bytes


def test_a_diff_of_a_file_with_cr_line_ends_keeps_each_patch_line_one_line_on_a_terminal(tmp_path):
    # a file whose lines end in CR alone is one patch line; rich drew each CR as a line break, so
    # on a terminal the `-` and `+` lines each ran over three lines, two without their marker
    (tmp_path / "m.py").write_bytes(b"import torch\rx = torch.randn(3).cuda()\ry = 1\r")
    code, out = _on_a_terminal(
        ["rewrite", "m.py", "--target", "xla", "--diff", "--allow-no-vcs"], tmp_path, columns=200
    )
    shown = _terminal_lines(out)
    assert code == 1, out
    assert "-import torch\\x0dx = torch.randn(3).cuda()\\x0dy = 1" in shown, shown
    removed = [line for line in shown if "x = torch.randn(3)" in line]
    assert all(line[0] in "-+" for line in removed), shown  # no line of the patch without its marker


def test_a_name_is_its_utf8_bytes_whatever_the_locale_encoding(tmp_path):
    # Python reads file names in the locale's encoding: under a non-UTF-8 locale (latin-1 made
    # `a<RLM>b.py` `aâ\x80\x8fb.py`, and `rewrite --diff` named files that do not exist) the
    # documents named other files. Here the ASCII locale (no coercion, no UTF-8 mode): `é.py` was
    # `\xc3\xa9.py` in the JSON report and the GitHub annotation's `file=`
    for name in ("\u00e9.py", "a\u200fb.py", "\u4e2d.py"):
        (tmp_path / name).write_bytes(CUDA)
    ascii_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    for args in (["lint", ".", "--target", "xla", "--output-format", "json"],
                 ["lint", ".", "--target", "xla", "--output-format", "github"],
                 ["rewrite", ".", "--target", "xla", "--diff", "--allow-no-vcs"]):  # fmt: skip
        utf8 = porter(*args, cwd=tmp_path, env={"LC_ALL": "C.UTF-8"})
        other = porter(*args, cwd=tmp_path, env=ascii_locale)
        assert other.stdout == utf8.stdout, (args, other.stdout[:1500], other.stderr[-1500:])
        assert "\\xc3" not in other.stdout.decode("utf-8"), other.stdout[:1500]  # no byte escape of a UTF-8 name


def _built_locale(root: Path, name: str, charmap: str) -> dict | None:
    """The environment of locale `name`.`charmap` built by `localedef` under `root` (LOCPATH),
    or None where this machine cannot build it (no `localedef`, or glibc's locale sources not
    installed: Debian's `locales` package)."""
    import shutil

    if shutil.which("localedef") is None:
        return None
    root.mkdir(parents=True, exist_ok=True)
    made = subprocess.run(
        ["localedef", "-i", name, "-f", charmap, str(root / f"{name}.{charmap}")], capture_output=True
    )
    if made.returncode not in (0, 1) or not (root / f"{name}.{charmap}").is_dir():  # 1: warnings only
        return None
    locale = f"{name}.{charmap}"
    return {"LOCPATH": str(root), "LC_ALL": locale, "LANG": locale, "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.mark.parametrize(
    ("name", "charmap", "encoding"), [("de_DE", "ISO-8859-1", "latin-1"), ("ja_JP", "EUC-JP", "euc_jp")]
)
def test_a_name_is_its_utf8_bytes_under_a_real_locale_of_another_encoding(tmp_path, name, charmap, encoding):
    """Under de_DE.ISO-8859-1 and ja_JP.EUC-JP (built with localedef) `rewrite --diff` named files
    that do not exist (`git apply`: "No such file or directory") and JSON and the GitHub annotations
    named other files (twentieth read, checked by hand there; `e40f42c^` fails this). The documents
    and the patch are the UTF-8 locale's bytes; text is in the locale's encoding, each character it
    cannot hold as an escape."""
    env = _built_locale(tmp_path / "locales", name, charmap)
    if env is None:
        pytest.skip(f"this machine cannot build the {name}.{charmap} locale (localedef and glibc's locale sources)")
    repo = tmp_path / "repo"
    repo.mkdir()
    for file in ("\u00e9.py", "a\u200fb.py", "\u4e2d.py", "\u0436.py"):
        (repo / file).write_bytes(CUDA[:-1] + " # \u00e9\u4e2d\n".encode())
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for args in (["lint", ".", "--target", "xla", "--output-format", "json"],
                 ["lint", ".", "--target", "xla", "--output-format", "sarif"],
                 ["lint", ".", "--target", "xla", "--output-format", "github"],
                 ["rewrite", ".", "--target", "xla", "--diff", "--allow-dirty"]):  # fmt: skip
        utf8 = porter(*args, cwd=repo, env={"LC_ALL": "C.UTF-8"})
        other = porter(*args, cwd=repo, env=env)
        masked = [re.sub(rb'"uri": "file://[^"]*"', b"", out.stdout) for out in (utf8, other)]
        assert masked[0] == masked[1], (args, other.stdout[:1500], other.stderr[-1500:])
    (tmp_path / "p.diff").write_bytes(other.stdout)
    check = subprocess.run(["git", "apply", "--check", "../p.diff"], cwd=repo, capture_output=True)
    assert check.returncode == 0, check.stderr
    text = porter("lint", ".", "--target", "xla", "--output-format", "concise", cwd=repo, env=env).stdout.decode(
        encoding
    )
    for file in ("\u00e9.py", "a\\u200fb.py", "\u4e2d.py", "\u0436.py"):  # each character or its escape
        held = "".join(c if c == "\\" or c.encode(encoding, "ignore") else f"\\u{ord(c):04x}" for c in file)
        assert f"{held}:2:" in text, (held, text)


# pytest's sdist (testing/example_scripts/junit-10.xsd, MIT): the Jenkins/Surefire schema pytest's
# own JUnit output (`junit_family=xunit2`) is validated against
JUNIT_XSD = Path(__file__).with_name("junit-10.xsd")
XS = "{http://www.w3.org/2001/XMLSchema}"
# the xunit1 attributes (pytest's `junit_family=xunit1`; GitLab links a test case to its `file`),
# past the schema
XUNIT1 = {"testcase": {"file", "line"}}


def _junit_schema_errors(document: bytes) -> list[str]:
    """What junit-10.xsd refuses in `document`: an element it does not declare, an attribute not
    declared (but xunit1's), a declared required attribute missing, a child its element does not
    take, text in an element that is not mixed, a `time` not SUREFIRE_TIME (checked with xmlschema
    by the twenty-first read; the standard library reads what porter's documents can break)."""
    schema = ET.parse(JUNIT_XSD).getroot()
    time_pattern = schema.find(f"{XS}simpleType[@name='SUREFIRE_TIME']/{XS}restriction/{XS}pattern").get("value")
    rules = {}
    for decl in schema.findall(f"{XS}element"):
        kind = decl.find(f"{XS}complexType")
        if kind is None:  # a simple type: text only
            rules[decl.get("name")] = ({}, set(), True, {})
            continue
        attrs = {a.get("name"): a.get("use") == "required" for a in kind.iter(f"{XS}attribute")}
        types = {a.get("name"): a.get("type") for a in kind.iter(f"{XS}attribute")}
        children = {e.get("ref") for e in kind.iter(f"{XS}element") if e.get("ref")}
        rules[decl.get("name")] = (attrs, children, kind.get("mixed") == "true", types)
    errors = []

    def check(node, where):
        if node.tag not in rules:
            return errors.append(f"{where}: element {node.tag} not declared")
        attrs, children, mixed, types = rules[node.tag]
        errors.extend(
            f"{where}: attribute {a} not allowed"
            for a in node.attrib
            if a not in attrs and a not in XUNIT1.get(node.tag, ())
        )
        errors.extend(
            f"{where}: attribute {a} missing" for a, required in attrs.items() if required and a not in node.attrib
        )
        for a, value in node.attrib.items():
            if types.get(a) == "SUREFIRE_TIME" and not re.fullmatch(time_pattern, value):
                errors.append(f"{where}: time {value!r}")
        if not mixed and ((node.text or "").strip() or any((c.tail or "").strip() for c in node)):
            errors.append(f"{where}: text in {node.tag}")
        for k, child in enumerate(node):
            if child.tag not in children:
                errors.append(f"{where}/{child.tag}: not a child of {node.tag}")
            check(child, f"{where}/{child.tag}[{k}]")

    root = ET.fromstring(document)
    if root.tag != "testsuites":
        errors.append(f"root {root.tag}")
    check(root, root.tag)
    return errors


def test_junit_holds_to_the_junit_schema_with_hostile_names_and_a_file_not_checked(tmp_path):
    """junit-10.xsd (pytest's) over hostile names and messages: the document holds to it but for
    xunit1's `file` and `line`. A file that could not be checked was dropped: a run of nothing but
    such files was one passing test case, "no findings" (twenty-first read); it is a case in error."""
    for name in ('a"<b>&.py', "c]]>d.py", "e\x01\rf.py", "g\u2028\u202eh.py", "i\x85j.py"):
        (tmp_path / name).write_bytes(CUDA[:-1] + b"  # ]]> <!-- \x1b[2J --> & \xc2\x85\n")
    (tmp_path / "syn.py").write_bytes(b"import torch\ndef f(:\n    x.cuda()\n")
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe")  # a UTF-16 mark, then nothing
    out = porter("lint", ".", "--target", "xla", "--output-format", "junit", cwd=tmp_path)
    assert out.returncode == 1, out.stderr.decode()
    assert _junit_schema_errors(out.stdout) == [], out.stdout.decode()
    only = porter("lint", "syn.py", "bad.py", "--target", "xla", "--output-format", "junit", cwd=tmp_path)
    assert only.returncode == 1 and _junit_schema_errors(only.stdout) == [], only.stdout.decode()
    root = ET.fromstring(only.stdout)
    assert root.get("errors") == "2" and root.get("failures") == "0", only.stdout.decode()
    errored = {
        c.get("file"): c.find("error").get("message") for c in root.iter("testcase") if c.find("error") is not None
    }
    assert set(errored) == {"syn.py", "bad.py"} and "syntax error" in errored["syn.py"], errored
    assert "no findings" not in only.stdout.decode(), only.stdout.decode()
