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
    for lang, letters in (("English", "abcdehilmnorstwy"), ("French", "abcdeilmnoqrstuvz"),
                          ("Japanese", "aehikmnorstuy")):
        names = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))).title()
                 for _ in range(48)]
        (folder / f"{lang}.txt").write_text("\n".join(names) + "\n")


def nano_gpt_shards(root: Path, workdir: Path) -> None:
    """nano-gpt: synthetic tokens in its pre-tokenised shard format (np.save, `NAME.npy.NNNN`)."""
    import numpy as np

    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    tokens = np.random.default_rng(0).integers(0, 96, 20000, dtype=np.uint16)
    with open(data / "synthetic_train.npy.0000", "wb") as fh:
        np.save(fh, tokens)
