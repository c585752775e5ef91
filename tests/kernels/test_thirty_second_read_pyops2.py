"""The thirty-second read's second wave on the Python-op reader and the build's include folders (pyops2, issue 24):
each test failed on 7269850e.

torch 2.9 is the oracle (docs/reads/50-pyops2-tools/oracle.py.txt): each form below, registered for real beside a CUDA
kernel, runs on a CPU tensor (no NotImplementedError), so its op is not CUDA-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.analysis import native_ops, python_ops
from porter.config.settings import Settings
from porter.kernels.inventory import scan
from porter.pipeline.runner import run
from tests.helpers import write_files
from tests.kernels.test_thirty_second_read_ilint import SETUP, keys_project

CUDA_KERNELS = b"""#include <torch/library.h>
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("a", &a_cuda);
  m.impl("b", &b_cuda);
  m.impl("c", &c_cuda);
  m.impl("d", &d_cuda);
  m.impl("e", &e_cuda);
}
"""


def _cuda_only(python: bytes, cxx: bytes = CUDA_KERNELS) -> set[str]:
    kernels = python_ops.registered_kernels([("pkg/ops.py", python)])
    return set(native_ops.cuda_only_ops([("csrc/ops.cu", cxx)] if cxx else [], kernels).get("myops", {}))


CUSTOM_OP_KERNELS = b"""import torch


