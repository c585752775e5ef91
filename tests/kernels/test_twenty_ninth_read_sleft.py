"""The twenty-ninth read's helper on the scaffold leftovers (sleft, issue 24): each test failed on 944c10d."""

from __future__ import annotations

from porter.analysis import native_ops
from porter.kernels.inventory import scan
from porter.kernels.scaffold import write_scaffolds

_BODY = (
    "        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "        tl.store(x_ptr + offs, 1.0, mask=offs < n)\n\n"
)
FACTORIES = (
    "import triton\n"
    "import triton.language as tl\n\n\n"
    "def go(x, n):\n"
    "    k = make()\n"
    "    k[(1,)](x, n, BLOCK=64)\n"
    "    pick(n > 4)[(1,)](x, n, BLOCK=32)\n"
    "    j = pick(True)\n"
    "    j[(1,)](x, n, BLOCK=16)\n"
    "    other.factory()[(1,)](x, n)\n\n\n"
    "def make():\n"
    "    @triton.jit\n"
    "    def inner_k(x_ptr, n, BLOCK: tl.constexpr):\n" + _BODY + "    return inner_k\n\n\n"
    "def pick(flag):\n"
    "    @triton.jit\n"
    "    def one_k(x_ptr, n, BLOCK: tl.constexpr):\n" + _BODY + "    @triton.jit\n"
    "    def two_k(x_ptr, n, BLOCK: tl.constexpr):\n" + _BODY + "    if flag:\n"
    "        return one_k\n"
    "    return two_k\n"
)


def test_a_triton_kernel_a_later_function_returns_and_one_of_two_returned_are_followed(tmp_path):
    # `k = make()` above `def make()`, and `pick(flag)` returning one of two kernels (46-scaf2's
    # leftovers): each kernel was listed with no launch, the launches said nowhere; a call's result
    # porter does not follow (`other.factory()[grid]`) was silent too
    (tmp_path / "m.py").write_text(FACTORIES)
    inventory = scan(tmp_path)
    kernels = {k.name: k for k in inventory.kernels}
    assert [(c.line, c.args) for c in kernels["inner_k"].calls] == [(7, ["x", "n", "BLOCK=64"])]
    for name in ("one_k", "two_k"):
        said = kernels[name].unresolved
        assert len(said) == 2 and all("one of the kernels `pick(...)` returns" in s for s in said), said
        assert "m.py:8" in said[0] and "m.py:10" in said[1]
    assert [p for p in inventory.problems if "m.py:11" in p] == [
        "m.py:11: `other.factory(...)[...](...)` launches a kernel picked at run time from an object porter "
        "does not follow (an instance's, a function's result, one built at run time): which kernels it may "
        "run is not read"
    ]


def test_a_kernel_named_in_decomposed_letters_is_listed_with_its_launch_and_a_lone_mark_is_said(tmp_path):
    # `ko` + U+0308 (NFD; libclang 18 declares it): `\w` takes no combining mark, so the kernel was
    # listed nowhere and its launch dropped, unsaid (46-scaf2's leftover); a mark that composes with
    # no letter (`x` + U+0303) is said
    nfd = "ko\u0308"
    (tmp_path / "a.cu").write_text(
        f"__global__ void {nfd}(float* x, int n) {{ x[0] = n; }}\nvoid go(float* x) {{ {nfd}<<<1, 1>>>(x, 3); }}\n"
    )
    (tmp_path / "b.cu").write_text("// k\u00f6\n__global__ void kx\u0303(float* x) { x[0] = 1; }\n")
    inventory = scan(tmp_path)
    assert [(k.name, k.path, [(c.line, c.args) for c in k.calls]) for k in inventory.kernels] == [
        ("k\u00f6", "a.cu", [(2, ["x", "3"])])
    ]
    assert inventory.problems == [
        "b.cu:2: a name goes on with a combining mark (U+0303) that composes with no letter, which porter does "
        "not read as part of a name: a kernel or launch so named is not listed"
    ]


