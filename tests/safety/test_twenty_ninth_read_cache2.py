"""The twenty-ninth read of the cache keys, second wave (issue 24): the headers a source's op
registrations are read from (`native_ops.headers`), as the first wave keyed them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline import statindex
from porter.pipeline.runner import run
from tests.helpers import write_files
from tests.test_guards_project_ops import BACKEND, CUSTOM_OPS
from tests.safety.test_twenty_ninth_read_cache import REGISTERS


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The first wave's project (an op registered under the key `csrc/keys.h` gives), with a
    header outside it; every stat index record trusted at once."""
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    root = tmp_path / "p"
    write_files(
        root,
        {"csrc/mla.cu": REGISTERS, "pkg/__init__.py": "", "pkg/_custom_ops.py": CUSTOM_OPS, "pkg/backend.py": BACKEND},
    )
    (tmp_path / "outside.h").write_text("#define DEVICE_KEY CUDA\n")
    monkeypatch.chdir(root)
    return root


def _codes(cache: Path | None) -> dict[str, list[str]]:
    results, _ = run([Path(".")], Settings(target="xla"), jobs=1, cache=cache is not None, cache_dir=cache)
    return {r.path: [f.code for f in r.findings] for r in results if r.findings}


@pytest.mark.parametrize("how", ["copied in", "link re-pointed"])
def test_a_header_linked_out_of_the_tree_then_put_in_it_is_read(project, tmp_path, how):
    """csrc/keys.h a link out of the tree is not read (the key is a macro no file defines: the op
    is not taken for CUDA-only). Replaced by a copy of the file it linked to, or re-pointed at a
    header in the tree, a cold run reads it (GUARD004); the stat index had recorded no `stat` of
    the header it did not read, so it vouched for csrc/mla.cu and its old key: warm runs said
    nothing (twenty-ninth cache2 read)."""
    cache = tmp_path / "cache"
    keys = project / "csrc/keys.h"
    keys.symlink_to(tmp_path / "outside.h")
    before = _codes(cache)
    assert "GUARD004" not in before.get("pkg/backend.py", [])
    assert _codes(cache) == before  # (the stat index's record of csrc/mla.cu now answers)
    keys.unlink()
    if how == "copied in":
        keys.write_text("#define DEVICE_KEY CUDA\n")
    else:
        (project / "csrc/cuda_keys.h").write_text("#define DEVICE_KEY CUDA\n")
        os.symlink("cuda_keys.h", keys)
    cold = _codes(None)
    assert "GUARD004" in cold["pkg/backend.py"]
    assert _codes(cache) == cold


HIP_OR_CUDA = {
    "a branch no build compiles": '#ifdef USE_ROCM\n#include "hip_keys.h"\n#else\n#include "keys.h"\n#endif\n',
    "#if 0": '#if 0\n#include "hip_keys.h"\n#endif\n#include "keys.h"\n',
}


@pytest.mark.parametrize("include", HIP_OR_CUDA.values(), ids=HIP_OR_CUDA.keys())
def test_an_include_no_build_compiles_is_not_read(project, include):
    """`#ifdef USE_ROCM` / `#include "hip_keys.h"` / `#else` / `#include "keys.h"`: the default
    (CUDA) build reads keys.h's `#define DEVICE_KEY CUDA`, and the op is CUDA-only (GUARD004).
    The header reader took every `#include` line, in comments and unbuilt branches too, and the
    first definition won: hip_keys.h's HIP, and lint said nothing (twenty-ninth cache2 read)."""
    (project / "csrc/keys.h").write_text("#define DEVICE_KEY CUDA\n")
    (project / "csrc/hip_keys.h").write_text("#define DEVICE_KEY HIP\n")
    (project / "csrc/mla.cu").write_text(REGISTERS.replace('#include "keys.h"\n', include))
    assert "GUARD004" in _codes(None)["pkg/backend.py"]


def test_a_header_s_cuda_branches_are_decided_by_the_source_that_includes_it(project):
    """keys.h: `#ifndef __CUDACC__` / `#define DEVICE_KEY CPU` / `#else` / `#define DEVICE_KEY CUDA`.
    Included by csrc/mla.cu, nvcc compiles it with `__CUDACC__` defined: the op's key is CUDA, and it
    is CUDA-only (GUARD004). The header's branches were decided by its own suffix (`.h`: a host
    compiler's, `__CUDACC__` not decided), both were read, the first won: CPU, and lint said nothing
    (twenty-ninth cache2 read)."""
    (project / "csrc/keys.h").write_text(
        "#ifndef __CUDACC__\n#define DEVICE_KEY CPU\n#else\n#define DEVICE_KEY CUDA\n#endif\n"
    )
    assert "GUARD004" in _codes(None)["pkg/backend.py"]
