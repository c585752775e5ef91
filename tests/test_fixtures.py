"""Fixture pairs and projects, compared exactly per target, and idempotence on each."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from fixtures.regenerate import case_settings
from porter.pipeline.port import port_source
from porter.core.findings import FileStatus
from porter.config.settings import TARGETS, Settings
from porter.core.kinds import kind_of
from tests.helpers import conformance, port_tree

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "fixtures" / "cases").glob("*.in.py"))
PROJECTS = sorted(p for p in (ROOT / "fixtures" / "projects").iterdir() if (p / "src").is_dir())


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name[: -len(".in.py")])
def test_case(case: Path, target: str):
    name = case.name[: -len(".in.py")]
    settings = case_settings(name, target)
    source = case.read_bytes()
    expected = (case.parent / f"{name}.{target}.out.py").read_bytes()
    result = port_source(source, case.name, settings)
    assert (result.new_source or source) == expected
    assert not conformance(expected, target), "porter emitted what its own target-API lint rejects"
    again = port_source(expected, case.name, settings)
    assert again.new_source is None, "a second run changed the output"


def test_scoping_case_leaves_lookalikes_alone():
    out = (ROOT / "fixtures" / "cases" / "scoping.neuron.out.py").read_text()
    assert (
        "def uses_a_local(torch):\n    # a parameter named torch is not the module\n    torch.cuda.synchronize()" in out
    )
    assert "cuda = FakeBackend()\n    cuda.synchronize()" in out
    assert "return Wrapper().cuda()" in out  # the file defines its own cuda()
    result = port_source((ROOT / "fixtures/cases/scoping.in.py").read_bytes(), "scoping.py", Settings(target="neuron"))
    assert any(f.code == "DEV001" and not f.applied for f in result.findings)


def test_strings_that_merely_contain_cuda_survive():
    for target in TARGETS:
        out = (ROOT / "fixtures" / "cases" / f"strings.{target}.out.py").read_text()
        for kept in (
            '"runs/cuda_baseline"',
            '"cuda_kernel_v2"',
            '"moving to CUDA device %s"',
            '"cuda is fast"',
            'b"cuda"',
        ):
            assert kept in out, (target, kept)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_project_ports_exactly(project: Path, target: str, tmp_path: Path):
    """Run the CLI's rewrite (in-process) and compare the whole ported tree."""
    out = port_tree(project / "src", tmp_path / "ported", target)
    expected = project / "expected" / target
    cmp = filecmp.dircmp(expected, out, ignore=["__pycache__"])
    assert not cmp.left_only and not cmp.right_only
    mismatch = [f for f in cmp.common_files if (expected / f).read_bytes() != (out / f).read_bytes()]
    assert not mismatch
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        if kind_of(rel) is None:
            continue  # (a README: no file porter reads)
        again = port_source(path.read_bytes(), rel, Settings(target=target))
        assert again.status.value != "error", f"{rel}: {again.reason}"
        assert again.new_source is None, f"{rel}: not idempotent"
        if path.suffix == ".py":
            assert not conformance(path.read_bytes(), target), f"{path.name}: fails porter's own target-API lint"


def test_a_class_with_its_own_is_cuda_keeps_its_call_sites():
    """nano-gpt 0.1.0's trainer: `WorkerState.is_cuda` is a property over its device string;
    rewriting `worker_state.is_cuda` to `worker_state.device.type == ...` broke the port
    ('str' has no attribute 'type'). The property's body is ported where it is defined."""
    source = (
        b"class WorkerState:\n"
        b"    def __init__(self, device):\n"
        b"        self.device = device\n\n"
        b"    @property\n"
        b"    def is_cuda(self):\n"
        b'        return "cuda" in self.device\n\n\n'
        b"def step(worker_state, x):\n"
        b"    if worker_state.is_cuda:\n"
        b"        return x\n"
    )
    for target in TARGETS:
        result = port_source(source, "trainer.py", Settings(target=target))
        out = (result.new_source or source).decode()
        assert "if worker_state.is_cuda:" in out, target
        assert '"cuda" in self.device' not in out, target  # the definition itself is ported
        kept = [f for f in result.findings if f.code == "DEV004"]
        assert kept and not any(f.applied for f in kept), target


def test_an_assigned_is_cuda_attribute_is_not_a_tensors():
    """timm's loader assigns `self.is_cuda = ...`: rewriting the target to a comparison made a
    file that does not parse (an internal error, the whole file left unported)."""
    source = (
        b"import torch\n\n\n"
        b"class Loader:\n"
        b"    def __init__(self, device):\n"
        b'        self.is_cuda = torch.cuda.is_available() and device.type == "cuda"\n\n'
        b"    def go(self, x):\n"
        b"        return x if self.is_cuda else x.float()\n"
    )
    for target in TARGETS:
        result = port_source(source, "loader.py", Settings(target=target))
        assert result.status is not FileStatus.ERROR, (target, result.reason)
        out = (result.new_source or source).decode()
        assert "self.is_cuda = " in out and "if self.is_cuda else" in out, target
