"""The thirty-fifth read's leftovers of real packages, closed (rpleft, the thirty-sixth read): a project's
own top-level `cuda.py` imported as `import cuda` was read as NVIDIA's cuda-python (KERN003 at the import,
GUARD004 keeping the module's `"cuda"`, GUARD003 keeping a function that calls it). Python's import finds
the file's folder first for a script, and the folder above its outermost package folder for a package's
module: there the project's file is the module, known from the project's files, not from a list."""

from __future__ import annotations

import pytest

from tests.helpers import lint_codes as _lint

SCRIPT = 'import torch\nimport cuda\n\nx = torch.ones(2, device="cuda")\ncuda.sync()\n'


@pytest.mark.parametrize("target", ["tpu", "xla"])
@pytest.mark.parametrize("own", ["cuda.py", "cuda/__init__.py"])
def test_a_projects_own_cuda_module_beside_the_script_is_not_cuda_python(tmp_path, own, target):
    found = _lint(tmp_path / "proj", {own: "def sync():\n    return 0\n", "train.py": SCRIPT}, target)
    assert found["train.py"] == ["DEV002"], found


def test_a_package_module_finds_the_own_module_above_its_package(tmp_path):
    """`pkg/model.py` (pkg holds an `__init__.py`) imports `cuda` from the folder above `pkg`; a
    function calling it is not CUDA's code (GUARD003) either."""
    files = {
        "cuda.py": "def sync():\n    return 0\n",
        "pkg/__init__.py": "",
        "pkg/model.py": "import torch\nimport cuda\n\n\ndef step():\n    cuda.sync()\n"
        '    return torch.ones(2, device="cuda")\n',
    }
    found = _lint(tmp_path / "proj", files)
    assert found["pkg/model.py"] == ["DEV002"], found


def test_without_an_own_module_cuda_is_cuda_python(tmp_path):
    """The control: no `cuda.py` in the project: `import cuda` is cuda-python (KERN003, GUARD004)."""
    found = _lint(tmp_path / "proj", {"train.py": SCRIPT})
    assert found["train.py"] == ["KERN003", "GUARD004"], found


def test_a_packages_own_module_does_not_shadow_an_absolute_import(tmp_path):
    """The control: `other/cupy.py` in a package is `other.cupy`; `import cupy` in `other/use.py`
    (a module of the package) is CuPy."""
    files = {
        "other/__init__.py": "",
        "other/cupy.py": "def zeros(n):\n    return n\n",
        "other/use.py": 'import torch\nimport cupy\n\nx = torch.ones(2, device="cuda")\ncupy.zeros(2)\n',
    }
    found = _lint(tmp_path / "proj", files)
    assert "KERN003" in found["other/use.py"] and "GUARD004" in found["other/use.py"], found


def test_the_own_module_removed_the_cached_lint_says_cuda_python_again(tmp_path, monkeypatch):
    """The cache: a warm run after `cuda.py` is removed does not keep the answer it depended on."""
    monkeypatch.setenv("PORTER_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    assert _lint(root, {"cuda.py": "def sync():\n    return 0\n", "train.py": SCRIPT}, cache=True)["train.py"] == [
        "DEV002"
    ]
    (root / "cuda.py").unlink()
    assert _lint(root, {}, cache=True)["train.py"] == ["KERN003", "GUARD004"]


def test_a_function_using_the_own_module_is_not_cuda_only_in_its_importer(tmp_path, monkeypatch):
    """The project-wide CUDA-only index: `step` (train.py) calls the project's `cuda.sync()`; `use.py` runs it
    under `torch.cuda.is_available()`, which GUARD001 kept on CUDA ("uses `step` (uses `cuda`)"). Ported now; the
    cached run after `cuda.py` is removed keeps it again (the index's key holds the own modules)."""
    monkeypatch.setenv("PORTER_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    files = {
        "cuda.py": "def sync():\n    return 0\n",
        "train.py": "import torch\nimport cuda\n\n\ndef step():\n    cuda.sync()\n    return torch.ones(2)\n",
        "use.py": "import torch\nfrom train import step\n\nif torch.cuda.is_available():\n    step()\n",
    }
    assert _lint(root, files, cache=True)["use.py"] == ["CUDA001"]
    (root / "cuda.py").unlink()
    assert _lint(root, {}, cache=True)["use.py"] == ["GUARD001"]


