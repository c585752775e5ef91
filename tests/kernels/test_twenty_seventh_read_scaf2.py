"""The twenty-seventh read's second wave of the scaffold writer (issue 24): each test failed on f823e03."""

from __future__ import annotations

import importlib
import sys

import pytest

from typer.testing import CliRunner

from porter.cli import app
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

INT_POINTERS = (
    "typedef long long LL;\n"
    "__global__ void ik(float* x, const int64_t* __restrict__ idx, int n, bool* m, const unsigned char* b,"
    " LL* ll, int32_t* s) { if (threadIdx.x < n) x[threadIdx.x] = idx[threadIdx.x]; }\n"
    "void go(float* x, int64_t* idx, int n, bool* m, unsigned char* b, LL* ll, int32_t* s) {\n"
    "  ik<<<1, 256>>>(x, idx, n, m, b, ll, s);\n}\n"
)


def test_make_inputs_makes_an_integer_pointer_s_tensor_of_its_integer_type(tmp_path, monkeypatch):
    # `const int64_t* idx` was `torch.randn(...)`, a float tensor: the op's `idx` could not index
    (tmp_path / "k.cu").write_text(INT_POINTERS)
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    monkeypatch.syspath_prepend(str(out))
    try:
        inputs = importlib.import_module("test_ik_xla_parity").make_inputs()
    finally:
        for name in ("test_ik_xla_parity", "ik_op"):
            sys.modules.pop(name, None)
    import torch

    dtypes = [getattr(v, "dtype", type(v)) for v in inputs]
    assert dtypes == [torch.float32, torch.int64, int, torch.bool, torch.uint8, torch.int64, torch.int32]
    assert 0 <= int(inputs[1].min()) and int(inputs[1].max()) < 1024  # in bounds of the float tensor


def test_a_scaffold_of_a_kernel_no_longer_listed_is_said(tmp_path):
    # scaffold, rename the kernel, scaffold again into the same folder: the old kernel's files were
    # kept (right: they are the user's) and said nowhere; a user's own `*_op.py` is no porter file
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "__global__ void old_k(float* x) { x[0] = 1; }\nvoid go(float* x) { old_k<<<1, 1>>>(x); }\n"
    )
    out = tmp_path / "out"
    runner = CliRunner()
    runner.invoke(app, ["kernels", str(src), "--scaffold", str(out), "--target", "xla"])
    (out / "mine_op.py").write_text("def mine(): pass\n")
    (src / "k.cu").write_text((src / "k.cu").read_text().replace("old_k", "new_k"))
    result = runner.invoke(app, ["kernels", str(src), "--json", "--scaffold", str(out), "--target", "xla"])
    said = result.stderr
    assert "old_k_op.py: scaffolded by porter for a kernel this tree no longer lists" in said
    assert "mine_op.py" not in said and "new_k_op.py:" not in said
    assert (out / "old_k_op.py").exists() and (out / "test_old_k_xla_parity.py").exists()


def test_the_scaffold_of_a_kernel_in_an_if_branch_says_so(tmp_path):
    # `porter kernels` said a kernel lies in a branch a default nvcc build does not compile
    # (`#ifdef USE_ROCM`), or in another branch than its namesake: its scaffold said nothing of it
    (tmp_path / "k.cu").write_text(
        "#ifdef USE_ROCM\n__global__ void rk(float* x, int n, int wave) { x[0] = wave; }\n"
        "#else\n__global__ void rk(float* x, int n) { x[0] = 1; }\n#endif\n"
        "__global__ void plain_k(float* x) { x[0] = 1; }\n"
    )
    out = tmp_path / "out"
    write_scaffolds(scan(tmp_path), out, "xla")
    rocm, cuda = (out / "rk_op.py").read_text(), (out / "rk__op.py").read_text()
    assert "TODO(porter): in a branch a default nvcc build does not compile (`#ifdef USE_ROCM`" in rocm
    assert "TODO(porter): line 2's kernel defined again in another branch of the `#if` at line 1" in cuda
    assert "TODO(porter): line" not in rocm and "TODO(porter): in a branch" not in cuda
    assert "branch" not in (out / "plain_k_op.py").read_text()  # the control


def test_a_launch_through_a_typed_function_pointer_or_a_comparing_template_argument_is_attached(tmp_path):
    # `void (*kp)(float*, int) = k2;` then `kp<<<`, and flash-attn's `auto kernel = &k<..., X <= 128,
    # ...>;` then `kernel<<<`: each a note "a name no kernel porter lists has", the kernel unlaunched
    (tmp_path / "f.cu").write_text(
        "template <typename T, bool A, int D>\n__global__ void fk(T* x, int n) { x[0] = n; }\n"
        "__global__ void k2(float* x, int n) { x[0] = n; }\n"
        "template <typename Kt>\nvoid run(float* x, int n) {\n"
        "  auto kernel = &fk<float, Kt::kHeadDim <= 128, 1 << 4>;\n  kernel<<<1, 1>>>(x, n);\n"
        "  void (*kp)(float*, int) = k2;\n  kp<<<1, 1>>>(x, n);\n"
        "  void (*other)(float*, int);\n  other<<<1, 1>>>(x, n);\n}\n"
    )
    inv = scan(tmp_path)
    calls = {k.name: [(c.line, c.args, c.template) for c in k.calls] for k in inv.kernels}
    assert calls == {
        "fk": [(7, ["x", "n"], ["float", "Kt::kHeadDim <= 128", "1 << 4"])],
        "k2": [(9, ["x", "n"], [])],
    }
    # the control: a pointer declared with no kernel assigned is still said
    assert [n for n in inv.problems if "a launch of `" in n] == [
        "f.cu:11: a launch of `other`, a name no kernel porter lists has (a function pointer, a launcher's"
        " parameter, a kernel outside the tree): the kernel it runs is not read"
    ]


