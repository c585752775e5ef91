"""The project index: device values followed across modules, and the sites they reach."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from porter.analysis.kinds import ValueKind
from porter.analysis.program import chain_text
from porter.analysis.index import ProjectIndex
from porter.pipeline.runner import run
from porter.config.settings import Settings
from tests.helpers import port

# the DDP tutorial's single_gpu.py, split the way projects split it: no "cuda" anywhere
TRAINER = """
import torch


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id, save_every):
        self.gpu_id = gpu_id
        self.model = model.to(gpu_id)
        self.train_data = train_data

    def _run_epoch(self):
        for source, targets in self.train_data:
            source = source.to(self.gpu_id)
            targets = targets.to(self.gpu_id)
"""

MAIN = """
from trainer import Trainer


def main(device, total_epochs):
    trainer = Trainer(model, data, optimizer, device, 10)


if __name__ == "__main__":
    device = {device}
    main(device, 3)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # displayed paths (and chains) relative to it, as a user sees them


def port_tree(root: Path, target: str, **kw) -> dict[str, object]:
    results, _ = run(
        [root],
        Settings(target=target, ignore=kw.get("ignore", ())),
        jobs=1,
        cache=kw.get("cache", False),
        cache_dir=kw.get("cache_dir"),
    )
    return {Path(r.path).name: r for r in results}


def source_of(result) -> str:
    return (result.new_source or result.original_source).decode()


@pytest.mark.parametrize(
    "target,device",
    [("xla", "torch_xla.device()"), ("neuron", 'torch.device("neuron", self.gpu_id)'), ("tpu", '"tpu"')],
)
def test_an_int_device_is_followed_across_modules(tmp_path, target, device):
    write(tmp_path / "p", {"trainer.py": TRAINER, "main.py": MAIN.format(device=0)})
    out = port_tree(tmp_path / "p", target)
    code = source_of(out["trainer.py"])
    assert f"source = source.to({device})" in code
    assert "self.gpu_id)" not in code.replace(f"{device}", "")
    found = [f for f in out["trainer.py"].findings if f.code == "DEV008"]
    assert len(found) == 3 and all(f.applied for f in found)
    chain = "`self.gpu_id` ← `self.gpu_id = gpu_id` ← `Trainer(..., device, ...)` ← `main(device, ...)` ← `device = 0`, p/main.py:9"
    assert any(chain in f.message for f in found), [f.message for f in found]


def test_a_device_made_elsewhere_is_left_alone(tmp_path):
    write(tmp_path / "p", {"trainer.py": TRAINER, "main.py": MAIN.format(device='torch.device("cpu")')})
    out = port_tree(tmp_path / "p", "neuron")
    assert out["trainer.py"].new_source is None
    assert not [f for f in out["trainer.py"].findings if f.code.startswith("DEV")]


def test_an_unproven_chain_is_reported_with_the_chain(tmp_path):
    write(tmp_path / "p", {"trainer.py": TRAINER, "main.py": MAIN.format(device="pick_device()")})
    out = port_tree(tmp_path / "p", "xla")
    assert out["trainer.py"].new_source is None
    messages = [f.message for f in out["trainer.py"].findings if f.code == "DEV008"]
    assert len(messages) == 3 and not any(f.applied for f in out["trainer.py"].findings)
    assert (
        "porter cannot prove what `self.gpu_id` holds: `self.gpu_id` ← `self.gpu_id = gpu_id` ← "
        "`Trainer(..., device, ...)` ← `main(device, ...)` ← `device = pick_device()`, p/main.py:9 "
        "(a call porter cannot follow)"
    ) in messages[-1]


def test_the_cache_goes_stale_when_another_module_changes_what_flows_in(tmp_path):
    cache = tmp_path / "cache"
    project = tmp_path / "p"
    write(project, {"trainer.py": TRAINER, "main.py": MAIN.format(device=0)})
    first = port_tree(project, "xla", cache=True, cache_dir=cache)
    assert first["trainer.py"].new_source is not None
    write(project, {"main.py": MAIN.format(device='torch.device("cpu")')})  # trainer.py unchanged
    second = port_tree(project, "xla", cache=True, cache_dir=cache)
    assert second["trainer.py"].new_source is None
    third = port_tree(project, "xla", cache=True, cache_dir=cache)
    assert third["trainer.py"].new_source is None  # and the new answer is cached as such


def test_spawn_rank_argparse_and_environment():
    code = textwrap.dedent(
        """
        import argparse, os
        import torch.multiprocessing as mp

        def worker(rank, world_size, model):
            model.to(rank)

        def run(args, batch):
            local_rank = int(os.environ["LOCAL_RANK"])
            return batch.to(args.gpu), batch.to(local_rank), batch.to(args.lr)

        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu", type=int, default=0)
        parser.add_argument("--lr", type=float, default=0.1)
        mp.spawn(worker, args=(2, None), nprocs=2)
        """
    )
    new, findings = port(code, "xla")
    assert "model.to(torch_xla.device())" in new
    assert "batch.to(torch_xla.device()), batch.to(torch_xla.device()), batch.to(args.lr)" in new
    spawn = [f.message for f in findings if "`rank`" in f.message]
    assert spawn and "passes the process index" in spawn[0]