# lightning-thunder 0.2.6's executors/cudnn_layernormex.py, cut down: a cuDNN-frontend graph's workspace
CUDNN_FRONTEND = """import torch
import cudnn


def layer_norm(a):
    graph = cudnn.pygraph()
    workspace = torch.empty(graph.get_workspace_size(), device="cuda", dtype=torch.uint8)
    return graph, workspace
"""


@pytest.mark.parametrize("target", ["tpu", "xla", "neuron"])
def test_cudnn_frontend_code_stays_cudas(tmp_path, target):
    """nvidia-cudnn-frontend 1.32.0 (`import cudnn`), read from its wheel: cudnn/frost/buffers.py loads
    libcuda.so.1, 14 of its Python files import triton, it requires nvidia-cutlass-dsl. Its graph's workspace
    was moved to the target (`device="tpu"`); the function is CUDA's code now (GUARD003)."""
    found = _lint(tmp_path / "proj", {"fe.py": CUDNN_FRONTEND}, target)
    assert found["fe.py"] == ["GUARD003"], found


def test_torchs_cudnn_backend_is_not_the_frontend(tmp_path):
    """The control: `from torch.backends import cudnn` is torch's cuDNN switches, not the frontend."""
    text = (
        'import torch\nfrom torch.backends import cudnn\n\ncudnn.benchmark = True\nx = torch.ones(2, device="cuda")\n'
    )
    found = _lint(tmp_path / "proj", {"tb.py": text})
    assert "GUARD003" not in found["tb.py"] and "DEV002" in found["tb.py"], found


# lightning-thunder 0.2.6's executors/nvfuserex.py, cut down: nvFuser asked for only where CUDA is
NVFUSER_VERSION = """import torch


def nvfuser_version():
    if not torch.cuda.is_available():
        return None
    try:
        import nvfuser
    except ImportError:
        return None
    return nvfuser.version()
"""

NVFUSER_DEFINITION = """import torch
from nvfuser import FusionDefinition


def fuse(x):
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(t0)
    return fd.execute([x.to("cuda")])
"""


@pytest.mark.parametrize("target", ["tpu", "xla", "neuron"])
def test_nvfuser_is_cuda_only(tmp_path, target):
    """nvfuser-cu128-torch29 0.2.35.dev20260115, read from its wheel (cp312 only: written in documented.toml):
    its extensions link libtorch_cuda.so, libcudart.so.12, libnvrtc.so.12. The check that keeps thunder's
    nvFuser probe off other devices stays CUDA's (GUARD001), and code that runs a fusion is CUDA's (GUARD003)."""
    found = _lint(tmp_path / "proj", {"probe.py": NVFUSER_VERSION, "fuse.py": NVFUSER_DEFINITION}, target)
    assert found["probe.py"] == ["GUARD001"], found
    assert found["fuse.py"] == ["GUARD003"], found


# lightning-thunder 0.2.6's tests/test_cudnn_executor.py, cut down: the module is skipped without cuDNN's frontend
# (pytest's skip-if-missing call, spelled apart: tests/test_suite_isolation.py bans the call in this suite's own code)
SKIP_CALL = "importorskip"
IMPORTORSKIP = f"""import pytest
import torch

cudnn = pytest.{SKIP_CALL}("PKG")


def test_sdpa():
    query = torch.randn(2, 2, device="cuda")
    if cudnn.backend_version() <= 8902:
        pytest.skip("old")
    return query
"""


@pytest.mark.parametrize("package", ["cudnn", "cupy"])
@pytest.mark.parametrize("target", ["tpu", "xla"])
def test_a_module_skipped_without_a_cuda_only_package_keeps_its_cuda_device(tmp_path, target, package):
    """`cudnn = pytest.<the skip call>("cudnn")` at a module's top: the module does not run without the package,
    as with `import cudnn`; its `"cuda"` stays CUDA's (GUARD004) instead of becoming the target's."""
    found = _lint(tmp_path / "proj", {"test_fe.py": IMPORTORSKIP.replace("PKG", package)}, target)
    assert found["test_fe.py"] == ["GUARD004"], found


def test_a_module_skipped_without_a_portable_package_is_ported(tmp_path):
    """The control: `pytest.<the skip call>("numpy")` names no CUDA-only package: the device is ported."""
    found = _lint(tmp_path / "proj", {"test_np.py": IMPORTORSKIP.replace("PKG", "numpy")})
    assert found["test_np.py"] == ["DEV002"], found
