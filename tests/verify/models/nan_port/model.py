"""Returns NaN: log of a negative number in the module named `bad`."""
import torch
import torch.nn as nn


class Log(nn.Module):
    def forward(self, x):
        return torch.log(x - 10.0)  # negative input: NaN


class NaNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bad = Log()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.bad(self.fc(x)))


def make_model():
    return NaNNet()


def example_inputs():
    return torch.randn(2, 4)
