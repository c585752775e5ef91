"""Performance probes run inside a side's process: step timing, host-sync and dynamic-shape
op counting (a TorchFunctionMode), PyTorch/XLA metrics, Neuron metrics, and graph breaks
under torch.compile (torch._dynamo.explain)."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import torch
from torch.overrides import TorchFunctionMode

from porter.verify import OWN

T = torch.Tensor
HOST_SYNC_CALLS = {
    T.item: ".item()",
    T.tolist: ".tolist()",
    T.cpu: ".cpu()",
    T.numpy: ".numpy()",
    T.__bool__: "bool(tensor)",
    T.__int__: "int(tensor)",
    T.__float__: "float(tensor)",
    T.__repr__: "repr/print(tensor)",
    T.__format__: "format(tensor)",
}
DYNAMIC_SHAPE_CALLS = {
    torch.nonzero: "torch.nonzero",
    T.nonzero: ".nonzero()",
    torch.argwhere: "torch.argwhere",
    T.argwhere: ".argwhere()",
    torch.unique: "torch.unique",
    T.unique: ".unique()",
    torch.unique_consecutive: "torch.unique_consecutive",
    T.unique_consecutive: ".unique_consecutive()",
    torch.masked_select: "torch.masked_select",
    T.masked_select: ".masked_select()",
    torch.repeat_interleave: "torch.repeat_interleave",
    T.repeat_interleave: ".repeat_interleave()",
}


# a cast by hand to a half-precision dtype: `.to(dtype)`, `.to(other)`, `.type(...)`, `.type_as(other)`,
# `.half()`, `.bfloat16()` (autocast casts inside the dispatcher, below a TorchFunctionMode: its
# casts are never seen here)
HALF = {torch.float16: "float16", torch.bfloat16: "bfloat16"}


# `.type("torch.HalfTensor")` and its device forms (`torch.cuda.BFloat16Tensor`), by class name
TYPE_NAMES = {"HalfTensor": torch.float16, "BFloat16Tensor": torch.bfloat16}


def _dtype_given(func, args, kwargs) -> torch.dtype | None:
    """The dtype `.to`, `.type` or `.type_as` is asked for: a dtype, another tensor's (`.to(other)`,
    `.type_as(other)`: the twenty-fourth tleft read left them uncounted) or a type's name."""
    for a in (*args[1:], kwargs.get("dtype"), kwargs.get("tensor"), kwargs.get("other")):
        if isinstance(a, torch.dtype):
            return a
        if isinstance(a, torch.Tensor) and func is not T.type:
            return a.dtype
        if isinstance(a, str) and func is T.type:
            return TYPE_NAMES.get(a.rsplit(".", 1)[-1])
    return None


def _cast_to(func, args, kwargs) -> str | None:
    """The half-precision dtype a call casts a wider floating-point tensor to, else None."""
    dtype: torch.dtype | None
    if func is T.half or func is T.bfloat16:
        dtype = torch.float16 if func is T.half else torch.bfloat16
    elif func is T.to or func is T.type or func is T.type_as:
        dtype = _dtype_given(func, args, kwargs)
    else:
        return None
    src = args[0] if args else None
    if dtype not in HALF or not isinstance(src, torch.Tensor) or src.dtype not in (torch.float32, torch.float64):
        return None
    return HALF[dtype]


def caller_in(root: str) -> str | None:
    """file:line of the frame that made the call, where it is in the user's tree (not a library's
    frame that the user's line called: `user_location`)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(OWN):
        frame = frame.f_back
    fname = frame.f_code.co_filename if frame is not None else ""
    return f"{os.path.relpath(fname, root)}:{frame.f_lineno}" if frame is not None and fname.startswith(root) else None


def user_location(root: str) -> str | None:
    """file:line of the innermost frame inside the user's tree."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        fname = frame.f_code.co_filename
        if fname.startswith(root):
            return f"{os.path.relpath(fname, root)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


