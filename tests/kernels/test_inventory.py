"""`porter kernels`: the inventory, the scaffolds, and the generated reference ops."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.deps import need

TRITON = """import torch
import triton
import triton.language as tl

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)

@triton.jit
def scatter_kernel(x_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(x_ptr + tl.load(idx_ptr + offs), 1.0)

def scale(x, alpha):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), alpha, BLOCK=256)
    return out
"""

USER = "from .ops import scale_kernel\ndef again(x, o):\n    scale_kernel[(1,)](x, o, x.numel(), 2.0, BLOCK=64)\n"

CU = """#include <torch/extension.h>
template <typename T>
__global__ void __launch_bounds__(256) fused_bias_kernel(const T* __restrict__ x, T* y, int n) {}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("fused_bias", &fused_bias); }
"""

SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(ext_modules=[CUDAExtension(name="pkg._C", sources=["csrc/fused.cu"])], cmdclass={"build_ext": BuildExtension})
"""

EXT = """from torch.utils.cpp_extension import load
_ops = load(name="fused", sources=["csrc/fused.cu"])
def bias(x, b):
    return _ops.fused_bias(x, b)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg" / "csrc").mkdir(parents=True)
    (tmp_path / "pkg" / "ops.py").write_text(TRITON)
    (tmp_path / "pkg" / "user.py").write_text(USER)
    (tmp_path / "pkg" / "ext.py").write_text(EXT)
    (tmp_path / "pkg" / "csrc" / "fused.cu").write_text(CU)
    (tmp_path / "setup.py").write_text(SETUP)
    return tmp_path


def test_inventory(project):
    inv = scan(project)
    by = {(k.kind, k.name): k for k in inv.kernels}
    scale = by[("triton", "scale_kernel")]
    assert scale.path == "pkg/ops.py" and scale.line == 6
    assert [(c.path, c.line) for c in scale.calls] == [("pkg/ops.py", 18), ("pkg/user.py", 3)]
    assert scale.calls[0].args == ["x", "out", "x.numel()", "alpha", "BLOCK=256"]
    assert ("triton", "scatter_kernel") in by
    cu = by[("cuda", "fused_bias_kernel")]
    assert cu.path == "pkg/csrc/fused.cu" and cu.line == 3 and "binds: fused_bias" in cu.detail
    assert len(cu.params) == 3
    # setup.py sits at the root; its csrc/ is not there (the file is pkg/csrc/fused.cu)
    assert by[("cuda-extension", "pkg._C")].detail == "sources: csrc/fused.cu; not in the tree: csrc/fused.cu"
    ext = by[("cpp_extension", "fused.fused_bias")]
    assert [c.args for c in ext.calls] == [["x", "b"]]


def test_every_cpp_extension_call_is_listed(tmp_path):
    """Assigned or not, with its ops called or not, its sources present or not."""
    (tmp_path / "m.py").write_text(
        "import torch.utils.cpp_extension as ce\n"
        "from torch.utils.cpp_extension import load, load_inline\n"
        "class Ops:\n"
        "    def __init__(self):\n"
        "        self.ext = load(name='far', sources=['vendor/far.cu'])\n"
        "unused = ce.load('near', ['near.cu'])\n"
        "load_inline(name='inl', cpp_sources=[''], functions=['go'])\n"
        "exts = [ce.CUDAExtension('pkg.x', sources=SRC)]\n"
    )
    (tmp_path / "near.cu").write_text("// kernels\n")
    by = {k.name: k for k in scan(tmp_path).kernels}
    assert by["far"].kind == "cpp_extension" and by["far"].line == 5
    assert (
        by["far"].detail == "load(vendor/far.cu); not in the tree: vendor/far.cu; its ops are not called in this file"
    )
    assert by["near"].detail == "load(near.cu); its ops are not called in this file"
    assert by["inl.go"].line == 7
    assert by["pkg.x"].kind == "cuda-extension" and by["pkg.x"].detail == "sources: computed"


def test_a_kernel_commented_out_or_quoted_is_not_a_kernel(tmp_path):
    """`porter kernels` listed (and `--scaffold` wrote three files for) a `__global__` kernel in
    a `//` or `/* */` comment or a string literal (adversarial read 6); a kernel after them, a
    character literal, a digit separator and an op bound by name in `m.def("...")` still count."""
    (tmp_path / "k.cu").write_text(
        "/* __global__ void old_one(float* out) {}\n   still a comment */\n"
        "// __global__ void older(float* out) {}\n"
        "const char* s = \"__global__ void quoted(float* out) {}\"; char q = '\"'; int n = 1'000;\n"
        "__global__ void real(float* out /* the result */, int n) { out[0] = 1; }  // done\n"
        'PYBIND11_MODULE(x, m) { m.def("launch", &launch); /* m.def("gone", &gone); */ }\n'
    )
    kernels = scan(tmp_path).kernels
    assert [(k.name, k.line, k.params) for k in kernels] == [("real", 5, ["float* out", "int n"])]
    assert kernels[0].detail == "__global__; binds: launch"


def test_cli_lists_and_exits_1(project):
    result = CliRunner().invoke(app, ["kernels", str(project), "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert {k["name"] for k in data["kernels"]} >= {"scale_kernel", "scatter_kernel", "fused_bias_kernel"}


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_scaffold_files(project, tmp_path, target):
    out = tmp_path / "scaffold"
    written = write_scaffolds(scan(project), out, target)
    names = {p.name for p in written}
    assert {
        "scale_kernel_op.py",
        f"scale_kernel_{target}.py",
        f"test_scale_kernel_{target}_parity.py",
        "scatter_kernel_op.py",
    } <= names
    for p in written:
        compile(p.read_text(), str(p), "exec")  # every file is valid Python
    skeleton = (out / f"scale_kernel_{target}.py").read_text()
    marker = {"neuron": "@nki.jit", "tpu": "@torch.tpu.pallas.jax_op(", "xla": "make_kernel_from_pallas"}[target]
    assert marker in skeleton and "NotImplementedError" in skeleton
    untranslated = (out / "scatter_kernel_op.py").read_text()
    assert "TODO(porter)" in untranslated and "raise NotImplementedError" in untranslated
    assert write_scaffolds(scan(project), out, target) == []  # never overwrites


def test_a_second_target_s_scaffold_in_the_same_folder_gets_its_own_tests(project, tmp_path):
    """Each target's test module tests that target's kernel: the test file's name did not carry
    its target, so scaffolding TPU after Neuron into one folder kept Neuron's tests ("kept") and
    wrote none for TPU (nineteenth read's leftover, issue 24). Only the op modules, of no target,
    are kept."""
    out = tmp_path / "scaffold"
    write_scaffolds(scan(project), out, "neuron")
    kept: list[Path] = []
    written = {p.name for p in write_scaffolds(scan(project), out, "tpu", kept)}
    assert {"scale_kernel_tpu.py", "test_scale_kernel_tpu_parity.py"} <= written, written
    assert all(p.name.endswith("_op.py") for p in kept), kept
    assert "scale_kernel_tpu" in (out / "test_scale_kernel_tpu_parity.py").read_text()
    assert "scale_kernel_neuron" in (out / "test_scale_kernel_neuron_parity.py").read_text()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.torch
def test_generated_reference_op_runs_and_compiles(project, tmp_path):
    torch = need("torch")
    out = tmp_path / "s"
    write_scaffolds(scan(project), out, "neuron")
    mod = _load(out / "scale_kernel_op.py")
    x = torch.randn(300)
    o = torch.zeros(300)
    torch.ops.porter_kernels.scale_kernel(x, o, 300, 0.5)
    torch.testing.assert_close(o, x * 0.5)
    o2 = torch.zeros(300)
    mod.scale_kernel(x, o2, 300, 0.5)
    torch.testing.assert_close(o2, x * 0.5)
    # the fake implementation lets the op trace under FakeTensor / torch.compile
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        torch.ops.porter_kernels.scale_kernel(mode.from_tensor(x), mode.from_tensor(o), 300, 0.5)
    untranslated = _load(out / "scatter_kernel_op.py")
    with pytest.raises(NotImplementedError, match="TODO"):
        untranslated.scatter_kernel_reference(x, x, 3)


def test_cuda_only_custom_ops_are_listed(tmp_path):
    """KERN005's ops: a CUDA registration over a CUDA-only implementation is a kernel to port;
    one over plain PyTorch is not."""
    (tmp_path / "ops.py").write_text(
        "import torch\n"
        "import triton\n\n\n"
        "@triton.jit\n"
        "def _k(x_ptr, n):\n"
        "    pass\n\n\n"
        '@torch.library.custom_op("demo::fast", mutates_args=(), device_types="cuda")\n'
        "def fast(x: torch.Tensor, scale: float) -> torch.Tensor:\n"
        "    _k[(1,)](x, x.numel())\n"
        "    return x\n\n\n"
        '@torch.library.custom_op("demo::plain", mutates_args=(), device_types="cuda")\n'
        "def plain(x: torch.Tensor) -> torch.Tensor:\n"
        "    return x.sin()\n"
    )
    inv = scan(tmp_path)
    ops = [k for k in inv.kernels if k.kind == "custom-op"]
    assert [(k.name, k.params, k.line) for k in ops] == [("demo::fast", ["x", "scale"], 11)]
    assert "`_k`" in ops[0].detail
    written = write_scaffolds(inv, tmp_path / "k", "neuron")
    op_file = tmp_path / "k" / "demo__fast_op.py"
    # the op is typed already: its annotations are kept (a float is no tensor)
    assert op_file in written and "def demo__fast(x: torch.Tensor, scale: float)" in op_file.read_text()


def test_a_triton_kernel_is_named_as_python_reads_its_name(tmp_path):
    """Python reads `ｓcale` as `scale` (NFKC), and so does the launch `scale[grid](...)`: the kernel
    was listed as `ｓcale` with no call, its reference "no kernel 'ｓcale' in the source", its files
    named `cale`, and its op declared with every parameter a tensor, writing none (seventeenth read)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def \uff53cale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n\n\n"
        "def run(x, out):\n    scale[(1,)](x, out, x.numel(), BLOCK=128)\n",
        encoding="utf-8",
    )
    [k] = scan(src).kernels
    assert k.name == "scale" and len(k.calls) == 1, (k.name, k.calls)
    write_scaffolds(scan(src), tmp_path / "out", "neuron")
    op = (tmp_path / "out" / "scale_op.py").read_text()
    assert "mutates_args=('out_ptr',)" in op and "n: int" in op and "derived by porter" in op, op


