"""The scaffold leftovers of the twenty-second read, closed in the twenty-third ("sleft", issue
24): each test failed on e74fdb1."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from porter.kernels.triton_ref import translate
from tests.deps import require
from tests.helpers import port, run_interpreted

PROMOTING = """import triton
import triton.language as tl


@triton.jit
def promoting(x_ptr, y_ptr, z_ptr, n, s, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x.to(tl.float16) / (s * s + 1.0) * 3.0 - 0.5, mask=mask)
    tl.store(z_ptr + offs, x.to(tl.int8) * k + 100, mask=mask)
"""

# the kernel under Triton's interpreter and the derived reference, on the same inputs
_RUN = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import promoting
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from porter.kernels.triton_ref import translate
x = torch.linspace(-60, 60, 200)
n, s, k = x.numel(), 0.3, 7
outs = {}
for side in ("kernel", "reference"):
    y, z = torch.zeros(n), torch.zeros(n)
    if side == "kernel":
        promoting.promoting[(-(-n // 64),)](x, y, z, n, s, k, BLOCK=64)
    else:
        ns = {"torch": torch}
        exec(translate(open(promoting.__file__).read(), "promoting").source(), ns)
        ns["promoting_reference"](x, y, z, n, s, k)
    outs[side] = [y.tolist(), z.tolist()]
print(json.dumps(outs))
"""


def test_the_reference_promotes_as_triton_divides_fp16_and_types_an_argument(tmp_path):
    """Triton computes `fp16 / (s * s + 1.0)` in fp32 (its source: `/` of fp16 is fp32, even by a
    literal) and `int8 * k` for an int argument `k` in int32 (an argument is a typed tensor); the
    reference computed both as torch does, in fp16 and in int8 (wrapped around: 512 apart here).
    Run against the kernel under TRITON_INTERPRET=1."""
    require("triton")
    (tmp_path / "promoting.py").write_text(PROMOTING)
    outs = run_interpreted(_RUN, tmp_path)
    kernel, reference = (torch.tensor(outs[side]) for side in ("kernel", "reference"))
    torch.testing.assert_close(reference, kernel, rtol=0, atol=0)


def test_a_float_argument_is_fp32_beside_an_fp16_value_as_a_compiled_kernel_types_it():
    """A compiled kernel takes a Python float argument as an fp32 tensor (Triton 3.5's
    `mangle_type`: "fp32"), so `fp16 * s` is computed in fp32; torch takes `s` as weak (fp16). Only
    the compiled rule is checked here: Triton's interpreter passes a float argument through as a
    Python number (`_implicit_cvt` converts ints and pointers only), weak, unlike the GPU."""
    source = PROMOTING.replace("x.to(tl.float16) / (s * s + 1.0) * 3.0 - 0.5", "x.to(tl.float16) * s")
    ns: dict = {"torch": torch}
    exec(translate(source, "promoting").source(), ns)
    x = torch.linspace(-60, 60, 200)
    y, z = torch.zeros(200), torch.zeros(200)
    ns["promoting_reference"](x, y, z, 200, 0.3, 7)
    torch.testing.assert_close(y, x.half().float() * 0.3, rtol=0, atol=0)


NAMESPACED = """namespace vllm {
namespace fp8 {
__global__ void scale(float* out, const float* in, int n) { out[0] = in[0] * n; }
}  // namespace fp8
namespace int8 {
__global__ void scale(float* out, const float* in, int n) { out[0] = in[0] + n; }
__global__ void scale(signed char* out, const float* in, float s, int n) { out[0] = in[0] * s; }
}  // namespace int8
void run(float* o, const float* i) {
  fp8::scale<<<1, 64>>>(o, i, 3);
  vllm::int8::scale<<<1, 64>>>(o, i, 5);
}
}  // namespace vllm
"""


