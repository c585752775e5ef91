"""A line porter lengthens past the project's formatter limit is split as black (and ruff's
formatter) would: megatron-core's `.cuda()` -> `.to(torch.accelerator.current_accelerator())`
made a 125-character line in a project whose `[tool.black] line_length` is 100."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from porter.codemods.fit import fit
from porter.config.line_length import forget, line_length
from tests.helpers import port_files, write_files

OLD = """class Schedule:
    def get_global_seqlens(self, subsample_seqlens):
        local_len = torch.tensor([subsample_seqlens.shape[0]], dtype=torch.int32).cuda()
        return local_len
"""
NEW = OLD.replace(".cuda()", ".to(torch.accelerator.current_accelerator())")


def _ruff() -> str | None:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else shutil.which("ruff")


def test_a_lengthened_line_is_split_as_the_formatter_splits_it(tmp_path):
    fitted = fit(OLD.encode(), NEW.encode(), 100).decode()
    assert fitted == NEW.replace(
        ".to(torch.accelerator.current_accelerator())",
        ".to(\n            torch.accelerator.current_accelerator()\n        )",
    )
    assert max(len(line) for line in fitted.splitlines()) <= 100
    ruff = _ruff()
    if ruff is None:
        pytest.skip("no ruff here to compare with")
    path = tmp_path / "x.py"
    path.write_text(NEW)
    subprocess.run([ruff, "format", "--line-length", "100", "--no-cache", str(path)], check=True, capture_output=True)
    assert fitted == path.read_text()


def test_lines_that_fit_stay_and_so_do_lines_porter_did_not_make():
    assert fit(OLD.encode(), NEW.encode(), 130) == NEW.encode()  # fits
    assert fit(OLD.encode(), NEW.encode(), None) == NEW.encode()  # the project sets no limit
    assert fit(NEW.encode(), NEW.encode() + b"x = 1\n", 100) == NEW.encode() + b"x = 1\n"  # the project's own line
    commented = NEW.replace("current_accelerator())", "current_accelerator())  # rank's count")
    assert fit(OLD.encode(), commented.encode(), 100) == commented.encode()  # a comment: left
    too_long = NEW.replace("current_accelerator()", "current_accelerator()" + " or x" * 20)
    assert fit(OLD.encode(), too_long.encode(), 100) == too_long.encode()  # its parts would not fit either


def test_lines_the_formatter_is_turned_off_for_stay_as_written():
    """Between `# fmt: off` and `# fmt: on` (and yapf's `disable`/`enable`, which black honours)
    black and ruff leave lines as written; the fitter split them (adversarial read 12)."""
    for off, on in (("# fmt: off", "# fmt: on"), ("# yapf: disable", "# yapf: enable")):
        old = f"{off}\n{OLD}{on}\n{OLD}"
        new = old.replace(".cuda()", ".to(torch.accelerator.current_accelerator())")
        fitted = fit(old.encode(), new.encode(), 88).decode()
        kept, after = fitted.split(on + "\n")
        assert kept == new.split(on + "\n")[0], fitted  # as porter wrote it
        assert ".to(\n            torch.accelerator.current_accelerator()\n        )" in after, fitted


def test_a_line_is_fitted_whatever_characters_its_strings_hold():
    """The fitter cut the file with str.splitlines, so a lengthened line holding a U+2028 or a
    form feed in a string was seen as two pieces that are no statement, and left too long
    where its twin without one is split; a form feed that opens a line (a page break) stays
    on its first line only (adversarial read 13)."""
    for odd in ("\u2028", "\x0c", "\x85"):
        old = f'import torch\nlocal_len = torch.tensor([n], dtype=torch.int32, names=("a{odd}b",)).cuda()\n'
        new = old.replace(".cuda()", ".to(torch.accelerator.current_accelerator())")
        fitted = fit(old.encode(), new.encode(), 100).decode()
        assert fitted.endswith(f'names=("a{odd}b",)).to(\n    torch.accelerator.current_accelerator()\n)\n'), (
            odd,
            fitted,
        )
    old = "import torch\n\x0clocal_len = torch.tensor([n], dtype=torch.int32).cuda()\n"
    new = old.replace(".cuda()", ".to(torch.accelerator.current_accelerator())")
    fitted = fit(old.encode(), new.encode(), 60).decode()
    assert fitted.endswith(
        "\x0clocal_len = torch.tensor([n], dtype=torch.int32).to(\n    torch.accelerator.current_accelerator()\n)\n"
    ), fitted


def test_the_limit_comes_from_the_projects_formatter_configuration(tmp_path):
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[tool.black]\nline_length = 100\n",
            "pkg/a.py": "x = 1\n",
            "other/pyproject.toml": "[tool.ruff]\nline-length = 119\n",
            "other/b.py": "x = 1\n",
            "plain/pyproject.toml": "[project]\nname = 'plain'\n",
            "plain/c.py": "x = 1\n",
        },
    )
    assert line_length(str(tmp_path / "pkg" / "a.py")) == 100
    assert line_length(str(tmp_path / "other" / "b.py")) == 119
    assert line_length(str(tmp_path / "plain" / "c.py")) is None
    assert line_length("not-a-file.py") is None


def test_a_port_keeps_the_projects_line_length(tmp_path):
    long_line = "        local_len = torch.tensor([seqlens.shape[0]], dtype=torch.int32, pin_memory=False).cuda()\n"
    write_files(tmp_path, {"pyproject.toml": "[tool.black]\nline_length = 100\n"})
    (tmp_path / "sched.py").write_text(
        "import torch\n\n\ndef f(seqlens):\n    if True:\n" + long_line + "    return 1\n"
    )
    code, _ = port_files(tmp_path, "neuron")["sched.py"]
    assert max(len(line) for line in code.splitlines()) <= 100
    assert ".to(\n            " in code


def test_a_file_whose_name_is_not_utf8_keeps_the_projects_line_length(tmp_path):
    """The limit is found from the file's path: the runner looked it up by the displayed name,
    which shows an undecodable byte as `\\xNN` and names no file, so a project in a folder named
    with one got no fitting (adversarial read 12)."""
    import os

    from porter.pipeline.runner import run
    from porter.config.settings import Settings

    folder = os.path.join(os.fsencode(tmp_path), b"bad\xff")
    os.mkdir(folder)
    with open(os.path.join(folder, b"pyproject.toml"), "wb") as fh:
        fh.write(b"[tool.black]\nline_length = 60\n")
    with open(os.path.join(folder, b"m.py"), "wb") as fh:
        fh.write(b"import torch\nlocal_len = torch.tensor([n], dtype=torch.int32).cuda()\n")
    [result] = [r for r in run([tmp_path], Settings(target="neuron"), jobs=1, cache=False)[0] if r.new_source]
    assert b".to(\n    " in result.new_source, result.new_source


def test_a_cached_port_is_not_reused_once_the_line_length_changes(tmp_path, monkeypatch):
    """The line length lives in pyproject.toml, not in the file: the cache key and the stat index
    must cover it, or a warm run hands back the port fitted to the old limit."""
    from porter.pipeline import statindex
    from porter.pipeline.runner import run
    from porter.config.settings import Settings

    monkeypatch.setattr(statindex, "RACY_NS", 0)  # trust the stat index's fresh records
    root, cache = tmp_path / "p", tmp_path / "cache"
    long_line = "        local_len = torch.tensor([seqlens.shape[0]], dtype=torch.int32, pin_memory=False).cuda()\n"
    write_files(root, {"pyproject.toml": "[tool.black]\nline_length = 100\n"})
    (root / "sched.py").write_text("import torch\n\n\ndef f(seqlens):\n    if True:\n" + long_line + "    return 1\n")

    def ported() -> str:
        [result] = [r for r in run([root], Settings(target="neuron"), jobs=1, cache_dir=cache)[0] if r.new_source]
        return result.new_source.decode()

    assert ".to(\n            " in ported()
    (root / "pyproject.toml").write_text("[tool.black]\nline_length = 130\n")
    assert '.to("neuron")\n' in ported()  # 107 characters: within the new limit, on one line


@pytest.mark.parametrize(
    "config",
    [
        "[tool]\nblack = 5\n",  # a key where a table belongs
        'tool = "x"\n',
        "[tool.ruff]\nline-length = true\n",  # a bool is no length (isinstance(True, int))
        "[tool.black]\nline-length = -5\n",
        "[tool.black]\nline-length = 0\n",
        "[tool.black]\nline_length = 'x'\n",
        "x = " + "9" * 5000 + "\n",  # more digits than int() takes: ValueError, not a TOML error
        "a = " + "[" * 5000 + "]" * 5000 + "\n",  # RecursionError in tomllib
    ],
)
def test_a_hostile_formatter_configuration_sets_no_limit_and_never_raises(tmp_path, config):
    """The configuration is the project's, read by porter's parent process for every file it
    writes: a table written as a key (`[tool] black = 5`) ended `rewrite` in an AttributeError
    traceback (the porter config loader takes it: it reads only [tool.porter])."""
    write_files(tmp_path, {"sub/pyproject.toml": config, "sub/a.py": "x = 1\n"})
    (tmp_path / ".git").mkdir()
    assert line_length(str(tmp_path / "sub" / "a.py")) is None


def test_a_huge_pyproject_is_not_read_whole(tmp_path):
    """A sparse 1 GiB pyproject.toml in a sub-folder: `rewrite` read it whole (2.1 GB resident,
    14 s; a larger one runs the host out of memory) where `lint` said "larger than 64 MiB: not
    read". Read as porter reads a config (16 MiB at most), it sets no limit."""
    (tmp_path / ".git").mkdir()
    big = tmp_path / "big"
    big.mkdir()
    padding = ("#" * 1023 + "\n") * (17 * 1024)  # 17 MiB of comments
    (big / "pyproject.toml").write_text(padding + "[tool.black]\nline-length = 100\n")
    (big / "a.py").write_text("x = 1\n")
    assert line_length(str(big / "a.py")) is None


def test_a_run_that_indexes_beside_the_files_keeps_the_projects_line_length(tmp_path):
    """A cold run over 64 files or more on two workers hands the files on while the project
    index is worked out (runner._overlapped): it set each file's cross-file facts but not the
    project's line length, so megatron-core's `--jobs 2` diff left lines `--jobs 1` split
    (bench_rewrite_real.py found it)."""
    from porter.pipeline.runner import OVERLAP_MIN_FILES, run
    from porter.config.settings import Settings

    long_line = "        local_len = torch.tensor([seqlens.shape[0]], dtype=torch.int32, pin_memory=False).cuda()\n"
    write_files(tmp_path, {"pyproject.toml": "[tool.black]\nline_length = 100\n"})
    (tmp_path / "sched.py").write_text(
        "import torch\n\n\ndef f(seqlens):\n    if True:\n" + long_line + "    return 1\n"
    )
    for i in range(OVERLAP_MIN_FILES):
        (tmp_path / f"m{i}.py").write_text(f"import torch\n\nx{i} = torch.ones(2)\n")
    for jobs in (1, 2):
        [result] = [r for r in run([tmp_path], Settings(target="neuron"), jobs=jobs, cache=False)[0] if r.new_source]
        assert b".to(\n            " in result.new_source, (jobs, result.new_source)


def test_ruffs_extend_is_followed_for_the_line_length(tmp_path):
    """ruff reads `line-length` through `extend` (from the file's folder, `~` and variables
    expanded, a pyproject.toml's `[tool.ruff]`); porter read the file's own keys only, so a
    project whose ruff.toml extends a shared one got no fitting (twenty-eighth cache read; ruff
    0.17.6 agrees on each of these)."""
    write_files(
        tmp_path,
        {
            ".git/HEAD": "",
            "base.toml": "line-length = 22\n",
            "a/pyproject.toml": '[tool.ruff]\nextend = "../base.toml"\n',
            "a/m.py": "x = 1\n",
            "b/ruff.toml": 'extend = "x/y.toml"\n',
            "b/x/y.toml": 'extend = "../../a/pyproject.toml"\n',
            "b/m.py": "x = 1\n",
            "c/ruff.toml": 'extend = "../base.toml"\nline-length = 23\n',  # its own wins
            "c/m.py": "x = 1\n",
            "d/ruff.toml": 'extend = "e.toml"\n',
            "d/e.toml": 'extend = "ruff.toml"\n',  # a cycle: ruff refuses it
            "d/m.py": "x = 1\n",
        },
    )
    assert [line_length(str(tmp_path / f / "m.py")) for f in "abcd"] == [22, 22, 23, None]


def test_a_long_ruff_extend_chain_is_followed_and_a_cycle_spelled_otherwise_is_one(tmp_path):
    """ruff 0.17.6 follows a chain of 40 `extend`s (`--show-settings`: 48); porter stopped at 32
    files, took the chain for a cycle and fitted nothing. A cycle through another spelling of a
    file's path (`../p/b.toml`) is still none (twenty-eighth cache2 read)."""
    top = tmp_path / "p"
    top.mkdir()
    (top / "ruff.toml").write_text('extend = "c1.toml"\n')
    for i in range(1, 40):
        (top / f"c{i}.toml").write_text(f'extend = "c{i + 1}.toml"\n')
    (top / "c40.toml").write_text("line-length = 48\n")
    (top / "m.py").write_text("x = 1\n")
    cyc = tmp_path / "q"
    cyc.mkdir()
    (cyc / "ruff.toml").write_text('extend = "../q/b.toml"\n')
    (cyc / "b.toml").write_text('extend = "ruff.toml"\n')
    (cyc / "m.py").write_text("x = 1\n")
    forget()
    assert (line_length(str(top / "m.py")), line_length(str(cyc / "m.py"))) == (48, None)


def test_a_cached_port_is_redone_once_the_file_ruff_extends_changes(tmp_path, monkeypatch):
    """The file `extend` names is read each run, as the project's own configuration is: a warm
    run after editing it fits the port to the new limit."""
    from porter.pipeline import statindex
    from porter.pipeline.runner import run
    from porter.config.settings import Settings

    monkeypatch.setattr(statindex, "RACY_NS", 0)  # trust the stat index's fresh records
    root, cache = tmp_path / "p", tmp_path / "cache"
    long_line = "        local_len = torch.tensor([seqlens.shape[0]], dtype=torch.int32, pin_memory=False).cuda()\n"
    write_files(root, {"pyproject.toml": '[tool.ruff]\nextend = "../shared.toml"\n'})
    (tmp_path / "shared.toml").write_text("line-length = 100\n")
    (root / "sched.py").write_text("import torch\n\n\ndef f(seqlens):\n    if True:\n" + long_line + "    return 1\n")

    def ported() -> str:
        [result] = [r for r in run([root], Settings(target="neuron"), jobs=1, cache_dir=cache)[0] if r.new_source]
        return result.new_source.decode()

    assert ".to(\n            " in ported()
    (tmp_path / "shared.toml").write_text("line-length = 130\n")
    assert '.to("neuron")\n' in ported()


def test_a_dot_ruff_toml_wins_over_a_ruff_toml_beside_it(tmp_path):
    """ruff reads `.ruff.toml` first, then `ruff.toml`, then `pyproject.toml` (ruff 0.17.6's
    `--show-settings` names `.ruff.toml`); porter read `ruff.toml` first (twenty-eighth cache read)."""
    write_files(tmp_path, {".ruff.toml": "line-length = 27\n", "ruff.toml": "line-length = 28\n", "m.py": "x = 1\n"})
    assert line_length(str(tmp_path / "m.py")) == 27
