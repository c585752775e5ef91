"""The thirty-second read's helper on lint's include folders (issue 24): a registration key given by
a header that the compiler finds only through the build's `-I` folders (setup.py's `include_dirs=`,
CMake's `include_directories`), which `porter kernels` read and lint did not."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.kernels.inventory import scan
from porter.pipeline import statindex
from porter.pipeline.runner import run
from tests.helpers import write_files
from tests.safety.test_twenty_ninth_read_cache import REGISTERS
from tests.test_guards_project_ops import BACKEND, CUSTOM_OPS

# the op's CUDA kernel is registered under the key keys.h gives (twenty-ninth cache's `REGISTERS`), here in
# csrc/include/, a folder the build names as `-I` (the source is in csrc/ops/, so the header is not beside it)
SETUP = 'from setuptools import setup\nsetup(ext_modules=[CUDAExtension("x", ["csrc/ops/mla.cu"], include_dirs=INC)])\n'
BUILDS = {
    "setup.py include_dirs": {"setup.py": SETUP.replace("INC", '["csrc/include"]')},
    "setup.py, a variable of Path()s": {
        "setup.py": "from pathlib import Path\nhere = Path(__file__).parent\ninc = [here / 'csrc' / 'include']\n"
        + SETUP.replace("INC", "inc")
    },
    "CMake include_directories": {"CMakeLists.txt": "include_directories(csrc/include)\n"},
    "CMake target_include_directories": {
        "CMakeLists.txt": "target_include_directories(_C PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/csrc/include)\n"
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    return keys_project(tmp_path, monkeypatch)


def keys_project(tmp_path, monkeypatch):
    """A project whose backend uses an op with a CUDA kernel only, by the key csrc/include/keys.h
    gives (its sources named from the working folder); every stat index record trusted at once."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    root = tmp_path / "p"
    files = {"csrc/ops/mla.cu": REGISTERS, "pkg/__init__.py": "", "pkg/_custom_ops.py": CUSTOM_OPS}
    write_files(root, {**files, "pkg/backend.py": BACKEND, "csrc/include/keys.h": "#define DEVICE_KEY CUDA\n"})
    monkeypatch.chdir(root)
    return root


def _codes(cache: Path | None) -> list[str]:
    results, _ = run([Path(".")], Settings(target="xla"), jobs=1, cache=cache is not None, cache_dir=cache)
    return next((sorted({f.code for f in r.findings}) for r in results if r.path == "pkg/backend.py"), [])


@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
def test_a_key_header_found_through_the_build_s_include_folders_is_read_by_lint(project, build):
    """`porter kernels` read `DEVICE_KEY` through the build's `-I` folder (CUDA: the op CUDA-only),
    lint's registration reader passed no folders: the key "not read", the op not CUDA-only, DEV002 on
    the backend where GUARD004 is due, unsaid (twenty-ninth cache2 read's leftover)."""
    write_files(project, build)
    registered = {(r.op, r.key) for r in scan(project).registered}
    assert ("mla_decode", "CUDA") in registered  # (the kernels' view: the compiler's)
    assert "GUARD004" in _codes(None)


def test_without_the_build_s_folder_the_key_stays_unread(project):
    """The control: no build file names csrc/include, so the compiler does not find keys.h either."""
    assert "GUARD004" not in _codes(None)


def test_an_edit_of_a_header_found_through_an_include_folder_changes_what_lint_says(project, tmp_path):
    """The cache's key and the stat index's row must cover the header found through the `-I` folder:
    `#define DEVICE_KEY CUDA` edited to CPU (the same size) must change the warm run's finding."""
    write_files(project, BUILDS["setup.py include_dirs"])
    cache = tmp_path / "cache"
    assert "GUARD004" in _codes(cache)
    assert "GUARD004" in _codes(cache)  # (the stat index's record of csrc/ops/mla.cu now answers)
    (project / "csrc/include/keys.h").write_text("#define DEVICE_KEY CPU \n")
    cold = _codes(None)
    assert "GUARD004" not in cold
    assert _codes(cache) == cold
    assert _codes(cache) == cold


