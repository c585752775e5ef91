"""`.is_cuda` on an object of a project class that defines its own `is_cuda` is not a tensor's.

nano-gpt 0.1.0: `trainer.py` defines `WorkerState.is_cuda` (a property over a `device: str`),
`tool/train.py` reads `worker_state.is_cuda`. Rewritten as a tensor's, it became
`(worker_state.device.type == "xla")`, which raises on a str. Within one file porter already
knew; across files it now does too (a project-index fact), and says so.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.config.settings import Settings
from porter.pipeline.runner import run

STATE = """
from dataclasses import dataclass


@dataclass
class WorkerState:
    device: str

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")
"""

TOOL = """
from pkg.state import WorkerState


def describe(worker_state: WorkerState, x):
    return worker_state.is_cuda, x.is_cuda
"""


def _project(tmp_path: Path, with_state: bool) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    if with_state:
        (pkg / "state.py").write_text(textwrap.dedent(STATE))
    (pkg / "tool.py").write_text(textwrap.dedent(TOOL))
    return pkg


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_is_cuda_is_kept_and_reported_when_another_module_defines_its_own(tmp_path, target, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, with_state=True)
    results, _ = run([Path("pkg")], Settings(target=target), jobs=1, cache=False)
    tool = next(r for r in results if r.path.endswith("tool.py"))
    assert tool.new_source is None  # nothing rewritten: either `.is_cuda` may be the class's
    dev004 = [f for f in tool.findings if f.code == "DEV004"]
    assert len(dev004) == 2 and all(not f.applied for f in dev004)
    assert all("pkg/state.py` defines its own `is_cuda`" in f.message for f in dev004), [f.message for f in dev004]


def test_without_such_a_module_is_cuda_is_ported_as_a_tensors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, with_state=False)
    results, _ = run([Path("pkg")], Settings(target="xla"), jobs=1, cache=False)
    tool = next(r for r in results if r.path.endswith("tool.py"))
    assert tool.new_source is not None and b'(x.device.type == "xla")' in tool.new_source