def test_a_triton_kernel_defined_under_a_module_level_if_or_try_is_listed(tmp_path):
    """`if HAS_TRITON:` / `try:` around a kernel's definition (as a library with an optional Triton
    writes it): lint reported the kernel (KERN002), `kernels` listed nothing and scaffolded nothing."""
    src = tmp_path / "src"
    src.mkdir()
    body = (
        "def {name}(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n"
    )
    indented = "".join("    " + line for line in body.splitlines(True))
    (src / "k.py").write_text(
        "try:\n    import triton\n    import triton.language as tl\n    HAS_TRITON = True\nexcept ImportError:\n"
        "    HAS_TRITON = False\n\nif HAS_TRITON:\n\n    @triton.jit\n" + indented.format(name="in_if") + "\n"
        "try:\n\n    @triton.jit\n" + indented.format(name="in_try") + "except Exception:\n    pass\n\n\n"
        "def launch(x, out):\n    in_if[(1,)](x, out, 4, BLOCK=4)\n\n\n"
        "def helper():\n    @triton.jit\n" + indented.format(name="in_def") + "    return in_def\n"
    )
    kernels = {k.name: k for k in scan(src).kernels}
    # a function's own is listed too, as lint reports it (nineteenth read: it was left out)
    assert sorted(kernels) == ["in_def", "in_if", "in_try"], sorted(kernels)
    assert len(kernels["in_if"].calls) == 1
    write_scaffolds(scan(src), tmp_path / "out", "neuron")
    assert "derived by porter" in (tmp_path / "out" / "in_if_op.py").read_text()


