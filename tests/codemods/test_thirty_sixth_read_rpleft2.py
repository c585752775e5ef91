"""rpleft's leftovers, closed (rpleft2, the thirty-sixth read's second wave): the project-wide CUDA-only
index's other readers knew nothing of a project's own top-level `cuda` module (rpleft's own-module fact).
A top-level `cuda/` package whose `__init__.py` imports `cuda.ops` (itself) was "the project's package of
`cuda` kernels", and `import cuda` beside the project's `cuda.py` was bound to a `kernels/cuda.py` whose
name ends the same: GUARD001 kept `torch.cuda.is_available()` on CUDA in both. CPython's import
(`importlib.util.find_spec` with the script's folder on `sys.path`) finds the project's own files there."""

from __future__ import annotations

import pytest

from tests.helpers import lint_codes as _lint

GUARDED = "\n\ndef step():\n    if torch.cuda.is_available():\n        sync()\n    return 1\n"


@pytest.mark.parametrize("target", ["tpu", "xla"])
def test_an_own_cuda_package_importing_itself_is_no_kernel_package(tmp_path, target):
    """`cuda/__init__.py` (top-level) imports `cuda.ops`: the package itself (find_spec('cuda.ops') is
    `cuda/ops.py`), not cuda-python's; `train.py`'s `sync` from it runs no CUDA-only code."""
    files = {
        "cuda/__init__.py": "from cuda.ops import sync\n",
        "cuda/ops.py": "import torch\n\n\ndef sync():\n    return torch.zeros(1)\n",
        "train.py": "import torch\nfrom cuda.ops import sync" + GUARDED,
    }
    found = _lint(tmp_path / "proj", files, target)
    assert found["train.py"] == ["CUDA001"], found


def test_a_kernel_package_of_a_cuda_only_package_still_is_one(tmp_path):
    """The control: `kern/triton/__init__.py` imports triton (no own `triton` module): its kernels are
    Triton's, and the guard around them stays (GUARD001)."""
    files = {
        "kern/__init__.py": "",
        "kern/triton/__init__.py": "import triton\n",
        "kern/triton/ops.py": "def sync():\n    return 0\n",
        "train.py": "import torch\nfrom kern.triton.ops import sync" + GUARDED,
    }
    found = _lint(tmp_path / "proj", files)
    assert found["train.py"] == ["GUARD001"], found


@pytest.mark.parametrize("target", ["tpu", "xla"])
def test_import_cuda_beside_the_own_cuda_py_is_not_a_package_module_of_that_name(tmp_path, target):
    """`kernels/cuda.py` (a package's module: `kernels.cuda`) uses CuPy; `train.py` beside the project's
    own `cuda.py` imports `cuda` (find_spec: `cuda.py`) and calls `cuda.sync()`: not CuPy's code."""
    files = {
        "kernels/__init__.py": "",
        "kernels/cuda.py": "import cupy\n\n\ndef sync():\n    return cupy.zeros(1)\n",
        "cuda.py": "def sync():\n    return 0\n",
        "train.py": "import torch\nimport cuda" + GUARDED.replace("sync()\n", "cuda.sync()\n"),
    }
    found = _lint(tmp_path / "proj", files, target)
    assert found["train.py"] == ["CUDA001"], found


def test_the_own_cuda_module_that_runs_cupy_keeps_its_guard(tmp_path):
    """The control: the own `cuda.py` itself uses CuPy: `cuda.sync()` runs CUDA-only code (GUARD001)."""
    files = {
        "cuda.py": "import cupy\n\n\ndef sync():\n    return cupy.zeros(1)\n",
        "train.py": "import torch\nimport cuda" + GUARDED.replace("sync()\n", "cuda.sync()\n"),
    }
    found = _lint(tmp_path / "proj", files)
    assert found["train.py"] == ["GUARD001"], found


# lightning-thunder 0.2.6's tests/test_transformer_engine_v1_executor.py, cut down: a bare skip-if-missing call
# (spelled apart: tests/test_suite_isolation.py bans the call in this suite's own code)
SKIP_CALL = "importorskip"
BARE_SKIP = f"""import pytest
import torch

pytest.{SKIP_CALL}(ARGS)


def test_linear():
    x = torch.randn(2, 2, device="cuda")
    return x
"""


