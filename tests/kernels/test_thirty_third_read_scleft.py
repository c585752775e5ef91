"""The thirty-third read's helper on the scaffold leftovers (scleft, issue 24): each test failed on 6d9b5ff1,
with what 50-scaffold, 50-scaf2, 50-sleft, 50-pyops2 and 50-ilint left in the registration reader and the kernel
listing."""

from __future__ import annotations


import pytest

from porter.analysis import cuda_only_index, native_ops, python_ops
from porter.kernels.inventory import scan
from porter.pipeline import statindex
from tests.helpers import write_files
from tests.kernels.test_thirty_second_read_ilint import _codes
from tests.safety.test_twenty_ninth_read_cache import REGISTERS
from tests.test_guards_project_ops import BACKEND, CUSTOM_OPS

# `cpp -P -x c++ -I csrc/ops csrc/ops/mla_cpu.cpp` gives `TORCH_LIBRARY_IMPL(_C, CPU, m) { m.impl(...); }`
CPU_LIB = b"#pragma once\n#define CPU_LIB TORCH_LIBRARY_IMPL(_C, CPU, m)\n"
NO_LIB = b"#pragma once\n#define CPU_LIB static void cpu_lib(torch::Library& m)\n"  # (the same size, no block)
MLA_CPU = b'#include "cpu_lib.h"\nCPU_LIB { m.impl("mla_decode", &mla_decode_cpu); }\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose backend uses `_C::mla_decode`, with a CUDA kernel in mla.cu (keys.h: CUDA) and a CPU one
    in mla_cpu.cpp, a file that spells no `TORCH_LIBRARY`: its block is cpu_lib.h's macro."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    root = tmp_path / "p"
    files = {"csrc/ops/mla.cu": REGISTERS, "csrc/ops/keys.h": "#define DEVICE_KEY CUDA\n", "pkg/__init__.py": ""}
    write_files(root, {**files, "pkg/_custom_ops.py": CUSTOM_OPS, "pkg/backend.py": BACKEND})
    (root / "csrc/ops/cpu_lib.h").write_bytes(CPU_LIB)
    (root / "csrc/ops/mla_cpu.cpp").write_bytes(MLA_CPU)
    monkeypatch.chdir(root)
    return root


def test_a_file_whose_only_block_a_header_s_macro_opens_is_read(project):
    # 50-sleft's leftover (regfuzz3 seeds 1081194, 1081266): `registers` looked for `TORCH_LIBRARY` in the file
    # itself, so mla_cpu.cpp was passed over by lint and `porter kernels`: `mla_decode` said CUDA-only (GUARD004)
    # where the build registers a CPU kernel
    assert [name for name, _ in native_ops.read(["csrc/ops/mla.cu", "csrc/ops/mla_cpu.cpp"])] == [
        "csrc/ops/mla.cu",
        "csrc/ops/mla_cpu.cpp",
    ]
    assert {(r.path, r.op, r.key) for r in scan(project).registered} >= {
        ("csrc/ops/mla.cu", "mla_decode", "CUDA"),
        ("csrc/ops/mla_cpu.cpp", "mla_decode", "CPU"),
    }
    assert "GUARD004" not in _codes(None)
    (project / "csrc/ops/cpu_lib.h").write_bytes(NO_LIB)  # (the control: no CPU block, the op CUDA-only)
    assert "GUARD004" in _codes(None)


def test_a_header_edited_to_open_a_block_is_read_on_a_warm_run(project, tmp_path):
    # the stat index kept mla_cpu.cpp as "registers nothing" with no header to look at: cpu_lib.h edited (the same
    # size) to open the CPU block must change the warm run's finding
    (project / "csrc/ops/cpu_lib.h").write_bytes(NO_LIB)
    cache = tmp_path / "cache"
    assert "GUARD004" in _codes(cache)
    assert "GUARD004" in _codes(cache)  # (the stat index's records answer)
    (project / "csrc/ops/cpu_lib.h").write_bytes(CPU_LIB.ljust(len(NO_LIB)))
    assert "GUARD004" not in _codes(cache)


POINTER = b"""TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); m.impl("d", &d_cuda);
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  torch::Library* p = &m;
  p->impl("a", &a_cpu);
  auto* const q = &m;
  q->impl("b", &b_cpu).impl("c", &c_cpu);
}
"""


