import torch
import torch.nn as nn


class Raises(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        raise ValueError("deliberate failure in forward")  # line 12


def make_model():
    return Raises()


def example_inputs():
    return torch.randn(2, 4)
