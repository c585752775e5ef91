"""CUDA-only code stays CUDA-only; strings that are not devices stay as they are (issue 11)."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port

TARGETS = ["neuron", "tpu", "xla"]

TRITON_HEAD = """
import torch
import triton


@triton.jit
def _kernel(x_ptr, n):
    pass


def _launch(x):
    _kernel[(1,)](x, x.numel())
    return x
"""


def _port(body: str, target: str, **kw):
    return port(textwrap.dedent(body).lstrip("\n"), target, **kw)


def _codes(findings):
    return [f.code for f in findings]


@pytest.mark.parametrize("target", TARGETS)
def test_early_exit_guard_before_triton_stays_cuda(target):
    src = (
        TRITON_HEAD
        + """

def f(x):
    if not x.is_cuda:
        return x + 1
    return _launch(x)
"""
    )
    new, findings = _port(src, target)
    assert "if not x.is_cuda:" in new
    guard = [f for f in findings if f.code == "GUARD001"]
    assert guard and "`_launch`" in guard[0].message and "triton" in guard[0].message
    assert "DEV004" not in _codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_guard_around_portable_code_is_ported(target):
    """Only the checks that protect CUDA-only code are kept: in the same Triton file, a
    check around plain PyTorch code is ported like any other."""
    src = (
        TRITON_HEAD
        + """

def g(x):
    if x.is_cuda:
        x = x * 2
    return x
"""
    )
    new, findings = _port(src, target)
    assert "x.is_cuda" not in new
    assert "GUARD001" not in _codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_capability_check_keeps_its_short_circuit(target):
    src = """
import torch


def fast():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)


def slow():
    return not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 8
"""
    new, findings = _port(src, target)
    assert new.count("torch.cuda.is_available()") == 2
    assert _codes(findings).count("GUARD001") == 2


def test_plain_availability_check_is_still_ported():
    new, findings = _port(
        """
import torch
ok = torch.cuda.is_available() and torch.cuda.device_count() > 1
""",
        "neuron",
    )
    assert "torch.accelerator.is_available()" in new
    assert "GUARD001" not in _codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_cuda_extension_guard_in_an_if_stays_cuda(target):
    new, findings = _port(
        """
import torch
from torch.utils.cpp_extension import load

ext = load(name="e", sources=["e.cpp", "e.cu"])


def h(x):
    if x.device.type == "cuda":
        y = ext.forward(x)
    else:
        y = x * 2
    return y
""",
        target,
    )
    assert 'x.device.type == "cuda"' in new
    assert "GUARD001" in _codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_triton_custom_op_registration_stays_cuda(target):
    src = (
        TRITON_HEAD
        + """

@torch.library.custom_op("ns::op", mutates_args=(), device_types="cuda")
def op(x: torch.Tensor) -> torch.Tensor:
    return _launch(x)


op2 = torch.library.custom_op("ns::op2", mutates_args=(), device_types=("cuda",))(_launch)


@torch.library.custom_op("ns::plain", mutates_args=(), device_types="cuda")
def plain(x: torch.Tensor) -> torch.Tensor:
    return x.sin()
"""
    )
    new, findings = _port(src, target)
    assert 'device_types="cuda")\ndef op(' in new
    assert 'device_types=("cuda",))(_launch)' in new
    assert f'"ns::plain", mutates_args=(), device_types="{target}"' in new
    assert _codes(findings).count("KERN005") == 2


def test_registration_of_a_kernel_method_stays_cuda():
    src = (
        TRITON_HEAD
        + """

