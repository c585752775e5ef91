"""The twenty-fifth read's scaffold leftovers, taken by the twenty-sixth read's sleft (issue 24): each
test failed on 0073c76."""

from __future__ import annotations

from porter.kernels.inventory import scan

DRIVER = (
    "#include <cuda.h>\n"
    'extern "C" __global__ void scale(float* x, int n) {}\n'
    'extern "C" __global__ void shift(float* x, int n) {}\n'
    "CUfunction lookup(CUmodule m, const char* name);\n"
    "void by_name(CUmodule m, float* x, int n, const char* which) {\n"
    "  CUfunction g = lookup(m, which);\n  void* args[] = {&x, &n};\n"
    "  cuLaunchKernel(g, 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n"
    "  cuLaunchKernel(table[n], 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n}\n"
    "void by_library(CUlibrary lib, float* x, int n) {\n"
    '  CUkernel k;\n  cuLibraryGetKernel(&k, lib, "shift");\n  void* args[] = {&x, &n};\n'
    "  cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, 0, args, 0);\n}\n"
)


def test_a_driver_launch_of_a_function_no_lookup_of_the_file_names_is_said(tmp_path):
    # `cuLaunchKernel(g, ...)` of a `CUfunction` looked up by another function (or a name built at run
    # time), and of `table[n]`, were no kernel's and said nowhere; `cuLibraryGetKernel(&k, lib, "shift")`
    # names its kernel as `cuModuleGetFunction` does, and was not read
    (tmp_path / "a.cu").write_text(DRIVER)
    inv = scan(tmp_path, limit=None)
    unnamed = (
        "a `CUfunction` no `cuModuleGetFunction` or `cuLibraryGetKernel` of this file names by a literal (looked "
        "up through another function or file, or by a name built at run time): the kernel it runs is not read"
    )
    assert inv.problems == [
        f"a.cu:8: `cuLaunchKernel` launches `g`, {unnamed}",
        f"a.cu:9: `cuLaunchKernel` launches `table[n]`, {unnamed}",
    ]
    said = {k.name: k.unresolved for k in inv.kernels}
    assert said["scale"] == []
    assert said["shift"] == [
        "launched through `cuLaunchKernel` (a `CUfunction` of a module loaded at run time) at a.cu:15, whose "
        "arguments (an array of their addresses) porter does not read"
    ]


OPS = """import triton


@triton.jit
def k_a(x, n):
    pass


@triton.jit
def k_b(x, n):
    pass


KERNELS = {"a": k_a, "b": k_b}
"""
MORE = """import triton


@triton.jit
def k_m(x, n):
    pass


@triton.jit
def k_n(x, n):
    pass
"""
USE = """import triton
from . import ops, more


@triton.jit
def k_c(x, n):
    pass


@triton.jit
def k_e(x, n):
    pass


class Runner:
    KERNELS = {"c": k_c}

    def __init__(self):
        self.extra = [k_e]

    def run(self, op, x, n, obj, name):
        ops.KERNELS[op][(1,)](x, n)
        self.KERNELS[op][(1,)](x, n)
        self.extra[0][(1,)](x, n)
        getattr(more, name)[(1,)](x, n)
        getattr(more, "k_n")[(1,)](x, n)
        obj.KERNELS[op][(1,)](x, n)
        getattr(obj, name)[(1,)](x, n)
        make_table()[op][(1,)](x, n)
"""


def test_a_container_reached_through_an_attribute_or_built_at_run_time_is_followed_or_said(tmp_path):
    # `ops.KERNELS[op][grid]` (a module's container), `self.KERNELS` (a class's), `getattr(more, name)[grid]`
    # (a module's kernel named at run time) and `getattr(more, "k_n")[grid]` were followed by nothing,
    # each kernel listed with no launch, unsaid; an object's container, or one a call returns, was not said
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text(OPS)
    (tmp_path / "pkg" / "more.py").write_text(MORE)
    (tmp_path / "pkg" / "use.py").write_text(USE)
    inv = scan(tmp_path, limit=None)
    said = {k.name: (k.unresolved, [c.line for c in k.calls]) for k in inv.kernels}
    tail = ", picked at run time: its arguments are not read as this kernel's"
    module = (
        "launched as `ops.KERNELS[...][...](...)` at pkg/use.py:22, one of the kernels `ops.KERNELS` (of pkg.ops) holds"
    )
    assert said["k_a"] == said["k_b"] == ([module + tail], [])
    own = "launched as `self.KERNELS[...][...](...)` at pkg/use.py:23, one of the kernels `self.KERNELS` holds"
    assert said["k_c"] == ([own + tail], [])
    kept = "launched as `self.extra[...][...](...)` at pkg/use.py:24, one of the kernels `self.extra` holds"
    assert said["k_e"] == ([kept + tail], [])
    named = (
        "launched as `getattr(more, ...)[...](...)` at pkg/use.py:25, a kernel of pkg.more named at run time: "
        "its arguments are not read as this kernel's"
    )
    assert said["k_m"] == ([named], [])
    assert said["k_n"] == ([named], [26])  # (`getattr(more, "k_n")`: `more.k_n`'s launch)
    unfollowed = (
        "launches a kernel picked at run time from an object porter does not follow (an instance's, a "
        "function's result, one built at run time): which kernels it may run is not read"
    )
    assert inv.problems == [
        f"pkg/use.py:27: `obj.KERNELS[...][...](...)` {unfollowed}",
        f"pkg/use.py:28: `getattr(obj, ...)[...](...)` {unfollowed}",
        f"pkg/use.py:29: `make_table(...)[...][...](...)` {unfollowed}",
    ]


