"""Device-agnostic model with a data-dependent op (nonzero) and a host sync (.item())."""
import torch
import torch.nn as nn


class Dyn(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        idx = (y > 0).nonzero()  # data-dependent output shape
        count = idx.shape[0]
        total = y.sum().item()  # host sync
        return y * 0.5 + total * 0.0, torch.tensor(float(count))


def make_model():
    return Dyn()


def example_inputs():
    return torch.randn(4, 8)
