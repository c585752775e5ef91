"""tinynet ported by hand to TorchNeuron (device "neuron", torch.accelerator)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "neuron" if torch.accelerator.is_available() else "cpu"


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        mask = torch.ones(s, s, device="neuron", dtype=torch.bool).tril()
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, s, d))


class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = FeedForward(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class TinyNet(nn.Module):
    def __init__(self, dim=32, heads=4, depth=2, classes=10):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)
        self.register_buffer("scale", torch.ones(1, device="neuron"))

    def forward(self, x, labels=None):
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)) * self.scale


def make_model():
    model = TinyNet().to("neuron")
    torch.accelerator.synchronize()
    return model


def make_training():
    model = make_model()

    def loss_fn(out, inputs):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), inputs[1].reshape(-1))

    return model, loss_fn, lambda params: torch.optim.AdamW(params, lr=1e-3)


def example_inputs():
    x = torch.randn(2, 8, 32, device=DEVICE)
    labels = torch.randint(0, 10, (2, 8)).to("neuron")
    return x, labels