TEMPLATES = (
    "template <typename T>\n__global__ void k(float* x, int n) {}\n"
    "template <>\n__global__ void k<double>(float* x, int n) {}\n"
    "template <typename T>\n__global__ void plain(T* x, int n) {}\n"
    "template <>\n__global__ void plain(float* x, int n) {}\n"
    "template <typename T>\n__global__ void d(T* x, int n) {}\n"
    "template <>\n__global__ void d<double>(double* x, int n) {}\n"
    "void run(float* f, double* dd, int n) {\n"
    "  k<float><<<1, 64>>>(f, n);\n  k<double><<<1, 64>>>(f, n);\n"
    "  plain<float><<<1, 64>>>(f, n);\n  plain<<<1, 64>>>(f, n);\n"
    "  d<<<1, 64>>>(dd, n);\n  d<double><<<1, 64>>>(dd, n);\n}\n"
)


def test_a_specialization_with_its_primary_s_parameters_and_a_deduced_launch_are_read_as_clang_reads_them(tmp_path):
    # libclang: line 14 runs line 2, 15 line 4, 16 and 17 line 8 (`plain<float>`), 18 and 19 line 12. `k<double>` of line 4 (its primary's parameters) was a twin of
    # line 2, both launches given to it; `plain(float* x)` was "an overload" and took neither launch,
    # which went to line 6; `d<double>`'s arguments were not read (`d` found in `void`), and `d<<<` of a
    # `double*` went to the primary
    (tmp_path / "t.cu").write_text(TEMPLATES)
    kernels = scan(tmp_path, limit=None).kernels
    assert [(k.name, k.line, k.detail, [c.line for c in k.calls]) for k in kernels] == [
        ("k", 2, "__global__", [14]),
        ("k", 4, "__global__; a specialization for <double> of line 2: the same parameters", [15]),
        ("plain", 6, "__global__", []),
        ("plain", 8, "__global__; a specialization of line 6: `float* x` for `T* x`", []),
        ("d", 10, "__global__", []),
        ("d", 12, "__global__; a specialization for <double> of line 10: `double* x` for `T* x`", [19]),
    ]
    tail = ": it may run this kernel or another of its 2 of this name, and its arguments are not read as this kernel's"
    spec = "where a `template <>` specialization deduces its template arguments (porter does not read them)"
    deduced = "whose template arguments are deduced from its arguments' types (porter does not read them)"
    plain = [f"launched at t.cu:16, {spec}{tail}", f"launched at t.cu:17, {deduced}{tail}"]
    assert kernels[2].unresolved == kernels[3].unresolved == plain
    assert kernels[4].unresolved == kernels[5].unresolved == [f"launched at t.cu:18, {deduced}{tail}"]


K_H = "#pragma once\nG void k(float* x) { x[0] = 1; }\n"
G_H = "#pragma once\n#define G __global__\n"


def test_a_cu_reaching_the_macro_and_its_user_through_other_headers_gives_its_prelude(tmp_path):
    # libclang: each tree's `G void k(` is a kernel; `#include "c.h"` (-> g.h) then `#include "m.h"`
    # (-> k.h), and `#include "m.h"` of an m.h including both, made none (the `.cu` spells neither name)
    for name, files in {
        "apart": {"a.cu": '#include "c.h"\n#include "m.h"\n', "c.h": '#include "g.h"\n', "m.h": '#include "k.h"\n'},
        "both": {"a.cu": '#include "m.h"\n', "m.h": '#pragma once\n#include "g.h"\n#include "k.h"\n'},
    }.items():
        for file, text in {**files, "g.h": G_H, "k.h": K_H}.items():
            (tmp_path / name / file).parent.mkdir(exist_ok=True)
            (tmp_path / name / file).write_text(text)
        assert [(k.path, k.name) for k in scan(tmp_path / name, limit=None).kernels] == [("k.h", "k")], name


def test_a_header_two_cu_files_include_after_differing_macros_says_so(tmp_path):
    # a.cu makes `G` empty before `#include "k.h"`, b.cu `__global__`: libclang compiles `k` as a kernel in
    # b.cu; k.h was read with a.cu's lines only (the first by name), its kernel not listed and not said
    (tmp_path / "a.cu").write_text('#define G __global__\n#undef G\n#define G\n#include "k.h"\n')
    (tmp_path / "b.cu").write_text('#define G __global__\n#include "k.h"\n')
    (tmp_path / "k.h").write_text(K_H)
    inv = scan(tmp_path, limit=None)
    assert inv.problems == [
        "k.h: included by a.cu and b.cu after differing macros of `__global__`: read as a.cu includes it; "
        "its kernels as b.cu compiles it are not read"
    ]
    (tmp_path / "a.cu").write_text('#define G __global__\n#include "k.h"\n')  # (the same lines: nothing to say)
    assert scan(tmp_path, limit=None).problems == []
