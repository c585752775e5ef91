"""A Python file whose lines end in a lone CR (old Mac style: Python reads it as a line end), or
in a mix of CRLF and CR, gets the findings of its LF twin (codes, lines, columns) and the same
kept/rewritten decisions, its rewrite in its own line ends. The project analysis's line-anchored
byte patterns once saw such a file as one line: its imports of CUDA-only packages (KERN003) and
its CUDA-only modules went unseen, and code the LF file keeps for CUDA was rewritten."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.core.reading import lf_line_ends
from porter.pipeline.runner import run
from tests.helpers import write_files

ROOT = Path(__file__).resolve().parent.parent
MULTIBACKEND = ROOT / "fixtures" / "libraries" / "multibackend" / "src"

SNIPPETS = {
    "app/__init__.py": "",
    "app/model.py": """\
        import torch
        from liger_kernel.transformers import LigerRMSNorm


        def norm(x):
            return LigerRMSNorm(8).cuda()(x)
        """,
    "app/attn.py": """\
        import torch
        try:
            import flash_attn
        except ImportError:
            flash_attn = None


        def attend(q):
            if flash_attn is not None:
                return flash_attn.flash_attn_func(q, q, q)
            return q.to("cuda")
        """,
}


def _cr_only(source: bytes) -> bytes:
    return source.replace(b"\r\n", b"\n").replace(b"\n", b"\r")


def _mixed(source: bytes) -> bytes:
    """Every other line end a CRLF, the rest a lone CR."""
    lines = source.replace(b"\r\n", b"\n").split(b"\n")
    return b"".join(line + (b"\r\n" if i % 2 else b"\r") for i, line in enumerate(lines[:-1])) + lines[-1]


def _tree(tmp_path: Path, name: str, ends) -> Path:
    root = tmp_path / name
    shutil.copytree(MULTIBACKEND, root / "mb")
    write_files(root / "snip", SNIPPETS)
    for path in root.rglob("*.py"):
        path.write_bytes(ends(path.read_bytes()))
    return root


def _ported(root: Path, target: str) -> dict[str, tuple[list[tuple], bytes | None]]:
    results, _ = run([root], Settings(target=target), jobs=1, cache=False)
    out = {}
    for r in results:
        if r.path.endswith(".py"):
            found = sorted(
                (f.code, f.start.line, f.start.column, f.end.line, f.end.column, f.message.replace(str(root), "ROOT"))
                for f in r.findings
            )
            out[Path(r.path).relative_to(root).as_posix()] = (found, r.new_source)
    return out


@pytest.mark.parametrize("target", ["neuron", "xla"])
@pytest.mark.parametrize("ends", [_cr_only, _mixed], ids=["cr", "crlf-cr"])
def test_lone_cr_line_ends_give_the_lf_findings_and_rewrites(tmp_path, target, ends):
    lf = _ported(_tree(tmp_path, "lf", lambda s: s), target)
    other = _ported(_tree(tmp_path, "other", ends), target)
    assert lf.keys() == other.keys()
    codes = {code for found, _ in lf.values() for code, *_ in found}
    assert {"KERN003", "GUARD003"} <= codes  # the CUDA-only package and module facts are there
    for rel, (found, new) in lf.items():
        found_other, new_other = other[rel]
        assert found_other == found, rel
        # kept or rewritten alike, the rewrite in the file's own line ends
        assert (new_other is None) == (new is None), rel
        if new is not None and new_other is not None:
            assert b"\n" not in new_other.replace(b"\r\n", b"") or ends is not _cr_only, rel
            assert lf_line_ends(new_other).replace(b"\r\n", b"\n") == new.replace(b"\r\n", b"\n"), rel


def test_lf_line_ends_keeps_offsets_and_copies_only_lone_crs():
    source = b"a = 1\rb = 2\r\nc = 3\n\r"
    assert lf_line_ends(source) == b"a = 1\nb = 2\r\nc = 3\n\n"
    for same in (b"a = 1\nb = 2\n", b"a = 1\r\nb = 2\r\n", b""):
        assert lf_line_ends(same) is same
    assert [m.start() for m in re.finditer(rb"^\w", lf_line_ends(source), re.M)] == [0, 6, 13]
