"""The twenty-second adversarial read of the scaffold writers (issue 24): each test failed on c17e310."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from porter.cli import app

KERNEL = """import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
"""

BACKENDS = {
    "base.py": "class Accelerator:\n    pass\n",
    "cuda_accelerator.py": "from base import Accelerator\n\n\nclass CUDA_Accelerator(Accelerator):\n    pass\n",
    "cpu_accelerator.py": "from base import Accelerator\n\n\nclass CPU_Accelerator(Accelerator):\n    pass\n",
}


def test_json_with_scaffold_keeps_stdout_one_json_document(tmp_path):
    # `kernels --json --scaffold` and `backends --json --scaffold` printed "wrote N file(s) under
    # DIR" (backends: and "wrote FILE" for each) on stdout after the document: json.loads failed
    # with "Extra data" (unsloth 2025.3.19's kernels, piped to jq)
    (tmp_path / "k.py").write_text(KERNEL)
    for name, text in BACKENDS.items():
        (tmp_path / name).write_text(text)
    runner = CliRunner()
    kernels = runner.invoke(
        app, ["kernels", str(tmp_path / "k.py"), "--json", "--target", "xla", "--scaffold", str(tmp_path / "k")]
    )
    assert [k["name"] for k in json.loads(kernels.stdout)["kernels"]] == ["scale"]
    assert "wrote 3 file(s) under" in kernels.stderr and (tmp_path / "k" / "scale_op.py").exists()
    backends = runner.invoke(
        app, ["backends", str(tmp_path), "--json", "--target", "tpu", "--scaffold", str(tmp_path / "b")]
    )
    assert [f["base"] for f in json.loads(backends.stdout)["families"]] == ["Accelerator"]
    assert "wrote 1 file(s) under" in backends.stderr
