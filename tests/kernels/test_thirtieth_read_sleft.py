"""The thirtieth read's helper on the scaffold leftovers (sleft, issue 24): each test failed on 34fb428."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops
from porter.kernels.inventory import scan
from tests.kernels.test_twenty_ninth_read_sleft import _first_inputs

_CUDA_FOO = b'TORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("foo", &foo_cuda); }\n'


def _keys(source: bytes, name: str = "a.cu") -> list[str]:
    return sorted(key for ns, op, key in native_ops.registrations(source, Path(name)) if op == "foo")


def _cuda_only(source: bytes, name: str = "a.cu") -> bool:
    return "foo" in native_ops.cuda_only_ops([(name, source)]).get("ns", {})


def test_a_block_comment_closed_through_a_line_splice_ends_there(tmp_path):
    # `/* old *\` then `/` on the next line: the compiler splices the lines first, so `*/` closes the
    # comment there (twenty-ninth scaffold read's leftover); porter read the comment on to the next
    # `*/`, and the kernel between was listed nowhere, its launch dropped
    (tmp_path / "k.cu").write_text(
        "/* an old note *\\\n/\n__global__ void shown_k(float* x) { x[0] = 1; }\n"
        "/* another */\nvoid go(float* x) { shown_k<<<1, 1>>>(x); }\n"
        # (and a splice between a comment's `/` and `*` opens one: `hidden_k` is commented out)
        "/\\\n* __global__ void hidden_k(float* x) { x[0] = 2; } */\n"
    )
    inventory = scan(tmp_path)
    assert [(k.name, [c.line for c in k.calls]) for k in inventory.kernels] == [("shown_k", [5])]
    # the registration reader reads comments so too: a CPU kernel after such a comment is one
    source = (
        b"/* was CUDA only *\\\n/\n" + _CUDA_FOO + b'TORCH_LIBRARY_IMPL(ns, CPU, m) { m.impl("foo", &f); }\n/* */\n'
    )
    assert _keys(source) == ["CPU", "CUDA"]
    assert not _cuda_only(source)


def test_a_key_macro_is_read_by_the_definition_in_effect_where_it_is_used():
    # `#define KEY torch::kCUDA`, a block, `#undef KEY`, `#define KEY torch::kCPU`, a block (scaf2's
    # `G_undef_rev.cu`; cpp -E: the first block's `foo` is CUDA's): the last definition was read for
    # both, `foo` CPU, and the CUDA-only op was not said
    source = (
        b"#define KEY torch::kCUDA\n"
        b'TORCH_LIBRARY_IMPL(ns, KEY, m) { m.impl("foo", &foo_cuda); }\n'
        b'TORCH_LIBRARY(ns, m) { m.impl("bar", KEY, &bar); }\n'
        b"#undef KEY\n#define KEY torch::kCPU\n"
        b'TORCH_LIBRARY(ns, m) { m.impl("baz", KEY, &baz); }\n'
        b'torch::RegisterOperators().op("ns::old", torch::RegisterOperators::options().kernel<F>(KEY));\n'
    )
    found = sorted((op, key) for _, op, key in native_ops.registrations(source, Path("a.cu")))
    assert found == [("bar", "CUDA"), ("baz", "CPU"), ("foo", "CUDA"), ("old", "CPU")]
    assert _cuda_only(source)
    # after an `#undef` with no new definition the word is no key porter reads
    gone = b"#define KEY torch::kCPU\n#undef KEY\n" + _CUDA_FOO + b'TORCH_LIBRARY(ns, m) { m.impl("foo", KEY, &f); }\n'
    assert _keys(gone) == ["CUDA", native_ops.UNREAD + "KEY"]


def test_a_registering_macro_is_expanded_by_the_definition_in_effect_where_it_is_used():
    # a use between two definitions of `REG` (cpp -E expands it with the first) was not expanded, the
    # CPU kernel it registers lost and the op said CUDA-only (scaf2's leftover); and a use after `#undef
    # REG` (cpp leaves it as written) was expanded, a CPU kernel no build registers read
    between = (
        b"#define REG(op) m.impl(#op, torch::kCPU, &op)\n"
        + _CUDA_FOO
        + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n#undef REG\n#define REG(op) m.impl(#op, torch::kMeta, &op)\n"
        b"TORCH_LIBRARY(other, m) { REG(bar); }\n"
    )
    assert _keys(between) == ["CPU", "CUDA"]
    assert not _cuda_only(between)
    assert ("bar", "Meta") in [(op, key) for _, op, key in native_ops.registrations(between, Path("a.cu"))]
    undone = (
        b"#define REG(op) m.impl(#op, torch::kCPU, &op)\n#undef REG\n"
        + _CUDA_FOO
        + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n"
    )
    assert _keys(undone) == ["CUDA"]
    assert _cuda_only(undone)


def test_a_cpp_source_is_compiled_without_cudacc(tmp_path):
    # nvcc: `__CUDACC__` is "defined when compiling CUDA source files", never for a `.cpp` (a C++ source).
    # keys.h's `#ifdef __CUDACC__` / `#define KEY CUDA` / `#else` / `#define KEY CPU`, included by a
    # `.cpp`, was undecided, the first definition read: the `.cpp`'s CPU kernel was read CUDA, and the op
    # said CUDA-only (twenty-ninth cache2 read's leftover); a `.cu` including it still reads CUDA
    (tmp_path / "keys.h").write_bytes(b"#ifdef __CUDACC__\n#define KEY CUDA\n#else\n#define KEY CPU\n#endif\n")
    host = b'#include "keys.h"\nTORCH_LIBRARY_IMPL(ns, KEY, m) { m.impl("foo", &foo_cpu); }\n'
    (tmp_path / "host.cpp").write_bytes(host)
    (tmp_path / "dev.cu").write_bytes(host.replace(b"foo_cpu", b"foo_cuda"))
    assert native_ops.registrations(host, tmp_path / "host.cpp", tmp_path) == [("ns", "foo", "CPU")]
    assert native_ops.registrations(host, tmp_path / "dev.cu", tmp_path) == [("ns", "foo", "CUDA")]
    sources = [(str(tmp_path / name), (tmp_path / name).read_bytes()) for name in ("host.cpp", "dev.cu")]
    assert native_ops.cuda_only_ops(sources) == {}
    # and the `.cpp`'s own `#ifdef __CUDACC__` branch is none there (its `#ifndef` one still read)
    own = b'#ifdef __CUDACC__\nTORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("foo", &f); }\n#endif\n'
    assert native_ops.registrations(own, Path("reg.cpp")) == []


def test_a_name_spelled_decomposed_and_composed_in_one_file_is_said(tmp_path):
    # `ko` + U+0308 (NFD) declared, `k` + U+00F6 (NFC) launched: two names to a compiler (libclang 18:
    # the launch's is undeclared), one to porter, which reads the file composed: the launch was listed
    # with the kernel, unsaid (twenty-ninth sleft read's leftover); a file of one spelling is no note
    nfd, nfc = "ko\u0308", "k\u00f6"
    (tmp_path / "a.cu").write_text(
        f"__global__ void {nfd}(float* x) {{ x[0] = 1; }}\n// {nfc}\nvoid go(float* x) {{ {nfc}<<<1, 1>>>(x); }}\n"
    )
    (tmp_path / "b.cu").write_text(f'__global__ void {nfd}2(float* x) {{ x[0] = 1; }}\nconst char* s = "{nfc}";\n')
    inventory = scan(tmp_path)
    assert inventory.problems == [
        f"a.cu:1: `{nfc}` is spelled here in decomposed letters (NFD) and elsewhere in the file composed (NFC): "
        "porter reads both as one name, where a compiler reads two (C++23 asks names composed), so a launch of "
        "the one is listed with the other's kernel"
    ]


SPACED_POINTERS = (
    "template <typename T> __global__ void kc(T* x, int n) { x[0] = n; }\n"
    "template <typename T> __global__ void kh(T* x, int n) { x[0] = n; }\n"
    "template <typename T> __global__ void kp(T* x, int n) { x[0] = n; }\n"
    "void go(torch::Tensor t, const unsigned long * q, int n, int rows, int * cols) {\n"
    "  int64_t * p = t.data_ptr<int64_t>();\n"
    "  kc<<<1, 1>>>(p, n);\n"
    "  kh<<<1, 1>>>(q, n);\n"
    "  int64_t prod = rows * cols;\n"
    "  kp<<<1, 1>>>(cols, n);\n"
    "}\n"
)


def test_a_pointer_declared_with_spaces_on_both_sides_of_its_star_gives_its_type(tmp_path):
    # `int64_t * p = ...; kc<<<...>>>(p, n)` and a host parameter `const unsigned long * q` (twenty-ninth
    # sleft read's leftover): read as products, so `T* x` was a tensor of random floats; `rows * cols`
    # (a variable's name before the `*`) is still no declaration
    assert _first_inputs(tmp_path, SPACED_POINTERS, ("kc", "kh", "kp")) == {
        "kc": "x = torch.randint(0, 64, (4, 256), dtype=torch.int64, device=device)",
        "kh": "x = torch.randint(0, 64, (4, 256), dtype=torch.uint64, device=device)",
        "kp": "x = torch.randint(0, 64, (4, 256), dtype=torch.int32, device=device)",
    }


def test_a_registration_split_by_a_backslash_newline_in_a_block_is_read():
    # `m.im\` newline `pl("foo", ...)` and a name `"fo\` newline `o"` in a block's own code (cpp -E joins
    # the lines first: `m.impl("foo", ...)`): no registration was read, the CPU kernel lost and the op
    # said CUDA-only (twenty-ninth scaf2 read's leftover: splices were joined in a macro's arguments only);
    # a splice between arguments (`\\` then CR LF) the control, read before too
    for spliced in (b'm.im\\\npl("foo", &foo_cpu);', b'm.impl("fo\\\no", &foo_cpu);', b'm.impl("foo", \\\r\n&f);'):
        source = _CUDA_FOO + b"TORCH_LIBRARY_IMPL(ns, CPU, m) { " + spliced + b" }\n"
        assert _keys(source) == ["CPU", "CUDA"], spliced
        assert not _cuda_only(source)


def test_a_registration_in_a_branch_porter_cannot_decide_is_said(tmp_path):
    # `#ifdef WITH_CPU` around a CPU block (the build's `-D` decides): read as compiled, so the op is
    # not CUDA-only to lint, and said nowhere (twenty-ninth scaffold read's leftover); now the listing
    # says it. `#if 0` (decided: none) and a plain block are no note
    (tmp_path / "reg.cpp").write_bytes(
        b"#include <torch/library.h>\n#ifdef WITH_CPU\n"
        b'TORCH_LIBRARY_IMPL(ns, CPU, m) { m.impl("foo", &foo_cpu); }\n'
        b'torch::RegisterOperators().op("ns::old", &old_cpu);\n#endif\n'
        b'#if 0\nTORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("foo", &foo_meta); }\n#endif\n'
    )
    (tmp_path / "k.cu").write_bytes(b"__global__ void k(float* x) { x[0] = 1; }\n" + _CUDA_FOO)
    inventory = scan(tmp_path)
    assert sorted((r.op, r.key) for r in inventory.registered) == [("foo", "CPU"), ("foo", "CUDA"), ("old", "any")]
    assert inventory.problems == [
        "reg.cpp:3: a registration in `#ifdef WITH_CPU` of the `#if` at line 2 (and 1 more), a branch porter "
        "cannot decide (the build's `-D` does): read as compiled, so the op is not taken for CUDA-only"
    ]
