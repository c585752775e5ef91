"""Regenerate `rules/cuda_only/packages.json`: third-party packages that run only on NVIDIA
GPUs (no path on TorchNeuron, TorchTPU or PyTorch/XLA), each fact read from the package.

    python -m porter.apidata.cuda_only [--cache DIR]

Each pinned distribution (`PINNED`) is downloaded with `pip download --no-deps` into the
cache (default `$PORTER_BENCH_CACHE/cuda-only`, as the benchmarks' downloads), checked
against its sha256, and read as a zip file: never installed, imported or run. What is
recorded for each, with the file it came from:

- the libraries its shared objects link (`DT_NEEDED`, read with pyelftools): libcudart,
  libcublas, libcudnn, libnccl, libcuda ...;
- the NVIDIA libraries its Python loads by name (`CDLL("libnvidia-ml.so.1")`);
- the compiler backends it ships (`triton/backends/<name>/`);
- its unconditional requirements on a CUDA-only distribution (`Requires-Dist`), and, when
  every build it offers (its extras) requires one, the extras' requirements;
- whether any of its Python imports a target's package (`torch_neuronx`, `torch_tpu`,
  `torch_xla`): a package that does has a path on that target, so it is not CUDA-only there.

Source distributions read and found not CUDA-only (`READ_NOT_CUDA_ONLY`: a path in plain torch, checked
in their files) are recorded too, under `read_not_cuda_only`, with the rule that says what they do on each
target: porter does not report them as CUDA-only.

Packages that cannot be downloaded here (NVIDIA's own index, source-only projects) are
written by hand, from their published documentation, in `rules/cuda_only/documented.toml`.
porter reads both files through `porter.config.cuda_only` (the engine needs no pyelftools).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

OUT = Path(__file__).resolve().parents[2] / "rules" / "cuda_only" / "packages.json"

# (requirement, file on the index, sha256[, the modules it installs where its top_level.txt
# names build helpers too]): pinned, so a regeneration reads the same bytes
PINNED = (
    (
        "triton==3.9.0",
        "triton-3.9.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "1622118a038b0c6e16fa4a0305da62c8b3c15904ee1cc4d4e65846a25969e41e",
    ),
    (
        "cupy-cuda12x==14.2.0",
        "cupy_cuda12x-14.2.0-cp311-cp311-manylinux2014_x86_64.whl",
        "5fe2366cc5c61a7ee4a527ce1e8951cb89092d0fb0b5830623cf114d1942c585",
    ),
    (
        "bitsandbytes==0.50.2",
        "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl",
        "55348a9a4a21bfd99cf8c7b32fe67b4030ae5c2a05738e03c1747f65fa6ec283",
    ),
    (
        "transformer_engine_cu12==2.20.2",
        "transformer_engine_cu12-2.20.2-py3-none-manylinux_2_28_x86_64.whl",
        "7e745539686166790cb9fe2133e7c187edf6fe8627c7f7d46597888299c3f4cf",
    ),
    (
        "xformers==0.0.35",
        "xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl",
        "ccc73c7db9890224ab05f5fb60e2034f9e6c8672a10be0cf00e95cbbae3eda7c",
    ),
    (
        "nvidia-ml-py==13.615.71",
        "nvidia_ml_py-13.615.71-py3-none-any.whl",
        "959bf4adf6fe1308e4bd739e722236b0d1ec8392e2cefad33ff70c311380b9b6",
    ),
    (
        "kvikio-cu12==26.10.0",
        "kvikio_cu12-26.10.0-cp311-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        "caec409ffff80061ed9a2bd8b27cc4d206d54587ea8ff7ea20888f7999b11f4a",
    ),
    (
        "flashinfer-python==0.7.4",
        "flashinfer_python-0.7.4-py3-none-any.whl",
        "a051a62e09a2738e8b0de47a1944fd2f0f3eff01b728b662141ea660cb09dd32",
        ("flashinfer",),
    ),
    (
        "liger_kernel==0.8.5",
        "liger_kernel-0.8.5-py3-none-any.whl",
        "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9",
    ),
    (
        "fla-core==0.6.0",
        "fla_core-0.6.0-py3-none-any.whl",
        "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd",
    ),
    (
        "helion==1.5.1",
        "helion-1.5.1-py3-none-any.whl",
        "d0ee963f7ebf81a6698c4a7a6b6f7f5c2eb20922f8bafd535c0cded0260cab87",
    ),
    (
        "nccl4py==0.6.0",
        "nccl4py-0.6.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        "7b75f4943edc39522bec1d3c7c59804fa2fd87a879e5744660d723440cb62755",
    ),
    (
        "nccl-extensions==0.1.0",  # nccl.ep, nccl.m2n: NCCL's EP and M2N libraries, in nccl4py's namespace
        "nccl_extensions-0.1.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
        "30d42d0218f46e394a21c5663f09ee9bb8a90caf4d69f0040e5a9eb2fef7b8ad",
        ("nccl.ep", "nccl.m2n"),
    ),
    (
        "auto-gptq==0.7.1",  # its top_level.txt names its `tests` folder too
        "auto_gptq-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "a372d81d523b8d2f98639bbca63c0c427cab0ed55b8a57bb96706b0942aa01c9",
        (
            "auto_gptq",
            "autogptq_cuda_256",
            "autogptq_cuda_64",
            "autogptq_marlin_cuda",
            "exllama_kernels",
            "exllamav2_kernels",
        ),
    ),
    (
        "autoawq==0.2.7.post3",
        "autoawq-0.2.7.post3-py3-none-any.whl",
        "02e09d71ca961ca131ac9963a2635fe8c34eb52d6b6a104b8574056aef8f2efe",
    ),
    (
        "autoawq-kernels==0.0.9",  # autoawq's `[kernels]` extra: the CUDA extensions it prefers
        "autoawq_kernels-0.0.9-cp311-cp311-manylinux2014_x86_64.whl",
        "fe800a6538691afaa77abe7c8b2b0a121351843f048d54e11d617d604dcba48f",
    ),
    (
        "nvidia-cudnn-frontend==1.32.0",  # cuDNN's frontend (`import cudnn`); its top_level.txt names `include` too
        "nvidia_cudnn_frontend-1.32.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "c6006556017a4d1c914c52a556c71b1267f2d6a0500f742e7b4edef539878df0",
        ("cudnn",),
    ),
)

# (requirement, the modules it installs): read from the index's metadata alone (`pip install
# --dry-run --report`), for distributions whose evidence is what they require
METADATA_ONLY = (
    ("tensorrt==11.4.0.106", ("tensorrt",)),
    ("torch-tensorrt==2.14.0", ("torch_tensorrt",)),
    ("pynvml==13.0.1", ("pynvml_utils",)),
    ("nvidia-cutlass-dsl==4.8.1", ("cutlass",)),
    ("cuda-python==13.4.4", ("cuda",)),
    ("gemlite==0.6.0.post2", ("gemlite",)),  # an sdist only: its metadata is read, not its files
)

# (requirement, file on the index, sha256, the modules it installs, the rule that reports it, [(a file of
# it, what that file says)]): source distributions read and found to have a path off CUDA (kernels in plain
# torch, for the CPU), so not CUDA-only: recorded with what was read (`read_sdist`), and the rule named says
# what they do on each target. The pairs (that path, and what the rule's reason rests on) are checked in the
# sdist at each regeneration.
READ_NOT_CUDA_ONLY = (
    (
        "gptqmodel==7.7.0",
        "gptqmodel-7.7.0.tar.gz",
        "039874c39fb56ba75b750dd4870968e7fe83b6ca28890a53e94ad3c46be699d0",
        ("gptqmodel",),
        "HF017",
        (
            ("gptqmodel/nn_modules/qlinear/torch.py", "SUPPORTS_DEVICES = [DEVICE.ALL]"),
            ("gptqmodel/models/_const.py", 'CPU = "cpu"'),
            ("gptqmodel/utils/importer.py", "Unsupported selector device family"),
        ),
    ),
)

# a shared library whose link is CUDA: the runtime, the driver and NVIDIA's math / comm libraries
CUDA_LIBRARY = re.compile(
    r"^lib(?:cudart|cuda|cublas|cublasLt|cudnn\w*|nccl\w*|nvrtc|cufft|curand|cusparse|cusolver|nvJitLink|cufile|nvToolsExt|nvidia-ml|c10_cuda|torch_cuda)\.so"
)
# a Python string naming an NVIDIA library the package loads itself
LOADED = re.compile(r"""["'](lib(?:nvidia-ml|cuda|cudart|cufile|nvToolsExt)\.so(?:\.\d+)*)["']""")
# a distribution that is CUDA itself (NVIDIA's wheels, CUDA builds) or a CUDA-only compiler
CUDA_DISTRIBUTION = re.compile(
    r"^(?:nvidia-.+|cuda-python|cuda-bindings|cuda-core|cuda-tile|.+[-_]cu1\d|triton|triton-ascend)$", re.I
)
# Python that imports Triton: a Triton-based library (Triton runs on NVIDIA and AMD GPUs). The
# indent is `[^\S\n]*`, not `\s*`: from each line start `\s*` ran over every blank line after it
IMPORTS_TRITON = re.compile(r"^[^\S\n]*(?:import triton\b|from triton\b)", re.M)
# Python that imports a target's package: such a package has a path there
TARGET_PACKAGES = {"torch_neuronx": "neuron", "torch_tpu": "tpu", "torch_xla": "xla"}
TARGET_NAMED = re.compile(r"^[^\S\n]*(?:from|import)\s+(torch_neuronx|torch_tpu|torch_xla)\b", re.M)
# a requirement's distribution name and its environment marker
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*(?:;\s*(.*))?$")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def cache_dir() -> Path:
    base = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench"))
    return base / "cuda-only"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(requirement: str, file: str, sha: str, cache: Path, binary: bool = True) -> Path:
    """The pinned file, downloaded once with pip (a wheel, or with `binary=False` the sdist, of which
    pip builds the metadata alone, in its isolated build environment)."""
    path = cache / file
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary" if binary else "--no-binary",
                ":all:",
                requirement,
                "-d",
                str(cache),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    got = _sha256(path)
    if sha and got != sha:
        raise SystemExit(f"{file}: sha256 {got} differs from the pinned {sha}")
    return path


def _needed(data: bytes) -> list[str]:
    """The `DT_NEEDED` entries of an ELF shared object."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        return [
            t.needed
            for s in elf.iter_sections()
            if isinstance(s, DynamicSection)
            for t in s.iter_tags()
            if t.entry.d_tag == "DT_NEEDED"
        ]  # type: ignore[attr-defined, unused-ignore]
    except ELFError:
        return []


def _requirements(metadata: str) -> tuple[list[str], dict[str, list[str]]]:
    """(unconditional requirements, requirements per extra): distribution names only."""
    message = Parser().parsestr(metadata)
    always: list[str] = []
    extras: dict[str, list[str]] = {name: [] for name in message.get_all("Provides-Extra") or ()}
    for line in message.get_all("Requires-Dist") or ():
        m = _REQUIREMENT.match(line)
        if not m:
            continue
        name, marker = m.group(1), m.group(2) or ""
        extra = _EXTRA.search(marker)
        if extra:
            extras.setdefault(extra.group(1), []).append(name)
        elif "python_version" not in marker or "<" not in marker:
            always.append(name)
    return always, extras


def read_wheel(path: Path) -> dict:
    """What the wheel says about CUDA, from its files alone."""
    with zipfile.ZipFile(path) as whl:
        names = whl.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = whl.read(info).decode("utf-8", "replace")
        imports = _wheel_imports(whl, names)
        evidence = _linked_evidence(whl, names)
        python_evidence, target_files = _python_evidence(whl, names)
        evidence += python_evidence
    evidence += _requirement_evidence(metadata)
    message = Parser().parsestr(metadata)
    return {
        "distribution": message["Name"],
        "version": message["Version"],
        "imports": imports,
        "evidence": evidence,
        # the targets it has a path for: a file imports the target's package
        "targets": {
            t: f"{where} imports {next(p for p, n in TARGET_PACKAGES.items() if n == t)}"
            for t, where in sorted(target_files.items())
        },
    }


class _Sdist:
    """An sdist's files under their paths in the project (its top folder dropped), read as `_python_evidence`
    reads a wheel (`read`); tarfile, as the sdist is a tar.gz: nothing is extracted to disk."""

    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar
        self.members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if m.isfile() and "/" in m.name}

    def read(self, name: str) -> bytes:
        handle = self.tar.extractfile(self.members[name])
        return handle.read() if handle is not None else b""


def read_sdist(path: Path, checked: tuple[tuple[str, str], ...]) -> dict:
    """What a source distribution says about CUDA, from its files alone: its PKG-INFO's requirements, the
    compiled objects it ships, the CUDA sources it compiles, its files that import triton, and each (file,
    text) of `checked`, the path off CUDA the pin names (SystemExit where a file does not say it)."""
    with tarfile.open(path) as tar:
        sdist = _Sdist(tar)
        names = sorted(sdist.members)
        metadata = sdist.read("PKG-INFO").decode("utf-8", "replace")
        python_evidence, target_files = _python_evidence(sdist, names)
        cuda_sources = [n for n in names if n.endswith((".cu", ".cuh"))]
        for file, text in checked:
            if text not in sdist.read(file).decode("utf-8", "replace"):
                raise SystemExit(f"{path.name}: {file} no longer says {text!r}: read it again")
    compiled = [n for n in names if re.search(r"\.(?:so|pyd|dylib)(?:\.\d+)*$", n)]
    message = Parser().parsestr(metadata)
    cuda = [f"{len(compiled)} compiled objects shipped", f"{len(cuda_sources)} CUDA sources (.cu, .cuh)"]
    cuda += python_evidence + (_requirement_evidence(metadata) or ["requires no CUDA or Triton distribution"])
    return {
        "distribution": message["Name"],
        "version": message["Version"],
        "cuda": cuda,
        "checked": [f"{file}: {text}" for file, text in checked],
        "targets": {t: where for t, where in sorted(target_files.items())},
        "torch": _torch_requirement(message),
    }


def _torch_requirement(message: Message) -> str | None:
    """The torch its metadata requires on every platform (`torch>=2.14.1`): what decides whether it installs
    beside a target's torch (HF017's `[gptqmodel_on]`); None where it names none. packaging parses the line."""
    for line in message.get_all("Requires-Dist") or ():
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "torch" and requirement.marker is None:
            return str(requirement)
    return None


def _wheel_imports(whl: zipfile.ZipFile, names: list[str]) -> list[str]:
    """The top-level packages the wheel installs: its top_level.txt, else its folders."""
    top = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
    if top is not None:
        return [
            n for n in whl.read(top).decode().split() if n and not n.startswith("_") and "/" not in n and n != "example"
        ]
    return sorted(
        {n.split("/")[0] for n in names if "/" in n and not n.split("/")[0].endswith((".dist-info", ".data"))}
    )


def _linked_evidence(whl: zipfile.ZipFile, names: list[str]) -> list[str]:
    """The shared objects that link CUDA libraries (DT_NEEDED), the first four by name."""
    evidence: list[str] = []
    linked: dict[str, list[str]] = {}
    for name in names:
        if re.search(r"\.so(?:\.\d+)*$", name):
            for lib in _needed(whl.read(name)):
                if CUDA_LIBRARY.match(lib):
                    linked.setdefault(name, []).append(lib)
    for so, libs in sorted(linked.items())[:4]:
        evidence.append(f"{so} links {', '.join(sorted(set(libs)))}")
    if len(linked) > 4:
        evidence.append(f"... and {len(linked) - 4} more shared objects link CUDA libraries")
    return evidence


def _python_evidence(whl: zipfile.ZipFile | _Sdist, names: list[str]) -> tuple[list[str], dict[str, str]]:
    """What its Python source shows: the CUDA libraries it loads, the files that import triton (when it does
    not ship triton itself), compiler backends a vendored triton ships; and, per target, the
    first file that names the target's package."""
    evidence: list[str] = []
    loads: dict[str, str] = {}
    target_files: dict[str, str] = {}  # target -> the first file that names its package
    python = [n for n in names if n.endswith(".py")]
    triton_files = 0
    for name in python:
        text = whl.read(name).decode("utf-8", "replace")
        triton_files += bool(IMPORTS_TRITON.search(text))
        for m in LOADED.finditer(text):
            loads.setdefault(m.group(1), name)
        for m in TARGET_NAMED.finditer(text):
            target_files.setdefault(TARGET_PACKAGES[m.group(1)], name)
    for lib, where in sorted(loads.items())[:3]:
        evidence.append(f"{where} loads {lib}")
    if triton_files and not any(n.startswith("triton/") for n in names):
        # the count alone: a file that imports triton is read, not what its kernels are (gptqmodel 7.7.0: 17
        # of 447 files, beside 122 CUDA sources and torch kernels for every device; twenty-fifth rleft2 read)
        evidence.append(f"{triton_files} of its {len(python)} Python files import triton")
    backends = sorted({n.split("/")[2] for n in names if n.startswith("triton/backends/") and n.count("/") > 2})
    if backends:
        evidence.append(f"ships compiler backends for: {', '.join(backends)} (triton/backends/), none for a target")
    return evidence, target_files


