"""fastai's own training entry point, `Learner.fit`, with a small MLP on a synthetic table
(fastai's `DataLoaders.from_dsets`, its SGD, its training loop and callbacks), on the device
fastai picks itself: `default_device()`, the current CUDA device when there is one. (Without a
`device`, `from_dsets` leaves the loaders' device None and fastai trains on the CPU even on a
CUDA machine, so the driver asks for fastai's default, as its `Datasets.dataloaders()` does.)"""

import torch
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.optimizer import SGD
from fastai.torch_core import default_device, set_seed
from torch import nn

set_seed(0)
gen = torch.Generator().manual_seed(0)
X = torch.randn(128, 8, generator=gen)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
dls = DataLoaders.from_dsets(list(zip(X[:96], y[:96])), list(zip(X[96:], y[96:])), bs=16, device=default_device())
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss(), opt_func=SGD, lr=0.2)
learn.fit(1)
