import time

import torch
import torch.nn as nn


class Hangs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        while True:  # never returns
            time.sleep(0.5)


def make_model():
    return Hangs()


def example_inputs():
    return torch.randn(2, 4)
