"""Contract 2: one guard for every command that writes user files (as `cargo fix`):
refuse outside version control, refuse when git cannot answer, check each file in its own
repository, never overwrite bytes porter did not port, treat an ignored file as untracked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.safety.conftest import CUDA, PORTED, REPO, committed_repo, porter


def _refused(out: subprocess.CompletedProcess, *words: str) -> str:
    err = out.stderr.decode()
    assert out.returncode == 2, (out.returncode, err)
    assert "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


def test_outside_version_control_is_refused_unless_allowed(tmp_path, cuda_file):
    out = porter("rewrite", ".", "--target", "xla", cwd=tmp_path)
    _refused(out, "m.py", "not under version control", "--allow-no-vcs")
    assert cuda_file.read_bytes() == CUDA
    out = porter("rewrite", ".", "--target", "xla", "--allow-no-vcs", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert cuda_file.read_bytes() == PORTED


def _dirty_repo(tmp_path: Path) -> Path:
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    (repo / "m.py").write_bytes(CUDA + b"y = 1  # uncommitted work\n")
    return repo


def test_git_missing_is_refused_saying_why(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = (repo / "m.py").read_bytes()
    # a PATH with python but without git
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    out = porter("rewrite", ".", "--target", "xla", cwd=repo, env={"PATH": str(bindir)})
    _refused(out, "git is not installed")
    assert (repo / "m.py").read_bytes() == before


def test_corrupt_index_is_refused_saying_why(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = (repo / "m.py").read_bytes()
    (repo / ".git" / "index").write_bytes(b"DIRC garbage, not an index")
    out = porter("rewrite", ".", "--target", "xla", cwd=repo)
    _refused(out, "git cannot tell", "index")
    assert (repo / "m.py").read_bytes() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another user")
def test_dubious_ownership_is_refused_saying_why(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = (repo / "m.py").read_bytes()
    for p in [repo, *repo.rglob("*")]:
        os.lchown(p, 65534, 65534)
    out = porter("rewrite", ".", "--target", "xla", cwd=repo, env={"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"})
    _refused(out, "dubious ownership")
    assert (repo / "m.py").read_bytes() == before


def test_symlink_into_another_repository_is_checked_there(tmp_path):
    other = _dirty_repo(tmp_path)  # m.py there has uncommitted work
    before = (other / "m.py").read_bytes()
    here = tmp_path / "here"
    here.mkdir()
    (here / "link.py").symlink_to(other / "m.py")
    committed_repo(here, {"README": b"x\n"})  # link.py is tracked and clean here
    out = porter("rewrite", "link.py", "--target", "xla", cwd=here)
    _refused(out, "link.py", "uncommitted")
    assert (other / "m.py").read_bytes() == before


def test_lint_fix_passes_the_same_guard(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = (repo / "m.py").read_bytes()
    out = porter("lint", ".", "--target", "xla", "--fix", cwd=repo)
    _refused(out, "m.py", "uncommitted", "--allow-dirty")
    assert (repo / "m.py").read_bytes() == before
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--fix", cwd=plain)
    _refused(out, "not under version control")
    assert (plain / "m.py").read_bytes() == CUDA


@pytest.mark.parametrize("git_dir", ["{top}/.git", ".git"])
def test_the_guard_asks_the_repository_the_caller_s_git_dir_names(tmp_path, git_dir):
    """The guard ran `git -C FOLDER` with the caller's `GIT_DIR`: an absolute one (no
    `GIT_WORK_TREE`) made each file's folder the work tree's top, so a tracked, clean `sub/m.py`
    was refused as "untracked", where `git status` there lists nothing (twenty-sixth read). Now
    git runs with discovery's environment for the folder (`discover.git_env`); uncommitted work
    is still refused."""
    repo = committed_repo(tmp_path / "repo", {"sub/m.py": CUDA})
    env = {"GIT_DIR": git_dir.format(top=repo)}
    out = porter("lint", "sub/m.py", "--target", "xla", "--fix", "--no-cache", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    assert (repo / "sub" / "m.py").read_bytes() == PORTED
    (repo / "sub" / "m.py").write_bytes(CUDA + b"y = 1  # uncommitted work\n")
    out = porter("lint", "sub/m.py", "--target", "xla", "--fix", "--no-cache", cwd=repo, env=env)
    _refused(out, "sub/m.py", "uncommitted")


def test_gitignored_file_named_explicitly_is_refused_like_an_untracked_one(tmp_path):
    repo = committed_repo(tmp_path / "repo", {".gitignore": b"gen.py\n", "keep.py": b"x = 1\n"})
    (repo / "gen.py").write_bytes(CUDA)
    out = porter("rewrite", "gen.py", "--target", "xla", cwd=repo)
    _refused(out, "gen.py", "ignored by git")
    assert (repo / "gen.py").read_bytes() == CUDA
    out = porter("rewrite", "gen.py", "--target", "xla", "--allow-dirty", cwd=repo)
    assert out.returncode == 0 and (repo / "gen.py").read_bytes() == PORTED


def test_file_edited_while_porter_analysed_it_is_not_overwritten(tmp_path, monkeypatch):
    """The user saves the file after porter read it and before porter writes it."""
    from porter.cli import app

    rewrite_cli = sys.modules["porter.cli.rewrite"]  # `porter.cli.rewrite` is also the command

    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, "n.py": CUDA})
    real_run = rewrite_cli.run
    edited = CUDA + b"print('saved by the user meanwhile')\n"

    def run_then_edit(*args, **kwargs):
        out = real_run(*args, **kwargs)
        (repo / "m.py").write_bytes(edited)
        return out

    monkeypatch.setattr(rewrite_cli, "run", run_then_edit)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["rewrite", ".", "--target", "xla", "--allow-dirty", "-q"])
    assert (repo / "m.py").read_bytes() == edited
    assert (repo / "n.py").read_bytes() == PORTED  # the rest goes on
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize("entry", ["", "."])
def test_a_git_the_project_ships_is_not_run_by_a_path_entry_naming_the_working_folder(tmp_path, entry):
    """An empty entry of PATH (a trailing `:`) or `.` names the folder a command runs in:
    porter ran git there, so a repository that ships an executable `git` had it run by
    `rewrite`'s dirty check (and would by `lint`'s reading of git's ignore settings). git is
    found on PATH's absolute folders only; the rewrite still checks and writes."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA})
    marker = tmp_path / "ran"
    (repo / "git").write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    (repo / "git").chmod(0o755)
    path = os.pathsep.join([entry, *os.environ["PATH"].split(os.pathsep)])
    lint = porter("lint", ".", "--target", "xla", "--no-cache", cwd=repo, env={"PATH": path})
    assert lint.returncode == 1 and b"DEV001" in lint.stdout, lint.stderr
    out = porter("rewrite", ".", "--target", "xla", cwd=repo, env={"PATH": path})
    assert not marker.exists(), marker.read_text()
    assert out.returncode == 0 and (repo / "m.py").read_bytes() == PORTED, out.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("-o", "m.py"),
        ("-o", "./sub/../m.py"),
        ("-o", "same.txt"),
        ("--write-baseline", "m.py"),
        ("--output-file", "m.py"),
    ],
)
def test_lint_writes_no_output_over_a_file_it_checks(tmp_path, args):
    """`porter lint src -o src/model.py` (a slip of the hand) replaced the model's code with the
    findings; a hard link is the same file by another name (twenty-first read)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "m.py").write_bytes(CUDA)
    os.link(tmp_path / "m.py", tmp_path / "same.txt")
    # (`--output-format` is refused beside `--write-baseline`, whose file is JSON of its own: thirty-third read)
    formats = [] if args[0] == "--write-baseline" else ["--output-format", "json"]
    out = porter("lint", ".", "--target", "xla", *formats, *args, cwd=tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert b"a file this run checks" in out.stderr and out.stderr.count(b"\n") == 1, out.stderr
    assert (tmp_path / "m.py").read_bytes() == CUDA


@pytest.mark.parametrize("option", ["-o", "--report", "--write-baseline"])
def test_lint_fix_refuses_an_output_over_a_file_it_checks_before_writing_a_fix(tmp_path, option):
    """`lint --fix -o m.py` wrote m.py's fixes and then refused the output: the refusal came
    after the fixes were written (twenty-first read's leftover). Now nothing is written."""
    (tmp_path / "m.py").write_bytes(CUDA)
    out = porter("lint", ".", "--target", "xla", "--fix", "--allow-no-vcs", option, "m.py", cwd=tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert b"a file this run checks" in out.stderr and out.stderr.count(b"\n") == 1, out.stderr
    assert (tmp_path / "m.py").read_bytes() == CUDA
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_an_output_that_is_a_link_to_a_file_it_checks_is_replaced_not_refused(tmp_path):
    """An output that is a link is replaced, never written through (third read), so a link to a
    checked file harms nothing: the run goes on (a repository shipping `baseline.json` as a link
    to a file outside the tree, not followed by the walk, was refused as "a file this run
    checks" once the refusal compared followed links)."""
    (tmp_path / "m.py").write_bytes(CUDA)
    (tmp_path / "out.json").symlink_to(tmp_path / "m.py")
    out = porter("lint", ".", "--target", "xla", "--output-format", "json", "-o", "out.json", cwd=tmp_path)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert (tmp_path / "m.py").read_bytes() == CUDA
    assert not (tmp_path / "out.json").is_symlink() and b"DEV001" in (tmp_path / "out.json").read_bytes()


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_INDEX_FILE"])
def test_a_hook_s_git_variable_does_not_make_another_repository_answer_for_the_file(tmp_path, variable):
    """A `GIT_DIR` (or `GIT_INDEX_FILE`) in the environment, as a git hook or a script runs
    porter with, made the dirty check ask another repository (or index), which held the file's
    uncommitted text as committed: the rewrite wrote over the uncommitted work. git is run as
    the walk runs it (`programs.git`: the repository variables left out); the file is checked
    in its own repository."""
    repo = _dirty_repo(tmp_path)
    work = (repo / "m.py").read_bytes()
    other = committed_repo(tmp_path / "other", {"m.py": work})  # the uncommitted text, committed there
    named = other / ".git" / ("index" if variable == "GIT_INDEX_FILE" else "")
    out = porter("rewrite", "m.py", "--target", "xla", cwd=repo, env={variable: os.fspath(named)})
    _refused(out, "uncommitted changes")
    assert (repo / "m.py").read_bytes() == work


def _said(err: str) -> list[str]:
    """What porter said, less its progress lines (`porter: porting 0/1 files, 7s`), which a slow
    run prints off a terminal and whose seconds differ between two runs (thirty-first read)."""
    return [line for line in err.splitlines() if not re.match(r"porter: \w+ \d+(/\d+)? files", line)]


def _commit_with_hook(repo: Path, *args: str) -> str:
    """`git commit ARGS` in `repo` with a pre-commit hook that runs `porter rewrite m.py` and stops
    the commit; what porter said."""
    said = repo.parent / "said.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f'#!/bin/sh\n"{sys.executable}" -m porter rewrite m.py --target xla 2> "{said}"\nexit 1\n')
    hook.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(repo.parent / "uc")}
    for name in [k for k in env if k.startswith("GIT_")]:
        del env[name]
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        timeout=180,
    )
    return said.read_text()


