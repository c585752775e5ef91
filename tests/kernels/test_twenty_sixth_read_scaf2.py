"""The twenty-sixth read's second wave of the scaffold writer (issue 24): the first wave's leftovers."""

from __future__ import annotations

from typer.testing import CliRunner

from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

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


KEPT_WRAPPER = (
    "import triton\nimport triton.language as tl\n"
    "from torch.library import wrap_triton\n\n\n"
    + "".join(
        f"@triton.jit\ndef {k}(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n\n\n"
        for k in ("kept", "other", "held", "later")
    )
    + "KERNELS = {'a': held}\n\n\n"
    "def run(x, op):\n"
    "    launch = wrap_triton(kept)\n"
    "    launch[(1,)](x, x.numel(), BLOCK=64)\n"
    "    wrap_triton(KERNELS[op])[(1,)](x, 1, BLOCK=64)\n"
    "    go = wrap_triton(later)[(1,)]\n\n\n"
    "def again(x):\n"
    "    launch = wrap_triton(other)\n"
    "    launch[(2,)](x, 2, BLOCK=32)\n"
)


def test_a_wrap_triton_kept_in_a_name_or_of_a_container_is_followed(tmp_path):
    # `launch = wrap_triton(k)` then `launch[grid](...)` was a launch of `launch` (no kernel), and
    # `wrap_triton(KERNELS[op])[grid]` and a kept `wrap_triton(k)[grid]` were followed by nothing:
    # each kernel was listed with no launch and its scaffold's inputs made up, unsaid
    (tmp_path / "k.py").write_text(KEPT_WRAPPER)
    inv = scan(tmp_path)
    got = {k.name: ([(c.line, c.args) for c in k.calls], len(k.unresolved)) for k in inv.kernels}
    assert got == {
        "kept": ([(31, ["x", "x.numel()", "BLOCK=64"])], 0),
        "other": ([(38, ["x", "2", "BLOCK=32"])], 0),
        "held": ([], 1),
        "later": ([], 1),
    }
    [held] = [k for k in inv.kernels if k.name == "held"]
    assert "one of the kernels `KERNELS` holds, picked at run time" in held.unresolved[0]


TWO_LOOKUPS = (
    "#include <cuda.h>\n\n"
    "void run_a(CUmodule mod, void** args) {\n  CUfunction f;\n"
    '  cuModuleGetFunction(&f, mod, "scale");\n  cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, args, 0);\n}\n\n'
    "void run_b(CUmodule mod, void** args) {\n  CUfunction f;\n"
    '  cuModuleGetFunction(&f, mod, "shift");\n  cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, args, 0);\n}\n'
)


def test_a_cufunction_two_lookups_name_is_said_to_each_kernel(tmp_path):
    # `f` looked up as `scale` in one function and as `shift` in another: both launches were `shift`'s
    # (the last lookup), `scale` listed with no launch and its inputs made up, unsaid
    (tmp_path / "k.cu").write_text(
        "__global__ void scale(float* x, int n) {}\n__global__ void shift(float* x, int n) {}\n"
    )
    (tmp_path / "host.cpp").write_text(TWO_LOOKUPS)
    said = {k.name: k.unresolved for k in scan(tmp_path, limit=None).kernels}
    how = (
        "launched through `cuLaunchKernel` (a `CUfunction` of a module loaded at run time), one of `scale`, "
        "`shift` (this file looks `f` up as each) at host.cpp:{}, whose arguments (an array of their "
        "addresses) porter does not read"
    )
    assert said == {"scale": [how.format(6), how.format(12)], "shift": [how.format(6), how.format(12)]}


INLINE_NAMES = (
    "from torch.utils.cpp_extension import load_inline\n\n"
    "a = load_inline(name='a', cpp_sources='', functions=['b'])\n"
    "d = load_inline(name='a-b', cpp_sources='')\n"
    "u = load_inline(name='a_b', cpp_sources='')\n"
)


def test_a_kernel_whose_name_is_a_python_name_keeps_it_among_names_that_meet(tmp_path):
    # `a.b`, `a-b` and `a_b` meet as `a_b`: numbered in order, `a_b`'s files were `a_b___op.py`
    (tmp_path / "m.py").write_text(INLINE_NAMES)
    inv = scan(tmp_path)
    assert [k.name for k in inv.kernels] == ["a.b", "a-b", "a_b"]
    write_scaffolds(inv, tmp_path / "out", "xla")
    heads = {p.name: p.read_text().splitlines()[0] for p in (tmp_path / "out").glob("*_op.py")}
    assert heads == {
        "a_b_op.py": '"""Reference op for cpp_extension kernel `a_b` (m.py:5), scaffolded by porter.',
        "a_b__op.py": '"""Reference op for cpp_extension kernel `a.b` (m.py:3), scaffolded by porter.',
        "a_b___op.py": '"""Reference op for cpp_extension kernel `a-b` (m.py:4), scaffolded by porter.',
    }


