"""Download the pinned distributions of the real programs and unpack them in a cache.

The programs are never vendored: each is fetched from the package index with pip, checked
against the sha256 in the manifest, and unpacked under ``$PORTER_REALPROG_CACHE`` (default
``~/.cache/porter-realprog``). A second call finds them there.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
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
    what: str = ""
    # parity_evidence.py: [file in the port, text, replacement] that changes one operation (a
    # port parity-check must fail); the optimizer steps parity-check records; what it exercises
    sabotage: list[str] = field(default_factory=list)
    steps: int = 4
    exercises: str = ""
    nproc: int = 1  # > 1: launched with torchrun, one process per rank
    # the program's first result, recorded by `run.py --record-first-run NAME` before any porter
    # change made for it (issue 21: the held-out rate); absent for programs added before the rule
    first_run: dict = field(default_factory=dict)


def porter_revision(checkout: Path) -> str:
    """`<branch>@<commit>` of a porter checkout, `+changes` when its porter/ or rules/ differ
    from that commit: which porter made a result, for the record."""

    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    commit = git("rev-parse", "--short=10", "HEAD") or "unknown"
    branch = git("rev-parse", "--abbrev-ref", "HEAD") or "?"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "porter", "rules")
    return f"{branch}@{commit}{'+changes' if dirty else ''}"


def load_manifest(path: Path = MANIFEST) -> list[Program]:
    return parse_manifest(path.read_text())


def parse_manifest(text: str) -> list[Program]:
    return [Program(**entry) for entry in tomllib.loads(text)["program"]]


def cache_dir() -> Path:
    return Path(os.environ.get("PORTER_REALPROG_CACHE", Path.home() / ".cache" / "porter-realprog"))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(package: str, version: str, dist: str, sha: str, folder: Path) -> Path:
    """`folder/dist`, downloaded from the package index on first use and checked against `sha`."""
    archive = folder / dist
    if archive.exists() and sha256(archive) == sha:
        return archive
    folder.mkdir(parents=True, exist_ok=True)
    kind = ["--only-binary", ":all:"] if dist.endswith(".whl") else ["--no-binary", ":all:"]
    # (only its files are read, never installed: a release for other Pythons is as good)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--ignore-requires-python",
            *kind,
            f"{package}=={version}",
            "-d",
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0 and dist.endswith(".whl"):
        raise RuntimeError(f"pip download {package}=={version} failed:\n{proc.stderr[-2000:]}")
    if not archive.exists():
        # pip prepares an sdist's metadata before it keeps the file, and for a project that
        # builds CUDA code (vllm, mmcv) that runs its build script, which fails without a CUDA
        # toolkit; or it chose another file of the release: take the file the index lists
        # under the pinned name (PEP 691), as pip itself would
        _download_listed(package, dist, archive)
    got = sha256(archive)
    if got != sha:
        raise RuntimeError(f"{dist}: sha256 {got} differs from the pinned {sha}")
    return archive


def _download_listed(package: str, dist: str, archive: Path) -> None:
    index = os.environ.get("PORTER_BENCH_INDEX", "https://pypi.org/simple")
    request = urllib.request.Request(f"{index}/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as resp:
        files = json.load(resp)["files"]
    url = next((f["url"] for f in files if f["filename"] == dist), None)
    if url is None:
        raise RuntimeError(f"{dist}: not listed in {index}/{package}/")
    part = archive.with_name(archive.name + ".part")
    with urllib.request.urlopen(url, timeout=900) as resp, part.open("wb") as out:
        shutil.copyfileobj(resp, out)
    part.replace(archive)


def unpack(archive: Path, dest: Path) -> None:
    """Every file of a wheel or sdist under `dest` (tar members filtered as data)."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as whl:
            whl.extractall(dest)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")


def fetch(program: Program) -> Path:
    """The unpacked sdist folder of `program` (downloaded and checked on first use)."""
    cache = cache_dir()
    unpacked = cache / "src" / f"{program.package}-{program.version}"
    if (unpacked / ".ok").exists():
        return unpacked
    archive = download(program.package, program.version, program.dist, program.sha256, cache / "dists")
    unpack(archive, unpacked)
    (unpacked / ".ok").write_text(program.sha256)
    return unpacked


def program_root(program: Program) -> Path:
    return fetch(program) / program.root
