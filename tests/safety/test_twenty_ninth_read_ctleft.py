"""The twenty-ninth read's cache and terminal leftovers (ctleft): `rewrite` behind a reader that
left, ruff's long `extend` chains, the note for many refused shard folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.safety.conftest import CUDA, PORTED, REPO, committed_repo

# a file porter cannot port: its warning is printed while the run goes on
BROKEN = b"import torch\nx = torch.randn(3).cuda(\n"


def _to_a_reader_gone(args: list[str], cwd: Path) -> int:
    """`porter ARGS 2>&1 | head -c 0`: stdout and stderr a pipe whose reader left before the
    first write (each write is EPIPE). The exit code."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(cwd / ".c")}
    read, write = os.pipe()
    os.close(read)
    try:
        run = subprocess.Popen([sys.executable, "-m", "porter", *args], cwd=cwd, env=env, stdout=write, stderr=write)
    finally:
        os.close(write)
    return run.wait(timeout=300)


@pytest.mark.parametrize(
    "args,code",
    [
        (["rewrite", ".", "-t", "xla", "--no-cache"], 2),
        (["rewrite", "a.py", "b.py", "-t", "xla", "--no-cache", "--report", "r.md"], 0),
        (["rewrite", ".", "-t", "xla", "--no-cache", "--out-dir", "../copy"], 2),
        (["lint", ".", "-t", "xla", "--no-cache", "--fix"], 0),
    ],
)
def test_a_rewrite_whose_reader_left_still_writes_its_files_and_report(tmp_path, args, code):
    """`porter rewrite . 2>&1 | head -1`: the first line said (a warning, the progress) met the
    broken pipe and rich's handler ended the run before anything was written, exit 0; with
    `--report` the report was never written. ruff 0.17.6's `check --fix` writes every fix
    behind the same pipe. Now the output stops and the work does not: the files, the copy and
    the report are written, and the run leaves with its own code (2: a file not ported).
    `lint --fix` the same: its fixes are written; its report met the pipe, 0 as ruff."""
    tree = committed_repo(tmp_path / "t", {"a.py": CUDA, "b.py": CUDA, "c.py": BROKEN})
    if "a.py" in args:
        (tree / "c.py").unlink()
    got = _to_a_reader_gone(args, tree)
    where = tmp_path / "copy" if "--out-dir" in args else tree
    assert (where / "a.py").read_bytes() == (where / "b.py").read_bytes() == PORTED, got
    assert got == code
    if "--report" in args:
        assert (tree / "r.md").read_text().strip()


def test_a_diff_whose_reader_left_still_stops_with_ruffs_code(tmp_path):
    """`rewrite --diff` writes nothing: its output is its work, and a reader that left ends it
    with 0, nothing said, as before (twenty-eighth read); the files are untouched."""
    tree = committed_repo(tmp_path / "t", {"a.py": CUDA})
    assert _to_a_reader_gone(["rewrite", ".", "-t", "xla", "--no-cache", "--diff"], tree) == 0
    assert (tree / "a.py").read_bytes() == CUDA


def test_a_ruff_extend_chain_past_256_files_is_followed(tmp_path):
    """ruff 0.17.6 follows a chain of 1,000 `extend`s (`--show-settings`: 77); porter read 256
    files and then fitted to no limit, unsaid. A cycle at the chain's end still gives none."""
    from porter.config.line_length import forget, line_length

    for top, last in (("p", "line-length = 77"), ("q", 'extend = "c150.toml"')):
        (tmp_path / top).mkdir()
        (tmp_path / top / "ruff.toml").write_text('extend = "c1.toml"\n')
        for i in range(1, 300):
            (tmp_path / top / f"c{i}.toml").write_text(f'extend = "c{i + 1}.toml"\n')
        (tmp_path / top / "c300.toml").write_text(last + "\n")
        (tmp_path / top / "m.py").write_text("x = 1\n")
    forget()
    assert (line_length(str(tmp_path / "p" / "m.py")), line_length(str(tmp_path / "q" / "m.py"))) == (77, None)


def test_many_folders_of_the_cache_that_refuse_a_write_are_counted_in_the_one_note(tmp_path):
    """A shared cache folder whose shard folders other users made (0755, theirs): the one note
    named the first folder that refused a write and said to remove it, and removing it showed
    the next on the next run (53 folders of 5 owners: twenty-eighth read's leftover). The note
    now says how many others and whose they are; still one note, the results a cold run's."""
    from tests.safety.test_cache_trust import _as_a_teammate, _entries

    for name in ("c.py", "d.py", "e.py", "f.py", "g.py", "h.py"):
        (tmp_path / name).write_bytes(CUDA)
    prefix, run, env, cache, cold = _as_a_teammate(tmp_path)
    shards = sorted({entry.parent for entry in _entries(cache)})
    assert len(shards) >= 3
    os.chmod(cache / "v3", 0o777)
    for path in (cache / "v3").rglob("*"):  # the stat index too: else it answers, nothing written
        os.chown(path, 65534, 65534)
    for number, shard in enumerate(shards):
        os.chown(shard, 65534 - number % 2, 65534 - number % 2)
    out = subprocess.run([*prefix, *run], cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = out.stderr.decode()
    assert out.stdout == cold and "Traceback" not in err, err
    said = [line for line in err.splitlines() if "cannot write" in line]
    assert len(said) == 1, err
    assert f"and {len(shards) - 1} other folders of the cache (of users 65533, 65534)" in said[0], err


def test_a_ruff_extend_chain_across_folders_is_followed_past_a_long_path(tmp_path):
    """200 `extend`s each naming the next through `../`: porter joined each to the last path as
    written, which grew by every step's `../../../../s.../d/e/f` past PATH_MAX, and the chain got
    no limit, unsaid; ruff 0.17.6 takes `..` off lexically (`--show-settings`: 79). Found by
    random chains (`47-ctleft-tools/ruffextend29.py.txt`: 7 of 40 differed)."""
    from porter.config.line_length import forget, line_length

    steps = [f"s{i}/d/e/f/r.toml" for i in range(200)]
    (tmp_path / "ruff.toml").write_text(f'extend = "{steps[0]}"\n')
    for step, after in zip(steps, steps[1:]):
        (tmp_path / step).parent.mkdir(parents=True)
        (tmp_path / step).write_text(f'extend = "../../../../{after}"\n')
    (tmp_path / steps[-1]).parent.mkdir(parents=True)
    (tmp_path / steps[-1]).write_text("line-length = 79\n")
    (tmp_path / "m.py").write_text("x = 1\n")
    forget()
    assert line_length(str(tmp_path / "m.py")) == 79