def test_a_header_made_in_an_include_folder_after_a_run_is_read(project, tmp_path):
    """keys.h absent from csrc/include at the first run (the key not read); made there later, the
    warm run must read it as the cold run does (the stat index looked only beside the source)."""
    write_files(project, BUILDS["setup.py include_dirs"])
    (project / "csrc/include/keys.h").unlink()
    cache = tmp_path / "cache"
    assert "GUARD004" not in _codes(cache)
    assert _codes(cache) == _codes(None)
    (project / "csrc/include/keys.h").write_text("#define DEVICE_KEY CUDA\n")
    cold = _codes(None)
    assert "GUARD004" in cold
    assert _codes(cache) == cold


@pytest.mark.parametrize("build", ["CMake include_directories", "setup.py include_dirs"])
def test_a_build_file_that_names_the_folder_after_a_run_is_read(project, tmp_path, build):
    """No build file at the first run; one written later names csrc/include: the warm run must find
    keys.h there as the cold run does, though nothing of the source or its headers changed (the stat
    index's row keeps the folders: without them a CMakeLists.txt made later kept the warm DEV002)."""
    cache = tmp_path / "cache"
    assert "GUARD004" not in _codes(cache)
    assert "GUARD004" not in _codes(cache)
    write_files(project, BUILDS[build])
    cold = _codes(None)
    assert "GUARD004" in cold
    assert _codes(cache) == cold


def test_a_key_header_included_angled_through_an_include_folder_is_read(project):
    """`#include <keys.h>` names a header in the `-I` folders only (GCC's `cpp -I`: the key CUDA; the
    kernels' own include search reads it too): the registration reader took quoted includes alone, so
    `porter kernels` listed the key "not read" and lint said DEV002 (incfuzz, 18 of 60 trees)."""
    write_files(
        project, {**BUILDS["setup.py include_dirs"], "csrc/ops/mla.cu": REGISTERS.replace('"keys.h"', "<keys.h>")}
    )
    assert ("mla_decode", "CUDA") in {(r.op, r.key) for r in scan(project).registered}
    assert "GUARD004" in _codes(None)


def test_an_angled_include_is_not_looked_for_beside_the_source(project):
    """The control: `<keys.h>` beside the source and in no `-I` folder is not the compiler's header."""
    (project / "csrc/include/keys.h").rename(project / "csrc/ops/keys.h")
    write_files(
        project, {**BUILDS["setup.py include_dirs"], "csrc/ops/mla.cu": REGISTERS.replace('"keys.h"', "<keys.h>")}
    )
    assert "GUARD004" not in _codes(None)


def test_an_angled_header_made_in_an_include_folder_after_a_run_is_read(project, tmp_path):
    """`<keys.h>` absent at the first run, made in the `-I` folder later: the warm run reads it as the
    cold one does (its places were looked at: none were recorded for an include found nowhere)."""
    write_files(
        project, {**BUILDS["setup.py include_dirs"], "csrc/ops/mla.cu": REGISTERS.replace('"keys.h"', "<keys.h>")}
    )
    (project / "csrc/include/keys.h").unlink()
    cache = tmp_path / "cache"
    assert "GUARD004" not in _codes(cache)
    assert "GUARD004" not in _codes(cache)
    (project / "csrc/include/keys.h").write_text("#define DEVICE_KEY CUDA\n")
    cold = _codes(None)
    assert "GUARD004" in cold
    assert _codes(cache) == cold


def test_the_include_folders_are_those_of_the_source_s_own_project(tmp_path, monkeypatch):
    """Lint run above two projects: b's setup.py names b/include, which holds a keys.h; a's build names
    no folder, so a's compiler finds no keys.h and its key is not read (the control of reading the
    whole working folder's build files for every source)."""
    monkeypatch.chdir(tmp_path)
    files = {"a/csrc/ops/mla.cu": REGISTERS, "a/pkg/__init__.py": "", "a/pkg/_custom_ops.py": CUSTOM_OPS}
    write_files(tmp_path, {**files, "a/pkg/backend.py": BACKEND, "a/setup.py": SETUP.replace("INC", "[]")})
    write_files(
        tmp_path, {"b/setup.py": SETUP.replace("INC", '["include"]'), "b/include/keys.h": "#define DEVICE_KEY CUDA\n"}
    )
    results, _ = run([Path("a")], Settings(target="xla"), jobs=1, cache=False)
    assert "GUARD004" not in {f.code for r in results for f in r.findings}
    write_files(tmp_path, {"a/setup.py": SETUP.replace("INC", '["../b/include"]')})  # (now the compiler's)
    results, _ = run([Path("a")], Settings(target="xla"), jobs=1, cache=False)
    assert "GUARD004" in {f.code for r in results for f in r.findings}
