"""`lint` and `rewrite` never import or execute the code they read."""

from __future__ import annotations

from pathlib import Path

from .conftest import porter

PAYLOAD = b"""import torch
open({path!r}, "w").write("imported!")
x = torch.randn(3).cuda()
"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    sentinel = tmp_path / "SENTINEL"
    payload = PAYLOAD.replace(b"{path!r}", repr(str(sentinel)).encode())
    (root / "model.py").write_bytes(payload)
    # files named like modules porter itself imports: run from this folder, `python -m`
    # would put it first on sys.path
    for shadow in ("json", "typing", "libcst", "re", "enum", "dataclasses", "rich", "typer", "torch"):
        (root / f"{shadow}.py").write_bytes(payload)
    (root / "sitecustomize.py").write_bytes(payload)
    return root, sentinel


def test_rewrite_and_lint_never_import_user_code(tmp_path):
    root, sentinel = _tree(tmp_path)
    for args in (
        ["rewrite", ".", "--target", "xla", "--diff"],
        ["lint", ".", "--target", "xla"],
        ["rewrite", ".", "--target", "xla", "--allow-dirty", "--allow-no-vcs"],
    ):
        proc = porter(*args, cwd=root)
        assert not sentinel.exists(), (args, proc.stderr.decode())
        assert proc.returncode in (0, 1), (args, proc.stderr.decode())
    assert b".cuda()" not in (root / "model.py").read_bytes()  # it was ported, never run
