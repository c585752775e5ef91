"""Contract 4: SIGINT and SIGTERM end the workers, remove temporaries and say what was
written; the next run removes what a killed run left; no worker outlives porter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.safety.conftest import CUDA, PORTED, REPO, committed_repo, git, porter

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds worker processes through /proc")

# a chain of 300 `.cuda()` calls takes libcst several seconds: a run that is surely busy
SLOW = b"import torch\nx = torch.zeros(1)" + b".cuda()" * 300 + b"\n"


def _children(pid: int) -> set[int]:
    """Every process whose parent is `pid`."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces: the fields after the last ')' are fixed
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == pid:
            out.add(int(entry))
    return out


def _alive(pids: set[int]) -> set[int]:
    left = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(pid)
    return left


def _busy_run(tmp_path: Path) -> tuple[subprocess.Popen, set[int]]:
    """A lint of 8 slow files on 2 workers, started, with its workers seen alive."""
    for i in range(8):
        (tmp_path / f"slow{i}.py").write_bytes(SLOW)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "porter", "lint", ".", "--target", "xla", "--jobs", "2", "--no-cache"],
        cwd=tmp_path,
        env=env,
        # a shell starts background jobs (and pytest-xdist its workers) with SIGINT ignored and
        # a child inherits that; porter at a terminal gets the default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        workers |= _children(proc.pid)
        time.sleep(0.2)
    assert workers, "the run never started a worker"
    time.sleep(0.5)  # let them get into a file (forked after the engine is imported: at once)
    return proc, workers


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and _alive(pids):
        time.sleep(0.1)
    left = _alive(pids)
    for pid in left:  # never leave a stray process behind the test
        os.kill(pid, signal.SIGKILL)
    return left


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_porter_ends_its_workers_and_says_so(tmp_path, sig):
    proc, workers = _busy_run(tmp_path)
    proc.send_signal(sig)  # to porter alone, as `timeout` and `docker stop` do
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        survivors = _gone_within(workers, 5)  # and kills any, whatever happened above
    assert not survivors, "workers outlived porter"
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert f"interrupted ({sig.name})" in err.decode()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".porter-tmp"))]


@needs_proc
def test_workers_die_with_a_killed_parent(tmp_path):
    proc, workers = _busy_run(tmp_path)
    proc.kill()  # SIGKILL: porter cleans up nothing
    try:
        proc.communicate(timeout=30)
    finally:
        survivors = _gone_within(workers, 5)  # and kills any
    assert not survivors, "workers outlived a killed porter"


def test_interrupt_while_writing_lists_the_files_written(tmp_path, monkeypatch):
    from porter.cli import app

    names = [f"f{i}.py" for i in range(4)]
    repo = committed_repo(tmp_path / "repo", {n: CUDA for n in names})
    calls = []

    for module in ("porter.cli.writes", "porter.cli.rewrite"):
        mod = sys.modules.get(module)
        if mod is None or not hasattr(mod, "atomic_write"):
            continue
        real = mod.atomic_write

        def interrupted(path, data, *args, _real=real, **kwargs):
            calls.append(path)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return _real(path, data, *args, **kwargs)

        monkeypatch.setattr(mod, "atomic_write", interrupted)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "-q", "--jobs", "1"])
    assert result.exit_code == 130, result.output
    written = [n for n in names if (repo / n).read_bytes() == PORTED]
    assert len(written) == 2
    assert "partly ported" in result.output
    for n in written:
        assert n in result.output
    for n in set(names) - set(written):
        assert f"  {n}" not in result.output


def _killed_runs_temporary(folder: Path, name: str) -> Path:
    """A temporary made by porter's own writer in a process that is gone (a run killed with SIGKILL)."""
    code = "import sys; from porter.pipeline.writer import temporary; print(temporary(sys.argv[1], sys.argv[2])[1])"
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder), name],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    made = Path(out.stdout.decode().strip())
    made.write_bytes(b"half a file")
    return made


def test_next_run_removes_temporaries_a_killed_run_left(tmp_path):
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, "pkg/n.py": CUDA})
    stale = [_killed_runs_temporary(repo, "m.py"), _killed_runs_temporary(repo / "pkg", "n.py")]
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert not any(p.exists() for p in stale)
    assert b"temporary file" in out.stderr
    assert (repo / "m.py").read_bytes() == PORTED


