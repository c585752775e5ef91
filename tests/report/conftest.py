"""Small CUDA projects written into tmp dirs, run through the real runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from porter.report import ReportModel
from porter.runner import run
from porter.settings import Settings

# a.py: 3 sites rewritten (DEV001, CUDA003, DEV002), 2 manual (CUDA007, CUDA006)
A = '''import torch


def main():
    x = torch.randn(3).cuda()
    torch.cuda.synchronize()
    cap = torch.cuda.get_device_capability()
    s = torch.cuda.Stream()
    d = torch.device("cuda")
    return x, cap, s, d
'''
# b.py: unchanged, 1 manual site (CUDA007) on line 4
B = '''import torch


cap = torch.cuda.get_device_capability()
'''
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


def big_project(root: Path, files: int = 40, blocks: int = 30) -> Path:
    """A port with thousands of changed lines: `files` x `blocks` x 4 changed lines."""
    block = (
        "def step_{i}(x, model):\n"
        "    x = x.cuda()\n"
        "    model = model.cuda()\n"
        "    torch.cuda.synchronize()\n"
        "    y = torch.zeros(3, device=\"cuda\")\n"
        "    cap = torch.cuda.get_device_capability()\n"
        "    return model(x) + y\n\n\n"
    )
    for f in range(files):
        body = "import torch\n\n\n" + "".join(block.format(i=i) for i in range(blocks))
        p = root / f"mod{f // 10}" / f"file_{f}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)
    return root
