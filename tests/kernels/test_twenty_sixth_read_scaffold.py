"""The twenty-sixth read of the scaffold writers (issue 24): each test failed on 0073c76."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

SHADOWED = (
    "__global__ void copy(const float* x_, float* x, int n) { x[threadIdx.x] = x_[threadIdx.x]; }\n"
    "__global__ void under(const float* _y, float* y, int n) { y[threadIdx.x] = _y[threadIdx.x]; }\n"
    "__global__ void plain(const float* src, float* dst, int n) { dst[threadIdx.x] = src[threadIdx.x]; }\n"
    "void run(float* a, float* b, int n) {\n"
    "  copy<<<1, 32>>>(a, b, n);\n  under<<<1, 32>>>(a, b, n);\n  plain<<<1, 32>>>(a, b, n);\n}\n"
)


@pytest.mark.parametrize(
    ("kernel", "signature", "written"),
    [
        ("copy", "x_: torch.Tensor, x: torch.Tensor, n: int", "x"),
        # a name Python may not hold as written (`_y`: safe_name strips it) gets a new one, no other's
        ("under", "y_: torch.Tensor, y: torch.Tensor, n: int", "y"),
        ("plain", "src: torch.Tensor, dst: torch.Tensor, n: int", "dst"),  # the control
    ],
)
def test_a_cuda_parameter_keeps_its_name_where_another_s_would_shadow_it(tmp_path, kernel, signature, written):
    # `k(const float* x_, float* x)`: the op was `k(x, x_)`, each parameter named as the other (`x_`
    # stripped to `x`, then `x` made `x_`), so the tensor the kernel writes was `x_` in its
    # mutates_args and its reference: a user who reads the kernel to write the reference writes
    # the other tensor
    (tmp_path / "k.cu").write_text(SHADOWED)
    write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")
    op = (tmp_path / "out" / f"{kernel}_op.py").read_text()
    assert f"def {kernel}({signature}) -> None:" in op
    assert f"mutates_args=('{written}',)" in op


WRAPPED = (
    "import torch\nimport triton\nimport triton.language as tl\n"
    "from torch.library import triton_op, wrap_triton\n\n\n"
    "@triton.jit\ndef twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n\n\n"
    "@triton.jit\ndef thrice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)\n\n\n"
    '@triton_op("mylib::twice", mutates_args={})\n'
    "def twice_op(x: torch.Tensor) -> torch.Tensor:\n"
    "    y = torch.empty_like(x)\n"
    "    wrap_triton(twice)[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)\n"
    "    return y\n\n\n"
    "def thrice_op(x):\n"
    "    y = torch.empty_like(x)\n"
    "    torch.library.wrap_triton(thrice)[(1,)](x, y, x.numel(), BLOCK=64)\n"
    "    return y\n"
)


@pytest.fixture(autouse=True)
def _fresh_consoles(monkeypatch):
    """The CLI's consoles are made once per process, at the `COLUMNS` of that moment: after
    another test in the same worker the tables here were drawn at its width, cells cut."""
    from porter.cli import common

    for lazy in (common.console, common.err_console):
        monkeypatch.setattr(lazy, "_made", None)


def test_a_kernel_launched_through_wrap_triton_is_launched(tmp_path):
    # `wrap_triton(k)[grid](...)` is how torch launches a Triton kernel inside a `triton_op`: the
    # kernel was listed with no launch, and its scaffold made up `n = 256` with no word of where it runs
    (tmp_path / "k.py").write_text(WRAPPED)
    inv = scan(tmp_path)
    calls = {k.name: [(c.line, c.args) for c in k.calls] for k in inv.kernels if k.kind == "triton"}
    assert calls == {
        "twice": [(22, ["x", "y", "x.numel()", "BLOCK=64"])],
        "thrice": [(28, ["x", "y", "x.numel()", "BLOCK=64"])],
    }
    write_scaffolds(inv, tmp_path / "out", "xla")
    test = (tmp_path / "out" / "test_twice_xla_parity.py").read_text()
    assert re.search(r"n = x_ptr\.numel\(\)  # as the launch at k\.py:22 passes it", test), test


UNREAD = {
    "k.cu": (
        "__global__ void by_api(float* y, int n) { y[threadIdx.x] = 5.0f; }\n"
        "__global__ void by_chevrons(float* y, int n) { y[threadIdx.x] = 2.0f; }\n"
        "void run(float* y, int n, cudaStream_t stream) {\n"
        "  void* args[] = {&y, &n};\n"
        "  cudaLaunchKernel((void*)by_api, dim3(1), dim3(32), args, 0, stream);\n"
        "  by_chevrons<<<1, 32, 0, stream>>>(y, n);\n}\n"
    ),
    "t.py": (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef k_a(x_ptr):\n    tl.store(x_ptr, 1.0)\n\n\n"
        'KERNELS = {"a": k_a}\n\n\ndef run(x, op):\n    KERNELS[op][(1,)](x)\n'
    ),
}


def test_the_listing_says_a_launch_whose_arguments_it_cannot_read(tmp_path):
    # `cudaLaunchKernel((void*)k, ...)` and `KERNELS[op][grid](x)`: the scaffold's TODO named the
    # launch, but the table said "-" in the calls column, as of a kernel never launched, and
    # `--json` had `"calls": []` and nothing else
    for name, text in UNREAD.items():
        (tmp_path / name).write_text(text)
    runner = CliRunner()
    listing = runner.invoke(app, ["kernels", str(tmp_path), "--json"])
    kernels = {k["name"]: k for k in json.loads(listing.stdout)["kernels"]}
    assert kernels["by_api"]["calls"] == []
    assert kernels["by_api"]["unresolved"] == [
        "launched through `cudaLaunchKernel` at k.cu:5, whose arguments (an array of their addresses) porter does not read"
    ]
    assert kernels["k_a"]["unresolved"][0].startswith("launched as `KERNELS[...][...](...)` at t.py:14, one of")
    assert "unresolved" not in kernels["by_chevrons"]  # the control: its launch is its call
    table = runner.invoke(app, ["kernels", str(tmp_path)], env={"COLUMNS": "400"})
    rows = {line.split("│")[1].strip(): line.split("│")[4].strip() for line in table.stdout.splitlines()[3:-2]}
    assert rows["by_api"].startswith("launched through `cudaLaunchKernel` at k.cu:5, whose arguments")
    assert rows["k_a"].startswith("launched as `KERNELS[...][...](...)` at t.py:14")
    assert rows["by_chevrons"] == "k.cu:6 (y, n)"


def test_the_json_listing_says_whether_a_reference_is_derived(tmp_path):
    # the table's "reference" column ("derived", or "TODO" and why not) was in no field of
    # `--json`: a script reading the document could not tell which kernels porter derives
    (tmp_path / "w.py").write_text(WRAPPED)
    for name, text in UNREAD.items():
        (tmp_path / name).write_text(text)
    runner = CliRunner()
    listing = runner.invoke(app, ["kernels", str(tmp_path), "--json"])
    refs = {k["name"]: k["reference"] for k in json.loads(listing.stdout)["kernels"]}
    assert refs == {
        "twice": "derived",
        "thrice": "derived",
        "k_a": "TODO: `x_ptr` is not a pointer expression porter can follow",
        "by_api": "TODO",
        "by_chevrons": "TODO",
        "mylib::twice": "TODO",
    }
    table = runner.invoke(app, ["kernels", str(tmp_path)], env={"COLUMNS": "400"})
    lines = table.stdout.splitlines()  # (the kernels' table: the registered ops', Python's too, follows it)
    lines = lines[: next(i for i, line in enumerate(lines) if line.endswith("kernel(s)"))]
    rows = {line.split("│")[1].strip(): line.split("│")[5].strip() for line in lines[3:-1]}
    assert {name: rows[name] for name in refs} == refs


CHOSEN = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension\n\n\n"
    "def get_extensions(suffix):\n"
    "    Extension = CppExtension if suffix == 'cpu' else CUDAExtension\n"
    "    Host = CppExtension\n"
    "    return [\n"
    "        Extension('pkg._ops_' + suffix, ['csrc/ops.cpp', 'csrc/cuda/ops_cuda.cu']),\n"
    "        Host('pkg._host', ['csrc/host.cpp']),\n"
    "    ]\n\n\n"
    "setup(name='pkg', ext_modules=get_extensions('cuda'), cmdclass={'build_ext': BuildExtension})\n"
)


def test_a_cuda_extension_chosen_by_a_condition_is_listed(tmp_path):
    # torch-scatter 2.1.2, torch-sparse 0.6.18 and torch-cluster 1.6.3 build their extensions as
    # `Extension = CppExtension if suffix == 'cpu' else CUDAExtension; Extension(...)`: none was listed
    (tmp_path / "setup.py").write_text(CHOSEN)
    extensions = [(k.line, k.detail) for k in scan(tmp_path).kernels if k.kind == "cuda-extension"]
    listed = "sources: csrc/ops.cpp, csrc/cuda/ops_cuda.cu; not in the tree: csrc/ops.cpp, csrc/cuda/ops_cuda.cu"
    assert extensions == [(9, listed)]  # (`Host`, a CppExtension only, is none)


def test_a_rerun_says_which_kept_files_differ_from_what_porter_writes_now(tmp_path):
    # scaffold, change a kernel, scaffold into the same folder: each of the 6 files was "exists (or
    # is a link): kept, not overwritten", the changed kernel's (now stale: no `m`) as the others
    src = tmp_path / "src"
    src.mkdir()
    kernels = "__global__ void same(float* x, int n) { x[threadIdx.x] = n; }\n"
    (src / "k.cu").write_text(kernels + "__global__ void grown(float* y, int n) { y[threadIdx.x] = n; }\n")
    out = tmp_path / "out"
    runner = CliRunner()
    args = ["kernels", str(src), "--scaffold", str(out), "--target", "xla"]
    assert "wrote 6 file(s)" in runner.invoke(app, args).stdout
    (src / "k.cu").write_text(kernels + "__global__ void grown(float* y, int n, int m) { y[threadIdx.x] = m; }\n")
    (out / "same_xla.py").unlink()
    (out / "same_xla.py").symlink_to(tmp_path / "elsewhere.py")  # (a link: never read, said as before)
    notes = sorted(line for line in runner.invoke(app, args).stderr.splitlines() if line.startswith("note:"))
    assert notes == [
        f"note: {out}/grown_op.py exists: kept, not overwritten, and differs from what porter writes now"
        " (edited, or its source changed)",
        f"note: {out}/grown_xla.py exists: kept, not overwritten, and differs from what porter writes now"
        " (edited, or its source changed)",
        f"note: {out}/same_op.py exists, as porter writes it: kept",
        f"note: {out}/same_xla.py exists (or is a link): kept, not overwritten",
        f"note: {out}/test_grown_xla_parity.py exists, as porter writes it: kept",  # (it has no launch to read)
        f"note: {out}/test_same_xla_parity.py exists, as porter writes it: kept",
    ]


POINTERS = (
    "typedef float (*op_t)(float);\nusing op2_t = float (*)(float);\n"
    "__global__ void fa(float* p, op_t f, int n) { p[threadIdx.x] = f(p[threadIdx.x]); }\n"
    "__global__ void fb(float* p, op2_t f, int n) { p[threadIdx.x] = f(p[threadIdx.x]); }\n"
    "__global__ void fc(float* p, float (*f)(float), int n) { p[threadIdx.x] = f(p[threadIdx.x]); }\n"
)


@pytest.mark.parametrize(("kernel", "declared"), [("fa", "op_t f"), ("fb", "op2_t f"), ("fc", "float (*f)(float)")])
def test_a_function_pointer_named_by_an_alias_is_a_function(tmp_path, kernel, declared):
    # `using op2_t = float (*)(float);` then `op2_t f`: `f` was a tensor of the op, with no word; and
    # `typedef float (*op_t)(float);` was "a struct or class"; `float (*f)(float)` (the control) was
    # already "a function"
    (tmp_path / "k.cu").write_text(POINTERS)
    write_scaffolds(scan(tmp_path), tmp_path / "out", "xla")
    op = (tmp_path / "out" / f"{kernel}_op.py").read_text()
    assert f"def {kernel}(p: torch.Tensor, n: int) -> None:" in op
    assert f"takes `{declared}`, which no torch op can take (a function): the reference chooses it" in op
