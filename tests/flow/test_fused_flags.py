"""OPT001/OPT002 across the project: a fused-optimizer flag followed to where it is made.

Each project below is written here (not taken from a real program) so that one way a flag
travels is tried at a time: a parameter of a method called on an instance, a second module,
a `self` attribute, a return value, a name used for more than the flag.
"""

from __future__ import annotations

import pytest

from porter.analysis.kinds import FusedKind
from porter.analysis.index import ProjectIndex
from tests.flow.test_project_flow import port_tree, source_of, write
from tests.helpers import port

MODEL = """
import inspect
import torch


class GPT(torch.nn.Module):
    def configure_optimizers(self, lr, device_type):
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(self.parameters(), lr=lr, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer
"""

TRAIN = """
import torch
from model import GPT

device = "cuda" if torch.cuda.is_available() else "cpu"
device_type = "cuda" if "cuda" in device else "cpu"
model = GPT()
model.to(device)
optimizer = model.configure_optimizers(1e-3, device_type)
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", ["xla", "neuron", "tpu"])
def test_a_device_type_from_the_caller_keeps_the_test_as_it_is(tmp_path, target):
    """nanoGPT: the caller's `device_type` is ported, so `device_type == "cuda"` in another
    module is already False on the target; the minimal diff there is none at all."""
    write(tmp_path / "p", {"model.py": MODEL, "train.py": TRAIN})
    out = port_tree(tmp_path / "p", target)
    assert out["model.py"].new_source is None  # `== "cuda"` kept, `dict(fused=True)` kept
    (kept,) = [f for f in out["model.py"].findings if f.code == "OPT002"]
    assert not kept.applied and kept.severity.value == "info"
    assert "`fused_available and device_type == 'cuda'`, p/model.py:8" in kept.message
    train = source_of(out["train.py"])
    assert f'device_type = "{target}" if "{target}" in device else "cpu"' in train


def test_a_device_type_from_configuration_makes_the_flag_false(tmp_path):
    """`cfg.device_type` is configuration porter cannot read: it cannot prove the port makes it
    non-CUDA, so the flag is set False where it is made (and the print says so)."""
    write(
        tmp_path / "p",
        {"model.py": MODEL.replace("lr, device_type):", "lr, cfg):\n        device_type = cfg.device_type")},
    )
    code = source_of(port_tree(tmp_path / "p", "xla")["model.py"])
    assert "use_fused = False\n" in code
    assert "extra_args = dict(fused=True) if use_fused else dict()" in code  # not `dict(fused=False) if`
    assert 'print(f"using fused AdamW: {use_fused}")' in code


OPTIM = """
import logging
import torch

_LOG = logging.getLogger(__name__)


def make_optimizer(params, use_fused):
    _LOG.info("fused AdamW: %s", use_fused)
    return torch.optim.AdamW(params, lr=1e-3, fused=use_fused)


def create_optimizer(model, is_cuda):
    return make_optimizer(model.parameters(), use_fused=is_cuda)
"""

DRIVER = """
import torch
from optim import create_optimizer

model = torch.nn.Linear(2, 2)
optimizer = create_optimizer(model, torch.cuda.is_available())
"""


@pytest.mark.parametrize("target", ["xla", "neuron"])
def test_a_flag_passed_through_two_functions_and_a_module_is_cut_where_it_is_made(tmp_path, target):
    """nano-gpt's shape: `fused=use_fused` <- `use_fused=is_cuda` <- the driver's
    `torch.cuda.is_available()`, which the port would turn into the target's availability."""
    write(tmp_path / "p", {"optim.py": OPTIM, "driver.py": DRIVER})
    out = port_tree(tmp_path / "p", target)
    assert out["optim.py"].new_source is None  # `fused=use_fused` and the log stay
    driver = source_of(out["driver.py"])
    assert "optimizer = create_optimizer(model, False)\n" in driver
    assert "torch_xla" not in driver and "accelerator" not in driver  # no import left unused
    (cut,) = [f for f in out["driver.py"].findings if f.code == "OPT001"]
    assert cut.applied
    assert "`fused=use_fused`, p/optim.py:9 ← `is_cuda`" in cut.message
    assert "`torch.cuda.is_available()`, p/driver.py:5" in cut.message


def test_a_flag_held_in_an_attribute(tmp_path):
    write(
        tmp_path / "p",
        {
            "trainer.py": """
        import torch


        class Trainer:
            def __init__(self, model, fused):
                self.model = model
                self.fused = fused

            def optimizer(self):
                return torch.optim.AdamW(self.model.parameters(), fused=self.fused)
        """,
            "main.py": """
        import torch
        from trainer import Trainer

        trainer = Trainer(torch.nn.Linear(2, 2), fused=torch.cuda.is_available())
        """,
        },
    )
    out = port_tree(tmp_path / "p", "xla")
    assert out["trainer.py"].new_source is None
    assert "trainer = Trainer(torch.nn.Linear(2, 2), fused=False)" in source_of(out["main.py"])


def test_a_flag_that_is_a_return_value():
    new, findings = port(
        """
import torch


def fused_ok():
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


opt = torch.optim.AdamW(params, fused=fused_ok())
""",
        "xla",
    )
    assert "    return False\n" in new
    assert "opt = torch.optim.AdamW(params, fused=fused_ok())" in new
    assert any(f.code == "OPT001" and f.applied for f in findings)