def test_a_kernel_a_macro_defines_is_listed_at_each_use_by_the_name_it_expands_to(tmp_path):
    """`#define DEF_KERNEL(name) __global__ void name(...)` then `DEF_KERNEL(foo)`: the kernel was
    listed once, named `name` (the macro's parameter), and its uses were unseen; a macro in a
    header used in a .cu file, and a name pasted with `##`, too (eighteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cuh").write_text(
        "#define PASTE(op, T) \\\n  __global__ void op##_kernel_##T(const T* a, T* b) { b[0] = a[0]; }\n"
        "#define UNUSED(name) __global__ void name(float* z) { z[0] = 0; }\n"
    )
    (src / "k.cu").write_text(
        '#include "k.cuh"\n'
        "#define DEF_KERNEL(name) \\\n  __global__ void name(const float* x, float* y, int n) { \\\n"
        "    if (n) y[0] = x[0]; }\n"
        "DEF_KERNEL(foo)\nDEF_KERNEL(bar)\nPASTE(add, float)\n"
    )
    kernels = {k.name: k for k in scan(src).kernels}
    assert sorted(kernels) == ["UNUSED", "add_kernel_float", "bar", "foo"], sorted(kernels)
    assert (kernels["foo"].path, kernels["foo"].line) == ("k.cu", 5)
    assert kernels["foo"].params == ["const float* x", "float* y", "int n"]
    assert kernels["add_kernel_float"].params == ["const float* a", "float* b"]
    assert "made by macro PASTE (k.cuh:1)" in kernels["add_kernel_float"].detail
    assert "of no use found" in kernels["UNUSED"].detail
    write_scaffolds(scan(src), tmp_path / "out", "neuron")
    assert "mutates_args=('y',)" in (tmp_path / "out" / "foo_op.py").read_text()


def test_a_notebook_s_triton_kernels_are_listed_where_lint_reports_them(tmp_path):
    """Lint reports a notebook's Triton kernels and launches (KERN002) and its advice is `porter
    kernels --scaffold`, which listed none of them: `.py` files only were read (eighteenth read
    of issue 24). A cell's line is given as lint gives it; a notebook that is not one is a note."""
    import json

    src = tmp_path / "src"
    src.mkdir()
    cells = [
        "import triton\nimport triton.language as tl\n",
        "%matplotlib inline\n@triton.jit\ndef nb_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n",
        "nb_kernel[(1,)](x, out, x.numel(), BLOCK=64)\n",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": c.splitlines(True)} for c in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (src / "k.ipynb").write_text(json.dumps(notebook))
    (src / "bad.ipynb").write_text('{"cells": 3, "triton": 1}')
    inv = scan(src)
    [k] = inv.kernels
    assert (k.name, k.where, [c.describe() for c in k.calls]) == (
        "nb_kernel",
        "k.ipynb (cell 2, line 3)",
        ["k.ipynb (cell 3, line 1) (x, out, x.numel(), BLOCK=64)"],
    )
    assert inv.problems == ["bad.ipynb: not a notebook: no list of cells"], inv.problems
    write_scaffolds(inv, tmp_path / "out", "neuron")
    op = (tmp_path / "out" / "nb_kernel_op.py").read_text()
    assert "derived by porter" in op and "(k.ipynb (cell 2, line 3))" in op, op


def test_a_cuda_kernel_s_name_is_read_past_its_launch_bounds_and_attributes(tmp_path):
    """vllm 0.34.0 writes `__launch_bounds__(512, VLLM_BLOCKS_PER_SM(512))` (7 kernels were listed
    as `__launch_bounds__`, of parameters `512` and `VLLM_BLOCKS_PER_SM(512`) and
    `__attribute__((amdgpu_waves_per_eu(1, 1)))` before a kernel's name (listed as `__attribute__`).
    Eighteenth read of issue 24."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <class Type>\n__global__ void __launch_bounds__(512, VLLM_BLOCKS_PER_SM(512))\n"
        "    cvt_fp16_to_fp4(int32_t numRows, Type const* in, float* out) { out[0] = in[0]; }\n"
        "template <int N>\n__global__ void __launch_bounds__(WvPrGrp* THRDS)\n"
        "    __attribute__((amdgpu_waves_per_eu(1, 1)))\n    wvSplitKrc_(const int K, float* glbl) { glbl[0] = K; }\n"
        "__global__ [[maybe_unused]] void attr18(float* x) { x[0] = 1; }\n"
    )
    kernels = {k.name: k.params for k in scan(src).kernels}
    assert kernels == {
        "cvt_fp16_to_fp4": ["int32_t numRows", "Type const* in", "float* out"],
        "wvSplitKrc_": ["const int K", "float* glbl"],
        "attr18": ["float* x"],
    }, kernels


def test_a_cuda_kernel_s_default_values_and_explicit_specialization_are_read(tmp_path):
    """`int shift = (1 << 3), float scale = 1.0f`: the shift's `<`s were taken for a template's
    brackets, and `scale` was lost in `shift`'s text; `template <> __global__ void spec<float>(...)`
    (an explicit specialization) was not listed at all. Eighteenth read of issue 24."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <typename T>\n"
        "__global__ void deflt(T* out, int shift = (1 << 3), float scale = 1.0f, bool lt = a < b, int n = 2) {}\n"
        "template <>\n__global__ void spec<float, Tr<2>>(float* out) { out[0] = 0; }\n"
    )
    kernels = {k.name: k.params for k in scan(src).kernels}
    assert kernels == {
        "deflt": ["T* out", "int shift = (1 << 3)", "float scale = 1.0f", "bool lt = a < b", "int n = 2"],
        "spec": ["float* out"],
    }, kernels


def test_a_variadic_macro_s_kernel_takes_the_parameters_of_each_use(tmp_path):
    """`#define K(name, ...) __global__ void name(__VA_ARGS__)` (and GNU's `rest...`): each use's
    kernel takes the arguments after the name (eighteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "#define K(name, ...) __global__ void name(__VA_ARGS__) { }\nK(va18, const float* x, float* y, int n)\n"
        "K(empty18)\n#define ARGS(a, rest...) __global__ void a(rest) {}\nARGS(gnu18, int* p, int q)\n"
    )
    assert {k.name: k.params for k in scan(src).kernels} == {
        "va18": ["const float* x", "float* y", "int n"],
        "empty18": [],
        "gnu18": ["int* p", "int q"],
    }


def test_a_macro_used_in_another_macro_s_body_makes_a_kernel_at_each_use(tmp_path):
    """`#define A(n) B(n, float)` over `#define B(n, T) __global__ void n(T* x)`: the preprocessor
    expands `B` again in what `A(foo)` becomes; `foo` was not listed (B's own `n` was, of no use),
    and a header's `B` used in a .cu file's macro the same (the eighteenth read's leftover, issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cuh").write_text("#define HB(n, T) __global__ void n(const T* x, T* y) { y[0] = x[0]; }\n")
    (src / "k.cu").write_text(
        '#include "k.cuh"\n'
        "#define B(n, T) __global__ void n(T* x, int m) { x[0] = m; }\n"
        "#define A(n) B(n##_f, float) B(n##_i, int)\n"
        "#define C(n) A(n)\n"
        "#define H(n) HB(n, double)\n"
        "C(foo)\nA(bar)\nH(baz)\n"
    )
    kernels = {k.name: k for k in scan(src).kernels}
    assert sorted(kernels) == ["bar_f", "bar_i", "baz", "foo_f", "foo_i"], sorted(kernels)
    assert kernels["foo_f"].params == ["float* x", "int m"]
    assert kernels["foo_i"].params == ["int* x", "int m"]
    assert kernels["baz"].params == ["const double* x", "double* y"]
    assert (kernels["foo_f"].path, kernels["foo_f"].line) == ("k.cu", 6)
    assert "made by macro C (k.cu:4)" in kernels["foo_f"].detail


def test_a_self_referencing_macro_ends(tmp_path):
    """A macro whose body uses itself (or two that use each other) is not expanded again inside its
    own expansion, as the preprocessor does not: the read ends, and lists what cpp makes."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "#define K(n) __global__ void n(float* x) { } K(n##_again)\n"
        "#define P(n) Q(n) __global__ void n(int* y) { }\n#define Q(n) P(n##q)\nK(one)\nP(two)\n"
    )
    names = sorted(k.name for k in scan(src).kernels)
    assert names == ["one", "two"], names


