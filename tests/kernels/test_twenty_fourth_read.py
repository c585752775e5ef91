"""The twenty-fourth adversarial read of the scaffold writers (issue 24): each test failed on 9d8198a."""

from __future__ import annotations

import pytest
import torch

from porter.analysis import native_ops
from porter.analysis.cuda_only_index import extension_imports
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from porter.kernels.triton_ref import translate, why_not

SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    'setup(ext_modules=[CUDAExtension("causal_conv1d_cuda", sources=["csrc/conv.cu"])])\n'
)


def test_an_extension_imported_by_its_own_name_has_its_ops_called(tmp_path):
    # `import causal_conv1d_cuda` then `causal_conv1d_cuda.causal_conv1d_fwd(x, w)` (causal-conv1d,
    # mamba-ssm's `selective_scan_cuda`): only `import ... as name` was read, so the extension's
    # entry said no call and lint's guards took `fwd` for code that runs on the target
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "conv.cu").write_text("__global__ void conv_kernel(float* x, int n) {}\n")
    use = "import torch\nimport causal_conv1d_cuda\n\ndef fwd(x, w):\n    return causal_conv1d_cuda.causal_conv1d_fwd(x, w)\n"
    (tmp_path / "use.py").write_text(use)
    entry = next(k for k in scan(tmp_path).kernels if k.kind == "cuda-extension")
    assert [(c.path, c.line, c.args) for c in entry.calls] == [("use.py", 5, ["x", "w"])]
    assert entry.detail.endswith("; ops called: causal_conv1d_fwd")
    files = [("setup.py", SETUP.encode()), ("use.py", use.encode())]
    assert set(extension_imports(files, ["csrc/conv.cu"])["use.py"]) == {"causal_conv1d_cuda"}


def test_a_dotted_import_binds_its_package_not_the_extension():
    # `import pkg.causal_conv1d_cuda` binds `pkg`: `pkg.causal_conv1d_fwd(...)` is no op of it; the
    # extension is named by its dotted name (`pkg.causal_conv1d_cuda.fwd(...)`, scaf2)
    files = [("setup.py", SETUP.encode()), ("use.py", b"import pkg.causal_conv1d_cuda\nimport torch\n")]
    assert set(extension_imports(files, ["csrc/conv.cu"])["use.py"]) == {"pkg.causal_conv1d_cuda"}


REGISTERS = (
    "#include <torch/library.h>\n"
    "__global__ void anon_kernel(float* x, int n) {}\n"
    'TORCH_LIBRARY(myops, m) { m.def("myops::anon(Tensor x) -> Tensor"); }\n'
    'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("myops::anon", &run_anon); }\n'
)


def test_an_op_named_with_its_namespace_is_that_op(tmp_path):
    # `m.impl("myops::anon", ...)` (torch takes the block's own namespace in the name) was read as
    # an op `myops::myops`: `torch.ops.myops.anon` was not CUDA-only, and the kernel "bound" `myops`
    assert native_ops.cuda_only_ops([("k.cu", REGISTERS.encode())]).get("myops", {}).keys() == {"anon"}
    (tmp_path / "k.cu").write_text(REGISTERS)
    (kernel,) = scan(tmp_path).kernels
    assert kernel.detail.startswith("__global__; binds: anon; ")


def test_an_array_of_pointers_is_no_tensor_of_the_op(tmp_path):
    # `float** ptrs` (and `const float* const* ins`, `float* outs[]`: one device pointer per tensor)
    # was one tensor of the op, filled with random numbers by the parity test, with no word
    (tmp_path / "k.cu").write_text(
        "__global__ void gather(float** ptrs, const float* const* ins, float* outs[], const float* x, int n) {}\n"
        "void go(float** p, const float* const* q, float** o, const float* x) { gather<<<1, 32>>>(p, q, o, x, 4); }\n"
    )
    written = write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")
    op = next(p for p in written if p.name == "gather_op.py").read_text()
    assert "def gather(x: torch.Tensor, n: int) -> torch.Tensor:" in op
    assert "`float** ptrs`, `const float* const* ins`, `float* outs[]`, an array of device pointers" in op
    test = next(p for p in written if p.name.startswith("test_gather")).read_text()
    assert "ptrs = " not in test and "return [x, n]" in test


TRITON = (
    "import triton\nimport triton.language as tl\n\n@triton.jit\n"
    "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
)


@pytest.mark.parametrize(
    ("load", "store"),
    [
        ("tl.load(pointer=x_ptr + offs, mask=offs < n)", "tl.store(y_ptr + offs, x * 2 + 1, mask=offs < n)"),
        ("tl.load(x_ptr + offs, mask=offs < n)", "tl.store(value=x * 2 + 1, pointer=y_ptr + offs, mask=offs < n)"),
        ("tl.load(x_ptr + offs, offs < n, 0.0)", "tl.store(y_ptr + offs, x * 2 + 1, offs < n)"),
    ],
)
def test_load_and_store_arguments_are_read_by_keyword_and_position(tmp_path, load, store):
    # `tl.load(pointer=...)` raised an IndexError in porter (the kernel got no scaffold), `tl.store(
    # value=..., pointer=...)` was "without a value", a positional mask read as none ("no load or
    # store is masked"): Triton takes each; the derived reference computes the kernel's lanes
    source = TRITON + f"    x = {load}\n    {store}\n"
    derived = translate(source, "k")
    assert derived is not None, why_not(source, "k")
    namespace: dict = {"torch": torch}
    exec(derived.source(), namespace)
    x, y = torch.randn(64), torch.zeros(64)
    namespace["k_reference"](x, y, 37)
    torch.testing.assert_close(y, torch.cat([x[:37] * 2 + 1, torch.zeros(27)]))
    (tmp_path / "k.py").write_text(source + "\ndef run(x, y):\n    k[(1,)](x, y, x.numel(), BLOCK=64)\n")
    assert {p.name for p in write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")} >= {"k_op.py", "k_xla.py"}


def test_an_extension_whose_name_does_not_look_compiled_is_read_from_its_import(tmp_path):
    # flash-attn 2.7.4's csrc/layer_norm builds `dropout_layer_norm`, and flash_attn/ops/layer_norm.py
    # runs `import dropout_layer_norm` then `dropout_layer_norm.dropout_add_ln_fwd(...)`: an import line
    # was read only where it named a compiled-looking module (`_C`, `_cuda`, `_ext`), so no call was listed
    (tmp_path / "setup.py").write_text(SETUP.replace("causal_conv1d_cuda", "dropout_layer_norm"))
    (tmp_path / "use.py").write_text("import dropout_layer_norm\n\ndef f(x):\n    return dropout_layer_norm.fwd(x)\n")
    entry = next(k for k in scan(tmp_path).kernels if k.kind == "cuda-extension")
    assert [(c.path, c.line) for c in entry.calls] == [("use.py", 4)]
