"""The thirty-second read, ctleft: the cache and terminal leftovers of the thirty-first read
(its `49-*-attempts.md` "Left" sections), each read against the tool that reads the file."""

from __future__ import annotations

import pytest


def _run(tmp_path, name, text):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / name).write_text(text)
    [result] = run([tmp_path], Settings(target="xla"), jobs=1, cache=False)[0]
    return result


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("torch; cupy-cuda12x", "DEP005"),  # (cupy-cuda12x a package, not torch's marker)
        ("torch==2.3.0+cu121; numpy", "DEP001"),  # (torch's own label: the item ends at `;`)
    ],
)
def test_a_one_line_setup_cfg_list_is_split_at_semicolons_as_setuptools_reads_it(tmp_path, value, code):
    """setuptools 65.5's build (`Distribution.parse_config_files`, `_parse_list_semicolon`) reads
    a one-line `install_requires = torch; cupy-cuda12x` as two requirements (deprecated, with a
    warning): `['torch==2.3.0+cu121', 'cupy-cuda12x']`. porter read one requirement under a marker
    and said nothing (no DEP005 on cupy-cuda12x, no DEP001 on torch's `+cu121`)."""
    result = _run(tmp_path, "setup.cfg", f"[metadata]\nname = p\n[options]\ninstall_requires = {value}\n")
    assert code in {f.code for f in result.findings}


def test_a_setup_cfg_value_continued_on_the_next_line_is_not_split(tmp_path):
    """With a line break the build reads a line each: `torch; cupy-cuda12x` on its own line is torch
    under a (bad) marker, no cupy (the split applies to a one-line value only)."""
    text = "[metadata]\nname = p\n[options]\ninstall_requires = numpy\n    torch; cupy-cuda12x\n"
    result = _run(tmp_path, "setup.cfg", text)
    assert "DEP005" not in {f.code for f in result.findings}


def test_an_editable_url_written_across_a_continuation_is_placed_on_its_own_line(tmp_path):
    """pip 23.2.1 joins `-e https://download.pytorch.org/whl/\\` and `cu121/torch#egg=torch` into one
    editable requirement "(line 2)". porter looked for the joined value whole in the text and found a
    comment's copy on line 4: its DEP006 pointed at the comment."""
    url = "https://download.pytorch.org/whl/cu121/torch#egg=torch"
    text = f"numpy\n-e https://download.pytorch.org/whl/\\\ncu121/torch#egg=torch\n# {url}\n"
    result = _run(tmp_path, "requirements.txt", text)
    [found] = [f for f in result.findings if f.code == "DEP006"]
    assert (found.start.line, found.start.column) == (2, 3)


