"""Which line changed which shape: the evidence behind an XLA recompile.

XLA compiles a graph per set of shapes, so a shape that changes between two executions of the
same code (a sequence grown by one token with `torch.cat` in a sampling loop, a last batch of
another size) compiles again. torch_xla's own analysis (PT_XLA_DEBUG_LEVEL) names the line that
*triggered* each execution, not the line that made the new shape. :class:`ShapeLog` records,
for the graph being built, the output shapes of the torch calls on the device by source line;
at each execution (`torch_xla.sync()`, `xm.mark_step()`, or a host sync such as `.item()` on a
device tensor) it reads XLA's compile counter, and when the execution compiled it compares the
graph with the last one executed from the same line: the lines whose shapes differ are the
ones that changed the graph. The recorder keeps them per optimizer step beside the step's
compile count; porter.verify.gaps ties them to the recompiles.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from porter.verify.probes import HOST_SYNC_CALLS, user_location

MAX_KEYS = 5_000  # distinct (call, shape) pairs kept per graph
SHOWN = 8  # shape changers kept per step
SHOWN_SHAPES = 3  # shapes shown per line and side
# calls that make a longer tensor from a shorter one: where a sequence grown in a loop grows
# (every later call on it changes shape too, but only in consequence)
GROWS = {
    "torch.cat",
    "torch.concat",
    "torch.concatenate",
    "torch.stack",
    "torch.hstack",
    "torch.vstack",
    "torch.column_stack",
    "F.pad",
}


def _name(func) -> str:
    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or str(func)
    if "." in qual and qual.split(".", 1)[0] in ("TensorBase", "Tensor"):
        return "." + qual.split(".", 1)[1] + "()"
    if qual.startswith("_VariableFunctionsClass."):
        qual = qual.split(".", 1)[1]
    module = getattr(func, "__module__", "") or ""
    return f"{'F' if module.endswith('functional') else 'torch'}.{qual}"


class ShapeLog(TorchFunctionMode):
    def __init__(self, root: str, compiles: Callable[[], int], device_type: str = "xla"):
        super().__init__()
        self.root = root.rstrip("/") + "/"
        self.compiles = compiles
        self.device_type = device_type
        self.names: dict = {}
        self.graph: dict[tuple[str, tuple], str | None] = {}  # (call, shape) -> line
        self.last_count = compiles()
        self.last_graph: dict[str | None, dict[tuple[str, str], set]] = {}  # trigger -> lines
        self.step: dict[tuple[str, str], dict] = {}  # (call, line) -> recompiles this step
        self.restore: list[tuple[Any, str, Any]] = []

    # ------------------------------------------------------------------ executions
    def install_syncs(self) -> None:
        """torch_xla.sync / xm.mark_step mark the end of a graph."""
        import torch_xla
        import torch_xla.core.xla_model as xm

        for owner, name in ((torch_xla, "sync"), (xm, "mark_step")):
            original = getattr(owner, name)

            def marked(*args, _original=original, **kwargs):
                out = _original(*args, **kwargs)
                self.executed()
                return out

            self.restore.append((owner, name, original))
            setattr(owner, name, marked)

    def uninstall_syncs(self) -> None:
        for owner, name, original in reversed(self.restore):
            setattr(owner, name, original)
        self.restore.clear()

    def executed(self) -> None:
        n = self.compiles()
        compiled, self.last_count = n - self.last_count, n
        trigger = user_location(self.root)
        lines: dict[tuple[str, str], set] = {}
        for (name, shape), loc in self.graph.items():
            if loc is not None:
                lines.setdefault((name, loc), set()).add(shape)
        previous = self.last_graph.get(trigger)
        if compiled and previous is not None:
            for key, shapes in lines.items():
                before = previous.get(key)
                if before is not None and before != shapes:
                    entry = self.step.setdefault(
                        key,
                        {
                            "call": key[0],
                            "location": key[1],
                            "trigger": trigger,
                            "recompiles": 0,
                            "grows": key[0] in GROWS,
                            "before": _shapes_shown(before, shapes),
                            "first": _shapes_shown(shapes, before),
                        },
                    )
                    entry["recompiles"] += compiled
                    entry["last"] = _shapes_shown(shapes, before)
        self.last_graph[trigger] = lines
        self.graph = {}

    # ------------------------------------------------------------------ the mode
    def __torch_function__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.device.type == self.device_type:
            name = self.names.get(func)
            if name is None:
                name = self.names[func] = _name(func)
            key = (name, tuple(out.shape))
            if key not in self.graph and len(self.graph) < MAX_KEYS:
                self.graph[key] = user_location(self.root)
        elif (
            func in HOST_SYNC_CALLS
            and args
            and isinstance(args[0], torch.Tensor)
            and args[0].device.type == self.device_type
        ):
            self.executed()  # a value read on the host ran the graph built so far
        return out

    def end_step(self) -> list[dict]:
        """The lines that changed a shape and recompiled during the step that ended."""
        order = {k: i for i, k in enumerate(self.step)}  # the order the graph ran them in
        lines = sorted(
            self.step.values(), key=lambda e: (not e["grows"], -e["recompiles"], order[(e["call"], e["location"])])
        )[:SHOWN]
        self.step = {}
        return lines


def _shapes_shown(shapes: set, other: set) -> list:
    """The shapes a line's calls gave, for the report: the ones `other` lacks first, so that the
    three shown are never the ones both sides share, with "…" where more were left out."""

    def order(s: tuple) -> tuple:
        return (s in other, len(s), s)

    ordered = sorted(shapes, key=order)
    if len(ordered) == 1:
        return list(ordered[0])
    return [list(s) for s in ordered[:SHOWN_SHAPES]] + (["…"] if len(ordered) > SHOWN_SHAPES else [])


def xla_compiles() -> int:
    met = sys.modules["torch_xla.debug.metrics"]
    return int(met.counter_value("UncachedCompile") or 0)


__all__ = ["ShapeLog", "xla_compiles"]
