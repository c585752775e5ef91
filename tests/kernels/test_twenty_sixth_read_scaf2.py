"""The twenty-sixth read's second wave of the scaffold writer (issue 24): the first wave's leftovers."""

from __future__ import annotations

from typer.testing import CliRunner

from porter.cli import app

ACCEL = (
    "import torch\n\n\nclass Accelerator:\n    pass\n\n\nclass CUDA_Accelerator(Accelerator):\n"
    "    def sync(self):\n        torch.cuda.synchronize()\n"
)
CPU_ACCEL = "class CPU_Accelerator(Accelerator):\n    pass\n"


def test_backends_scaffold_says_whether_a_kept_file_differs(tmp_path):
    # a rerun of `backends --scaffold` said each kept file "exists (or is a link): kept", the one that
    # is porter's own as the one edited since; `kernels --scaffold` says which (twenty-sixth read)
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "cuda_accelerator.py").write_text(ACCEL)
    (src / "cpu_accelerator.py").write_text(CPU_ACCEL)
    (src / "b").mkdir()
    (src / "b" / "cuda_device.py").write_text(ACCEL.replace("Accelerator", "Device"))
    (src / "b" / "cpu_device.py").write_text(CPU_ACCEL.replace("Accelerator", "Device"))
    args = ["backends", str(src), "--target", "neuron", "--scaffold", str(out)]
    runner = CliRunner()
    assert "wrote 2 file(s)" in runner.invoke(app, args).stdout
    with (out / "neuron_device.py").open("a") as f:
        f.write("# edited\n")
    notes = sorted(line for line in runner.invoke(app, args).stderr.splitlines() if line.startswith("note:"))
    assert notes == [
        f"note: {out}/neuron_accelerator.py exists, as porter writes it: kept",
        f"note: {out}/neuron_device.py exists: kept, not overwritten, and differs from what porter writes now"
        " (edited, or its source changed)",
    ]