def test_configured_device_is_reported():
    new, findings = port("def train(cfg, model):\n    model.to(cfg.device)\n", "neuron")
    assert new == "def train(cfg, model):\n    model.to(cfg.device)\n"
    (f,) = [f for f in findings if f.code == "DEV010"]
    assert "`cfg.device` ← `cfg.device` (configuration porter cannot read)" in f.message


def test_map_location_whatever_carries_the_device():
    code = textwrap.dedent(
        """
        import torch

        def resume(path, device):
            cpu = "cpu"
            a = torch.load(path, map_location=device)
            b = torch.load(path, map_location=cpu)
            return a, b
        """
    )
    new, findings = port(code, "xla")
    assert 'a = torch.load(path, map_location="cpu")' in new
    assert "b = torch.load(path, map_location=cpu)" in new  # proven to be the CPU: left
    same, _ = port(code, "neuron")
    assert same == code  # device-generic on a native target: not churned


def test_cycles_and_recursion_do_not_hang():
    code = textwrap.dedent(
        """
        def f(x):
            return g(x)

        def g(y):
            return f(y)

        def h(gpu):
            gpu = gpu
            t.to(gpu)
            t.to(f(gpu))

        h(f(0))
        """
    )
    index = ProjectIndex.build([("m.py", code.encode())])
    facts = index.facts("m.py")
    assert all(kind != ValueKind.INDEX for _, _, kind, _ in facts)


def test_chain_text():
    assert chain_text("gpu_id", ("`main(device)`", "`device = 0`, single_gpu.py:12")) == (
        "`gpu_id` ← `main(device)` ← `device = 0`, single_gpu.py:12"
    )


GENERIC = """
import torch

def pick(args):
    if args.accel and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device(torch._utils._get_available_device_type() or "cpu")

ok = not torch.accelerator.is_available()
"""


def test_device_generic_selection_reaches_the_xla_device():
    new, findings = port(GENERIC, "xla")
    assert "if args.accel and xr.global_runtime_device_count() > 0:" in new
    assert "return torch_xla.device()" in new
    assert 'return torch.device("xla")' in new  # `... or "cpu"` folded: the type is never falsy
    assert "ok = not (xr.global_runtime_device_count() > 0)" in new
    assert "accelerator" not in new and "_get_available_device_type" not in new
    assert sum(f.code == "DEV012" and f.applied for f in findings) == 4


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_device_generic_code_is_not_churned_on_native_targets(target):
    new, findings = port(GENERIC, target)
    assert new == GENERIC
    assert not findings


def test_a_warm_run_takes_the_index_from_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    write(tmp_path / "p", {"trainer.py": TRAINER, "main.py": MAIN.format(device=0)})
    first = port_tree(tmp_path / "p", "xla", cache=True, cache_dir=cache)

    def no_parse(*args, **kwargs):
        raise AssertionError("a warm run parsed a file for the index")

    monkeypatch.setattr(ProjectIndex, "add", no_parse)
    second = port_tree(tmp_path / "p", "xla", cache=True, cache_dir=cache)
    assert second["trainer.py"].new_source == first["trainer.py"].new_source is not None


def test_parameters_taken_inside_the_class_before_the_move(tmp_path):
    write(
        tmp_path / "p",
        {
            "policy.py": """
                import torch
                from torch import nn

                class Policy(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.net = nn.Linear(4, 2)
                        self.optimizer = torch.optim.Adam(self.parameters(), lr=3e-4)
                """,
            "algo.py": """
                from policy import Policy

                def setup(device):
                    policy = Policy()
                    policy = policy.to(device)
                    return policy
                """,
        },
    )
    # by default XLA005 keeps the Parameter objects through the move: nothing left to report
    out = port_tree(tmp_path / "p", "xla")
    assert "set_swap_module_params_on_conversion(True)" in source_of(out["algo.py"])
    assert not [f for f in out["algo.py"].findings if f.code == "DEV013"]
    out = port_tree(tmp_path / "p", "xla", ignore=("XLA005",))
    (f,) = [f for f in out["algo.py"].findings if f.code == "DEV013"]
    assert f.message.startswith(
        "`torch.optim.Adam(self.parameters(), lr=0.0003)` in `Policy.__init__`, p/policy.py:8 took"
    )
    assert not port_tree(tmp_path / "p", "neuron")["algo.py"].findings


def test_tensor_devices_and_parameter_peeks_are_not_reported():
    code = textwrap.dedent(
        """
        import torch

        def step(model, x, opts):
            device = next(model.parameters()).device
            model.to(device)
            y = torch.zeros(3, device=x.device)
            return y.to(opts.device)
        """
    )
    new, findings = port(code, "xla")
    assert new == code
    assert [f.code for f in findings] == ["DEV010"]  # only the configured one: `opts.device`