def test_each_kernel_of_a_head_of_three_ifdef_branches_is_listed(tmp_path):
    # `__global__ void` / `#if A` a_k(...) / `#elif B` b_k(...) / `#else` c_k(...) (46-scaf2's
    # leftover): the `#if` branch's `a_k` was listed nowhere (another name, not directives only,
    # follows it); a name in a branch that code other than a branch follows is still none
    (tmp_path / "k.cu").write_text(
        "__global__ void\n#if defined(A)\na_k(float* x)\n#elif defined(B)\nb_k(float* x, int n)\n#else\n"
        "c_k(float* x, int n, int m)\n#endif\n{ x[0] = 1; }\n"
        "__global__\n#if A\n__launch_bounds__(256) int\n#elif B\n__launch_bounds__(64)\n#else\n"
        "__launch_bounds__(128)\n#endif\nvoid d_k(float* a) { a[0] = 2; }\n"
    )
    kernels = scan(tmp_path).kernels
    assert sorted((k.name, k.line, k.params) for k in kernels) == [
        ("a_k", 1, ["float* x"]),
        ("b_k", 1, ["float* x", "int n"]),
        ("c_k", 1, ["float* x", "int n", "int m"]),
        ("d_k", 10, ["float* a"]),
    ]


KEYED = (
    b'#include "keys.h"\n#include "in.h"\n'
    b'TORCH_LIBRARY_IMPL(ts, OUT_KEY, m) { m.impl("a", &a); }\n'
    b'TORCH_LIBRARY_IMPL(ts, IN_KEY, m) { m.impl("b", &b); }\n'
)


def test_a_key_header_linked_out_of_the_tree_is_not_read(tmp_path, monkeypatch):
    # `keys.h` a link to a file outside the tree (46-scaf2's leftover): the registration reader read
    # it (`ts::a` CUDA, CUDA-only to lint), where the kernels' own include search reads no header
    # outside the tree; a header linked within the tree is still read
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    outside.mkdir()
    (tree / "inc").mkdir(parents=True)
    (outside / "keys.h").write_bytes(b"#define OUT_KEY CUDA\n")
    (tree / "inc" / "real.h").write_bytes(b"#define IN_KEY CUDA\n")
    (tree / "keys.h").symlink_to(outside / "keys.h")
    (tree / "in.h").symlink_to(tree / "inc" / "real.h")
    (tree / "ops.cu").write_bytes(KEYED)
    assert native_ops.registrations(KEYED, tree / "ops.cu") == [
        ("ts", "a", native_ops.UNREAD + "OUT_KEY"),
        ("ts", "b", "CUDA"),
    ]
    devices = {r.name: r.device for r in scan(tree, limit=None).registered}
    assert devices == {"ts::a": "not read: `OUT_KEY`, a macro this file does not define", "ts::b": "CUDA"}
    monkeypatch.chdir(tree)  # (lint's reader: the sources named from the working folder)
    assert native_ops.cuda_only_ops(native_ops.read(["ops.cu"])) == {
        "ts": {
            "b": "the project's op `ts::b` has a CUDA kernel only: registered for CUDA in ops.cu, for no other device"
        }
    }


BY_MACRO = (
    b'#define REG(op) m.impl(TORCH_SELECTIVE_NAME("ns::" #op), TORCH_FN(op))\n'
    b"#define REG2(var, op) \\\n  var.impl(#op, &op ## _impl)\n"
    b"#define NOT_REG(x) foo(#x)\n"
    b'TORCH_LIBRARY_IMPL(ns, CUDA, m) { REG(c); REG2(m, e); NOT_REG(z); m.impl("ns" "::g", &g); }\n'
)


