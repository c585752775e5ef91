"""Every op module `kernels --scaffold` writes is imported here, as a user's test would: torch reads
each op's schema from the generated function at import, and refuses names Python takes (seventeenth
read of issue 24)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds
from tests.deps import need
from tests.kernels.test_inventory import _load

TRITON = """import triton
import triton.language as tl


@triton.jit
def NAME(X, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(OUT + offs, tl.load(X + offs, mask=m) * 2.0, mask=m)
"""


def _triton(name: str, x: str = "x_ptr", out: str = "out_ptr") -> str:
    return TRITON.replace("NAME", name).replace("OUT", out).replace("X", x)


def _ops(tmp_path: Path, files: dict[str, str], target: str = "neuron") -> Path:
    src = tmp_path / "src"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8")
    out = tmp_path / "k"
    write_scaffolds(scan(src), out, target)
    return out


def _imported(torch, out: Path) -> dict[str, str]:
    """Each op module of `out` imported: its op's schema, by op name."""
    schemas = {}
    for path in sorted(out.glob("*_op.py")):
        _load(path)
        op = re.search(r'"porter_kernels::(\w+)"', path.read_text())[1]
        schemas[op] = str(getattr(torch.ops.porter_kernels, op).default._schema)
    return schemas


@pytest.mark.torch
def test_a_parameter_named_past_ascii_gets_a_name_torch_s_schema_reads(tmp_path):
    """Python takes `xé` as a name, torch's schema parser does not: the op module of a Triton
    kernel with such a pointer failed at import ("UnicodeDecodeError"), and so did its test."""
    torch = need("torch")
    out = _ops(tmp_path, {"u.py": _triton("uni17_kernel", "x\u00e9", "out\u00e9")})
    [schema] = _imported(torch, out).values()
    assert schema.isascii() and schema.count("Tensor") == 2, schema


@pytest.mark.torch
def test_a_name_that_is_a_word_of_torch_s_schema_is_not_given_to_torch(tmp_path):
    """`NoneType` and `Ellipsis` are names to Python and words to torch's schema parser: a
    parameter or a kernel so named gave an op module that failed at import ("expected ident")."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "t.py": _triton("kw17_kernel", "NoneType", "Ellipsis") + _triton("NoneType").replace("import", "#"),
            "k.cu": "__global__ void Ellipsis(const float* NoneType, float* b, int n) { b[0] = NoneType[0]; }\n",
        },
    )
    schemas = _imported(torch, out)
    assert len(schemas) == 3, schemas
    for schema in schemas.values():
        assert not re.search(r"\b(NoneType|Ellipsis)\b", schema), schema


@pytest.mark.torch
def test_a_kernel_named_as_an_attribute_of_torch_s_op_namespace_is_reached(tmp_path):
    """`torch.ops.porter_kernels.name` is the namespace's own name (a str): an op registered as
    `name` (a kernel defined by a macro `#define K(name) __global__ void name(...)`) failed at
    import ("'str' object has no attribute '_qualified_op_name'")."""
    torch = need("torch")
    out = _ops(tmp_path, {"k.cu": "__global__ void name(float* x, int n) { x[0] = n; }\n"})
    [(op, schema)] = _imported(torch, out).items()
    assert op != "name" and schema.startswith(f"porter_kernels::{op}("), schema


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_no_two_kernels_register_one_op(tmp_path, target):
    """Kernel `a`'s target op is `a_nki` (neuron) or `a_pallas` (tpu), the name of kernel `a_nki`'s
    or `a_pallas`'s reference op: torch took the second registration in place of the first, and
    `torch.ops.porter_kernels.a_pallas` was one or the other by import order."""
    out = _ops(tmp_path, {"t.py": "".join(_triton(n) for n in ("a", "a_nki", "a_pallas"))}, target)
    registered = [
        m[1] for path in sorted(out.glob("*.py")) for m in re.finditer(r'"porter_kernels::(\w+)"', path.read_text())
    ]
    assert len(registered) == 6 and len(set(registered)) == 6, registered


@pytest.mark.torch
def test_a_kernel_s_local_named_as_a_name_the_reference_uses_does_not_hide_it(tmp_path):
    """A Triton kernel's locals were written into the reference as they are: `torch = tl.load(...)`
    made the reference call `torch.exp` on the tensor it had just loaded (TypeError when it ran)."""
    torch = need("torch")
    kernel = _triton("loc17_kernel").replace(
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)\n",
        "    torch = tl.load(x_ptr + offs, mask=m)\n    float = torch * 2.0\n"
        "    tl.store(out_ptr + offs, tl.exp(float), mask=m)\n",
    )
    out = _ops(tmp_path, {"t.py": kernel})
    op = _load(out / "loc17_kernel_op.py")
    x, got = torch.arange(4.0), torch.zeros(4)
    op.loc17_kernel_reference(x, got, 4)
    assert torch.equal(got, torch.exp(x * 2.0)), got


@pytest.mark.torch
@pytest.mark.parametrize("extra,registered", [(61, True), (63, False), (300, False)])
def test_a_kernel_of_more_parameters_than_a_torch_op_takes_gives_files_that_import(tmp_path, extra, registered):
    """torch registers an op of at most 64 arguments: a Triton kernel of 303 parameters gave an op
    module, an NKI and a Pallas module that failed at import ("this PyTorch build only supports 64")."""
    torch = need("torch")
    name = f"wide{extra}_kernel"
    params = ", ".join(["x_ptr", "out_ptr", "n"] + [f"p{i}" for i in range(extra)] + ["BLOCK: tl.constexpr"])
    kernel = _triton(name).replace("x_ptr, out_ptr, n, BLOCK: tl.constexpr", params)
    for target in ("neuron", "tpu"):
        out = _ops(tmp_path / target, {"t.py": kernel}, target)
        active = [line for path in out.glob("*.py") for line in path.read_text().splitlines() if line.startswith("@")]
        assert any("porter_kernels::" in line for line in active) is registered, active
    op = _load(tmp_path / "neuron" / "k" / f"{name}_op.py")
    x, got = torch.arange(4.0), torch.zeros(4)
    getattr(op, name)(x, got, 4, *range(extra))
    assert torch.equal(got, x * 2.0), got
    assert hasattr(torch.ops.porter_kernels, name) is registered


@pytest.mark.torch
def test_a_cuda_kernel_that_takes_nothing_gets_an_op_that_takes_nothing(tmp_path):
    """`__global__ void k()` (or `(void)`) was read as an op of a loaded extension, whose call
    sites alone say what it takes: its op took one tensor, `arg0`, and said porter could not
    read the parameters."""
    torch = need("torch")
    out = _ops(tmp_path, {"k.cu": "__global__ void none17() {}\n__global__ void void17(void) { }\n"})
    schemas = _imported(torch, out)
    assert schemas == {
        "none17": "porter_kernels::none17() -> Tensor",
        "void17": "porter_kernels::void17() -> Tensor",
    }, schemas
    assert "could not read" not in (out / "none17_op.py").read_text()


@pytest.mark.torch
def test_a_cuda_kernel_declared_in_a_header_is_one_kernel_and_its_unnamed_parameters_keep_their_kinds(tmp_path):
    """A kernel declared in a header (`__global__ void add(const float*, float*, int);`) and defined
    in a .cu file was two kernels, `add` and `add_`; the declaration's unnamed parameters were named
    after their types (`float_`, `float__`, and `int`, typed float)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cuh": "__global__ void add17(const float*, float*, int);\n"
            # (`T` one of its template's types: a type not known to be a number is no float, nineteenth read)
            "template <typename T> __global__ void decl17(const float*, float* /* out */, unsigned int, const T);\n",
            "k.cu": '#include "k.cuh"\n__global__ void add17(const float* a, float* out, int n) { out[0] = a[0]; }\n',
        },
    )
    assert _imported(torch, out) == {
        "add17": "porter_kernels::add17(Tensor a, Tensor(a1!) out, SymInt n) -> ()",
        "decl17": "porter_kernels::decl17(Tensor arg0, Tensor(a1!) arg1, SymInt arg2, float arg3) -> ()",
    }


