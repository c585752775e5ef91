"""The targets' real APIs, as recorded in `rules/api/*.json` by `porter.apidata.build`.

What porter emits and what lint accepts are checked against these records, never against
porter's own idea of the targets. Reading them needs no torch: signatures are rebuilt as
`inspect.Signature` objects from the recorded parameters.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from functools import cache

from porter.config.ruledata import rules_dir

# the records each target's API is made of (file stems under rules/api/)
TARGET_RECORDS = {
    "neuron": ("torch-2.13", "torch_neuronx"),  # TorchNeuron needs torch >= 2.13
    "tpu": ("torch-2.13", "torch_tpu"),  # torch-tpu 0.2.0 was read with torch 2.13
    "xla": ("torch-2.9", "torch_xla"),  # torch-xla 2.9.0 pins torch 2.9.0
}

_INT_ONLY = re.compile(r"^(int|int \| None|None \| int|Optional\[int\])$")


@dataclass(frozen=True)
class Member:
    """One recorded name: its kind and, for a callable, its parameters."""

    qualname: str
    kind: str
    params: tuple[dict, ...] | None
    stage: str | None = None

    @property
    def signature(self) -> inspect.Signature | None:
        if self.params is None:
            return None
        return inspect.Signature(
            [
                inspect.Parameter(
                    p["name"],
                    getattr(inspect.Parameter, p["kind"]),
                    default=None if p.get("default") else inspect.Parameter.empty,
                    annotation=p.get("annotation", inspect.Parameter.empty),
                )
                for p in self.params
            ]
        )

    def int_only(self, name: str) -> bool:
        """Whether parameter `name` is declared to take an int (or None) only."""
        for p in self.params or ():
            if p["name"] == name:
                return bool(_INT_ONLY.match(p.get("annotation", "")))
        return False


@dataclass(frozen=True)
class Lookup:
    """Where a dotted name falls in a target's recorded API."""

    module: str  # the recorded namespace it is under
    member: Member | None  # the recorded member, when there is one
    missing: bool  # the namespace is recorded whole and has no such name


class TargetApi:
    def __init__(self, target: str, records: list[dict]) -> None:
        self.target = target
        self.records = records
        self.modules: dict[str, dict] = {}
        self.twins: dict[str, str] = {}
        self.compile_backends: set[str] = set()
        self.dist_backends: set[str] = set()
        self.device_types: set[str] = set()
        self.tensor_attrs: set[str] = set()
        for rec in records:
            for name, mod in rec["modules"].items():
                self.modules[name] = mod
            self.twins.update(rec.get("twins", {}))
            self.compile_backends.update(rec.get("compile_backends", ()))
            self.dist_backends.update(rec.get("dist_backends", ()))
            self.device_types.update(rec.get("device_types", ()))
            self.tensor_attrs.update(rec.get("tensor_attrs", ()))

    @property
    def sources(self) -> list[dict]:
        return [rec["source"] for rec in self.records]

    def source_of(self, module: str) -> str:
        """`package version` of the record that holds `module`."""
        for rec in self.records:
            if module in rec["modules"]:
                return f"{rec['source']['package']} {rec['source']['version']}"
        return "no record"

    def lookup(self, qualname: str) -> Lookup | None:
        """The record of `qualname` (`torch.accelerator.synchronize`); None when no recorded
        namespace covers it (nothing is known, so nothing is claimed)."""
        parts = qualname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            mod = self.modules.get(module)
            if mod is None:
                continue
            name = parts[i]
            entry = mod["members"].get(name)
            if entry is not None:
                member = Member(
                    qualname=f"{module}.{name}",
                    kind=entry["kind"],
                    params=tuple(entry["params"]) if "params" in entry else None,
                    stage=entry.get("stage"),
                )
                return Lookup(module, member, False)
            if name in mod.get("names", ()):
                return Lookup(module, Member(f"{module}.{name}", "name", None), False)
            if f"{module}.{name}" in self.modules:
                return Lookup(module, Member(f"{module}.{name}", "module", None), False)
            return Lookup(module, None, bool(mod.get("complete")))
        return None

    def exists(self, qualname: str) -> bool:
        """Whether the records show `qualname` (a module or a member of one) to exist."""
        if qualname in self.modules:
            return True
        found = self.lookup(qualname)
        return found is not None and found.member is not None


@cache
def load_record(stem: str) -> dict:
    with open(rules_dir() / "api" / f"{stem}.json", encoding="utf-8") as fh:
        return json.load(fh)


@cache
def target_api(target: str) -> TargetApi:
    return TargetApi(target, [load_record(stem) for stem in TARGET_RECORDS[target]])
