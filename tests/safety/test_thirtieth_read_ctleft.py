"""The twenty-ninth read's cache and terminal leftovers, taken up by the thirtieth (ctleft): a file
named through a link and its line length, a cache folder flagged append-only or immutable."""

from __future__ import annotations

import subprocess

import pytest

from tests.deps import require
from tests.safety.conftest import porter_with_output_gone


def _flag(flag: str, *paths) -> None:
    """`chattr FLAG PATHS`; the test is skipped where it cannot be set (not root, a file system
    that keeps no such flag)."""
    try:
        done = subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, timeout=60)
    except OSError:
        pytest.skip("no chattr here")
    if done.returncode:
        pytest.skip(f"chattr {flag}: {done.stderr.decode().strip()}")


def test_a_file_named_through_a_link_is_fitted_to_the_length_ruff_reads_for_it(tmp_path):
    """`proj/l.py -> ../elsewhere/src/m.py`, `proj/src -> ../elsewhere/src`: ruff 0.17.6 reads
    `proj/ruff.toml` (40) for both names (`check --show-settings`, `format --show-settings`), where
    porter resolved the path and fitted to `elsewhere/ruff.toml` (200): the lengthened line was left
    at 53 columns, past ruff's E501 in the project. black resolves its sources: a `[tool.black]`
    length is still read from the real path."""
    from porter.config.line_length import forget, line_length

    proj, elsewhere, blacks = tmp_path / "proj", tmp_path / "elsewhere", tmp_path / "blacks"
    for folder in (proj, elsewhere / "src", blacks):
        folder.mkdir(parents=True)
    (proj / "ruff.toml").write_text("line-length = 40\n")
    (elsewhere / "ruff.toml").write_text("line-length = 200\n")
    (elsewhere / "src" / "m.py").write_text("x = 1\n")
    (proj / "l.py").symlink_to("../elsewhere/src/m.py")
    (proj / "src").symlink_to("../elsewhere/src")
    (blacks / "pyproject.toml").write_text("[tool.black]\nline-length = 50\n")
    (blacks / "b.py").symlink_to("../elsewhere/src/m.py")
    forget()
    got = [
        line_length(str(p)) for p in (proj / "l.py", proj / "src" / "m.py", elsewhere / "src" / "m.py", blacks / "b.py")
    ]
    assert got == [40, 40, 200, 200]


def _cache(tmp_path, monkeypatch):
    """A cache of this user's under `tmp_path`, with an empty list of this run's notes."""
    from porter.pipeline import cache

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("PORTER_CACHE_KEY", raising=False)
    monkeypatch.setattr(cache, "NOT_KEPT", [])
    store = cache.Cache(tmp_path / "cache")
    assert store.enabled and store.problem is None, store.problem
    return cache, store


def test_an_append_only_cache_folder_is_left_no_temporary_it_cannot_remove(tmp_path, monkeypatch):
    """`chattr +a` on `v3/`: each write made its temporary, could neither rename it over the entry
    nor remove it, and left it for good (four a run: 47-cache's `chattr29.sh`; the same in an
    append-only shard folder), said as "Operation not permitted". Now such a folder is not written
    and the note says why."""
    cache, store = _cache(tmp_path, monkeypatch)
    _flag("+a", store.entries)
    try:
        store.salt()  # its memo is written in `v3/`
        (shard := store.entries / "ab").mkdir()
        _flag("+a", shard)
        with pytest.raises(OSError) as raised:
            store.write("c" * 62 + ".json", b"{}", shard="ab")
        store.not_kept(raised.value, "ab")
        left = [p.name for p in store.entries.rglob("*.tmp")]
    finally:
        _flag("-a", store.entries, *store.entries.iterdir())
    assert left == []
    assert len(cache.NOT_KEPT) == 1 and "the folder is append-only (chattr +a)" in cache.NOT_KEPT[0], cache.NOT_KEPT