def _requirement_evidence(metadata: str) -> list[str]:
    """What its METADATA requires: CUDA distributions always, or in every torch build it offers."""
    evidence: list[str] = []
    always, extras = _requirements(metadata)
    cuda_always = [r for r in always if CUDA_DISTRIBUTION.match(r)]
    if cuda_always:
        evidence.append(f"requires {', '.join(cuda_always)}")
    builds = {
        e: rs for e, rs in extras.items() if any(r.lower() == "torch" or r.lower().startswith("torch") for r in rs)
    }
    if builds and all(any(CUDA_DISTRIBUTION.match(r) for r in rs) for rs in builds.values()):
        per = "; ".join(
            f"[{e}] {', '.join(r for r in rs if CUDA_DISTRIBUTION.match(r))}" for e, rs in sorted(builds.items())
        )
        evidence.append(f"every build it offers requires a Triton or CUDA distribution: {per}")
    return evidence


def read_metadata(requirement: str, imports: tuple[str, ...]) -> dict:
    """What a distribution requires, from the index's metadata (nothing downloaded but it)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--dry-run",
            "--no-deps",
            "--ignore-installed",
            "--report",
            "-",
            requirement,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=900,
    )
    item = json.loads(proc.stdout)["install"][0]
    meta = item["metadata"]
    always = [r for r in (_REQUIREMENT.match(x) for x in meta.get("requires_dist") or () if "extra ==" not in x) if r]
    cuda = [m.group(1) for m in always if CUDA_DISTRIBUTION.match(m.group(1))]
    archive = item["download_info"]
    return {
        "distribution": meta["name"],
        "version": meta["version"],
        "imports": list(imports),
        "evidence": [f"requires {', '.join(cuda)}"] if cuda else [],
        "targets": {},
        "file": archive["url"].rsplit("/", 1)[-1],
        "sha256": archive.get("archive_info", {}).get("hashes", {}).get("sha256", ""),
        "read": "metadata only (pip install --dry-run --report)",
    }


def build(cache: Path) -> dict:
    packages = []
    for pinned in PINNED:
        requirement, file, sha = pinned[:3]
        path = download(requirement, file, sha, cache)
        entry = read_wheel(path)
        if len(pinned) > 3:
            entry["imports"] = list(pinned[3])
        entry["file"] = file
        entry["sha256"] = _sha256(path)
        if not entry["evidence"]:
            raise SystemExit(f"{file}: no CUDA evidence found: take it out of PINNED or write it up by hand")
        packages.append(entry)
    for requirement, names in METADATA_ONLY:
        entry = read_metadata(requirement, names)
        if not entry["evidence"]:
            raise SystemExit(f"{requirement}: its metadata requires no CUDA distribution: take it out of METADATA_ONLY")
        packages.append(entry)
    cleared = [read_cleared(pinned, cache) for pinned in READ_NOT_CUDA_ONLY]
    return {
        "source": {
            "how": "pip download --no-deps of each pinned wheel; read as a zip: METADATA Requires-Dist, DT_NEEDED "
            "of its shared objects (pyelftools), the NVIDIA libraries its Python loads, triton/backends; nothing "
            "installed or imported",
            "generated": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
            "by": "python -m porter.apidata.cuda_only",
        },
        "packages": packages,
        "read_not_cuda_only": cleared,
    }


def read_cleared(pinned: tuple, cache: Path) -> dict:
    """A `READ_NOT_CUDA_ONLY` entry, read from its sdist (downloaded once: pip builds only its metadata)."""
    requirement, file, sha, imports, rule, checked = pinned
    path = download(requirement, file, sha, cache, binary=False)
    entry = read_sdist(path, checked)
    return {**entry, "imports": list(imports), "reported_by": rule, "file": file, "sha256": _sha256(path)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cache", type=Path, default=None, help="where the wheels are kept (default: $PORTER_BENCH_CACHE/cuda-only)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = build(args.cache or cache_dir())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"wrote {args.out} ({len(data['packages'])} packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
