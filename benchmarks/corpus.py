"""Generate a large, realistic PyTorch corpus for porter's benchmarks.

Real repositories are mostly code without CUDA: census.md counts ~40% of files mentioning
CUDA at all in big projects (~10% in a vision library). The generator follows that: most
files are plain Python / PyTorch (models, data loading, utilities, configs, tests) and
the CUDA files carry the census's common patterns (`.cuda()`, `device="cuda"`,
`torch.cuda.*`, `"cuda" if torch.cuda.is_available() else "cpu"`, autocast, DDP …) at a
few sites each, embedded in ordinary code.

    python benchmarks/corpus.py OUT_DIR --lines 1000000 [--cuda-share 0.4] [--seed 0]

Deterministic for a seed. Average file ≈ 280 lines, as in the census (1.11M lines / 3,991
files).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

_PLAIN_BLOCKS = [
    '''
class {Name}Block(nn.Module):
    """A residual block: conv, norm, activation, twice."""

    def __init__(self, channels: int, hidden: int = {n}, dropout: float = 0.1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, hidden, kernel_size=3, padding=1)
        self.norm1 = nn.BatchNorm2d(hidden)
        self.conv2 = nn.Conv2d(hidden, channels, kernel_size=3, padding=1)
        self.norm2 = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = x
        x = F.relu(self.norm1(self.conv1(x)))
        x = self.drop(x)
        x = self.norm2(self.conv2(x))
        return F.relu(x + residual)
''',
    '''
def {name}_collate(batch, pad_value: int = 0):
    """Pad a batch of variable-length sequences to the longest one."""
    lengths = [len(item["tokens"]) for item in batch]
    longest = max(lengths)
    out = torch.full((len(batch), longest), pad_value, dtype=torch.long)
    for i, item in enumerate(batch):
        out[i, : lengths[i]] = torch.as_tensor(item["tokens"], dtype=torch.long)
    mask = out != pad_value
    return {{"tokens": out, "mask": mask, "lengths": torch.tensor(lengths)}}
''',
    """
class {Name}Dataset(torch.utils.data.Dataset):
    def __init__(self, root: str, split: str = "train", transform=None) -> None:
        self.root = os.path.join(root, split)
        self.files = sorted(f for f in os.listdir(self.root) if f.endswith(".npy"))
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int):
        array = np.load(os.path.join(self.root, self.files[index]))
        sample = torch.from_numpy(array).float()
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, index % {n}
""",
    '''
def {name}_schedule(step: int, warmup: int = {n}, total: int = 100000, base_lr: float = 3e-4) -> float:
    """Linear warm-up, then cosine decay to a tenth of the base rate."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return base_lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))
''',
    """
@dataclass
class {Name}Config:
    vocab_size: int = 50257
    n_layer: int = {n}
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True
    block_size: int = 1024

    def scaled(self, factor: float) -> "{Name}Config":
        return {Name}Config(
            vocab_size=self.vocab_size,
            n_layer=max(1, int(self.n_layer * factor)),
            n_head=self.n_head,
            n_embd=self.n_embd,
            dropout=self.dropout,
            bias=self.bias,
            block_size=self.block_size,
        )
""",
    """
class {Name}Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 8) -> None:
        super().__init__()
        assert dim % heads == 0, "dim must divide by heads"
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)
""",
    """
def {name}_accuracy(logits: torch.Tensor, labels: torch.Tensor, topk=(1, {n})) -> list[float]:
    with torch.no_grad():
        maxk = max(topk)
        _, pred = logits.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(labels.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / labels.size(0)).item())
        return res
""",
    """
def test_{name}_shapes():
    model = nn.Sequential(nn.Linear({n}, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(8, {n})
    y = model(x)
    assert y.shape == (8, 4)
    assert not torch.isnan(y).any()
    y.sum().backward()
    for p in model.parameters():
        assert p.grad is not None
""",
    """
def {name}_parse_args(argv=None):
    parser = argparse.ArgumentParser(description="{Name} training")
    parser.add_argument("--data", default="data/{name}", help="dataset folder")
    parser.add_argument("--epochs", type=int, default={n})
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--out", default="runs/{name}")
    parser.add_argument("--resume", default="", help="checkpoint to resume from")
    return parser.parse_args(argv)
""",
    """
def {name}_save(model, optimizer, step: int, path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    state = {{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}}
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)
    logger.info("saved step %d to %s", step, path)
""",
]

_CUDA_BLOCKS = [
    """
def {name}_setup(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = build_model(args).to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    return model, device
""",
    """
def {name}_train_step(model, batch, optimizer, scaler):
    inputs, labels = batch
    inputs = inputs.cuda(non_blocking=True)
    labels = labels.cuda(non_blocking=True)
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
""",
    """
def {name}_benchmark(model, x, iters: int = {n}):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        model(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"{{iters / elapsed:.1f}} it/s, {{torch.cuda.max_memory_allocated() / 2**20:.0f}} MiB")
    torch.cuda.empty_cache()
""",
    """
def {name}_seed_everything(seed: int = {n}) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
""",
    """
def {name}_load(path: str, model: nn.Module) -> int:
    state = torch.load(path, map_location="cuda")
    model.load_state_dict(state["model"])
    x = torch.zeros(1, 3, 224, 224, device="cuda")
    if x.is_cuda:
        model(x)
    return state.get("step", 0)
""",
    """
def {name}_init_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)
    return local_rank, device
""",
]

_HEADER = '''"""{doc}"""

from __future__ import annotations

import argparse
import logging
import math
import os
import random
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)
'''

_WORDS = (
    "alpha beta gamma delta encoder decoder vision speech token patch router expert adapter "
    "lora proj mlp norm embed pool head stem neck loader sampler trainer metric".split()
)


def _fill(block: str, rng: random.Random, i: int) -> str:
    word = rng.choice(_WORDS)
    return block.format(name=f"{word}_{i}", Name=f"{word.capitalize()}{i}", n=rng.randint(2, 64))


def make_file(rng: random.Random, cuda: bool, target_lines: int, index: int) -> str:
    parts = [_HEADER.format(doc=f"Module {index}: generated for porter's benchmark.")]
    lines = parts[0].count("\n")
    k = 0
    while lines < target_lines:
        if cuda and (k == 1 or rng.random() < 0.12):
            block = _fill(rng.choice(_CUDA_BLOCKS), rng, k)
        else:
            block = _fill(rng.choice(_PLAIN_BLOCKS), rng, k)
        parts.append(block)
        lines += block.count("\n")
        k += 1
    return "\n".join(parts)


def generate(out: Path, total_lines: int = 1_000_000, cuda_share: float = 0.4, seed: int = 0) -> tuple[int, int]:
    """Write the corpus under `out`; return (files, lines)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files = lines = 0
    while lines < total_lines:
        size = max(40, int(rng.lognormvariate(5.4, 0.7)))  # median ≈ 220, mean ≈ 280 lines
        cuda = rng.random() < cuda_share
        text = make_file(rng, cuda, size, files)
        pkg = out / f"pkg{files // 100:03d}" / f"sub{(files // 10) % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / f"mod_{files:05d}.py").write_text(text)
        files += 1
        lines += text.count("\n")
    return files, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--cuda-share", type=float, default=0.4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    files, lines = generate(a.out, a.lines, a.cuda_share, a.seed)
    print(f"{files} files, {lines} lines in {a.out}")


if __name__ == "__main__":
    main()
