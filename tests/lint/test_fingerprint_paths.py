"""`identity_path` (what a fingerprint names a file by) resolves each folder once; it must give
what resolving every file gives: the real folder, relative to the base, `..` allowed, and a
link known by what it points to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from porter.lint.fingerprint import forget_folders, identity_path


def _reference(path: str, base: Path | None) -> str:
    """The definition, one realpath per file."""
    p = Path(path)
    p = p.resolve() if p.is_symlink() else p.parent.resolve() / p.name
    return Path(os.path.relpath(p, (base or Path.cwd()).resolve())).as_posix()


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "proj" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    for rel in ("proj/a.py", "proj/pkg/b.py", "proj/pkg/sub/c.py", "other/d.py"):
        (tmp_path / rel).write_text("x = 1\n")
    os.symlink(tmp_path / "proj" / "pkg", tmp_path / "proj" / "linked")  # a folder link
    os.symlink(tmp_path / "other" / "d.py", tmp_path / "proj" / "e.py")  # a file link out
    return tmp_path


@pytest.mark.parametrize("where", ["", "proj", "proj/pkg", "other"])
@pytest.mark.parametrize("with_base", [False, True])
def test_identity_path_is_one_realpath_per_file(tree, monkeypatch, where, with_base):
    monkeypatch.chdir(tree / where)
    forget_folders()
    base = tree / "proj" / "pkg" if with_base else None
    here = Path.cwd()
    for rel in ("proj/a.py", "proj/pkg/b.py", "proj/pkg/sub/c.py", "other/d.py", "proj/linked/b.py", "proj/e.py"):
        full = tree / rel
        for spelled in (os.path.relpath(full, here), str(full)):
            assert identity_path(spelled, base) == _reference(spelled, base), (spelled, base)


def _outcome(resolve, path):
    try:
        return resolve(path)
    except (OSError, RuntimeError) as exc:  # a link loop
        return type(exc)


def test_a_folder_resolved_from_its_parent_is_its_realpath(tree, monkeypatch):
    """`_resolved` builds a folder's real path on its parent's (one lstat per folder): the same
    as `Path.resolve` through links to links, relative link targets, `..` before or after a
    link, folders that do not exist and a link loop."""
    from porter.lint.fingerprint import _resolved

    os.symlink("linked", tree / "proj" / "twice")  # a link to a link, relative target
    os.symlink("../other", tree / "proj" / "pkg" / "up")  # a relative target with `..`
    os.symlink("loop", tree / "proj" / "loop")  # a link to itself
    (tree / "proj" / "pkg" / "sub" / "deeper").mkdir()
    monkeypatch.chdir(tree / "proj" / "pkg")
    forget_folders()
    here = Path.cwd()
    for rel in (
        "proj", "proj/pkg/sub/deeper", "proj/linked/sub", "proj/twice/sub/deeper", "proj/pkg/up",
        "proj/pkg/up/../proj", "proj/linked/../other", "proj/nowhere/sub", "proj/loop/sub", "proj/pkg/sub/..",
    ):  # fmt: skip
        for spelled in (
            os.path.relpath(tree / rel, here),
            str(tree / rel),
            f"./{os.path.relpath(tree / rel, here)}",
        ):
            resolved = _outcome(Path.resolve, Path(spelled))
            expected = str(resolved) if isinstance(resolved, Path) else resolved
            assert _outcome(lambda p: _resolved(p, os.getcwd()), spelled) == expected, spelled