def test_a_function_spawned_through_a_parameter_gets_the_process_index():
    code = textwrap.dedent(
        """
        import torch.multiprocessing as mp

        def demo_basic(rank, world_size):
            model.to(rank)

        def run_demo(demo_fn, world_size):
            mp.spawn(demo_fn, args=(world_size,), nprocs=world_size, join=True)

        run_demo(demo_basic, 2)
        """
    )
    new, findings = port(code, "neuron")
    assert 'model.to(torch.device("neuron", rank))' in new
    assert any("passes the process index" in f.message for f in findings if f.code == "DEV008")


def test_an_index_returned_in_a_tuple_and_a_cpu_fallback():
    code = textwrap.dedent(
        """
        import os

        def setup(args):
            if args.slurm:
                return (0, int(os.environ["SLURM_LOCALID"]), 1)
            return (0, 0, 1)

        def main(args, model, batch):
            rank, local_rank, world_size = setup(args)
            model.to(local_rank)
            device = local_rank if args.dist else "cpu"
            return batch.to(device)
        """
    )
    new, findings = port(code, "xla")
    assert "model.to(torch_xla.device())" in new and "batch.to(device)" in new
    (maybe,) = [f for f in findings if f.code == "DEV008" and not f.applied]
    assert "holds both an integer" in maybe.message and "and the CPU (`'cpu'`" in maybe.message


def test_a_tied_model_moved_with_cuda_is_retied_on_xla():
    code = textwrap.dedent(
        """
        from torch import nn

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(11, 8)
                self.head = nn.Linear(8, 11, bias=False)
                self.wte.weight = self.head.weight

        model = LM().cuda()
        """
    )
    # by default XLA005's switch keeps the tie, with no re-tie line beside it
    default, _ = port(code, "xla")
    assert "set_swap_module_params_on_conversion(True)" in default
    assert default.endswith("model = LM().to(torch_xla.device())\n")
    # with the switch turned off, DEV011 re-ties after the move
    new, findings = port(code, "xla", ignore=("XLA005",))
    assert new.endswith("model = LM().to(torch_xla.device())\nmodel.wte.weight = model.head.weight\n")
    again, _ = port(new, "xla", ignore=("XLA005",))
    assert again == new
    assert "model.wte.weight = model.head.weight\n" not in port(code, "neuron")[0]


# opacus' examples/cifar10.py: the device is the local rank on the CUDA path, "cpu" otherwise
RANK_OR_CPU = """
import os
import torch

def setup(args):
    if os.environ.get("SLURM_NTASKS") is not None:
        return (0, int(os.environ["SLURM_LOCALID"]), 2)
    return (0, 0, 1)

def train(model, loader, device):
    for images, target in loader:
        loss = model(images.to(device)).sum()
        print(f"loss {loss.item()} on {device}")

def main(args):
    if args.device != "cpu":
        rank, local_rank, world_size = setup(args)
        device = local_rank
    else:
        device = "cpu"
    model = torch.nn.Linear(2, 2).to(device)
    train(model, [], device=device)
{extra}"""


@pytest.mark.parametrize(
    "target,device", [("xla", "torch_xla.device()"), ("neuron", 'torch.device("neuron", local_rank)'), ("tpu", '"tpu"')]
)
def test_an_index_on_one_path_and_the_cpu_on_the_other_is_ported_where_it_is_made(target, device):
    new, findings = port(RANK_OR_CPU.replace("{extra}", ""), target)
    assert f'        device = {device}\n    else:\n        device = "cpu"\n' in new
    assert ".to(device)" in new and "images.to(device)" in new  # the sites hold a device now
    dev = [f for f in findings if f.code == "DEV008"]
    assert len(dev) == 1 and dev[0].applied
    assert "`device` is used only as a device and is `'cpu'` on its other path" in dev[0].message
    assert "`device = local_rank`" in dev[0].message


def test_an_index_or_cpu_used_as_a_number_is_not_ported():
    assert "device = torch_xla.device()" in port(RANK_OR_CPU.replace("{extra}", ""), "xla")[0]  # the contrast
    new, findings = port(RANK_OR_CPU.replace("{extra}", "    print(device + 1)\n"), "xla")
    assert "device = local_rank" in new and "torch_xla.device()" not in new
    dev = [f for f in findings if f.code == "DEV008"]
    assert dev and not any(f.applied for f in dev)
    assert all("holds both an integer" in f.message and "and the CPU" in f.message for f in dev)


def test_an_index_or_cpu_handed_to_another_module_is_ported_where_it_is_assigned(tmp_path):
    write(
        tmp_path / "p",
        {
            "loop.py": "def train(model, batch, device):\n    return model(batch.to(device))\n",
            "main.py": (
                "import os\nfrom loop import train\n\n\ndef main(args, model, batch):\n"
                "    if args.distributed:\n        device = int(os.environ['LOCAL_RANK'])\n    else:\n        device = 'cpu'\n"
                "    return train(model, batch, device)\n"
            ),
        },
    )
    out = port_tree(tmp_path / "p", "xla")
    assert "        device = torch_xla.device()\n    else:\n        device = 'cpu'\n" in source_of(out["main.py"])
    assert out["loop.py"].new_source is None and not [f for f in out["loop.py"].findings if f.code == "DEV008"]