def _fix_with_one_file_read_only(tmp_path, *args):
    from tests.safety.conftest import CUDA, porter

    for name in ("m.py", "n.py"):
        (tmp_path / name).write_bytes(CUDA)
    (tmp_path / "m.py").chmod(0o444)
    done = porter("lint", "--fix", ".", "-t", "xla", "--allow-no-vcs", "--no-cache", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (tmp_path / "m.py").read_bytes() == CUDA
    return done


def test_lint_fix_report_says_a_fix_it_could_not_write_is_not_written(tmp_path):
    """`lint --fix --report r.md` with m.py read-only: the report counted m.py "changed", showed its
    fix's diff and "Readiness: 100%" over a file still CUDA code on disk, nothing said (the terminal
    and the exit of 2 did). Now m.py is failed there, "not written", with why and no diff, as `rewrite`'s
    report says it; the JSON report lists it in `summary.not_written` (and in `not_checked`, as before)."""
    import json

    _fix_with_one_file_read_only(tmp_path, "--report", "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "1 file not written" in text and "failed `m.py`: no write permission" in text, text
    assert "--- a/m.py" not in text and "--- a/n.py" in text
    (tmp_path / "n.py").chmod(0o644)
    (tmp_path / "n.py").write_text((tmp_path / "m.py").read_text())
    _fix_with_one_file_read_only(tmp_path, "--report", "r.json")
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["not_written"] == ["m.py"] and summary["not_checked"] == ["m.py"]
    assert summary["files"]["changed"] == 1 and summary["files"]["errors"] == 1


def test_junit_counts_a_fix_it_could_not_write_as_an_error(tmp_path):
    """JUnit beside an exit of 2 over a fix not written had `errors="0"`: a CI's test tab read a run
    whose findings failed, nothing that did not run as asked (SARIF said it: thirty-first read). Now a
    test case "fix not written" in error names the file and why."""
    from xml.etree import ElementTree as ET

    done = _fix_with_one_file_read_only(tmp_path, "--output-format", "junit")
    root = ET.fromstring(done.stdout)
    assert root.get("errors") == "1"
    [case] = [c for c in root.iter("testcase") if c.find("error") is not None]
    assert case.get("name") == "fix not written" and case.get("file") == "m.py"
    assert "no write permission" in case.find("error").get("message")


def test_a_recording_leaves_no_temporary_folder_of_torch_in_tmpdir(tmp_path):
    """torch 2.9 makes a `tempfile.TemporaryDirectory()` when `torch.distributed.nn` is imported
    (instantiator.py's `_TEMP_DIR`); the recorded process ends by `os._exit`, which skips its removal:
    each side of each `trace record` or `parity-check` left a `tmpXXXXXXXX` folder in TMPDIR for good.
    Now the run's TMPDIR is a folder of its own, removed when the run ends."""
    import sys

    from tests.deps import require
    from tests.safety.conftest import porter

    require("torch")
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    (tmp_path / "train.py").write_text("import torch\nimport torch.distributed.nn\nprint(torch.ones(2).sum())\n")
    done = porter(
        "trace", "record", "-o", "t.safetensors", "--steps", "1", "--no-noise-floor", "--",
        sys.executable, "train.py", cwd=tmp_path, env={"TMPDIR": str(tmp)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert (tmp_path / "t.safetensors").is_file()
    assert sorted(p.name for p in tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("[options]\nx = cupy-cuda12x\ninstall_requires =\n    torch\n    %(x)s\n", "DEP005"),
        ("[DEFAULT]\nv = 2.3.0+cu121\n[options]\ninstall_requires = torch==%(v)s\n", "DEP001"),
        ("[DEFAULT]\nv = 2.3.0+cu121\n[options]\ninstall_requires = torch==%(v)s\n", "DEP004"),
    ],
)
def test_a_setup_cfg_value_the_build_interpolates_is_read_expanded(tmp_path, text, code):
    """setuptools 65.5's build reads setup.cfg through `ConfigParser()`, whose interpolation expands
    `%(x)s` (from the section or `[DEFAULT]`): `requires.txt` holds `cupy-cuda12x`, `torch==2.3.0+cu121`.
    porter read the text as written, `%(x)s`, no requirement, and said nothing. Now reported on the
    written text, not edited (the build's expansion is no text to cut)."""
    result = _run(tmp_path, "setup.cfg", "[metadata]\nname = p\n" + text)
    [found] = [f for f in result.findings if f.code == code]
    assert found.replacement is None and result.new_source is None


@pytest.mark.parametrize(
    "line",
    [
        "description = 100% pure",  # (InterpolationSyntaxError)
        "[flake8]\nformat = %(path)s:%(row)d: %(code)s",  # (InterpolationMissingOptionError: no `path`)
    ],
)
def test_a_setup_cfg_the_build_cannot_interpolate_is_not_read_as_declaring_packages(tmp_path, line):
    """setuptools' build (65.5, and 84.2.1 alike) reads every value of every section through
    `ConfigParser()`'s interpolation: a `%` it cannot expand anywhere stops it, and the file declares
    nothing. porter, reading without interpolation, gave a DEP005 on a cupy-cuda12x the build never
    reads. Now the file is one setuptools does not read, with where and why."""
    text = f"[metadata]\nname = p\n[options]\ninstall_requires = cupy-cuda12x\n{line}\n"
    result = _run(tmp_path, "setup.cfg", text)
    assert not result.findings
    assert result.status.value == "error" and "a `%` its build cannot expand" in (result.reason or ""), result.reason


@pytest.mark.parametrize(("first", "status"), [("x", "error"), ("", "unchanged")])
def test_a_chain_of_interpolations_is_expanded_once_per_name(tmp_path, monkeypatch, first, status):
    """Ten names of ten references each: of `x` 10**9 characters, bounded and refused; of an empty value nothing, the
    file read (cupy-cuda12x). Each name is expanded once a depth in a reading: `_expand`'s calls are counted (anew at each use,
    10**9 of them where the value is empty: a hang, not a failure; past the bound the count answers "cannot expand")."""
    from porter.files.deps import setup_cfg
    from porter.files.errors import Unreadable

    refs = "".join(f"a{i} = " + f"%(a{i - 1})s" * 10 + "\n" for i in range(1, 10))
    text = f"[metadata]\nname = p\n[options]\na0 = {first}\n{refs}install_requires =\n    cupy-cuda12x\n    %(a9)s\n"
    calls, expand = [0], setup_cfg._expand

    def counted(*args):
        calls[0] += 1
        return None if calls[0] > 1000 else expand(*args)

    with monkeypatch.context() as patch:
        patch.setattr(setup_cfg, "_expand", counted)
        try:
            setup_cfg._interpolated(setup_cfg._read_as_setuptools(text), "options", "%(a9)s")
        except Unreadable:
            pass
    # (10 values with a `%`, each name expanded once at each depth it is met, in the check and again in the item's
    # reading: 2 * 10 * 10 at most; anew at each use, the 1,000 the counter stops at)
    assert calls[0] <= 2 * 10 * setup_cfg._DEPTH, f"{calls[0]} expansions: a name expanded anew at each use"
    result = _run(tmp_path, "setup.cfg", text)
    assert result.status.value == status, result.reason
    assert [f.code for f in result.findings] == ([] if status == "error" else ["DEP005"])