TRITON_KERNEL = (
    "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef {name}(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
)


@pytest.mark.parametrize(
    ("ops", "runs"),
    [
        ("from . import kern as K\nk_a = K.k_a\n", ["k_a"]),
        ("import pkg.kern\nimport pkg.more as M\nk_b = pkg.kern.k_b\nk_c = M.k_c\n", ["k_b", "k_c"]),
    ],
)
def test_a_module_that_re_exports_an_imported_module_s_kernel_is_read(tmp_path, ops, runs):
    # `import M` (or `from . import M`) then `k = M.k`: `getattr(ops, name)[grid](x)` was a note that
    # porter "finds no Triton kernel that module defines or imports"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    kern = TRITON_KERNEL.format(name="k_a") + "\n\n" + TRITON_KERNEL.format(name="k_b")
    (tmp_path / "pkg" / "kern.py").write_text(kern)
    (tmp_path / "pkg" / "more.py").write_text(TRITON_KERNEL.format(name="k_c"))
    (tmp_path / "pkg" / "ops.py").write_text(ops)
    (tmp_path / "pkg" / "use.py").write_text(
        "from pkg import ops\n\n\ndef run(x, name):\n    getattr(ops, name)[(1,)](x, x.numel(), BLOCK=32)\n"
    )
    inv = scan(tmp_path)
    assert sorted(k.name for k in inv.kernels if k.unresolved) == runs
    assert inv.problems == []


def test_a_key_macro_the_file_defines_but_porter_does_not_follow_is_not_said_undefined(tmp_path):
    # a key by a macro defined five macros deep, by itself, or in a cycle was "not read: `K5`, a
    # macro this file does not define": the file defines each
    (tmp_path / "r.cpp").write_text(
        "#define K1 K2\n#define K2 K3\n#define K3 K4\n#define K4 K5\n#define K5 CUDA\n#define SELF SELF\n"
        "#define A B\n#define B A\n#define FOUR K3\n"
        'TORCH_LIBRARY_IMPL(ns, K1, m) { m.impl("deep", &f); }\nTORCH_LIBRARY_IMPL(ns, SELF, m) { m.impl("self", &f); }\n'
        'TORCH_LIBRARY_IMPL(ns, A, m) { m.impl("cyc", &f); }\nTORCH_LIBRARY_IMPL(ns, FOUR, m) { m.impl("four", &f); }\n'
        'TORCH_LIBRARY_IMPL(ns, NONE, m) { m.impl("none", &f); }\n'
    )
    devices = {r.name: r.device for r in scan(tmp_path).registered}
    unfollowed = "a macro this file defines as no key porter reads"
    assert (
        devices["ns::deep"]
        == f"not read: `K5`, {unfollowed} (a macro of macros too deep or in a cycle, or an expression)"
    )
    assert unfollowed in devices["ns::self"] and unfollowed in devices["ns::cyc"]
    assert devices["ns::four"] == "CUDA"  # the controls: four deep is read, an undefined macro said so
    assert devices["ns::none"] == "not read: `NONE`, a macro this file does not define"


@pytest.mark.parametrize(
    ("all_", "runs"),
    [
        ("__all__ = ['k_a']\n", ["k_a"]),
        ("", ["k_a", "k_b"]),
        ("__all__ = ['k_a']\n__all__ += ['k_b']\n", ["k_a", "k_b"]),  # (a list added to: each kernel, as before)
    ],
)
def test_a_star_import_binds_only_what_its_module_exports(tmp_path, all_, runs):
    # `from .kern import *` stood for each kernel of `kern`: `getattr(ops, name)` was said to run
    # `_k_c` (a star import skips a `_name`) and `k_b` (not in `kern`'s `__all__`)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    kernels = "\n\n".join(TRITON_KERNEL.format(name=n) for n in ("k_a", "k_b", "_k_c"))
    (tmp_path / "pkg" / "kern.py").write_text(all_ + kernels)
    (tmp_path / "pkg" / "ops.py").write_text("from .kern import *\n")
    (tmp_path / "pkg" / "use.py").write_text(
        "from pkg import ops\n\n\ndef run(x, name):\n    getattr(ops, name)[(1,)](x, x.numel(), BLOCK=32)\n"
    )
    inv = scan(tmp_path)
    assert sorted(k.name for k in inv.kernels if k.unresolved) == runs