def test_a_registration_a_macro_of_the_file_makes_is_read(tmp_path, monkeypatch):
    # `#define REG(op) m.impl(TORCH_SELECTIVE_NAME("ns::" #op), ...)` then `REG(c)` in a library block
    # (46-scaf2's leftover): no registration, unsaid; lint did not know `ns::c` is CUDA-only
    assert native_ops.registrations(BY_MACRO) == [("ns", "c", "CUDA"), ("ns", "e", "CUDA"), ("ns", "g", "CUDA")]
    (tmp_path / "ops.cu").write_bytes(BY_MACRO)
    monkeypatch.chdir(tmp_path)
    assert sorted(native_ops.cuda_only_ops(native_ops.read(["ops.cu"]))["ns"]) == ["c", "e", "g"]


DIGRAPHS = (
    "%:if 0\n__global__ void dead_k(float* a) { a[0] = 1; }\n%:endif\n"
    "%:define KDEF(name) __global__ void name(float* a, int n) { a<:0:> = n; }\n"
    "KDEF(made_k)\n"
    "%:define G __global__\nG void g_k(float* a) <% a[0] = 2; %>\n"
    'const char* s = "%:define KDEF(x) x";\n'
    "template <typename T> __global__ void t_k(T* a, int n) { a[0] = n; }\n"
    "void host(float** p, int n) { made_k<<<1, 1>>>(p[0], n); t_k<::Foo><<<1, 1>>>(p[1], n); }\n"
)


def test_the_percent_colon_and_bracket_digraphs_are_read_as_the_tokens_they_are(tmp_path):
    # `%:define`, `%:if 0` and `<: :>` (46-scaf2's leftover): the macro's parameter `name` was listed
    # as a kernel, `made_k` nowhere and its launch a note of "a name no kernel porter lists has", the
    # `%:if 0` kernel not said to be in a branch no build compiles, `g_k` given the `%:define`'s line;
    # `<::Foo>` is `<` then `::Foo` (C++11), a digraph in a string none
    (tmp_path / "k.cu").write_text(DIGRAPHS)
    inventory = scan(tmp_path)
    got = {k.name: k for k in inventory.kernels}
    assert sorted(got) == ["dead_k", "g_k", "made_k", "t_k"]
    assert "`#if 0` of the `#if` at line 1" in got["dead_k"].detail
    assert got["g_k"].line == 7 and got["made_k"].line == 5
    assert [(c.line, c.args) for c in got["made_k"].calls] == [(10, ["p[0]", "n"])]
    assert [(c.line, c.template) for c in got["t_k"].calls] == [(10, ["::Foo"])]
    assert inventory.problems == []


STRUCTS = (
    "struct Box { float x1, y1, x2, y2; };\ntypedef struct Box BoxT;\n"
    "__global__ void nms_k(const Box* __restrict__ boxes, struct Box* out, float4* v, const float* s, BoxT* t,"
    " int n) { out[0] = boxes[0]; }\n"
    "void host(const Box* b, Box* o, float4* v, const float* s, BoxT* t, int n) { nms_k<<<1, 1>>>(b, o, v, s, t, n); }\n"
)


def test_a_tensor_standing_for_a_pointer_to_structs_is_said_in_make_inputs(tmp_path):
    # `const Box* boxes` (45-sleft's and 46-sleft's leftover): a tensor of random floats under the op's
    # general TODO only; now its line says the floats stand for `Box` values (not for `float4`, a number)
    (tmp_path / "k.cu").write_text(STRUCTS)
    write_scaffolds(scan(tmp_path, limit=None), tmp_path / "out", "xla")
    text = (tmp_path / "out" / "test_nms_k_xla_parity.py").read_text()
    lines = text[text.index("def make_inputs") :].split("\n\n\n")[0].splitlines()
    said = [line.split(" = ")[0].strip() for line in lines if "values, no number" in line]
    assert said == ["boxes", "out", "t"]
    assert "# TODO(porter): `t` points to `Box` values, no number: these floats only stand for them" in text