class SyncCounterMode(TorchFunctionMode):
    """Counts host syncs (.item(), .tolist(), .cpu(), bool(t) …) and data-dependent-shape ops
    (nonzero, unique, masked_select, boolean-mask indexing …), with their source lines."""

    def __init__(self, root: str, device: str | None = None):
        super().__init__()
        self.root = root.rstrip("/") + "/"
        # the side's device type: where it is an accelerator, `.item()` of a CPU tensor (torch.optim's
        # step counters, a CPU-side metric) waits for no device; where it is the CPU (a reference
        # standing in for CUDA), its tensors would be CUDA's, and only a copy to the CPU is spared
        self.accelerator = device not in (None, "cpu")
        self.host_syncs: Counter = Counter()
        self.dynamic: Counter = Counter()
        # the program's own casts to float16/bfloat16, by line: beside autocast, the precision
        # line cannot tell them from its casts (tracecmp._hand_casts)
        self.casts: Counter = Counter()

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = HOST_SYNC_CALLS.get(func)
        if name is None and func is T.to and args and _to_cpu(args[1:], kwargs):
            name = ".to('cpu')"
        if (name in (".to('cpu')", ".cpu()") or self.accelerator) and _on_cpu(args):
            name = None  # a CPU tensor copied to the CPU, or read on a side that runs elsewhere, waits for nothing
        if name is not None:
            self.host_syncs[(name, user_location(self.root))] += 1
        else:
            dyn = DYNAMIC_SHAPE_CALLS.get(func)
            if dyn is None and func is torch.where and len(args) == 1 and not kwargs:
                dyn = "torch.where(cond)"
            if dyn is None and func is T.__getitem__ and len(args) == 2 and _bool_index(args[1]):
                dyn = "boolean-mask indexing"
            if dyn is not None:
                self.dynamic[(dyn, user_location(self.root))] += 1
            elif (half := _cast_to(func, args, kwargs)) is not None and (at := caller_in(self.root)):
                self.casts[(f"cast to {half}", at)] += 1
        return func(*args, **kwargs)

    def to_dict(self, steps: int) -> dict:
        def rows(counter: Counter) -> list[dict]:
            return [
                {"call": call, "location": loc, "count": n, "per_step": n / steps}
                for (call, loc), n in counter.most_common()
            ]

        user = sum(n for (_, loc), n in self.host_syncs.items() if loc is not None)
        return {
            "steps": steps,
            "host_syncs": rows(self.host_syncs),
            "host_syncs_per_step": sum(self.host_syncs.values()) / steps,
            "user_host_syncs_per_step": user / steps,
            "library_host_syncs_per_step": (sum(self.host_syncs.values()) - user) / steps,
            "dynamic_shape_ops": rows(self.dynamic),
            "casts": rows(self.casts),
        }


def _to_cpu(args, kwargs) -> bool:
    dev = kwargs.get("device", args[0] if args else None)
    if isinstance(dev, torch.device):
        return dev.type == "cpu"
    return isinstance(dev, str) and dev.split(":")[0] == "cpu"


def _on_cpu(args) -> bool:
    return bool(args) and isinstance(args[0], torch.Tensor) and args[0].device.type == "cpu"


def _bool_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in items)


# ---------------------------------------------------------------- PyTorch/XLA metrics
class XlaMetrics:
    """torch_xla.debug.metrics around the timed steps."""

    def __init__(self) -> None:
        import torch_xla.debug.metrics as met

        self.met = met
        met.clear_all()
        self.marks: dict[str, int] = {}

    def compiles(self) -> int:
        return int(self.met.counter_value("UncachedCompile") or 0)

    def mark(self, name: str) -> None:
        self.marks[name] = self.compiles()

    def summary(self, steps: int) -> dict:
        met = self.met
        counters = {n: int(met.counter_value(n) or 0) for n in met.counter_names()}
        fallbacks = {n: c for n, c in counters.items() if n.startswith("aten::") and n != "aten::_local_scalar_dense"}
        d2h = met.metric_data("TransferFromDeviceTime")
        compile_time = met.metric_data("CompileTime")
        return {
            "source": "torch_xla.debug.metrics",
            "steps": steps,
            "uncached_compiles": self.compiles(),
            "cached_compiles": counters.get("CachedCompile", 0),
            "compiles_first_step": self.marks.get("first", 0),
            "compiles_during_warmup": self.marks.get("warm", 0) - self.marks.get("first", 0),
            "recompiles_after_warmup": self.compiles() - self.marks.get("warm", 0),
            "compile_time_s": (compile_time[1] / 1e9) if compile_time else 0.0,
            "cpu_fallback_ops": [
                {"op": n.removeprefix("aten::"), "count": c, "per_step": c / steps}
                for n, c in sorted(fallbacks.items(), key=lambda kv: -kv[1])
            ],
            "executed_fallback_ops": list(met.executed_fallback_ops()),
            "item_calls": counters.get("aten::_local_scalar_dense", 0),
            "device_to_host_transfers": int(d2h[0]) if d2h else 0,
            "device_to_host_transfers_per_step": (d2h[0] / steps) if d2h else 0.0,
        }


