"""The test environment a real program runs in, the same on every side and in every harness
(side.py, independent.py, and the `_porter_driver.py` that parity_evidence.py writes into each
tree): synthetic torchvision data sets, program-specific data files (setups.py), the
torch-xla names a dependency still calls, and, where asked, dropout off. Nothing here touches
a random generator the program uses.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path


def xla_compat() -> None:
    """pytorch-ignite 0.5.5 (the latest) calls `xm.xrt_world_size()` / `xm.get_ordinal()`,
    removed in torch-xla 2.9, as soon as torch_xla is importable: on both sides, the original's
    too. Restore them as the aliases of their replacements, for the library, not the program."""
    try:
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr
    except ImportError:
        return
    for old, new in (
        ("xrt_world_size", xr.world_size),
        ("get_ordinal", xr.global_ordinal),
        ("get_local_ordinal", xr.local_ordinal),
    ):
        if not hasattr(xm, old):
            setattr(xm, old, new)


def fixed_shuffle(torch) -> None:
    """Every shuffling DataLoader draws its order from one generator the driver seeds, on both
    sides. accelerate 1.16 reseeds a shuffling sampler under XLA (`prepare_data_loader`: a new
    generator seeded from the default one), so the CUDA original and its XLA port see their
    data in different orders by the library's design, not the port's."""
    from torch.utils.data import RandomSampler

    order = torch.Generator().manual_seed(0)

    def __iter__(self):
        n = len(self.data_source)
        yield from torch.randperm(n, generator=order).tolist()[: self.num_samples]

    RandomSampler.__iter__ = __iter__


def accelerate_single_process(torch) -> None:
    """accelerate 1.16's `gather_object` raises NotImplementedError under XLA even in one process,
    where gathering is the identity (what it returns without distribution). trl's GRPO and RLOO
    trainers call it every step for their logs (porter reports this: HF010). The driver makes it
    the identity for a single process, on both sides (the CPU side never takes that branch)."""
    import accelerate.utils.operations as ops
    from accelerate.state import PartialState

    real = ops.gather_object

    def gather_object(obj):
        if PartialState().num_processes == 1:
            return obj
        return real(obj)

    ops.gather_object = gather_object
    import accelerate.utils

    accelerate.utils.gather_object = gather_object


def no_dropout(torch) -> None:
    import torch.nn.functional as F

    def identity(input, *args, **kwargs):
        return input

    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        setattr(F, name, identity)


class FakeImages:
    """A torchvision-style image data set: deterministic uint8 images, int targets."""

    def __init__(self, shape, classes, size, transform=None, target_transform=None, seed=0):
        import numpy as np

        rng = np.random.default_rng(seed)
        self.data = rng.integers(0, 256, size=(size, *shape), dtype=np.uint8)
        self.targets = [int(t) for t in rng.integers(0, classes, size=size)]
        self.classes = [str(i) for i in range(classes)]
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        from PIL import Image

        img = Image.fromarray(self.data[i])
        target = self.targets[i]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


DATASETS = {  # name: (image shape, classes)
    "MNIST": ((28, 28), 10),
    "FashionMNIST": ((28, 28), 10),
    "EMNIST": ((28, 28), 47),
    "CIFAR10": ((32, 32, 3), 10),
    "CIFAR100": ((32, 32, 3), 100),
    "Caltech101": ((48, 48, 3), 101),
}


def fake_datasets(names: list[str], size: int) -> None:
    import torchvision.datasets as tvd

    for name in names:
        shape, classes = DATASETS[name]

        def make(*args, _shape=shape, _classes=classes, train=True, transform=None, target_transform=None, **kwargs):
            return FakeImages(_shape, _classes, size, transform, target_transform, seed=0 if train else 1)

        setattr(tvd, name, make)


def prepare(settings: dict, root: Path, workdir: Path) -> None:
    """Everything a program needs before it starts (in its own process, before its import)."""
    import torch

    if settings.get("xla_compat"):
        xla_compat()
    if settings.get("no_dropout"):
        no_dropout(torch)
    if settings.get("fixed_shuffle"):
        fixed_shuffle(torch)
    if settings.get("accelerate_single_process"):
        accelerate_single_process(torch)
    if settings.get("fake_datasets"):
        fake_datasets(settings["fake_datasets"], settings.get("dataset_size", 256))
    if settings.get("setup"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import setups

        getattr(setups, settings["setup"])(root, workdir)


def run(settings: dict, root: Path) -> None:
    """Run the program as `python ENTRY ARGV` would, from `root`."""
    for extra in settings.get("sys_path", []):
        sys.path.insert(0, str(root / extra))
    entry = root / settings["entry"]
    if settings.get("library"):
        sys.path.insert(0, str(root))  # a library's own entry point: the library is imported from root
    sys.path.insert(0, str(entry.parent))
    sys.argv = [str(entry), *settings.get("argv", [])]
    runpy.run_path(str(entry), run_name="__main__")


def main_in_tree(settings: dict) -> None:
    """What `_porter_driver.py` does: prepare, then run the program from the tree it sits in."""
    root = Path(sys.argv[0]).resolve().parent
    prepare(settings, root, Path(os.getcwd()))
    run(settings, root)