@pytest.mark.parametrize(
    "args", ['"transformer_engine", reason="transformer_engine was not found"', 'modname="cupy"', '"cudnn"']
)
@pytest.mark.parametrize("target", ["tpu", "xla"])
def test_a_module_skipped_by_a_bare_call_without_a_cuda_only_package_keeps_its_cuda_device(tmp_path, target, args):
    """pytest: at a module's top the call skips the whole module where the package cannot be imported; bound
    to a name or not, the module's CUDA code runs only where the package is (GUARD004, as for `te = ...`)."""
    found = _lint(tmp_path / "proj", {"test_te.py": BARE_SKIP.replace("ARGS", args)}, target)
    assert found["test_te.py"] == ["GUARD004"], found


@pytest.mark.parametrize("args", ['"numpy"', '"numpy", minversion="1.0"'])
def test_a_bare_skip_of_a_portable_package_is_ported(tmp_path, args):
    """The controls: a bare call naming no CUDA-only package ports the device."""
    found = _lint(tmp_path / "proj", {"test_np.py": BARE_SKIP.replace("ARGS", args)})
    assert found["test_np.py"] == ["DEV002"], found


def test_a_bare_skip_inside_a_test_skips_that_test_only(tmp_path):
    """The control: the call in a function skips that test; the module's other code runs without the package."""
    source = BARE_SKIP.replace("pytest.%s(ARGS)\n" % SKIP_CALL, "").replace(
        "    return x\n", '    return x\n\n\ndef test_te():\n    pytest.%s("transformer_engine")\n' % SKIP_CALL
    )
    found = _lint(tmp_path / "proj", {"test_te.py": source})
    assert found["test_te.py"] == ["DEV002"], found


SCRIPT = 'import torch\nimport cuda\n\nx = torch.ones(2, device="cuda")\ncuda.sync()\n'


def _lint_alone(root, files, given, cache=False):
    """`porter lint <root>/<given>`: the one file given alone, the others only on the disk beside it."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    results = run([root / given], Settings(target="tpu"), jobs=1, cache=cache)[0]
    return [[f.code for f in r.findings] for r in results]


@pytest.mark.parametrize(
    "own, given",
    [("cuda.py", "train.py"), ("cuda/__init__.py", "train.py"), ("cuda.py", "pkg/model.py")],
)
def test_a_file_given_alone_finds_the_own_cuda_module_python_finds(tmp_path, own, given):
    """`python train.py` puts train.py's folder first on `sys.path` (pkg/model.py: the folder above `pkg`,
    which holds an `__init__.py`): `import cuda` is the project's file there (find_spec), alone or not."""
    files = {own: "def sync():\n    return 0\n", "pkg/__init__.py": "", given: SCRIPT}
    assert _lint_alone(tmp_path / "proj", files, given) == [["DEV002"]]


def test_a_file_given_alone_with_cuda_py_elsewhere_imports_cuda_python(tmp_path):
    """The control: `other/cuda.py` is not on the script's path: `import cuda` is cuda-python."""
    files = {"other/cuda.py": "def sync():\n    return 0\n", "train.py": SCRIPT}
    assert _lint_alone(tmp_path / "proj", files, "train.py") == [["KERN003", "GUARD004"]]


def test_a_file_given_alone_warm_after_the_own_module_is_removed(tmp_path, monkeypatch):
    """The cache: the fact is read off the disk each run, so a warm run after `cuda.py` is removed says
    cuda-python again."""
    monkeypatch.setenv("PORTER_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    files = {"cuda.py": "def sync():\n    return 0\n", "train.py": SCRIPT}
    assert _lint_alone(root, files, "train.py", cache=True) == [["DEV002"]]
    (root / "cuda.py").unlink()
    assert _lint_alone(root, {}, "train.py", cache=True) == [["KERN003", "GUARD004"]]
