"""torchensemble's own training entry point, `VotingClassifier.fit`, with two small MLPs on a
synthetic table. The library picks its device itself (`cuda=True`, its default)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchensemble import VotingClassifier


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        return self.net(x)


gen = torch.Generator().manual_seed(0)
X = torch.randn(128, 8, generator=gen)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
loader = DataLoader(TensorDataset(X, y), batch_size=32)
torch.manual_seed(0)
ensemble = VotingClassifier(estimator=MLP, n_estimators=2)
ensemble.set_optimizer("SGD", lr=0.5)
ensemble.fit(loader, epochs=1, save_model=False)
