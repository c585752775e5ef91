"""The twenty-fifth read's leftovers of the scaffold writers, second wave (issue 24, scaf2): each
test failed on 47d9d02."""

from __future__ import annotations


from tests.helpers import port_files

BUILD = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    'setup(ext_modules=[CUDAExtension("pkg._C", sources=["pkg/csrc/k.cu"])])\n'
)
USE = (
    "import torch\n{imp}\n\n\ndef fwd(x):\n    return {ext}.fused(x)\n\n\n"
    "def model(x):\n    if x.is_cuda:\n        return fwd(x)\n    return x + 1\n"
)


def test_a_dotted_extension_import_is_named_in_the_from_imports_form(tmp_path, monkeypatch):
    # `import pkg._C` then `pkg._C.fused(x)` said ``uses `fwd` (uses `pkg._C` (...))``, where
    # `from pkg import _C` says ``uses `fwd` → `_C` (...)``: the same chain, two forms
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.py").write_text(BUILD)
    (tmp_path / "pkg" / "csrc").mkdir(parents=True)
    (tmp_path / "pkg" / "csrc" / "k.cu").write_text("__global__ void k(float* x, int n) {}\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "control.py").write_text(USE.format(imp="from pkg import _C", ext="_C"))
    (tmp_path / "pkg" / "dotted.py").write_text(USE.format(imp="import pkg._C", ext="pkg._C"))
    ported = port_files(tmp_path, "xla")
    why = "(`pkg._C`: a CUDA extension built by `CUDAExtension` in setup.py:3 from pkg/csrc/k.cu)"
    for name, used in (("control", "_C"), ("dotted", "pkg._C")):
        (finding,) = ported[f"pkg/{name}.py"][1]
        assert finding.code == "GUARD001"
        assert f"keeps CUDA-only code (uses `fwd` → `{used}` {why}) away" in finding.message, finding.message