@torch.library.custom_op("ns::op", mutates_args=())
def op(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@op.register_kernel("cuda")
def _(x):
    return _launch(x)
"""
    )
    new, findings = _port(src, "neuron")
    assert '@op.register_kernel("cuda")' in new
    assert "KERN005" in _codes(findings)


@pytest.mark.parametrize("target", TARGETS)
def test_strings_that_are_not_devices_stay(target):
    src = """
import torch
from accelerate.utils import RNGType

rng_types = [RNGType.CUDA]
states = {"cuda": 1, "cpu": 2}
states["cuda"] = 3
names = ("cpu", "gpu", "cuda")
key = f"{'cuda' if states else 'cpu'}_time_total"
print(prof.key_averages().table(sort_by="cuda"))
ok = args.accelerator in ("cuda", "mps")
mem = torch.cuda.get_device_properties("cuda").total_memory
"""
    new, findings = _port(src, target)
    body = textwrap.dedent(src).lstrip("\n")
    for line in body.splitlines()[3:10]:
        assert line in new, line
    assert 'get_device_properties("cuda")' in new  # stays torch.cuda, so its argument stays too


@pytest.mark.parametrize(
    "target,expect",
    [
        ("neuron", ['"neuron:{}".format(i)', '"neuron:%d" % i', 'startswith("neuron")']),
        ("tpu", ['device("tpu")', 'startswith("tpu")']),
        ("xla", ['device("xla")', 'startswith("xla")']),
    ],
)
def test_formatted_device_strings_are_ported(target, expect):
    new, findings = _port(
        """
import torch
a = torch.device("cuda:{}".format(i))
b = torch.device("cuda:%d" % i)
c = str(a).startswith("cuda:")
""",
        target,
    )
    for e in expect:
        assert e in new
    assert "cuda" not in new.split("\n", 1)[1]


@pytest.mark.parametrize("target", TARGETS)
def test_lightning_accelerator(target):
    src = """
import lightning as L
from lightning.fabric import Fabric
trainer = L.Trainer(accelerator="gpu", devices=1)
fabric = Fabric(accelerator="cuda")
"""
    new, findings = _port(src, target, unsafe=True)
    fw = [f for f in findings if f.code == "FW001"]
    assert len(fw) == 2
    if target == "xla":
        assert new.count('accelerator="tpu"') == 2
    else:
        assert new == textwrap.dedent(src).lstrip("\n")
        assert all(not f.applied and f.advice for f in fw)


@pytest.mark.parametrize("target", TARGETS)
def test_lightning_xla_mapping_is_unsafe_by_default(target):
    src = 'from lightning.pytorch import Trainer\nt = Trainer(accelerator="cuda")\n'
    new, findings = _port(src, target)
    assert new == src


@pytest.mark.parametrize("target", TARGETS)
def test_guards_idempotent(target):
    from pathlib import Path

    src = (Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "cuda_only.in.py").read_text()
    once, _ = port(src, target)
    twice, _ = port(once, target)
    assert twice == once


@pytest.mark.parametrize("target,expected", [("xla", 1), ("neuron", 0), ("tpu", 0)])
def test_framework_that_breaks_on_the_target_is_reported_once(target, expected):
    new, findings = _port(
        """
import torch
import ignite.distributed as idist
from ignite.engine import Engine
""",
        target,
    )
    fw = [f for f in findings if f.code == "FW002"]
    assert len(fw) == expected
    if fw:
        assert fw[0].start.line == 2 and "xrt_world_size" in fw[0].message and fw[0].advice


@pytest.mark.parametrize("target", TARGETS)
def test_bare_capability_check_gets_its_short_circuit(target):
    new, findings = _port(
        """
import torch
a = torch.cuda.get_device_capability()[0] >= 8
b = hopper or torch.cuda.get_device_properties(0).major >= 9
c = not torch.cuda.get_device_capability() >= (8, 9)
if torch.cuda.is_available():
    d = torch.cuda.get_device_capability() >= (8, 0)
e = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)
""",
        target,
    )
    assert "a = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8" in new
    assert "b = hopper or (torch.cuda.is_available() and torch.cuda.get_device_properties(0).major >= 9)" in new
    assert "c = not (torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9))" in new
    assert "    d = torch.cuda.get_device_capability() >= (8, 0)" in new
    assert "e = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)" in new
    assert [f.code for f in findings].count("GUARD002") == 3
    again, _ = port(new, target)
    assert again == new


def test_caller_device_name_reported_only_in_a_cuda_request_check():
    new, findings = _port(
        """
import torch


def define_device(device_name):
    if device_name == "cuda" and not torch.cuda.is_available():
        return "cpu"
    return device_name


def step(x, device_type):
    if device_type == "cuda":
        x = x * 2
    return x
""",
        "neuron",
    )
    fw = [f for f in findings if f.code == "FW003"]
    assert len(fw) == 1 and "`device_name`" in fw[0].message and fw[0].start.line == 5


def test_accelerator_option_default_stays_with_its_comparison():
    """An `--accelerator` option holds accelerator names: its default and the comparisons with
    it stay together (porting one without the other would break the script)."""
    src = """
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--accelerator", default="cuda", choices=["cpu", "cuda"])
parser.add_argument("--device", default="cuda")
args = parser.parse_args()
if args.accelerator == "cuda":
    x = torch.ones(1).to(args.device)
"""
    new, _ = _port(src, "neuron")
    assert 'add_argument("--accelerator", default="cuda", choices=["cpu", "cuda"])' in new
    assert 'if args.accelerator == "cuda":' in new
    assert 'add_argument("--device", default="neuron")' in new


@pytest.mark.parametrize("target", TARGETS)
def test_a_capability_query_behind_a_cuda_only_import_flag_needs_no_short_circuit(target):
    """composer's `te_installed and torch.cuda.get_device_capability() >= (8, 9)`: the flag is
    True only where Transformer Engine (CUDA-only) imports, so the query never runs off CUDA;
    a flag of another package still gets the short-circuit."""
    source = """
import torch

try:
    import transformer_engine.pytorch as te
    te_installed = True
except ImportError:
    te_installed = False

try:
    import numpy
    np_installed = True
except ImportError:
    np_installed = False

a = te_installed and torch.cuda.get_device_capability() >= (8, 9)
b = np_installed and torch.cuda.get_device_capability() >= (8, 9)
"""
    new, findings = _port(source, target)
    assert "a = te_installed and torch.cuda.get_device_capability() >= (8, 9)" in new
    assert "b = np_installed and torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)" in new
    assert [f.code for f in findings].count("GUARD002") == 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_capability_query_in_the_cuda_arm_of_a_conditional_expression_needs_no_short_circuit(target):
    """torchao's `is_sm_version`: `... if is_cuda else False`, where `is_cuda =
    torch.cuda.is_available() and torch.version.cuda`, asks only where CUDA is (as the body of
    `if is_cuda:` does); `False if not ok else <query>` too. A conditional expression over
    another test still gets the short-circuit."""
    source = """
import torch


def is_sm_version(major, minor):
    is_cuda = torch.cuda.is_available() and torch.version.cuda
    return torch.cuda.get_device_capability() == (major, minor) if is_cuda else False


def is_sm_older(major):
    ok = torch.cuda.is_available()
    return False if not ok else torch.cuda.get_device_capability()[0] < major


def is_sm_at_least(major):
    return torch.cuda.get_device_capability()[0] >= major if major else False
"""
    new, findings = _port(source, target)
    assert "    return torch.cuda.get_device_capability() == (major, minor) if is_cuda else False" in new
    assert "    return False if not ok else torch.cuda.get_device_capability()[0] < major" in new
    assert "return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= major if major" in new
    assert [f.code for f in findings].count("GUARD002") == 1