def test_a_pointer_to_a_block_s_library_registers_with_it():
    # 50-scaf2's leftover: `torch::Library* p = &m; p->impl("a", &a_cpu);` was neither read nor said, so `a`, `b`
    # and `c` were said CUDA-only; libclang 18.1.1 (`clang_reach.py`) has the CPU block reach "a" and "b" (and "c",
    # chained on "b"'s call). `d`, a CUDA kernel only, is the control
    found = native_ops.registrations(POINTER)
    assert sorted(op for _, op, key in found if key == "CPU") == ["a", "b", "c"]
    assert set(native_ops.cuda_only_ops([("a.cpp", POINTER)])["myops"]) == {"d"}


def test_a_pointer_to_the_library_passed_on_is_said():
    # `reg(*p)` (libclang: the CPU block reaches "e" through it) was neither read nor said: `e` said CUDA-only; now
    # the call is unread, said, and no op of `myops` is taken for CUDA-only
    source = POINTER.replace(b"  auto* const q", b"  reg(*p);\n  auto* const q")
    source = b'void reg(torch::Library& lib) { lib.impl("e", &e_cpu); }\n' + source
    source = source.replace(b'm.impl("d", &d_cuda);', b'm.impl("d", &d_cuda); m.impl("e", &e_cuda);')
    _, unread = native_ops.registrations_and_unread(source)
    assert [(ns, key, fn) for ns, key, fn, _, _ in unread] == [("myops", "CPU", "reg")]
    assert native_ops.cuda_only_ops([("a.cpp", source)]) == {}


SCHEMA_MACRO = b"""#define SCHEMA(n) #n "(Tensor x) -> Tensor"
#define NAME ("b")
TORCH_LIBRARY(myops, m) {
  m.def(SCHEMA(a), &a_any);
  m.def(SCHEMA(c));
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(NAME, &b_cpu); }
"""


def test_a_registration_whose_op_a_function_like_macro_names_is_said(tmp_path):
    # 50-scaf2's leftover: `cpp -P -x c++` gives `m.def("a" "(Tensor x) -> Tensor", &a_any)` (a kernel every device
    # runs) and `m.impl(("b"), &b_cpu)`; porter read no op of either, unsaid, and said `a` and `b` CUDA-only. Now
    # each is unread, said by `porter kernels`, and no op of `myops` is taken for CUDA-only. `m.def(SCHEMA(c))`, a
    # schema alone, gives no kernel: not said
    _, unread = native_ops.registrations_and_unread(SCHEMA_MACRO)
    assert [(ns, key, fn, own) for ns, key, fn, _, own in unread] == [
        ("myops", "any", "m.def(SCHEMA(a), &a_any)", None),
        ("myops", "CPU", "m.impl(NAME, &b_cpu)", None),
    ]
    assert native_ops.cuda_only_ops([("a.cpp", SCHEMA_MACRO)]) == {}
    (tmp_path / "a.cpp").write_bytes(SCHEMA_MACRO)
    notes = [p for p in scan(tmp_path).problems if "whose op porter cannot read" in p]
    assert [n.split(": the ")[0] for n in notes] == ["a.cpp:3", "a.cpp:8"]
    assert "registers `m.def(SCHEMA(a), &a_any)`" in notes[0]


def test_a_header_s_undef_takes_its_macro_away(tmp_path):
    # 50-sleft's leftover: of ops.h's `#define DEVICE_KEY CPU` / `#undef DEVICE_KEY` / `#define DEVICE_KEY CUDA` (and
    # the same of `CPU_LIB`) the first was read; `cpp -P -x c++` gives two CUDA blocks, porter read `a` and `b` as
    # CPU kernels and said neither CUDA-only. `c`, a CPU kernel, is the control
    (tmp_path / "ops.h").write_bytes(
        b"#pragma once\n#define DEVICE_KEY CPU\n#undef DEVICE_KEY\n#define DEVICE_KEY CUDA\n"
        b"#define CPU_LIB TORCH_LIBRARY_IMPL(myops, CPU, m)\n#undef CPU_LIB\n"
        b"#define CPU_LIB TORCH_LIBRARY_IMPL(myops, CUDA, m)\n"
    )
    source = (
        b'#include "ops.h"\nTORCH_LIBRARY_IMPL(myops, DEVICE_KEY, m) { m.impl("a", &a_cuda); }\n'
        b'CPU_LIB { m.impl("b", &b_cuda); }\nTORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("c", &c_cpu); }\n'
    )
    (tmp_path / "a.cpp").write_bytes(source)
    assert sorted(native_ops.registrations(source, tmp_path / "a.cpp", tmp_path)) == [
        ("myops", "a", "CUDA"),
        ("myops", "b", "CUDA"),
        ("myops", "c", "CPU"),
    ]