SDIV = """import triton
import triton.language as tl


@triton.jit
def sdiv(x_ptr, y_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, s / x + 0.7 / x, mask=m)
"""
_SDIV_RUN = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import sdiv
from porter.kernels.triton_ref import translate
torch.manual_seed(28000)
x = torch.randn(4096)
y, z = torch.zeros(4096), torch.zeros(4096)
sdiv.sdiv[(4,)](x, y, 0.3, 4096, BLOCK=1024)
ns = {"torch": torch}
exec(translate(open(sdiv.__file__).read(), "sdiv").source(), ns)
ns["sdiv_reference"](x, z, 0.3, 4096)
print(json.dumps({"apart": int((y != z).sum()), "code": translate(open(sdiv.__file__).read(), "sdiv").source()}))
"""


def test_a_number_over_a_value_is_divided_as_triton_divides(tmp_path):
    # `s / x` (a number over a loaded value) was torch's `s / x`, the reciprocal of `x` times `s`:
    # 1 ulp off the kernel's quotient under TRITON_INTERPRET=1 in about a quarter of fp32 values
    # (43-sleft's leftover); now `torch.div(s, x)`, equal to the kernel in every lane
    from tests.deps import require
    from tests.helpers import run_interpreted

    require("triton")
    (tmp_path / "sdiv.py").write_text(SDIV)
    outs = run_interpreted(_SDIV_RUN, tmp_path)
    assert outs["apart"] == 0, outs["code"]


POINTERS = (
    "template <typename T> __global__ void kc(T* x, int n) { x[0] = n; }\n"
    "template <typename T> __global__ void kh(T* x, int n) { x[0] = n; }\n"
    "template <typename T> __global__ void kf(T* x, int n) { x[0] = n; }\n"
    "void go(torch::Tensor t, const unsigned long* q, int n) {\n"
    "  int64_t* p = t.data_ptr<int64_t>();\n"
    "  kc<<<1, 1>>>(p, n);\n"
    "  kh<<<1, 1>>>(q, n);\n"
    "  float* f = t.data_ptr<float>();\n"
    "  kf<<<1, 1>>>(f, n);\n"
    "}\n"
)


def _first_inputs(tmp_path, source: str, names: tuple[str, ...]) -> dict[str, str]:
    """The first `x = torch.` line of the parity test scaffolded for each kernel `names` of
    `source` (k.cu): what tensor the kernel's pointer is given."""
    (tmp_path / "k.cu").write_text(source)
    write_scaffolds(scan(tmp_path, limit=None), tmp_path / "out", "xla")
    made = {}
    for name in names:
        text = (tmp_path / "out" / f"test_{name}_xla_parity.py").read_text()
        made[name] = next(line.strip() for line in text.splitlines() if line.strip().startswith("x = torch."))
    return made


def test_a_template_pointer_launched_with_a_pointer_local_or_parameter_takes_its_type(tmp_path):
    # `T* x` of `kc<<<...>>>(p, n)` after `int64_t* p = ...;`, or of a host parameter `const unsigned
    # long* q` (46-sleft's leftover): a tensor of random floats; now the dtype the pointer's type gives
    # (libclang, x86_64-linux: `unsigned long` 8 bytes), a `float*` local still floats
    assert _first_inputs(tmp_path, POINTERS, ("kc", "kh", "kf")) == {
        "kc": "x = torch.randint(0, 64, (4, 256), dtype=torch.int64, device=device)",
        "kh": "x = torch.randint(0, 64, (4, 256), dtype=torch.uint64, device=device)",
        "kf": "x = torch.randn(4, 256, device=device)",
    }


