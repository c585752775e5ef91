"""The thirty-second read's second-wave helper on the registration reader and the scaffold (scaf2, issue 24): each
test failed on 12cc57f9, with what the sleft helper of the same read added (functions a block registers through,
string macros in schemas, kernels' default arguments)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from porter.analysis import native_ops

CUDA = b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }\n'


def _cpu_and_cuda_only(source: bytes) -> tuple[list[tuple[str | None, str, str]], list[native_ops.Unread], set[str]]:
    found, unread = native_ops.registrations_and_unread(source, Path("a.cu"))
    cuda_only = set(native_ops.cuda_only_ops([("a.cu", source)]).get("myops", {}))
    return sorted({r for r in found if r[2] != "CUDA"}), unread, cuda_only


def test_a_function_a_block_calls_is_read_to_its_own_closing_brace():
    # the block's brace search had gone past `reg`, and `reg`'s body ran on into `unused`'s: `b` was read as CPU
    # (libclang 18.1.1: the CPU block reaches `"a"` only) and not said CUDA-only
    source = CUDA + (
        b'void reg(torch::Library& m) { m.impl("a", &a_cpu); }\n'
        b'void unused(torch::Library& m) { m.impl("b", &b_cpu); }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg(m); }\n"
    )
    assert _cpu_and_cuda_only(source) == ([("myops", "a", "CPU")], [], {"b"})


def test_a_library_passed_in_any_other_call_is_read_or_said(tmp_path):
    # libclang 18.1.1 reaches `a` and `b` from each CPU block; porter read no CPU kernel and said nothing, so `a` and
    # `b` were CUDA-only: a qualified call, a method's, two arguments, a pointer, a cast, a fifth function deep.
    # `reg2(m, 1)` of the file's two-parameter function is read; the others are said and decide nothing
    forms = {
        b'namespace detail { void reg(torch::Library& lib) { lib.impl("a", &a_cpu); } }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { detail::reg(m); }\n": "detail::reg",
        b'struct R { static void add(torch::Library& lib) { lib.impl("a", &a_cpu); } };\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { R r; r.add(m); }\n": "r.add",
        b'void reg(torch::Library* lib) { lib->impl("a", &a_cpu); }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg(&m); }\n": "reg",
        b'void reg(torch::Library& lib) { lib.impl("a", &a_cpu); }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg(static_cast<torch::Library&>(m)); }\n": "reg",
        b"".join(b"void f%d(torch::Library& l) { f%d(l); }\n" % (i, i + 1) for i in range(1, 5))
        + b'void f5(torch::Library& l) { l.impl("a", &a_cpu); }\nTORCH_LIBRARY_IMPL(myops, CPU, m) { f1(m); }\n': "f5",
    }
    for form, name in forms.items():
        found, unread, cuda_only = _cpu_and_cuda_only(CUDA + form)
        assert (found, [u[2] for u in unread], cuda_only) == ([], [name], set()), form
    two = CUDA + (
        b'void reg2(torch::Library& lib, int n) { lib.impl("a", &a_cpu); }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { reg2(m, 1); (void)m; }\n"
    )
    assert _cpu_and_cuda_only(two) == ([("myops", "a", "CPU")], [], {"b"})
    # `porter kernels` says so, and does not say the file has no such function: it has (`detail::reg`); `UNUSED` it
    # has not
    from porter.kernels.inventory import scan

    (tmp_path / "a.cu").write_bytes(CUDA + next(iter(forms)).replace(b"(m); }", b"(m); UNUSED(m); }"))
    notes = sorted(p for p in scan(tmp_path).problems if "passes its library" in p)
    assert notes == [
        "a.cu:3: the CPU block of `myops` passes its library to `UNUSED`, a function this file does not define: what"
        " it registers is not read, so no op of `myops` is taken for CUDA-only",
        "a.cu:3: the CPU block of `myops` passes its library to `detail::reg`, a call porter does not follow: what it"
        " registers is not read, so no op of `myops` is taken for CUDA-only",
    ]


def test_a_schema_macro_made_of_other_macros_is_joined():
    # `cpp -P`: `m.def("myops::" "a" "(Tensor x) -> Tensor", &a_any)` and `m.def("b" "(...)", &b_any)`; porter read
    # no op of either (a macro whose text holds another), so `a` and `b`, with a CUDA kernel, were CUDA-only. A macro
    # in its own expansion (`SELF`) stays a word: no op (`c`, the control)
    source = (
        b'#define NAME "a"\n#define FULL "myops::" NAME\n#define OTHER "b"\n#define ALIAS OTHER\n#define SELF "c" SELF\n'
        b'TORCH_LIBRARY(myops, m) {\n  m.def(FULL "(Tensor x) -> Tensor", &a_any);\n'
        b'  m.def(ALIAS "(Tensor x) -> Tensor", &b_any);\n  m.def(SELF "(Tensor x) -> Tensor", &c_any);\n}\n'
        b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }\n'
    )
    assert _cpu_and_cuda_only(source) == ([("myops", "a", "any"), ("myops", "b", "any")], [], {"c"})


DEFAULTS = """__global__ void k1(float* x, unsigned n = -1) { x[0] = n; }
__global__ void k2(float* x, bool b = 2, unsigned char c = 256, int w = 4294967296) { x[0] = b + c + w; }
__global__ void k3(float* x, int n = 3, double d = 1e400) { x[0] = d; }
__global__ void k4(float* x, float f = 1e39f) { x[0] = f; }
void go(float* x) { k1<<<1, 1>>>(x); k2<<<1, 1>>>(x); k3<<<1, 1>>>(x); k4<<<1, 1>>>(x); }
"""


def _op(out: Path, name: str) -> str:
    return next(line for line in (out / f"{name}_op.py").read_text().splitlines() if line.startswith(f"def {name}("))


def test_a_kernel_s_default_is_the_value_its_c_type_holds(tmp_path):
    # g++ 12: `unsigned n = -1` is 4294967295, `bool b = 2` 1, `unsigned char c = 256` 0, `int w = 4294967296` 0;
    # the ops' defaults were -1, 2, 256, 4294967296
    from porter.kernels.inventory import scan
    from porter.kernels.scaffold import write_scaffolds

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(DEFAULTS)
    write_scaffolds(scan(tmp_path / "src"), tmp_path / "out", "xla")
    assert _op(tmp_path / "out", "k1") == "def k1(x: torch.Tensor, n: int = 4294967295) -> None:"
    assert _op(tmp_path / "out", "k2") == "def k2(x: torch.Tensor, b: int = 1, c: int = 0, w: int = 0) -> None:"


def test_an_infinite_default_is_no_default_and_the_op_imports(tmp_path):
    # `double d = 1e400` (g++: inf) gave `d: float = float('inf')`, and torch 2.9 refused the op's schema ("invalid
    # numeric default value"): the op module failed to import. `float f = 1e39f` is inf too (g++), and was written
    # 1e39. Neither is written now, and a non-trailing default (`n = 3`, before `d`) is none either
    from porter.kernels.inventory import scan
    from porter.kernels.scaffold import write_scaffolds

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(DEFAULTS)
    write_scaffolds(scan(tmp_path / "src"), tmp_path / "out", "xla")
    assert _op(tmp_path / "out", "k3") == "def k3(x: torch.Tensor, n: int, d: float) -> None:"
    assert _op(tmp_path / "out", "k4") == "def k4(x: torch.Tensor, f: float) -> None:"
    spec = importlib.util.spec_from_file_location("scaf2_k3_op", tmp_path / "out" / "k3_op.py")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_a_library_given_another_name_in_a_block_is_read():
    # `auto& lib = m; reg(lib);` and `torch::Library& l2 = l; l2.impl(...)` in the function: libclang 18.1.1 reaches
    # `"a"` from the CPU block; porter read none and said nothing, so `a` was CUDA-only. `b`, with no CPU kernel,
    # stays CUDA-only (the control)
    source = CUDA + (
        b'void reg(torch::Library& l) { torch::Library& l2 = l; l2.impl("a", &a_cpu); }\n'
        b"TORCH_LIBRARY_IMPL(myops, CPU, m) { auto& lib = m; reg(lib); }\n"
    )
    assert _cpu_and_cuda_only(source) == ([("myops", "a", "CPU")], [], {"b"})