def _lookalikes(folder: Path) -> list[Path]:
    """Files named as porter's temporaries are, or were, named, that porter did not make."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    real = _killed_runs_temporary(folder, "m.py")
    forged = [
        f".data.{dead.pid}.k3j4h5.porter-tmp",  # porter's older pattern: a pid, mkstemp's part
        ".notes.a8d7f6g5.porter-tmp",  # no pid at all
        real.name.replace(real.name.split(".")[-3], "0" * 16),  # the pattern, a random part not the tag's
        real.name[:-43] + "f" * 32 + ".porter-tmp",  # the pattern, a tag not the key's
    ]
    real.unlink()
    made = []
    for name in forged:
        (folder / name).write_bytes(b"the user's data\n")
        old = time.time() - 3600
        os.utime(folder / name, (old, old))
        made.append(folder / name)
    return made


def test_a_file_named_like_a_temporary_is_never_removed(tmp_path):
    """Only a temporary porter's own writer made is swept: a committed file named like one (in
    a clean tree) and a file in an `--out-dir` were removed as "left by an interrupted porter
    run" whenever its name held a pid no process had (adversarial reads 12 and 14)."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    planted = _lookalikes(repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "data", cwd=repo)
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert (repo / "m.py").read_bytes() == PORTED
    assert all(p.read_bytes() == b"the user's data\n" for p in planted), out.stderr
    assert b"temporary file" not in out.stderr, out.stderr

    src = committed_repo(tmp_path / "src", {"m.py": CUDA})
    dest = tmp_path / "dest"
    dest.mkdir()
    planted = _lookalikes(dest)
    out = porter("rewrite", str(src), "--target", "xla", "--out-dir", str(dest), "--force", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (dest / "m.py").read_bytes() == PORTED
    assert all(p.read_bytes() == b"the user's data\n" for p in planted), [p.name for p in dest.iterdir()]


BLOCK = """
class Block{j}(torch.nn.Module):
    def __init__(self, dim, device=0):
        super().__init__()
        self.device = device
        self.lin = torch.nn.Linear(dim, dim).to(self.device)
        self.table = {{"a{j}": [1, 2, 3], "b": (4, 5), "c": {{"d": [6, 7]}}}}

    def forward(self, x, gpu_id=None):
        y = self.lin(x.to(self.device))
        if gpu_id is not None:
            y = y.to(gpu_id)
        return [v * 2 for v in (y, y + 1, y - 1)]
"""


# porter as `python -m porter` runs it, with an exit handler that leaves a file when the
# interpreter is torn down (in porter's own process: a worker forked from it is not porter)
_TORN_DOWN = """
import atexit, os, runpy
porter = os.getpid()
atexit.register(lambda: os.getpid() == porter and open(os.environ["TORN_DOWN"], "w").close())
runpy.run_module("porter", run_name="__main__", alter_sys=True)
"""


@needs_proc
def test_nothing_runs_after_porter_says_it_was_interrupted(tmp_path):
    """Once porter has said "interrupted", it is gone: it does not spend seconds tearing down
    what it built for a large tree (the project index, the results) before it exits (24 s on a
    400-file tree). It leaves without the interpreter's teardown, whose exit handlers then do
    not run: an event, not seconds."""
    text = "import torch\n" + "".join(BLOCK.format(j=j) for j in range(60))
    for i in range(60):
        (tmp_path / f"m{i:03d}.py").write_text(text.replace("Block", f"B{i}_"))
    torn_down = tmp_path / "torn-down"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _TORN_DOWN, "lint", ".", "--target", "xla", "--jobs", "2"],
        cwd=tmp_path,
        env={**env, "TORN_DOWN": str(torn_down)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _children(proc.pid):  # the index is built: ports have begun
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.stderr is not None
    said = proc.stderr.readline()
    while said and b"interrupted" not in said:
        said = proc.stderr.readline()
    assert b"porter: interrupted (SIGTERM)" in said, said
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert not torn_down.exists(), "porter tore its interpreter down after saying it was interrupted"


_KILL_SELF = """
import os, signal, importlib
def _patch(module, name, nth):
    mod = importlib.import_module(module)
    real, calls = getattr(mod, name), []
    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            os.kill(os.getpid(), signal.SIGTERM)  # SIGTERM arrives while porter is in this call
        return real(*args, **kwargs)
    setattr(mod, name, wrapped)
_patch({module!r}, {name!r}, {nth})
"""


@pytest.mark.parametrize(
    ("args", "module", "name", "nth"),
    [
        (["kernels", "src", "--target", "xla"], "porter.kernels.inventory", "scan", 1),
        (["backends", "src", "--target", "xla"], "porter.backends.scaffold", "scan", 1),
        (["rewrite", "src", "--target", "xla", "--split", "series"], "porter.report.series", "_put", 2),
    ],
)
def test_sigterm_outside_the_workers_ends_as_sigterm_and_says_so(tmp_path, args, module, name, nth):
    """The third adversarial read: a SIGTERM while `kernels` or `backends` scanned, or while
    `--split` wrote its series, ended with exit 130 (typer's code for any KeyboardInterrupt:
    a CI runner read it as Ctrl-C) and not a word; the series' files were written in place,
    so one could be cut short."""
    (tmp_path / "src").mkdir()
    for i in range(3):
        (tmp_path / "src" / f"m{i}").mkdir()
        (tmp_path / "src" / f"m{i}" / "m.py").write_bytes(CUDA)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_KILL_SELF.format(module=module, name=name, nth=nth))
    env = {
        **os.environ,
        "PYTHONPATH": f"{REPO}{os.pathsep}{hook}",
        "NO_COLOR": "1",
        "XDG_CACHE_HOME": str(tmp_path / ".cache"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    err = out.stderr.decode()
    assert out.returncode == 143, (out.returncode, err)
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err, err
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".porter-tmp"))]
    if "--split" in args:
        assert "holds 1 of the series' " in err, err
        written = [p for p in (tmp_path / "series").iterdir()]
        assert (
            len(written) == 1 and written[0].name.endswith(".patch") and written[0].read_bytes().rstrip().endswith(b")")
        )


@pytest.mark.parametrize("command", [("rewrite", "."), ("lint", ".", "--fix")])
def test_a_run_the_guard_refuses_removes_no_temporary(tmp_path, command):
    """A refused run writes nothing, and removes nothing either: the sweep of a killed run's
    temporaries ran before the guard, so `rewrite` on a dirty tree said "nothing was written"
    after deleting a committed file named like a temporary (adversarial read 12)."""
    named = ".data.4000000.k.porter-tmp"  # no process 4000000: stale by its name
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, named: b"committed data\n"})
    (repo / "m.py").write_bytes(CUDA + b"# an edit\n")  # uncommitted: the guard refuses
    out = porter(*command, "--target", "xla", cwd=repo)
    assert out.returncode == 2 and b"nothing was written" in out.stderr, out.stderr
    assert (repo / named).read_bytes() == b"committed data\n"
    assert b"temporary file" not in out.stderr, out.stderr
