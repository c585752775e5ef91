"""The thirty-fourth read's leftover helper on the registration readers (scleft, issue 24): each test failed on
73040789. The C++ verdicts are g++'s (each form compiles against a `Library` with `impl`/`def`) and torch 2.9's (a
CPU kernel registered is what a CPU tensor reaches): docs/reads/52-scleft-tools."""

from __future__ import annotations


from porter.analysis import native_ops

CU = b'#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CUDA, m) {\n  m.impl("a", &a_cuda);\n}\n'


def _cpp_cuda_only(cpp: str) -> bool:
    """Whether porter reads `myops::a` as CUDA-only where `a.cu` gives it a CUDA kernel and `b.cpp` is `cpp`."""
    found = native_ops.cuda_only_and_overloaded([("a.cu", CU), ("b.cpp", cpp.encode())])[0]
    return "a" in found.get("myops", {})


def _cpu_block(body: str) -> str:
    return "#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CPU, m) {\n" + body + "\n}\n"


def test_a_library_reached_through_its_address_an_assigned_pointer_or_a_second_declarator_registers():
    forms = [
        '(&m)->impl("a", &a_cpu);',  # (the library's address, called through)
        'torch::Library* p;\n  p = &m;\n  p->impl("a", &a_cpu);',  # (a pointer given it after its declaration)
        'auto& x = m, &y = m;\n  y.impl("a", &a_cpu);',  # (the declaration's second declarator)
        'torch::Library* p = &m;\n  (*p).impl("a", &a_cpu);',  # (a pointer, dereferenced)
    ]
    assert [_cpp_cuda_only(_cpu_block(form)) for form in forms] == [False] * len(forms)
    # (the control: a comparison gives the pointer nothing)
    control = 'torch::Library* p = other();\n  bool same = p == &m;\n  p->impl("a", &a_cpu);'
    assert _cpp_cuda_only(_cpu_block(control))
