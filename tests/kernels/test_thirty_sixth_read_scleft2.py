"""The thirty-sixth read's second-wave helper on scleft's leftovers (scleft2, issue 24): each test failed on 59212d92
by its assertion. The verdicts are the compiler's (`cpp -P` with the macro defined and undefined): the ops each build
registers for each key, an op CUDA-only where no build registers a kernel of another device for it:
docs/reads/54-scleft2-tools."""

from __future__ import annotations

from porter.analysis import native_ops

DEFS = (
    "#include <torch/library.h>\n"
    'TORCH_LIBRARY(myops, m) { m.def("a(Tensor x) -> Tensor"); m.def("b(Tensor x) -> Tensor"); }\n'
    'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", a_cuda); m.impl("b", b_cuda); }\n'
)


def _cuda_only(text: str) -> set[str]:
    return set(native_ops.cuda_only_ops([("k.cpp", text.encode())]).get("myops", {}))


def test_a_block_opened_in_each_branch_of_an_ifdef_goes_on_after_the_endif_in_both_builds():
    # (59212d92: the `WITH_X` branch's CPU block ended at the `#else` branch's head, `m.impl("b", b_cpu)` after the
    # `#endif` read as the Meta block's only, and `b` said CUDA-only; `cpp -P -DWITH_X` registers `b_cpu` for the CPU)
    source = DEFS + (
        "#ifdef WITH_X\n"
        'TORCH_LIBRARY_IMPL(myops, CPU, m) {\n  m.impl("a", a_cpu);\n'
        "#else\n"
        'TORCH_LIBRARY_IMPL(myops, Meta, m) {\n  m.impl("a", a_meta);\n'
        "#endif\n"
        '  m.impl("b", b_cpu);\n}\n'
    )
    assert _cuda_only(source) == set()
    found = native_ops.registrations(source.encode())
    assert sorted(op for ns, op, key in found if key == "CPU") == ["a", "b"]
    assert sorted(op for ns, op, key in found if key == "Meta") == ["a", "b"]


def test_a_block_closed_in_its_branch_is_read_as_before():
    # (the control, as on 59212d92 and as `cpp -P` both builds: a block the branch closes ends there, `b` CUDA-only)
    closed = DEFS + (
        "#ifdef WITH_X\n"
        'TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("a", a_cpu); }\n'
        "#else\n"
        'TORCH_LIBRARY_IMPL(myops, Meta, m) { m.impl("a", a_meta); }\n'
        "#endif\n"
    )
    assert _cuda_only(closed) == {"b"}


def test_a_block_left_open_under_a_nested_one_closes_at_its_own_brace_after_the_endif():
    # (59212d92: `b` said CUDA-only as above; `cpp -P -DWITH_X` registers `b_cpu` for the CPU, and `c`, in a Meta
    # block after the CPU one's second `}`, is CUDA-only in every build)
    source = DEFS.replace('m.impl("b", b_cuda);', 'm.impl("b", b_cuda); m.impl("c", c_cuda);').replace(
        'm.def("b(Tensor x) -> Tensor");', 'm.def("b(Tensor x) -> Tensor"); m.def("c(Tensor x) -> Tensor");'
    ) + (
        "#ifdef WITH_X\n"
        'TORCH_LIBRARY_IMPL(myops, CPU, m) {\n  if (true) {\n  m.impl("a", a_cpu);\n'
        "#else\n"
        'TORCH_LIBRARY_IMPL(myops, Meta, m) {\n  if (true) {\n  m.impl("a", a_meta);\n'
        "#endif\n"
        '  m.impl("b", b_cpu);\n  }\n}\n'
        'TORCH_LIBRARY_IMPL(myops, Meta, m) { m.impl("c", c_meta); }\n'
    )
    assert _cuda_only(source) == {"c"}


def test_a_block_head_no_build_compiles_opens_no_block():
    # (59212d92: the `#else` CPU head of `#if 1` opened a block whose body went on after the `#endif`, `b_cpu` read as a
    # CPU kernel and `b` not said CUDA-only; `cpp -P` reads `b_cpu` in the Meta block, `b` CUDA-only in every build)
    source = DEFS + (
        "#if 1\n"
        'TORCH_LIBRARY_IMPL(myops, Meta, m) {\n  m.impl("a", a_meta);\n'
        "#else\n"
        'TORCH_LIBRARY_IMPL(myops, CPU, m) {\n  m.impl("a", a_cpu);\n'
        "#endif\n"
        '  m.impl("b", b_cpu);\n}\n'
    )
    assert _cuda_only(source) == {"a", "b"}
    # (the control, as on 59212d92: the same under `#ifdef WITH_X`, undecided: the `#else` CPU block is built)
    assert _cuda_only(source.replace("#if 1", "#ifdef WITH_X")) == set()


KEYED = (
    'TORCH_LIBRARY(myops, m) { m.def("a(Tensor x) -> Tensor"); }\n'
    'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", a_cuda); }\n'
    'TORCH_LIBRARY_IMPL(myops, KEY, m) { m.impl("a", a_k); }\n'
)


def _cuda_only_with(tmp_path, headers: dict[str, str], includes: str) -> set[str]:
    for name, text in headers.items():
        (tmp_path / name).write_text(text)
    source = (includes + KEYED).encode()
    (tmp_path / "k.cpp").write_bytes(source)
    return set(native_ops.cuda_only_ops([(str(tmp_path / "k.cpp"), source)]).get("myops", {}))


def test_a_key_macro_two_headers_define_is_the_last_one_the_source_includes(tmp_path):
    # (59212d92: the first header's `#define KEY CUDA` was kept, and `a` said CUDA-only; `cpp -P` reads the last,
    # `KEY` CPU: docs/reads/54-scleft2-tools/i5_oracle.py)
    headers = {"a.h": "#ifndef A_H\n#define A_H\n#define KEY CUDA\n#endif\n", "b.h": "#pragma once\n#define KEY CPU\n"}
    assert _cuda_only_with(tmp_path, headers, '#include "a.h"\n#include "b.h"\n') == set()


def test_a_key_macro_a_later_header_defines_only_if_undefined_or_in_a_build_stays_the_first(tmp_path):
    # (the controls, as on 59212d92 and as `cpp -P`: `#ifndef KEY` / `#define KEY CPU` in the later header leaves
    # CUDA, `a` CUDA-only; an undecided `#ifdef WITH_CUDA` / `#define KEY CUDA` after `KEY` CPU leaves CPU in the
    # build without it: `a` not CUDA-only)
    guarded = {"a.h": "#define KEY CUDA\n", "b.h": "#ifndef KEY\n#define KEY CPU\n#endif\n"}
    assert _cuda_only_with(tmp_path, guarded, '#include "a.h"\n#include "b.h"\n') == {"a"}
    undecided = {"a.h": "#define KEY CPU\n", "b.h": "#ifdef WITH_CUDA\n#define KEY CUDA\n#endif\n"}
    assert _cuda_only_with(tmp_path, undecided, '#include "a.h"\n#include "b.h"\n') == set()
