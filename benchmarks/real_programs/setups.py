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