@pytest.mark.torch
def test_a_custom_op_s_scaffold_keeps_its_parameter_types_and_defaults(tmp_path):
    """A custom op is typed already, and torch took its types; the scaffold squeezed each into
    tensor, int or float (`mode: str` a Tensor, `dims: list[int]` an int, `out: Optional[Tensor]`
    required) and dropped the defaults: the op could not be called as the original was."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "ops.py": "from typing import List, Optional\n\nimport torch\n\n\n"
            '@torch.library.triton_op("mylib::fancy17", mutates_args=())\n'
            "def fancy17(x: torch.Tensor, mode: str, dims: List[int], xs: 'list[torch.Tensor]', scale: float = 1.0,\n"
            "            flag: bool = False, out: Optional[torch.Tensor] = None, dt: torch.dtype = torch.float32\n"
            ") -> torch.Tensor:\n"
            "    return x\n"
        },
    )
    [schema] = _imported(torch, out).values()
    assert schema.startswith(
        "porter_kernels::mylib__fancy17(Tensor x, str mode, SymInt[] dims, Tensor[] xs, float scale=1., "
        "bool flag=False, Tensor? out=None, ScalarType dt="  # float32, as this torch writes it
    ), schema


@pytest.mark.torch
def test_a_cuda_kernel_taking_tensor_accessors_gets_one_tensor_per_accessor(tmp_path):
    """`torch::PackedTensorAccessor32<scalar_t,2,torch::RestrictPtrTraits> input` (how PyTorch's
    extensions pass a tensor to a kernel) was cut at the commas of its template arguments into three
    parameters (`scalar_t`, `arg`, `input`), and an accessor was typed float."""
    torch = need("torch")
    acc = "torch::PackedTensorAccessor32<scalar_t, 2, torch::RestrictPtrTraits>"
    out = _ops(
        tmp_path,
        {
            "k.cu": "template <typename scalar_t>\n"
            f"__global__ void acc17(const {acc} input,\n    {acc} output, int n) {{\n"
            "  output[0][0] = input[0][0];\n}\n"
        },
    )
    assert _imported(torch, out) == {"acc17": "porter_kernels::acc17(Tensor input, Tensor(a1!) output, SymInt n) -> ()"}


@pytest.mark.torch
def test_a_triton_kernel_whose_address_adds_a_constexpr_gets_its_scaffold(tmp_path):
    """`tl.store(dw + offs + W, ...)` with `W: tl.constexpr`: the address's terms made `W` a
    pointer the kernel writes, a name the op does not take, and the scaffold ended in "internal
    error in porter: KeyError: 'W'", passed over (32 of fla-core 0.6.0's kernels)."""
    torch = need("torch")
    kernel = _triton("cw17_kernel").replace("BLOCK: tl.constexpr", "W: tl.constexpr, BLOCK: tl.constexpr")
    kernel = kernel.replace("tl.store(out_ptr + offs,", "tl.store(out_ptr + offs + W,")
    out = _ops(tmp_path, {"t.py": kernel})
    assert _imported(torch, out) == {
        "cw17_kernel": "porter_kernels::cw17_kernel(Tensor x_ptr, Tensor(a1!) out_ptr, SymInt n) -> ()"
    }