def test_inside_a_commit_hook_the_guard_reads_the_index_the_commit_builds(tmp_path):
    """git runs a pre-commit hook of `git commit -a` with `GIT_INDEX_FILE` naming the index the
    commit builds (`.git/index.lock`), and git's commands in the hook read it (githooks(5)):
    `git status` there calls the change staged. The guard left the variable out and read the
    repository's own index: "uncommitted changes" (twenty-sixth read's leftover). Now it reads
    the hook's index where that is the repository's own (another's stays out: the test above);
    a partial commit's index (`git commit b.py`) leaves `m.py`'s change unstaged."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, "b.py": b"y = 1\n"})
    work = CUDA + b"y = 1  # work being committed\n"
    (repo / "m.py").write_bytes(work)
    (repo / "b.py").write_bytes(b"y = 2\n")
    assert "m.py: has staged changes" in _commit_with_hook(repo, "-a", "-m", "all")
    assert "m.py: has uncommitted changes" in _commit_with_hook(repo, "-m", "b only", "b.py")
    assert (repo / "m.py").read_bytes() == work


def test_a_bare_dotfiles_repository_the_environment_names_answers_for_its_work_tree(tmp_path):
    """A bare "dotfiles" repository used through `GIT_DIR=~/.dotfiles GIT_WORK_TREE=~` holds no
    `.git` in its work tree: the guard called its files "not under version control" (twenty-sixth
    read's leftover), where git answers for them. Now the repository the environment names
    answers where no repository of the file's own lies between it and that tree's top (a project
    with its own `.git` under the home is checked in its own, as before)."""
    home = tmp_path / "home"
    env = {"GIT_DIR": os.fspath(home / ".dotfiles"), "GIT_WORK_TREE": os.fspath(home)}
    subprocess.run(["git", "init", "-q", "--bare", env["GIT_DIR"]], check=True)
    (home / "m.py").write_bytes(CUDA)
    (home / "d.py").write_bytes(CUDA)
    subprocess.run(
        "git add m.py d.py && git -c user.email=t@t -c user.name=t commit -qm dots",
        shell=True, cwd=home, env={**os.environ, **env}, check=True,
    )  # fmt: skip
    (home / "d.py").write_bytes(CUDA + b"y = 1  # uncommitted work\n")
    project = committed_repo(home / "proj", {"p.py": CUDA})
    out = porter("rewrite", "m.py", "proj/p.py", "--target", "xla", cwd=home, env=env)
    assert out.returncode == 0, out.stderr
    assert (home / "m.py").read_bytes() == PORTED and (project / "p.py").read_bytes() == PORTED
    out = porter("rewrite", "d.py", "--target", "xla", cwd=home, env=env)
    _refused(out, "d.py", "uncommitted changes")
    (project / "p.py").write_bytes(CUDA + b"y = 1\n")  # a change in the project: its own repository says so
    _refused(porter("rewrite", "proj/p.py", "--target", "xla", cwd=home, env=env), "uncommitted changes")


@pytest.mark.parametrize("folds", [True, False])
def test_a_file_git_takes_for_a_tracked_one_in_another_case_is_refused_saying_so(tmp_path, folds):
    """Under `core.ignoreCase` true (a repository made on a case-insensitive disk, copied to a
    case-sensitive one) git takes an untracked `A.py` for the tracked `a.py`: `git status` lists
    nothing and `check-ignore` calls it not ignored. The guard refused it as "ignored by git"
    (twenty-sixth read's leftover); now it says git's reason. Where the repository does not fold,
    an ignored `A.py` beside `a.py` is still "ignored by git"."""
    repo = committed_repo(tmp_path / "repo", {"a.py": b"x = 1\n", ".gitignore": b"" if folds else b"A.py\n"})
    subprocess.run(["git", "config", "core.ignoreCase", str(folds).lower()], cwd=repo, check=True)
    (repo / "A.py").write_bytes(CUDA)
    err = _refused(porter("rewrite", "A.py", "--target", "xla", cwd=repo), "A.py")
    if folds:
        assert "takes it for the tracked 'a.py'" in err and "ignored by git" not in err, err
    else:
        assert "ignored by git" in err and "a.py'" not in err, err
    assert (repo / "A.py").read_bytes() == CUDA


def test_in_a_partial_commit_s_hook_a_change_staged_in_the_real_index_is_refused(tmp_path):
    """`git commit b.py` runs its hook on a temporary index of HEAD plus `b.py`; the change to
    `m.py` staged in the real index stays there after the commit. With `m.py`'s work-tree text put
    back to HEAD's, the hook's index called it clean and the guard allowed the write, where
    outside the hook (and after the commit) it refuses it, as git there says `MM` (twenty-seventh
    read's leftover). Now the partial commit's real index is read, as the commit leaves it."""
    repo = committed_repo(tmp_path / "repo", {"m.py": CUDA, "b.py": b"y = 1\n"})
    (repo / "m.py").write_bytes(CUDA + b"y = 1  # staged work\n")
    subprocess.run(["git", "add", "m.py"], cwd=repo, check=True)
    (repo / "m.py").write_bytes(CUDA)  # the work tree back to HEAD's text; the index keeps the work
    (repo / "b.py").write_bytes(b"y = 2\n")
    in_hook = _commit_with_hook(repo, "-m", "b only", "b.py")
    assert (repo / "m.py").read_bytes() == CUDA
    outside = _refused(porter("rewrite", "m.py", "--target", "xla", cwd=repo), "m.py: has uncommitted changes")
    assert _said(in_hook) == _said(outside)


def test_a_git_dir_naming_the_file_s_own_repository_from_a_subfolder_answers_from_its_top(tmp_path):
    """`GIT_DIR` naming the file's own repository, without `GIT_WORK_TREE`, run from `sub/`: git
    takes `sub/` for the work tree's top, and the guard, honouring the environment's repository
    (the bare dotfiles case), refused the tracked, clean `sub/m.py` as "untracked", the twenty-
    sixth read's defect back (twenty-seventh read). The file's own top answers; its uncommitted
    work is still refused."""
    repo = committed_repo(tmp_path / "repo", {"sub/m.py": CUDA})
    env = {"GIT_DIR": os.fspath(repo / ".git")}
    out = porter("rewrite", "m.py", "--target", "xla", cwd=repo / "sub", env=env)
    assert out.returncode == 0, out.stderr
    assert (repo / "sub" / "m.py").read_bytes() == PORTED
    (repo / "sub" / "m.py").write_bytes(CUDA + b"y = 1  # uncommitted work\n")
    _refused(porter("rewrite", "m.py", "--target", "xla", cwd=repo / "sub", env=env), "m.py", "uncommitted")
