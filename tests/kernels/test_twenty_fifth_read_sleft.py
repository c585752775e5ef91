"""The twenty-fifth read's sleft: the scaffold leftovers of the twenty-fourth (issue 24); each failed on 5907f51."""

from __future__ import annotations

from porter.kernels.inventory import scan

G = "#pragma once\n#define G __global__\n"
K = "#pragma once\nG void k(float* x) { x[0] = 1; }\nvoid host(float* x) { }\n"


def _kernels_of(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return sorted((k.path, k.name, k.line) for k in scan(tmp_path, limit=None).kernels)


def test_a_macro_of_global_only_a_header_defines_reaches_a_later_header(tmp_path):
    """`#include "g.h"` (`#define G __global__`) then `#include "k.h"` (`G void k(`): libclang reads
    k as a kernel; k.h read alone did not see G, and only a `.cu` defining G gave a prelude. A header
    a header includes (`m.h` -> `sub/n.h`) got none either."""
    files = {
        "a.cu": '#include "g.h"\n#include "k.h"\n#include "m.h"\n',
        "g.h": G,
        "k.h": K,
        "m.h": '#pragma once\n#include "sub/n.h"\n',
        "sub/n.h": "#pragma once\nG void n(float* x) { }\n",
    }
    assert _kernels_of(tmp_path, files) == [("k.h", "k", 2), ("sub/n.h", "n", 2)]
    (tmp_path / "a.cu").write_text('#define G\n#include "u.h"\n#include "k.h"\n')  # cumacro m5: a header's
    (tmp_path / "u.h").write_text("#pragma once\n#undef G\n#define G __global__\n")  # define over the .cu's
    assert ("k.h", "k", 2) in _kernels_of(tmp_path, {})
    (tmp_path / "u.h").write_text("#pragma once\n#undef G\n#define G\n")  # and an undone one: no kernel
    (tmp_path / "a.cu").write_text('#include "g.h"\n#include "u.h"\n#include "k.h"\n')
    assert ("k.h", "k", 2) not in _kernels_of(tmp_path, {})
