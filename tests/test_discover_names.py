"""discover (porter/pipeline/discover.py) names the files it walks itself, from the folder's real
path, and leaves the default excludes out by folder name: both must agree with what they
replace (`runner.display_path` per file; pathspec over every path)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pathspec
import pytest

from porter.pipeline.discover import DEFAULT_EXCLUDES, discover
from porter.pipeline.runner import display_path, forget_paths


def _tree(base: Path) -> Path:
    root = base / "proj"
    for rel in (
        "a.py",
        "b.pyi",
        "notes.txt",
        "pkg/__init__.py",
        "pkg/sub/deep.py",
        "pkg/build/gen.py",
        "pkg/venv2/keep.py",
        "build/x.py",
        "dist/y.py",
        "node_modules/z.py",
        "x/.venv/w.py",
        "x/site-packages/s.py",
        "x/__pycache__/c.py",
        "ignored/i.py",
        "pkg/sub/skip_me.py",
        "env/lib.py",
        "weird.py/inner.py",
        "caf\u00e9/m.py",
    ):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "pkg" / ".gitignore").write_text("sub/skip_me.py\n")
    os.symlink(root / "pkg", root / "link_back")  # a loop
    os.symlink(root / "a.py", root / "pkg" / "alias.py")  # a link to a file in the tree
    os.symlink(root / "missing.py", root / "broken.py")
    return root


@pytest.mark.parametrize("where", [".", "proj", "proj/pkg", "elsewhere"])
def test_names_are_display_paths(tmp_path, monkeypatch, where):
    root = _tree(tmp_path)
    cwd = tmp_path / where
    cwd.mkdir(exist_ok=True)
    monkeypatch.chdir(cwd)
    forget_paths()
    for given in (root, Path(os.path.relpath(root, cwd)), root / "pkg"):
        found = list(discover([given]))
        assert found, given
        for cand in found:
            assert cand.name == display_path(cand.path), (given, cand)


def test_default_excludes_by_name_match_pathspec(tmp_path, monkeypatch):
    """Without patterns of the user's, the walk skips the default folders by name; with any
    pattern it asks pathspec about every path. A pattern that matches nothing must not change
    what is found, nor the order."""
    root = _tree(tmp_path)
    monkeypatch.chdir(root)
    fast = [(c.path, c.problem) for c in discover([Path(".")])]
    slow = [(c.path, c.problem) for c in discover([Path(".")], ("no-such-file-anywhere.py",))]
    assert fast == slow
    names = {p.as_posix() for p, problem in fast if problem is None}
    assert names == {
        "a.py",
        "b.pyi",
        "caf\u00e9/m.py",
        "pkg/__init__.py",
        "pkg/sub/deep.py",
        "pkg/venv2/keep.py",
        "weird.py/inner.py",
    }
    spec = pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDES)
    assert not any(spec.match_file(n) for n in names)


def test_walk_order_is_os_walk_order(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    monkeypatch.chdir(root)
    expected = []
    for dirpath, dirnames, filenames in os.walk(".", followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
        expected += [os.path.normpath(os.path.join(dirpath, f)) for f in sorted(filenames)]
    found = [c.path.as_posix() for c in discover([Path(".")], respect_gitignore=False) if c.problem is None]
    assert found == [p for p in expected if p in found]
    assert (
        found.index("a.py")
        < found.index("pkg/__init__.py")
        < found.index("pkg/sub/deep.py")
        < found.index("weird.py/inner.py")
    )


def test_a_gitignore_is_cut_into_lines_where_git_cuts_it(tmp_path, monkeypatch):
    """git reads a .gitignore line by line at LF, dropping one CR before it; a form feed, \\x85,
    U+2028 or a lone CR is part of the line. Cut with str.splitlines, a comment holding a U+2028
    (`# build outputs<U+2028>*.py`) became a pattern that hid every Python file from a lint that
    git (`git status`, `git check-ignore`) shows."""
    (tmp_path / ".gitignore").write_bytes(
        "a.py\r\nb.py\rc.py\nd.py\x0ce.py\n# build outputs\u2028f.py\n# x\x85g.py\nh.py\x0bi.py\nj.py".encode()
    )
    for n in "abcdefghij":
        (tmp_path / f"{n}.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    forget_paths()
    found = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
    # the ones `git status --untracked=all` (git 2.39) lists for the same .gitignore
    assert found == ["b.py", "c.py", "d.py", "e.py", "f.py", "g.py", "h.py", "i.py"]


@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", ".git/info/exclude", "user"])
def test_a_nul_ends_a_pattern_line_as_git_reads_it(tmp_path, monkeypatch, where):
    """git reads each line of a patterns file as a C string: a NUL ends its pattern (`a.py`, a
    NUL and more leaves out `a.py`; a line that begins with one is empty; a CR before the LF is
    dropped first). porter kept the NUL in the pattern, which then matched no file: lint saw
    files `git status` leaves out (twenty-fourth read). Compared with `git ls-files -o
    --exclude-standard`."""
    repo, env = _plain_repo(tmp_path, monkeypatch)
    text = "a.py\0junk\n\0b.py\nc.py \0\r\nd\0*.py\n#\0e.py\nf.py\r\0\ng*\0\r\n"
    files = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g1.py", "sub/a.py", "sub/g2.py", "sub/m.py"]
    if where == "user":
        (tmp_path / "home" / ".config" / "git").mkdir(parents=True)
        (tmp_path / "home" / ".config" / "git" / "ignore").write_text(text)
        gitignores = {}
    else:
        gitignores = {where: text}
    found = _walked(repo, monkeypatch, files, gitignores)
    assert found == _git_lists(repo, env)
    assert "b.py" in found and "sub/m.py" in found and ("a.py" in found) == (where == "sub/.gitignore")


@pytest.mark.parametrize("value", ["0k", "0G", "0x0", "1k", "010", '" 1"', "maybe", "1_0", "0b1", '"1 "', "2g"])
def test_core_ignorecase_is_read_as_git_reads_a_boolean(tmp_path, monkeypatch, value):
    """git reads `core.ignoreCase = 0k` (a number with a unit: 0) as false, and stops at `maybe`,
    `1_0`, `0b1`, `"1 "` or `2g` (out of C's int: `fatal: bad boolean config value`); porter read
    the first as true through Python's `int(word, 0)` and folded case, and the others as true in
    silence (twenty-fourth read). Compared with `git ls-files -o --exclude-standard`; where git
    stops, a note says so and the setting is read as false."""
    import subprocess

    from porter.pipeline import discover as discovery

    repo, env = _plain_repo(tmp_path, monkeypatch)
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f"[core]\n\tignoreCase = {value}\n")
    listed = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=repo, env=env, capture_output=True)
    found = _walked(repo, monkeypatch, ["case_a.py", "m.py"], {".gitignore": "CASE_*.py\n"})
    refused = [note for note in discovery.NOTES if "git refuses core.ignoreCase" in note]
    if listed.returncode == 0:
        assert found == _git_lists(repo, env) and not refused
    else:
        assert b"bad boolean config value" in listed.stderr
        assert found == ["case_a.py", "m.py"] and len(refused) == 1, (found, discovery.NOTES)


@pytest.mark.parametrize("ignorecase", ["true", "false"])
def test_a_dot_git_folder_in_another_case_is_left_out_where_the_repository_folds_case(
    tmp_path, monkeypatch, ignorecase
):
    """Where `core.ignoreCase` is true git skips a folder named `.git` in any case (`.GIT/`,
    `x/.Git/`: dir.c `treat_path` compares the name with `fspathcmp`); porter walked them and
    lint read files `git status` never lists (twenty-seventh read). Where it is false, git
    lists them and so does porter. Compared with `git ls-files -o --exclude-standard`."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", ignorecase], env=env, check=True)
    files = ["m.py", ".GIT/a.py", "x/.Git/b.py", "x/.gitx/c.py", "x/y/.GiT/d.py"]
    found = _walked(repo, monkeypatch, files, {})
    assert found == _git_lists(repo, env)
    assert ("x/.Git/b.py" in found) == (ignorecase == "false") and "x/.gitx/c.py" in found


@pytest.mark.parametrize("repaired", [False, True])
def test_a_worktree_whose_main_repository_moved_is_said(tmp_path, monkeypatch, repaired):
    """A worktree's `.git` file names a folder of the main repository's; moved, that folder is
    gone and git stops there (`fatal: not a git repository`): `git status` lists nothing, and
    the main repository's `info/exclude` is read by no one. porter linted the worktree with its
    `.gitignore` files alone and said nothing (twenty-seventh read); now a note says so once.
    Once repaired (`git worktree repair`), git lists and porter walks the same files, unsaid."""
    import subprocess

    from porter.pipeline import discover as discovery

    env = _git_env(
        tmp_path,
        monkeypatch,
        GIT_AUTHOR_NAME="a",
        GIT_AUTHOR_EMAIL="a@b",
        GIT_COMMITTER_NAME="a",
        GIT_COMMITTER_EMAIL="a@b",
    )
    main, tree = tmp_path / "main", tmp_path / "wt"
    subprocess.run(["git", "init", "-q", str(main)], env=env, check=True)
    subprocess.run(["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], env=env, check=True)
    (main / ".git" / "info" / "exclude").write_text("local_*.py\n")
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tree)], env=env, check=True)
    main.rename(tmp_path / "moved")
    if repaired:
        subprocess.run(["git", "-C", str(tmp_path / "moved"), "worktree", "repair", str(tree)], env=env, check=True)
    listed = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=tree, env=env, capture_output=True)
    found = _walked(tree, monkeypatch, ["m.py", "local_a.py"], {".gitignore": "gen_*.py\n", "gen_a.py": ""})
    said = [note for note in discovery.NOTES if "git refuses" in note and "main repository moved" in note]
    if repaired:
        assert found == _git_lists(tree, env) == ["m.py"] and not said
    else:
        assert b"not a git repository" in listed.stderr
        assert found == ["local_a.py", "m.py"] and len(said) == 1, discovery.NOTES


def test_a_worktree_below_the_top_whose_main_repository_moved_is_said(tmp_path, monkeypatch):
    """The same moved worktree, found below the folder given: git from the top lists its files
    as the top repository's (its `.git` makes no repository), and the walk reads them so; but it
    said nothing, where the note covered only such a file at or above the top (twenty-seventh
    read's leftover). Now said once, the walk unchanged (compared with git)."""
    import subprocess

    from porter.pipeline import discover as discovery

    repo, env = _plain_repo(tmp_path, monkeypatch)
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], env=env, check=True)
    who = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["git", "-C", str(main), *who, "commit", "-q", "--allow-empty", "-m", "x"], env=env, check=True)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(repo / "w")], env=env, check=True)
    main.rename(tmp_path / "moved")
    found = _walked(repo, monkeypatch, ["w/m.py", "w/gen_a.py", "a.py"], {".gitignore": "gen_*.py\n"})
    said = [note for note in discovery.NOTES if "git refuses" in note and "main repository moved" in note]
    assert found == _git_lists(repo, env) == ["a.py", "w/m.py"]
    assert len(said) == 1 and "w" in said[0] and "repository above" in said[0], discovery.NOTES