def test_a_triton_kernel_defined_in_a_function_or_a_class_is_listed_where_lint_reports_it(tmp_path):
    """torchao 0.18.0 defines 5 Triton kernels inside the function that builds them (its
    `import triton` there too): lint reports each (KERN002) with the advice to run `porter kernels
    --scaffold`, which listed none of them (module level only). A class's `@staticmethod` kernel the
    same (nineteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    body = (
        "        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n"
    )
    (src / "k.py").write_text(
        "def build():\n    import triton\n    import triton.language as tl\n\n"
        "    @triton.jit\n    def built19(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n" + body + "\n"
        "    def run(x, out):\n        built19[(1,)](x, out, x.numel(), BLOCK=64)\n    return run\n\n\n"
        "import triton\nimport triton.language as tl\n\n\nclass Ops:\n    @staticmethod\n    @triton.jit\n"
        "    def in_class19(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n" + body
    )
    lint = CliRunner().invoke(app, ["lint", str(src), "--target", "neuron", "--no-cache", "--output-format", "json"])
    reported = sorted(
        f["message"].split("`")[1] for f in json.loads(lint.stdout) if f["message"].startswith("Triton kernel `")
    )
    kernels = {k.name: k for k in scan(src).kernels}
    assert reported == ["built19", "in_class19"], lint.stdout
    assert sorted(kernels) == reported
    assert [(c.line, c.args) for c in kernels["built19"].calls] == [(11, ["x", "out", "x.numel()", "BLOCK=64"])]
    assert kernels["in_class19"].line == 22
    write_scaffolds(scan(src), tmp_path / "out", "xla")
    assert "out_ptr.view(-1)[:n] = (x_ptr.view(-1)[:n] * 2.0)" in (tmp_path / "out" / "built19_op.py").read_text()


def test_a_cuda_kernel_s_name_is_read_past_any_cuda_attribute(tmp_path):
    """vllm 0.34.0's `__global__ void __launch_bounds__(B, 1) __cluster_dims__(1, 2, 1) cooperative_topk_cs2(...)`
    listed 4 kernels named `__cluster_dims__` of parameters `1`, `2`, `1` (the attributes read were
    a list of two names); `__maxnreg__(32)` the same, and a kernel of a double-underscored name is
    still its own (nineteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <int K>\n__global__ void __launch_bounds__(256, 1)\n    __cluster_dims__(1, 2, 1)\n"
        "        topk_cs2(Params<K> params) {}\n"
        "__global__ void __maxnreg__(32) maxreg19(float* out) { out[0] = 1; }\n"
        "__global__ void __dunder19__(float* out) { out[0] = 1; }\n"
    )
    assert {k.name: k.params for k in scan(src).kernels} == {
        "topk_cs2": ["Params<K> params"],
        "maxreg19": ["float* out"],
        "__dunder19__": ["float* out"],
    }


def test_a_cuda_kernel_s_specifiers_are_read_in_any_order(tmp_path):
    """CUTLASS's `__global__ static __launch_bounds__(...) void gemm_device(...)` (6 kernels of
    flash-attn 2.8.3.post2's sdist) was not listed: `static` was read before the attributes only
    (nineteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <class T>\n__global__ static\n__launch_bounds__(decltype(size(T{}))::value)\nvoid\n"
        "gemm19(T const* A, T* C)\n{ C[0] = A[0]; }\n__global__ inline static void sp19(float* x) {}\n"
    )
    assert {k.name: (k.line, k.params) for k in scan(src).kernels} == {
        "gemm19": (2, ["T const* A", "T* C"]),
        "sp19": (7, ["float* x"]),
    }


def test_a_line_continuation_in_a_cuda_kernel_s_head_is_a_blank(tmp_path):
    """`__global__ \\<newline> void k(...)`: a backslash-newline between the head's tokens (legal
    anywhere in C++) left the kernel unlisted (structure-aware fuzzing, nineteenth read of issue 24)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "__global__ \\\n  void \\\n  cont19(float* \\\n  out, int n) { out[0] = n; }\n"
        "__global__ __launch_bounds__(256) \\\r\nvoid cont19b(int* p) {}\n"
    )
    assert {k.name: k.params for k in scan(src).kernels} == {"cont19": ["float* out", "int n"], "cont19b": ["int* p"]}


