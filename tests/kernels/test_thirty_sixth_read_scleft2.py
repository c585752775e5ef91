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
