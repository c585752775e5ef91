"""The thirty-fifth read's leftovers of terminal output (term2, on 8e7630f5): each test failed there."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.deps import need, require
from tests.safety.test_thirty_fourth_read_term import _PORTER, _SIDE, _end
from tests.safety.test_thirty_third_read_stopleft import _state, _until

_ROOT = Path(__file__).resolve().parents[2]
_ENV = {**{k: v for k, v in os.environ.items() if k != "PORTER_OUTPUT_FORMAT"}, "PYTHONPATH": str(_ROOT)}

# the 34th read's side, saying its pid where it said "up": the test stops the side alone
_SIDE_PID = _SIDE.replace("import sys, time", "import os, sys, time").replace(
    'open(sys.argv[2], "w").write("up")', 'open(sys.argv[2], "w").write(str(os.getpid()))'
)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc")
def test_a_side_stopped_by_another_process_is_not_timed_out_by_the_stop(tmp_path: Path) -> None:
    """`kill -STOP` of the side alone (not porter's Ctrl-Z), 6 s over its 3 s alarm, then SIGCONT: the
    side ended `TimedOut: no result after 4 s: porter stopped the run` after 0.5 s awake (porter had
    stopped nothing). Porter now reads the stop from /proc and says it to the side as its own: done."""
    porter = subprocess.Popen(
        [sys.executable, "-c", _PORTER, str(tmp_path), _SIDE_PID], env=_ENV, stdout=subprocess.PIPE, process_group=0
    )
    try:
        assert _until(lambda: (tmp_path / "up").exists() and (tmp_path / "up").read_text() != "")
        side = int((tmp_path / "up").read_text())
        os.kill(side, signal.SIGSTOP)
        assert _until(lambda: _state(side) == "T")
        time.sleep(6)
        os.kill(side, signal.SIGCONT)
        out, _ = porter.communicate(timeout=60)
        log = (tmp_path / "log").read_text(errors="replace")
        assert json.loads(out) == {"rc": 0, "timed_out": False}, log
        assert "done" in log and "porter stopped the run" not in log
    finally:
        if porter.poll() is None:
            _end(porter.pid)
        porter.wait()


def test_the_sides_alarm_does_not_say_porter_stopped_the_run() -> None:
    """The alarm's words: the side ends its own run at its deadline, porter stops nothing."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from porter.verify.launch import _alarm\nimport time\n_alarm({'deadline_s': 1})\ntime.sleep(5)",
        ],
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "TimedOut" in r.stderr
    assert "porter stopped" not in r.stderr and "awake" in r.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_lint_under_a_one_kb_file_size_limit_names_the_limit(tmp_path: Path, jobs: str) -> None:
    """`ulimit -f 1`: the worker pool's shared memory fails first (EFBIG), and lint said "internal
    error: OSError: [Errno 27] File too large", exit 2: a porter bug, for a user's limit. Now one line
    that names the limit, exit 2."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    r = subprocess.run(
        [sys.executable, "-m", "porter", "lint", "a.py", "-t", "xla", "--no-cache", "--jobs", jobs],
        cwd=tmp_path,
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)),  # `ulimit -f 1` in bash
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in r.stderr, r.stderr
    assert "File too large" in lines[0] and "ulimit -f" in lines[0] and "1024 bytes" in lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--write-baseline", "-"],
        ["--baseline", "-"],
        ["--config", "-"],
        ["--report", "-"],
    ],
)
def test_a_bare_dash_is_refused_where_it_cannot_be_a_stream(tmp_path: Path, args: list[str]) -> None:
    """`--write-baseline -` wrote a file named `-` (and `--baseline -` read it back) where `-o -` is
    stdout: one name, two meanings. `-` is now stdout for `--output-file` alone and refused, exit 2,
    by every other option that names a file; nothing named `-` is written."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    (tmp_path / "-").write_text("{}") if "--write-baseline" not in args else None
    before = sorted(p.name for p in tmp_path.iterdir())
    r = subprocess.run(
        [sys.executable, "-m", "porter", "lint", "a.py", "-t", "xla", "--no-cache", *args],
        cwd=tmp_path,
        env={**_ENV, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "`-` (standard input or output) is not taken here" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_file_named_dash_is_still_named_by_dot_slash(tmp_path: Path) -> None:
    """`./-` names the file `-`: written, then read back as the baseline (the findings it holds drop)."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    run = [sys.executable, "-m", "porter", "lint", "a.py", "-t", "xla", "--no-cache"]
    w = subprocess.run([*run, "--write-baseline", "./-"], cwd=tmp_path, env=_ENV, capture_output=True, timeout=120)
    assert w.returncode == 0 and (tmp_path / "-").is_file(), w.stderr
    r = subprocess.run([*run, "--baseline", "./-"], cwd=tmp_path, env=_ENV, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


_NONCHARACTERS = {"\ufdd0", "\ufdef", "\uffff", "\U0010fffe"}


@pytest.mark.parametrize("command", ["lint", "rewrite"])
def test_the_markdown_report_holds_no_noncharacter(tmp_path: Path, command: str) -> None:
    """A file `a<U+FFFF>.py` (and a comment holding U+FDD0) put the noncharacters raw in the Markdown
    report; markdown-it-py (as GitHub's cmark-gfm) carries them into the comment's HTML, which html5lib
    reads with "invalid-codepoint" errors, and a browser draws `a.py`. Now `\\uffff`, as the HTML report."""
    markdown_it = need("markdown_it")
    source = "import torch\nx = torch.randn(3).cuda()  # \ufdd0\n"
    (tmp_path / "a\uffff.py").write_text(source, encoding="utf-8")
    (tmp_path / "b\U0010fffe.py").write_text(source, encoding="utf-8")
    extra = ["--diff"] if command == "rewrite" else []
    r = subprocess.run(
        [sys.executable, "-m", "porter", command, ".", "-t", "xla", "--no-cache", *extra, "--report", "r.md"],
        cwd=tmp_path,
        env=_ENV,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr.decode()
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    assert not _NONCHARACTERS & (set(text) | set(page))
    assert "a\\uffff.py" in text and "b\\U0010fffe.py" in text


def test_trace_ops_markdown_holds_no_noncharacter(tmp_path: Path) -> None:
    """`trace ops` builds its own Markdown table: a trace named `a<U+FFFF><U+FDD0>.safetensors` (a name
    from another machine) put both raw in its title. Now escaped, as the Markdown report."""
    require("torch")
    from tests.verify import test_trace_units as units

    units._imports.__wrapped__()  # (its autouse fixture's imports: torch, write_trace)
    name = "a\uffff\ufdd0.safetensors"
    units.make_trace(tmp_path / name, [1.0, 0.9])
    r = subprocess.run(
        [sys.executable, "-m", "porter", "trace", "ops", name, "--target", "xla", "--report", "o.md"],
        cwd=tmp_path,
        env=_ENV,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr.decode()
    text = (tmp_path / "o.md").read_text(encoding="utf-8")
    assert not _NONCHARACTERS & set(text) and "a\\uffff\\ufdd0.safetensors" in text
