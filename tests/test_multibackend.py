"""A library with backends of its own ports for each target with every existing branch intact
and the target added or reported (fixtures/libraries/multibackend, issue 21)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from porter.backends.scaffold import scan, write_backend
from porter.config.settings import Settings
from porter.pipeline.runner import run
from tests.helpers import conformance, port_tree

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "fixtures" / "libraries" / "multibackend"
SRC = LIBRARY / "src"
TARGETS = ["neuron", "tpu", "xla"]


def _port(tmp_path: Path, target: str, src: Path = SRC) -> Path:
    return port_tree(src, tmp_path / f"port-{target}-{src.name}", target, "--no-cache")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", TARGETS)
def test_port_is_the_expected_one(tmp_path, target):
    ported = _files(_port(tmp_path, target))
    original = _files(SRC)
    expected = _files(LIBRARY / "expected" / target)
    changed = {rel: data for rel, data in ported.items() if data != original[rel]}
    assert changed == expected


@pytest.mark.parametrize("target", TARGETS)
def test_every_existing_branch_is_kept_byte_for_byte(tmp_path, target):
    """Each `if`/`elif` branch of the original (its test line and body) is in the port as it
    was; the CUDA backend class, the CUDA-only op and both tests are unchanged."""
    out = _port(tmp_path, target)
    for path in SRC.rglob("*.py"):
        source = path.read_text()
        ported = (out / path.relative_to(SRC)).read_text()
        lines = source.splitlines(keepends=True)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.If):
                branch = "".join(lines[node.test.lineno - 1 : node.body[-1].end_lineno]).strip()
                branch = branch.removeprefix("el")  # an `elif` is checked from its `if`
                assert branch in ported, f"{path.name}: a branch changed:\n{branch}"
    for same in (
        "mbproj/accelerator/cuda.py",
        "mbproj/ops/fused.py",
        "tests/test_fused.py",
        "mbproj/accelerator/xpu.py",
    ):
        assert (out / same).read_bytes() == (SRC / same).read_bytes(), same


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_target_added_where_the_switch_has_a_place_and_reported_elsewhere(tmp_path, target):
    results, _ = run([SRC], Settings(target=target), cache=False, jobs=1)
    findings = [f for r in results for f in r.findings]
    codes = {(f.code, Path(f.path).name) for f in findings}
    assert ("BACK001", "device.py") in codes and ("BACK001", "__init__.py") in codes  # fp16 tuple, supported list
    assert sum(f.code == "BACK002" and f.applied for f in findings) == 3  # detect(), default_device(), empty_cache()
    assert ("BACK003", "cuda.py") in codes and ("BACK004", "__init__.py") in codes  # the class, the registry: reported
    assert ("GUARD001", "fused.py") in codes and ("GUARD003", "test_fused.py") in codes  # the CUDA-only op and its test
    device = (SRC / "mbproj" / "device.py").read_text()
    ported = next(r for r in results if r.path.endswith("device.py")).new_source.decode()
    assert f'"{target}"' not in device and ported.count(f'"{target}"') >= 3


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_run_changes_nothing(tmp_path, target):
    once = _port(tmp_path, target)
    twice = port_tree(once, tmp_path / "twice", target, "--no-cache")
    assert _files(twice) == _files(once)


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_backend_scaffold_is_cuda_class_ported_with_real_target_apis(tmp_path, target):
    families = scan(SRC)
    assert [(f.cuda.name, f.base, sorted(c.name for c in f.others)) for f in families] == [
        ("CudaAccelerator", "Accelerator", ["CpuAccelerator", "XpuAccelerator"])
    ]
    out = write_backend(families[0], SRC, tmp_path, target)
    assert out is not None and out.name == f"{target}.py"
    text = out.read_text()
    ast.parse(text)
    assert f"class {target.capitalize()}Accelerator(Accelerator):" in text
    assert "torch.cuda.synchronize" not in text and f'name = "{target}"' in text
    assert "# porter[CUDA006]" in text  # the stream it could not port is marked, not dropped
    assert not conformance(text, target), "the scaffold names an API the target does not have"
    assert write_backend(families[0], SRC, tmp_path, target) is None  # never over an existing file


def test_no_target_class_is_scaffolded_where_one_exists(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SRC, src)
    (src / "mbproj" / "accelerator" / "neuron.py").write_text(
        "from .abstract import Accelerator\n\n\nclass NeuronAccelerator(Accelerator):\n    name = 'neuron'\n"
    )
    family = scan(src)[0]
    assert family.for_target("neuron") is not None and family.for_target("tpu") is None
    results, _ = run([src], Settings(target="neuron"), cache=False, jobs=1)
    back003 = [f for r in results for f in r.findings if f.code == "BACK003"]
    assert len(back003) == 1 and "`NeuronAccelerator`" in back003[0].message


# ColossalAI 0.5.0 colossalai/accelerator/cuda_accelerator.py: `__all__` names CUDA's class, the
# class's docstring describes CUDA's devices, and its generator methods each wrap one call
COLOSSAL_CUDA = '''
from typing import List

import torch

from .base_accelerator import BaseAccelerator

__all__ = ["CudaAccelerator"]


class CudaAccelerator(BaseAccelerator):
    """
    Accelerator class for Nvidia CUDA devices.
    """

    def __init__(self):
        super().__init__(name="cuda", communication_backend="nccl", is_synchronous=False)

    def get_rng_state(self, device="cuda") -> torch.Tensor:
        """
        Returns the random number generator state of the specified GPU as a ByteTensor.
        """
        return torch.cuda.get_rng_state(device)

    def get_rng_state_all(self) -> List[torch.Tensor]:
        return torch.cuda.get_rng_state_all()

    def set_rng_state(self, new_state: torch.ByteTensor, device: str = "cuda") -> None:
        torch.cuda.set_rng_state(new_state, device)

    def manual_seed(self, seed: int) -> None:
        torch.cuda.manual_seed(seed)
'''


def test_backend_scaffold_names_the_targets_class_and_ports_each_generator_method(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "base_accelerator.py").write_text("class BaseAccelerator:\n    pass\n")
    (src / "cuda_accelerator.py").write_text(COLOSSAL_CUDA)
    (src / "cpu_accelerator.py").write_text(
        "from .base_accelerator import BaseAccelerator\n\n\nclass CpuAccelerator(BaseAccelerator):\n    pass\n"
    )
    (family,) = scan(src)
    out = write_backend(family, src, tmp_path / "out", "neuron")
    assert out is not None
    text = out.read_text()
    tree = ast.parse(text)
    # what the module exports is the target's class; its docstring is no longer CUDA's
    assert '__all__ = ["NeuronAccelerator"]' in text, text
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert "CUDA" not in (ast.get_docstring(cls) or "") and "TorchNeuron" in (ast.get_docstring(cls) or ""), text
    # each generator method answers for the target's device; the one with no port is marked
    methods = {n.name: ast.get_source_segment(text, n) for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert "torch.neuron.get_rng_state(device)" in methods["get_rng_state"], text
    assert "torch.neuron.set_rng_state(new_state, device)" in methods["set_rng_state"], text
    assert "torch.cuda" not in methods["manual_seed"], text
    assert "# porter[CUDA004]" in text and "torch.cuda.get_rng_state_all()" in methods["get_rng_state_all"]
