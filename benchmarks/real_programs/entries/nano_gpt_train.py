"""nano-gpt's own training loop, `nano_gpt.trainer.train`, on a tiny GPT and synthetic tokens.

What `nano-gpt train` (nano_gpt/tool/train.py) does, with a tiny configuration: the GPT-2
model (token embedding tied to the LM head), AdamW from `configure_optimizers`, the cosine
learning-rate schedule with linear warm-up, gradient accumulation, clipping, bf16/float32
autocast by device. Two things differ from the tool, because they need the network: the GPT-2
tokenizer (tiktoken downloads it; training never uses it) is not made, and the corpus is the
pre-tokenised shard format `read_preprocessed_corpus` reads, written by the caller under
`data/` (synthetic tokens)."""

import argparse

import torch
from nano_gpt.config import DatasetConfig, EvalConfig, GPTConfig, SampleConfig, TrainConfig
from nano_gpt.datasets.data_loader import read_preprocessed_corpus
from nano_gpt.devices import get_device
from nano_gpt.model import GPT
from nano_gpt.tokenizer import Tokenizer
from nano_gpt.trainer import WorkerState, create_optimizer, train

parser = argparse.ArgumentParser()
parser.add_argument("--n-layer", type=int, default=2)
parser.add_argument("--n-head", type=int, default=2)
parser.add_argument("--n-embd", type=int, default=32)
parser.add_argument("--vocab-size", type=int, default=96)
parser.add_argument("--sequence-length", type=int, default=16)
parser.add_argument("--micro-batch-size", type=int, default=4)
parser.add_argument("--grad-accum", type=int, default=2)
parser.add_argument("--max-steps", type=int, default=40)
parser.add_argument("--warmup-steps", type=int, default=4)
parser.add_argument("--max-lr", type=float, default=3e-3)
parser.add_argument("--seed", type=int, default=1337)
parser.add_argument("--dataset-dir", default="data")
parser.add_argument(
    "--sample-length",
    type=int,
    default=0,
    help="run nano-gpt's own sampling callback (model.sample) every --sample-every "
    "steps with a character tokenizer, to this many tokens (0: no sampling)",
)
parser.add_argument("--sample-every", type=int, default=2)
parser.add_argument(
    "--dtype",
    choices=["bfloat16", "float32"],
    default="bfloat16",
    help="the autocast dtype nano-gpt uses on every device (its own: bfloat16)",
)
args = parser.parse_args()
if args.dtype == "float32":  # autocast to float32 is autocast off: the whole run in float32
    import nano_gpt.trainer

    nano_gpt.trainer.get_dtype = lambda device: torch.float32

B, T = args.micro_batch_size, args.sequence_length
model_config = GPTConfig(
    block_size=T, vocab_size=args.vocab_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd
)
train_config = TrainConfig(
    seed=args.seed,
    total_batch_size=B * T * args.grad_accum,
    micro_batch_size=B,
    sequence_length=T,
    max_lr=args.max_lr,
    warmup_steps=args.warmup_steps,
    max_steps=args.max_steps,
    eval_steps=args.sample_every if args.sample_length else 10**9,  # nano-gpt samples at eval steps
    checkpoint_steps=10**9,
)
dataset_config = DatasetConfig(
    dataset_dir=args.dataset_dir, dataset_name="synthetic", micro_batch_size=B, sequence_length=T
)


class CharTokenizer(Tokenizer):
    """Characters as tokens (the GPT-2 tokenizer needs the network): enough for sampling."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) % args.vocab_size for c in text]

    def decode(self, tokens: list[int]) -> str:
        return "".join(chr(32 + t % 95) for t in tokens)


torch.manual_seed(args.seed)
model = GPT(model_config, tokenizer=CharTokenizer() if args.sample_length else None)
worker_state = WorkerState(get_device())
optimizer = create_optimizer(model, train_config, None, torch.cuda.is_available())
train(
    model,
    optimizer,
    worker_state,
    train_config,
    train_data_loader=read_preprocessed_corpus(dataset_config.dataset_path("train"), dataset_config),
    eval_config=EvalConfig(validation_steps=0),
    dataset_config=dataset_config,
    sample_config=SampleConfig(num_return_sequences=2, max_length=args.sample_length, text="Hello")
    if args.sample_length
    else None,
)
