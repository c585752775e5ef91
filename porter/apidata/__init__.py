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

# the records each target's API is made of (file stems under rules/api/): every torch the
# target accepts (its API is checked against each; a name one of them lacks is reported with
# the version), then the target's own package
TORCH_ACCEPTED = {
    # TorchNeuron's published source pins `torch~=2.10`: 2.10 and every later 2.x
    "neuron": ("2.10", "2.11", "2.12", "2.13", "2.14", "2.15"),
    # torch-tpu 0.2.0 declares torch 2.11 to 2.15
    "tpu": ("2.11", "2.12", "2.13", "2.14", "2.15"),
    # torch-xla 2.9.0 runs on torch 2.9.0 only
    "xla": ("2.9",),
}
TARGET_RECORDS = {
    "neuron": (*(f"torch-{v}" for v in TORCH_ACCEPTED["neuron"]), "torch_neuronx"),
    "tpu": (*(f"torch-{v}" for v in TORCH_ACCEPTED["tpu"]), "torch_tpu"),
    "xla": (*(f"torch-{v}" for v in TORCH_ACCEPTED["xla"]), "torch_xla"),
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
    member: Member | None  # the recorded member, when there is one (from the newest record that has it)
    missing: bool  # a record that lists the namespace whole has no such name
    lacking: tuple[str, ...] = ()  # which records lack it ("torch 2.11"), when some have it
    members: tuple[tuple[str, Member], ...] = ()  # (record, its member) for each record that has it


def _label(rec: dict) -> str:
    src = rec["source"]
    version = str(src["version"]).split("+")[0]
    return f"torch {version}" if src["package"] == "torch" else f"{src['package']} {version}"


def _member(module: str, name: str, mod: dict) -> Member | None:
    entry = mod["members"].get(name)
    if entry is not None:
        return Member(
            qualname=f"{module}.{name}",
            kind=entry["kind"],
            params=tuple(entry["params"]) if "params" in entry else None,
            stage=entry.get("stage"),
        )
    if name in mod.get("names", ()):
        return Member(f"{module}.{name}", "name", None)
    return None


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
        self.autocast_default: str | None = None
        for rec in records:
            for name, mod in rec["modules"].items():
                self.modules[name] = mod
            self.twins.update(rec.get("twins", {}))
            self.compile_backends.update(rec.get("compile_backends", ()))
            self.dist_backends.update(rec.get("dist_backends", ()))
            self.device_types.update(rec.get("device_types", ()))
            self.tensor_attrs.update(rec.get("tensor_attrs", ()))
            self.autocast_default = rec.get("autocast_default_dtype") or self.autocast_default

    @property
    def sources(self) -> list[dict]:
        return [rec["source"] for rec in self.records]

    def source_of(self, module: str) -> str:
        """`package version` of the records that hold `module` (every torch, for torch's)."""
        labels = [_label(rec) for rec in self.records if module in rec["modules"]]
        return ", ".join(labels) if labels else "no record"

    def lookup(self, qualname: str) -> Lookup | None:
        """The record of `qualname` (`torch.accelerator.synchronize`) in every record that
        covers its namespace; None when none does (nothing is known, so nothing is claimed)."""
        parts = qualname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            covering = [rec for rec in self.records if module in rec["modules"]]
            if not covering:
                continue
            name = parts[i]
            found: list[tuple[str, Member]] = []
            lacking: list[str] = []
            for rec in covering:
                mod = rec["modules"][module]
                member = _member(module, name, mod)
                if member is None and f"{module}.{name}" in self.modules:
                    member = Member(f"{module}.{name}", "module", None)
                if member is not None:
                    found.append((_label(rec), member))
                elif mod.get("complete"):
                    lacking.append(_label(rec))
            newest = found[-1][1] if found else None
            return Lookup(module, newest, bool(lacking), tuple(lacking), tuple(found))
        return None

    def exists(self, qualname: str) -> bool:
        """Whether every record that covers `qualname` shows it (a module or a member of one)."""
        if qualname in self.modules:
            return True
        found = self.lookup(qualname)
        return found is not None and found.member is not None and not found.missing


@cache
def load_record(stem: str) -> dict:
    with open(rules_dir() / "api" / f"{stem}.json", encoding="utf-8") as fh:
        return json.load(fh)


@cache
def target_api(target: str) -> TargetApi:
    return TargetApi(target, [load_record(stem) for stem in TARGET_RECORDS[target]])
