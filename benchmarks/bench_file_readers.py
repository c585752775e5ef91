"""How porter's readers of files other than Python scale with a hostile file's size.

    .venv/bin/python benchmarks/bench_file_readers.py [--scale 1.0] [--only setup-cfg,yaml]

Generates the large files issue 24's third adversarial read found slow (a setup.cfg of
200,000 requirement lines, a setup.py of 50,000 strings, 100,000 YAML documents, a
requirements file of 50,000 fixable pins, a 20,000-cell notebook) at a quarter and at the full
size, ports each in this process (as a worker does, no cache) and prints seconds, findings and
seconds per 1,000 findings. Work that grows linearly keeps the last column flat between the
two sizes; the full sizes must stay well inside the 60 s per-file limit (the notebook, ported
as Python, is as fast as the same cells in a .py file and is bounded by that limit).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from porter.config.settings import Settings  # noqa: E402
from porter.files.port import port_file  # noqa: E402


def _notebook(n: int) -> bytes:
    cell = {"cell_type": "code", "metadata": {}, "source": "import torch\nx = torch.randn(3).cuda()\n"}
    cells = [{**cell, "outputs": [], "execution_count": None}] * n
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


CASES = {
    "setup-cfg": (200_000, "setup.cfg", lambda n: b"[options]\ninstall_requires =\n" + b"    cupy-cuda12x\n" * n),
    "setup-py": (
        50_000,
        "setup.py",
        lambda n: b"from setuptools import setup\nsetup(install_requires=[" + b"'cupy-cuda12x',\n" * n + b"])\n",
    ),
    "yaml": (100_000, "c.yaml", lambda n: b"device: cuda\n---\n" * n),
    "requirements": (50_000, "requirements.txt", lambda n: b"torch==2.1.0+cu118\n" * n),
    "notebook": (20_000, "n.ipynb", _notebook),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every full size by this")
    ap.add_argument("--only", default="", help="comma-separated kinds (default: all)")
    args = ap.parse_args()
    port_file("requirements", b"torch\n", "requirements.txt", Settings(target="xla"))  # imports, rule tables
    print(f"{'kind':<14}{'size':>9}{'seconds':>10}{'findings':>10}{'s/1k findings':>15}")
    for kind, (full, name, make) in CASES.items():
        if args.only and kind not in args.only.split(","):
            continue
        for n in (int(full * args.scale) // 4, int(full * args.scale)):
            source = make(n)
            t0 = time.perf_counter()
            out = port_file(kind, source, name, Settings(target="xla"))
            took = time.perf_counter() - t0
            per = took / max(1, len(out.findings)) * 1000
            print(f"{kind:<14}{n:>9}{took:>10.2f}{len(out.findings):>10}{per:>15.3f}", flush=True)


if __name__ == "__main__":
    main()
