"""The twenty-first adversarial read of the scaffold writers (issue 24): each test failed on c04c19c."""

from __future__ import annotations

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.helpers import port

CALLED = """import triton
import triton.language as tl

def _body(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)

scale = triton.jit(_body)
tuned = triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])(triton.jit(_body))

def run(x, out):
    scale[(1,)](x, out, x.numel(), BLOCK=64)
    tuned[(1,)](x, out, x.numel())
"""


def test_a_triton_kernel_made_by_calling_triton_jit_is_listed_scaffolded_and_linted(tmp_path):
    # `k = triton.jit(fn)` (xformers' rewritten kernels, many benchmarks): neither listed nor
    # linted, nor its launch, and no scaffold was written for it
    (tmp_path / "k.py").write_text(CALLED)
    inv = scan(tmp_path)
    kernels = {k.name: k for k in inv.kernels}
    assert set(kernels) == {"scale", "tuned"}
    assert kernels["scale"].line == 9 and [c.line for c in kernels["scale"].calls] == [13]
    assert kernels["scale"].params == ["x_ptr", "out_ptr", "n", "BLOCK: tl.constexpr"]
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    op = (out / "scale_op.py").read_text()
    assert "derived by porter" in op and "mutates_args=('out_ptr',)" in op
    _, findings = port(CALLED, "neuron")
    said = [(f.start.line, f.message) for f in findings if f.code == "KERN002"]
    assert [line for line, _ in said] == [9, 10, 13, 14]
    assert "`scale` (`triton.jit(...)`)" in said[0][1] and "launch of Triton kernel `tuned`" in said[3][1]


def test_a_crlf_cuda_backend_s_scaffold_keeps_crlf_line_ends(tmp_path):
    # porter's note was written with LF above CUDA's CRLF lines: a file of mixed line ends
    from porter.backends.scaffold import scan as backends, write_backend

    (tmp_path / "base.py").write_bytes(b"class Accelerator:\r\n    pass\r\n")
    (tmp_path / "cuda_accelerator.py").write_bytes(
        b"from base import Accelerator\r\n\r\n\r\nclass CUDA_Accelerator(Accelerator):\r\n    pass\r\n"
    )
    (tmp_path / "cpu_accelerator.py").write_bytes(
        b"from base import Accelerator\r\n\r\n\r\nclass CPU_Accelerator(Accelerator):\r\n    pass\r\n"
    )
    (family,) = backends(tmp_path)
    made = write_backend(family, tmp_path, tmp_path / "out", "tpu")
    data = made.read_bytes()
    assert b"class TPU_Accelerator" in data and data.count(b"\n") == data.count(b"\r\n")


def test_a_cuda_kernel_s_name_split_by_a_line_continuation_is_one_word(tmp_path):
    # the preprocessor removes a backslash-newline (phase 2), so `scale_\<newline>kernel` is
    # `scale_kernel`: porter read the continuation as a blank and listed a kernel `kernel`
    (tmp_path / "k.cu").write_bytes(
        b"__global__ void scale_\\\nker\\\r\nnel(float* out,\n  int n) {\n  out[0] = n;\n}\n"
        b"__global__ void other(float* x) { x[0] = 1; }\n"
    )
    kernels = [(k.name, k.line, k.params) for k in scan(tmp_path).kernels]
    assert kernels == [("scale_kernel", 1, ["float* out", "int n"]), ("other", 7, ["float* x"])]


def test_a_constexpr_with_a_default_is_not_said_to_come_only_from_the_launch():
    from porter.kernels.triton_ref import why_not

    src = (
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 128, SCALE: tl.constexpr = 2.0):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    m = offs < n\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)\n"
    )
    assert "`SCALE`, whose value is its default `2.0` unless the launch passes another" in why_not(src, "k")
    assert "whose value only the launch gives" in why_not(src.replace(" = 128", "").replace(" = 2.0", ""), "k")


