"""Contract 1 and 3, where the state is not porter's own: a rewritten file keeps its owner
when porter runs as another user; git's answers about a repository run none of the programs
that repository's configuration names; nothing user code starts outlives `parity-check`, not
even a process that left its process group (`setsid()`, a daemon's double fork)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.safety.conftest import CUDA, PORTED, committed_repo, git, porter

ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="files of another owner are made as root"
)
OTHER_UID, OTHER_GID = 12345, 12345


@ROOT_ONLY
def test_a_file_keeps_its_owner_when_root_rewrites_it(tmp_path):
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    os.chown(repo / "m.py", OTHER_UID, OTHER_GID)
    out = porter("rewrite", "m.py", "--target", "xla", cwd=repo)
    assert out.returncode == 0, out.stderr
    st = (repo / "m.py").stat()
    assert (repo / "m.py").read_bytes() == PORTED
    assert (st.st_uid, st.st_gid) == (OTHER_UID, OTHER_GID)


def _without_chown() -> None:
    """Root without CAP_CHOWN (dropped from the bounding set before exec): like another user,
    it may write the file but not give a file it makes away."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(24, 0, 0, 0, 0) != 0:  # PR_CAPBSET_DROP, CAP_CHOWN
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@ROOT_ONLY
def test_a_file_porter_cannot_keep_the_owner_of_is_left_as_it_was(tmp_path):
    """A user who may write the file (and its folder) but not hand a file to its owner would
    become its owner through the rename: porter leaves it unchanged and says why."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    os.chown(repo / "m.py", OTHER_UID, OTHER_GID)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "NO_COLOR": "1", "COLUMNS": "200"}
    out = subprocess.run(
        [sys.executable, "-m", "porter", "rewrite", "m.py", "--target", "xla"],
        cwd=repo,
        env=env,
        capture_output=True,
        preexec_fn=_without_chown,
        timeout=180,
    )
    err = out.stderr.decode()
    assert out.returncode == 2, err
    assert "m.py" in err and "owner" in err, err
    assert (repo / "m.py").read_bytes() == CUDA and (repo / "m.py").stat().st_uid == OTHER_UID
    assert not [p for p in repo.iterdir() if p.name.endswith(".porter-tmp")]


def test_the_dirty_check_runs_no_program_the_repository_names(tmp_path):
    """`core.fsmonitor` and a clean filter in `.git/config` (an archive carries that file)."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, ".gitattributes": b"*.py filter=evil\n"})
    git("config", "core.fsmonitor", f"touch {tmp_path / 'FSMONITOR'}; echo", cwd=repo)
    git("config", "filter.evil.clean", f"touch {tmp_path / 'FILTER'}; cat", cwd=repo)
    time.sleep(1.1)
    os.utime(repo / "m.py")  # a stat change: git would hash the file again, through its filter
    out = porter("rewrite", "m.py", "--target", "xla", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert (repo / "m.py").read_bytes() == PORTED
    assert not (tmp_path / "FSMONITOR").exists() and not (tmp_path / "FILTER").exists()


ESCAPE = """import os, time


def f():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() > 0:  # a daemon's double fork
            os._exit(0)
        with open(os.environ["STRAY_PIDFILE"], "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(300)
        os._exit(0)
    time.sleep(1)
    raise RuntimeError("the factory left a daemon behind")


def example_inputs():
    return ()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="a child subreaper is Linux's")
def test_a_process_that_left_its_group_does_not_outlive_parity_check(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "m.py").write_text(ESCAPE)
    pidfile = tmp_path / "stray.pid"
    out = porter(
        "parity-check",
        "--original",
        "t",
        "--ported",
        "t",
        "--entry",
        "m:f",
        cwd=tmp_path,
        env={"STRAY_PIDFILE": str(pidfile)},
        timeout=300,
    )
    assert out.returncode == 2 and b"daemon behind" in out.stdout + out.stderr, out.stdout + out.stderr
    pid = int(pidfile.read_text())
    try:
        assert not _alive(pid), "the setsid() daemon outlived parity-check"
    finally:
        if _alive(pid):
            os.kill(pid, 9)


@ROOT_ONLY
def test_a_config_another_user_planted_above_the_project_is_passed_over(tmp_path):
    """Discovery walks up from the project: a `porter.toml` another user wrote in a shared folder
    above it (`/tmp/porter.toml`, ignoring every code) turned the lint green, "All checks
    passed!" (seventeenth read). Above the repository a config of another user is passed over,
    with a note, as git passes over a repository another user owns; the repository's own
    config, and one of this user's or root's above it, are read as before."""
    shared = tmp_path / "shared"
    (shared / "proj").mkdir(parents=True)
    shared.chmod(0o1777)
    (shared / "porter.toml").write_text('ignore = ["DEV", "CUDA"]\n')
    os.chown(shared / "porter.toml", OTHER_UID, OTHER_GID)
    (shared / "proj" / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--no-cache", "--output-format", "concise", cwd=shared / "proj")
    assert out.returncode == 1 and b"DEV001" in out.stdout, out.stdout + out.stderr
    assert b"porter.toml is passed over" in out.stderr
    explicit = porter("lint", ".", "-t", "xla", "--no-cache", "--config", "../porter.toml", cwd=shared / "proj")
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr
    git("init", "-q", cwd=shared)  # the repository's own config
    inside = porter("lint", ".", "--target", "xla", "--no-cache", cwd=shared / "proj")
    assert inside.returncode == 0 and b"passed over" not in inside.stderr, inside.stdout + inside.stderr


def test_which_configs_above_the_repository_are_passed_over(tmp_path, monkeypatch):
    """In process, with every file taken for another user's: the nearest config at or below the
    repository's root is read; above it, each is passed over; `--config` is not discovery."""
    from porter.config import files

    monkeypatch.setattr(files, "_another_user_s", lambda path: True)
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "porter.toml").write_text('target = "xla"\n')
    assert files.discover_config([tmp_path / "repo" / "sub"]) is None
    assert files.PASSED_OVER == [tmp_path / "porter.toml"]
    (tmp_path / "repo" / "pyproject.toml").write_text('[tool.porter]\ntarget = "tpu"\n')
    assert files.discover_config([tmp_path / "repo" / "sub"]) == tmp_path / "repo" / "pyproject.toml"
    assert files.PASSED_OVER == []
    monkeypatch.setattr(files, "_another_user_s", lambda path: False)
    (tmp_path / "repo" / "pyproject.toml").unlink()
    assert files.discover_config([tmp_path / "repo" / "sub"]) == tmp_path / "porter.toml"


@ROOT_ONLY
def test_sudo_porter_with_the_user_s_home_makes_nothing_root_owned_there(tmp_path):
    """`sudo porter lint` keeps the user's HOME: porter made a root-owned `~/.config/porter` (and
    cache), and every later run of the user's own was "cache off: Permission denied". Run as
    root, porter makes no key or default cache in another user's folder; the run is cold, with
    a note."""
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, OTHER_UID, OTHER_GID)
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    env = {"HOME": str(home), "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""}
    out = porter("lint", ".", "--target", "xla", cwd=repo, env=env)
    assert out.returncode == 1 and b"1 finding" in out.stdout, out.stderr
    assert b"run as root does not make" in out.stderr, out.stderr
    assert sorted(p.name for p in home.iterdir()) == []
    out = porter("lint", ".", "--target", "xla", cwd=repo, env={**env, "PORTER_CACHE_KEY": "shared secret"})
    assert out.returncode == 1 and sorted(p.name for p in home.iterdir()) == [], out.stderr
    # with a key from the environment the default cache is still not made, and that is said
    assert b"the cache is off: porter run as root does not make" in out.stderr, out.stderr