def test_a_stale_dot_git_makes_no_repository_of_its_own(tmp_path, monkeypatch):
    """git reads a folder as a repository of its own only where its `.git` is one
    (`is_nonbare_repository_dir`); a submodule's checkout copied out of its superproject (its
    `gitdir:` names nothing), an empty `.git/`, a dangling link or a `.git` of other text is
    entered with the patterns above it. porter read each as a repository of its own, so the
    top's `gen_*.py` did not apply there, from the top or from that folder (twenty-fourth read).
    Compared with `git ls-files -o --exclude-standard`; a real nested clone still ends them."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    (repo / ".gitignore").write_text("gen_*.py\n")
    stale = ["stale", "empty", "dangling", "other", "headless", "clone"]
    for name in stale:
        (repo / name).mkdir()
    (repo / "stale" / ".git").write_text("gitdir: ../../.git/modules/stale\n")
    (repo / "empty" / ".git").mkdir()
    (repo / "dangling" / ".git").symlink_to(tmp_path / "nowhere")
    (repo / "other" / ".git").write_text("not a gitdir line\n")
    (repo / "headless" / ".git" / "objects").mkdir(parents=True)
    (repo / "headless" / ".git" / "refs").mkdir()
    subprocess.run(["git", "init", "-q", str(repo / "clone")], env=env, check=True)
    found = _walked(repo, monkeypatch, [f"{name}/{f}" for name in stale for f in ("a.py", "gen_b.py")], {})
    assert found == sorted([f"{name}/a.py" for name in stale[:-1]] + ["clone/a.py", "clone/gen_b.py"])
    assert [n for n in found if not n.startswith("clone/")] == _git_lists(repo, env)
    for name in stale[:-1]:
        monkeypatch.chdir(repo / name)
        forget_paths()
        assert [c.path.as_posix() for c in discover([Path(".")]) if c.problem is None] == ["a.py"], name


def test_a_dot_git_file_whose_path_holds_a_nul_is_read_as_git_reads_it(tmp_path, monkeypatch):
    """git reads a `.git` file's `gitdir:` path as a C string: it ends at a NUL. porter passed
    the NUL to `os.stat`, and `lint` ended in "internal error: ValueError: embedded null byte",
    from the top and from that folder (twenty-fifth read). Compared with git: the path before
    the NUL names nothing (entered with the top's patterns) or a git folder (a repository)."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    (repo / ".gitignore").write_text("gen_*.py\n")
    for name in ("stale", "real"):
        (repo / name).mkdir()
    (repo / "stale" / ".git").write_bytes(b"gitdir: nowhere\0junk\n")
    _git_folder(repo / "real" / "gd")
    (repo / "real" / ".git").write_bytes(b"gitdir: gd\0junk\n")
    found = _walked(repo, monkeypatch, [f"{name}/{f}" for name in ("stale", "real") for f in ("a.py", "gen_b.py")], {})
    assert found == ["real/a.py", "real/gen_b.py", "stale/a.py"]
    assert [n for n in found if n.startswith("stale/")] == _git_lists(repo, env)
    listed = subprocess.run(["git", "ls-files", "-o", "--exclude-standard"], cwd=repo, env=env, capture_output=True)
    assert b"real/\n" in listed.stdout  # (git: a repository of its own)
    monkeypatch.chdir(repo / "stale")
    forget_paths()
    assert [c.path.as_posix() for c in discover([Path(".")]) if c.problem is None] == ["a.py"]


def test_a_dot_git_file_kept_as_a_link_names_its_repository_s_info_exclude(tmp_path, monkeypatch):
    """git follows a link at `.git` (`read_gitfile_gently` stats and opens it): a `.git` file kept
    as a link (to `gitdir: ...` in a file beside it) names the repository's git folder, whose
    `info/exclude` applies. porter read no linked `.git` file, so that `info/exclude` was not read,
    from the repository's top or as a nested one, and lint saw what `git status` leaves out
    (twenty-fifth read). Compared with git from the repository's top."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    work = repo / "n"
    subprocess.run(["git", "init", "-q", f"--separate-git-dir={tmp_path / 'n.git'}", str(work)], env=env, check=True)
    (tmp_path / "n.git" / "info" / "exclude").write_text("local_*.py\n")
    (work / ".git").rename(work / "gitfile")
    (work / ".git").symlink_to("gitfile")
    assert _walked(repo, monkeypatch, ["n/a.py", "n/local_b.py"], {}) == ["n/a.py"]
    assert _walked(work, monkeypatch, [], {}) == ["a.py"] == _git_lists(work, env)


def test_a_worktree_s_commondir_kept_as_a_link_names_the_common_folder(tmp_path, monkeypatch):
    """git reads a worktree's `commondir` through a link (`strbuf_read_file` opens it), so the
    common folder's `info/exclude` applies; porter read no linked `commondir`: it took the
    worktree's own git folder for the common one and read no `info/exclude` (twenty-fifth read).
    Compared with git."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, env=env, check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], cwd=repo, env=env, check=True)
    (repo / ".git" / "info" / "exclude").write_text("local_*.py\n")
    commondir = repo / ".git" / "worktrees" / "wt" / "commondir"
    (tmp_path / "commondir").write_bytes(commondir.read_bytes())
    commondir.unlink()
    commondir.symlink_to(tmp_path / "commondir")
    assert (
        _walked(tmp_path / "wt", monkeypatch, ["a.py", "local_b.py"], {})
        == ["a.py"]
        == _git_lists(tmp_path / "wt", env)
    )


_CEILINGS = {
    # GIT_CEILING_DIRECTORIES, spelled from the test's folder ("{t}")
    "the repository": "{t}/repo",
    "the repository, with a slash": "{t}/repo/",
    "a link to it": "{t}/link",
    "a link to it, after an empty entry (kept as written)": ":{t}/link",
    "a relative one (skipped)": "repo",
    "the walk's top itself": "{t}/repo/sub",
    "above the repository": "/nowhere:{t}",
    "below the walk's top": "{t}/repo/sub/deep",
}


@pytest.mark.parametrize("ceiling", sorted(_CEILINGS))
def test_a_ceiling_stops_the_search_for_the_repository_as_git_stops(tmp_path, monkeypatch, ceiling):
    """git looks for the repository from the walk's top up to a ceiling of
    `GIT_CEILING_DIRECTORIES` (the ceiling itself not read): below one, it finds none, so no
    pattern above the top applies (`git status` there stops). porter found the repository
    whatever the ceilings said, and its `.gitignore` and `info/exclude` left out files there
    (twenty-fourth read's leftover). Compared with git: its listing where it finds the
    repository, else every file."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    (tmp_path / "link").symlink_to(repo)
    (repo / ".gitignore").write_text("gen_*.py\n")
    (repo / ".git" / "info" / "exclude").write_text("local_*.py\n")
    env["GIT_CEILING_DIRECTORIES"] = _CEILINGS[ceiling].format(t=tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", env["GIT_CEILING_DIRECTORIES"])
    found = _walked(repo / "sub", monkeypatch, ["a.py", "gen_b.py", "local_c.py", "deep/d.py"], {})
    if subprocess.run(["git", "rev-parse"], cwd=repo / "sub", env=env, capture_output=True).returncode:
        assert found == ["a.py", "deep/d.py", "gen_b.py", "local_c.py"]
    else:
        assert found == _git_lists(repo / "sub", env) == ["a.py", "deep/d.py"]
    stopped = {"the repository", "the repository, with a slash", "a link to it"}
    assert (found == ["a.py", "deep/d.py"]) == (ceiling not in stopped), found


@pytest.mark.parametrize("across", [None, "0", "1", "maybe"])
def test_the_search_for_the_repository_stops_at_a_mount_point_as_git_s(tmp_path, monkeypatch, across):
    """git does not look for the repository above a mount point unless
    `GIT_DISCOVERY_ACROSS_FILESYSTEM` is true (`Stopping at filesystem boundary`): a walk from
    a folder mounted inside a repository reads no pattern of it. porter found the repository
    above and left out what its `.gitignore` names (twenty-fourth read's leftover; compared
    with git by hand on a tmpfs mounted in a repository, as a test cannot mount: here the
    folder's device is said to be another). A value git refuses is read as false, with a note."""
    from porter.pipeline import discover as discovery

    repo, _ = _plain_repo(tmp_path, monkeypatch)
    (repo / ".gitignore").write_text("gen_*.py\n")
    (repo / "mnt").mkdir()
    mounted = (repo / "mnt").resolve()
    device = lambda folder: -1 if folder == mounted else os.stat(folder).st_dev  # noqa: E731
    monkeypatch.setattr(discovery, "_device", device, raising=False)
    if across is not None:
        monkeypatch.setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", across)
    discovery.NOTES.clear()
    found = _walked(repo / "mnt", monkeypatch, ["a.py", "gen_b.py"], {})
    assert found == (["a.py"] if across == "1" else ["a.py", "gen_b.py"])
    assert any("GIT_DISCOVERY_ACROSS_FILESYSTEM" in n for n in discovery.NOTES) == (across == "maybe")
    assert _walked(repo, monkeypatch, ["mnt/a.py", "mnt/gen_b.py"], {}) == ["mnt/a.py"]  # (git's walk: no device check)


_MOUNTED = """
set -e
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs none "$1"
printf 'x = 1\\n' > "$1/a.py"; printf 'x = 1\\n' > "$1/gen_b.py"
cd "$1"
git ls-files -o --exclude-standard 2>&1 || true
echo "--- porter"
"$2" -c 'from pathlib import Path
from porter.pipeline.discover import discover
print("\\n".join(sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)))'
"""


@pytest.mark.parametrize("across", [None, "1"])
def test_the_search_stops_at_a_real_mount_point_as_git_s(tmp_path, monkeypatch, across):
    """The test above stands in the device; this one mounts a tmpfs inside a repository, in a mount
    namespace of its own (`unshare -m`: root only, nothing outside sees it), and compares git's
    listing there with porter's walk (twenty-fifth read; the twenty-fourth's comparison by hand)."""
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("mounting needs root and unshare(1)")
    repo, env = _plain_repo(tmp_path, monkeypatch)
    (repo / ".gitignore").write_text("gen_*.py\n")
    (repo / "mnt").mkdir()
    env = {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    if across is not None:
        env["GIT_DISCOVERY_ACROSS_FILESYSTEM"] = across
    args = ["unshare", "-m", "sh", "-c", _MOUNTED, "sh", str(repo / "mnt"), sys.executable]
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0 and "mount" in out.stderr:
        pytest.skip(f"no mount here: {out.stderr.strip()[:200]}")
    git, _, porter = out.stdout.partition("--- porter\n")
    assert out.returncode == 0 and porter, out.stderr
    stopped = "Stopping at filesystem boundary" in git
    assert stopped == (across is None), git
    assert porter.split() == (["a.py", "gen_b.py"] if stopped else git.split()), (git, porter)


def test_a_gitignore_that_cannot_be_read_is_said(tmp_path, monkeypatch):
    """A `.gitignore` the user cannot read (another user's, mode 0600): git warns "unable to
    access '.gitignore': Permission denied" and reads none of it; porter read none in silence,
    so lint saw the files it names and nothing said why (twenty-fourth read's leftover;
    compared with git by hand as uid 65534; here the read is made to fail, as root reads any
    file). A missing one says nothing."""
    from porter.core.reading import Unreadable
    from porter.pipeline import discover as discovery

    repo, _ = _plain_repo(tmp_path, monkeypatch)
    (repo / ".gitignore").write_text("gen_*.py\n")
    real = discovery.read_regular

    def read(path, limit):
        if Path(path).name == ".gitignore":
            raise Unreadable("permission denied (cannot read)", skipped=False)
        return real(path, limit)

    monkeypatch.setattr(discovery, "read_regular", read)
    discovery.NOTES.clear()
    assert _walked(repo, monkeypatch, ["a.py", "gen_b.py"], {}) == ["a.py", "gen_b.py"]
    assert [n for n in discovery.NOTES if ".gitignore" in n] == [
        "cannot read .gitignore (permission denied (cannot read)): its ignore patterns are not read, as git reads none"
    ]


def _package_tree(base: Path) -> Path:
    root = base / "proj"
    for rel in ("top.py", "pkg/__init__.py", "pkg/m.py", "pkg/sub/n.py", "plain/o.py", "dirinit/__init__.py/x.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    (root / "dirinit" / "p.py").write_text("x = 1\n")  # its `__init__.py` is a folder: no package
    (root / "linked").mkdir()
    (root / "linked" / "q.py").write_text("x = 1\n")
    os.symlink(root / "pkg" / "m.py", root / "linked" / "__init__.py")  # a link to a file: a package
    (root / "broken").mkdir()
    (root / "broken" / "r.py").write_text("x = 1\n")
    os.symlink(root / "missing.py", root / "broken" / "__init__.py")  # a broken link: no package
    return root


@pytest.mark.parametrize("where", ["root", "above", "inside"])
def test_the_walk_tells_whether_each_folder_is_a_package(tmp_path, monkeypatch, where):
    """The walk reads whether a file's folder holds `__init__.py` off the folder's listing
    (`Candidate.package`); a warm lint asked `folder_is_package` of every folder, a `resolve`
    (an lstat per part of the path) and a `stat` each: 40 ms of the 1.2M-line corpus' 0.53 s.
    The answers are `folder_is_package`'s: an `__init__.py` that is a folder or a broken link
    makes no package, a link to a file does."""
    from porter.core.reading import folder_is_package

    root = _package_tree(tmp_path)
    monkeypatch.chdir({"root": root, "above": tmp_path, "inside": root / "pkg"}[where])
    forget_paths()
    for given in (Path("."), root, Path(os.path.relpath(root))):
        found = [c for c in discover([given]) if c.problem is None]
        assert found, given
        for cand in found:
            assert cand.package is not None, cand
            assert cand.package == folder_is_package(cand.path), cand
        if given == Path("."):
            continue  # (from inside, "." is pkg/)
        packages = {Path(c.where).relative_to(Path(given)).as_posix(): c.package for c in found}
        assert len(packages) == 9, packages
        assert {p for p, pkg in packages.items() if pkg} == {
            "pkg/__init__.py",
            "pkg/m.py",
            "linked/q.py",
        }, packages


@pytest.mark.parametrize("where", ["root", "above", "inside"])
def test_a_walked_file_s_path_is_spelled_as_its_path_object_would_be(tmp_path, monkeypatch, where):
    """The walk names a file with a string (`Candidate.where`); `Candidate.path`, the Path, is
    made only when asked. The string is the Path's own spelling (no `./`, no doubled `/`), so
    whatever reads one or the other reads the same file under the same name."""
    root = _tree(tmp_path)
    monkeypatch.chdir({"root": root, "above": tmp_path, "inside": root / "pkg"}[where])
    forget_paths()
    for given in (Path("."), root, Path(os.path.relpath(root)), Path(os.path.relpath(root) + "/"), root / "pkg"):
        for cand in discover([given]):
            assert str(cand.path) == os.fspath(cand.where), (given, cand)
            assert cand.path == Path(given, Path(cand.path).relative_to(given)), (given, cand)


def test_a_gitignore_that_is_a_link_is_not_read(tmp_path, monkeypatch):
    """git >= 2.32 reads no `.gitignore` that is a symbolic link ("unable to access
    '.gitignore': Too many levels of symbolic links") and lists the files it names; porter
    followed the link and left them out of the run."""
    (tmp_path / "rules.txt").write_text("a.py\n")
    (tmp_path / ".gitignore").symlink_to("rules.txt")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").symlink_to("../rules.txt")
    (tmp_path / "sub" / "inner").mkdir()
    (tmp_path / "sub" / "inner" / ".gitignore").write_text("b.py\n")
    for name in ("a.py", "b.py", "sub/a.py", "sub/inner/a.py", "sub/inner/b.py"):
        (tmp_path / name).write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    forget_paths()
    found = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None and c.path.suffix == ".py")
    # what `git status --untracked=all` (git 2.39) lists
    assert found == ["a.py", "b.py", "sub/a.py", "sub/inner/a.py"]


def _walked(tmp_path, monkeypatch, files, gitignores):
    for name, text in gitignores.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    forget_paths()
    return sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None and c.path.suffix == ".py")


def test_a_negation_in_a_deeper_gitignore_keeps_the_file(tmp_path, monkeypatch):
    """As in git, the nearest `.gitignore` with a matching pattern decides: `src/.gitignore`'s
    `!gen_keep.py` keeps a file the root's `gen_*.py` leaves out. The first `.gitignore` that
    matched decided, and lint hid a file `git status` lists."""
    found = _walked(
        tmp_path,
        monkeypatch,
        ["gen_a.py", "src/gen_keep.py", "src/gen_b.py", "src/deep/gen_keep.py", "src/deep/x.py"],
        {".gitignore": "gen_*.py\n", "src/.gitignore": "!gen_keep.py\n", "src/deep/.gitignore": "x.py\n"},
    )
    # what `git status --untracked=all` (git 2.39) lists
    assert found == ["src/deep/gen_keep.py", "src/gen_keep.py"]


@pytest.mark.parametrize(
    "pattern, ignored, kept",
    [
        ("[[:alpha:]].py", ["a.py", "Z.py"], ["1.py", "-.py"]),  # pathspec: the class `[:alph` and a `]`
        ("[[:digit:]x].py", ["5.py", "x.py"], ["a.py"]),
        ("[!]].py", ["x.py"], ["].py"]),  # `[^/]]` wanted a `]` after the class
        ("[]a].py", ["].py", "a.py"], ["b.py"]),
        ("[\\]].py", ["].py"], ["\\.py"]),  # an escaped `]` in a class: pathspec read a `\\` and a `]`
        ("[a\\-c].py", ["a.py", "-.py", "c.py"], ["b.py"]),
        ("m[.py", [], ["m[.py"]),  # no closing `]`: git's pattern matches nothing
        ("[[:nope:]].py", [], ["n.py", "].py"]),  # an unknown class: likewise
        ("?.py", ["a.py"], ["é.py"]),  # git's `?` is one byte, `é` two
        ("[é].py", [], ["é.py"]),  # a class of two bytes never matches both
        ("a.py\t", [], ["a.py"]),  # git trims trailing spaces only: the tab is part of the pattern
        ("\ufeffa.py", ["a.py"], ["b.py"]),  # git skips a byte order mark at the start of the file
        ("*voilà", ["xvoilà/m.py"], ["b.py"]),  # `à` ends in byte A0, a space to Python
        ("a.py\\ ", [], ["a.py"]),  # an escaped space stays
    ],
)
def test_a_gitignore_pattern_reads_brackets_and_bytes_as_git_does(tmp_path, monkeypatch, pattern, ignored, kept):
    """Each verdict is what `git status --untracked=all` (git 2.39) gives for the same
    `.gitignore` line (and what a differential of porter against git over random trees and
    patterns found wrong, nineteenth read)."""
    found = _walked(tmp_path, monkeypatch, [*ignored, *kept], {".gitignore": pattern + "\n"})
    assert found == sorted(kept)


def test_a_class_that_python_reads_as_nested_says_nothing(tmp_path, monkeypatch):
    """`[[:digit:]]` reached Python's `re` as `[[:digit:]\\]`: a "FutureWarning: Possible nested
    set" and porter's own source line were printed on the user's terminal."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _walked(tmp_path, monkeypatch, ["a.py"], {".gitignore": "[[:digit:]]*\n[[=a=]]\n[[.a.]]\n"})


def _git_folder(folder: Path, *, head_only: bool = False) -> None:
    """What makes `folder` a git folder to git (`is_git_directory`): a `HEAD` naming a branch, and
    `objects/` and `refs/` (a worktree's git folder has them in its common folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    if not head_only:
        (folder / "objects").mkdir(exist_ok=True)
        (folder / "refs").mkdir(exist_ok=True)


def test_gitignore_files_above_the_walk_s_top_apply_below_it(tmp_path, monkeypatch):
    """`porter lint src` read what `porter lint .` leaves out: the `.gitignore` files between the
    repository's root and the folder given, and the repository's `.git/info/exclude`, were not
    read. They are now, as git reads them (`git ls-files -o --exclude-standard src`); a folder
    given by name is still walked (as ruff walks it), whatever a pattern above says of it."""
    _git_folder(tmp_path / ".git")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("local_*.py\n")
    found = _walked(
        tmp_path,
        monkeypatch,
        ["src/gen/a.py", "src/m.py", "src/x_pb2.py", "src/local_n.py", "src/pkg/keep_pb2.py", "src/pkg/b.py"],
        {".gitignore": "gen/\n*_pb2.py\n", "src/pkg/.gitignore": "!keep_pb2.py\n"},
    )
    assert found == ["src/m.py", "src/pkg/b.py", "src/pkg/keep_pb2.py"]
    forget_paths()
    below = sorted(c.path.as_posix() for c in discover([Path("src")]) if c.problem is None)
    assert below == found
    forget_paths()
    assert [c.path.as_posix() for c in discover([Path("src/gen")]) if c.problem is None] == ["src/gen/a.py"]


def test_a_worktree_s_info_exclude_is_its_repository_s(tmp_path, monkeypatch):
    """Where `.git` is a file (`git worktree add`, a submodule), `info/exclude` is read from the
    folder its `gitdir:` names, through that folder's `commondir`."""
    common = tmp_path / "main.git"
    (common / "info").mkdir(parents=True)
    (common / "info" / "exclude").write_text("scratch_*.py\n")
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "worktrees" / "wt" / "commondir").write_text("../..\n")
    _git_folder(common)
    _git_folder(common / "worktrees" / "wt", head_only=True)
    work = tmp_path / "wt"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    found = _walked(work, monkeypatch, ["scratch_1.py", "m.py"], {})
    assert found == ["m.py"]


def test_only_a_pattern_that_names_the_path_itself_decides(tmp_path, monkeypatch):
    """git tries each path against the patterns for that path; its folders were tried as the
    walk entered them. `!x*` in `sub/.gitignore` matches the folder `xdir` above
    `sub/xdir/m.py`, and must not keep it where the root's `*.py` leaves it out (git 2.39
    ignores it)."""
    found = _walked(
        tmp_path,
        monkeypatch,
        ["sub/xdir/m.py", "sub/m.py", "sub/xdir/y.py"],
        {".gitignore": "*.py\n!y.py\n", "sub/.gitignore": "!x*\n"},
    )
    assert found == ["sub/xdir/y.py"]


def test_a_negation_reads_its_pattern_as_the_pattern_alone_is_read(tmp_path, monkeypatch):
    """`/` is no pattern, for git and for pathspec; pathspec read `!/` as every path below a
    folder, and kept `x/k.py`, which `x` leaves out (git 2.39 lists only m.py). `!!a` keeps a
    file named `!a`, `!#a` one named `#a`."""
    found = _walked(
        tmp_path,
        monkeypatch,
        ["x/k.py", "m.py", "!a.py", "#a.py", "b.py"],
        {".gitignore": "x\n!/\n*a.py\nb.py\n!!a.py\n!#a.py\n"},
    )
    assert found == ["!a.py", "#a.py", "m.py"]


def test_a_nested_repository_reads_its_own_ignores(tmp_path, monkeypatch):
    """A folder holding `.git` (a submodule, a clone inside the tree) is a repository of its
    own: git there reads its `.gitignore` files and `info/exclude`, not the outer ones (git 2.39
    in the submodule lists `top_x.py`, which the outer `top_*.py` would leave out)."""
    _git_folder(tmp_path / ".git")
    _git_folder(tmp_path / ".git" / "modules" / "sub")
    (tmp_path / ".git" / "modules" / "sub" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "modules" / "sub" / "info" / "exclude").write_text("scratch_*.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    found = _walked(
        tmp_path,
        monkeypatch,
        ["top_a.py", "sub/top_x.py", "sub/scratch_1.py", "sub/m.py", "sub/d/top_y.py", "sub/d/n.py"],
        {".gitignore": "top_*.py\n", "sub/d/.gitignore": "n.py\n"},
    )
    assert found == ["sub/d/top_y.py", "sub/m.py", "sub/top_x.py"]


def _git_lists(top: Path, env: dict[str, str]) -> list[str]:
    import subprocess

    out = subprocess.run(
        ["git", "-c", "core.fsmonitor=", "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=top,
        env=env,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(n for n in out.split("\0") if n.endswith(".py"))


@pytest.mark.parametrize("variable", ["XDG_CONFIG_HOME", "HOME"])
def test_the_user_s_git_ignore_file_applies_inside_a_repository(tmp_path, monkeypatch, variable):
    """git reads the user's own ignores, `$XDG_CONFIG_HOME/git/ignore` (else
    `~/.config/git/ignore`), after a repository's `info/exclude`; porter did not, and lint saw
    more files than `git status` where a user keeps ignores there. Compared with `git ls-files
    -o --exclude-standard` (HOME and XDG_CONFIG_HOME in a tmp folder); outside a repository
    nothing of it is read, as git reads nothing there."""
    import subprocess

    user = tmp_path / "user"
    ignore = user / "git" / "ignore" if variable == "XDG_CONFIG_HOME" else user / ".config" / "git" / "ignore"
    ignore.parent.mkdir(parents=True)
    real = tmp_path / "dotfiles" / "ignore"  # (for HOME, a link to it, as a dotfiles manager makes: git follows it)
    real.parent.mkdir()
    real.write_text("scratch_*.py\n!scratch_keep.py\n/top_only.py\nnotes/\n")
    if variable == "HOME":
        ignore.symlink_to(real)
    else:
        real.rename(ignore)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("XDG_CONFIG_HOME", None)
    env.update(HOME=str(user if variable == "HOME" else tmp_path / "nohome"), GIT_CONFIG_NOSYSTEM="1")
    if variable == "XDG_CONFIG_HOME":
        env["XDG_CONFIG_HOME"] = str(user)
    for name in ("HOME", "XDG_CONFIG_HOME"):
        if name in env:
            monkeypatch.setenv(name, env[name])
        else:
            monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    (repo / ".git" / "info" / "exclude").write_text("!scratch_info.py\n")
    files = ["m.py", "scratch_a.py", "scratch_keep.py", "scratch_info.py", "top_only.py", "sub/top_only.py"]
    files += ["sub/scratch_b.py", "notes/n.py", "sub/notes/n.py"]
    found = _walked(repo, monkeypatch, files, {"sub/.gitignore": "!scratch_b.py\n"})
    assert found == _git_lists(repo, env)
    assert "scratch_a.py" not in found and "m.py" in found
    outside = tmp_path / "plain"
    outside.mkdir()
    assert _walked(outside, monkeypatch, ["scratch_a.py"], {}) == ["scratch_a.py"]


def _git_env(tmp_path, monkeypatch, **extra: str) -> dict[str, str]:
    """An environment of the user's own (HOME in tmp, no system config, no GIT_* of the
    caller), set for porter too; the one git is run with."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "XDG_CONFIG_HOME"}
    env.update({"HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1", **extra})
    (tmp_path / "home").mkdir(exist_ok=True)
    for name in [k for k in os.environ if k.startswith("GIT_") or k == "XDG_CONFIG_HOME"]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


_EXCLUDES_FILE_CASES = {
    # where `core.excludesFile` is set: (the git config lines, the file's place)
    "repository, relative": ("repo", "[core]\n\texcludesFile = ../shared/ignore\n", "shared/ignore"),
    "global, ~": ("global", "[core]\n\texcludesfile = ~/dot/ignore\n", "home/dot/ignore"),
    "global, include": ("global", "[include]\n\tpath = ~/dot/more.gitconfig\n", "home/dot/ignore"),
    "global, includeIf gitdir": (
        "global",
        '[includeIf "gitdir:**/repo/"]\n\tpath = ~/dot/more.gitconfig\n',
        "home/dot/ignore",
    ),
    "repository, empty": ("repo", "[core]\n\texcludesFile =\n", None),
}


@pytest.mark.parametrize("case", sorted(_EXCLUDES_FILE_CASES))
def test_core_excludes_file_in_git_s_configuration_applies(tmp_path, monkeypatch, case):
    """A `core.excludesFile` set in git's configuration (the repository's or the user's, `~`,
    `include`, `includeIf`; relative to the work tree's top) replaces the default
    `~/.config/git/ignore`: porter read only the default, so lint saw what `git status`
    leaves out (nineteenth read's leftover). Compared with `git ls-files -o
    --exclude-standard`; an empty value reads no file at all, as git."""
    import subprocess

    where, config, place = _EXCLUDES_FILE_CASES[case]
    env = _git_env(tmp_path, monkeypatch)
    (tmp_path / "home" / "dot").mkdir()
    (tmp_path / "home" / "dot" / "more.gitconfig").write_text("[core]\n\texcludesFile = ~/dot/ignore\n")
    default = tmp_path / "home" / ".config" / "git" / "ignore"
    default.parent.mkdir(parents=True)
    default.write_text("default_*.py\n")
    if place is not None:
        (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / place).write_text("scratch_*.py\n!scratch_keep.py\n")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    target = repo / ".git" / "config" if where == "repo" else tmp_path / "home" / ".gitconfig"
    with open(target, "a") as fh:
        fh.write(config)
    files = ["m.py", "scratch_a.py", "scratch_keep.py", "sub/scratch_b.py", "default_c.py"]
    found = _walked(repo, monkeypatch, files, {})
    assert found == _git_lists(repo, env)
    assert "default_c.py" in found and ("scratch_a.py" in found) == (place is None), found


def _plain_repo(tmp_path, monkeypatch) -> tuple[Path, dict[str, str]]:
    import subprocess

    repo = tmp_path / "repo"
    env = _git_env(tmp_path, monkeypatch, XDG_CONFIG_HOME="")
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    return repo, env


def test_a_linked_info_exclude_is_read_as_git_reads_it(tmp_path, monkeypatch):
    """git follows a link at `.git/info/exclude` (only a `.gitignore` in the tree is opened
    without following one, `O_NOFOLLOW`); porter read no linked `info/exclude`, and lint saw
    what `git status` leaves out."""
    repo, env = _plain_repo(tmp_path, monkeypatch)
    (tmp_path / "shared").write_text("linked_*.py\n")
    (repo / ".git" / "info" / "exclude").unlink()
    (repo / ".git" / "info" / "exclude").symlink_to(tmp_path / "shared")
    found = _walked(repo, monkeypatch, ["m.py", "linked_a.py"], {})
    assert found == _git_lists(repo, env) == ["m.py"]


def test_a_relative_home_is_read_from_the_work_tree_s_top(tmp_path, monkeypatch):
    """An empty `XDG_CONFIG_HOME` counts as unset, and a relative `HOME` (or
    `XDG_CONFIG_HOME`) names a place under the work tree's top, where git reads it: porter
    read it from the working folder, so `porter lint .` in a subfolder missed it."""
    repo, env = _plain_repo(tmp_path, monkeypatch)
    (repo / "rel" / ".config" / "git").mkdir(parents=True)
    (repo / "rel" / ".config" / "git" / "ignore").write_text("relative_*.py\n")
    files = ["m.py", "relative_b.py", "sub/relative_c.py", "sub/n.py"]
    env["HOME"] = "rel"
    monkeypatch.setenv("HOME", "rel")
    assert _walked(repo, monkeypatch, files, {}) == _git_lists(repo, env) == ["m.py", "sub/n.py"]
    monkeypatch.chdir(repo / "sub")
    assert [c.path.as_posix() for c in discover([Path(".")]) if c.problem is None] == ["n.py"]


def test_an_empty_home_is_the_root_folder_s(tmp_path, monkeypatch):
    """git reads `$HOME/.config/git/ignore` where HOME is set, even empty: `/.config/git/ignore`
    (`strace` of git 2.39 shows `access("/.config/git/ignore")`); porter read nothing. Checked
    by the path porter asks for (the test does not write to `/`)."""
    from porter.pipeline import discover as discovery

    repo, _ = _plain_repo(tmp_path, monkeypatch)
    asked: list[str] = []
    real_read = discovery._read_patterns
    monkeypatch.setattr(
        discovery, "_read_patterns", lambda path, **kw: asked.append(path.as_posix()) or real_read(path, **kw)
    )
    monkeypatch.setenv("HOME", "")
    forget_paths()
    list(discover([repo]))
    assert "/.config/git/ignore" in asked, asked


def test_git_is_asked_about_the_walk_s_repository_and_said_missing_once(tmp_path, monkeypatch):
    """`core.excludesFile` is asked of git in the repository the walk is in: a `GIT_DIR` and
    `GIT_WORK_TREE` of the environment (a hook's in another repository) naming another work
    tree do not answer for it; where git is not installed the run says once that the setting
    is not read, and still lints."""
    import subprocess
    import sys

    env = _git_env(tmp_path, monkeypatch)
    repo, other = tmp_path / "repo", tmp_path / "other"
    for r in (repo, other):
        subprocess.run(["git", "init", "-q", str(r)], env=env, check=True)
    (repo / "ign").write_text("scratch_*.py\n")
    subprocess.run(["git", "-C", str(repo), "config", "core.excludesFile", "ign"], env=env, check=True)
    subprocess.run(["git", "-C", str(other), "config", "core.excludesFile", "/nonexistent"], env=env, check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert _walked(repo, monkeypatch, ["m.py", "scratch_a.py"], {}) == ["m.py"]
    for name in ("m.py", "scratch_a.py"):
        (repo / name).write_text("import torch\nx = torch.zeros(1).cuda()\n")
    run_env = {**env, "PATH": str(tmp_path / "nogit"), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, "-m", "porter", "lint", ".", "-t", "xla", "--no-cache", "--output-format", "concise"],
        cwd=repo,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stderr.count("git is not installed") == 1, out.stderr
    assert "scratch_a.py" in out.stdout and "m.py" in out.stdout, out.stdout


@pytest.mark.parametrize("named", ["GIT_DIR and GIT_WORK_TREE", "GIT_DIR", "GIT_DIR, relative", "GIT_WORK_TREE"])
def test_the_repository_the_environment_names_is_the_one_whose_ignores_apply(tmp_path, monkeypatch, named):
    """Where the environment names the repository (a bare "dotfiles" repository's
    `GIT_DIR=~/.dotfiles GIT_WORK_TREE=~`, a script's), git reads that git folder's
    `info/exclude` and configuration (`core.excludesFile`, `core.ignoreCase`) for the work
    tree it names (with `GIT_DIR` alone, the working folder), whatever `.git` the tree holds;
    porter read the tree's own `.git`, so lint saw what `git status` leaves out and left out
    what it lists. Compared with `git ls-files -o --exclude-standard` run with the same
    variables, from the top and in a subfolder; a path outside the named work tree reads its
    own repository's, and a GIT_DIR git cannot use is said once."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    store, tree = tmp_path / "store.git", tmp_path / "tree"
    subprocess.run(["git", "init", "-q", "--bare", str(store)], env=env, check=True)
    subprocess.run(["git", "init", "-q", str(tree)], env=env, check=True)
    for setting in ("core.bare false", "core.excludesFile ../shared", "core.ignoreCase true"):
        subprocess.run(["git", "--git-dir", str(store), "config", *setting.split()], env=env, check=True)
    (store / "info").mkdir(exist_ok=True)
    (store / "info" / "exclude").write_text("store_*.py\n")
    (tmp_path / "shared").write_text("SHARED_*.py\n")
    (tree / ".git" / "info" / "exclude").write_text("tree_*.py\n")
    files = ["m.py", "store_a.py", "tree_a.py", "shared_a.py", "sub/store_b.py", "sub/tree_b.py", "sub/n.py"]
    found = _walked(tree, monkeypatch, files, {"sub/.gitignore": "!tree_b.py\n"})
    assert found == _git_lists(tree, env)
    assert found == ["m.py", "shared_a.py", "store_a.py", "sub/n.py", "sub/store_b.py", "sub/tree_b.py"]
    variables = {
        "GIT_DIR and GIT_WORK_TREE": {"GIT_DIR": str(store), "GIT_WORK_TREE": str(tree)},
        "GIT_DIR": {"GIT_DIR": str(store)},
        "GIT_DIR, relative": {"GIT_DIR": "../store.git", "GIT_WORK_TREE": "."},
        "GIT_WORK_TREE": {"GIT_WORK_TREE": str(tree)},
    }[named]
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    run_env = {**env, **variables}
    forget_paths()
    found = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
    assert found == _git_lists(tree, run_env)
    if "GIT_DIR" in variables:
        assert found == ["m.py", "sub/n.py", "sub/tree_b.py", "tree_a.py"], found
    if not named.endswith("relative"):
        monkeypatch.chdir(tree / "sub")  # (with GIT_DIR alone, `sub` is then the work tree's top)
        forget_paths()
        below = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
        assert below == _git_lists(tree / "sub", run_env)
    outside = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(outside)], env=env, check=True)
    (outside / ".git" / "info" / "exclude").write_text("store_*.py\n")
    (outside / "store_c.py").write_text("x = 1\n")
    (outside / "tree_c.py").write_text("x = 1\n")
    monkeypatch.chdir(tree)
    forget_paths()
    assert [c.path.name for c in discover([outside]) if c.problem is None] == ["tree_c.py"]


def test_a_nested_repository_inside_the_named_work_tree_reads_its_own_ignores(tmp_path, monkeypatch):
    """With `GIT_DIR`/`GIT_WORK_TREE` naming a work tree that holds a nested repository (a
    clone or a submodule checked out inside it), git lists that folder as one untracked entry
    and reads nothing inside it. The walk from the named top reads the nested one as a
    repository of its own (its `info/exclude`, its `.gitignore` files, none above it); a walk
    started inside it read the named tree's ignores instead (twentieth read's leftover), so
    `porter lint tree` and `porter lint tree/mid/inner` left out different files there."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    store, tree = tmp_path / "store", tmp_path / "tree"
    subprocess.run(["git", "init", "-q", str(store)], env=env, check=True)
    files = ["a.py", "x_a.py", "mid/a.py", "mid/x_b.py", "mid/w_e.py", "mid/inner/a.py", "mid/inner/x_c.py"]
    for name in files:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("x = 1\n")
    (tree / ".gitignore").write_text("x_*.py\n")
    subprocess.run(["git", "init", "-q", str(tree / "mid")], env=env, check=True)
    (tree / "mid" / ".git" / "info" / "exclude").write_text("w_*.py\n")
    monkeypatch.setenv("GIT_DIR", str(store / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tree))
    run_env = {**env, "GIT_DIR": str(store / ".git"), "GIT_WORK_TREE": str(tree)}
    monkeypatch.chdir(tree)
    assert _git_lists(tree, run_env) == ["a.py"]  # (and `mid/`, which git does not enter)
    forget_paths()
    from_top = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
    assert from_top == ["a.py", "mid/a.py", "mid/inner/a.py", "mid/inner/x_c.py", "mid/x_b.py"]
    for below in ("mid", "mid/inner"):
        monkeypatch.chdir(tree / below)
        forget_paths()
        found = sorted(below + "/" + c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
        assert found == [f for f in from_top if f.startswith(below + "/")], below


def test_a_git_dir_git_cannot_use_is_said_once(tmp_path, monkeypatch):
    """A `GIT_DIR` that names no repository (or a bare one, with no work tree): git refuses to
    list anything there; the walk reads each path's own repository and says so once."""
    from porter.pipeline import discover as discovery

    _git_env(tmp_path, monkeypatch)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "none"))
    (tmp_path / ".gitignore").write_text("gen_*.py\n")
    assert _walked(tmp_path, monkeypatch, ["m.py", "gen_a.py"], {}) == ["m.py"]
    list(discover([Path(".")]))
    assert len(discovery.NOTES) == 1 and "the environment names" in discovery.NOTES[0], discovery.NOTES


def test_an_ignore_file_too_large_to_read_is_named_in_a_note(tmp_path, monkeypatch):
    """A `.gitignore` or `info/exclude` over the size porter reads (4 MiB) is read by git, and
    was left out in silence: lint saw files `git status` leaves out and nothing said why. Now
    one note names each such file, however many walks read it."""
    from porter.pipeline import discover as discovery

    repo, env = _plain_repo(tmp_path, monkeypatch)
    big = "gen_*.py\n" + "# padding\n" * (discovery.MAX_GITIGNORE_BYTES // 10 + 1)
    (repo / ".git" / "info" / "exclude").write_text(big.replace("gen_", "local_"))
    found = _walked(repo, monkeypatch, ["m.py", "sub/gen_a.py", "local_b.py"], {"sub/.gitignore": big})
    assert _git_lists(repo, env) == ["m.py"]
    assert found == ["local_b.py", "m.py", "sub/gen_a.py"]
    list(discover([Path(".")]))
    notes = sorted(discovery.NOTES)
    assert len(notes) == 2, notes
    assert notes[0].startswith(str(repo / ".git" / "info" / "exclude") + " is larger than 4 MiB")
    assert notes[1].startswith("sub/.gitignore is larger than 4 MiB") and "not read" in notes[1], notes


@pytest.mark.parametrize("configured", [True, False])
def test_a_folder_where_the_users_ignore_file_is_named_in_a_note(tmp_path, monkeypatch, configured):
    """A folder as `core.excludesFile` (or at `~/.config/git/ignore`): git stops (`cannot use
    ... as an exclude file`); porter read nothing from it and said nothing. Now one note says
    it, however many walks read it."""
    import subprocess

    from porter.pipeline import discover as discovery

    repo, env = _plain_repo(tmp_path, monkeypatch)
    folder = tmp_path / "home" / ".config" / "git" / "ignore"
    folder.mkdir(parents=True)
    if configured:
        folder = tmp_path / "ignores"
        folder.mkdir()
        subprocess.run(["git", "-C", str(repo), "config", "core.excludesFile", str(folder)], env=env, check=True)
    found = _walked(repo, monkeypatch, ["m.py", "gen_a.py"], {".gitignore": "gen_*.py\n"})
    assert subprocess.run(["git", "-C", str(repo), "status"], env=env, capture_output=True).returncode == 128
    list(discover([Path(".")]))
    assert found == ["m.py"]
    assert len(discovery.NOTES) == 1 and f"cannot use {folder} as an exclude file" in discovery.NOTES[0], (
        discovery.NOTES
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another user")
def test_a_repository_git_refuses_as_another_user_s_is_said_once(tmp_path, monkeypatch):
    """A repository owned by another user (an archive root extracted, a shared checkout):
    git refuses it (`safe.directory`: `git status` lists nothing, `git config` skips its own
    settings, so its `core.ignoreCase` is not read); porter read it in silence. It still reads
    the `.gitignore` files, as ruff does, and says once that the repository's own settings are
    not read; a repository of the user's own asks git nothing more."""
    import subprocess

    from porter.pipeline import discover as discovery

    repo, env = _plain_repo(tmp_path, monkeypatch)
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", "true"], env=env, check=True)
    found = _walked(repo, monkeypatch, ["m.py", "gen_a.py", "GEN_b.py"], {".gitignore": "GEN_*.py\n"})
    assert found == ["m.py"] and discovery.NOTES == []
    for folder, _, names in os.walk(repo):
        for p in [folder, *(os.path.join(folder, n) for n in names)]:
            os.lchown(p, 65534, 65534)
    assert subprocess.run(["git", "-C", str(repo), "status"], env=env, capture_output=True).returncode == 128
    forget_paths()
    found = sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)
    list(discover([Path(".")]))
    assert found == ["gen_a.py", "m.py"]
    assert len(discovery.NOTES) == 1 and "dubious ownership" in discovery.NOTES[0], discovery.NOTES
    assert "safe.directory" in discovery.NOTES[0] and str(repo) in discovery.NOTES[0]


def test_a_repository_whose_core_ignorecase_is_true_matches_either_case(tmp_path, monkeypatch):
    """Where a repository's configuration says `core.ignoreCase = true` (a checkout made on
    macOS or Windows and carried over, an archive's `.git`), git matches every ignore pattern
    in either case: `GEN_*.py` leaves out `gen_a.py`, `Sub/` the folder `sub/`,
    `[[:upper:]]x.py` leaves out `ax.py`. porter matched case exactly and linted what `git
    status` leaves out. ASCII letters only, as git's; a nested repository keeps its own."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", "true"], env=env, check=True)
    nested = repo / "vendor" / "lib"
    subprocess.run(["git", "init", "-q", str(nested)], env=env, check=True)
    subprocess.run(["git", "-C", str(nested), "config", "core.ignoreCase", "false"], env=env, check=True)
    gitignore = "GEN_*.py\nSub/\n[[:upper:]]x.py\nCAF\u00c9.py\n"
    files = [
        "gen_a.py",
        "GEN_b.py",
        "m.py",
        "sub/q.py",
        "ax.py",
        "Bx.py",
        "caf\u00e9.py",
        "CAF\u00c9.py",
        "cAf\u00c9.py",
    ]
    files += ["vendor/lib/gen_c.py", "vendor/lib/GEN_d.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": gitignore, "vendor/lib/.gitignore": gitignore})
    lists = _git_lists(repo, env) + [f"vendor/lib/{n}" for n in _git_lists(nested, env)]
    assert found == sorted(lists)
    assert "gen_a.py" not in found and "caf\u00e9.py" in found and "vendor/lib/gen_c.py" in found, found


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("\\A*", ["a1.py", "A2.py", "b1.py", "B2.py", "sub/c.py"]),  # (an escaped capital: nothing)
        ("[A]*", ["a1.py", "A2.py", "b1.py", "B2.py", "sub/c.py"]),  # (a bracket's capital: nothing)
        ("[\\B]*", ["a1.py", "A2.py", "b1.py", "B2.py", "sub/c.py"]),
        ("[Ab]*", ["a1.py", "A2.py", "sub/c.py"]),  # (`b` takes either case)
        ("[!A]*", []),  # (every name: `A` matches none)
        ("[A-B]*", ["sub/c.py"]),  # (a range takes either case)
        ("\\a*", ["b1.py", "B2.py", "sub/c.py"]),  # (an escaped small letter: either case)
        ("\\Sub/", ["a1.py", "A2.py", "b1.py", "B2.py", "sub/c.py"]),
        ("!\\A1.py\n*1.py", ["A2.py", "B2.py", "sub/c.py"]),
    ],
)
def test_a_folding_repository_matches_an_escaped_or_bracketed_capital_as_git_does(tmp_path, monkeypatch, line, kept):
    """Where `core.ignoreCase` is true, git's wildmatch lowers a path's letters and a pattern's,
    but not a letter after `\\` nor a bracket's member: `\\A*` and `[A]*` match no name at all
    (an `A` is compared with the path's `a`), `[!A]*` matches every name; a range takes either
    case. porter read them in either case and left out `a1.py`, which git lists (twenty-third
    read, random trees). Compared with `git ls-files -o --exclude-standard`."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", "true"], env=env, check=True)
    files = ["a1.py", "A2.py", "b1.py", "B2.py", "sub/c.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": line + "\n"})
    assert found == _git_lists(repo, env) == sorted(kept)


_SLASHED = ["a1.py", "A2.py", "xa1.py", "xB2.py", "sub/a1.py", "sub/xB2.py"]


@pytest.mark.parametrize(
    ("line", "fold", "left_out"),
    [
        ("[/a]*", False, ["a1.py"]),  # (anchored: the top's names only; a class never matches `/`)
        ("[/a]*", True, ["a1.py", "A2.py"]),
        ("x[a/B]*", False, ["xa1.py", "xB2.py"]),
        ("x[a/B]*", True, ["xa1.py"]),  # (the bracket's `B` matches no letter: git compares it as written)
        ("[/x]\\B*", False, ["xB2.py"]),
        ("[/x]\\B*", True, []),  # (an escaped capital after the bracket: no letter)
        ("x[!/A]*", True, ["xa1.py", "xB2.py"]),
        ("*.py\n!x[a/B]*", True, ["a1.py", "A2.py", "xB2.py", "sub/a1.py", "sub/xB2.py"]),
    ],
)
def test_a_bracket_naming_a_slash_anchors_the_line_and_folds_as_git_does(tmp_path, monkeypatch, line, fold, left_out):
    """git reads a `/` in a bracket (`[/a]`, `x[a/B]`) as making the line a path from the
    `.gitignore`'s folder, and its wildmatch never matches a `/` by a class; under
    `core.ignoreCase` the bracket's capital and an escaped one match no letter. porter left such
    a line to pathspec, which split it at the `/`: it left out no file at all (twenty-third
    read, the cache read's leftover 1). Compared with `git ls-files -o --exclude-standard`."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    subprocess.run(["git", "-C", str(repo), "config", "core.ignoreCase", str(fold).lower()], env=env, check=True)
    found = _walked(repo, monkeypatch, _SLASHED, {".gitignore": line + "\n"})
    assert found == _git_lists(repo, env) == sorted(set(_SLASHED) - set(left_out))


_ESCAPED = ["a.py", "b.py", "a/b.py", "a/c.py", "a/q/c.py", "ab/c.py", "x/ab/c.py", "x/a/c.py"]


@pytest.mark.parametrize(
    "line",
    [
        "a\\/b.py",  # (an escaped `/` is a `/`: `a/b.py`)
        "a\\/*",
        "*\\/c.py",
        "a\\/q\\/c.py",
        "**\\/b.py",  # (after a `**` that starts a part: one folder at least, so not `b.py`)
        "a\\/**\\/c.py",  # (`a/q/c.py`, not `a/c.py`)
        "a**\\/c.py",  # (after the plain prefix: `a/c.py`, `ab/c.py`)
        "x\\/a**\\/c.py",  # (inside a part, past the prefix: a `*`)
        "*.py\n!a\\/b.py",
        "\\/a.py",  # (first: a path that starts with `/`, none)
        "a\\/",  # (last: a folder `a\\`, none)
    ],
)
def test_an_escaped_slash_is_read_as_git_reads_it(tmp_path, monkeypatch, line):
    """git's wildmatch compares an escaped `/` as a `/`, and it makes the line a path; pathspec
    refused such a line, so a `.gitignore` line `a\\/b.py` was passed over (git leaves the
    file out) and the same `exclude` pattern was a config error (twenty-fourth read). Compared
    with `git ls-files -o --exclude-standard`."""
    repo, env = _plain_repo(tmp_path, monkeypatch)
    found = _walked(repo, monkeypatch, _ESCAPED, {".gitignore": line + "\n"})
    assert found == _git_lists(repo, env)


def test_an_exclude_pattern_with_an_escaped_slash_is_read_as_git_reads_it(tmp_path, monkeypatch):
    """An `exclude` pattern `a\\/b.py` of the user's config was refused as invalid (pathspec's
    reading); git reads the same line as `a/b.py` (twenty-fourth read)."""
    from porter.config.files import resolve

    for name in _ESCAPED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "porter.toml").write_text('target = "xla"\nexclude = ["a\\\\/b.py", "x\\\\/a**\\\\/c.py"]\n')
    monkeypatch.chdir(tmp_path)
    forget_paths()
    settings = resolve([Path(".")]).settings()
    found = sorted(c.path.as_posix() for c in discover([Path(".")], settings.exclude) if c.path.suffix == ".py")
    assert found == sorted(set(_ESCAPED) - {"a/b.py", "x/ab/c.py", "x/a/c.py"})


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("\\/a.py", "an escaped `/` first matches no path"),
        ("!\\/a.py", "an escaped `/` first matches no path"),
        ("a\\/", "an escaped `/` last matches no path"),
        ("**\\/", "an escaped `/` last matches no path"),
        ("[ab]\\/", "an escaped `/` last matches no path"),
        ("a[ab]\\", "a `\\` at the end escapes nothing"),
    ],
)
def test_an_exclude_pattern_git_matches_nothing_by_is_refused_with_the_reason(tmp_path, monkeypatch, pattern, why):
    """An escaped `/` first or last (or a `\\` last) in an `exclude` pattern was refused as
    "Invalid git pattern" (pathspec's words), a bracket in it shown as porter's private mark
    U+E000. git reads the same `.gitignore` line and leaves out nothing by it (compared here):
    the error says so, and names the pattern as written (twenty-fifth read)."""
    from porter.config.files import ConfigError, resolve

    repo, env = _plain_repo(tmp_path, monkeypatch)
    body = "*\n" + pattern + "\n" if pattern.startswith("!") else pattern + "\n"
    assert _walked(repo, monkeypatch, _ESCAPED + ["a[ab]/c.py"], {".gitignore": body}) == _git_lists(repo, env)
    assert _git_lists(repo, env) == ([] if pattern.startswith("!") else sorted([*_ESCAPED, "a[ab]/c.py"]))
    (repo / ".gitignore").unlink()
    (repo / "porter.toml").write_text(f'target = "xla"\nexclude = {json.dumps([pattern])}\n')
    forget_paths()
    with pytest.raises(ConfigError) as info:
        resolve([Path(".")]).settings()
    assert why in str(info.value) and "\ue000" not in str(info.value), str(info.value)


@pytest.mark.parametrize(
    ("pattern", "left_out"),
    [
        ("[\\-!]x.py", {"-x.py", "!x.py"}),  # (an escaped `-` is a member: git reads no range)
        ("[/z-a]x.py", None),  # (a reversed range, as `[z-a]` is refused)
        ("[a-/!]x.py", None),
    ],
)
def test_an_exclude_pattern_is_refused_for_its_brackets_as_git_reads_them(tmp_path, monkeypatch, pattern, left_out):
    """`exclude` patterns are refused where a bracket holds a reversed range (`[z-a]`); pathspec
    decided it on its own reading: `[\\-!]` (git's `-` and `!`) was refused, and a bracket naming
    a `/` was split there and taken (twenty-fourth read). Compared with git's reading in a
    `.gitignore` where the pattern is taken."""
    from porter.config.files import ConfigError, resolve

    names = ["-x.py", "!x.py", "ax.py", "zx.py", "b.py"]
    repo, env = _plain_repo(tmp_path, monkeypatch)
    (repo / "porter.toml").write_text(f'target = "xla"\nexclude = [{json.dumps(pattern)}]\n')
    found = _walked(repo, monkeypatch, names, {".gitignore": pattern + "\n"})
    if left_out is None:
        with pytest.raises(ConfigError, match="reversed"):
            resolve([Path(".")]).settings()
        return
    settings = resolve([Path(".")]).settings()
    got = sorted(c.path.as_posix() for c in discover([Path(".")], settings.exclude) if c.path.suffix == ".py")
    assert got == found == _git_lists(repo, env) == sorted(set(names) - left_out)


def test_nested_repositories_ask_git_only_where_their_answer_may_be_their_own(tmp_path, monkeypatch):
    """A folder of clones asked git once for each (100 clones: 1.4 s of the walk). A clone whose
    own configuration names neither setting nor an `include` has the answer of every other such
    one, so git is asked once for all of them; one that sets `core.ignoreCase` or
    `core.excludesFile` is asked, and so is every clone where git's configuration holds an
    `includeIf` (it may hold for one clone and not another). Compared with `git ls-files -o
    --exclude-standard` in each clone."""
    import subprocess

    from porter.pipeline import discover as discovery

    env = _git_env(tmp_path, monkeypatch)
    top = tmp_path / "src"
    names = [f"plain{i}" for i in range(6)] + ["folds", "names_file"]
    _clones(top, names, env, "GEN_*.py\n", ("gen_a.py", "m.py", "scratch_b.py"))
    subprocess.run(["git", "-C", str(top / "folds"), "config", "core.ignoreCase", "true"], env=env, check=True)
    (tmp_path / "ign").write_text("scratch_*.py\n")
    subprocess.run(
        ["git", "-C", str(top / "names_file"), "config", "core.excludesFile", str(tmp_path / "ign")],
        env=env,
        check=True,
    )
    calls: list[str] = []
    real = discovery._git_config
    monkeypatch.setattr(discovery, "_git_config", lambda repo, *a: calls.append(repo) or real(repo, *a))

    def walked() -> list[str]:
        monkeypatch.chdir(top)
        forget_paths()
        return sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None)

    def lists() -> list[str]:
        return sorted(f"{name}/{f}" for name in names for f in _git_lists(top / name, env))

    assert walked() == lists()
    assert len(calls) == 3, calls  # (one plain clone for all six, and the two of their own)
    (tmp_path / "home" / ".gitconfig").write_text('[includeIf "gitdir:**/plain3/"]\n\tpath = ~/more\n')
    (tmp_path / "home" / "more").write_text("[core]\n\tignoreCase = true\n")
    calls.clear()
    found = walked()
    assert found == lists() and "plain3/gen_a.py" not in found and "plain2/gen_a.py" in found, found
    assert len(calls) == 4, calls  # (the plain clones where it holds, where not, and the two of their own)


@pytest.mark.parametrize("where", ["~/work.gitconfig", "work.gitconfig", "ABSOLUTE", "~/missing"])
def test_an_include_if_that_sets_no_ignores_asks_git_once_for_all_nested_repositories(tmp_path, monkeypatch, where):
    """Most conditional includes set a user's e-mail for work repositories
    (`[includeIf "gitdir:~/work/"] path = ~/.gitconfig-work`); with one in git's
    configuration every nested repository asked git its own (200 clones: 201 git calls, 2.1 s
    of a 0.15 s walk; twentieth read's leftover). The file it includes is read as git finds
    it (relative to the configuration file, `~` the home folder); one that names neither
    `core.excludesFile`, `core.ignoreCase` nor an include changes no repository's ignores.
    Compared with `git ls-files -o --exclude-standard` in each clone."""

    env = _git_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    top = tmp_path / "src"
    names = [f"clone{i}" for i in range(6)]
    _clones(top, names, env, "gen_*.py\n", ("gen_a.py", "m.py"))
    path = str(home / "work.gitconfig") if where == "ABSOLUTE" else where
    (home / ".gitconfig").write_text(f'[includeIf "gitdir:**/clone3/"]\n\tpath = {path}\n')
    (home / "work.gitconfig").write_text("[user]\n\temail = someone@work.example\n")
    found, calls = _found_and_git_config_calls(top, monkeypatch)
    assert found == sorted(f"{name}/{f}" for name in names for f in _git_lists(top / name, env))
    assert len(calls) == 1, calls


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("included", "[user]\n\temail = include@work.example  # excludesFile, ignoreCase: see the wiki\n"),
        (
            "included",
            '[user]\n\tname = "A \\"include\\" ; path" ; [include] path = x\n[core]\n\teditor = vi \\\n  include.path\n',
        ),
        ("included", "[core]\n\texcludesFile = ~/work.ignore\n; include more from ~/other\n"),
        ("own", '[remote "origin"]\n\turl = https://example.com/include.git\n# core.ignoreCase stays false\n'),
    ],
)
def test_a_git_configuration_merely_holding_the_word_include_is_read_as_git_reads_it(
    tmp_path, monkeypatch, where, text
):
    """Whether a configuration file (an included one, or a repository's own) may set an ignore
    setting or include another was a word test: one holding the word `include` (a value, a
    comment, `include.git` in a remote's URL) made every nested repository ask git its own (the
    twenty-second read's leftover). It is read as git's syntax (`gitconfig.keys`): only a key
    counts, so git is asked once for every clone. Compared with `git ls-files -o
    --exclude-standard` in each clone."""
    env = _git_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    top = home / "src"
    names = [f"work/clone{i}" for i in range(5)]
    _clones(top, names, env, "gen_*.py\n", ("gen_a.py", "m.py", "scratch_b.py"))
    (home / "work.ignore").write_text("scratch_*.py\n")
    if where == "included":
        (home / ".gitconfig").write_text('[includeIf "gitdir:~/src/work/"]\n\tpath = work.gitconfig\n')
        (home / "work.gitconfig").write_text(text)
    else:
        for name in names:
            with (top / name / ".git" / "config").open("a") as fh:
                fh.write(text)
    found, calls = _found_and_git_config_calls(top, monkeypatch)
    assert found == sorted(f"{name}/{f}" for name in names for f in _git_lists(top / name, env))
    assert len(set(calls)) == 1, calls  # (one repository asked for all: a `~` in a file's name is a second call)


@pytest.mark.parametrize(
    "text",
    [
        b"[core] excludesFile = x\n",  # (a key on the header's line)
        b"[user]\n\tname = a \\\n  excludesFile = x\n",  # (a `\\` at the end joins the next line to the value)
        b"[user]\n\tname = a ; b \\\n\tignoreCase = true\r\n",  # (not in a comment)
        b'[core "x"]\n\tignoreCase\n[Core.Sub]\n\tPath = "a#b"\n[IncludeIf "gitdir:~/W/"]\n\tpath = y',
        b"\xef\xbb\xbfbare = 1\n[include]\n\tpath",
        b'[user]\n\tname = "open\n',  # (refused: a quote left open)
        b"[user]\n\tname = a\\q\n",  # (refused: an unknown escape)
        b"[core\n]\n",
    ],
)
def test_a_git_configuration_files_keys_are_read_as_git_lists_them(tmp_path, monkeypatch, text):
    """`gitconfig.keys` against `git config -f FILE --no-includes --list --name-only` (None where
    git refuses the file). docs/reads/41-ctleft-tools/diffconfig.py.txt compares random files."""
    import subprocess

    from porter.pipeline import gitconfig

    (tmp_path / "config").write_bytes(text)
    proc = subprocess.run(
        ["git", "config", "-f", str(tmp_path / "config"), "--no-includes", "--list", "--name-only", "-z"],
        capture_output=True,
        env=_git_env(tmp_path, monkeypatch),
    )
    git = proc.stdout.decode().split("\0")[:-1] if proc.returncode == 0 else None
    assert gitconfig.keys(text) == git


@pytest.mark.parametrize(
    ("cond", "held", "asks"),
    [
        ("gitdir:~/src/work/", "work", 2),
        ("gitdir:ABSOLUTE/src/work/", "work", 2),
        ("gitdir:work/", "work", 2),
        ("gitdir:**/work/", "work", 2),
        ("gitdir/i:WORK/", "work", 2),
        ("gitdir:WORK/", "", 1),  # (holds nowhere: one answer)
        ("gitdir:work/clone1/.git", "work/clone1", 2),
        ("gitdir:~/src/work", "", 1),  # (the folder itself, not one below: holds nowhere)
        ("gitdir:*/clone1/", "work/clone1", 6),  # (a wildcard: git decides, in each)
        ("onbranch:nonesuch", "", 6),
        ("gitdir:./src/work/", "work", 6),
    ],
)
def test_a_work_gitconfig_setting_an_ignore_file_asks_git_once_for_each_answer(tmp_path, monkeypatch, cond, held, asks):
    """A work configuration that sets a `core.excludesFile` (`[includeIf "gitdir:~/work/"]`)
    made every nested repository ask git its own (200 clones: 201 git calls, 2.5 s of a walk;
    twenty-first read's leftover). A `gitdir:` condition without wildcards is decided as git
    decides it, and the clones it treats alike share one answer; any other condition is left
    to git in each. Compared with `git ls-files -o --exclude-standard` in each clone."""

    env = _git_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    top = home / "src"
    names = [f"work/clone{i}" for i in range(4)] + ["play/clone4", "play/clone5"]
    _clones(top, names, env, "gen_*.py\n", ("gen_a.py", "m.py", "scratch_b.py"))
    cond = cond.replace("ABSOLUTE", str(home))
    (home / ".gitconfig").write_text(f'[includeIf "{cond}"]\n\tpath = work.gitconfig\n')
    (home / "work.gitconfig").write_text(f"[core]\n\texcludesFile = {home}/work.ignore\n")
    (home / "work.ignore").write_text("scratch_*.py\n")
    found, calls = _found_and_git_config_calls(top, monkeypatch)
    assert found == sorted(f"{name}/{f}" for name in names for f in _git_lists(top / name, env))
    assert [n for n in names if f"{n}/scratch_b.py" not in found] == [n for n in names if held and n.startswith(held)]
    assert len(calls) == asks, calls


@pytest.mark.parametrize("home", ["link", "slash", "dot"])
def test_a_work_gitdir_condition_under_home_holds_below_the_home_folders_real_path(tmp_path, monkeypatch, home):
    """git puts the real path of the home folder for `~` in a `gitdir:` condition; porter put
    `$HOME` as written, so where `$HOME` is a link (`/home/u -> /data/u`), ends in `/` or holds
    a `.`, `gitdir:~/src/work/` held for no clone here, and every clone took the first one's
    answer: a work clone's `core.excludesFile` was read in the play clones, or not in the work
    ones. Compared with `git ls-files -o --exclude-standard` in each clone."""
    real = tmp_path / "data"
    real.mkdir()
    given = {"link": tmp_path / "home", "slash": f"{real}/", "dot": f"{real}/."}[home]
    if home == "link":
        (tmp_path / "home").symlink_to(real)
    env = _git_env(tmp_path, monkeypatch, HOME=str(given))
    top = real / "src"
    names = ["play/clone0", "work/clone1", "work/clone2", "play/clone3"]
    _clones(top, names, env, "gen_*.py\n", ("gen_a.py", "m.py", "scratch_b.py"))
    (real / ".gitconfig").write_text('[includeIf "gitdir:~/src/work/"]\n\tpath = work.gitconfig\n')
    (real / "work.gitconfig").write_text(f"[core]\n\texcludesFile = {real}/work.ignore\n")
    (real / "work.ignore").write_text("scratch_*.py\n")
    found, calls = _found_and_git_config_calls(top, monkeypatch)
    assert found == sorted(f"{name}/{f}" for name in names for f in _git_lists(top / name, env))
    assert [n for n in names if f"{n}/scratch_b.py" not in found] == ["work/clone1", "work/clone2"], found
    assert len(calls) == 2, calls


@pytest.mark.parametrize(
    "line",
    [
        "a.py" + " " * 5000,  # (git trims trailing spaces)
        "*" * 5000 + "b.py",  # (a run of `*` is one `**`: here one `*`)
        "**/" * 1400 + "c.py",  # (`**/` may match no folder: one is as good as 1,400)
        "sub/**/",  # (a folder below `sub`, never `sub` itself)
        "*/****/**/**/",
    ],
)
def test_a_gitignore_line_longer_than_a_path_or_ending_in_a_double_star_folder_is_read_as_git_reads_it(
    tmp_path, monkeypatch, line
):
    """A `.gitignore` line longer than any path (4,096 characters) was passed over as naming
    none; but git trims its trailing spaces, and reads a run of `*` as one `**` and a run of
    `**/` as one, so such a line named files git leaves out and lint read them. And a last
    `**/` (`sub/**/`) is a folder below, as git reads it: pathspec read it as `sub/`, and
    lint left out `sub/e.py`, which git lists. Compared with `git ls-files -o --exclude-standard`."""
    env = _git_env(tmp_path, monkeypatch)
    import subprocess

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    files = ["a.py", "b.py", "c.py", "m.py", "sub/e.py", "sub/deep/f.py", "x/c.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": line + "\n"})
    if line.startswith("**/**/"):  # (git takes seconds over this one: what it lists, checked once)
        assert found == ["a.py", "b.py", "m.py", "sub/deep/f.py", "sub/e.py"]
    else:
        assert found == _git_lists(repo, env)


@pytest.mark.parametrize(
    ("lines", "left_out"),
    [
        (["a**/*"], "a.py"),  # (`**/` after the prefix `a`: no folder, so `a` then `*`)
        (["b**/**"], "bb.py"),
        (["x/a**/y.py"], "x/ay.py"),
        (["x/a**/y.py"], "x/a/b/y.py"),  # (and any folders)
        (["x/a**", "!x/ab/"], "x/ab/c/d.py"),  # (a last `**` crosses `/`: it names the file)
        (["*", "!*/", "!x/a**"], None),  # (it keeps what it names, `/` or not)
    ],
)
def test_a_double_star_right_after_a_patterns_plain_prefix_starts_a_part_as_git_reads_it(
    tmp_path, monkeypatch, lines, left_out
):
    """git compares a pattern's plain prefix (up to its first wildcard) as a string and
    matches the rest from its start, where a `**` starts a part: `a**/*` leaves out `a.py`,
    `b**/**` `bb.py`, `x/a**` all below `x/ab/` (dir.c `match_pathname`). pathspec read
    each such `**` as `*`, and lint read those files. Compared with `git ls-files -o
    --exclude-standard`."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    files = ["a.py", "ab.py", "bb.py", "ab/e.py", "x/a.py", "x/ay.py", "x/a/y.py", "x/a/b/y.py", "x/ab/c/d.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": "\n".join(lines) + "\n"})
    assert found == _git_lists(repo, env)
    if left_out is not None:
        assert left_out not in found
    else:
        assert "x/ab/c/d.py" in found


@pytest.mark.parametrize(
    ("lines", "gone"), [(["gen", "!gen/**"], "gen/"), (["g*", "!g*/**"], "gen/"), (["/x/gen", "!x/gen/**"], "x/gen/")]
)
def test_a_negation_of_what_a_folder_holds_keeps_nothing_of_a_folder_left_out(tmp_path, monkeypatch, lines, gone):
    """`gen` then `!gen/**`: git leaves out the folder `gen` (`gen/**` names what it
    holds, not the folder), and a file cannot come back from a folder left out. A folder's path
    is matched with its `/` (`gen/`), which `gen/**` (`^gen/`) matched, and lint read
    all of `gen/`. Compared with `git ls-files -o --exclude-standard`."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    files = ["m.py", "gen/a.py", "gen/c/d.py", "gg/e.py", "x/gen/f.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": "\n".join(lines) + "\n"})
    assert found == _git_lists(repo, env)
    assert not any(name.startswith(gone) for name in found)


@pytest.mark.parametrize("lines", [["*/", "!src/"], ["**/", "!sr*"], ["*/*/", "!src/"]])
def test_a_pattern_for_every_folder_leaves_out_the_folders_below_one_a_negation_keeps(tmp_path, monkeypatch, lines):
    """`*/` then `!src/` (every folder out but `src`): git leaves out `src/sub/`, which `*/`
    names too. `*/` is matched by a regex unanchored at the path's start, which found only the
    first folder (`src`, already decided on the walk), and lint read `src/sub/x.py`. Compared
    with `git ls-files -o --exclude-standard`."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    files = ["m.py", "src/a.py", "src/sub/x.py", "src/sub/deep/y.py", "lib/z.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": "\n".join(lines) + "\n"})
    assert found == _git_lists(repo, env)
    assert "src/sub/x.py" not in found


@pytest.mark.parametrize(
    "lines",
    [["!src/**", "src/**/generated"], ["!**", "[ab]"], ["!**", "b"], ["!src/**", "src/a/b/"]],
)
def test_a_pattern_that_names_the_folder_itself_outranks_an_earlier_one_that_names_what_it_holds(
    tmp_path, monkeypatch, lines
):
    """A folder's path is matched with its `/`: a later pattern that names the folder
    (`src/**/generated`, `[ab]`) was counted as naming a folder above it, and an earlier
    negation that matches every path (`!src/**`, `!**`) outranked it, so lint read
    `src/a/generated/g.py`, which git leaves out (the last pattern that matches decides).
    Compared with `git ls-files -o --exclude-standard`."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    files = ["m.py", "src/a/m.py", "src/a/generated/g.py", "src/a/b/c.py", "b/d.py", "a/e.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": "\n".join(lines) + "\n"})
    assert found == _git_lists(repo, env)


@pytest.mark.parametrize("where", ["command line", "config"])
def test_an_exclude_negation_of_a_folder_above_does_not_walk_a_folder_a_pattern_names(tmp_path, monkeypatch, where):
    """`generated/` then `!vendor/`: git leaves `vendor/generated/` out (the negation names
    `vendor/`, which nothing left out). The walk asked the exclude patterns about a folder
    counting the folders above it, where `!vendor/` was the last match, and lint read
    `vendor/generated/g.py`. Compared with `git ls-files -o --exclude-standard`."""
    import json
    import subprocess

    from porter.config import files

    patterns = ["generated/", "!vendor/", "*/deep/*", "!a/"]
    names = ["vendor/generated/g.py", "vendor/v.py", "generated/h.py", "a/deep/x.py", "a/b/deep/y.py", "m.py"]
    _walked(tmp_path, monkeypatch, names, {})  # (the tree)
    (tmp_path / "porter.toml").write_text(f"exclude = {json.dumps(patterns)}\n")
    exclude = (
        tuple(patterns) if where == "command line" else files.resolve([Path(".")], target="xla").settings().exclude
    )
    forget_paths()
    found = sorted(c.path.as_posix() for c in discover([Path(".")], exclude) if c.path.suffix == ".py")
    env = _git_env(tmp_path, monkeypatch)
    subprocess.run(["git", "init", "-q", "."], env=env, check=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("\n".join(patterns) + "\n")
    assert found == _git_lists(tmp_path, env) == ["a/b/deep/y.py", "m.py", "vendor/v.py"]


@pytest.mark.parametrize(
    "lines",
    [
        ["gen/**", "!gen/**/", "!gen/**/*.py"],  # every folder below, kept (the idiom)
        ["gen/**", "!/**/", "!*.py"],  # every folder, from the top
        ["*", "!/**/", "!*.py"],
        ["gen/a/**", "!gen/**/", "!*.py"],  # a folder the `**/` reaches past its first
    ],
)
def test_a_last_double_star_folder_pattern_names_every_folder_below(tmp_path, monkeypatch, lines):
    """A last `**/` names any folder below the one before it, as git reads it (`gen/**/`:
    `gen/a/`, `gen/a/b/`; `/**/`: every folder). It was read as `gen/*/` (and `/**/` as `/*/`),
    so `!gen/**/` after `gen/**` kept only the first folders, and lint left out
    `gen/a/b/c.py`, which `git ls-files -o --exclude-standard` lists."""
    import subprocess

    env = _git_env(tmp_path, monkeypatch)
    subprocess.run(["git", "init", "-q", str(tmp_path)], env=env, check=True)
    files = ["gen/a/b/c.py", "gen/a/b/n.txt", "gen/a/d.py", "gen/e.py", "gen/a/b/x/y.py", "m.py"]
    found = _walked(tmp_path, monkeypatch, files, {".gitignore": "\n".join(lines) + "\n"})
    assert found == _git_lists(tmp_path, env)
    assert "gen/a/b/c.py" in found and "gen/a/b/x/y.py" in found


def _found_and_git_config_calls(top: Path, monkeypatch) -> tuple[list[str], list[str]]:
    """What `discover` finds from `top` (the working folder), and each repository it asked git's
    configuration of."""
    from porter.pipeline import discover as discovery

    calls: list[str] = []
    real = discovery._git_config
    monkeypatch.setattr(discovery, "_git_config", lambda repo, *a: calls.append(repo) or real(repo, *a))
    monkeypatch.chdir(top)
    forget_paths()
    return sorted(c.path.as_posix() for c in discover([Path(".")]) if c.problem is None), calls


def _clones(top: Path, names: list[str], env: dict, ignore: str, files: tuple[str, ...]) -> None:
    """A repository at each of `names` under `top`, holding `files` and a `.gitignore` of `ignore`."""
    import subprocess

    for name in names:
        subprocess.run(["git", "init", "-q", str(top / name)], env=env, check=True)
        (top / name / ".gitignore").write_text(ignore)
        for f in files:
            (top / name / f).write_text("x = 1\n")


@pytest.mark.parametrize("layout", ["submodule", "worktree"])
def test_a_nested_repository_s_git_file_is_read_once(tmp_path, monkeypatch, layout):
    """A nested repository whose `.git` is a file (a submodule's `gitdir: ../.git/modules/sub`, a
    worktree's): the walk read it to decide it is a repository (`_own_repo`), then again for the
    folder it names (`_git_dir`; twenty-fifth read). Once now; that folder's `info/exclude` (a
    worktree's: its `commondir`'s) still leaves out what it names."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    modules = repo / ".git" / "modules" / "sub"
    subprocess.run(["git", "init", "-q", "--bare", str(modules)], env=env, check=True)
    (modules / "info").mkdir(exist_ok=True)
    (modules / "info" / "exclude").write_text("skip.py\n")
    named = modules
    if layout == "worktree":
        named = modules / "worktrees" / "sub"
        named.mkdir(parents=True)
        (named / "HEAD").write_text("ref: refs/heads/main\n")
        (named / "commondir").write_text("../..\n")
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text(f"gitdir: {os.path.relpath(named, repo / 'sub')}\n")
    opened: list[str] = []
    real_open = os.open

    def counting(path, *args, **kwargs):
        if os.fspath(path).endswith(os.path.join("sub", ".git")):
            opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    found = _walked(repo, monkeypatch, ["a.py", "sub/b.py", "sub/skip.py"], {})
    assert found == ["a.py", "sub/b.py"] and len(opened) == 1, opened


@pytest.mark.parametrize(
    "commondir, env_common, repository",
    [(None, True, True), ("{c} \n", False, False), ("{c}\nmore\n", False, False), ("{c}\r\n\r\n", False, True)],
    ids=["GIT_COMMON_DIR", "commondir with a trailing space", "commondir of two lines", "commondir CRLF CRLF"],
)
def test_a_nested_git_folder_s_common_folder_is_found_as_git_finds_it(
    tmp_path, monkeypatch, commondir, env_common, repository
):
    """git checks a nested `.git` folder against its common folder: `$GIT_COMMON_DIR` where set
    (every git folder's), else the `commondir` file read whole (trailing CRs and LFs cut). porter
    read no `GIT_COMMON_DIR`, so a `.git` without `objects/` stayed a plain folder where git sees
    a repository; and it read `commondir`'s first line, spaces cut, so a trailing space or a
    second line named a common folder where git finds none (twenty-fifth read). Compared with
    `git ls-files -o --exclude-standard` (a nested repository: git lists `inner/`; porter walks it
    with its own patterns, so the top's `ig_*.py` does not apply to `inner/ig_c.py`)."""
    import subprocess

    repo, env = _plain_repo(tmp_path, monkeypatch)
    common = tmp_path / "common"
    for name in ("objects", "refs"):
        (common / name).mkdir(parents=True)
    inner = repo / "inner" / ".git"
    inner.mkdir(parents=True)
    (inner / "HEAD").write_text("ref: refs/heads/main\n")
    if commondir is not None:
        (inner / "commondir").write_bytes(commondir.format(c=common).encode())
    if env_common:
        monkeypatch.setenv("GIT_COMMON_DIR", str(common))
        env = {**env, "GIT_COMMON_DIR": str(common)}
    files = ["a.py", "ig_a.py", "inner/ig_c.py", "inner/sub/d.py"]
    found = _walked(repo, monkeypatch, files, {".gitignore": "ig_*.py\n"})
    out = subprocess.run(["git", "ls-files", "-o", "--exclude-standard", "-z"], cwd=repo, env=env, capture_output=True)
    listed = sorted(n for n in out.stdout.decode().split("\0") if n.endswith((".py", "inner/")))
    assert listed == (["a.py", "inner/"] if repository else ["a.py", "inner/sub/d.py"]), out
    walked = ["a.py", "inner/ig_c.py", "inner/sub/d.py"] if repository else ["a.py", "inner/sub/d.py"]
    assert found == walked
