"""Turns the probes' measurements into ranked performance gaps with concrete advice."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from porter.core.reading import lines_of, read_regular_text
from porter.verify.result import Gap, SideSummary

_SEV = {"error": 0, "warning": 1, "info": 2}
_COLLECTIVE = re.compile(
    r"\b(all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|"
    r"DistributedDataParallel|FullyShardedDataParallel)\b"
)

_FALLBACK_ADVICE = {
    "nonzero": "replace with a fixed-shape form: torch.where(mask, x, 0) / masked_fill, or "
    "torch.nonzero_static(size=...) on XLA",
    "_unique2": "torch.unique has a data-dependent size: precompute on the host outside the step, "
    "or use a fixed-size bincount/one-hot",
    "masked_select": "boolean selection has a data-dependent size: keep the shape with "
    "torch.where(mask, x, 0) and a separate mask",
    "median": "median falls back on XLA: use torch.quantile-free alternatives (sort + index) "
    "or move it out of the step",
}


def _per_step(row: dict) -> str:
    return "?" if row.get("per_step") is None else f"{row['per_step']:g}"


def _loc_list(rows: list[dict], limit: int = 5) -> list[str]:
    return [f"{r['call']} at {r.get('location') or '(library code)'}: {_per_step(r)}/step" for r in rows[:limit]]


def _shapes_text(shapes: list) -> str:
    """porter.verify.shapes' list of shapes as the report says it (its "…" unquoted)."""
    return str(shapes).replace("'…'", "…")


def _shape_evidence(where: str, c: dict) -> str:
    return (
        f"{where}: {c['call']} at {c['location']} changed its output from {_shapes_text(c['before'])} to "
        f"{_shapes_text(c.get('last', c['first']))}; {c['recompiles']} compile(s) followed, each when the graph "
        f"ran at {c.get('trigger') or '(library code)'}"
    )


def _growing_shapes(xla: dict) -> list[tuple[str, dict]]:
    """(where, line) for lines that changed a shape and recompiled 3 times or more within one
    step: the mark of a sequence grown inside a loop."""
    found = [(f"step {e['step']}", c) for e in xla.get("shape_changes", []) for c in e["lines"] if c["recompiles"] >= 3]
    found += [
        ("the step the run stopped in", c) for c in xla.get("shape_changes_in_progress", []) if c["recompiles"] >= 3
    ]
    return found


def collect_gaps(sides: list[SideSummary | None], target: str, ported_tree: Path | None) -> list[Gap]:
    gaps: list[Gap] = []

    def add(severity, kind, side, title, advice, evidence=()):
        gaps.append(Gap(0, severity, kind, side, title, advice, list(evidence)))

    for side in sides:
        if side is None or side.perf is None:
            continue
        role = side.role
        perf = side.perf
        is_target = role == "ported"
        xla = perf.get("xla")
        if xla:
            _xla_gaps(add, role, xla)
        neuron = perf.get("neuron")
        if neuron and neuron.get("cpu_fallback_ops"):
            add(
                "error",
                "cpu_fallback",
                role,
                "CPU fallback ops: " + ", ".join(f["op"] for f in neuron["cpu_fallback_ops"]),
                "remove CPU fallbacks (TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION=1 makes them "
                "errors); see the Neuron PyTorch best practices",
                [],
            )
        _sync_gaps(add, role, is_target, perf.get("syncs") or {})
        _graph_break_gaps(add, role, is_target, side.graph_breaks or {})
        mem = perf.get("peak_memory") or {}
        if is_target and mem.get("bytes") is None:
            add("info", "probe_unavailable", role, "peak device memory not reported", mem.get("source", ""), [])
    if target == "tpu" and ported_tree is not None:
        _collective_gaps(add, ported_tree)
    gaps.sort(key=lambda g: (_SEV[g.severity], g.side != "ported"))
    for i, g in enumerate(gaps, 1):
        g.rank = i
    return gaps


def _xla_gaps(add: Callable[..., None], role: str, xla: dict) -> None:
    """PyTorch/XLA's counters: recompiles (in a loop, or after warm-up), CPU fallbacks and
    device-to-host transfers."""
    loop = _growing_shapes(xla)
    if loop:
        _recompile_loop_gap(add, role, loop)
    if xla["recompiles_after_warmup"] > 0:
        evidence = [
            f"{xla['uncached_compiles']} uncached compiles over {xla['steps']} steps "
            f"({xla['compiles_first_step']} in the first step)"
        ]
        evidence += [
            _shape_evidence(f"step {e['step']}", c)
            for e in xla.get("shape_changes", [])
            if e["step"] > xla.get("warmup", 2)
            for c in e["lines"][:3]
        ]
        add(
            "error",
            "recompile",
            role,
            f"{xla['recompiles_after_warmup']} graph recompilation(s) after warm-up",
            "shapes or Python values change between steps: pad variable lengths to a "
            "multiple of 128 (or bucket them), keep Python scalars that vary out of the "
            "graph, and run with PT_XLA_DEBUG_LEVEL=1 to see each compile's cause",
            evidence,
        )
    fallbacks = xla["cpu_fallback_ops"]
    if fallbacks:
        add(
            "error",
            "cpu_fallback",
            role,
            "CPU fallback: " + ", ".join(f"{f['op']} ×{_per_step(f)}/step" for f in fallbacks),
            "; ".join(
                _FALLBACK_ADVICE.get(
                    f["op"], f"{f['op']}: find a lowering-friendly equivalent or move it out of the step"
                )
                for f in fallbacks
            ),
            [f"torch_xla.debug.metrics counter aten::{f['op']} = {f.get('count', '?')}" for f in fallbacks],
        )
    if xla["device_to_host_transfers_per_step"] > 0:
        add(
            "warning",
            "transfer",
            role,
            f"{xla['device_to_host_transfers_per_step']:g} device→host transfer(s) per step",
            "each transfer waits for the device and cuts the graph: keep values on the "
            "device, log every N steps, and read them after torch_xla.sync()",
            [f"TransferFromDeviceTime count {xla['device_to_host_transfers']} over {xla['steps']} steps"],
        )