def test_a_key_header_found_through_the_build_s_include_folders_is_read(tmp_path):
    # `#include "keys.h"` found only in setup.py's `include_dirs` (46-sleft's leftover): "not read",
    # where the kernels' own include search finds it there; a header named nowhere stays "not read"
    (tmp_path / "include").mkdir()
    (tmp_path / "csrc").mkdir()
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\nsetup(ext_modules=[CUDAExtension("x", [], include_dirs=["include"])])\n'
    )
    (tmp_path / "include" / "keys.h").write_bytes(b"#define DEV_KEY c10::DispatchKey::CUDA\n")
    (tmp_path / "csrc" / "ops.cu").write_bytes(
        b'#include "keys.h"\n#include "gone.h"\n__global__ void k(float* x) { x[0] = 1; }\n'
        b'TORCH_LIBRARY_IMPL(ts, DEV_KEY, m) { m.impl("a", &a); }\nTORCH_LIBRARY_IMPL(ts, GONE, m) { m.impl("b", &b); }\n'
    )
    (tmp_path / "csrc" / "host.cpp").write_bytes(
        b'#include "keys.h"\nTORCH_LIBRARY_IMPL(ts, DEV_KEY, m) { m.impl("c", &c); }\n'
    )
    devices = {r.name: r.device for r in scan(tmp_path, limit=None).registered}
    assert devices == {"ts::a": "CUDA", "ts::b": "not read: `GONE`, a macro this file does not define", "ts::c": "CUDA"}


SPELLINGS = {  # C's spelling -> what libclang 18 (x86_64-linux) gives its size and signedness as
    "signed char": "torch.int8",
    "unsigned short": "torch.uint16",
    "short int": "torch.int16",
    "unsigned short int": "torch.uint16",
    "signed short": "torch.int16",
    "signed int": "torch.int32",
    "signed": "torch.int32",
    "long long int": "torch.int64",
    "signed long long": "torch.int64",
    "unsigned long long int": "torch.uint64",
    "signed long int": "torch.int64",
}


def test_every_c_spelling_of_an_integer_pointer_gives_its_dtype(tmp_path):
    # `signed char*`, `unsigned short*`, `signed*`, `long long int*`... (libclang: SChar 1, UShort 2,
    # Int 4, LongLong 8) were float tensors: only one spelling of each type was known
    params = ", ".join(f"{c}* p{i}" for i, c in enumerate(SPELLINGS))
    names = ", ".join(f"p{i}" for i in range(len(SPELLINGS)))
    (tmp_path / "k.cu").write_text(
        f"__global__ void ka({params}) {{ p0[0] = 1; }}\nvoid go({params}) {{ ka<<<1, 1>>>({names}); }}\n"
    )
    write_scaffolds(scan(tmp_path, limit=None), tmp_path / "out", "xla")
    text = (tmp_path / "out" / "test_ka_xla_parity.py").read_text()
    lines = [line for line in text.splitlines() if line.strip().startswith("p")]
    made = [line.split("dtype=")[1].split(",")[0] if "dtype=" in line else "float" for line in lines]
    assert made == list(SPELLINGS.values())


def test_a_kernel_declared_and_defined_nowhere_is_said_to_be_declared_only(tmp_path):
    # xformers 0.0.28.post3's `kernel_forward.h`: `template <typename AK> __global__ void
    # __launch_bounds__(...) attention_kernel_batched(typename AK::Params params);` and no definition
    # in `csrc` (libclang: none) was listed as "defined" there like any kernel read; a declaration
    # whose definition the tree holds is still the definition only
    (tmp_path / "k.cu").write_text(
        "template <typename AK>\n__global__ void __launch_bounds__(AK::kNumThreads)\n"
        "    only_declared(typename AK::Params params);\n"
        "__global__ void both(float* x);\n__global__ void both(float* x) { x[0] = 1; }\n"
    )
    details = {k.name: (k.line, k.detail) for k in scan(tmp_path, limit=None).kernels}
    assert details == {
        "only_declared": (2, "__global__; declared only: no definition of it in the tree, so no body read"),
        "both": (5, "__global__"),
    }