def test_kernels_of_one_name_in_two_namespaces_are_told_apart(tmp_path):
    """`fp8::scale` and `int8::scale` of the same parameters were one kernel, "a twin" (the second
    dropped, both launches given to the first), and `int8::scale` of other parameters "an overload
    of line 3" of `fp8`'s; now each is listed, scaffolded and launched by its qualified name."""
    (tmp_path / "k.cu").write_text(NAMESPACED)
    inv = scan(tmp_path)
    listed = {(k.name, k.line): [c.args[-1] for c in k.calls] for k in inv.kernels}
    assert listed == {("vllm::fp8::scale", 3): ["3"], ("vllm::int8::scale", 6): ["5"], ("vllm::int8::scale", 7): []}
    overload = next(k for k in inv.kernels if k.line == 7)
    assert "an overload of line 6" in overload.detail
    assert all("twin" not in k.detail for k in inv.kernels)
    inv.kernels = [k for k in inv.kernels if k.line != 7]
    written = write_scaffolds(inv, tmp_path / "out", "xla")
    names = sorted(p.name for p in written if p.name.endswith("_op.py"))
    assert names == ["vllm__fp8__scale_op.py", "vllm__int8__scale_op.py"]
    assert "`vllm::int8::scale` (k.cu:6)" in (tmp_path / "out" / "vllm__int8__scale_op.py").read_text()


def test_a_backend_scaffold_s_relative_imports_resolve_where_it_is_written(tmp_path):
    """`from .abstract_accelerator import X` was copied into the new module as written: written
    into another folder than CUDA's (`--scaffold out`), it failed at import. Now absolute, of CUDA's
    package; the written module is imported in a fresh interpreter."""
    from porter.backends.scaffold import scan as backends, write_backend

    accel = tmp_path / "proj" / "pkg" / "accel"
    accel.mkdir(parents=True)
    (accel.parent / "__init__.py").write_text("")
    (accel / "__init__.py").write_text("")
    (accel / "abstract_accelerator.py").write_text("class Accelerator:\n    pass\n")
    (accel.parent / "util.py").write_text("LIMIT = 3\n")
    for device in ("cuda", "cpu"):
        (accel / f"{device}_accelerator.py").write_text(
            "from .abstract_accelerator import Accelerator\nfrom .. import util\nfrom ..util import LIMIT\n\n\n"
            f"class {device.upper()}_Accelerator(Accelerator):\n    def device_name(self):\n"
            f"        return '{device}' * LIMIT\n"
        )
    (family,) = backends(tmp_path / "proj")
    made = write_backend(family, tmp_path / "proj", tmp_path / "out", "xla")
    assert made is not None
    text = made.read_text()
    assert "from pkg.accel.abstract_accelerator import Accelerator" in text and "from pkg import util" in text
    run = subprocess.run(
        [sys.executable, "-c", f"import {made.stem} as m; print(m.XLA_Accelerator.__mro__[1].__module__)"],
        capture_output=True,
        text=True,
        cwd=made.parent,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "proj")},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-1500:]
    assert run.stdout.split() == ["pkg.accel.abstract_accelerator"]
    # beside CUDA's module, its relative imports stay as written
    beside = write_backend(family, tmp_path / "proj", accel, "tpu")
    assert beside is not None and "from .abstract_accelerator import Accelerator" in beside.read_text()


def test_a_relative_import_of_a_module_in_no_package_is_said(tmp_path):
    from porter.backends.scaffold import scan as backends, write_backend

    (tmp_path / "base.py").write_text("class Accelerator:\n    pass\n")
    for device in ("cuda", "cpu"):
        (tmp_path / f"{device}_accelerator.py").write_text(
            f"from .base import Accelerator\n\n\nclass {device.upper()}_Accelerator(Accelerator):\n    pass\n"
        )
    (family,) = backends(tmp_path)
    made = write_backend(family, tmp_path, tmp_path / "out", "xla")
    assert made is not None
    text = made.read_text()
    assert "# TODO(porter): a relative import of CUDA's module" in text and "from .base import" in text


def test_a_utf16_cu_without_a_byte_order_mark_is_named_as_not_read(tmp_path):
    """A UTF-16/32 `.cu` with a byte-order mark was named as not read; one without (Python's
    `utf-16-le`, `utf-32-be`) was read as UTF-8, found to hold no kernel, and said nothing."""
    source = "// ok\n__global__ void k(float* x) { x[0] = 1; }\n"
    (tmp_path / "a.cu").write_bytes(source.encode("utf-16-le"))
    (tmp_path / "b.cu").write_bytes(source.encode("utf-16-be"))
    (tmp_path / "c.cuh").write_bytes(source.encode("utf-32-le"))
    (tmp_path / "d.cu").write_bytes(source.encode())
    (tmp_path / "e.cu").write_bytes(source.encode() + b"\0" * 8)  # a few NULs are no UTF-16 text
    inv = scan(tmp_path)
    assert sorted(k.path for k in inv.kernels) == ["d.cu", "e.cu"]
    said = sorted(p.split(":")[0] for p in inv.problems if "no byte-order mark, but NUL bytes" in p)
    assert said == ["a.cu", "b.cu", "c.cuh"] and len(inv.problems) == 3


