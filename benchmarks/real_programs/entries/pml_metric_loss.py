"""pytorch-metric-learning's own training entry point, `trainers.MetricLossOnly.train`, with a
small trunk and embedder, triplet loss, on synthetic clustered points. The trainer picks the
data device itself (`c_f.use_cuda_if_available()`); the models are moved to the device the
library's own helper picks, as its examples move them to CUDA."""

import torch
from pytorch_metric_learning import losses, trainers
from pytorch_metric_learning.utils import common_functions as c_f
from torch import nn
from torch.utils.data import SequentialSampler, TensorDataset

gen = torch.Generator().manual_seed(0)
labels = torch.arange(96) % 4
centers = torch.randn(4, 16, generator=gen) * 2
points = centers[labels] + torch.randn(96, 16, generator=gen)
dataset = TensorDataset(points, labels)

torch.manual_seed(0)
device = c_f.use_cuda_if_available()
trunk = nn.Sequential(nn.Linear(16, 32), nn.ReLU()).to(device)
embedder = nn.Linear(32, 8).to(device)
optimizers = {
    "trunk_optimizer": torch.optim.SGD(trunk.parameters(), lr=0.1),
    "embedder_optimizer": torch.optim.SGD(embedder.parameters(), lr=0.1),
}
trainer = trainers.MetricLossOnly(
    models={"trunk": trunk, "embedder": embedder},
    optimizers=optimizers,
    batch_size=16,
    loss_funcs={"metric_loss": losses.TripletMarginLoss(margin=0.2)},
    dataset=dataset,
    sampler=SequentialSampler(dataset),
    dataloader_num_workers=0,
)
trainer.train(num_epochs=1)
