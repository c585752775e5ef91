"""The fixture notebook ported to xla runs on XLA:CPU and prints what the CUDA original prints on
the CPU: both executed for real (nbclient, an IPython kernel), the port from the expected tree
(its `model.py` ported too), the original from the project's source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.deps import need, require

pytestmark = [pytest.mark.xla, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "gpt_trainer"
PROBE = "print('device:', next(model.parameters()).device)"


def _run(folder: Path, tmp: Path) -> tuple[list[str], str]:
    """(the lines the notebook's cells printed, the device its model ended on)."""
    nbformat = need("nbformat")
    nbclient = need("nbclient")
    work = tmp / folder.name
    shutil.copytree(folder, work)
    nb = nbformat.read(str(work / "tutorial.ipynb"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute()
    printed: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "print(" not in cell.source or cell.source == PROBE:
            continue
        for out in cell.outputs:
            assert out.output_type != "error", f"{folder.name}: {out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream" and out.name == "stdout":
                printed += out.text.splitlines()
    device = next(o.text for o in nb.cells[-1].outputs if o.output_type == "stream").strip()
    return printed, device


def test_ported_notebook_prints_what_the_original_prints(tmp_path, monkeypatch):
    require("torch_xla", "ipykernel")
    monkeypatch.setenv("PJRT_DEVICE", "CPU")  # the kernels inherit it: the port runs on XLA:CPU
    original, where = _run(PROJECT / "src", tmp_path / "a")
    ported, ported_where = _run(PROJECT / "expected" / "xla", tmp_path / "b")
    assert where == "device: cpu"  # the CUDA original, on a machine without CUDA
    assert ported_where == "device: xla:0"  # the port really ran on the XLA device
    assert any(line.startswith("losses: ") for line in original) and len(original) >= 3
    assert ported == original