SELF_LAUNCH = """import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class Op:
    def __init__(self, fast):
        self._kernel = scale
        self._other = fast

    def __call__(self, x, out):
        self._kernel[(1,)](x, out, x.numel(), BLOCK=64)
        self._other[(1,)](x, out, x.numel(), BLOCK=64)
"""


def test_kern002_reports_a_launch_through_self_of_the_file_s_kernel(tmp_path):
    """`self._kernel = scale`, `self._kernel[grid](...)`: `porter kernels` lists the launch as a
    call of `scale`, lint reported no launch; `self._other`, assigned no kernel of the file, is
    not reported (nor listed)."""
    _, findings = port(SELF_LAUNCH, "xla")
    said = [(f.start.line, f.message) for f in findings if f.code == "KERN002"]
    assert [line for line, _ in said] == [6, 17]
    assert "launch of Triton kernel `scale` (through `self._kernel`)" in said[1][1]
    (tmp_path / "op.py").write_text(SELF_LAUNCH)
    (kernel,) = scan(tmp_path).kernels
    assert [c.line for c in kernel.calls] == [17]


GLUON_UTILS = "from triton.experimental import gluon\nfrom triton.experimental.gluon import language as gl\n"
GLUON = """{imports}

@gluon.jit
def scale(x_ptr, out_ptr, n, BLOCK: gl.constexpr):
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=gl.BlockedLayout([1], [32], [4], [0]))
    gl.store(out_ptr + offs, gl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def run(x, out):
    scale[(1,)](x, out, x.numel(), BLOCK=128)
"""


def test_a_gluon_kernel_is_listed_where_lint_reports_it(tmp_path):
    """`@gluon.jit` (vllm 0.34.0's 36, Gluon re-exported beside `gl`) was reported by lint on the
    body's evidence and not listed by `porter kernels`; imported from Triton directly it was neither
    (lint said "the kernels that use it are reported where they are defined", and reported none)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "triton_utils.py").write_text(GLUON_UTILS)
    (pkg / "reexported.py").write_text(GLUON.format(imports="from pkg.triton_utils import gluon, gl\n"))
    (pkg / "direct.py").write_text(GLUON.format(imports=GLUON_UTILS))
    kernels = {k.path: k for k in scan(tmp_path).kernels}
    assert sorted(kernels) == ["pkg/direct.py", "pkg/reexported.py"]
    assert "`gluon.jit` is Triton's: `pkg.triton_utils` in the tree binds it" in kernels["pkg/reexported.py"].detail
    for name, kernel in kernels.items():
        lines = (tmp_path / name).read_text().splitlines()
        defined, launched = (
            next(i for i, t in enumerate(lines, 1) if t.strip().startswith(w)) for w in ("def s", "scale[")
        )
        assert kernel.name == "scale" and [c.line for c in kernel.calls] == [launched]
        said = [f.start.line for f in port((tmp_path / name).read_text(), "xla")[1] if f.code == "KERN002"]
        assert said[-2:] == [defined, launched]


NO_TRITON_WORD = """from .tu import jit, tl


@jit
def fill(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0)
"""


def test_a_kernel_in_a_file_that_never_spells_triton_is_listed_and_linted(tmp_path):
    """`from .tu import jit, tl` (`tu` re-exporting Triton), `@jit`: the file was read for Triton by
    neither `porter kernels` nor lint (their byte tests look for "triton"; this file has no `[`
    either), so the kernel was neither listed nor reported."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tu.py").write_text("import triton.language as tl\nfrom triton import jit\n")
    (pkg / "fill.py").write_text(NO_TRITON_WORD)
    (kernel,) = scan(tmp_path).kernels
    assert (kernel.name, kernel.path) == ("fill", "pkg/fill.py")
    assert "`jit` is Triton's: `.tu` in the tree binds it" in kernel.detail
    said = [f for f in port(NO_TRITON_WORD, "xla")[1] if f.code == "KERN002"]
    assert [f.start.line for f in said] == [5]
    assert "the body uses `tl.constexpr`" in said[0].message
