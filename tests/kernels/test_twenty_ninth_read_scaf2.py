"""The twenty-ninth read's second wave (scaf2) of the registration reader: the first wave's macro
expansion, `#if` reading and digraphs, each against what `cpp -E` makes of the same source."""

from __future__ import annotations

import threading
from pathlib import Path

from porter.analysis import native_ops

_CUDA_FOO = b'TORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("foo", &foo_cuda); }\n'


def _keys(source: bytes, name: str = "a.cu") -> list[str]:
    return sorted(key for ns, op, key in native_ops.registrations(source, Path(name)) if op == "foo")


def _cuda_only(source: bytes, name: str = "a.cu") -> bool:
    return "foo" in native_ops.cuda_only_ops([(name, source)]).get("ns", {})


def test_a_registration_in_digraph_braces_or_by_a_percent_colon_define_is_read():
    # cpp -E: `m.impl("foo", &foo_cpu)` in a CPU block; porter read no CPU kernel: "CUDA-only"
    braces = _CUDA_FOO + b'TORCH_LIBRARY_IMPL(ns, CPU, m) <% m.impl("foo", &foo_cpu); %>\n'
    assert _keys(braces) == ["CPU", "CUDA"]
    assert not _cuda_only(braces)
    define = b"%:define REG(op) m.impl(#op, torch::kCPU, &op)\n" + _CUDA_FOO + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n"
    assert _keys(define) == ["CPU", "CUDA"]
    # (a digraph in a string is no token: its bytes are kept)
    assert native_ops.registrations(b'TORCH_LIBRARY(ns, m) { m.impl("foo", torch::kCPU, &f); }  /* <% */\n')


def test_a_registering_macro_defined_in_a_branch_no_build_compiles_is_none():
    # cpp -E: `m.impl("foo", torch::kCUDA, &foo)`; porter took the `#else` one (CPU): not CUDA-only
    source = (
        b"#ifndef USE_ROCM\n#define REG(op) m.impl(#op, torch::kCUDA, &op)\n"
        b"#else\n#define REG(op) m.impl(#op, torch::kCPU, &op)\n#endif\n"
        b'TORCH_LIBRARY(ns, m) { m.def("foo(Tensor x) -> Tensor"); REG(foo); }\n'
    )
    assert _keys(source) == ["CUDA"]
    assert _cuda_only(source)


def test_a_macro_using_a_registering_macro_and_an_object_like_one_are_expanded():
    # cpp -E: both make `m.impl("foo", torch::kCPU, &foo)`; porter read neither: "CUDA-only"
    nested = (
        b"#define REG(op, key) m.impl(#op, key, &op)\n#define REG_CPU(op) REG(op, torch::kCPU)\n"
        + _CUDA_FOO
        + b"TORCH_LIBRARY(ns, m) { REG_CPU(foo); }\n"
    )
    assert _keys(nested) == ["CPU", "CUDA"]
    assert not _cuda_only(nested)
    plain = b'#define REG_FOO m.impl("foo", torch::kCPU, &foo)\n' + _CUDA_FOO + b"TORCH_LIBRARY(ns, m) { REG_FOO; }\n"
    assert _keys(plain) == ["CPU", "CUDA"]
    # a macro that uses itself is expanded once, as the preprocessor does (no endless expansion)
    itself = b"#define REG(op) m.impl(#op, torch::kCPU, &op); REG(op)\n" + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n"
    assert _keys(itself) == ["CPU"]


def test_a_macro_use_whose_arguments_span_an_ifdef_is_read_as_built():
    # cpp -E: `m.impl("foo", &foo)` in the CPU block; porter took `#else foo #endif` for the argument
    source = (
        b"#define REG(op) m.impl(#op, &op)\n"
        + _CUDA_FOO
        + b"TORCH_LIBRARY_IMPL(ns, CPU, m) {\n  REG(\n#ifdef USE_ROCM\n  bar\n#else\n  foo\n#endif\n  );\n}\n"
    )
    assert _keys(source) == ["CPU", "CUDA"]
    assert not _cuda_only(source)


def test_many_unclosed_uses_of_a_registering_macro_are_read_in_linear_time():
    # each use was scanned to the end for its `)`: 50,000 unclosed uses did not end in 5 minutes
    source = b"#define REG(op) m.impl(#op, &op)\nTORCH_LIBRARY(ns, m) {" + b"REG(" * 50_000 + b"}"
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(native_ops.registrations(source)), daemon=True)
    worker.start()
    worker.join(60)
    assert found == [[]]


def test_a_variadic_macro_and_a_use_split_by_a_backslash_newline_are_expanded():
    # cpp -E: `m.impl("foo", torch::kCPU, &foo)` both times; porter read no CPU kernel: "CUDA-only"
    variadic = (
        b"#define REG(...) m.impl(__VA_ARGS__)\n"
        + _CUDA_FOO
        + b'TORCH_LIBRARY(ns, m) { REG("foo", torch::kCPU, &foo); }\n'
    )
    assert _keys(variadic) == ["CPU", "CUDA"]
    assert not _cuda_only(variadic)
    one_more = (
        b"#define REG(op, ...) m.impl(#op, __VA_ARGS__)\n" + b"TORCH_LIBRARY(ns, m) { REG(foo, torch::kCPU, &foo); }\n"
    )
    assert _keys(one_more) == ["CPU"]
    spliced = (
        b"#define REG(op) m.impl(#op, torch::kCPU, &op)\n" + _CUDA_FOO + b"TORCH_LIBRARY(ns, m) { REG(\\\nfoo); }\n"
    )
    assert _keys(spliced) == ["CPU", "CUDA"]


def test_a_use_before_the_macro_is_defined_is_not_expanded():
    # cpp -E leaves `REG(foo);` as written (no registration): porter read a CPU kernel, and the op
    # registered for CUDA only was not said to be
    source = _CUDA_FOO + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n#define REG(op) m.impl(#op, torch::kCPU, &op)\n"
    assert _keys(source) == ["CUDA"]
    assert _cuda_only(source)
    # (defined before the block, it is expanded)
    before = b"#define REG(op) m.impl(#op, torch::kCPU, &op)\n" + _CUDA_FOO + b"TORCH_LIBRARY(ns, m) { REG(foo); }\n"
    assert _keys(before) == ["CPU", "CUDA"]