KERN = (
    "import triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef k_one(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n\n\n"
    "@triton.jit\ndef k_two(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 2.0)\n"
)
OPS = (
    "import triton\nimport triton.language as tl\n\nfrom ..kern import k_one as fast\nfrom ..kern import k_two\n\n\n"
    "@triton.jit\ndef k_own(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 3.0)\n"
)
USE = (
    "from . import empty, ops\n\n\n"
    "def run(x, name):\n"
    "    getattr(ops, name)[(1,)](x, BLOCK=64)\n"
    "    getattr(empty, name)[(1,)](x, BLOCK=64)\n"
)


def test_a_kernel_a_module_imports_is_among_those_getattr_of_it_may_run(tmp_path):
    # `getattr(ops, name)[grid]` was said to `k_own` only: `ops` imports `k_one` (as `fast`) and
    # `k_two`, which it may run too, listed with no launch; and of `empty` (it imports one, in a file
    # the byte test passes over) nothing was said: a note, then (twenty-seventh read) its imports are
    # read where such a launch names it
    pkg = tmp_path / "pkg"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "kern.py").write_text(KERN)
    (pkg / "ops" / "__init__.py").write_text(OPS)
    (pkg / "empty.py").write_text("from .kern import k_one\n")
    (pkg / "use.py").write_text(USE)
    inv = scan(tmp_path)
    said = "launched as `getattr(ops, ...)[...](...)` at pkg/use.py:5, a kernel of pkg.ops named at run time"
    of_empty = "launched as `getattr(empty, ...)[...](...)` at pkg/use.py:6, a kernel of pkg.empty named at run time"
    assert {k.name: [u.partition(": its")[0] for u in k.unresolved] for k in inv.kernels} == {
        "k_one": [said, of_empty],
        "k_two": [said],
        "k_own": [said],
    }
    assert inv.problems == []


def test_a_wrap_triton_bound_by_annotation_chain_or_walrus_is_followed(tmp_path):
    # the adversarial pass over the fix above: `a: T = wrap_triton(k)`, `b = c = wrap_triton(k)` and
    # `(w := wrap_triton(k))[grid]` were followed by nothing; a name bound again (`r = print`) is no launch
    kernels = "".join(
        f"@triton.jit\ndef {k}(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n\n\n"
        for k in ("ann", "chain", "walrus", "rebound")
    )
    (tmp_path / "k.py").write_text(
        "import triton\nimport triton.language as tl\nfrom torch.library import wrap_triton\n\n\n"
        + kernels
        + "def run(x):\n"
        "    a: object = wrap_triton(ann)\n    a[(1,)](x, BLOCK=1)\n"
        "    b = c = wrap_triton(chain)\n    c[(1,)](x, BLOCK=2)\n"
        "    (w := wrap_triton(walrus))[(1,)](x, BLOCK=3)\n"
        "    r = wrap_triton(rebound)\n    r = print\n    r[(1,)](x, BLOCK=4)\n"
    )
    got = {k.name: [c.args[-1] for c in k.calls] for k in scan(tmp_path).kernels}
    assert got == {"ann": ["BLOCK=1"], "chain": ["BLOCK=2"], "walrus": ["BLOCK=3"], "rebound": []}


def test_a_cufunction_also_looked_up_by_a_name_built_at_run_time_says_so(tmp_path):
    # the adversarial pass over the fix above: `f` looked up as "scale" and, in another function, by
    # a name built at run time (or a string no word): both launches were `scale`'s, unsaid
    (tmp_path / "k.cu").write_text(
        "__global__ void scale(float* x, int n) {}\n__global__ void shift(float* x, int n) {}\n"
    )
    (tmp_path / "host.cpp").write_text(TWO_LOOKUPS.replace('"shift"', "name"))
    inv = scan(tmp_path, limit=None)
    said = {k.name: len(k.unresolved) for k in inv.kernels}
    assert said == {"scale": 2, "shift": 0}
    assert all("one of `scale`, a name built at run time" in u for u in inv.kernels[0].unresolved)
    assert inv.problems == [
        f"host.cpp:{n}: `cuLaunchKernel` launches `f`, which a lookup of this file names at run time: the kernel"
        " it runs there is not read"
        for n in (6, 12)
    ]