def test_an_immutable_entry_is_said_as_an_entry_not_as_a_folder(tmp_path, monkeypatch):
    """Immutable entries (`chattr +i`): the note said "the cache holds folders this user cannot
    write: cannot write …/v3: Operation not permitted", a folder this user can write. Now it names
    the entry and its flag."""
    cache, store = _cache(tmp_path, monkeypatch)
    name = "index-" + "d" * 64 + ".json"
    store.write(name, b"{}")
    _flag("+i", store.entries / name)
    try:
        with pytest.raises(OSError) as raised:
            store.write(name, b"{ }")
        store.not_kept(raised.value)
    finally:
        _flag("-i", store.entries / name)
    assert cache.NOT_KEPT == [
        f"the cache holds entries that cannot be replaced: {store.entries / name} is immutable (chattr +i): "
        "a result that changed is not kept in its place"
    ]


def test_a_rewrite_started_on_a_terminal_that_had_hung_up_still_writes_its_files(tmp_path):
    """The second wave made a terminal that hangs up during `rewrite` a reader that left (the files
    written); one that had hung up before the run began is no tty to `isatty`, was not wrapped,
    and its EIO ended the run at its first line: exit 2, none of the 4 files written."""
    from tests.safety.conftest import CUDA, committed_repo

    tree = committed_repo(tmp_path / "t", {f"m{i}.py": CUDA for i in range(4)})
    code = porter_with_output_gone(["rewrite", ".", "-t", "xla", "--no-cache"], tree, pty=True, stderr_too=True)
    ported = [p.name for p in sorted(tree.glob("*.py")) if p.read_bytes() != CUDA]
    assert (code, ported) == (0, ["m0.py", "m1.py", "m2.py", "m3.py"])


def test_a_lint_whose_terminal_hung_up_leaves_with_2_as_ruff(tmp_path):
    """`lint` (no `--fix`: its output is its work) whose terminal hung up during the run (SIGHUP
    ignored) left with 0, "no findings", the findings gone nowhere, since the second wave read a
    hung-up terminal as a pipe's reader that left. ruff 0.17.6's `check` on a hung-up terminal
    leaves with 2 ("Input/output error"; 0 behind a pipe whose reader left), as porter itself did
    where the terminal had hung up before it started (`48-ctleft-tools/hungup30.py.txt`)."""
    import os
    import signal
    import sys

    from tests.safety.conftest import CUDA, REPO
    from tests.safety.test_twenty_ninth_read_term2 import _WAIT, _closed_under

    (tmp_path / "a.py").write_bytes(CUDA)
    assert porter_with_output_gone(["lint", ".", "-t", "xla", "--no-cache"], tmp_path, pty=True, stderr_too=True) == 2
    hook = tmp_path / "hook"
    hook.mkdir()
    marker = tmp_path / "marker"
    (hook / "sitecustomize.py").write_text(
        _WAIT.format(module="porter.cli.lint", name="_emit", nth=1, marker=str(marker))
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{hook}", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    argv = [sys.executable, "-m", "porter", "lint", "a.py", "-t", "xla", "--no-cache"]
    assert _closed_under(argv, tmp_path, env, marker, hang_up=signal.SIG_IGN) == 2


_TRAIN = (
    "import torch\ntorch.manual_seed(0)\nm = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
    "for step in range(3):\n    loss = m(torch.randn(8, 4)).pow(2).mean()\n"
    "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
)


@pytest.mark.slow
def test_a_parity_check_whose_reader_left_still_writes_its_report(tmp_path):
    """`parity-check --report r.json -- python train.py` whose output's reader left (or, alike,
    whose terminal hung up with SIGHUP ignored: `48-ctleft-tools/paritypty30.py.txt`): its plain
    tables went to the stream past the console, the BrokenPipeError ended the run after both
    sides had trained, exit 0, no report. Now the report is written and the run leaves with its
    verdict's code."""
    require("torch")
    import json
    import sys

    from tests.safety.test_twenty_ninth_read_ctleft import _to_a_reader_gone

    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "train.py").write_text(_TRAIN)
    args = ["parity-check", "--original", "tree", "--ported", "tree", "--timeout", "600", "--report", "r.json"]
    code = _to_a_reader_gone([*args, "--", sys.executable, "train.py"], tmp_path)
    assert (tmp_path / "r.json").exists(), code
    verdict = json.loads((tmp_path / "r.json").read_text())["verdict"]
    assert code == {"pass": 0, "fail": 1}.get(verdict, 2)
