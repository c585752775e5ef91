"""Target profiles: the spellings, imports and capabilities each codemod asks for.

Targets are data (`rules/targets.toml`), not forks of the code.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache

from porter.config.ruledata import load_toml


@dataclass(frozen=True)
class Target:
    name: str
    display: str
    package: str
    runtime_module: str
    device_type: str
    indexed_devices: bool
    rank_indexed_devices: bool
    compile_backend: str
    dist_backend: str
    autocast_dtype: str
    notes: str
    tensor_is_attr: str | None = None
    device_expr: str | None = None  # set when a device is an expression, not a string
    device_import: str | None = None
    dist_init_method: str | None = None
    dist_import: str | None = None
    # torch.compile without a backend picks the target's own for tensors on the target
    compile_backend_auto: bool = False
    # the test of a branch for the target in a device switch (a template: `{torch}`, `{xr}`)
    available: str = ""

    def runtime_installed(self) -> bool:
        """Whether the target's runtime can be imported here (found, never imported)."""
        try:
            return importlib.util.find_spec(self.runtime_module) is not None
        except (ImportError, ValueError):
            return False


@lru_cache(maxsize=1)
def all_targets() -> dict[str, Target]:
    data = load_toml("targets.toml")
    return {name: Target(name=name, **fields) for name, fields in data.items() if name != PORTABLE}


PORTABLE = "portable"


@lru_cache(maxsize=1)
def portable_spellings() -> dict[str, str]:
    """`--portable`'s expression templates (`rules/targets.toml`, table `[portable]`)."""
    return dict(load_toml("targets.toml")[PORTABLE])


def get_target(name: str) -> Target:
    return all_targets()[name]