def test_a_flag_that_is_also_the_device_choice_is_cut_at_the_optimizer():
    """`use_cuda` also picks the device: it is ported; only what reaches `fused=` is False."""
    new, _ = port(
        """
import torch


def make(params, fused):
    return torch.optim.AdamW(params, fused=fused)


use_cuda = torch.cuda.is_available()
device = "cuda" if use_cuda else "cpu"
opt = make(params, use_cuda)
extra = dict(fused=True) if use_cuda else dict()
""",
        "xla",
    )
    assert "use_cuda = xr.global_runtime_device_count() > 0" in new
    assert 'device = "xla" if use_cuda else "cpu"' in new
    assert "opt = make(params, False)" in new
    assert "extra = dict()\n" in new  # the gate folds: no `dict(fused=False) if use_cuda`


def test_a_literal_flag_in_a_name():
    new, _ = port("import torch\nuse_fused = True\nopt = torch.optim.AdamW(params, fused=use_fused)\n", "xla")
    assert new == "import torch\nuse_fused = False\nopt = torch.optim.AdamW(params, fused=use_fused)\n"


def test_the_index_says_where_each_cut_is():
    files = [
        ("optim.py", OPTIM.encode()),
        ("driver.py", DRIVER.encode()),
        ("model.py", MODEL.encode()),
        ("train.py", TRAIN.encode()),
    ]
    index = ProjectIndex.build(files)
    (driver,) = index.fused_flags("driver.py")
    assert driver[:3] == ("", "<fused> call create_optimizer(1) torch.cuda.is_available()", FusedKind.FALSE)
    assert not [f for f in index.fused_flags("optim.py") if f[2] != "fused-site"]
    (keep,) = [f for f in index.fused_flags("model.py") if f[2] == FusedKind.KEEP]
    assert keep[:2] == ("GPT.configure_optimizers", "<fused> keep 9 device_type == 'cuda'")  # by line
    assert index.facts("driver.py") == index.fused_flags("driver.py")  # no device site there


def test_second_run_changes_nothing(tmp_path):
    write(tmp_path / "p", {"optim.py": OPTIM, "driver.py": DRIVER})
    first = port_tree(tmp_path / "p", "xla")
    ported = tmp_path / "q"
    write(ported, {name: source_of(r) for name, r in first.items()})
    again = port_tree(ported, "xla")
    assert all(r.new_source is None for r in again.values()), [n for n, r in again.items() if r.new_source]


def test_a_parameter_no_project_code_passes_holds_its_callers_device():
    """model.py ported alone (and the fixture's idempotence check): `device_type` comes from
    the caller, who passes its own (ported) device; the test stays."""
    new, findings = port(MODEL, "xla")
    assert new == MODEL
    assert [f.code for f in findings if f.code.startswith("OPT")] == ["OPT002"]


def test_a_device_type_torch_selected_keeps_the_test():
    """`_get_available_device_type()` names the device torch found: on the target it is the
    target's, so `device_type == "cuda"` gating fusion stays as it is."""
    code = """import torch
from torch._utils import _get_available_device_type

device_type = _get_available_device_type() or "cuda"


def make(params):
    use_fused = device_type == "cuda"
    return torch.optim.AdamW(params, fused=use_fused)
"""
    new, findings = port(code, "neuron")
    assert new == code
    assert "OPT002" in [f.code for f in findings]


def test_only_the_comparison_that_makes_the_flag_is_kept():
    """The same `device_type == "cuda"` elsewhere in the function guards a CUDA device move:
    that one is ported as usual; only the flag's own comparison stays."""
    code = MODEL.replace(
        '        print(f"using fused AdamW: {use_fused}")\n',
        '        print(f"using fused AdamW: {use_fused}")\n'
        '        if device_type == "cuda":\n'
        '            self.to("cuda")\n',
    )
    new, _ = port(code, "xla")
    assert 'use_fused = fused_available and device_type == "cuda"' in new
    assert 'if device_type == "xla":' in new


def test_a_method_called_on_an_object_from_outside_the_project(tmp_path):
    """`raw_model` comes from outside (nano-gpt's CLI loads it): the one project class with a
    `configure_optimizers` whose parameters the call's keywords name is taken as the callee, so
    the flag is still cut where it is made, not at `fused=`."""
    write(
        tmp_path / "p",
        {
            "model.py": """
        import torch


        class GPT(torch.nn.Module):
            def configure_optimizers(self, lr, use_fused):
                print(f"using fused AdamW: {use_fused}")
                return torch.optim.AdamW(self.parameters(), lr=lr, fused=use_fused)
        """,
            "train.py": """
        import torch


        def create_optimizer(raw_model, is_cuda):
            return raw_model.configure_optimizers(lr=1e-3, use_fused=is_cuda)


        def main(load):
            return create_optimizer(load(), torch.cuda.is_available())
        """,
        },
    )
    out = port_tree(tmp_path / "p", "xla")
    assert out["model.py"].new_source is None
    assert "return create_optimizer(load(), False)" in source_of(out["train.py"])
