"""d2l's own training entry point for chapter 6, `d2l.train_ch6` (LeNet on Fashion-MNIST, the
data set replaced by a small synthetic one), on the device the library picks: `d2l.try_gpu()`."""

import matplotlib

matplotlib.use("Agg")

from d2l import torch as d2l
from torch import nn

net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5, padding=2),
    nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=5),
    nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.Linear(16 * 5 * 5, 120),
    nn.Sigmoid(),
    nn.Linear(120, 84),
    nn.Sigmoid(),
    nn.Linear(84, 10),
)
train_iter, test_iter = d2l.load_data_fashion_mnist(batch_size=32)
d2l.train_ch6(net, train_iter, test_iter, num_epochs=1, lr=0.9, device=d2l.try_gpu())
