"""The twenty-ninth read of the cache and the state porter reads back (issue 24): inputs that
changed a result but not its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline import statindex
from porter.pipeline.runner import run
from tests.helpers import write_files
from tests.test_guards_project_ops import BACKEND, CUSTOM_OPS

# the op's CUDA kernel is registered under a key a project header gives (`native_ops.headers`)
REGISTERS = """#include "keys.h"
TORCH_LIBRARY(_C, m) {
  m.def("mla_decode(Tensor! out, Tensor q, Tensor workspace) -> ()");
  m.def("rms_norm(Tensor! out, Tensor x, float eps) -> ()");
  m.def("workspace_size(int batch) -> int");
}
TORCH_LIBRARY_IMPL(_C, DEVICE_KEY, m) {
  m.impl("mla_decode", &mla_decode);
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose backend uses an op with a CUDA kernel only, by the key `keys.h` gives
    (its sources named from the working folder); every stat index record trusted at once."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    root = tmp_path / "p"
    write_files(
        root,
        {"csrc/mla.cu": REGISTERS, "pkg/__init__.py": "", "pkg/_custom_ops.py": CUSTOM_OPS, "pkg/backend.py": BACKEND},
    )
    monkeypatch.chdir(root)
    return root


def _codes(cache: Path | None) -> dict[str, list[str]]:
    results, _ = run([Path(".")], Settings(target="xla"), jobs=1, cache=cache is not None, cache_dir=cache)
    return {r.path: [f.code for f in r.findings] for r in results if r.findings}


def test_an_edit_of_the_header_an_op_s_key_is_read_from_changes_what_lint_says(project, tmp_path):
    """`#define DEVICE_KEY CUDA` in csrc/keys.h made `_C::mla_decode` CUDA-only (GUARD004 on
    the workspace kept on "cuda"); edited to CPU, a cold run ports the device (DEV002), but the
    cache's key of the CUDA-only facts hashed csrc/mla.cu's bytes alone and the stat index
    vouched for it by its own `stat`: warm runs kept GUARD004 (twenty-ninth cache read)."""
    cache = tmp_path / "cache"
    (project / "csrc/keys.h").write_text("#define DEVICE_KEY CUDA\n")
    cuda = _codes(cache)
    assert "GUARD004" in cuda["pkg/backend.py"]
    assert _codes(cache) == cuda  # (the stat index's record of csrc/mla.cu now answers)
    (project / "csrc/keys.h").write_text("#define DEVICE_KEY CPU \n")  # (the same size)
    cold = _codes(None)
    assert "GUARD004" not in cold["pkg/backend.py"]
    assert _codes(cache) == cold
    assert _codes(cache) == cold


def test_a_header_made_after_the_run_that_looked_for_it_is_read(project, tmp_path):
    """Without csrc/keys.h the key is a macro no file defines (not read: the op is not taken for
    CUDA-only); once the header is made, the warm run must read it as the cold one does."""
    cache = tmp_path / "cache"
    before = _codes(cache)
    assert _codes(cache) == before
    assert "GUARD004" not in before.get("pkg/backend.py", [])
    (project / "csrc/keys.h").write_text("#define DEVICE_KEY CUDA\n")
    cold = _codes(None)
    assert "GUARD004" in cold["pkg/backend.py"]
    assert _codes(cache) == cold


def _said(root: Path, cache: Path | None) -> dict[str, list[tuple[str, str]]]:
    results, _ = run([root], Settings(target="xla"), jobs=1, cache=cache is not None, cache_dir=cache)
    return {Path(r.path).name: [(f.code, f.message) for f in r.findings] for r in results}


def test_a_file_made_beside_a_cached_cuda_txt_makes_it_one_of_a_family_per_device(tmp_path, monkeypatch):
    """requirements/cuda.txt alone is the project's requirements: its CUDA index and build are
    fixed. With rocm.txt and cpu.txt beside it, it is the CUDA backend's file of a family per
    device: reported, left as it is. The key hashed the file's bytes and name, and the stat index
    vouched by its `stat`: once the two were added, warm runs kept its fixes fixable (`--fix`
    rewrote the CUDA backend's file), and after they went, kept it left alone (twenty-ninth
    cache read)."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    root, cache = tmp_path / "p", tmp_path / "cache"
    cuda = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\n"
    write_files(root, {"requirements/cuda.txt": cuda})
    alone = _said(root, cache)
    assert _said(root, cache) == alone
    assert not any("family of files per device" in m for _, m in alone["cuda.txt"])
    write_files(root, {"requirements/rocm.txt": "torch\n", "requirements/cpu.txt": "torch\n"})
    family = _said(root, None)
    assert all("family of files per device" in m for c, m in family["cuda.txt"] if c in ("DEP001", "DEP002"))
    assert _said(root, cache) == family
    assert _said(root, cache) == family
    (root / "requirements/rocm.txt").unlink()
    (root / "requirements/cpu.txt").unlink()
    assert _said(root, cache) == alone