@pytest.mark.torch
def test_a_cuda_kernel_taking_a_function_pointer_keeps_the_parameters_after_it(tmp_path):
    """`__global__ void k(const float* x, void (*f)(float), float* y, int n)`: the signature's read
    ended at the function pointer's own `)`, so `y` and `n` were lost, and the pointer was a tensor
    `arg1` (a member function's, `float (Cls::*m)(int)`, too). A function is no argument of a torch
    op: it is left out, with a TODO (eighteenth read of issue 24)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cu": "__global__ void fp18(const float* x, void (*f)(float), float* y, int n) { y[0] = x[0]; }\n"
            "__global__ void mem18(float (Cls::*m)(int), float* out, int n) { out[0] = 1; }\n"
            "__global__ void ref18(const float (&a)[4], float* out) { out[0] = a[0]; }\n"
        },
    )
    assert _imported(torch, out) == {
        "fp18": "porter_kernels::fp18(Tensor x, Tensor(a1!) y, SymInt n) -> ()",
        "mem18": "porter_kernels::mem18(Tensor(a0!) out, SymInt n) -> ()",
        "ref18": "porter_kernels::ref18(Tensor a, Tensor(a1!) out) -> ()",
    }
    assert "`void (*f)(float)`, which no torch op can take" in (out / "fp18_op.py").read_text()


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_a_parity_test_is_skipped_where_a_package_its_kernel_module_imports_is_missing(tmp_path, target):
    """The parity test was skipped only without the target's runtime (`torch_xla`), but its kernel
    module imports jax too (no dependency of torch-tpu, nor of torch_xla without its `pallas`
    extra), and `nki` (which comes apart from torch_neuronx): with the runtime alone it failed,
    ModuleNotFoundError (torch_xla without jax, as in this project's CI environment). Eighteenth
    read of issue 24."""
    import ast

    out = _ops(tmp_path, {"k.py": _triton("skip18_kernel")}, target)
    imported = {
        (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
        for node in ast.walk(ast.parse((out / f"skip18_kernel_{target}.py").read_text()))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    } - {"torch", *sys.stdlib_module_names}
    test = (out / f"test_skip18_kernel_{target}_parity.py").read_text()
    guard = test[test.index("@pytest.mark.skipif") : test.index("def test_kernel_matches_reference")]
    assert imported and all(f"'{m}'" in guard for m in imported), (imported, guard)


@pytest.mark.torch
def test_a_cuda_kernel_s_parameter_of_an_aliased_type_is_typed_as_the_alias_s_type(tmp_path):
    """`typedef torch::PackedTensorAccessor32<float, 2> Acc; __global__ void k(Acc a)` was typed
    float (the alias's name is no accessor's), as mmcv 2.2.0's `#define TensorAcc4R
    PackedTensorAccessor32<...>` parameters; `using P = float*;` and a `typedef` of a pointer the
    same (the eighteenth read's leftover, issue 24)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cu": "typedef torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> Acc;\n"
            "#define TensorAcc4R PackedTensorAccessor32<scalar_t, 4, RestrictPtrTraits>\n"
            "using P = float*;\ntypedef const float* CP;\ntypedef int Index;\ntypedef P Q;\n"
            "template <typename scalar_t>\n"
            "__global__ void td19(const Acc a, TensorAcc4R b, P c, CP d, Index n, Q e) {\n"
            "  b[0][0][0][0] = a[0][0]; c[0] = d[0]; e[n] = 0;\n}\n"
        },
    )
    assert _imported(torch, out) == {
        "td19": "porter_kernels::td19(Tensor a, Tensor(a1!) b, Tensor(a2!) c, Tensor d, SymInt n, Tensor(a5!) e) -> ()"
    }


@pytest.mark.torch
def test_what_a_cuda_kernel_writes_is_read_past_braces_in_literals_increments_calls_and_references(tmp_path):
    """`mutates_args=()` for kernels that write their output: a `}` in a comment, a string or a
    character literal ended the body read there (its write after it unseen); `c[i]++`, a `memcpy`
    into the pointer (any call given its address), and a write through a reference bound to it
    were no writes. And an unnamed `torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits>`
    was named `RestrictPtrTraits` (nineteenth read of issue 24)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cu": "__global__ void bc19(const float* x, float* y) {\n  // the block ends } here\n  y[0] = x[0];\n}\n"
            '__global__ void bs19(const float* x, float* y) {\n  printf("}");\n  y[0] = x[0];\n}\n'
            "__global__ void bk19(const float* x, float* y) {\n  char c = '}';\n  y[0] = x[0];\n}\n"
            "__global__ void inc19(int* c, int* d) { c[0]++; --d[1]; }\n"
            "__global__ void cp19(float* out, const float* in) { memcpy(out + 1, in, 4); }\n"
            "__global__ void ref19(float* out) { float& r = out[0]; r = 1.0f; }\n"
            "__global__ void rd19(float* x, float* y, int n) { float v = x[n]; n++; y[0] = v; }\n"
            "__global__ void un19(torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits>, int n) {}\n"
        },
    )
    assert _imported(torch, out) == {
        "bc19": "porter_kernels::bc19(Tensor x, Tensor(a1!) y) -> ()",
        "bs19": "porter_kernels::bs19(Tensor x, Tensor(a1!) y) -> ()",
        "bk19": "porter_kernels::bk19(Tensor x, Tensor(a1!) y) -> ()",
        "inc19": "porter_kernels::inc19(Tensor(a0!) c, Tensor(a1!) d) -> ()",
        "cp19": "porter_kernels::cp19(Tensor(a0!) out, Tensor in_) -> ()",
        "ref19": "porter_kernels::ref19(Tensor(a0!) out) -> ()",
        "rd19": "porter_kernels::rd19(Tensor x, Tensor(a1!) y, SymInt n) -> ()",
        "un19": "porter_kernels::un19(Tensor arg0, SymInt n) -> Tensor",
    }


@pytest.mark.torch
def test_an_attribute_on_a_cuda_kernel_s_parameter_is_no_array(tmp_path):
    """`[[maybe_unused]] int n`: the attribute's `[` was read as an array's extent, and `n` became a
    tensor (structure-aware fuzzing, nineteenth read of issue 24)."""
    torch = need("torch")
    out = _ops(
        tmp_path, {"k.cu": "__global__ void attr19([[maybe_unused]] int n, [[maybe_unused]] float* y) { y[0] = n; }\n"}
    )
    assert _imported(torch, out) == {"attr19": "porter_kernels::attr19(SymInt n, Tensor(a1!) y) -> ()"}


@pytest.mark.torch
def test_a_cuda_kernel_s_struct_parameter_is_no_float(tmp_path):
    """A struct passed by value (causal-conv1d 1.7.0's 5 kernels take `ConvParamsBase params`,
    mamba-ssm's 2 `SSMParamsBwd params`, vllm 0.34.0's `CooperativeTopKParams<TopK, InT> params`, a
    `const __grid_constant__ CUtensorMap`) was a `float` of the op. It is left out of the op, under
    a TODO that says to pass its fields; a number stays a number: one of the kernel's template type
    parameters (`T alpha`), CUDA's and ATen's floating types, an `enum` (deepspeed 0.19.8's `typedef enum
    {...} adamMode_t`) (nineteenth read of issue 24, D10)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cu": "struct ConvParamsBase { int batch; void* x_ptr; };\n"
            "enum class Mode : uint8_t { A, B };\ntypedef enum { SUM = 0, MEAN = 1 } reduce_t;\n"
            "template<typename Ktraits>\n__global__ __launch_bounds__(Ktraits::kNThreads)\n"
            "void conv19s(ConvParamsBase params) { }\n"
            "template <int TopK, typename InT>\n__global__ void topk19s(CooperativeTopKParams<TopK, InT> params,"
            " InT scale, const __grid_constant__ CUtensorMap tmap, float* out) { out[0] = scale; }\n"
            "template <typename T> static __global__ void num19s(T* out, T alpha, Mode m, at::Half h, __nv_bfloat16 b,"
            " const reduce_t r)"
            " { out[0] = alpha; }\n"
        },
    )
    assert _imported(torch, out) == {
        "conv19s": "porter_kernels::conv19s() -> Tensor",
        "topk19s": "porter_kernels::topk19s(float scale, Tensor(a1!) out) -> ()",
        "num19s": "porter_kernels::num19s(Tensor(a0!) out, float alpha, SymInt m, float h, float b, SymInt r) -> ()",
    }
    todo = "of a type porter does not know to be a number (a struct or class, which no torch op can take)"
    assert f"`ConvParamsBase params`, {todo}" in (out / "conv19s_op.py").read_text()
    topk = (out / "topk19s_op.py").read_text()
    assert f"`CooperativeTopKParams<TopK, InT> params`, `const __grid_constant__ CUtensorMap tmap`, {todo}" in topk


def test_a_cuda_kernel_s_functor_of_a_template_type_is_no_float(tmp_path):
    """`template <typename Op> __global__ void k(Op op, float* x)` typed `op` a float: any of the
    kernel's template type parameters was a number. One the kernel calls (`op(a)`) or reads a
    member of (`p.scale`, `f->g`) is left out of the op under its own TODO; one used as a number
    (`T alpha`, `alpha * x[0]`) stays a float (twentieth read's leftover, issue 24)."""
    torch = need("torch")
    out = _ops(
        tmp_path,
        {
            "k.cu": "template <typename Op, typename T>\n"
            "__global__ void apply20(Op op, const T* x, T* y, T alpha, int n) { y[0] = op(x[0]) * alpha; }\n"
            "template <typename P, class F>\n"
            "__global__ void member20(const P p, F* f, const F& g, float* y) { y[0] = p.scale + g->h(); }\n"
        },
    )
    assert _imported(torch, out) == {
        "apply20": "porter_kernels::apply20(Tensor x, Tensor(a1!) y, float alpha, SymInt n) -> ()",
        "member20": "porter_kernels::member20(Tensor f, Tensor(a1!) y) -> ()",
    }
    todo = "of a template type it calls or reads a member of (a functor or a struct, which no torch op can take)"
    assert f"`Op op`, {todo}" in (out / "apply20_op.py").read_text()
    assert f"`const P p`, `const F& g`, {todo}" in (out / "member20_op.py").read_text()
