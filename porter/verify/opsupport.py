"""Operator coverage before hardware: which ATen operators of a recorded run the target runs
natively, runs on the CPU (fallback), or does not support — and which porter cannot tell.

Evidence, strongest first:
1. the trace itself, when it was recorded on the target's runtime: on XLA every operator that
   ran on an XLA tensor is native unless torch_xla's fallback counters name it;
2. the target's published support data stored in porter (porter/verify/data/ops_<target>.json,
   each with its source and the date it was read).
Anything else is "unknown" — never "supported".
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources

from porter.verify.tracefile import Trace

STATUSES = ("native", "cpu_fallback", "unsupported", "host", "unknown")


@dataclass
class OpRow:
    op: str  # aten::name
    count: int
    dtypes: list[str]
    devices: list[str]
    status: str
    evidence: str


def load_support(target: str) -> dict:
    text = (resources.files("porter.verify") / "data" / f"ops_{target}.json").read_text()
    return json.loads(text)


def _short(op: str) -> str:
    return op.split("::", 1)[-1]


def classify(trace: Trace, target: str) -> tuple[list[OpRow], dict]:
    """(one row per operator, the support data used)."""
    data = load_support(target)
    m = trace.manifest
    side = m.get("side") or {}
    ran_on = side.get("kind")
    xla = (m.get("perf") or {}).get("xla") or {}
    # torch_xla names a fallback with its overload (view_copy.dtype), the operator list without
    observed_fallbacks = {n for f in xla.get("cpu_fallback_ops", []) for n in (f["op"], f["op"].split(".")[0])}
    merged: dict[str, dict] = defaultdict(lambda: {"count": 0, "dtypes": set(), "devices": set(), "fallback": False})
    for o in m.get("ops", []):
        row = merged[o["op"]]
        row["count"] += o["count"]
        row["fallback"] = row["fallback"] or bool(o.get("fallback"))
        row["dtypes"].update(o.get("dtypes", []))
        row["devices"].update(o.get("devices", []))
    tables = {s: set(data.get(s, [])) for s in ("native", "cpu_fallback", "unsupported")}
    src = data["sources"][0]
    cite = f"{src['where']}" + (f" @ {src['commit'][:12]}" if src.get("commit") else "") + f", read {src['read']}"
    rows = []
    observed = ran_on == target and (target == "xla" or side.get("hardware"))
    if target == "neuron":
        observed_fallbacks = {
            str(f["op"]).split("::")[-1].split(".")[0]
            for f in ((m.get("perf") or {}).get("neuron") or {}).get("cpu_fallback_ops", [])
        }
    for op, info in merged.items():
        name = _short(op)
        devices = sorted(info["devices"])
        if observed:
            if target not in devices:
                status, why = "host", "ran on CPU tensors in this run (the script's own host work), not on the device"
            elif name in observed_fallbacks or info["fallback"]:
                status, why = "cpu_fallback", f"this run on {side.get('label', target)} reported it as a CPU fallback"
            else:
                status, why = (
                    "native",
                    (f"ran on {target} tensors in this run ({side.get('label', target)}) and no fallback was reported"),
                )
            rows.append(OpRow(op, info["count"], sorted(info["dtypes"]), devices, status, why))
            continue
        status, why = "unknown", f"not in {target}'s stored support data ({cite})"
        for s in ("unsupported", "cpu_fallback", "native"):
            if name in tables[s]:
                status, why = s, f"{cite}"
                break
        rows.append(OpRow(op, info["count"], sorted(info["dtypes"]), devices, status, why))
    order = {s: i for i, s in enumerate(("unsupported", "cpu_fallback", "unknown", "native", "host"))}
    rows.sort(key=lambda r: (order[r.status], -r.count, r.op))
    return rows, data


def summary(rows: list[OpRow]) -> dict[str, int]:
    out = {s: 0 for s in STATUSES}
    for r in rows:
        out[r.status] += 1
    return out


__all__ = ["OpRow", "classify", "load_support", "summary", "STATUSES"]
