"""Program-specific test environment: files a program reads at run time, made here (synthetic).

Each setup takes (program root, working directory) and runs in the side's process before the
program starts, identically on both sides.
"""

from __future__ import annotations

from pathlib import Path


def names_data(root: Path, workdir: Path) -> None:
    """opacus' char-LSTM example: one text file of names per language under names/."""
    import random

    rng = random.Random(0)
    folder = workdir / "names"
    folder.mkdir(parents=True, exist_ok=True)
    for lang, letters in (
        ("English", "abcdehilmnorstwy"),
        ("French", "abcdeilmnoqrstuvz"),
        ("Japanese", "aehikmnorstuy"),
    ):
        names = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))).title() for _ in range(48)]
        (folder / f"{lang}.txt").write_text("\n".join(names) + "\n")


def _offline() -> None:
    """Nothing from the Hugging Face Hub: every model, tokenizer and data set is made here."""
    import os

    os.environ.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        WANDB_DISABLED="true",
    )


_WORDS = (
    "the a one two three red blue green small big cat dog bird fish runs sees eats "
    "likes and or not is was will be here there now then up down"
).split()


def _tiny_tokenizer(path: Path):
    """A word-level tokenizer built in code (the `tokenizers` library), saved as a fast one."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(specials + list(_WORDS))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    # a chat template, for trainers that read conversations (GRPO's format reward does)
    tok.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    tok.save_pretrained(path)
    return tok


def _tiny_llama(path: Path, vocab_size: int, num_labels: int | None = None) -> None:
    """A tiny Llama, random weights from seed 0, saved with safetensors (both sides load it)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
        tie_word_embeddings=False,
    )
    if num_labels is not None:
        config.num_labels = num_labels
        model = LlamaForSequenceClassification(config)
    else:
        model = LlamaForCausalLM(config)
    model.save_pretrained(path)


def _sentences(rng, n: int, lo: int = 6, hi: int = 12) -> list[str]:
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def hf_sft(root: Path, workdir: Path) -> None:
    """trl's `sft.py`: a tiny causal LM and tokenizer under tiny-model/, text rows in data/."""
    import json
    import random

    _offline()
    tok = _tiny_tokenizer(workdir / "tiny-model")
    _tiny_llama(workdir / "tiny-model", len(tok))
    rng = random.Random(0)
    data = workdir / "data"
    data.mkdir(exist_ok=True)
    rows = [{"text": s} for s in _sentences(rng, 64)]
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def hf_grpo(root: Path, workdir: Path) -> None:
    """trl's `grpo.py`: the tiny causal LM, and prompts of equal length (one shape per batch)."""
    import json
    import random

    _offline()
    tok = _tiny_tokenizer(workdir / "tiny-model")
    _tiny_llama(workdir / "tiny-model", len(tok))
    rng = random.Random(0)
    data = workdir / "data"
    data.mkdir(exist_ok=True)
    # the reward: a function the driver supplies (`--reward_funcs tiny_rewards.animal_words`);
    # trl runs reward *models* under torch.inference_mode, which PyTorch/XLA 2.9 rejects (HF010)
    (workdir / "tiny_rewards.py").write_text(
        "def animal_words(completions, **kwargs):\n"
        "    texts = [c[0]['content'] if isinstance(c, list) else c for c in completions]\n"
        "    return [float(sum(t.split().count(w) for w in ('cat', 'dog', 'bird', 'fish'))) for t in texts]\n"
    )
    import sys

    sys.path.insert(0, str(workdir))
    rows = [{"prompt": [{"role": "user", "content": s}]} for s in _sentences(rng, 32, 6, 6)]
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def hf_glue(root: Path, workdir: Path) -> None:
    """accelerate's GLUE/MRPC training scripts: a tiny sequence classifier and tokenizer under
    tiny-model/, and `load_dataset("nyu-mll/glue", "mrpc")` answered with synthetic sentence
    pairs (the only thing the scripts fetch)."""
    import random

    _offline()
    import datasets

    tok = _tiny_tokenizer(workdir / "tiny-model")
    _tiny_llama(workdir / "tiny-model", len(tok), num_labels=2)

    def split(seed: int, n: int):
        rng = random.Random(seed)
        return datasets.Dataset.from_dict(
            {
                "sentence1": _sentences(rng, n),
                "sentence2": _sentences(rng, n),
                "label": [rng.randint(0, 1) for _ in range(n)],
                "idx": list(range(n)),
            }
        )

    (workdir / "out").mkdir(exist_ok=True)  # the script writes its results there
    fake = datasets.DatasetDict({"train": split(0, 96), "validation": split(1, 32), "test": split(2, 32)})
    real = datasets.load_dataset

    def load_dataset(path, name=None, *args, **kwargs):
        if path in ("glue", "nyu-mll/glue") and name == "mrpc":
            return fake
        return real(path, name, *args, **kwargs)

    datasets.load_dataset = load_dataset

    import evaluate

    class Accuracy:
        """`evaluate.load("glue", "mrpc")` (a metric script on the Hub): accuracy over batches."""

        def __init__(self) -> None:
            self.right = self.seen = 0

        def add_batch(self, predictions, references) -> None:
            self.right += int((predictions == references).sum())
            self.seen += len(references)

        def compute(self) -> dict:
            return {"accuracy": self.right / max(self.seen, 1)}

    real_load = evaluate.load
    evaluate.load = lambda path, *a, **k: Accuracy() if path == "glue" else real_load(path, *a, **k)


def nano_gpt_shards(root: Path, workdir: Path) -> None:
    """nano-gpt: synthetic tokens in its pre-tokenised shard format (np.save, `NAME.npy.NNNN`)."""
    import numpy as np

    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    tokens = np.random.default_rng(0).integers(0, 96, 20000, dtype=np.uint16)
    with open(data / "synthetic_train.npy.0000", "wb") as fh:
        np.save(fh, tokens)
