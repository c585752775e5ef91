"""Real distributions' files around the Python: every CUDA-specific line ported or reported.

The pinned sdists of benchmarks/real_files.py (downloaded from PyPI once, sha256-checked,
cached): axolotl 0.6.0's requirements, Dockerfiles, compose file, shell scripts, workflows,
YAML and DeepSpeed configs and Colab notebook, and gpytorch 1.13's CUDA notebooks, ported in
process and audited with benchmarks/no_silence.py's scan (the whole tree, every target, is the
benchmark: `python benchmarks/real_files.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline.runner import run

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from no_silence import constructs as scan  # noqa: E402
from no_silence import kind_of, uncovered  # noqa: E402
from real_files import DISTS, tree  # noqa: E402

pytestmark = pytest.mark.slow


def _files(package: str) -> list[Path]:
    row = next(d for d in DISTS if d[0] == package)
    root = tree(*row)
    files = sorted(p for p in root.rglob("*") if p.is_file() and kind_of(p.relative_to(root).as_posix()))
    if package == "gpytorch":  # its notebooks that use CUDA
        files = [p for p in files if p.suffix == ".ipynb" and b"cuda" in p.read_bytes()][:12]
    return files


@pytest.mark.parametrize("package,target", [("axolotl", "neuron"), ("axolotl", "xla"), ("gpytorch", "tpu")])
def test_every_cuda_line_is_ported_or_reported(package, target):
    files = _files(package)
    assert len(files) > 10
    results, _ = run(files, Settings(target=target), cache=False, jobs=1)
    kinds: set[str] = set()
    constructs = 0
    missing = []
    for r in results:
        assert r.status.value != "error", (r.path, r.reason)
        if r.original_source is None or r.status.value not in ("changed", "unchanged"):
            continue
        kind = kind_of(r.path)
        kinds.add(kind)
        original = r.original_source.decode("utf-8", "replace")
        ported = r.new_source.decode("utf-8", "replace") if r.new_source is not None else None
        constructs += len(scan(original, kind))  # CUDA lines to port or report
        missing += [
            (r.path, c.line, c.text) for c, _ in uncovered(original, ported, [f.to_dict() for f in r.findings], kind)
        ]
    assert not missing, "\n".join(f"{p}:{line}: {text}" for p, line, text in missing)
    assert constructs > 10  # the originals had CUDA lines to check
    if package == "axolotl":
        assert {"dockerfile", "compose", "shell", "requirements", "yaml", "json", "notebook"} <= kinds