def _recompile_loop_gap(add: Callable[..., None], role: str, loop: list[tuple[str, dict]]) -> None:
    """A shape grown inside a loop: the lines that grow it (else the first three that changed)."""
    origin = [c for _, c in loop if c.get("grows")] or [c for _, c in loop][:3]
    add(
        "error",
        "recompile_loop",
        role,
        "a shape that changes inside a loop compiles a new graph on every iteration: "
        + ", ".join(
            dict.fromkeys(f"{c['call']} at {c['location']}" + (" grows it" if c.get("grows") else "") for c in origin)
        ),
        "preallocate the sequence at its final length and write into it (slice "
        "assignment / index_copy_), keep a static KV cache, or pad to a few bucket "
        "lengths; a sampling callback can run on the CPU copy of the model",
        [_shape_evidence(where, c) for where, c in loop[:6]],
    )


def _sync_gaps(add: Callable[..., None], role: str, is_target: bool, syncs: dict) -> None:
    """Host syncs (in the user's code, then in libraries) and ops with data-dependent shapes."""
    user_rows = [r for r in syncs.get("host_syncs", []) if r.get("location")]
    lib_rows = [r for r in syncs.get("host_syncs", []) if not r.get("location")]
    if user_rows:
        add(
            "warning" if is_target else "info",
            "host_sync",
            role,
            f"{syncs['user_host_syncs_per_step']:g} host sync call(s) per step in your code",
            "each .item()/.tolist()/.cpu()/print forces a device→host barrier (on XLA a "
            "compile and execute): move loss.item() out of the step, accumulate metrics on "
            "the device and read them every N steps",
            _loc_list(user_rows),
        )
    if lib_rows:
        add(
            "info",
            "host_sync",
            role,
            f"{syncs['library_host_syncs_per_step']:g} host sync call(s) per step inside "
            "libraries (torch, optimizers …)",
            "not in your code; on XLA check the device→host transfer count above to see "
            "whether they reach the device (an optimizer's step counter on the host does not)",
            [f"{r['call']}: {_per_step(r)}/step" for r in lib_rows],
        )
    if syncs.get("dynamic_shape_ops"):
        add(
            "warning" if is_target else "info",
            "dynamic_shape",
            role,
            "ops with data-dependent output shapes: "
            + ", ".join(sorted({r["call"] for r in syncs["dynamic_shape_ops"]})),
            "every new shape is a new compile on neuron, tpu and xla: keep shapes static "
            "(masks instead of selection; pad to a multiple of 128)",
            _loc_list(syncs["dynamic_shape_ops"]),
        )


def _graph_break_gaps(add: Callable[..., None], role: str, is_target: bool, gb: dict) -> None:
    """torch.compile's graph breaks, or that the probe did not run."""
    if gb.get("ran") and gb.get("graph_break_count", 0) > 0:
        add(
            "warning" if is_target else "info",
            "graph_break",
            role,
            f"{gb['graph_break_count']} graph break(s) under torch.compile ({gb['graph_count']} graphs)",
            "fix the listed causes, then compile with fullgraph=True (neuron and tpu prefer "
            "it); for .item() keep the value a tensor, for dynamic-shape ops see above",
            [f"{b['reason']} at {b['location']}" for b in gb["breaks"][:8]],
        )
    elif gb and not gb.get("ran"):
        add(
            "info",
            "probe_failed",
            role,
            "graph breaks not measured: torch._dynamo.explain did not run",
            gb.get("error", "unknown error"),
            [],
        )


def _collective_gaps(add: Callable[..., None], ported_tree: Path) -> None:
    """TorchTPU: collectives found in the ported source split its compiled graphs."""
    hits = []
    for path in sorted(ported_tree.rglob("*.py"))[:2000]:
        try:  # a regular file of bounded size: never a FIFO's wait, nor /dev/zero behind a link
            text = read_regular_text(path)
        except OSError:  # (`Unreadable` too)
            continue
        # lines numbered as Python numbers them (not str.splitlines: a U+2028 is no line end)
        for n, line in enumerate(lines_of(text), 1):
            if _COLLECTIVE.search(line):
                hits.append(f"{path.relative_to(ported_tree)}:{n}")
    if hits:
        add(
            "warning",
            "collectives",
            "ported",
            "collectives found in the source: TorchTPU splits compiled graphs at every collective by default",
            "mark rank-uniform code with @torch.tpu.distributed.spmd_safe so collectives fuse "
            "with the surrounding graph, or try TORCH_TPU_SPMD_HANDSHAKE_STAGE=COMPILE_STAGE "
            "(experimental) when all ranks compile the same graphs",
            [f"found by a source scan (not measured): {h}" for h in hits[:8]],
        )


__all__ = ["collect_gaps"]
