"""Small CUDA projects written into tmp dirs, run through the real runner."""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache
from pathlib import Path

import pytest

from porter.pipeline.port import port_source
from porter.core.findings import FileResult
from porter.report import ReportModel
from porter.pipeline.runner import run
from porter.config.settings import Settings

# a.py: 3 sites rewritten (DEV001, CUDA003, DEV002), 2 manual (CUDA007, CUDA006)
A = """import torch


def main():
    x = torch.randn(3).cuda()
    torch.cuda.synchronize()
    cap = torch.cuda.get_device_capability()
    s = torch.cuda.Stream()
    d = torch.device("cuda")
    return x, cap, s, d
"""
# b.py: unchanged, 1 manual site (CUDA007) on line 4
B = """import torch


cap = torch.cuda.get_device_capability()
"""
C = "x = 1\n"  # skipped: no CUDA token
BAD = "import torch\ndef f(:\n    torch.cuda.synchronize()\n"  # error: syntax


def write_project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def build(root: Path, target: str = "xla", kind: str = "rewrite", **kw) -> ReportModel:
    settings = Settings(target=target, **kw)
    old = Path.cwd()
    os.chdir(root)  # display paths relative to the project, as the CLI does
    try:
        results, summary = run([Path(".")], settings)
    finally:
        os.chdir(old)
    return ReportModel.from_run(results, summary, settings, kind=kind)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj", {"pkg/a.py": A, "pkg/b.py": B, "c.py": C, "bad.py": BAD})


@pytest.fixture
def model(project: Path) -> ReportModel:
    return build(project)


BLOCK = (
    "def step_{i}(x, model):\n"
    "    x = x.cuda()\n"
    "    model = model.cuda()\n"
    "    torch.cuda.synchronize()\n"
    '    y = torch.zeros(3, device="cuda")\n'
    "    cap = torch.cuda.get_device_capability()\n"
    "    return model(x) + y\n\n\n"
)


def big_source(blocks: int) -> str:
    return "import torch\n\n\n" + "".join(BLOCK.format(i=i) for i in range(blocks))


def big_project(root: Path, files: int = 40, blocks: int = 30) -> Path:
    """A tree with thousands of lines to port: `files` x `blocks` x 4 changed lines."""
    for f in range(files):
        p = root / f"mod{f // 10}" / f"file_{f}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(big_source(blocks))
    return root


@lru_cache(maxsize=4)
def _ported(blocks: int) -> FileResult:
    return port_source(big_source(blocks).encode(), "file.py", Settings(target="xla"))


def big_model(files: int = 40, blocks: int = 30) -> ReportModel:
    """The model of a big port without paying libcst for every file: one real port of the
    file, repeated under `files` paths (the report only reads the results)."""
    one = _ported(blocks)
    results = []
    for f in range(files):
        path = f"mod{f // 10}/file_{f}.py"
        results.append(
            dataclasses.replace(one, path=path, findings=[dataclasses.replace(x, path=path) for x in one.findings])
        )
    return ReportModel.from_run(results, None, Settings(target="xla"))