def test_a_cuda_kernel_s_parameters_given_by_an_object_like_macro_are_the_macro_s(tmp_path):
    """vllm 0.34.0's `__global__ void MarlinDefault(MARLIN_KERNEL_PARAMS){};`, its `#define` over
    lines in `kernel.h` beside it (included by a quoted name), and `RDNA35_GDN_CHUNKED_PARAMS`
    defined in the kernel's own file: the kernel had one parameter, the macro's name (nineteenth
    read's leftover, issue 24). A macro for part of the list, one inside another, and one that
    names itself are expanded as the preprocessor does."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "kernel.h").write_text(
        "#define MARLIN_KERNEL_PARAMS                          \\\n"
        "  const int4 *__restrict__ A, const int4 *__restrict__ B, \\\n"
        "      int4 *__restrict__ C, int prob_m, bool has_bias\n"
    )
    (src / "marlin.cu").write_text('#include "kernel.h"\n__global__ void MarlinDefault(MARLIN_KERNEL_PARAMS){};\n')
    (src / "gdn.cu").write_text(
        "  #define GDN_PARAMS                              \\\n"
        "    const uint16_t *__restrict__ q, /* q */       \\\n"
        "        float *__restrict__ state_out, const int H, const float scale\n"
        "#define PTRS const float* x, float* y\n"
        "#define ALL PTRS, int n\n"
        "#define SELF SELF\n"
        "__global__ void gdn_wgp(GDN_PARAMS) { }\n"
        "__global__ void part(ALL, float alpha) { }\n"
        "__global__ void itself(SELF, NOT_DEFINED) { }\n"
    )
    assert {k.name: k.params for k in scan(src).kernels} == {
        "MarlinDefault": [
            "const int4 *__restrict__ A",
            "const int4 *__restrict__ B",
            "int4 *__restrict__ C",
            "int prob_m",
            "bool has_bias",
        ],
        "gdn_wgp": [
            "const uint16_t *__restrict__ q",
            "float *__restrict__ state_out",
            "const int H",
            "const float scale",
        ],
        "part": ["const float* x", "float* y", "int n", "float alpha"],
        "itself": ["SELF", "NOT_DEFINED"],
    }


def test_a_macro_between_global_and_the_kernel_s_name_is_read_as_attributes(tmp_path):
    """vllm 0.34.0's `__global__ void GDN_CU_MODE __launch_bounds__(...) rdna35_gdn_chunked_kernel_cu(`
    (`#define GDN_CU_MODE __attribute__((target("cumode")))`) was not listed, nor a kernel whose
    head holds a function-like macro (`__global__ LAUNCH_BOUNDS(256) void k(`): a kernel returns
    `void`, so a word before `void` or before its name is an attribute (twentieth read's leftover,
    issue 24). A macro making the kernel's name is still the name."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        '#define GDN_CU_MODE __attribute__((target("cumode")))\n'
        "#define LAUNCH_BOUNDS(n) __launch_bounds__(n)\n"
        "template <bool IS_FP16>\n__global__ void GDN_CU_MODE __launch_bounds__(256,\n    8)\n"
        "    gdn_cu20(const float* q, float* out) { out[0] = q[0]; }\n"
        "__global__ LAUNCH_BOUNDS(256) void lb20(float* x, int n) { x[0] = n; }\n"
        "__global__ static MY_INLINE void LAUNCH_BOUNDS(128) GDN_CU_MODE both20(int* p) {}\n"
        "__global__ void NAMED20(float* y) {}\n"
    )
    assert {k.name: (k.line, k.params) for k in scan(src).kernels} == {
        "gdn_cu20": (4, ["const float* q", "float* out"]),
        "lb20": (7, ["float* x", "int n"]),
        "both20": (8, ["int* p"]),
        "NAMED20": (9, ["float* y"]),
    }


