"""Flattening nested outputs and recording every submodule's output with forward hooks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, cast

import torch


def by_key(o: Mapping) -> list[tuple[Any, Any]]:
    """A mapping's items, a plain dict's (of string keys) by key: its order is how the program
    built it, and a port that built its output dict in another order (the same tensors under
    the same keys, as torch.testing.assert_close pairs them) failed at the model's output
    (twenty-seventh read). An OrderedDict or a ModelOutput keeps its own order."""
    items = list(o.items())
    if type(o) is dict and all(isinstance(k, str) for k in o):
        items.sort(key=lambda kv: kv[0])
    return items


def flatten(obj, prefix: str = "out") -> list[tuple[str, torch.Tensor]]:
    """Tensors in nested tuples / lists / dicts (`by_key`) / dataclasses, with their paths."""
    out: list[tuple[str, torch.Tensor]] = []

    def walk(o, path: str) -> None:
        if isinstance(o, torch.Tensor):
            out.append((path, o))
        elif isinstance(o, Mapping):
            for k, v in by_key(o):
                walk(v, f"{path}[{k!r}]")
        elif isinstance(o, (tuple, list)):
            for i, v in enumerate(o):
                walk(v, f"{path}[{i}]")
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            for f in dataclasses.fields(o):
                walk(getattr(o, f.name), f"{path}.{f.name}")

    walk(obj, prefix)
    return out


def tree_map_tensors(fn: Callable[[torch.Tensor], torch.Tensor], obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, Mapping):
        # a Mapping subclass made from a dict (an OrderedDict, a ModelOutput), as the model returned it
        return (
            cast(Any, type(obj))({k: tree_map_tensors(fn, v) for k, v in obj.items()})
            if type(obj) is not dict
            else {k: tree_map_tensors(fn, v) for k, v in obj.items()}
        )
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(tree_map_tensors(fn, v) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(tree_map_tensors(fn, v) for v in obj)
    return obj


def normalize_name(name: str) -> str:
    """Module / parameter names with torch.compile's wrapper prefix removed."""
    return name.replace("_orig_mod.", "")


class ActivationRecorder:
    """Forward hooks on every named submodule; keeps a clone of each call's tensor outputs
    (clones, so later in-place ops cannot change what was recorded) in execution order."""

    def __init__(self, model: torch.nn.Module):
        self.order: list[str] = []
        self.outputs: dict[str, list[torch.Tensor]] = {}
        self._calls: dict[str, int] = {}
        self._handles = []
        for name, module in model.named_modules():
            if not name:
                continue
            self._handles.append(module.register_forward_hook(self._hook(normalize_name(name))))

    def _hook(self, name: str):
        def hook(module, inputs, output) -> None:
            n = self._calls.get(name, 0) + 1
            self._calls[name] = n
            key = name if n == 1 else f"{name}#{n}"
            self.order.append(key)
            self.outputs[key] = [t.detach().clone() for _, t in flatten(output)]

        return hook

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


__all__ = ["flatten", "tree_map_tensors", "normalize_name", "ActivationRecorder"]
