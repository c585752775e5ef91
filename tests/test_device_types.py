"""`x == "cuda"` keyed on what `x` is (porter.analysis.device_types), not on its name.

In a device-generic project a comparison of a device type with `"cuda"` stays ("is this
CUDA?" asked of the device torch selected); a value proven to be no device (a GPU-platform
option) keeps its `"cuda"` in any project but is not treated as a device question.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from porter.analysis.device_types import DeviceTypes
from porter.analysis.kinds import TypeKind
from porter.analysis.index import ProjectIndex
from tests.flow.test_project_flow import port_tree, source_of, write
from tests.helpers import port
from tests.test_device_generic import TOOLS_UTILS

KIND = """
import torch
from tools import utils


def sync_if_cuda():
    kind = utils.device_type
    if kind == "cuda":
        return True
    return False
"""

PLATFORM = """
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device-type", choices=["cuda", "rocm"], default="cuda")
args = parser.parse_args()


def use_vendor_kernels():
    return args.device_type == "cuda" and torch.cuda.is_available()
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_device_type_under_another_name_stays(tmp_path, target):
    """`kind` holds `utils.device_type` (`_get_available_device_type() or "cuda"`): the same
    question as `device_type == "cuda"`, so it stays (it was rewritten by name before)."""
    write(tmp_path / "p", {"tools/utils.py": TOOLS_UTILS, "sync.py": KIND})
    out = port_tree(tmp_path / "p", target)
    assert out["sync.py"].new_source is None


def test_a_gpu_platform_option_named_device_type_is_no_device(tmp_path):
    """`args.device_type` with `choices=["cuda", "rocm"]` is a platform, not a device type:
    its "cuda" stays (not a device string), and the generic rule does not keep the CUDA
    availability test beside it (named `device_type`, it did before)."""
    write(tmp_path / "p", {"tools/utils.py": TOOLS_UTILS, "platform.py": PLATFORM})
    code = source_of(port_tree(tmp_path / "p", "neuron")["platform.py"])
    assert 'args.device_type == "cuda"' in code
    assert "torch.cuda.is_available()" not in code


def test_a_gpu_platform_option_keeps_its_cuda_in_any_project():
    new, _ = port(PLATFORM, "neuron")
    assert 'args.device_type == "cuda"' in new
    assert 'choices=["cuda", "rocm"], default="cuda"' in new


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_device_type_named_so_is_still_taken_at_its_word_where_the_index_cannot_tell(target):
    code = TOOLS_UTILS + textwrap.dedent("""

    def enabled(config):
        device_type = config.device_type
        return device_type == "cuda"
    """)
    new, _ = port(code, target)
    assert new == code


def test_verdicts():
    files = {
        "tools/utils.py": TOOLS_UTILS,
        "sync.py": KIND,
        "platform.py": PLATFORM,
        "lit.py": 'import torch\ndevice_type = "cuda" if torch.cuda.is_available() else "cpu"\nok = device_type == "cuda"\n',
        "auto.py": 'def pick(d="auto"):\n    if d == "auto":\n        d = "cpu"\n    return d == "cuda"\n',
    }
    index = ProjectIndex.build([(n, textwrap.dedent(t).encode()) for n, t in files.items()])
    types = DeviceTypes(index)

    def verdict(path: str, qual: str, text: str):
        scope = index.module(path).scopes[qual]
        found = types.kind(ast.parse(text, mode="eval").body, scope)
        return found[0] if found is not None else None

    assert verdict("sync.py", "sync_if_cuda", "kind") == TypeKind.DEVICE_TYPE
    assert verdict("tools/utils.py", "maybe_bind_numa", "device_type") is None  # no caller passes it
    assert verdict("platform.py", "use_vendor_kernels", "args.device_type") == TypeKind.NOT_DEVICE
    assert verdict("lit.py", "", "device_type") == TypeKind.CUDA_LITERAL  # ported with its test
    assert verdict("auto.py", "pick", "d") == TypeKind.DEVICE_TYPE  # "auto" on one path, "cpu" on another
    assert verdict("sync.py", "sync_if_cuda", "torch.accelerator.current_accelerator().type") == TypeKind.DEVICE_TYPE
    facts = index.facts("sync.py")
    assert ("sync_if_cuda", "<compared> kind", TypeKind.DEVICE_TYPE) in [f[:3] for f in facts]
