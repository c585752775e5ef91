"""Contract 5 and 6 where the terminal itself is odd: a `COLUMNS` that is not a size, a stream
whose encoding lacks a name's characters, a stdout on a full disk. The output is still the
output (never empty, never a traceback), and a write that fails says so in one line."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys

import pytest

from tests.safety.conftest import CUDA, REPO, porter

NAME = "n\u202e\u00e9\u4e2d\U0001f600.py"  # RLO, Latin-1, CJK, an emoji


@pytest.mark.parametrize("var,value", [("COLUMNS", "0"), ("COLUMNS", "\u00b2"), ("LINES", "\u00b2"), ("COLUMNS", "-5")])
@pytest.mark.parametrize("args", [("explain", "CUDA001"), ("rules",), ("--help",)])
def test_a_terminal_size_that_is_not_one_is_ignored(tmp_path, var, value, args):
    # COLUMNS=0 drew nothing at all (rich made every line 0 wide); "²" passes str.isdigit()
    # and then int() raised: a ValueError traceback from every command
    out = porter(*args, cwd=tmp_path, env={var: value})
    both = out.stdout.decode() + out.stderr.decode()
    assert out.returncode == 0 and "Traceback" not in both, both
    assert ("CUDA001" if args[0] != "--help" else "rewrite") in out.stdout.decode(), both


@pytest.mark.parametrize("fmt", ["full", "concise"])
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_name_the_output_encoding_lacks_is_escaped_not_raised(tmp_path, fmt, encoding):
    # the text formats; the documents (junit, github, ...) are UTF-8 whatever the locale
    # (test_output_consumers.py)
    (tmp_path / NAME).write_bytes(CUDA)
    out = porter(
        "lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path, env={"PYTHONIOENCODING": encoding}
    )
    err = out.stderr.decode(encoding)
    text = out.stdout.decode(encoding)  # the stream's own encoding, nothing it lacks
    assert out.returncode == 1 and "Traceback" not in err, err
    assert "\\u4e2d" in text, text  # the name is there, as an escape
    assert "\u202e" not in text


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_a_character_the_stream_lacks_never_reads_as_a_byte_of_another_name(tmp_path, fmt):
    # `backslashreplace` wrote `café.py` as `caf\xe9.py` on an ASCII stdout (`LC_ALL=C
    # PYTHONUTF8=0`), the way porter shows `caf<0xE9>.py`, a name that is not UTF-8: two files
    # read alike (twenty-fourth read)
    (tmp_path / "caf\u00e9.py").write_bytes(CUDA)
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_bytes(CUDA)
    out = porter(
        "lint", ".", "--target", "xla", "--output-format", fmt, cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"}
    )
    text = out.stdout.decode("ascii")
    assert out.returncode == 1 and "Traceback" not in out.stderr.decode("ascii"), out.stderr
    assert len(re.findall(r"^caf\\xe9\.py:2:", text, re.M)) == 1, text  # the byte 0xE9, once
    assert len(re.findall(r"^caf\\u00e9\.py:2:", text, re.M)) == 1, text  # U+00E9, which ASCII lacks


def test_a_name_escaped_for_the_streams_encoding_keeps_its_table_cell(tmp_path):
    # on an ASCII stream rich measured `café.py` as 7 cells, then the stream wrote it as
    # `caf\u00e9.py` (12): that row of "Readiness by file" ran 5 columns past its border
    # (twenty-fourth read)
    (tmp_path / "caf\u00e9.py").write_bytes(CUDA)
    (tmp_path / "plain.py").write_bytes(CUDA)
    out = porter("rewrite", ".", "--target", "xla", "--diff", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    err = out.stderr.decode("ascii")
    assert out.returncode == 1 and "caf\\u00e9.py" in err, err
    rows = [line for line in err.splitlines() if line.startswith(("|", "+"))]
    assert rows and {len(row) for row in rows if "caf" in row} <= {len(row) for row in rows if "plain" in row}, err


@pytest.mark.parametrize("command", ["kernels", "backends"])
def test_a_name_escaped_for_the_streams_encoding_keeps_its_kernels_or_backends_cell(tmp_path, command):
    # `kernels` and `backends` lay out their cells as rich Text (`cli.common.cell`), which the
    # console did not escape before measuring: on an ASCII stream the `k_é` kernel's row, and
    # `café.py`'s, ran past the border (twenty-fifth read)
    source = b"import triton\nimport torch\n\n\n@triton.jit\ndef k_\xc3\xa9(p):\n    pass\n"
    source += b"class Base:\n    pass\nclass CudaImpl(Base):\n    device = 'cuda'\n"
    source += b"class XlaImpl(Base):\n    device = 'xla'\n"
    (tmp_path / "caf\u00e9.py").write_bytes(source)
    (tmp_path / "plain.py").write_bytes(source.replace(b"k_\xc3\xa9", b"k_e").replace(b"Impl", b"Plain"))
    out = porter(command, ".", "--target", "xla", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    text = out.stdout.decode("ascii")
    rows = [line for line in text.splitlines() if line.startswith(("|", "+"))]
    assert out.returncode in (0, 1) and "caf\\u00e9.py" in text, text
    assert len({len(row) for row in rows}) == 1, text


@pytest.mark.parametrize(
    "args",
    [
        ("lint", ".", "-t", "xla", "--output-file", "ro/out.json"),
        ("lint", ".", "-t", "xla", "--write-baseline", "ro/b.json"),
        ("lint", ".", "-t", "xla", "--report", "ro/r.md"),
        ("rewrite", ".", "-t", "xla", "--diff", "--report", "ro/r.md"),
    ],
)
def test_an_output_in_a_read_only_folder_is_one_line_naming_it(tmp_path, args):
    # run without root's right past file modes (the twenty-fifth term read's leftover): `--report`
    # said `[Errno 13] Permission denied: '/…/ro/.r.md.c6ul2u_4.tmp'`, a file never made, where
    # `-o` and `--write-baseline` say `Permission denied` (twenty-fifth read)
    from tests.safety.test_trace_files import _without_dac_override

    prefix = _without_dac_override()
    if not prefix:
        pytest.skip("needs root and setpriv to run without CAP_DAC_OVERRIDE")
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "ro").mkdir(mode=0o555)
    (tmp_path / "ro").chmod(0o555)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    out = subprocess.run(
        [*prefix, sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, capture_output=True, timeout=300
    )
    err = out.stderr.decode()
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert out.returncode == 2 and "Traceback" not in err, (out.returncode, err)
    assert errors == [f"error: cannot write {args[-2]} {args[-1]}: Permission denied"], err
    assert os.listdir(tmp_path / "ro") == []


def test_stdout_on_a_full_disk_is_one_line_not_a_traceback(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    for args in (["rules"], ["lint", ".", "--target", "xla", "--no-cache"]):
        with open("/dev/full", "w") as full:
            out = subprocess.run(
                [sys.executable, "-m", "porter", *args],
                cwd=tmp_path,
                env=env,
                stdout=full,
                stderr=subprocess.PIPE,
                timeout=180,
            )
        err = out.stderr.decode()
        assert out.returncode == 2 and "Traceback" not in err, err
        assert err.strip().splitlines() == ["porter: cannot write the output: No space left on device"], err


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_stream_open_for_reading_only_is_one_line_and_exit_2(tmp_path, stream):
    # `porter kernels . 1</etc/hostname`: each write is EBADF; lint, kernels, explain and the
    # rest printed a traceback and left with 1 (lint's "findings found"), a usage error with a
    # read-only stderr with 1 too, where `> /dev/full` is one line and 2 (twenty-eighth read)
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    (tmp_path / "ro.txt").write_text("x\n")
    runs = (
        ["kernels", "."],
        ["lint", ".", "--target", "xla", "--no-cache", "--output-format", "json"],
        ["lint", "--bogus"],
    )
    for args in runs if stream == "stdout" else runs[2:]:
        with open(tmp_path / "ro.txt") as read_only:
            streams = {stream: read_only, "stdout" if stream == "stderr" else "stderr": subprocess.PIPE}
            out = subprocess.run([sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, timeout=180, **streams)
        said = (out.stderr or b"").decode()
        assert out.returncode == 2 and "Traceback" not in said, (args, out.returncode, said)
        if stream == "stdout" and args != runs[2]:  # a usage error is said on stderr, whole
            assert said.strip().splitlines() == ["porter: cannot write the output: Bad file descriptor"], said


@pytest.mark.parametrize(
    "args,code",
    [
        (("rules",), 0),
        (("--help",), 0),
        (("explain", "DEV001"), 0),
        (("lint", ".", "--target", "xla", "--no-cache"), 0),
        (("lint", ".", "--target", "xla", "--no-cache", "--output-format", "json"), 0),
        (("lint", "--bogus"), 2),
    ],
)
def test_a_reader_that_left_ends_the_run_with_ruffs_code_and_no_word(tmp_path, args, code):
    # `porter rules | head -c 1`: typer's handler left with 1, lint's "findings found", for every
    # command; ruff 0.17.6 leaves with 0 and says nothing (a usage error keeps its 2). The reader
    # takes one byte once the pipe is full, then leaves: lint's one write of its 64 kB+ document
    # came back short and the rest was dropped with no error (twenty-eighth read)
    (tmp_path / "m.py").write_bytes(CUDA + b"y = torch.zeros(2).cuda()\n" * 1500)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    read, write = os.pipe()
    where = {"stdout": subprocess.DEVNULL, "stderr": write} if code else {"stdout": write, "stderr": subprocess.PIPE}
    run = subprocess.Popen([sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, **where)
    os.close(write)
    assert os.read(read, 1)
    os.close(read)
    said = run.stderr.read().decode() if run.stderr else ""
    assert (run.wait(timeout=180), said) == (code, ""), args


def test_a_closed_stdout_is_not_a_traceback(tmp_path):
    (tmp_path / "m.py").write_bytes(CUDA)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    # `porter lint . >&-`: Python's sys.stdout is None (lint wrote to it: an AttributeError)
    out = subprocess.run(
        [sys.executable, "-m", "porter", "lint", ".", "--target", "xla", "--no-cache"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=180,
        preexec_fn=lambda: os.close(1),
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr.decode(), out.stderr.decode()


@pytest.mark.parametrize(
    "before,lead",
    [("\u4e2d\u6587\U0001f600", 6), ("e\u0301\u0301\u200b", 2), ("\uac00\u1160", 8), ("\t", 1)],
)
def test_the_carets_stand_under_the_finding_whatever_the_line_holds_before_it(tmp_path, before, lead):
    # counted in code points, the carets stood 6 columns left of `.cuda()` after three CJK
    # characters, and 3 right of it after combining marks and a zero-width space (which is shown
    # as one column, `\ufffd`, since the seventeenth read: an invisible character is not hidden);
    # a Hangul filler after a whole syllable adds nothing visible and is shown as its escape
    # (`\u1160`, six columns beside the syllable's two) since the twenty-third read
    (tmp_path / "m.py").write_text(f's = "{before}"; x = torch.randn(3).cuda()\n', encoding="utf-8")
    out = porter("lint", "m.py", "--target", "xla", "--no-cache", cwd=tmp_path)
    lines = out.stdout.decode().splitlines()
    carets = next(line for line in lines if "^" in line)
    assert carets.index("^") == len("  | ") + len('s = "') + lead + len('"; x = '), lines


def _on_a_terminal(
    args: list[str], cwd, timeout: float = 120, columns: int = 120, extra: dict[str, str] | None = None
) -> tuple[int, str]:
    """`porter ARGS` with stdout and stderr on a pseudo-terminal (as a person runs it), `extra`
    added to its environment: its exit status and all it printed."""
    import pty
    import select
    import time

    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env.setdefault("XDG_CACHE_HOME", str(cwd / ".user-cache"))
    env.update(extra or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave
    )
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end is closed: the run is over
                chunk = b""
            if not chunk and proc.poll() is not None:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    else:
        proc.kill()
    os.close(master)
    return proc.wait(), out.decode("utf-8", "replace")


def test_a_run_on_a_terminal_draws_its_progress_bar_and_finishes(tmp_path):
    # the consoles are made on first use behind a stand-in, and rich's progress bar enters its
    # console (`with console:`), which Python looks up on the stand-in's type: every rewrite or
    # lint on a terminal that lasted past the bar's half second ended in "'_Console' object does
    # not support the context manager protocol", the cursor left hidden, nothing written, exit 1
    src = tmp_path / "src"
    src.mkdir()
    for i in range(40):
        (src / f"m{i}.py").write_bytes(CUDA)
    status, shown = _on_a_terminal(["rewrite", "src", "--target", "xla", "--out-dir", "out", "--no-cache"], tmp_path)
    assert status == 0 and "context manager" not in shown and "Traceback" not in shown, shown
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(f"m{i}.py" for i in range(40)), shown
    assert "\x1b[?25l" not in shown or shown.rfind("\x1b[?25h") > shown.rfind("\x1b[?25l"), shown  # cursor shown again


def test_an_empty_force_color_leaves_a_terminal_a_terminal(tmp_path):
    # force-color.org: a `FORCE_COLOR` "present and not an empty string" forces colour; rich read
    # an empty one (`FORCE_COLOR: ${{ vars.COLOR }}` unset) as "not a terminal", and on a terminal
    # `explain` printed its Markdown source and `rewrite` drew no bar (twenty-sixth read)
    status, unset = _on_a_terminal(["explain", "DEV001"], tmp_path)
    status_empty, empty = _on_a_terminal(["explain", "DEV001"], tmp_path, extra={"FORCE_COLOR": ""})
    assert status == status_empty == 0, empty
    assert "| target |" not in empty and "\x1b[" in empty, empty  # rendered, as with it unset
    assert re.sub("\x1b\\[[0-9;]*m", "", empty) == re.sub("\x1b\\[[0-9;]*m", "", unset)


@pytest.mark.parametrize("args", [("explain", "DEV001"), ("--help",), ("lint", "--no-such")])
def test_a_terminal_size_no_terminal_can_have_is_ignored(tmp_path, args):
    # a terminal's size is an unsigned short (`struct winsize`): `COLUMNS=99999999` on a
    # terminal made `explain` and a usage error run past a minute without a line, and `--help`
    # write 500 MB of padding (the output's size is the check; the timeout only ends a hung test)
    status, shown = _on_a_terminal(list(args), tmp_path, timeout=120, columns=99_999_999)
    assert status in (0, 2), (status, len(shown))
    assert 0 < len(shown) < 100_000 and "Traceback" not in shown, shown[:2000]


def test_help_and_usage_errors_off_a_terminal_take_their_natural_width(tmp_path):
    # typer drew its panels as wide as COLUMNS: `--help > h.txt` under COLUMNS=1000 wrote lines of
    # 1,000 columns of padding (issue 24 item 12: plain text at natural width off a terminal)
    for args in (["--help"], ["lint", "--help"], ["lint", "--no-such"]):
        runs = [porter(*args, cwd=tmp_path, env={"COLUMNS": str(columns)}) for columns in (1000, 3000)]
        texts = [(out.stdout + out.stderr).decode("utf-8") for out in runs]
        assert texts[0] == texts[1], args  # no wider for a wider COLUMNS: its own width
        assert max(len(line) for line in texts[0].splitlines()) < 1000, (args, texts[0][:3000])
        assert "Usage:" in texts[0], texts[0]


@pytest.mark.parametrize("columns", [80, 40])
@pytest.mark.parametrize("args", [("lint", "--help"), ("parity-check", "--help"), ("config", "--help")])
def test_help_on_a_terminal_cuts_no_word(tmp_path, args, columns):
    # typer's help tables cut a word wider than its column with `…`: at 80 columns
    # parity-check's `optimizer_facto…`, `--no-noise-flo…`; at 40 the options' own names
    # (`--tar…`, `--out…`). A word is folded over lines, as in porter's own tables
    status, shown = _on_a_terminal(list(args), tmp_path, columns=columns)
    assert status == 0 and "Usage:" in shown, shown
    assert "…" not in shown, shown


@pytest.mark.parametrize("args", [("lint",), ("parity-check",), ("trace", "record")])
def test_help_draws_each_option_s_name_whole(tmp_path, args):
    # at rich's 80 columns off a terminal (a CI log, `| grep`) and on a terminal of 80, typer's
    # options table folded `--report-unused-ignores` over two lines (`--report-unused-i`,
    # `gnores`), `--reference-trace` and `--no-noise-floor` too: grep found no such option
    # (twenty-fifth read)
    import typer.main

    from porter.cli import build

    command = typer.main.get_command(build())
    for name in args:
        command = command.commands[name]  # type: ignore[attr-defined]
    names = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
    off = porter(*args, "--help", cwd=tmp_path, columns=False).stdout.decode("utf-8")
    status, on = _on_a_terminal([*args, "--help"], tmp_path, columns=80)
    for shown in (off, _ESCAPE.sub("", on)):
        assert "Usage:" in shown and names <= set(shown.split()), sorted(names - set(shown.split()))


@pytest.mark.parametrize("args", [("lint",), ("parity-check",), ("trace", "record")])
def test_help_with_its_names_whole_fits_80_columns(tmp_path, args):
    # kept whole by widening the panel, lint's options panel was 92 columns at 80, and an
    # 80-column terminal wrapped every line of it; now the help column takes the squeeze
    # (twenty-fifth read)
    off = porter(*args, "--help", cwd=tmp_path, columns=False).stdout.decode("utf-8")
    status, on = _on_a_terminal([*args, "--help"], tmp_path, columns=80)
    for shown in (off, _ESCAPE.sub("", on)):
        widest = max(shown.replace("\r", "").splitlines(), key=len)
        assert "Usage:" in shown and len(widest) <= 80, (len(widest), widest)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_help_on_a_stream_without_box_characters_keeps_its_width(tmp_path, encoding):
    # rich draws ASCII boxes there (`+`, `-`, `|`), and porter counted their dashes as text that
    # a wider panel showed more of: `lint --help` was 10,005 columns wide; `fp16 → bf16`, escaped
    # after the layout, ran 5 columns past the panel (twenty-fifth read)
    out = porter("lint", "--help", cwd=tmp_path, columns=False, env={"PYTHONIOENCODING": encoding})
    shown = out.stdout.decode(encoding)
    widest = max(shown.splitlines(), key=len)
    assert out.returncode == 0 and "--report-unused-ignores" in shown.split(), shown
    assert len(widest) <= 80 and "fp16 \\u2192" in shown, (len(widest), widest[:120])
    utf8 = porter("lint", "--help", cwd=tmp_path, columns=False, env={"PYTHONIOENCODING": "utf-8"}).stdout
    assert len(shown.splitlines()) <= len(utf8.splitlines()) + 2, shown  # the same layout, not 1-wide help


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _letters(shown: str) -> collections.Counter:
    return collections.Counter(c for c in _ESCAPE.sub("", shown) if c.isalnum())


@pytest.mark.parametrize("columns", [2, 12, 20])
@pytest.mark.parametrize("args", [("lint", "--help"), ("parity-check", "--help"), ("explain", "BACK008")])
def test_a_narrow_terminal_loses_no_text(tmp_path, args, columns):
    # a panel or a table narrower than its frames left its cells empty: at 20 columns `lint
    # --help` lost 124 letters (the text of 15 options), at 12 all but the usage line, at 2
    # everything (an empty box); `explain` below 8 columns lost its code blocks' text. Drawn no
    # narrower than shows all of it, the terminal wraps the lines (twenty-first read)
    status, shown = _on_a_terminal(list(args), tmp_path, columns=columns)
    status_wide, wide = _on_a_terminal(list(args), tmp_path, columns=300)
    assert status == status_wide == 0, shown
    lost = _letters(wide) - _letters(shown)
    assert not lost, (sum(lost.values()), shown)


@pytest.mark.parametrize("columns", [3, 20])
@pytest.mark.parametrize("args", [("lint", "--help"), ("trace", "ops", "--help"), ("lint", "--no-such")])
def test_a_small_columns_off_a_terminal_loses_no_text(tmp_path, args, columns):
    # off a terminal each panel was drawn at its natural width, at most COLUMNS: under
    # `COLUMNS=20 porter lint --help > h.txt` the options' panel was an empty box (1,899 of
    # 1,993 letters lost), at 3 everything, and a usage error lost its message (twenty-second read)
    out = porter(*args, cwd=tmp_path, env={"COLUMNS": str(columns)})
    natural = porter(*args, cwd=tmp_path, columns=False)
    assert out.returncode == natural.returncode, out.stderr
    lost = _letters((natural.stdout + natural.stderr).decode()) - _letters((out.stdout + out.stderr).decode())
    assert not lost, (sum(lost.values()), (out.stdout + out.stderr).decode())


@pytest.mark.parametrize("args", [("targets",), ("config",), ("kernels", ".")])
def test_a_table_under_a_small_columns_off_a_terminal_loses_no_text(tmp_path, args):
    # a table that cannot fit is drawn at its natural width on a terminal; off one, under
    # `COLUMNS=9`, rich still squeezed it: `porter targets > t.txt` lost all 191 letters, `kernels`
    # 1,029 of 1,038 (twenty-second read)
    (tmp_path / "k.py").write_text("import triton\n\n\n@triton.jit\ndef add_kernel(x):\n    pass\n")
    out = porter(*args, cwd=tmp_path, env={"COLUMNS": "9"})
    natural = porter(*args, cwd=tmp_path, columns=False)
    assert out.returncode == natural.returncode, out.stderr
    lost = _letters(natural.stdout.decode()) - _letters(out.stdout.decode())
    assert not lost, (sum(lost.values()), out.stdout.decode())
    assert args[0] != "kernels" or "add_kernel" in natural.stdout.decode(), natural.stdout.decode()


def test_clicolor_force_asks_for_colour_as_ruff_reads_it(tmp_path):
    # ruff 0.17.6 reads `CLICOLOR_FORCE` (bixense.com/clicolors): any non-empty value forces
    # colour, an empty one does not, `NO_COLOR` wins; porter read none of it (twenty-sixth read's
    # leftover). Colour alone, as `FORCE_COLOR`: a patch on stdout stays its bytes
    (tmp_path / "m.py").write_bytes(CUDA)

    def error(**env: str) -> bytes:
        out = porter("lint", "gone.py", "-t", "xla", cwd=tmp_path, env={"NO_COLOR": "", **env})
        assert out.returncode == 2, out.stderr
        return out.stderr

    assert b"\x1b[1;31merror:" in error(CLICOLOR_FORCE="1")
    assert b"\x1b[1;31merror:" in error(CLICOLOR_FORCE="0")
    assert b"\x1b[" not in error(CLICOLOR_FORCE="")
    assert b"\x1b[1merror:" in error(CLICOLOR_FORCE="1", NO_COLOR="1")  # no colour (bold kept, as NO_COLOR's)
    patch = porter("rewrite", "m.py", "-t", "xla", "--diff", cwd=tmp_path, env={"NO_COLOR": "", "CLICOLOR_FORCE": "1"})
    assert patch.stdout.startswith(b"--- a/m.py") and b"\x1b" not in patch.stdout, patch.stdout


def test_clicolor_force_colours_the_help_as_force_color_does(tmp_path):
    # typer reads `FORCE_COLOR` for its console (`--help`, its usage errors), not `CLICOLOR_FORCE`:
    # the help stayed plain where porter's own output had colour
    forced = porter("lint", "--help", cwd=tmp_path, env={"NO_COLOR": "", "CLICOLOR_FORCE": "1"})
    asked = porter("lint", "--help", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    assert b"\x1b[1;36m" in forced.stdout and forced.stdout == asked.stdout, forced.stdout[:400]
    plain = porter("lint", "--help", cwd=tmp_path, env={"NO_COLOR": "1", "CLICOLOR_FORCE": "1"})
    assert not re.search(rb"\x1b\[[0-9;]*3[0-7]m", plain.stdout), plain.stdout[:400]  # NO_COLOR wins
