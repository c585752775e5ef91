"""The thirtieth read's second-wave helper on the registration reader (scaf2, issue 24): each test
failed on 4803941f, where the first wave's chained calls, tags, per-position key macros and splice
removal were merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analysis import native_ops


def _regs(source: bytes) -> list[tuple[str | None, str, str]]:
    return sorted(native_ops.registrations(source, Path("a.cu")))


def _cuda_only(source: bytes) -> set[str]:
    return set(native_ops.cuda_only_ops([("a.cu", source)]).get("myops", {}))


def test_a_registering_macro_after_many_splices_is_expanded_by_the_definition_in_effect():
    # 40 calls split by a backslash-newline, then `REG` redefined for the CPU: the splices moved the
    # offsets by two bytes each, so `REG(a)` was read at an offset before `#undef REG`, expanded by
    # the CUDA `REG`, and `a` said CUDA-only (`cpp -P`: a CPU kernel)
    source = b"#define REG(x) m.impl(#x, torch::kCUDA, &x##_cuda)\nTORCH_LIBRARY(myops, m) {\n"
    source += b"".join(b'  m.impl("z%d", \\\ntorch::kCUDA, &z%d_cuda);\n' % (i, i) for i in range(40))
    source += b"#undef REG\n#define REG(x) m.impl(#x, torch::kCPU, &x##_cpu)\n  REG(a);\n}\n"
    assert ("myops", "a", "CPU") in _regs(source)
    assert ("myops", "a", "CUDA") not in _regs(source)
    assert "a" not in _cuda_only(source) and "z0" in _cuda_only(source)  # (the split calls: the control)


@pytest.mark.parametrize(
    "source, regs, cuda_only",
    [
        # `#undef KEY` / `#define KEY torch::kCPU` inside the block: `b` was read by the definition in
        # effect at the block's start (CUDA), and said CUDA-only; the same after a registering macro's
        # expansion
        pytest.param(
            b"#define KEY torch::kCUDA\n#define REG(x) m.impl(#x, KEY, &x##_k)\n"
            b'TORCH_LIBRARY(myops, m) {\n  m.impl("a", KEY, &a_cuda);\n  REG(c);\n'
            b'#undef KEY\n#define KEY torch::kCPU\n  m.impl("b", KEY, &b_cpu);\n  REG(d);\n}\n',
            [("myops", "a", "CUDA"), ("myops", "b", "CPU"), ("myops", "c", "CUDA"), ("myops", "d", "CPU")],
            {"a", "c"},
            id="a key macro redefined in a block is read where the call is",
        ),
        # `TORCH_LIBRARY_IMPL(myops, \` then `KEY, m) {`: no block, its CPU kernel lost (cpp: one)
        pytest.param(
            b"#define KEY CUDA\n"
            b'TORCH_LIBRARY_IMPL(myops, KEY, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); }\n'
            b"#undef KEY\n#define KEY CPU\n"
            b'TORCH_LIBRARY_IMPL(myops, \\\nKEY, m) { m.impl("b", &b_cpu); }\n'
            b'TORCH_LIBRARY_IMPL(myops, \\\r\nCPU, m) \\\n{ m.impl("c", &c_cpu); }\n',
            [("myops", "a", "CUDA"), ("myops", "b", "CPU"), ("myops", "b", "CUDA"), ("myops", "c", "CPU")],
            {"a"},
            id="a block head split by a backslash-newline is read",
        ),
    ],
)
def test_a_registration_is_read_by_the_preprocessor_state_where_it_stands(source, regs, cuda_only):
    assert _regs(source) == regs
    assert _cuda_only(source) == cuda_only


def test_a_schema_s_tags_given_by_a_macro_are_no_implementation():
    # `#define TAGS {at::Tag::pt2_compliant_tag}`, `m.def(schema, TAGS)`: read as an implementation every
    # device runs, and `a`, with a CUDA kernel only, not said to be; a function `b_any` stays one
    source = (
        b"#define TAGS {at::Tag::pt2_compliant_tag}\n#define VTAGS std::vector<at::Tag>{at::Tag::core}\n"
        b"TORCH_LIBRARY(myops, m) {\n"
        b'  m.def("a(Tensor x) -> Tensor", TAGS);\n  m.def("c(Tensor x) -> Tensor", VTAGS);\n'
        b'  m.def("b(Tensor x) -> Tensor", b_any);\n'
        b'  m.impl("a", torch::kCUDA, &a_cuda);\n  m.impl("b", torch::kCUDA, &b_cuda);\n'
        b'  m.impl("c", torch::kCUDA, &c_cuda);\n}\n'
    )
    assert _cuda_only(source) == {"a", "c"}