def neuron_metrics() -> dict:
    """Fallback ops and dynamo compile records from torch-neuronx (Neuron hardware only)."""
    out: dict = {"source": "torch_neuronx"}
    try:
        import torch_neuronx

        out["cpu_fallback_ops"] = [
            {"op": str(op), "count": None, "per_step": None} for op in torch_neuronx.get_fallback_ops()
        ]
    except Exception as exc:
        out["cpu_fallback_ops_error"] = f"{type(exc).__name__}: {exc}"
    try:
        out["dynamo_metrics"] = repr(torch.neuron.get_dynamo_metrics())[:4000]  # type: ignore[attr-defined]  # registered by torch_neuronx
    except Exception as exc:
        out["dynamo_metrics_error"] = f"{type(exc).__name__}: {exc}"
    return out


# ---------------------------------------------------------------- timing
def time_steps(
    step: Callable[[], object],
    sync: Callable[[], None],
    *,
    warmup: int,
    repeats: int,
    marks: Callable[[str], None] | None = None,
) -> dict:
    """First step (compile included), then `warmup` steps, then `repeats` timed steps, each
    followed by a device sync. What a step returns (its loss) is kept until that sync, so on
    XLA it is an output of the step's graph. Returns seconds."""
    t0 = time.perf_counter()
    out = step()
    sync()
    first = time.perf_counter() - t0
    if marks:
        marks("first")
    for _ in range(warmup):
        out = step()
        sync()
    if marks:
        marks("warm")
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = step()
        sync()
        samples.append(time.perf_counter() - t0)
    del out
    return {
        "first_step_s": first,
        "steady_step_s": statistics.median(samples),
        "steady_samples_s": samples,
        "warmup_steps": warmup,
        "repeats": repeats,
    }


# ---------------------------------------------------------------- graph breaks
def explain_graph_breaks(fn: Callable, args: tuple, kwargs: dict, root: str) -> dict:
    """torch._dynamo.explain on the model's forward. On failure the report says so."""
    import torch._dynamo as dynamo

    root = root.rstrip("/") + "/"
    dynamo.reset()
    try:
        with torch.no_grad():
            ex = dynamo.explain(fn)(*args, **kwargs)
    except Exception as exc:
        return {"ran": False, "error": f"{type(exc).__name__}: {str(exc)[:1000]}"}
    finally:
        dynamo.reset()
    breaks = []
    for reason in ex.break_reasons:
        stack = list(getattr(reason, "user_stack", []) or [])
        loc = None
        for frame in reversed(stack):
            if frame.filename.startswith(root):
                loc = f"{os.path.relpath(frame.filename, root)}:{frame.lineno}"
                break
        if loc is None and stack:
            loc = f"{stack[-1].filename}:{stack[-1].lineno}"
        text = str(reason.reason).strip()
        breaks.append({"reason": text.splitlines()[0][:300], "detail": text[:1500], "location": loc})
    return {
        "ran": True,
        "graph_count": int(ex.graph_count),
        "graph_break_count": int(ex.graph_break_count),
        "op_count": int(ex.op_count),
        "breaks": breaks,
    }


__all__ = [
    "SyncCounterMode",
    "XlaMetrics",
    "neuron_metrics",
    "time_steps",
    "explain_graph_breaks",
    "HOST_SYNC_CALLS",
    "DYNAMIC_SHAPE_CALLS",
    "Path",
]
