"""Download the pinned distributions of the real programs and unpack them in a cache.

The programs are never vendored: each is fetched from the package index with pip, checked
against the sha256 in the manifest, and unpacked under ``$PORTER_REALPROG_CACHE`` (default
``~/.cache/porter-realprog``). A second call finds them there.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"


@dataclass(frozen=True)
class Program:
    """One manifest entry: where the program comes from and how the driver runs it."""

    name: str
    package: str
    version: str
    dist: str  # the file on the index: an sdist (.tar.gz) or, for a library, a wheel
    sha256: str
    root: str  # the folder porter ports, inside the unpacked distribution
    requires: list[str]
    entry: str = ""  # the program's own script, relative to root
    # or, for a library's own training entry point: a script under entries/ that calls it
    # with a tiny configuration (the library is imported from root, ported or not)
    call: str = ""
    losses: int = 4
    argv: list[str] = field(default_factory=list)
    fake_datasets: list[str] = field(default_factory=list)
    dataset_size: int = 256
    no_dropout: bool = False
    setup: str | None = None
    sys_path: list[str] = field(default_factory=list)
    xla_compat: bool = False  # restore torch-xla names a dependency still calls (side.py)
    fixed_shuffle: bool = False  # one DataLoader shuffle order on both sides (side.py)
    accelerate_single_process: bool = False  # accelerate's gather_object as the identity (side.py)
    quick: bool = False  # in the pytest subset
    # the program's first run, before any porter change made for it (date, porter commit, result)
    first_run: str = ""
    what: str = ""
    # parity_evidence.py: [file in the port, text, replacement] that changes one operation (a
    # port parity-check must fail); the optimizer steps parity-check records; what it exercises
    sabotage: list[str] = field(default_factory=list)
    steps: int = 4
    exercises: str = ""
    nproc: int = 1  # > 1: launched with torchrun, one process per rank


def load_manifest(path: Path = MANIFEST) -> list[Program]:
    data = tomllib.loads(path.read_text())
    return [Program(**entry) for entry in data["program"]]


def cache_dir() -> Path:
    return Path(os.environ.get("PORTER_REALPROG_CACHE", Path.home() / ".cache" / "porter-realprog"))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(program: Program) -> Path:
    """The unpacked sdist folder of `program` (downloaded and checked on first use)."""
    cache = cache_dir()
    archive = cache / "dists" / program.dist
    unpacked = cache / "src" / f"{program.package}-{program.version}"
    if (unpacked / ".ok").exists():
        return unpacked
    if not archive.exists() or sha256(archive) != program.sha256:
        archive.parent.mkdir(parents=True, exist_ok=True)
        kind = ["--only-binary", ":all:"] if program.dist.endswith(".whl") else ["--no-binary", ":all:"]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *kind,
             f"{program.package}=={program.version}", "-d", str(archive.parent)],
            check=True, capture_output=True, text=True, timeout=600,
        )
    got = sha256(archive)
    if got != program.sha256:
        raise RuntimeError(f"{program.dist}: sha256 {got} differs from the manifest's {program.sha256}")
    unpacked.mkdir(parents=True, exist_ok=True)
    if program.dist.endswith(".whl"):
        with zipfile.ZipFile(archive) as whl:
            whl.extractall(unpacked)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
    (unpacked / ".ok").write_text(program.sha256)
    return unpacked


def program_root(program: Program) -> Path:
    return fetch(program) / program.root