def test_a_cuda_parameter_whose_template_argument_compares_is_named_after_its_declarator(tmp_path):
    # flashinfer's `std::conditional_t<MT == ModelType::DSV4, Dsv4PageDivisors, int> pages`: the
    # declaration was cut at the `=` of `==` as if a default value began there: named `MT`
    from porter.kernels.scaffold import _c_param

    assert _c_param("std::conditional_t<MT == ModelType::DSV4, Divisors, int> pages") == ("pages", "struct", False)
    assert _c_param("Foo<N >= 2> p")[0] == "p" and _c_param("Foo<a != b>* p") == ("p", "tensor", False)
    assert _c_param("int n = (1 == 2) ? 3 : 4") == ("n", "int", False)
    (tmp_path / "k.cu").write_text(
        "template <int MT>\n__global__ void k(std::conditional_t<MT == 1, Div, int> pages, float* out) { out[0] = 1; }\n"
    )
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    op = (out / "k_op.py").read_text()  # the struct is left out of the op, under its TODO
    assert "def k_reference(out)" in op and "int> pages`, of a type porter does not know" in op


KL = """import triton
import triton.language as tl

@triton.jit
def _kl_backward(target_ptr, {middle}n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(new_grads_ptr + offs, tl.load(target_ptr + offs) * -1.0, mask=offs < n_cols)

def run(target, new_grads, grad_output, V):
    _kl_backward[(1,)]({args})
"""


def test_a_launch_runs_the_kernel_of_its_own_file_or_import_not_the_last_of_its_name(tmp_path):
    # liger-kernel 0.8.5 defines `_kldiv_kernel_backward` in ops/kl_div.py and again, with other
    # parameters, in its Ascend backend: every launch went to the last one read, whose
    # `new_grads_ptr` was typed `int` from the other's `target.stride(0)`, and its store dropped
    # from `mutates_args`
    cuda = KL.format(middle="target_stride, new_grads_ptr, ", args="target, target.stride(0), new_grads, V, BLOCK=64")
    other = KL.format(middle="new_grads_ptr, grad_output_ptr, ", args="target, new_grads, grad_output, V, BLOCK=64")
    (tmp_path / "pkg" / "ops" / "ascend").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops" / "kl.py").write_text(cuda)
    (tmp_path / "pkg" / "ops" / "ascend" / "kl.py").write_text(other)
    user = "from .ops.kl import _kl_backward\ndef again(t, g, V):\n    _kl_backward[(2,)](t, t.stride(0), g, V)\n"
    (tmp_path / "pkg" / "use.py").write_text(user)
    inv = scan(tmp_path)
    calls = {k.path: sorted((c.path, c.line) for c in k.calls) for k in inv.kernels}
    assert calls == {
        "pkg/ops/kl.py": [("pkg/ops/kl.py", 10), ("pkg/use.py", 3)],
        "pkg/ops/ascend/kl.py": [("pkg/ops/ascend/kl.py", 10)],
    }
    out = tmp_path / "out"
    write_scaffolds(inv, out, "xla")
    ops = {p.name: p.read_text() for p in out.glob("*_op.py")}
    for text in ops.values():  # each kernel's pointer a tensor it writes
        assert "new_grads_ptr: torch.Tensor" in text and "'new_grads_ptr'" in text


def test_a_scaffold_written_into_a_package_folder_imports_its_own_modules(tmp_path):
    # `--scaffold proj/kernels` where the folder has an `__init__.py`: pytest imports each test as
    # `proj.kernels.test_...` with the folder above on the path, and `from K_op import ...` failed at
    # collection, "No module named 'K_op'"
    import importlib
    import sys

    from tests.deps import need

    need("torch")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def sc21pkg(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n"
    )
    folder = tmp_path / "proj21" / "kernels"
    folder.mkdir(parents=True)
    (tmp_path / "proj21" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text("")
    write_scaffolds(scan(src), folder, "xla")
    sys.path.insert(0, str(tmp_path))
    try:
        test = importlib.import_module("proj21.kernels.test_sc21pkg_xla_parity")
        test.test_reference_runs_on_cpu()
        assert "        from .sc21pkg_xla import sc21pkg_xla\n" in (folder / "test_sc21pkg_xla_parity.py").read_text()
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("proj21")]:
            del sys.modules[name]


def test_a_cu_file_s_torch_library_fragment_is_named_in_its_detail(tmp_path):
    # flashinfer's `TORCH_LIBRARY_FRAGMENT(flashinfer, m)`: only TORCH_LIBRARY and _IMPL were named
    (tmp_path / "f.cu").write_text(
        "__global__ void fk(float* x) { x[0] = 1; }\n"
        'TORCH_LIBRARY_FRAGMENT(myns, m) {\n  m.def("fk(Tensor x) -> ()");\n}\n'
    )
    (k,) = scan(tmp_path).kernels
    assert k.detail == "__global__; binds: fk; TORCH_LIBRARY myns"
