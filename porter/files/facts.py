"""The facts the files around the Python are ported with, read from the rule data.

`rules/environments.toml`: what each target installs, the torch it accepts, its images, run
options, device tool and visible-devices variable, each with its source. `rules/deps.toml`'s
`[[package]]` table: the packages no target has a build of, with their evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from porter.config.ruledata import load_toml


@dataclass(frozen=True)
class Environment:
    """One target's environment (a table of rules/environments.toml)."""

    name: str
    data: dict[str, Any]

    def get(self, key: str) -> str:
        value = self.data.get(key, "")
        return value if isinstance(value, str) else ""

    @property
    def torch_releases(self) -> tuple[str, ...]:
        return tuple(self.data.get("torch_releases", ()))

    def packages(self, torch_minor: str | None = None) -> tuple[str, ...]:
        """The requirement lines of the target's packages, `{torch}` filled in."""
        minor = torch_minor or self.get("torch_default")
        return tuple(p.replace("{torch}", minor) for p in self.data.get("packages", ()))

    def package_names(self) -> tuple[str, ...]:
        return tuple(_name_of(p) for p in self.data.get("packages", ()))


def _name_of(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return canonical(match.group(0)) if match else requirement


@lru_cache(maxsize=4096)  # a file names few packages, many times (200,000 lines of one name)
def canonical(name: str) -> str:
    """PEP 503 normalised name: `Flash_Attn` and `flash-attn` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=4)
def environment(target: str) -> Environment:
    return Environment(target, dict(load_toml("environments.toml")[target]))


@dataclass(frozen=True)
class Package:
    """A package with no build for the targets."""

    names: tuple[str, ...]
    modules: tuple[str, ...]
    evidence: str
    advice: str
    conda_only: bool
    prefix: str = ""
    suffixes: tuple[str, ...] = ()

    def matches(self, name: str, conda: bool = False) -> bool:
        if self.conda_only and not conda:
            return False
        name = canonical(name)
        if self.prefix:
            return name.startswith(self.prefix) and name.endswith(self.suffixes)
        return name in self.names


@lru_cache(maxsize=1)
def cuda_only_packages() -> tuple[Package, ...]:
    out = []
    for row in load_toml("deps.toml").get("package", []):
        out.append(
            Package(
                names=tuple(canonical(n) for n in row.get("names", ())),
                modules=tuple(row.get("modules", ())),
                evidence=row["evidence"],
                advice=row["advice"],
                conda_only=bool(row.get("conda", False)),
                prefix=row.get("prefix", ""),
                suffixes=tuple(row.get("suffixes", ())),
            )
        )
    return tuple(out)


@lru_cache(maxsize=4096)
def cuda_only_package(name: str, conda: bool = False) -> Package | None:
    for package in cuda_only_packages():
        if package.matches(name, conda):
            return package
    return None


@lru_cache(maxsize=1)
def cuda_only_modules() -> tuple[str, ...]:
    """Every module a CUDA-only package provides (what the run's Python is scanned for)."""
    return tuple(sorted({m for p in cuda_only_packages() for m in p.modules}))
