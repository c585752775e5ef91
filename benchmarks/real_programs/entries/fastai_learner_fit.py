"""fastai's own training entry point, `Learner.fit`, with a small MLP on a synthetic table
(fastai's `DataLoaders.from_dsets`, its SGD, its training loop and callbacks). The library
picks its device itself (`default_device()`: the current CUDA device when there is one)."""

import torch
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.optimizer import SGD
from fastai.torch_core import set_seed
from torch import nn

set_seed(0)
gen = torch.Generator().manual_seed(0)
X = torch.randn(128, 8, generator=gen)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
dls = DataLoaders.from_dsets(list(zip(X[:96], y[:96])), list(zip(X[96:], y[96:])), bs=16)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss(), opt_func=SGD, lr=0.2)
learn.fit(1)
