"""mup's own training entry point, `mup.coord_check.get_coord_data` (trains each width a few
steps and records activation statistics), on a tiny muP MLP; `cuda=True` is its default."""

import torch
from mup import MuReadout, set_base_shapes
from mup.coord_check import get_coord_data
from torch import nn


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(16, width)
        self.fc2 = nn.Linear(width, width)
        self.readout = MuReadout(width, 4)

    def forward(self, x):
        return self.readout(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def lazy(width):
    return lambda: set_base_shapes(MLP(width), MLP(8), delta=MLP(12))


gen = torch.Generator().manual_seed(0)
batch = (torch.randn(32, 16, generator=gen), torch.randint(0, 4, (32,), generator=gen))
get_coord_data({w: lazy(w) for w in (16, 32)}, [batch], optimizer="sgd", lr=0.5, nsteps=3)
