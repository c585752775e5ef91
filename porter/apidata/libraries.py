"""The Hugging Face stack's own API (transformers, accelerate, peft, trl), as recorded in
`rules/api/<package>.json` by `python -m porter.apidata.build hf` from the pinned packages.

The `hf` rule family and the library-API lint read it: which keyword arguments a class takes,
which values a keyword accepts (`TrainingArguments(ddp_backend=...)`'s choices, the optimizer
names, `Accelerator(mixed_precision=...)`), which classes are `TrainingArguments`, which model
classes support SDPA. Reading it needs no torch and none of these packages.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from functools import cache

from porter.config.ruledata import rules_dir

PACKAGES = ("transformers", "accelerate", "peft", "trl")


@dataclass(frozen=True)
class LibraryCallable:
    qualname: str
    params: tuple[dict, ...]
    closed: bool  # no **kwargs: an unknown keyword raises TypeError

    def param(self, name: str) -> dict | None:
        return next((p for p in self.params if p["name"] == name), None)

    def choices(self, name: str) -> tuple[str, ...] | None:
        p = self.param(name)
        return tuple(p["choices"]) if p is not None and p.get("choices") else None

    @property
    def signature(self) -> inspect.Signature:
        return inspect.Signature(
            [
                inspect.Parameter(
                    p["name"],
                    getattr(inspect.Parameter, p["kind"]),
                    default=None if p.get("default") else inspect.Parameter.empty,
                )
                for p in self.params
            ]
        )


class LibraryApi:
    def __init__(self, records: dict[str, dict]) -> None:
        self.records = records
        self._callables: dict[str, dict] = {}
        self._aliases: dict[str, str] = {}
        self.training_arguments: set[str] = set()
        self.trainers: set[str] = set()
        for rec in records.values():
            for name, entry in rec["callables"].items():
                self._callables[name] = entry
                defined = entry.get("defined_in")
                if defined and "." in name:
                    self._aliases.setdefault(f"{defined}.{name.rsplit('.', 1)[1]}", name)
            self.training_arguments.update(rec.get("training_arguments", ()))
            self.trainers.update(rec.get("trainers", ()))
        self.trainers.update(("transformers.Trainer", "transformers.Seq2SeqTrainer"))
        self._trainer_names = frozenset(t.rsplit(".", 1)[-1] for t in self.trainers)
        tf = records.get("transformers", {})
        self.keyword_values: dict[str, list[str]] = tf.get("keyword_values", {})
        self.default_optim: str | None = tf.get("default_optim")
        self.quantization_configs: dict[str, str] = tf.get("quantization_configs", {})
        classes = tf.get("model_classes", {})
        self._sdpa = frozenset(classes.get("sdpa", ()))
        self._no_sdpa = frozenset(classes.get("no_sdpa", ()))

    def canonical(self, qualname: str | None) -> str | None:
        """The recorded name of `qualname` (`transformers.training_args.TrainingArguments` →
        `transformers.TrainingArguments`), or None when it is not recorded."""
        if qualname is None:
            return None
        if qualname in self._callables:
            return qualname
        return self._aliases.get(qualname)

    def callable(self, qualname: str | None) -> LibraryCallable | None:
        name = self.canonical(qualname)
        if name is None:
            return None
        entry = self._callables[name]
        return LibraryCallable(name, tuple(entry["params"]), bool(entry.get("closed")))

    def is_training_arguments(self, qualname: str | None) -> bool:
        return self.canonical(qualname) in self.training_arguments

    def is_trainer(self, qualname: str | None) -> bool:
        return qualname in self.trainers or (
            (qualname or "").startswith(("transformers.", "trl."))
            and (qualname or "").rsplit(".", 1)[-1] in self._trainer_names
        )

    def supports_sdpa(self, class_name: str) -> bool | None:
        """True / False for a recorded model class; None for any other (an Auto class: the
        checkpoint decides)."""
        if class_name in self._sdpa:
            return True
        if class_name in self._no_sdpa:
            return False
        return None

    def version(self, package: str) -> str:
        return self.records[package]["source"]["version"]

    def source_of(self, qualname: str) -> str:
        package = qualname.split(".", 1)[0]
        rec = self.records.get(package)
        return f"{package} {rec['source']['version']}" if rec else "no record"


@cache
def library_api() -> LibraryApi:
    records = {}
    for package in PACKAGES:
        with open(rules_dir() / "api" / f"{package}.json", encoding="utf-8") as fh:
            records[package] = json.load(fh)
    return LibraryApi(records)
