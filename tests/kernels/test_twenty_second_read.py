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


ALIASED = """import triton
import triton.language as tl

jit = triton.jit
tuned = jit

@jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

@tuned(debug=True)
def triple(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)

def run(x, out):
    double[(1,)](x, out, x.numel(), BLOCK=64)
    triple[(1,)](x, out, x.numel(), BLOCK=64)
"""


def test_a_triton_kernel_under_a_module_level_alias_of_triton_jit_is_listed_scaffolded_and_linted(tmp_path):
    # `jit = triton.jit` then `@jit`: neither kernel nor launch listed, scaffolded or linted (found
    # by generated decorator stacks checked against an ast oracle)
    from porter.kernels.inventory import scan
    from porter.kernels.scaffold import write_scaffolds
    from tests.helpers import port

    (tmp_path / "k.py").write_text(ALIASED)
    inv = scan(tmp_path)
    kernels = {k.name: k for k in inv.kernels}
    assert set(kernels) == {"double", "triple"}
    assert [c.line for c in kernels["double"].calls] == [18] and [c.line for c in kernels["triple"].calls] == [19]
    write_scaffolds(inv, tmp_path / "out", "xla")
    assert "derived by porter" in (tmp_path / "out" / "triple_op.py").read_text()
    _, findings = port(ALIASED, "neuron")
    said = [(f.start.line, f.message.split(":")[0]) for f in findings if f.code == "KERN002"]
    assert said == [
        (8, "Triton kernel `double` (`@triton.jit`)"),
        (13, "Triton kernel `triple` (`@triton.jit`)"),
        (18, "launch of Triton kernel `double`"),
        (19, "launch of Triton kernel `triple`"),
    ], said


VLLM_STYLE = """from vllm.triton_utils import tl, triton

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

from other import jit as not_triton

@not_triton
def plain(x):
    return x.load()

def run(x):
    scale[(1,)](x, x.numel(), BLOCK=64)
"""


def test_a_triton_kernel_under_a_module_re_exporting_triton_is_listed_and_linted(tmp_path):
    # vllm imports Triton through its own module (`from vllm.triton_utils import tl, triton`): its
    # kernels were neither listed nor linted. In the tree, the module's own imports resolve the
    # name; without it, the body's `tl.program_id` through the same module is the evidence
    from porter.kernels.inventory import scan
    from tests.helpers import port

    (tmp_path / "k.py").write_text(VLLM_STYLE)
    kernels = {k.name: k for k in scan(tmp_path).kernels}
    assert set(kernels) == {"scale"} and [c.line for c in kernels["scale"].calls] == [15]
    assert "(not in the tree) taken as Triton's: the body uses `tl.constexpr`" in kernels["scale"].detail
    findings = [f for f in port(VLLM_STYLE, "xla")[1] if f.code == "KERN002"]
    assert [f.start.line for f in findings] == [4, 15]
    assert (
        "(`@vllm.triton_utils.triton.jit`; `triton.jit` from `vllm.triton_utils` (not in the tree)"
        in findings[0].message
    )

    package = tmp_path / "tree"
    (package / "vllm" / "triton_utils").mkdir(parents=True)
    (package / "vllm" / "__init__.py").write_text("")
    (package / "vllm" / "triton_utils" / "__init__.py").write_text("import triton\nimport triton.language as tl\n")
    (package / "ops.py").write_text("import vllm.triton_utils as tu\n\n@tu.triton.jit\ndef bare(x_ptr):\n    pass\n")
    kernels = {k.name: k for k in scan(package).kernels}
    assert set(kernels) == {"bare"}
    assert "`vllm.triton_utils` in the tree binds it" in kernels["bare"].detail
    # the package scanned itself (`porter kernels vllm`): its own `vllm.triton_utils` is in the tree
    (package / "vllm" / "ops.py").write_text((package / "ops.py").read_text())
    kernels = {k.name: k for k in scan(package / "vllm").kernels}
    assert set(kernels) == {"bare"} and "in the tree binds it" in kernels["bare"].detail
    # a chain (`vllm/chain.py` re-exports vllm.triton_utils'): the file binds no Triton, the body decides
    (package / "vllm" / "chain.py").write_text("from vllm.triton_utils import tl, triton\n")
    (package / "vllm" / "ops.py").write_text(VLLM_STYLE.replace("vllm.triton_utils", "vllm.chain"))
    kernels = {k.name: k for k in scan(package / "vllm").kernels}
    assert set(kernels) == {"scale"} and "its file binds `triton` by no import of Triton" in kernels["scale"].detail
