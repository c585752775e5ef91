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


WIDE = """import triton
import triton.language as tl


@triton.jit
def wide(a_ptr, b_ptr, c_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=m)
    c = tl.load(c_ptr + offs, mask=m)
    q = b / c
    tl.store(y_ptr + offs, (a * b) * c + tl.maximum(q, c) * b - tl.where(a > 0, -(a * b), c), mask=m)
"""

# an fp32 load and an fp16 and a bf16 one, which meet only where an fp32 value or a `/` is on one
# side, under Triton's interpreter, and the derived reference on the same tensors (or why it raised)
_WIDE_RUN = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import wide
from porter.kernels.triton_ref import translate
a = torch.linspace(-2.1, 3.3, 64)
b = torch.linspace(-0.1, 3.3, 64).to(torch.float16)
c = torch.linspace(-5.1, 0.7, 64).to(torch.bfloat16)
y, z = torch.zeros(64), torch.zeros(64)
wide.wide[(1,)](a, b, c, y, 64, BLOCK=64)
ns = {"torch": torch}
exec(translate(open(wide.__file__).read(), "wide").source(), ns)
try:
    ns["wide_reference"](a, b, c, z, 64)
    reference = z.tolist()
except NotImplementedError as exc:
    reference = str(exc)
print(json.dumps({"kernel": y.tolist(), "reference": reference}))
"""


def test_values_triton_computes_in_fp32_are_no_halves_where_they_meet_another(tmp_path):
    """`a.to(tl.float32) * b` (b fp16) is fp32 in Triton and torch, and so is `b / c` (a `/` of
    halves): each was still counted as fp16 or bf16 where it met a bf16 value, and the reference
    raised "fp16 and bf16 tensors meet" at every call. Under TRITON_INTERPRET=1 it now equals the
    kernel; an fp16 value meeting a bf16 one with no fp32 on a side still raises."""
    import torch

    from porter.kernels.triton_ref import translate
    from tests.deps import require
    from tests.helpers import run_interpreted

    require("triton")
    (tmp_path / "wide.py").write_text(WIDE)
    outs = run_interpreted(_WIDE_RUN, tmp_path)
    assert isinstance(outs["reference"], list), outs["reference"]
    torch.testing.assert_close(torch.tensor(outs["reference"]), torch.tensor(outs["kernel"]), rtol=0, atol=0)
    mixed = WIDE.replace("- tl.where(a > 0, -(a * b), c)", "- tl.where(a > 0, -b, c)")
    ns: dict = {"torch": torch}
    exec(translate(mixed, "wide").source(), ns)
    halves = (torch.ones(8, dtype=torch.float16), torch.ones(8, dtype=torch.bfloat16))
    try:
        ns["wide_reference"](torch.ones(8), *halves, torch.zeros(8), 8)
    except NotImplementedError as exc:
        assert "fp16 and bf16" in str(exc)
    else:
        raise AssertionError("fp16 and bf16 values meeting with no fp32 side were derived")


# Triton reached through the project's own modules, in files that never spell "triton" or its tokens
_TU = "import triton\nimport triton.language as tl\nfrom triton import jit as J\n"
_REACHED = {
    "pkg/__init__.py": "",
    "pkg/tu.py": _TU,
    "pkg/bare.py": "from .tu import J\n\n\n@J\ndef nothing(x_ptr, n):\n    pass\n",
    "pkg/chain.py": (
        "from pkg import tu\n\n\n@tu.triton.jit\ndef through_package(x_ptr, n):\n    pass\n\n\n"
        "def go(x):\n    through_package[(1,)](x, 1)\n"
    ),
    "pkg/helpers.py": "import triton\n\n\n@triton.jit\ndef gelu(x):\n    return x * 0.5\n",
    "pkg/act.py": (
        "import triton\nimport triton.language as tl\n\nfrom pkg import helpers\n\n\n@triton.jit\n"
        "def act(x_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, helpers.gelu(tl.load(x_ptr + offs)))\n\n\n"
        "def go(x):\n    act[(1,)](x, 1, BLOCK=8)\n"
    ),
}


def _kern002(root):
    from pathlib import Path

    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    results, _ = run([root], Settings(target="xla", want_source=False), jobs=1, cache=False)
    return sorted(
        (Path(r.path).relative_to(root).as_posix(), f.start.line)
        for r in results
        for f in r.findings
        if f.code == "KERN002"
    )


def test_triton_reached_through_the_projects_modules_is_listed_and_linted(tmp_path):
    """`from .tu import J` / `@J` in a file spelling no token of Triton (its byte gates: neither read
    it), and `from pkg import tu` / `@tu.triton.jit` (pkg's file binds no `tu`: the chain through the
    package's module was not followed): `porter kernels` lists each, lint reports each and the launch."""
    for name, text in _REACHED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    listed = {k.name: k for k in scan(tmp_path, limit=None).kernels}
    assert {"nothing", "through_package"} <= set(listed), sorted(listed)
    assert [c.line for c in listed["through_package"].calls] == [10]
    found = _kern002(tmp_path)
    assert {("pkg/bare.py", 5), ("pkg/chain.py", 5), ("pkg/chain.py", 10)} <= set(found), found


def test_a_triton_helper_called_through_its_module_is_a_helper_not_an_op(tmp_path):
    """`helpers.gelu(x)` in a kernel of another file: `gelu` was listed as a kernel of its own and
    scaffolded as an op no code runs (only a plain `gelu(x)` was read as a call); it is its caller's
    helper, as a plain call makes it. A kernel named like a helper but never called stays an op."""
    for name, text in _REACHED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    listed = {k.name: k for k in scan(tmp_path, limit=None).kernels}
    assert listed["gelu"].helper_of == ["act"] and "a helper of act" in listed["gelu"].detail
    (tmp_path / "pkg/act.py").write_text(_REACHED["pkg/act.py"].replace("helpers.gelu(", "other.gelu("))
    assert not {k.name: k for k in scan(tmp_path, limit=None).kernels}["gelu"].helper_of


def test_a_kernels_name_before_a_bracket_in_a_comment_or_string_admits_no_parse():
    """`# ops.scale [grid]` or `"ops.scale[g]"` in a file importing the project's kernel `ops.scale`
    admitted it to a parse that found nothing (the text test misfired); code (after a `#` in a
    string, in an f-string's braces, on a line a triple-quoted string may close) still admits it."""
    from porter.analysis.kinds import CudaOnlyKind, CudaOnlyTag
    from porter.analysis.prefilter import launches_imported

    flow = (
        (None, "ops.scale", CudaOnlyKind.IMPORTED, ("`scale`, in pkg/ops.py", CudaOnlyTag.RUNS, CudaOnlyTag.KERNEL)),
    )
    head = b"from pkg import ops\n\n"
    for text in (
        b"# ops.scale [grid](x)\n",
        b"x = 1  # ops.scale[g]\n",
        b"s = 'ops.scale [g]'\n",
        b'd = "it\\"s ops.scale[g]"\n',
    ):
        assert not launches_imported(flow, head + text), text
    for text in (
        b"ops.scale [g](x)\n",
        b'a = "#"; ops.scale[g](x)\n',
        b'f"{ops.scale[g](x)}"\n',
        b'"""doc\nops.scale[g](x)\n"""\n',
        b's = "a \\\n" ; ops.scale[g](x)\n',
        b"# c\rops.scale[g](x)\r",
    ):
        assert launches_imported(flow, head + text), text


def test_a_load_inline_whose_cuda_sources_are_built_at_run_time_says_they_are_not_read(tmp_path):
    """`cuda_sources=Path("k.cu").read_text()` or an f-string: its kernels are neither listed nor were
    they said (the entry read "load_inline" as for sources porter reads); a string is still read."""
    (tmp_path / "li.py").write_text(
        "from pathlib import Path\n\nfrom torch.utils.cpp_extension import load_inline\n\n"
        'KERNEL = "__global__ void k(float* x) { x[0] = 1; }"\n'
        'ext = load_inline("ext", cpp_sources="", cuda_sources=Path("k.cu").read_text(), functions=["run"])\n'
        'ext2 = load_inline("ext2", "", [f"{KERNEL}"], functions=["run2"])\n'
        'ext3 = load_inline("ext3", cpp_sources="", cuda_sources=KERNEL, functions=["run3"])\n'
    )
    details = {k.name: k.detail for k in scan(tmp_path, limit=None).kernels}
    assert (
        details["ext.run"] == "load_inline; its cuda_sources are a call, built at run time: their kernels are not read"
    )
    assert "are an f-string, built at run time: their kernels are not read" in details["ext2.run2"]
    assert details["ext3.run3"] == "load_inline" and "k" in details
