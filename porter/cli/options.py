"""Every option more than one command takes, declared once: its flags, its help text and its
checks. A command names the option's type (`target: Target = None`) and gets the same
spelling, short flag and help as every other command that takes it.

Defaults: `--target` has none where the command ports or judges code for a target (`rewrite`,
`lint`, `kernels --scaffold`, `backends`, `trace ops`: the config file's `target`, else a usage
error); the commands that run a port (`parity-check`, `trace record --side ported`, `trace
compare`) run it where porter can, PyTorch/XLA, unless told (`RunTarget`)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated

import typer

from porter.cli.common import MAX_FILE_TIMEOUT, check_file_timeout


def _within(option: str, low: float, high: float, what: str, *, above: bool = False):
    """A check of a number option: finite, from `low` (or `above` it) to `high`, else a usage
    error before anything runs. NaN, infinite, huge and negative timeouts, output caps, memory
    limits and seeds ran the whole command and then ended in a traceback (OverflowError, numpy's
    seed range, setrlimit); a negative tolerance was blamed on the traces, an infinite one
    passed any port (seventeenth read)."""

    def check(value):
        if value is None:
            return None
        bad = not math.isfinite(value) if isinstance(value, float) else False
        if bad or value < low or (above and value == low) or value > high:
            raise typer.BadParameter(f"{value!r}: {what}", param_hint=f"'{option}'")
        return value

    return check


def written_path(text: str) -> Path:
    """A file or folder porter writes, never an empty name: `Path("")` is `.`, so `--scaffold
    "$UNSET"`, `--out-dir ""` and `--split ""` wrote into the current folder (eighteenth read)."""
    if text == "":
        raise typer.BadParameter("an empty name names no folder or file (an unset variable?); to write here, name `.`")
    return Path(_not_a_stream(text))


# `-` names standard input or output (git's, ruff's convention), never a file: where an option has
# no stream to give it (all but `--output-file`), it is refused; `./-` names a file so named.
# `--write-baseline -` wrote a file named `-`, and `--baseline -` read it (thirty-fifth term read)
_STREAM = "-"


def _not_a_stream(text: str) -> str:
    if text == _STREAM:
        raise typer.BadParameter(
            "`-` (standard input or output) is not taken here: name a file or folder (`./-` for one so named)"
        )
    return text


def read_file(text: str) -> Path:
    """A file porter reads, never `-`: no option that reads a file reads standard input."""
    return Path(_not_a_stream(text))


def written_file(text: str) -> Path:
    """A file porter writes: `written_path`, and never a name that ends in a slash. `Path` drops
    the slash, so `-o out/` wrote a file named `out` where the shell's `> out/` refuses: the name
    names a folder (twenty-third read)."""
    if text.endswith(("/", os.sep)):
        raise typer.BadParameter(f"{text} names a folder (it ends in a slash): name a file")
    return written_path(text)


def written_or_stdout(text: str) -> Path | None:
    """A file porter writes, or None for `-`: standard output, as the convention goes (`lint -o -`
    wrote a file named `-`: nineteenth read); `./-` names that file."""
    return None if text == "-" else written_file(text)


_MAX_SEED = 2**31 - 1  # numpy takes seeds below 2**32, and each rank adds its number (torchrun)

# what the code is ported for; no default (the config file's `target`, else a usage error)
Target = Annotated[
    str | None,
    typer.Option("--target", "-t", help="neuron, tpu or xla (or `target` in the config file).", show_default=False),
]
# where a port is run and judged
RunTarget = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        help="neuron, tpu or xla: where the port runs (default xla: PyTorch/XLA, on the CPU where no TPU is attached; "
        "parity-check reads \\[tool.porter.parity] first).",  # \\[: typer renders help as rich markup
        show_default=False,
    ),
]

# which rules run
Select = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        help="Only these rule codes or prefixes, comma-separated or repeated (replaces the config's).",
        show_default=False,
    ),
]
Ignore = Annotated[
    list[str] | None,
    typer.Option("--ignore", help="Skip these rule codes or prefixes (added to the config's).", show_default=False),
]
ExtendSelect = Annotated[
    list[str] | None,
    typer.Option(
        "--extend-select", help="Also run these rule codes or prefixes (e.g. rules off by default).", show_default=False
    ),
]
Exclude = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude", help="Gitignore-style pattern of files to leave out (.gitignore is respected).", show_default=False
    ),
]
FailOn = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        help="Lowest severity that fails the run: info, warning (default) or error. Info findings need no action.",
        show_default=False,
    ),
]
Portable = Annotated[
    bool | None,
    typer.Option(
        "--portable/--no-portable",
        help="One codebase for CUDA, the CPU and the target: port through torch.accelerator (neuron, tpu; see "
        "docs/portable.md). Overrides `portable` in the config file.",
        show_default=False,
    ),
]
UnsafeFixes = Annotated[
    bool,
    typer.Option(
        "--unsafe-fixes", help="Apply unsafe fixes too (fp16 → bf16, GradScaler removal: they change numerics)."
    ),
]

# where the settings come from
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        parser=read_file,
        help="Use this porter.toml / pyproject.toml instead of discovering one.",
        show_default=False,
    ),
]
Isolated = Annotated[bool, typer.Option("--isolated", help="Ignore every config file.")]

# how files are read and written
Jobs = Annotated[
    int | None,
    typer.Option("--jobs", "-j", min=1, help="Worker processes (default: one per core).", show_default=False),
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Parse every file again; neither read nor write the cache.")]
CacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        parser=written_path,
        help="Keep the cache here (default: a folder per project under ~/.cache/porter; a .porter_cache/ in the "
        "project is used only when named here).",
        show_default=False,
    ),
]
FileTimeout = Annotated[
    float | None,
    typer.Option(
        "--file-timeout",
        callback=check_file_timeout,
        help="Seconds one file may take before it is reported and left unchanged (default 60; 0: no limit).",
        show_default=False,
    ),
]
AllowDirty = Annotated[
    bool,
    typer.Option("--allow-dirty", help="Write fixes into files with uncommitted changes (or that git cannot check)."),
]
AllowNoVcs = Annotated[
    bool, typer.Option("--allow-no-vcs", help="Write fixes into files that are not under version control.")
]
MigrationReport = Annotated[
    Path | None,
    typer.Option(
        "--report",
        parser=written_file,
        help="Also write a migration report: FILE.html, FILE.md or FILE.json (by suffix).",
        show_default=False,
    ),
]

# inventories
Scaffold = Annotated[
    Path | None,
    typer.Option(
        "--scaffold",
        parser=written_path,
        help="Write the target's skeletons here (never over an existing file; needs --target).",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the inventory as JSON.")]

# running a program (parity-check's script mode and trace record)
Steps = Annotated[
    int | None,
    typer.Option(
        "--steps", min=1, help="Optimizer steps to record (default 10; parity-check: script mode).", show_default=False
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds each run may take (default 600).",
        show_default=False,
        callback=_within(
            "--timeout", 0, MAX_FILE_TIMEOUT, f"a number of seconds above 0, at most {MAX_FILE_TIMEOUT:,}", above=True
        ),
    ),
]
Seed = Annotated[
    int,
    typer.Option(
        "--seed",
        help="The seed given to random, numpy and torch before the script starts (both sides).",
        callback=_within("--seed", 0, _MAX_SEED, f"a seed from 0 to {_MAX_SEED:,}"),
    ),
]
Eager = Annotated[bool, typer.Option("--eager", help="torch.compile returns the model uncompiled.")]
MaxOutput = Annotated[
    float,
    typer.Option(
        "--max-output",
        help="MiB of each run's output kept.",
        callback=_within("--max-output", 0, 2**20, "a number of MiB above 0, at most 1,048,576 (1 TiB)", above=True),
    ),
]
MaxMemory = Annotated[
    float | None,
    typer.Option(
        "--max-memory",
        help="GiB of address space per run (RLIMIT_AS).",
        show_default=False,
        callback=_within("--max-memory", 0, 2**32, "a number of GiB above 0, at most 4,294,967,296", above=True),
    ),
]
CountOps = Annotated[
    bool,
    typer.Option(
        "--count-ops/--no-count-ops",
        help="List the ATen operators of the first step (on XLA from torch_xla's own counters).",
    ),
]
NoiseFloor = Annotated[
    bool,
    typer.Option(
        "--noise-floor/--no-noise-floor",
        help="Run the original a second time with another thread count and judge the port against the larger of the "
        "tolerance and the program's own drift (costs one more run).",
    ),
]
DeviceRng = Annotated[
    bool,
    typer.Option(
        "--device-rng",
        help="Random numbers drawn on a device come from that device's own generator (default: from the CPU generator, "
        "seeded alike on both sides, then moved).",
    ),
]

# judging
Rtol = Annotated[
    float | None,
    typer.Option(
        "--rtol",
        help="Relative tolerance (default: by precision).",
        show_default=False,
        callback=_within("--rtol", 0, math.inf, "a finite tolerance of 0 or more"),
    ),
]
Atol = Annotated[
    float | None,
    typer.Option(
        "--atol",
        help="Absolute tolerance (default: by precision).",
        show_default=False,
        callback=_within("--atol", 0, math.inf, "a finite tolerance of 0 or more"),
    ),
]
ParityReport = Annotated[
    Path | None,
    typer.Option("--report", parser=written_file, help="Write a report: .json, .md or .html.", show_default=False),
]