def test_a_cuda_kernel_s_void_spelled_as_a_plain_alias_of_it_is_read(tmp_path):
    """A return type written as an alias of `void` (`using void_t = void;`, `typedef void V;`, an alias
    of one) was not read, and the kernel not listed, though the file's aliases were read for its
    parameters (twentieth read's leftover, issue 24). An alias of anything else is still no kernel's."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "using void_t = void;\ntypedef void V;\nusing W = V;\ntypedef float F;\n"
        "__global__ void_t k_using(float* x) {}\n"
        "template <typename T>\n__global__ V __launch_bounds__(128) k_typedef(T* x, int n) {}\n"
        "__global__ static W k_chain(const float* y) {}\n"
        "__global__ F not_a_kernel(float* z) {}\n"
    )
    assert {k.name: (k.line, k.params, k.typenames) for k in scan(src).kernels} == {
        "k_using": (5, ["float* x"], []),
        "k_typedef": (7, ["T* x", "int n"], ["T"]),
        "k_chain": (8, ["const float* y"], []),
    }


def test_a_name_followed_by_its_arguments_and_a_parenthesis_is_no_kernel_name(tmp_path):
    """`__global__ void k ATTR(1)(float* x)` (no C++: a macro's use where the name was due) was
    listed as a kernel named `ATTR`, of one parameter `1` (twentieth read's leftover, issue 24):
    a name whose parentheses are followed by more is no kernel's. The kernels around it stay."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "#define ATTR(n) __launch_bounds__(n)\n"
        "__global__ void before21(float* x) {}\n"
        "__global__ void k ATTR(1)(float* x) {}\n"
        "__global__ void ATTR(64) after21(float* y, int n) {}\n"
    )
    assert {k.name: (k.line, k.params) for k in scan(src).kernels} == {
        "before21": (2, ["float* x"]),
        "after21": (4, ["float* y", "int n"]),
    }


def test_a_cuda_kernel_s_macros_and_aliases_are_read_in_headers_of_headers_and_the_build_s_include_folders(tmp_path):
    """Only the headers a kernel's file included by a quoted name beside it were read, and only
    for object-like macros: a macro or a type alias in a header of a header, or in a folder the
    build gives as `-I` (setup.py's `include_dirs=[Path(this_dir) / "csrc"]`, as causal-conv1d
    1.7.0, mamba-ssm and flash-attn 2.8.3 write it; CMake's `include_directories`), was not seen
    (twentieth read's leftover, issue 24). A cycle of includes ends; a chain of them is read
    `_INCLUDE_DEPTH` deep."""
    src = tmp_path / "src"
    (src / "csrc" / "inc" / "sub").mkdir(parents=True)
    (src / "cm" / "include").mkdir(parents=True)
    (src / "kern").mkdir()
    (src / "setup.py").write_text(
        "import os\nfrom pathlib import Path\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "this_dir = os.path.dirname(os.path.abspath(__file__))\n"
        'CUDAExtension("x", ["kern/k.cu"], include_dirs=[Path(this_dir) / "csrc" / "inc"])\n'
    )
    (src / "cm" / "CMakeLists.txt").write_text(
        "target_include_directories(ext PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include ${CUTLASS_DIR}/include)\n"
    )
    (src / "csrc" / "inc" / "params.h").write_text(
        '#pragma once\n#include "sub/types.h"\n#include "params.h"\n#define KPARAMS const acc_t* x, acc_t* y, int n\n'
    )
    (src / "csrc" / "inc" / "sub" / "types.h").write_text(
        '#include "../params.h"\ntypedef torch::PackedTensorAccessor32<float, 2> acc_t;\n#include <deep0.h>\n'
    )
    (src / "cm" / "include" / "cm.h").write_text("using idx20_t = int64_t;\n#define CM_PARAMS idx20_t i, float* o\n")
    for i in range(40):  # a chain of headers, each including the next
        (src / "cm" / "include" / f"deep{i}.h").write_text(f"#include <deep{i + 1}.h>\n#define DEEP{i} int d{i}\n")
    (src / "kern" / "k.cu").write_text(
        "#include <params.h>\n#include <cm.h>\n"
        "__global__ void inc20(KPARAMS) { y[0] = x[0]; }\n"
        "__global__ void cm20(CM_PARAMS) { o[0] = i; }\n"
        "__global__ void deep20(DEEP0, DEEP13, DEEP14, DEEP30) { }\n"
    )
    kernels = {k.name: k for k in scan(src).kernels if k.kind == "cuda"}
    assert kernels["inc20"].params == ["const acc_t* x", "acc_t* y", "int n"]
    assert kernels["inc20"].aliases == {"acc_t": "torch::PackedTensorAccessor32<float, 2>"}
    assert kernels["cm20"].params == ["idx20_t i", "float* o"]
    assert kernels["cm20"].aliases == {"idx20_t": "int64_t"}
    # deep0.h is the third header deep (params.h, types.h, deep0.h), so deep13.h is the 16th, the last read
    assert kernels["deep20"].params == ["int d0", "int d13", "DEEP14", "DEEP30"]


def test_a_cuda_kernel_reads_the_macro_in_force_where_it_is_used(tmp_path):
    """A macro defined in a kernel's file and in a header it includes: the file's won whichever
    came first, and an `#undef` was not read (twentieth read's leftover, issue 24). The definition
    in force where the kernel uses it is the one the preprocessor takes; so for a type alias."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "h.h").write_text("#define P20 float* late, int n\n#define T20 double\n")
    (src / "k.cu").write_text(
        "#define P20 int* early\n#define T20 float\n"
        "__global__ void before20(P20, T20 s) { early[0] = 1; }\n"
        '#include "h.h"\n'
        "__global__ void after20(P20, T20 s) { late[0] = 1; }\n"
        "#undef P20\n"
        "__global__ void undone20(P20) { }\n"
        "#define P20 const float* again\n"
        "__global__ void again20(P20) { }\n"
    )
    kernels = {k.name: k for k in scan(src).kernels}
    assert {name: k.params for name, k in kernels.items()} == {
        "before20": ["int* early", "T20 s"],
        "after20": ["float* late", "int n", "T20 s"],
        "undone20": ["P20"],
        "again20": ["const float* again"],
    }
    assert kernels["before20"].aliases == {"T20": "float"}
    assert kernels["after20"].aliases == {"T20": "double"}


def test_make_inputs_gives_a_scalar_the_value_its_launch_passes(tmp_path):
    """`make_inputs` gave every scalar 256 under a TODO, where the launch passes `x.numel()` (1,024
    for the (4, 256) tensor it makes: the reference wrote a quarter of it), a literal or a stride
    (twentieth read's leftover, issue 24). A value made of numbers and the sizes of tensors the
    same launch passes is rebuilt on make_inputs' own tensors; any other keeps the TODO."""
    need("torch")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def sc20(x_ptr, out_ptr, n, alpha, stride, rows, m, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    msk = offs < n\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=msk) * alpha, mask=msk)\n\n"
        "def scale(x, k):\n"
        "    out = torch.empty_like(x)\n"
        "    sc20[(1,)](x, out, x.numel(), 0.5, x.stride(0), rows=x.shape[0] * 2, m=k, BLOCK=256)\n"
        "    sc20[(1,)](x, out, n=k.numel(), alpha=x[0], stride=len(x), rows=-3, m=1, BLOCK=256)\n"
    )
    write_scaffolds(scan(src), tmp_path / "out", "xla")
    test = (tmp_path / "out" / "test_sc20_xla_parity.py").read_text()
    assert "    n = x_ptr.numel()  # as the launch at k.py:13 passes it\n" in test
    assert "    alpha = 0.5  # as the launch at k.py:13 passes it\n" in test
    assert "    stride = x_ptr.stride(0)  # as the launch at k.py:13 passes it\n" in test
    assert "    rows = x_ptr.shape[0] * 2  # as the launch at k.py:13 passes it\n" in test
    assert "    m = 1  # as the launch at k.py:14 passes it\n" in test  # (`k` of the first: no value)
    sys.path.insert(0, str(tmp_path / "out"))
    try:
        spec = importlib.util.spec_from_file_location("sc20_parity", tmp_path / "out" / "test_sc20_xla_parity.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        x, out, n, alpha, stride, rows, m = module.make_inputs()
        assert (n, alpha, stride, rows, m) == (x.numel(), 0.5, 256, 8, 1)
    finally:
        sys.path.remove(str(tmp_path / "out"))


def test_the_glob_of_a_target_s_modules_takes_them_only(project, tmp_path):
    """`*_tpu.py`, the glob of the TorchTPU kernel modules, took their tests too once a test was
    `test_K_tpu.py` (three of our own tests picked them so: twentieth read's leftover, issue 24).
    In a folder scaffolded for two targets, `*_op.py`, `*_TARGET.py` and `test_*_TARGET_parity.py`
    each take one kind of file, and every file is of one kind."""
    out = tmp_path / "scaffold"
    for target in ("neuron", "tpu"):
        write_scaffolds(scan(project), out, target)
    kernels = {p.name[: -len("_op.py")] for p in out.glob("*_op.py")}
    assert kernels >= {"scale_kernel", "scatter_kernel"}
    kinds = {
        "*_op.py": {f"{k}_op.py" for k in kernels},
        "*_neuron.py": {f"{k}_neuron.py" for k in kernels},
        "*_tpu.py": {f"{k}_tpu.py" for k in kernels},
        "test_*_neuron_parity.py": {f"test_{k}_neuron_parity.py" for k in kernels},
        "test_*_tpu_parity.py": {f"test_{k}_tpu_parity.py" for k in kernels},
    }
    assert {glob: {p.name for p in out.glob(glob)} for glob in kinds} == kinds
    assert sorted(p.name for p in out.iterdir()) == sorted(name for names in kinds.values() for name in names)


def test_a_setup_py_s_include_folders_are_read_in_bounded_work(tmp_path, monkeypatch):
    """A name used many times in the value of a name used many times (`a1 = os.path.join(a0, a0,
    ...)`, `a2 = os.path.join(a1, ...)`): reading setup.py's `include_dirs=` was exponential in the
    names' depth (a 10 KB setup.py stalled `porter kernels`; this branch's own, caught before any
    merge). The paths of one setup.py are read within a budget of nodes and of length; the plain
    ones still count. The nodes read are counted, not timed (300**5 without the budget: the count
    fails at the first node past it, where the old reading would not have ended)."""
    from porter.analysis import build_includes as includes
    from porter.analysis.build_includes import include_dirs

    read = [0]
    original = includes._path

    def counted(*args):
        read[0] += 1
        assert read[0] <= 2 * includes._PATH_STEPS + 2, "a path read past its budget of nodes"
        return original(*args)

    monkeypatch.setattr(includes, "_path", counted)

    (tmp_path / "csrc").mkdir()
    deep = ["import os", 'a0 = "d"'] + [f"a{i} = os.path.join({', '.join([f'a{i - 1}'] * 300)})" for i in range(1, 6)]
    (tmp_path / "setup.py").write_text("\n".join([*deep, 'CUDAExtension("x", [], include_dirs=[a5, "csrc"])']) + "\n")
    assert include_dirs(tmp_path, tmp_path) == ((tmp_path / "csrc").resolve(),)
    assert read[0] <= 2 * includes._PATH_STEPS + 2, read[0]  # two paths: `a5`'s (past its budget) and "csrc"


def test_a_cuda_kernel_defined_twice_in_its_file_is_listed_once_or_said_how_it_differs(tmp_path):
    """A kernel defined again in its file with the same parameters (`#if`/`#else` branches, SFINAE
    twins: vllm 0.34.0's `fused_add_rms_norm_kernel`, its ROCm attention kernels four times) was
    listed twice and scaffolded as `k` and `k_` (twentieth read's leftover, issue 24): it is listed
    once, saying where else it is. An overload (mmcv's `template <>` for `phalf`) stays, saying
    how its parameters differ from the first's."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "#if defined(USE_ROCM)\n__global__ void k(float* out, const float* x, int n) { out[0] = x[0]; }\n"
        "#else\n__global__ void k(float* out,\n  const float* x, int n) { out[n] = x[n]; }\n#endif\n"
        "template <typename T>\n__global__ void g(const T* x, float* y, int n) { y[0] = x[0]; }\n"
        "template <>\n__global__ void g(const double* x, float* y, int n) { y[0] = x[0]; }\n"
    )
    (src / "other.cu").write_text("__global__ void k(float* out, const float* x, int n) { out[0] = x[0]; }\n")
    listed = [(k.path, k.name, k.line, k.detail) for k in scan(src).kernels]
    assert sorted(listed) == [
        ("k.cu", "g", 8, "__global__"),
        # (`template <>` of deduced arguments: a specialization, as clang reads it, since 0073c76)
        ("k.cu", "g", 10, "__global__; a specialization of line 8: `const double* x` for `const T* x`"),
        (
            "k.cu",
            "k",
            4,
            "__global__; also defined at line 2, of the same parameters, in a branch nvcc does not compile"
            " (`#if defined(USE_ROCM)`, where the one read is in `#else`, of the `#if` at line 1): the one it"
            " compiles is read",
        ),
        ("other.cu", "k", 1, "__global__"),
    ], listed
    out = tmp_path / "out"
    write_scaffolds(scan(src), out, "xla")
    assert sorted(p.name for p in out.glob("*_op.py")) == ["g__op.py", "g_op.py", "k__op.py", "k_op.py"]


def test_a_header_past_the_include_budget_is_said(tmp_path):
    """A header past what is left of the 2 MiB read of one file's headers was passed over in
    silence, its aliases lost (twentieth read's leftover, issue 24): one note names it and the budget."""
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "inc" / "a.h").write_text("#pragma once\n// " + "x" * 1_500_000 + "\n")
    (src / "inc" / "b.h").write_text("#pragma once\ntypedef int Idx;\n// " + "y" * 1_000_000 + "\n")
    (src / "inc" / "c.h").write_text("#pragma once\ntypedef int Jdx;\n// " + "z" * 1_000_000 + "\n")
    (src / "k.cu").write_text(
        '#include "inc/a.h"\n#include "inc/b.h"\n#include "inc/c.h"\n'
        "__global__ void k(float* x, Idx n, Jdx m) { x[0] = n; }\n"
    )
    problems = scan(src).problems
    assert len(problems) == 1, problems
    assert problems[0].startswith("k.cu: header inc/b.h (1,000,034 bytes) not read for the kernels' macros"), problems
    assert "bytes left of the 2 MiB read of one file's headers" in problems[0], problems


def test_a_cuda_kernel_s_void_spelled_as_a_header_s_alias_of_it_is_read(tmp_path):
    """Aliases of `void` were read in the kernel's own file only, not in the headers the macro
    reader follows (twentieth read's leftover, issue 24): `typedef void V;` in a header, an alias
    of it in another, `#define VD void`. An alias of anything else is still no kernel's."""
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "inc" / "v.h").write_text("#pragma once\ntypedef void V;\n")
    (src / "inc" / "w.h").write_text('#pragma once\n#include "v.h"\nusing W = V;\n#define VD void\ntypedef float F;\n')
    (src / "k.cu").write_text(
        '#include "inc/w.h"\n'
        "__global__ W k_chain(float* x, int n) { x[0] = n; }\n"
        "__global__ static V __launch_bounds__(128) k_typedef(const float* y) {}\n"
        "__global__ VD k_define(float* z) {}\n"
        "__global__ F not_a_kernel(float* z) {}\n"
    )
    assert {k.name: (k.line, k.params) for k in scan(src).kernels} == {
        "k_chain": (2, ["float* x", "int n"]),
        "k_typedef": (3, ["const float* y"]),
        "k_define": (4, ["float* z"]),
    }


