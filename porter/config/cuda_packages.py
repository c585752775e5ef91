"""Third-party packages that run only on NVIDIA GPUs, with the evidence for each.

Two files under `rules/cuda_only/`: `packages.json`, read from the real packages by
`python -m porter.apidata.cuda_only` (their wheels' shared-library links, metadata, the
libraries they load), and `documented.toml`, written from the published documentation of
the packages that do not install here. Importing one of a package's modules (or a
submodule) is using CUDA-only code: the guard analysis (porter/codemods/guards.py) keeps
the code that reaches it on CUDA. A package whose evidence shows a path on a target (it
imports `torch_tpu`, say) is not CUDA-only on that target, unless that path is one a program
must ask for (`[[opt_in]]` in documented.toml: Helion's Pallas backend).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from porter.config.ruledata import load_toml, rules_dir

FOLDER = "cuda_only"


@dataclass(frozen=True)
class CudaPackage:
    distribution: str
    version: str
    imports: tuple[str, ...]
    evidence: tuple[str, ...]
    source: str  # where the evidence was read: the pinned file, or the documentation page
    targets: frozenset[str] = frozenset()  # targets it has a path on: not CUDA-only there
    # a wheel read (packages.json) whose evidence names no Triton: no Python file of it imports triton
    # and it requires no Triton distribution (nvidia-cutlass-dsl's `cute.jit` is CuTe DSL's, not Triton's)
    without_triton: bool = False

    def covers(self, module: str) -> str | None:
        """The import of this package that `module` is (or is under), if any."""
        return next((m for m in self.imports if module == m or module.startswith(m + ".")), None)


@lru_cache(maxsize=1)
def cuda_packages() -> tuple[CudaPackage, ...]:
    """Every package the two files name, read ones first."""
    out: list[CudaPackage] = []
    read = json.loads((rules_dir() / FOLDER / "packages.json").read_text())
    written = load_toml(f"{FOLDER}/documented.toml")
    asked = opt_in_targets(written)
    for p in read["packages"]:
        out.append(
            CudaPackage(
                distribution=p["distribution"],
                version=p["version"],
                imports=tuple(p["imports"]),
                evidence=tuple(p["evidence"]),
                source=f"{p['file']} (sha256 {p['sha256'][:12]}…), "
                f"{read['source']['by']} on {read['source']['generated']}",
                targets=frozenset(p.get("targets", {})) - asked.get(p["distribution"], frozenset()),
                without_triton=not any("triton" in e.lower() for e in (p["distribution"], *p["evidence"])),
            )
        )
    for p in written.get("package", ()):
        out.append(
            CudaPackage(
                distribution=p["distribution"],
                version=p["version"],
                imports=tuple(p["imports"]),
                evidence=(p["evidence"],),
                source=f"{p['source']} (read {p['read']})",
                targets=frozenset(p.get("targets", ())),
            )
        )
    return tuple(out)


def opt_in_targets(written: dict[str, Any]) -> dict[str, frozenset[str]]:
    """documented.toml's `[[opt_in]]`: per distribution, the targets whose path (read from its
    files) its code takes only when a program asks for it (Helion's Pallas backend on tpu): not
    counted as a path there, since porter cannot see the program ask."""
    out: dict[str, set[str]] = {}
    for row in written.get("opt_in", ()):
        out.setdefault(row["distribution"], set()).add(row["target"])
    return {name: frozenset(targets) for name, targets in out.items()}


@lru_cache(maxsize=1)
def ported_imports() -> frozenset[str]:
    """Modules with CUDA-only parts whose APIs porter ports (LIB rules) instead of keeping."""
    return frozenset(load_toml(f"{FOLDER}/documented.toml").get("ported", {}).get("imports", ()))


@lru_cache(maxsize=4)
def cuda_only_modules(target: str | None) -> tuple[str, ...]:
    """The modules that are CUDA-only on `target` (None: on every target), longest first."""
    ported = ported_imports()
    found = {
        m for p in cuda_packages() if target is None or target not in p.targets for m in p.imports if m not in ported
    }
    return tuple(sorted(found, key=lambda m: (-len(m), m)))


@lru_cache(maxsize=1)
def package_heads() -> frozenset[str]:
    """The top-level names of the packages porter keeps or reports as CUDA-only (these, and
    kernels.toml's libraries, KERN003): a project's own module of one of these names is not it."""
    rows = load_toml("kernels.toml").get("library", [])
    modules = (*cuda_only_modules(None), *(prefix for row in rows for prefix in row["prefixes"]))
    return frozenset(m.split(".")[0] for m in modules)


def package_of(module: str) -> CudaPackage | None:
    """The package a module belongs to, if it is one of these."""
    return next((p for p in cuda_packages() if p.covers(module)), None)


def import_tokens(modules: Iterable[str]) -> tuple[bytes, ...]:
    """The bytes an import of one of `modules` shows, for a prefilter: the top-level name, or
    for a short one (`fla`, `cuda`) `import fla` / `from fla`, which `flag` does not contain.
    A token that holds a shorter one (`hybrid_ep_cpp`, `hybrid_ep`) is left out."""
    out: list[bytes] = []
    for module in modules:
        head = module.split(".")[0]
        if len(head) <= 4:
            out.extend((f"import {head}".encode(), f"from {head}".encode()))
        else:
            out.append(head.encode())
    unique = set(out)
    return tuple(t for t in dict.fromkeys(out) if not any(u != t and u in t for u in unique))


ATEN_OPS = "aten_ops.json"


@lru_cache(maxsize=4)
def cuda_only_aten_ops(target: str | None) -> dict[str, str]:
    """torch's aten ops with a CUDA kernel and no portable one (none for the CPU or a Composite
    key), as each is spelled in Python (`torch.ops.aten._weight_int4pack_mm`, and
    `torch._weight_int4pack_mm` where torch exports it) -> why, read from the dispatcher of
    the installed torch by `python -m porter.apidata.aten_ops`. None: on every target (an op
    with a kernel for a target's dispatch key is not CUDA-only there)."""
    data = json.loads((rules_dir() / FOLDER / ATEN_OPS).read_text())
    source = data["source"]
    out: dict[str, str] = {}
    for op, facts in data["ops"].items():
        if target is not None and target in facts.get("targets", ()):
            continue
        why = f"aten::{op} has kernels for {', '.join(facts['kernels'])} only (torch {source['version']}'s dispatcher)"
        out[f"torch.ops.aten.{op}"] = why
        if facts.get("torch"):
            out[f"torch.{op}"] = why
    return out
