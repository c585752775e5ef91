"""The twenty-fourth read's sleft leftovers, closed by its "sleft2" (issue 24): each failed on h9-sleft's tip."""

from __future__ import annotations

from porter.kernels.inventory import scan

K = "#pragma once\nG void k(float* x) { x[0] = 1; }\nvoid host(float* x) { }\n"


def _kernels_of(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return sorted((k.path, k.name, k.line) for k in scan(tmp_path, limit=None).kernels)


def test_a_macro_of_global_a_cu_defines_before_its_include_makes_a_kernel_header(tmp_path):
    """`#define G __global__` in a `.cu` before `#include "k.h"`: the compiler reads k.h's `G void k(`
    as a kernel (libclang: its CUDA attribute); k.h holds no `__global__` and was not read. The lines
    the compiler reads first decide: the `.cu`'s own, and a header's before the `#include`."""
    files = {
        "a.cu": '#define G __global__\n#include "k.h"\n#define V __global__ static void\n#include "sub/v.h"\n',
        "k.h": K,
        "sub/v.h": "#pragma once\nV v(float* x) { }\n",
    }
    assert _kernels_of(tmp_path, files) == [("k.h", "k", 2), ("sub/v.h", "v", 2)]
    for name, undone in [("u.h", "#undef G\n#define G\n"), ("w.h", "#undef G\n#define G __host__ __device__\n")]:
        (tmp_path / "a.cu").write_text(f'#define G __global__\n#include "{name}"\n#include "k.h"\n')
        (tmp_path / name).write_text("#pragma once\n" + undone)
        assert ("k.h", "k", 2) not in _kernels_of(tmp_path, {}), name  # libclang: no kernel


def test_the_trees_headers_without_global_are_read_once_for_its_macros(tmp_path, monkeypatch):
    """In a tree defining macros of `__global__` (cutlass's `CUTLASS_GLOBAL`), each header without
    `__global__` was read again for them, once per name it did not hold: three reads of `plain.h`
    for two names. The header using one is still a kernel header."""
    from pathlib import Path

    from porter.kernels import inventory

    files = {
        "g.h": "#pragma once\n#define G __global__\n#define H __global__ static\n",
        "k.h": "#pragma once\nG void k(float* x) { }\n",
        "plain.h": "#pragma once\ninline int twice(int v) { return 2 * v; }\n",
        "a.cu": '#include "g.h"\n#include "k.h"\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    reads: list[str] = []
    real_read = inventory.read_regular

    def counted(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(inventory, "read_regular", counted)
    found, names = inventory._cuda_files(tmp_path)[:2]
    assert sorted(p.name for p in found) == ["a.cu", "g.h", "k.h"] and names == {"G", "H"}
    assert sorted(reads) == sorted(files), reads