@torch.library.custom_op("myops::a", mutates_args=(), device_types="cuda")
def a(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@a.register_kernel("cpu")
def _(x):
    return x.clone()


@torch.library.custom_op("myops::b", mutates_args=(), device_types="cuda")
def b(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


torch.library.register_kernel(b, "cpu", lambda x: x.clone())


def _c(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


c = torch.library.custom_op("myops::c", _c, mutates_args=(), device_types="cuda")
c.register_kernel(("cpu",))(lambda x: x.clone())
torch.library.register_kernel(torch.ops.myops.d.default, "cpu", lambda x: x.clone())


@torch.library.custom_op("myops::e", mutates_args=(), device_types="cuda")
def e(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@e.register_kernel("cuda")
def _(x):
    return x.clone()
"""


def test_a_kernel_registered_on_a_custom_op_s_object_is_read():
    # `@a.register_kernel("cpu")` on a `custom_op`'s object, `torch.library.register_kernel(b, "cpu", fn)` and
    # `register_kernel(torch.ops.myops.d.default, ...)` give the op a CPU kernel (torch runs each on a CPU tensor): unread,
    # each op was said to have "a CUDA kernel only" (GUARD001 in lint; `e`'s second kernel is CUDA's: the control)
    assert _cuda_only(CUSTOM_OP_KERNELS) == {"e"}


ALIASES = b"""import torch
from torch.library import Library as Lib
from torch.library import impl as I
from torch.library import register_kernel as rk

I("myops::a", "cpu")(lambda x: x.clone())
rk("myops::b", "cpu")(lambda x: x.clone())
cpu_lib = Lib("myops", "IMPL", "CPU")
cpu_lib.impl("c", lambda x: x.clone())
I("myops::e", "cuda")(lambda x: x.clone())
"""


def test_torch_library_s_names_imported_under_another_name_are_read():
    # `from torch.library import impl as I` (and `register_kernel`, `Library` so): the CPU kernels were not read and
    # `a`, `b`, `c` were said CUDA-only (`d`, with no other kernel, and `e`, a CUDA one again: the controls)
    assert _cuda_only(ALIASES) == {"d", "e"}


ANNOTATED_LIBRARY = b"""import torch

cpu_lib: torch.library.Library = torch.library.Library("myops", "IMPL", "CPU")
cpu_lib.impl("a", lambda x: x.clone())
any_lib: torch.library.Library = torch.library.Library("myops", "FRAGMENT")
any_lib.impl("b", lambda x: x.clone(), "CompositeExplicitAutograd")
"""


def test_a_library_assigned_with_an_annotation_is_read():
    # `lib: Library = Library(...)` (an annotated assignment): its `impl`s were not read, `a` and `b` said CUDA-only
    assert _cuda_only(ANNOTATED_LIBRARY) == {"c", "d", "e"}


QUALIFIED_ON_LIBRARY = b"""import torch

lib = torch.library.Library("myq", "FRAGMENT")
lib.define("a(Tensor x) -> Tensor")
lib.impl("myq::a", lambda x: x.clone(), "CUDA")
lib.define("b(Tensor x) -> Tensor")
lib.impl("myq::b", lambda x: x.clone(), "CUDA")
lib.impl("myq::b", lambda x: x.clone(), "CPU")
"""


def test_a_library_s_impl_of_a_qualified_name_reads_its_key():
    # `lib.impl("myq::a", fn, "CUDA")`: the key was read from the function's place (an unread key, another device's), so
    # an op CUDA-only for torch (NotImplementedError on a CPU tensor) was not said so (`b`, with a CPU kernel: the control)
    kernels = python_ops.registered_kernels([("pkg/ops.py", QUALIFIED_ON_LIBRARY)])
    assert set(native_ops.cuda_only_ops([], kernels).get("myq", {})) == {"a"}


# (the `-I` folders of a build: a key header found only through them, as tests/kernels/test_thirty_second_read_ilint.py)
SETUP_HEAD = "import os\nfrom pathlib import Path\nhere = Path(__file__).parent\n"
INCLUDE_BUILDS = {
    "setup.py, lists added": {"setup.py": SETUP_HEAD + 'INC = [here / "csrc"] + [here / "csrc" / "include"]\n' + SETUP},
    "setup.py, a list starred": {
        "setup.py": SETUP_HEAD + 'BASE = [here / "csrc" / "include"]\n' + SETUP.replace("INC", '[*BASE, here / "pkg"]')
    },
    "setup.py, joinpath": {"setup.py": SETUP_HEAD + SETUP.replace("INC", '[here.joinpath("csrc", "include")]')},
    "setup.py, an f-string": {
        "setup.py": SETUP_HEAD + SETUP.replace("INC", '[f"{os.path.dirname(__file__)}/csrc/include"]')
    },
    "CMake $<BUILD_INTERFACE:...>": {
        "CMakeLists.txt": "target_include_directories(_C PUBLIC\n"
        "  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/csrc/include>\n  $<INSTALL_INTERFACE:include>)\n"
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    return keys_project(tmp_path, monkeypatch)


@pytest.mark.parametrize("build", INCLUDE_BUILDS.values(), ids=INCLUDE_BUILDS.keys())
def test_include_folders_given_by_more_forms_of_the_build_are_read(project, build):
    # a list of `+`, a starred list, `Path.joinpath`, an f-string (setup.py; setuptools passes each as `-I`) and CMake's
    # `$<BUILD_INTERFACE:dir>` (the folder of the target's own build): the folder was not read, the key "not read", the
    # op not CUDA-only, DEV002 on the backend where GUARD004 is due (`porter kernels` too listed the key "not read")
    write_files(project, build)
    assert ("mla_decode", "CUDA") in {(r.op, r.key) for r in scan(project).registered}
    results, _ = run([Path(".")], Settings(target="xla"), jobs=1, cache=False)
    assert "GUARD004" in next(sorted({f.code for f in r.findings}) for r in results if r.path == "pkg/backend.py")


def test_a_vendored_project_s_include_folder_is_not_the_outer_build_s(project):
    # a vendored project's `include_directories(include)` (a_vendor/, sorted before setup.py) gave its keys.h (CUDA) to
    # csrc/ops/mla.cu, which setup.py builds with `-Icsrc/include` alone (GCC's `cpp -P -Icsrc/include`: CPU): the op
    # was said CUDA-only, GUARD004 where DEV002 is due, and `porter kernels` listed its kernel as CUDA's
    write_files(
        project,
        {"csrc/include/keys.h": "#define DEVICE_KEY CPU\n", "setup.py": SETUP.replace("INC", '["csrc/include"]')},
    )
    write_files(project, {"a_vendor/CMakeLists.txt": "include_directories(include)\n"})
    write_files(project, {"a_vendor/include/keys.h": "#define DEVICE_KEY CUDA\n"})
    assert {(r.op, r.key) for r in scan(project).registered} == {("mla_decode", "CPU")}
    results, _ = run([Path(".")], Settings(target="xla"), jobs=1, cache=False)
    codes = next(sorted({f.code for f in r.findings}) for r in results if r.path == "pkg/backend.py")
    assert "GUARD004" not in codes and "DEV002" in codes