def test_a_cuda_kernel_s_launches_are_read_and_give_make_inputs_their_values(tmp_path):
    """A C++ launch (`k<<<grid, block, smem, stream>>>(args)`) was not read: a CUDA kernel had no
    call sites and its `make_inputs` raised a TODO, where a Triton kernel's takes the literals and
    sizes its launch passes (twentieth read's leftover, issue 24). Launches are read in every .cu/.cuh
    (a kernel of a header launched from a .cu; `auto kernel = &k<Ktraits>; kernel<<<...>>>(params)`,
    as causal-conv1d and mamba-ssm launch), with Triton's rule for values: a literal (`0.5f`) or a size
    of a tensor whose data the same launch passes (`x.numel()`), casts off, C's `/` kept as `//`."""
    need("torch")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cuh").write_text(
        "template <typename T, int BLOCK>\n"
        "__global__ void sc21(T* __restrict__ out, const T* x, float alpha, int n, int64_t stride, int rows, int m) {\n"
        "  int i = blockIdx.x * BLOCK + threadIdx.x;\n  if (i < n) out[i * stride] = x[i] * alpha;\n}\n"
        "__global__ void other(float* y) { y[0] = 1; }\n"
    )
    (src / "launch.cu").write_text(
        '#include "k.cuh"\n'
        "void scale(torch::Tensor out, torch::Tensor x, int k) {\n"
        "  // sc21<<<1, 1>>>(commented, out);\n"
        "  sc21<float, 128><<<(x.numel() + 127) / 128, 128, 0, stream>>>(\n"
        "      out.data_ptr<float>(), (const float*)x.data_ptr(), 0.5f,\n"
        "      static_cast<int>(x.numel()), x.stride(0), x.size(0) / 3, k);\n"
        "  auto kernel = &other;\n  kernel<<<1, 1>>>(out.data_ptr<float>());\n"
        "  sc21<<<1, 1>>>(out.data_ptr<float>());\n"  # (one argument: no launch of sc21)
        "}\n"
    )
    inv = scan(src)
    calls = {k.name: [(c.path, c.line, c.args, c.template) for c in k.calls] for k in inv.kernels}
    assert calls == {
        "sc21": [
            (
                "launch.cu",
                4,
                [
                    "out.data_ptr<float>()",
                    "(const float*)x.data_ptr()",
                    "0.5f",
                    "static_cast<int>(x.numel())",
                    "x.stride(0)",
                    "x.size(0) / 3",
                    "k",
                ],
                ["float", "128"],
            )
        ],
        "other": [("launch.cu", 8, ["out.data_ptr<float>()"], [])],
    }, calls
    write_scaffolds(inv, tmp_path / "out", "xla")
    test = (tmp_path / "out" / "test_sc21_xla_parity.py").read_text()
    assert "    alpha = 0.5  # as the launch at launch.cu:4 passes it\n" in test, test
    assert "    n = x.numel()  # as the launch at launch.cu:4 passes it\n" in test, test
    assert "    rows = x.size(0) // 3  # as the launch at launch.cu:4 passes it\n" in test, test
    assert "    m = 256  # TODO(porter): the value the call site passes\n" in test, test
    sys.path.insert(0, str(tmp_path / "out"))
    try:
        spec = importlib.util.spec_from_file_location("sc21_parity", tmp_path / "out" / "test_sc21_xla_parity.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out, x, alpha, n, stride, rows, m = module.make_inputs()
        assert (alpha, n, stride, rows, m) == (0.5, 1024, 256, 1, 256)
    finally:
        sys.path.remove(str(tmp_path / "out"))


def test_a_cuda_kernel_s_template_typed_number_takes_its_type_from_the_launch(tmp_path):
    """A parameter of one of the kernel's template types that the kernel only passes on was a
    float, whatever the launch instantiates (twentieth read's leftover, issue 24): vllm 0.34.0's
    `silu_mul_fp8_quant_deep_gemm_kernel` takes 14 `Idx_t` strides, launched with `Idx_t` an alias
    of `int64_t` in the launcher. A launch's template arguments (`k<float, 128, I64><<<`, an alias in
    force there taken as what it stands for) settle it; where they disagree or none is given, the
    op says so in a TODO instead of a silent float."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <typename T, int BLOCK, typename Idx_t, typename S>\n"
        "__global__ void tk(T* out, const T* x, T alpha, Idx_t n, S beta) { out[0] = x[0] * alpha; }\n"
        "template <typename U>\n__global__ void lone(float* y, U u) { y[0] = u; }\n"
        "void launch(torch::Tensor out, torch::Tensor x) {\n"
        "  using I64 = int64_t;\n"
        "  tk<float, 128, I64, float><<<1, 128>>>(out.data_ptr<float>(), x.data_ptr<float>(), 2.0f, x.numel(), 1.0f);\n"
        "  tk<at::Half, 64, int64_t, int><<<1, 64>>>((at::Half*)out.data_ptr(), (at::Half*)x.data_ptr(), 2.0f, 4, 1);\n"
        "}\n"
    )
    out = tmp_path / "out"
    write_scaffolds(scan(src), out, "xla")
    op = (out / "tk_op.py").read_text()
    assert "def tk(out: torch.Tensor, x: torch.Tensor, alpha: float, n: int, beta: float) -> None:" in op, op
    assert (
        "# TODO(porter): `S beta` is of one of the kernel's template types, taken as a float (its launches"
        " give `float`, `int`): check its type\n"
    ) in op, op
    assert "`T alpha`" not in op and "`Idx_t n`" not in op, op
    lone = (out / "lone_op.py").read_text()
    assert (
        "# TODO(porter): `U u` is of one of the kernel's template types, taken as a float (no launch found"
        " gives it): check its type\n"
    ) in lone, lone


def test_a_cuda_kernel_s_parameter_pack_is_one_float_said_in_a_todo(tmp_path):
    """A parameter pack (`Args... args`, deepspeed's `multi_tensor_apply_kernel`) stayed one float of
    the op, in silence (twentieth read's leftover, issue 24): the op says it in a TODO. A launch
    passing the pack's arguments is still the kernel's call, and gives the pack no value."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "template <typename Op, typename... Args>\n"
        "__global__ void apply(float* out, int n, Args... args) { out[0] = n; }\n"
        "void launch(torch::Tensor out) {\n  apply<Sum, float, int><<<1, 1>>>(out.data_ptr<float>(), 8, 0.5f, 3);\n}\n"
    )
    inv = scan(src)
    assert [len(k.calls) for k in inv.kernels] == [1]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    op = (out / "apply_op.py").read_text()
    assert (
        "# TODO(porter): `Args... args` is a parameter pack, taken here as one float: give the op one"
        " parameter per argument the launches pass in its place\n"
    ) in op, op
    test = (out / "test_apply_xla_parity.py").read_text()
    assert "    n = 8  # as the launch at k.cu:4 passes it\n" in test, test
    assert "    args = 256  # TODO(porter): the value the call site passes\n" in test, test


def test_a_cmake_module_s_include_folders_are_read_from_its_project_s_folder(tmp_path):
    """The `-I` folders of a CMake module (`cmake/utils.cmake`, which the CMakeLists.txt includes)
    were not read: vllm 0.34.0 gives its `csrc` there (`target_include_directories(${MOD_NAME}
    PRIVATE csrc ...)`), so no header of `csrc` was found for a kernel's `#include "dispatch_utils.h"`
    in a folder below (twentieth read's leftover, issue 24). A relative folder of a module is its
    project's (the folder of the nearest CMakeLists.txt above it), as CMake's `include()` keeps the
    includer's; `${CMAKE_CURRENT_LIST_DIR}` is the module's own folder."""
    from porter.analysis.build_includes import include_dirs

    (tmp_path / "csrc" / "ops").mkdir(parents=True)
    (tmp_path / "cmake" / "inc").mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text("include(${CMAKE_CURRENT_LIST_DIR}/cmake/utils.cmake)\n")
    (tmp_path / "cmake" / "utils.cmake").write_text(
        "function(define_target MOD_NAME)\n"
        "  target_include_directories(${MOD_NAME} PRIVATE csrc ${ARG_INCLUDE_DIRECTORIES})\n"
        '  include_directories("${CMAKE_CURRENT_LIST_DIR}/inc")\nendfunction()\n'
    )
    assert include_dirs(tmp_path, tmp_path) == ((tmp_path / "csrc").resolve(), (tmp_path / "cmake" / "inc").resolve())
    (tmp_path / "csrc" / "dispatch_utils.h").write_text("#pragma once\ntypedef int64_t Idx;\n")
    (tmp_path / "csrc" / "ops" / "k.cu").write_text(
        '#include "dispatch_utils.h"\n__global__ void k(float* x, Idx n) { x[0] = n; }\n'
    )
    write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")
    assert "n: int" in (tmp_path / "out" / "k_op.py").read_text()