LIBRARY_MODULE = b"""import torch

lib = torch.library.Library("myops", "FRAGMENT")


@torch.library.custom_op("myops::d", mutates_args=(), device_types="cuda")
def d(x: torch.Tensor) -> torch.Tensor:
    return x.clone()
"""
CPU_MODULE = b"""from ._lib import lib as L
from . import _lib
from ._lib import d

L.impl("a", lambda x: x + 2, "CPU")
_lib.lib.impl("c", lambda x: x + 3, "CPU")


@d.register_kernel("cpu")
def _(x):
    return x + 4
"""
ONLY_CUDA = (
    b'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("a", &a_cuda); m.impl("b", &b_cuda); m.impl("c", &c_cuda); }\n'
)


def test_kernels_registered_through_another_module_s_library_or_custom_op_are_read():
    # 50-scaffold's and 50-pyops2's leftover: a `Library` made in pkg/_lib.py and a custom op made there, given their
    # kernels in pkg/cpu.py (`from ._lib import lib as L`, `from . import _lib`, `from ._lib import d`), were read as
    # no kernel: `a`, `c` and `d` said CUDA-only. torch 2.9 (the same modules imported, docs/reads/51-scleft-tools/
    # py_oracle.py) runs `a`, `c` and `d` on a CPU tensor and raises NotImplementedError for `b` (the control)
    files = [("pkg/__init__.py", b""), ("pkg/_lib.py", LIBRARY_MODULE), ("pkg/cpu.py", CPU_MODULE)]
    kernels = python_ops.registered_kernels(files)
    assert sorted((f, op, key) for f, _, op, key in kernels if f == "pkg/cpu.py") == [
        ("pkg/cpu.py", "a", "CPU"),
        ("pkg/cpu.py", "c", "CPU"),
        ("pkg/cpu.py", "d", "cpu"),
    ]
    assert set(native_ops.cuda_only_ops([("csrc/ops.cu", ONLY_CUDA)], kernels)["myops"]) == {"b"}
    more = ("pkg/more.py", b'import pkg._lib as L\nL.lib.impl("e", lambda x: x, "CPU")\n')  # (a plain `import`)
    assert ("pkg/more.py", "myops", "e", "CPU") in python_ops.registered_kernels([*files, more])
    # (a file that never spells "library" is still what the cache's key of the facts hashes whole)
    assert cuda_only_index.part(CPU_MODULE) != cuda_only_index.part(CPU_MODULE.replace(b'"CPU"', b'"CUDA"'))


def test_porter_kernels_lists_the_kernels_python_files_register(tmp_path):
    # 50-scaffold's leftover: the `registered op` table was the C++ reader's only, so `a`, `c` and `d`, given CPU
    # kernels in pkg/cpu.py, were listed with their CUDA kernels alone; a custom op's own function (`"default"`)
    # runs on every device
    write_files(tmp_path, {"csrc/ops.cu": ONLY_CUDA.decode(), "pkg/__init__.py": ""})
    (tmp_path / "pkg/_lib.py").write_bytes(LIBRARY_MODULE.replace(b', device_types="cuda"', b""))
    (tmp_path / "pkg/cpu.py").write_bytes(CPU_MODULE)
    registered = {(r.path, r.name, r.device) for r in scan(tmp_path).registered}
    assert {("pkg/cpu.py", "myops::a", "CPU"), ("pkg/cpu.py", "myops::c", "CPU")} < registered
    assert ("pkg/_lib.py", "myops::d", "any device") in registered


COMPREHENSION = (
    "import os\nfrom setuptools import setup\nhere = os.path.dirname(os.path.abspath(__file__))\n"
    'setup(ext_modules=[CUDAExtension("x", ["csrc/ops/mla.cu"], '
    'include_dirs=[os.path.join(here, d) for d in ("third_party", "csrc/include")])])\n'
)


def test_include_dirs_given_by_a_list_comprehension_are_read(tmp_path, monkeypatch):
    # 50-pyops2's leftover: `include_dirs=[os.path.join(here, d) for d in (...)]` gave no folder, so keys.h (found by
    # the compiler in csrc/include only) was "not read" and the op not CUDA-only: DEV002 where GUARD004 is due. The
    # comprehension's items are read as the list's; `if` filters one out (`[.. for d in DIRS if d]`) are none
    from tests.kernels.test_thirty_second_read_ilint import _codes as ilint_codes, keys_project

    project = keys_project(tmp_path, monkeypatch)
    (project / "setup.py").write_text(COMPREHENSION)
    assert ("mla_decode", "CUDA") in {(r.op, r.key) for r in scan(project).registered}
    assert "GUARD004" in ilint_codes(None)
    (project / "setup.py").write_text(COMPREHENSION.replace('"csrc/include")]', '"csrc/include") if d]'))
    assert "GUARD004" not in ilint_codes(None)
