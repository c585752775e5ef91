"""Compares two traces of a training run (reference vs port) and decides the verdict.

The same comparison serves script-mode `parity-check` (both traces made just now),
`parity-check --reference-trace` (one recorded elsewhere) and `porter trace compare`.
Tolerances follow the precision regime both runs used (the lower of the two: float32, or
bfloat16/float16 autocast), and are printed with the verdict.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from porter.codemods.context import one_line
from porter.verify import causes, noise
from porter.verify.config import DEFAULT_TOLERANCES
from porter.verify.devices import TARGET_KINDS
from porter.verify.iterations import calls_unrestarted, iterations_spanned
from porter.verify.listed import MODEL, listed_pair
from porter.verify.result import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, Gap, SideSummary
from porter.verify.tracefile import (
    HASHED_WEIGHT,
    STAT_NAMES,
    TRANSFORMED,
    Trace,
    call_number,
    paired,
    unnamed_tensors,
)

_ORDER = ["float32", "float16", "bfloat16"]  # increasing tolerance
# (rtol, atol) for the per-step loss and gradient norm. The loss is a mean over many
# elements, so float32 runs agree more tightly than single activations do; under autocast
# the two devices' kernels round differently and the difference grows with the steps.
LOSS_TOLERANCES = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3), "bfloat16": (3e-2, 1e-2)}
GRAD_NORM_TOLERANCES = {"float32": (1e-3, 1e-5), "float16": (5e-2, 1e-3), "bfloat16": (1e-1, 1e-2)}
LR_RTOL = 1e-6  # the schedule is host arithmetic: it must match


@dataclass
class ScriptResult:
    verdict: str  # pass | fail | error
    reasons: list[str]
    config: dict
    reference: SideSummary | None
    ported: SideSummary | None
    where: dict = field(default_factory=dict)  # role -> host, created, command, trace
    regime: str = "float32"
    tolerances: dict = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)
    parted_at: int | None = None
    max_loss_abs: float | None = None
    max_loss_rel: float | None = None
    first_divergence: dict | None = None
    modules: list[dict] = field(default_factory=list)
    parameters: dict = field(default_factory=dict)
    tied: dict = field(default_factory=dict)
    gaps: list[Gap] = field(default_factory=list)
    noise_floor: dict | None = None  # porter.verify.noise.measure, or {"measured": False, ...}
    rng: list[str] = field(default_factory=list)  # where each side's random numbers came from
    made_on: dict = field(default_factory=dict)  # role -> where the program's tensors were made
    warnings: list[str] = field(default_factory=list)  # said with the verdict, not deciding it
    ranks: list[dict] = field(default_factory=list)  # per rank, for a run of several (torchrun)
    wall_s: float = 0.0
    workdir: str | None = None

    @property
    def exit_code(self) -> int:
        return {"pass": EXIT_PASS, "fail": EXIT_FAIL}.get(self.verdict, EXIT_ERROR)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["exit_code"] = self.exit_code
        data["schema"] = "porter.parity-script/1"
        return data


def _lower(a: str, b: str) -> str:
    a = a if a in _ORDER else "float32"
    b = b if b in _ORDER else "float32"
    return a if _ORDER.index(a) >= _ORDER.index(b) else b


def side_summary(
    trace: Trace | None,
    role: str,
    status: str = "ok",
    error: dict | None = None,
    wall_s: float = 0.0,
    log_tail: str = "",
) -> SideSummary:
    m = trace.manifest if trace is not None else {}
    side = m.get("side") or {}
    error = error or m.get("error")
    if error and status == "ok":
        status = "error"
    return SideSummary(
        role=role,
        status=status,
        device=side.get("label") or "unknown (the side stopped before choosing a device)",
        hardware=bool(side.get("hardware")),
        emulated=bool(side.get("emulated")),
        shim=side.get("shim"),
        versions=side.get("versions", {}),
        wall_s=wall_s or float(m.get("wall_s") or 0.0),
        phase_s={},
        perf=m.get("perf"),
        graph_breaks=None,
        error=error,
        notes=list(side.get("notes", [])) + list(m.get("notes", [])),
        log_tail=log_tail if status != "ok" else "",
    )


def where(trace: Trace | None) -> dict:
    if trace is None:
        return {}
    m = trace.manifest
    return {
        "host": m.get("host"),
        "created": m.get("created"),
        "command": m.get("command"),
        "tree": m.get("tree"),
        "porter": m.get("porter"),
        "porter_source": m.get("porter_source"),
        "libraries": m.get("libraries"),
        "seed": m.get("seed"),
        "stopped": m.get("stopped"),
        "steps_recorded": m.get("steps_recorded"),
        "trace": str(trace.path) if trace.path else None,
    }


def _close(r: float, p: float, rtol: float, atol: float) -> bool:
    if r == p:
        return True  # infinities too (inf - inf is NaN: an infinite gradient norm on both sides "differed")
    if math.isnan(r) or math.isnan(p):
        return math.isnan(r) and math.isnan(p)
    return abs(p - r) <= atol + rtol * abs(r)


def _float64(r: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Two samples as float64 values to compare one by one, and how many values each element
    gives: a complex sample (an FFT layer's output) gives its real and imaginary parts side by
    side, and a real one set beside it an imaginary part of 0 (cast to float64, a complex value
    lost its imaginary part, with a torch warning on the terminal)."""
    if r.is_complex() or p.is_complex():
        parts = [torch.view_as_real(t.to(torch.complex128).resolve_conj()).reshape(-1) for t in (r, p)]
        return parts[0], parts[1], 2
    return r.to(torch.float64), p.to(torch.float64), 1


def _inexact(t: torch.Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def _sample_cmp(r: torch.Tensor, p: torch.Tensor, rtol: float, atol: float) -> tuple[bool, float, float]:
    """(all close, max abs error, max rel error) of two samples (under `_quiet`). Close as `torch.isclose` says
    (equal, both NaN, or finite within `atol + rtol * |reference|`), in NumPy: a trace holds
    one sample per module output and rank, and torch's per-call cost on a 64-element sample
    made 40,960 of them (1,024 ranks of 40 modules) take 20 s of a `trace compare` (now about
    a quarter of that)."""
    import numpy as np

    if r.numel() != p.numel():  # the manifest's shapes agree, the file's samples do not
        raise ValueError(f"samples of {r.numel()} and {p.numel()} values for one output")
    if r.numel() == 0:
        return True, 0.0, 0.0
    if r.is_complex() or p.is_complex():
        # complex values by their modulus, as torch.isclose: taken part by part, a faithful FFT
        # port whose real part erred by 0.4 of |z|'s tolerance failed (twenty-third read)
        rd, pd = (t.to(torch.complex128).resolve_conj().numpy() for t in (r, p))
    else:
        rd, pd = r.to(torch.float64).numpy(), p.to(torch.float64).numpy()
    if not (_inexact(r) or _inexact(p)):
        diff = np.abs(rd - pd)
        return bool((diff == 0).all()), float(diff.max()), 0.0
    fin = np.isfinite(rd) & np.isfinite(pd)
    diff = np.abs(rd - pd)  # inf - inf is NaN, masked below (warnings off: `_quiet`)
    scale = np.abs(rd)
    close = (rd == pd) | (np.isnan(rd) & np.isnan(pd)) | (fin & (diff <= atol + rtol * scale))
    ok = bool(close.all())
    if not fin.any():
        return ok, 0.0, 0.0
    diff, scale = diff[fin], scale[fin]
    big = scale > atol
    rel = float((diff[big] / scale[big]).max()) if big.any() else 0.0
    return ok, float(diff.max()), rel


def _quiet():
    """NumPy's floating-point warnings off for a comparison's samples (an infinite or NaN sample
    is a value to compare, not a warning line): entered once per comparison, not per sample
    (its context variable cost a third of `_sample_cmp`)."""
    import numpy as np

    return np.errstate(invalid="ignore", over="ignore", divide="ignore")


def _stats_cmp(
    r: torch.Tensor,
    p: torch.Tensor,
    rtol: float,
    atol: float,
    extra: list[float] | None = None,
    numel: int = 1,
    dtype: str = "",
) -> list[str]:
    """Names of the statistics that differ by more than the values' own tolerance allows them
    (`atol + rtol * |reference|` per value, over `numel` values): mean, min, max and the
    largest magnitude by `atol + rtol * largest magnitude`; the L2 norm by `atol * sqrt(numel)
    + rtol * norm` and the standard deviation by `atol + rtol * rms` (what values within the
    tolerance can move them: a port whose every value was within it failed on its L2 norm at
    8 values, or on its std where the values sit far from 0); NaN/Inf counts must be equal.
    `extra`: an absolute allowance per statistic (the program's own noise floor). A complex
    output's statistics are its parts': a part moves by up to `atol + rtol * |its value|`, and
    a value is up to sqrt(2) times its largest part (a faithful complex port failed on "max,
    absmax" held to its part's bound; twenty-fifth read)."""
    extra = extra or [0.0] * len(STAT_NAMES)
    allow = dict(zip(STAT_NAMES, extra))
    rs = dict(zip(STAT_NAMES, r.tolist()))
    ps = dict(zip(STAT_NAMES, p.tolist()))
    # the largest finite magnitude: an output holding +inf (-inf) alike on both sides has an
    # infinite largest magnitude but a finite min (max), which values within the tolerance move
    # by up to `atol + rtol * |min|`; with 0 here a faithful port failed on it (twenty-second read)
    scale = max((abs(v) for v in (rs["absmax"], rs["min"], rs["max"]) if math.isfinite(v)), default=0.0)
    value = math.sqrt(2) if dtype.startswith("complex") else 1.0  # a value's magnitude, by its largest part
    root = math.sqrt(max(1, numel))
    rms = abs(rs["l2"]) / root if math.isfinite(rs["l2"]) else abs(rs["std"])
    bad = []
    for name in STAT_NAMES:
        a, b = rs[name], ps[name]
        if name in ("nan", "inf"):
            if a != b:
                bad.append(f"{name} count {a:g} vs {b:g}")
            continue
        if a == b or (math.isnan(a) and math.isnan(b)):
            continue  # equal, infinities too (inf - inf is NaN: two equal outputs holding -inf failed)
        allowed = {
            "l2": atol * root + rtol * abs(a),
            "std": atol + rtol * max(rms, abs(a)),
        }.get(name, atol + rtol * value * (scale if name in ("mean", "min", "max") else abs(a)))
        # (+ the statistic's own rounding: older porters took them in float32, 2^-24 of it a step;
        # they are now taken in float64, and a trace's statistics are read as recorded)
        if not (abs(b - a) <= allowed + allow[name] + 2.0**-22 * max(abs(a), abs(b))):
            bad.append(name)
    return bad


_EXACT = ("int", "uint", "bool")  # output dtypes compared exactly


def _blocks_cmp(
    r: torch.Tensor | None,
    p: torch.Tensor | None,
    rtol: float,
    atol: float,
    numel: int,
    extra=0.0,  # a float, or a NumPy array of one a block
    dtype: str = "",
    per=None,  # a NumPy array: the values of each block
) -> bool:
    """Whether two outputs' block sketches (`recorder.block_sums`: a sum and an absolute sum a
    block of contiguous values) agree as values within the tolerance make them: a block of `b`
    values, each within `atol + rtol * |reference|`, moves its sum and its absolute sum by at most
    `b * atol + rtol * (the reference's absolute sum)`, plus float32's rounding of a sum of `b`
    values on each side (`b * 2^-24` of its absolute sum, in any order of summation). A block
    that is not finite must be equal on both sides (an infinity or a NaN there is in the
    statistics' counts). True when either side has none or they are not alike (nothing to say).
    A complex value within `|p - r| <= atol + rtol * |r|` (assert_close's test) moves the sum of its
    two parts by up to sqrt(2) times that, and its |r| is at most the sum of its parts'
    magnitudes: held to the real bound, a faithful complex port failed on its block sums (4 of 60
    generated faithful complex outputs, seed 409, twenty-fifth read). An integer or bool output's
    blocks must be equal, as its sample must (`_sample_cmp`) and assert_close's integers: their
    float64 sums are exact below 2^53, so only float64's rounding beyond it is allowed. `per`: the
    values of each block where they are not `numel` cut evenly (blocks regrouped: `_common_differ`).
    An integer output's third row (its values weighted by place) is compared where both have it."""
    if r is None or p is None or r.dim() != 2 or p.dim() != 2 or r.shape[1] != p.shape[1] or r.shape[1] == 0:
        return True
    if min(r.shape[0], p.shape[0]) < 2:
        return True
    import numpy as np

    if per is None:
        blocks = r.shape[1]
        per = np.full(blocks, numel // blocks, dtype=np.float64)
        per[-1] += numel - blocks * (numel // blocks)
    if not _placed_close(r, p, extra, per):
        return False
    r, p = r[:2], p[:2]  # a trace of a porter before the twenty-sixth read has two rows
    rd, pd = r.to(torch.float64).numpy(), p.to(torch.float64).numpy()
    ref_abs = np.abs(rd[1])
    width = 2 if dtype.startswith("complex") else 1  # values summed for each element
    if dtype.startswith(_EXACT):
        rtol, atol = 0.0, 0.0
    moved = math.sqrt(width) * (per * atol + rtol * ref_abs)
    rounding = 2.0**-53 if dtype.startswith(_EXACT) else 2.0**-24  # float64's sums of integers, float32's
    allowed = moved + width * per * rounding * (ref_abs + np.abs(pd[1])) * 1.01 + extra
    fin = np.isfinite(rd) & np.isfinite(pd)
    same = (rd == pd) | (np.isnan(rd) & np.isnan(pd))
    close = same | (fin & (np.abs(pd - rd) <= allowed))
    return bool(close.all())


def _placed_close(r: torch.Tensor, p: torch.Tensor, extra, per) -> bool:
    """Whether two integer outputs' place-weighted block sums (`recorder._placed_sums`: rows 3
    and 4, weights up to `b` and `recorder.HASHED_WEIGHT`) are equal but for float64's
    rounding: a block of `b` values (`per`, `_blocks_cmp`'s) sums terms of at most the largest
    weight times their magnitudes. Each row is compared where both sides have it (a float
    output has neither, an older trace's may lack them)."""
    import numpy as np

    rd, pd = r.to(torch.float64).numpy(), p.to(torch.float64).numpy()
    for row, weight in ((2, per), (3, HASHED_WEIGHT)):
        if min(rd.shape[0], pd.shape[0]) <= row:
            break
        allowed = per * weight * 2.0**-53 * (np.abs(rd[1]) + np.abs(pd[1])) * 1.01 + extra
        if not ((rd[row] == pd[row]) | (np.abs(pd[row] - rd[row]) <= allowed)).all():
            return False
    return True


def _count(shape: list[int]) -> int:
    """The values of an output of `shape` (1 for a shape too large to be a real one)."""
    n = math.prod(shape) if all(d >= 0 for d in shape) else 1
    return n if n < 2**63 else 1


def padded(a: list[int], b: list[int]) -> bool:
    """One shape holds the other (same rank, every dimension as large or larger): the same
    tensor padded, as a program that pads its batches to a fixed length on one device makes."""
    return len(a) == len(b) and (all(x <= y for x, y in zip(a, b)) or all(x >= y for x, y in zip(a, b)))


# the problem of a module row whose output held no tensor on either side (not compared)
NO_TENSOR = "no tensor in its output on either side"


def compare_modules(
    ref: Trace, port: Trace, rtol: float, atol: float, floor: dict | None = None
) -> tuple[list[dict], dict | None]:
    """Per module output at step 1, then the model's buffers after step 1's forward (when both
    traces hold them); `floor` (porter.verify.noise) widens each module's tolerance by the margin
    times the reference's own drift there."""
    margin = (floor or {}).get("margin", 0.0)
    mfloor = (floor or {}).get("modules", {})
    rows = []
    with _quiet():
        # the step-1 input first, by place (one a process): a port that calls one module more
        # before its model keys it by that module (traces of older porters have none)
        pairs: list[tuple[dict, dict | None]] = list(
            zip(ref.manifest.get("inputs", []), port.manifest.get("inputs", []))
        )
        by_calls, regrouped = by_gradients(
            paired(ref.manifest.get("modules", []), port.manifest.get("modules", []), "key"), port
        )
        pairs += calls_by_shape(by_calls, port)
        if "buffers" in ref.manifest and "buffers" in port.manifest:  # (traces of older porters have none)
            pairs += paired(ref.manifest["buffers"], _hook_form_buffers(ref.manifest, port.manifest), "key")
        for m, pm in pairs:
            row = _module_row(m, pm, mfloor, margin, ref, port, rtol, atol)
            if (
                pm is not None
                and pm["key"] == m["key"]
                and row["compared"]
                and _batch_cut_otherwise(m["key"], ref, port)
            ):
                row.update(compared=False, passed=True, problem=BATCH_CUT_OTHERWISE, batch_cut=True)
            if pm is not None and pm["key"] != m["key"] and m.get("type") != "input":  # paired by shape
                row["gradient_call" if _call_base(m["key"]) in regrouped else "ported_call"] = pm["key"]
            row.update(_dtypes(m, pm))
            if m.get("calls"):
                row["calls"] = m["calls"]
            if _nograd(m) and pm is not None and _nograd(pm):  # (an evaluation's call on both sides)
                row["nograd"] = True
            rows.append(row)
    return rows, _first_differing_row(rows, [pm for _, pm in pairs], port)


def _hook_form_buffers(rm: dict, pm: dict) -> list[dict]:
    """The port's buffers (manifest `pm`), keyed by the reference's names where one side names
    them by `spectral_norm`'s hook form (`2.weight_u`) and the other by its parametrization
    (`2.parametrizations.weight.0._u`): unpaired, each was "not in the port" or "only the port
    recorded" (thirty-second read's leftover)."""
    ref_keys, port_keys = (
        {b["key"] for b in m.get("buffers") or [] if isinstance(b, dict) and isinstance(b.get("key"), str)}
        for m in (rm, pm)
    )
    renames = _hook_form_renames(ref_keys, port_keys, HOOK_FORM_BUFFERS)
    theirs = pm.get("buffers") or []
    return [{**b, "key": renames[b["key"]]} if isinstance(b, dict) and b.get("key") in renames else b for b in theirs]


def _first_differing_row(rows: list[dict], theirs: list[dict | None], port: Trace) -> dict | None:
    """The first row that differs, in the port's call order: the first module of the port's
    run whose output departs, everything it called before agreeing. It was the reference's
    first, so a port that ran a ModuleDict's modules in another order was named at a module it
    called after the one that departed (twenty-second read). A row the port did not call sits
    just after the port's call of the row before it; buffers after every module. Where the
    reference's order puts another row first, the row says which (`reference_first`)."""
    entries = [port.manifest.get(section, []) for section in ("inputs", "modules", "buffers")]
    place = {id(e): i for i, e in enumerate(e for section in entries for e in section)}
    at, order = -1.0, []
    for pm in theirs:
        at = place[id(pm)] if pm is not None and id(pm) in place else at + 1e-6
        order.append(at)
    bad = [i for i, row in enumerate(rows) if not row["passed"]]
    if not bad:
        return None
    first = dict(rows[min(bad, key=lambda i: (rows[i]["type"] == "buffer", order[i], i))])
    if first["module"] != rows[bad[0]]["module"]:
        first["reference_first"] = rows[bad[0]]["module"]
    return first


def _dtypes(m: dict, pm: dict | None) -> dict:
    """{"dtypes": [reference, ported]} of the first output whose dtype differs between the
    sides, else nothing: values within the tolerance pass whatever their dtype, and a port that
    turned a float64 buffer into float32 passed with the change said nowhere (twenty-third read)."""
    for ro, po in zip(m.get("outputs") or [], (pm or {}).get("outputs") or []):
        if ro.get("dtype") != po.get("dtype"):
            return {"dtypes": [ro.get("dtype"), po.get("dtype")]}
    return {}


def _dtype_warnings(modules: list[dict], rm: dict, pm: dict) -> list[str]:
    """One line naming the module outputs and buffers the port holds in another dtype (said,
    not deciding the verdict: their values decide it). Outputs in a dtype the port's autocast
    makes and the reference's does not, from a dtype autocast casts, are left out: the precision
    line says that change, and "restore the dtype" misadvised a port that added autocast
    (twenty-third read). Autocast casts float32, float16 and bfloat16, never float64: a float64
    output made bfloat16 is the port's change, said."""
    made = set(_autocast_dtypes(pm)) - set(_autocast_dtypes(rm))
    cast_from = {"float32", "float16", "bfloat16"}
    changed = [m for m in modules if m.get("dtypes")]
    by_autocast = [m for m in changed if m["dtypes"][0] in cast_from and m["dtypes"][1] in made]
    other = [m for m in changed if m not in by_autocast]
    said = _hand_casts(by_autocast, rm, pm)
    if not other:
        return said
    first = other[0]
    return [
        f"{len(other)} module output(s) or buffer(s) have another dtype in the port (first: "
        f"{first['module']}: reference {first['dtypes'][0]}, ported {first['dtypes'][1]}): compared by "
        "value at the tolerance, so the change passes where its values agree; where the port did not "
        "mean to change it, restore the dtype",
        *said,
    ]


def _hand_casts(by_autocast: list[dict], rm: dict, pm: dict) -> list[str]:
    """Beside outputs left to the precision line as the port's added autocast's, the port's own
    casts to their dtype (by line, `probes.SyncCounterMode`) more often a step than the
    reference's: the precision line cannot tell those outputs from autocast's, and said alone it
    hid a cast the port made by hand (twenty-third read's leftover)."""
    dtypes = {m["dtypes"][1] for m in by_autocast}
    ref: Counter = Counter()
    for row in _casts(rm):
        ref[row["call"]] += row.get("per_step") or 0
    port = [r for r in _casts(pm) if r["call"].removeprefix("cast to ") in dtypes]
    extra = [r for r in port if sum(x.get("per_step") or 0 for x in port if x["call"] == r["call"]) > ref[r["call"]]]
    if not extra:
        return []
    kinds = ", ".join(sorted({r["call"].removeprefix("cast to ") for r in extra}))
    lines = ", ".join(str(r["location"]) for r in extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
    return [
        f"the port also casts to {kinds} by hand ({lines}), the dtype its added autocast makes: "
        f"{len(by_autocast)} module output(s) it holds in that dtype are left to the precision line, "
        "which cannot tell these casts from autocast's; where the port did not mean to cast, remove the cast"
    ]


def _casts(manifest: dict) -> list[dict]:
    return ((manifest.get("perf") or {}).get("syncs") or {}).get("casts") or []


def _autocast_dtypes(manifest: dict) -> list[str]:
    return (manifest.get("precision") or {}).get("autocast_dtypes") or []


def _call_base(key: str) -> str:
    """A module output's key without its call number (`h.0.attn#2` -> `h.0.attn`)."""
    return call_number(key)[0]


def _shapes(entry: dict | None) -> list | None:
    return None if entry is None else [o.get("shape") for o in entry.get("outputs") or []]


def by_gradients(pairs: list[tuple[dict, dict | None]], port: Trace) -> tuple[list[tuple[dict, dict | None]], set[str]]:
    """The calls of one module paired among those made with gradients on and among those made
    with them off (`nograd`), each in call order, where the two sides made them in another
    pattern: a port evaluating its model under `no_grad` before each training forward, the
    reference not, had its evaluation's call compared with the reference's training call, and
    FAILed "the data differs at step 1", the losses and weights equal by `assert_close` (the
    thirty-sixth read's leftover). A reference's evaluation the port does not make is left to
    `_evaluation_call`; the port's, unpaired, is the port's own. Traces without the marks (an
    older porter's) pair by number as before. With the modules so paired."""
    theirs: dict[str, list[dict]] = {}
    for e in port.manifest.get("modules", []):
        theirs.setdefault(_call_base(e["key"]), []).append(e)
    calls: dict[str, list[int]] = {}
    for i, (m, _) in enumerate(pairs):
        calls.setdefault(_call_base(m["key"]), []).append(i)
    out, regrouped = list(pairs), set()
    for base, idx in calls.items():
        mine = [pairs[i][0] for i in idx]
        other = theirs.get(base, [])
        marks = [[_nograd(e) for e in side] for side in (mine, other)]
        if marks[0] == marks[1] or not any(marks[0] + marks[1]) or all(len(set(m)) <= 1 for m in marks):
            # (each side's calls all alike: a reentrant `torch.utils.checkpoint` runs its region's
            # forward with gradients off, a port dropping it with them on; paired by number as before)
            continue
        regrouped.add(base)
        for off in (False, True):
            left = [e for e, k in zip(other, marks[1]) if k is off]
            for i, k in zip(idx, marks[0]):
                if k is off:
                    out[i] = (pairs[i][0], left.pop(0) if left else None)
    return out, regrouped


def _nograd(entry: dict) -> bool:
    return entry.get("nograd") is True


def calls_by_shape(pairs: list[tuple[dict, dict | None]], port: Trace) -> list[tuple[dict, dict | None]]:
    """The calls of one module paired by their output shapes where the port made them in
    another order: a port that called a shared module on its two inputs the other way round
    (independent calls, the same values) failed with "shape differs" at the module, paired
    call by call (twenty-second read). Only where pairing in call order gives another shape
    and every call of the reference finds one of the port's of its shapes; the row's
    `ported_call` names the port's call."""
    calls: dict[str, list[int]] = {}
    for i, (m, _) in enumerate(pairs):
        calls.setdefault(_call_base(m["key"]), []).append(i)
    theirs: dict[str, list[dict]] = {}
    for e in port.manifest.get("modules", []):
        theirs.setdefault(_call_base(e["key"]), []).append(e)
    out = list(pairs)
    for base, idx in calls.items():
        if len(idx) < 2 or all(_shapes(pairs[i][0]) == _shapes(pairs[i][1]) for i in idx):
            continue
        free, chosen = list(theirs.get(base, [])), []
        for i in idx:
            match = next(
                (e for e in free if _shapes(e) == _shapes(pairs[i][0]) and _nograd(e) == _nograd(pairs[i][0])), None
            )
            if match is None:
                break
            free.remove(match)
            chosen.append((i, match))
        else:
            for i, match in chosen:
                out[i] = (pairs[i][0], match)
    return out


def _uncompared_call(m: dict, pm: dict) -> str | None:
    """Why a module call's outputs cannot be compared: nothing recorded on either side (a
    generator, an object of a class porter does not read, None: the row said "pass" having
    compared nothing), or an output either side left unsampled (`recorder.unsampled`: inside a
    torch.func transform, sparse, nested), which of them not known, so none is paired: a faithful
    port that called its model inside `torch.func.grad` failed on "1 output tensor(s) on the
    reference, 0 ported" (thirtieth read)."""
    said = []
    for role, e in (("reference", m), ("port", pm)):
        whys = e.get("unsampled")
        if isinstance(whys, list) and whys:
            said.append(f"{len(whys)} output(s) not recorded on the {role} ({one_line(str(whys[0]), 80)})")
    if said:
        return "; ".join(said) + ": not compared"
    return NO_TENSOR if not m["outputs"] and not pm["outputs"] else None


# the step's input where one side called its model with gradients on in step 1 and the other never did
# (its input the first call's, an evaluation's: `recorder._record_input`)
INPUT_NOGRAD = (
    "the step's input is an evaluation's (a call made with gradients off) on one side only, the other side's "
    "its training call's: not compared; the module calls, the loss, the gradient norm and the weights compared"
)


def _not_compared(m: dict, pm: dict) -> dict | None:
    """A paired row's fields where its outputs are not compared (`_module_row`), else None."""
    if m.get("type") == "input" and _nograd(m) != _nograd(pm):
        return {"compared": False, "problem": INPUT_NOGRAD, "input_nograd": True}
    uncompared = _uncompared_call(m, pm)
    if uncompared:
        return {"compared": False, "problem": uncompared, "unsampled": uncompared != NO_TENSOR}
    return None


def _as_built(m: dict, pm: dict) -> tuple[list, list]:
    """The two sides' outputs of a call, paired in order: in the order each side's program built
    them where one side's output held a plain dict (read by key, `built`: the recorder's
    `_built_order`) and the other's did not (a tuple, a dataclass, a namedtuple), else as
    recorded (two plain dicts pair by key). A model returning `{"out": o, "hidden": h}` against
    one returning `(o, h)` had `hidden` compared with `o` and failed at `(model)`, the training
    the same (thirty-seventh read)."""
    ra, pa = _built(m), _built(pm)
    if (ra is None) == (pa is None):
        return m["outputs"], pm["outputs"]
    return (
        [m["outputs"][i] for i in ra] if ra else m["outputs"],
        [pm["outputs"][i] for i in pa] if pa else pm["outputs"],
    )


def _built(entry: dict) -> list[int] | None:
    """An entry's `built` order, where it orders its outputs (`_as_built`)."""
    built = entry.get("built")
    return built if isinstance(built, list) and sorted(built) == list(range(len(entry["outputs"]))) else None


def _other_shapes(ro: dict, po: dict) -> dict:
    """A module output's row where the two sides' shapes differ, one holding the other: not
    compared; marked where the port's recorder kept no region for the reference's shape."""
    row: dict = {"compared": False, "problem": f"other shapes: reference {ro['shape']}, ported {po['shape']}"}
    if po.get("region_not_kept") == ro["shape"]:  # (more shapes than the recorder keeps: `_region_not_kept`)
        row["region_not_kept"] = True
    return row


def _module_row(m: dict, pm: dict | None, mfloor: dict, margin: float, ref: Trace, port: Trace, rtol, atol) -> dict:
    """One module output's row of `compare_modules` (`pm`: the port's of the same key, if any)."""
    key = m["key"]
    row = {
        "module": key,
        "type": m.get("type") or "?",  # optional in a manifest: every table shows it as text
        "ported_type": None,
        "max_abs": None,
        "max_rel": None,
        "stats_differ": [],
        "passed": True,
        "problem": None,
        "compared": True,
    }
    if pm is None:
        _uncalled(row, m, ref, port)
    else:
        row["ported_type"] = pm.get("type")
        uncompared = _not_compared(m, pm)
        if uncompared:
            row.update(uncompared)
            return row
        if len(pm["outputs"]) != len(m["outputs"]):
            row.update(
                passed=False,
                problem=f"{len(m['outputs'])} output tensor(s) on the reference, {len(pm['outputs'])} ported",
            )
        for ro, po in zip(*_as_built(m, pm)):
            if po.get("padded_from") and ro["shape"] == po["shape"]:
                # compared on the reference's region
                row.update(padded_from=po["padded_from"], reference_shape=ro["shape"])
            if ro["shape"] != po["shape"] and padded(ro["shape"], po["shape"]):
                # the program fed its model other shapes on the two sides (accelerate's collate
                # pads to a fixed length under XLA): the values cannot be set side by side
                row.update(_other_shapes(ro, po))
                break
            if ro["shape"] != po["shape"]:
                row.update(passed=False, problem=f"shape differs: reference {ro['shape']}, ported {po['shape']}")
                break
            noise = mfloor.get(key) or {}
            ok, mabs, mrel = _sample_cmp(
                ref.tensor(ro["sample"]), port.tensor(po["sample"]), rtol, atol + margin * noise.get("sample", 0.0)
            )
            bad = _stats_cmp(
                ref.tensor(ro["stats"]),
                port.tensor(po["stats"]),
                rtol,
                atol,
                [margin * x for x in noise.get("stats", [])] or None,
                numel=_count(ro["shape"]),
                dtype=ro.get("dtype") or "",
            )
            if (
                "blocks" in ro
                and "blocks" in po
                and _blocks_differ(ro, po, row, ref, port, (rtol, atol), margin * noise.get("blocks", 0.0))
            ):
                bad.append("block sums")
            row["max_abs"] = max(row["max_abs"] or 0.0, mabs)
            row["max_rel"] = max(row["max_rel"] or 0.0, mrel)
            row["stats_differ"] += [s for s in bad if s not in row["stats_differ"]]
            if not ok or bad:
                row["passed"] = False
    return row


# a reference's model (or container) output where the port calls its layers one by one (a loop,
# `checkpoint_sequential`): the container itself is never called there (`model_uncalled`, `_layers_called`)
LAYERS_CALLED = "never called as a whole in the port (its layers are called one by one): its layers' outputs compared"


def _layers_called(key: str, port: Trace) -> bool:
    """Whether the port never calls the reference's module `key` as a whole but calls its layers:
    the model, where the port says so (`model_uncalled`), or a container the port called a
    module inside. Only the model was: a port calling the leaf layers of nested `Sequential`s one
    by one FAILed "first diverging module at step 1: 0: not called on the ported side", every layer
    in it agreeing (thirty-third trace2 read)."""
    if key == MODEL:
        return port.manifest.get("model_uncalled") is True
    head, sep, num = key.rpartition("#")
    name, call = (head, sep + num) if sep and num.isdigit() else (key, "")
    inside = (e.get("key") for e in port.manifest.get("modules") or [] if isinstance(e, dict))
    return any(isinstance(k, str) and k.startswith(name + ".") and k.endswith(call) for k in inside)


# a reference's module the port never calls, its work done by a function on its weights
WEIGHTS_APPLIED = (
    "never called in the port, its parameters applied by a function (F.linear on its weights, a fused "
    "loss), each with a gradient at step 1: its output not made there; the loss, the gradient norm and "
    "the weights compared"
)


def _weights_applied(key: str, ref: Trace, port: Trace) -> bool:
    """Whether the port holds and steps every parameter of the reference's module `key` by its
    name, and every parameter it steps had a gradient at step 1: a port applying a head's weights by
    `F.linear(h, m.head.weight, m.head.bias)` (a fused linear cross-entropy) never makes the
    head's output, and FAILed "head: not called on the ported side", the same losses, gradient
    norms and weights (thirty-fourth read). A module it drops (its parameters left without a
    gradient) still FAILs. A later call (`0#2`) of a module the port does call is no such module:
    a reference accumulating two micro-batches against a port taking the batch whole had "0#2:
    never called in the port, its parameters applied by a function" said of a layer the port
    called (thirty-fifth read)."""
    name = _call_base(key)
    steps = port.manifest.get("steps") or []
    called = {e.get("key") for e in port.manifest.get("modules") or [] if isinstance(e, dict)}
    if name.startswith("(") or name in called:
        return False
    if not steps or not isinstance(steps[0], dict) or steps[0].get("without_grad") != 0:
        return False

    def under(trace: Trace) -> set:
        names = (q.get("name") for q in trace.manifest.get("parameters") or [] if isinstance(q, dict))
        return {n for n in _tied_names(names, trace) if n.startswith(name + ".")}

    mine = under(ref)
    groups = port.manifest.get("param_groups") or []
    stepped = _tied_names((n for names in groups if isinstance(names, list) for n in names), port)
    return bool(mine) and mine == under(port) and mine <= stepped


def _tied_names(names, trace: Trace) -> set[str]:
    """`names` with every name each is tied to (the trace's `tied` groups). A parameter is recorded
    by its first name: a head tied to the embedding (`lm_head.weight` is `emb.weight`) held no name
    of its own, and a port applying it by `F.linear(h, m.emb.weight)` FAILed "lm_head: not called on
    the ported side", the same losses (thirty-fifth read)."""
    own = {n for n in names if isinstance(n, str)}
    groups = [g for g in trace.manifest.get("tied") or [] if isinstance(g, list)]
    return own | {n for g in groups if own & set(g) for n in g if isinstance(n, str)}


# a later call of a module the two sides call on other shapes (`_batch_cut_otherwise`)
BATCH_CUT_OTHERWISE = (
    "a later call of a module the two sides call on other shapes (the batch cut otherwise: micro-batches "
    "of other sizes, or the batch whole on one side; a dry run of a lazy module): its calls do not pair one "
    "to one by number, and the port may make fewer; the loss, the gradient norm and the weights compared"
)


def _call_shapes(name: str, trace: Trace) -> set[str]:
    """The output shapes (as text) of step 1's recorded calls of the module `name`."""
    entries = [e for e in trace.manifest.get("modules") or [] if isinstance(e, dict)]
    return {repr(_shapes(e)) for e in entries if isinstance(e.get("key"), str) and _call_base(e["key"]) == name}


def _batch_cut_otherwise(key: str, ref: Trace, port: Trace) -> bool:
    """Whether `key` is a later call (`0#2`) of a module both sides call, on shapes one side never
    uses: a reference accumulating two micro-batches (or running a `LazyLinear`'s dry run) against
    a port taking the batch whole, the same updates by `assert_close`, FAILed "1#2: not called on
    the ported side", while the other way round the port's later calls were said and not
    compared; micro-batches of 1, 2, 1 rows against 2, 2 FAILed at `0#2`, another batch's rows of
    the same shape (thirty-fifth trace2 read). A port making fewer calls of the reference's shapes
    (a micro-batch dropped) still FAILs; calls made in another order are paired by shape."""
    name = _call_base(key)
    if name == key:
        return False
    mine, theirs = _call_shapes(name, ref), _call_shapes(name, port)
    return bool(theirs) and mine != theirs


# a reference's call of a module holding no parameter nor buffer that the port does not make
# (`_stateless_done`; of a shared `nn.Tanh` the port calls once for the reference's twice, it
# said "never called in the port": thirty-fifth trace2 read)
STATELESS_DONE = (
    "a call the port does not make, of a module holding no parameter nor buffer (an activation done by a "
    "function, torch.tanh for nn.Tanh): its output not made there; the outputs after it and the loss compared"
)


def _stateless_done(m: dict, port: Trace) -> bool:
    """Whether the reference's module holds nothing (`stateless`, as recorded) and the port still
    recorded module outputs at step 1, which are compared with the loss: its work shows only
    there. A port doing `nn.Tanh`'s work by `torch.tanh` FAILed "1: not called on the ported
    side", the same losses; one dropping it still FAILs at the next module and the loss
    (thirty-fifth read). A trace of an older porter, without the mark, FAILs as before."""
    return m.get("stateless") is True and any(isinstance(e, dict) for e in port.manifest.get("modules") or [])


# a reference's call made with gradients off that the port does not make (`_evaluation_call`)
EVALUATION_CALL = (
    "a call the port does not make, made with gradients off (an evaluation before the training forward or "
    "between it and the step, a sanity check): its output reaches no gradient; the training calls, the loss, "
    "the gradient norm and the weights compared"
)


def _evaluation_call(m: dict, ref: Trace, port: Trace) -> bool:
    """Whether the reference made its call `m` with gradients off (`nograd`), and the port made as
    many calls of its module with gradients on as the reference recorded: a reference evaluating
    its model between the backward and the step, against a port that does not, FAILed "0#2: not
    called on the ported side", the same losses and weights by `assert_close`, while the other way
    round passed (thirty-sixth read). A port dropping a training call still FAILs; a trace of an
    older porter, without the mark, FAILs as before."""
    if m.get("nograd") is not True:
        return False
    base = _call_base(str(m.get("key")))

    def training(trace: Trace) -> int:
        return sum(
            1
            for e in trace.manifest.get("modules") or []
            if isinstance(e, dict) and _call_base(str(e.get("key"))) == base and e.get("nograd") is not True
        )

    return training(port) > 0 and training(port) == training(ref)


# a reference's later call of a module, where the port calls it fewer times by the reference's calls
# of it inside a torch.func transform (`_after_transform`)
AFTER_TRANSFORM = (
    "a later call of a module the reference also called inside a torch.func transform (vmap, grad), the "
    "port not: the calls do not pair by number; the gradient norms, rates and initial weights compared"
)


def _after_transform(m: dict, ref: Trace, port: Trace) -> bool:
    """Whether the port's calls of the module of `m` (the reference's call number n, none in the
    port) fall short of n by no more than the reference's earlier calls of it made inside a
    torch.func transform (`TRANSFORMED`): a reference taking per-sample gradients by
    `vmap(grad(functional_call(m, ...)))` and its loss by a `no_grad` forward, against a plain
    port, FAILed "(model)#2: not called on the ported side", the losses equal (thirty-fifth
    trleft2 read)."""
    base, n = call_number(str(m.get("key")))

    def calls(trace: Trace) -> list[dict]:
        return [
            e
            for e in trace.manifest.get("modules") or []
            if isinstance(e, dict) and call_number(str(e.get("key")))[0] == base
        ]

    inside = [e for e in calls(ref) if call_number(str(e["key"]))[1] < n and TRANSFORMED in (e.get("unsampled") or [])]
    return bool(inside) and n - len(calls(port)) <= len(inside)


def _uncalled(row: dict, m: dict, ref: Trace, port: Trace) -> None:
    """A row of the reference the port has no entry for: a parametrization's call the port's hook
    form makes without a module is not compared (`hook_form`, said by `_shape_warnings`), nor a
    module whose weights the port applies by a function (`_weights_applied`)."""
    if m.get("type") == "buffer":
        row.update(passed=False, problem="not in the port")
    elif _made_by_hook_form(m["key"], port):
        row.update(compared=False, hook_form=True, problem="made by a deprecated hook form in the port")
    elif _layers_called(m["key"], port):
        row.update(compared=False, layers_called=True, problem=LAYERS_CALLED)
    elif _after_transform(m, ref, port):  # (before the batch's cut: a transform's calls are on other shapes too)
        row.update(compared=False, after_transform=True, problem=AFTER_TRANSFORM)
    elif _batch_cut_otherwise(m["key"], ref, port):
        row.update(compared=False, batch_cut=True, problem=BATCH_CUT_OTHERWISE)
    elif _weights_applied(m["key"], ref, port):
        row.update(compared=False, weights_applied=True, problem=WEIGHTS_APPLIED)
    elif _evaluation_call(m, ref, port):
        row.update(compared=False, evaluation_call=True, problem=EVALUATION_CALL)
    elif _stateless_done(m, port):
        row.update(compared=False, stateless_done=True, problem=STATELESS_DONE)
    else:
        row.update(passed=False, problem="not called on the ported side")


def _blocks_differ(
    ro: dict, po: dict, row: dict, ref: Trace, port: Trace, tol: tuple[float, float], extra: float
) -> bool:
    """Whether two outputs' block sums differ past the tolerance. A complex output's blocks
    cut the way of a porter before the twenty-fifth read (its parts split across blocks:
    no `blocks_cut`) on one side and whole values on the other sum other values: a faithful
    port failed on "block sums" against an older trace. Where the cuts may differ they are
    compared on the boundaries both cuts share (`_common_differ`), and said: compared on their
    totals only, 11 of 200 values moved past the sample passed (seeds 701, 702, twenty-fifth read)."""
    r, p = ref.tensor(ro["blocks"]), port.tensor(po["blocks"])
    n, dtype = _count(ro["shape"]), ro.get("dtype") or ""
    if r is None or p is None or r.dim() != 2 or r.shape != p.shape or _cut_alike(ro, po, r.shape[1], ref, port):
        return not _blocks_cmp(r, p, tol[0], tol[1], n, extra, dtype)
    row["blocks_totals"] = True
    # a trace that does not say its cut may hold either (47d9d02's wrote whole values unsaid):
    # each cut it may hold is tried, and the blocks differ only where every pairing differs
    return all(
        _common_differ(r, p, (wr, wp), n, tol, extra, dtype)
        for wr in _cut_widths(ro, n, r.shape[1])
        for wp in _cut_widths(po, n, r.shape[1])
    )


def _cut_widths(o: dict, n: int, blocks: int) -> set[int]:
    """The parts each block but the last of a complex output of `n` values may hold: whole
    values (`blocks_cut: "values"`), or, where the trace does not say, also `2n // blocks` parts
    (porters before the twenty-fifth read)."""
    whole = 2 * (n // blocks)
    return {whole} if o.get("blocks_cut") == "values" else {whole, 2 * n // blocks}


def _common_differ(
    r: torch.Tensor, p: torch.Tensor, widths: tuple[int, int], n: int, tol: tuple, extra: float, dtype: str
) -> bool:
    """Whether two complex outputs' block sums, cut `widths` parts a block on each side, differ
    on the boundaries both cuts share: every multiple of the widths' lcm short of either last
    block (the widths differ by one part at most: each group is a block where they are equal,
    the totals where the lcm passes the last block). Each group's sum is its blocks' sum, exact
    on both sides; its allowance is its values' (`per`), and the noise floor's for each block."""
    import numpy as np

    step = math.lcm(*widths)
    bounds = list(range(step, (r.shape[1] - 1) * min(widths) + 1, step))
    rg, pg = (
        torch.stack([c.sum(dim=1) for c in torch.tensor_split(sums, [b // w for b in bounds], dim=1)], dim=1)
        for sums, w in ((r, widths[0]), (p, widths[1]))
    )
    edges = np.array([0, *bounds, 2 * n], dtype=np.float64)
    per = np.diff(edges) / 2  # values a group (a value: two parts)
    return not _blocks_cmp(rg, pg, tol[0], tol[1], n, extra * np.ceil(per * 2 / min(widths)), dtype, per)


def _cut_alike(ro: dict, po: dict, blocks: int, ref: Trace, port: Trace) -> bool:
    """Whether two outputs' blocks were cut alike: a real output's always are, and a complex
    one's where both cuts give one (`2n // blocks` parts a block is even), where both traces say
    their cut, or where neither does and nothing says they come from other porter code."""
    if not any(str(o.get("dtype") or "").startswith("complex") for o in (ro, po)):
        return True
    n = _count(ro["shape"])
    if blocks <= 0 or (2 * n) // blocks == 2 * (n // blocks):
        return True
    if ro.get("blocks_cut") != po.get("blocks_cut"):
        return False
    return ro.get("blocks_cut") is not None or not _other_porter(ref.manifest, port.manifest)


def weight_tolerance(dtype: str) -> float:
    """Relative tolerance of the initial-weight check, from the dtype: 8 units in the last
    place. Weights made on the CPU and moved are bit-identical; a few ulps allow for device
    arithmetic inside an initialiser (trunc_normal_'s erfinv, say)."""
    try:
        return 8 * torch.finfo(getattr(torch, dtype)).eps
    except (AttributeError, TypeError):
        return 0.0  # integer parameters must be equal


def _unravel(flat: int, shape: list[int]) -> list[int]:
    index = []
    for dim in reversed(shape or []):
        index.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return list(reversed(index))


def compare_parameter(p: dict, q: dict, ref: Trace, port: Trace) -> dict | None:
    """None when the parameter starts equal on both sides; else what differs, naming the
    element. Values decide (all of them, or a strided sample and a checksum of all their bits);
    the statistics (norms) are a summary and never a verdict."""
    if p["shape"] != q["shape"]:
        return {"name": p["name"], "why": f"shape {p['shape']} vs {q['shape']}"}
    r, t = ref.tensor(p["sample"]), port.tensor(q["sample"])
    if r is None or t is None or r.numel() != t.numel():
        return {"name": p["name"], "why": "no comparable values recorded"}
    rtol = weight_tolerance(p.get("dtype", "float32"))
    rd, td, per_element = _float64(r, t)
    atol = rtol * float(rd.abs().max()) if rd.numel() else 0.0
    diff = (rd - td).abs()
    bad = ~((diff <= atol + rtol * rd.abs()) | (rd.isnan() & td.isnan()))
    stride = int(p.get("sample_stride") or 1)
    if bool(bad.any()):
        i = int(torch.argmax(torch.where(bad, diff, torch.zeros_like(diff))))
        if not bool(torch.isfinite(diff[i])):
            i = int(bad.nonzero()[0])
        idx = _unravel(i // per_element * stride, p["shape"])
        differing = int(bad.reshape(-1, per_element).any(dim=1).sum())  # elements, not parts
        where = f"[{', '.join(map(str, idx))}]" if idx else ""
        return {
            "name": p["name"],
            "element": idx,
            "reference": float(rd[i]),
            "ported": float(td[i]),
            "abs_diff": float(diff[i]),
            "rtol": rtol,
            "differing": differing,
            "compared": int(r.numel()),
            "all_values": bool(p.get("all_values")),
            "why": f"{p['name']}{where}: reference {float(rd[i]):.7g}, ported {float(td[i]):.7g} "
            f"(abs diff {float(diff[i]):.3g}; {differing} of {r.numel()} "
            f"{'values' if p.get('all_values') else 'sampled values'} differ beyond "
            f"{rtol:.2g} relative, 8 ulps of {p.get('dtype', 'float32')})",
        }
    if p.get("all_values"):
        return None
    a, b = p.get("bits_checksum"), q.get("bits_checksum")
    if a is not None and b is not None and a != b and bool(torch.equal(r, t)):
        return {
            "name": p["name"],
            "element": None,
            "compared": int(r.numel()),
            "why": f"{p['name']}: the {r.numel()} sampled values are equal, but the checksum of "
            "all its values differs: elements outside the sample differ",
        }
    return None


# the deprecated hook forms' parameters (`torch.nn.utils.weight_norm`) by the suffix of their
# name, and the name `torch.nn.utils.parametrizations` gives the same parameter: a port that
# followed torch's deprecation warning failed on "parameters on one side only: reference
# ['2.weight_g', '2.weight_v'], ported ['2.parametrizations.weight.original0', ...]" (thirty-first read);
# one tuple a form: `weight_norm`'s, then `spectral_norm`'s (its pair failed on the names alone,
# thirty-second read's leftover)
HOOK_FORMS = ((("_g", "original0"), ("_v", "original1")), (("_orig", "original"),))
# the buffers of a hook form (`spectral_norm`'s power iteration) and the parametrization's names of them
HOOK_FORM_BUFFERS = ((("_u", "0._u"), ("_v", "0._v")),)


def _parametrized_alias(name: str, forms: tuple = HOOK_FORMS) -> str | None:
    """The parametrization's name of a parameter (or buffer, by `forms`) named by a deprecated hook
    form; None for another."""
    head, _, last = name.rpartition(".")
    for suffix, new in (pair for form in forms for pair in form):
        if last.endswith(suffix) and len(last) > len(suffix):
            return f"{head}.parametrizations.{last[: -len(suffix)]}.{new}".lstrip(".")
    return None


def _hook_form_renames(ref_names: set[str], port_names: set[str], forms: tuple = HOOK_FORMS) -> dict[str, str]:
    """Port name -> reference name for each parameter (buffer) one side names by a hook form and
    the other by its parametrization (only where neither side has the other's name)."""
    renames = {}
    for name in ref_names - port_names:
        if (alias := _parametrized_alias(name, forms)) in port_names - ref_names:
            renames[alias] = name
    for name in port_names - ref_names:
        if (alias := _parametrized_alias(name, forms)) in ref_names - port_names:
            renames[name] = alias
    return renames


# a parametrization's module call (`2.parametrizations.weight.0`, its list `...weight`, `#2` a later call): what
# follows its `parametrizations.` (one pattern with a `.*` head backtracked, quadratic in a long key)
_PARAMETRIZATIONS = "parametrizations."
_PARAMETRIZED = re.compile(r"(?P<name>\w+)(?:\.\d+)?(?:#\d+)?")


def _parametrized(key: str) -> str | None:
    """The parameter whose parametrization's module call `key` is (`2.parametrizations.weight.0`:
    `2.weight`), else None. The call's part holds three dots at most, so it starts at the key's
    start or after one of its last three dots: the latest that reads as one wins."""
    starts, dot = [0], len(key)
    for _ in range(3):
        dot = key.rfind(".", 0, dot)
        if dot < 0:
            break
        starts.append(dot + 1)
    for at in sorted(set(starts), reverse=True):
        tail = _PARAMETRIZED.fullmatch(key, at + len(_PARAMETRIZATIONS))
        if key.startswith(_PARAMETRIZATIONS, at) and tail is not None:
            head = key[: at - 1] if at else ""
            return f"{head}.{tail['name']}" if head else tail["name"]
    return None


def _made_by_hook_form(key: str, port: Trace) -> bool:
    """Whether a reference's parametrization call is one the port makes by a deprecated hook form
    (no module, so no call to record): it FAILed "first diverging module at step 1:
    2.parametrizations.weight.0: not called on the ported side" (thirty-first read)."""
    base = _parametrized(key)
    if base is None:
        return False
    names = {q.get("name") for q in port.manifest.get("parameters", []) if isinstance(q, dict)}
    return any(all(base + suffix in names for suffix, _ in form) for form in HOOK_FORMS)


# what a flat parameter holding the other side's parameters is checked on, beside its element count:
# each statistic that the whole's is of its parts' (the least, the largest, the norm), and their rtol
FLAT_STATS: dict[str, Callable[[list[float]], float]] = {
    "min": min,
    "max": max,
    "absmax": max,
    "l2": lambda parts: math.sqrt(sum(x * x for x in parts)),
}
FLAT_RTOL = 1e-5


def _flat_stats(entries: list[dict], trace: Trace) -> list[float]:
    """`FLAT_STATS` of the parameters `entries` taken as one tensor."""
    rows = [dict(zip(STAT_NAMES, trace.tensor(e["stats"]).double().tolist())) for e in entries]
    return [whole([r[k] for r in rows]) for k, whole in FLAT_STATS.items()]


def _flat_holder(missing: list[dict], only: list[dict], ref: Trace, port: Trace) -> dict | None:
    """Where one side's only unpaired parameter is a flat one (1-D, one dtype) holding as many
    values as the other side's unpaired parameters together, with the same extremes and norm
    (`FLAT_STATS`): FSDP's `FlatParameter`, a ZeRO flat buffer, one made by hand. A faithful port
    so, its losses equal, FAILed "parameters on one side only: reference ['0.weight', ...],
    ported ['<optimizer>.param0']" and nothing else (thirty-fifth trleft2 read); set aside and said
    (`_flat_said`)."""
    for side, one, many, t_one, t_many in (("port", only, missing, port, ref), ("reference", missing, only, ref, port)):
        if len(one) != 1 or len(many) < 2 or len(one[0]["shape"]) != 1:
            continue
        (flat,) = one
        if {e.get("dtype") for e in many} != {flat.get("dtype")}:
            continue
        if sum(_count(e["shape"]) for e in many) != _count(flat["shape"]):
            continue
        whole, parts = _flat_stats([flat], t_one), _flat_stats(many, t_many)
        if all(math.isclose(a, b, rel_tol=FLAT_RTOL, abs_tol=0.0) for a, b in zip(whole, parts)):
            return {"side": side, "name": flat["name"], "holds": [e["name"] for e in many]}
    return None


def _flat_said(flat: dict | None) -> list[str]:
    """The line where a flat parameter was paired with the parameters it holds (`_flat_holder`)."""
    if flat is None:
        return []
    other = "reference" if flat["side"] == "port" else "port"
    return [
        f"the {flat['side']} holds the {other}'s {len(flat['holds'])} parameters ({', '.join(flat['holds'][:3])}"
        f"{', ...' if len(flat['holds']) > 3 else ''}) in one flat parameter, {flat['name']} (FSDP's FlatParameter, "
        "a ZeRO flat buffer): its element count, extremes and norm agree with theirs, its values are not set beside "
        "theirs one by one; the losses, gradient norms and module outputs are compared"
    ]


def compare_parameters(ref: Trace, port: Trace) -> dict:
    ref_params = ref.manifest.get("parameters", [])
    port_params = port.manifest.get("parameters", [])
    renames = _hook_form_renames({p["name"] for p in ref_params}, {q["name"] for q in port_params})
    port_params = [{**q, "name": renames.get(q["name"], q["name"])} for q in port_params]
    pp = {p["name"]: p for p in port_params}
    differing, missing, summary = [], [], []
    for p, q in paired(ref_params, port_params, "name"):
        if q is None:
            missing.append(p["name"])
            continue
        d = compare_parameter(p, q, ref, port)
        if d is not None:
            differing.append(d)
        elif p["shape"] == q["shape"]:
            stats = _stats_cmp(ref.tensor(p["stats"]), port.tensor(q["stats"]), 1e-6, 0.0)
            if stats:
                summary.append({"name": p["name"], "statistics": stats})
    names = {p["name"] for p in ref_params}
    only, compared = [n for n in pp if n not in names], len(ref_params) - len(missing)
    flat = _flat_holder([p for p in ref_params if p["name"] in missing], [pp[n] for n in only], ref, port)
    if flat is not None:
        missing, only = [], []
    pr = {p["name"]: p for p in ref_params}
    return {
        "renamed": _renamed([pr[n] for n in missing], [pp[n] for n in only], ref, port),
        "compared": compared,
        "differing": differing,
        "missing_in_port": missing,
        "only_in_port": only,  # (recording order: the first the port made first)
        "flat": flat,
        "by": "values: all of a parameter's values up to "
        f"{ref.manifest.get('limits', {}).get('param_elements', 64)} elements, else a strided "
        "sample and a checksum of all its bits; tolerance 8 ulps of its dtype",
        "summary_only": summary,
    }


def _renamed(missing: list[dict], only: list[dict], ref: Trace, port: Trace) -> list[list]:
    """[reference name, port name] for each parameter of one side only, where each pairs with one of
    the other side's of the same shape and initial values (the first such, in recording order): a
    `ParameterDict` made a `ParameterList` (the same training by `assert_close`) FAILed "parameters
    on one side only: reference ['p.b1', ...], ported ['p.0', ...]", read as parameters missing
    (the thirty-sixth read's leftover). The FAIL stays (a checkpoint saved on one side does not
    load on the other by name); it is said as the rename it is. Nothing where any does not pair.
    Parameters that pair with several of the other side's (equal initial values: zero biases) are
    one entry [[reference names], [port names]]: which is which is not recorded (the thirty-seventh
    read: the first in recording order was named, crossed where the port made them in another order)."""
    if not missing or len(missing) != len(only):
        return []
    free, alike = list(only), {}
    for p in missing:
        alike[p["name"]] = [q for q in only if q["shape"] == p["shape"] and compare_parameter(p, q, ref, port) is None]
        q = next((q for q in free if q in alike[p["name"]]), None)
        if q is None:
            return []
        free.remove(q)
    out: list[list] = []
    for p in missing:
        qs = [q["name"] for q in alike[p["name"]]]
        if len(qs) == 1:
            out.append([p["name"], qs[0]])
        elif not any(isinstance(e[0], list) and e[1] == qs for e in out):
            out.append([[r["name"] for r in missing if [q["name"] for q in alike[r["name"]]] == qs], qs])
    return out


def _renamed_said(renamed: list[list]) -> str:
    """`_renamed`'s pairs as the rename line names them, a group of alike parameters as such."""
    shown = [
        f"{', '.join(map(repr, a))} as {', '.join(map(repr, b))} in an order not recorded (equal initial values)"
        if isinstance(a, list)
        else f"{a!r} as {b!r}"
        for a, b in renamed[:3]
    ]
    return ", ".join(shown) + (f" and {len(renamed) - 3} more" if len(renamed) > 3 else "")


def step_time_gap(ref: SideSummary, port: SideSummary, ranked: int) -> list[Gap]:
    """The steady step time of both sides, as an informational gap (emulation says nothing
    about hardware speed, and the reference under the CUDA shim is not a GPU)."""
    r = (ref.perf or {}).get("steady_step_s")
    p = (port.perf or {}).get("steady_step_s")
    if r is None or p is None:
        return []
    caveat = []
    if port.emulated:
        caveat.append("the port ran on emulation: not a hardware speed")
    if not ref.hardware:
        caveat.append("the reference ran on the CPU: not a GPU speed")
    return [
        Gap(
            ranked + 1,
            "info",
            "step_time",
            "ported",
            f"steady step time {p * 1000:.1f} ms ported vs {r * 1000:.1f} ms reference (×{p / r:.2f})"
            if r > 0
            else f"steady step time {p * 1000:.1f} ms ported",
            "compare on the target hardware; on XLA, recompiles and host syncs above are the "
            "usual causes of slow steps",
            caveat,
        )
    ]


def compare_traces(
    ref: Trace,
    port: Trace,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    config: dict | None = None,
    ref_side: SideSummary | None = None,
    port_side: SideSummary | None = None,
) -> ScriptResult:
    """The verdict of a port's run against the reference's; a run of several ranks (torchrun)
    is compared rank by rank."""
    res = _compare_ranks(ref, port, rtol=rtol, atol=atol, config=config, ref_side=ref_side, port_side=port_side)
    lines = unread(ref, "the reference trace") + unread(port, "the ported trace")
    res.warnings += lines
    res.reasons += lines
    return res


def unread(trace: Trace, what: str, shown: int = 3) -> list[str]:
    """The tensors of a trace that no manifest entry names, said, not refused: nothing reads
    them, so they cannot decide the verdict, and a newer porter may write tensors this one does
    not know; but a file edited by hand, or merged from another, is not the run it claims
    (`trace ops` too, which reads the manifest's operators only). `what`: "the reference trace"."""
    names = unnamed_tensors(trace)
    if not names:
        return []
    first = ", ".join(repr(n[:80]) for n in names[:shown])
    return [
        f"{what} holds {len(names)} tensor(s) no manifest entry names ({first}"
        f"{', ...' if len(names) > shown else ''}): not read, not compared (a newer porter's, or the file was edited)"
    ]


def _compare_ranks(
    ref: Trace,
    port: Trace,
    *,
    rtol: float | None,
    atol: float | None,
    config: dict | None,
    ref_side: SideSummary | None,
    port_side: SideSummary | None,
) -> ScriptResult:
    """`compare_traces`'s verdict, one rank or rank by rank."""
    if ref.world_size == 1 and port.world_size == 1:
        return _compare_one(ref, port, rtol=rtol, atol=atol, config=config, ref_side=ref_side, port_side=port_side)
    # rank by rank, each rank's result summed up and let go (its module rows and its tensors,
    # made from the files when read, are not held for the next: 1,024 ranks held them all)
    res = None
    ranks = []
    for r in range(min(ref.world_size, port.world_size)):
        x = _compare_one(
            ref.rank(r), port.rank(r), rtol=rtol, atol=atol, config=config, ref_side=ref_side, port_side=port_side
        )
        ranks.append(_rank_row(r, x))
        res = res or x
    assert res is not None  # a trace holds rank 0
    res.ranks = ranks
    bad = [x for x in res.ranks if x["verdict"] != "pass"]
    common = [t for t in res.reasons if t.startswith(("tolerances", "noise floor"))]
    if ref.world_size != port.world_size:
        res.verdict = "fail"
        res.reasons = [f"the reference ran {ref.world_size} rank(s), the port {port.world_size}"] + common
        return res
    if not bad:
        res.reasons = [f"{len(res.ranks)} ranks, compared rank by rank: " + res.reasons[0]] + common
        return res
    res.verdict = "error" if any(x["verdict"] == "error" for x in bad) else "fail"
    parted = sorted((x for x in bad if x["parted_at"]), key=lambda x: (x["parted_at"], x["rank"]))
    first = parted[0] if parted else bad[0]
    head = (
        f"rank {first['rank']} parts first, at step {first['parted_at']}"
        if first["parted_at"]
        else f"rank {first['rank']} differs"
    )
    res.reasons = (
        [f"{head} ({len(bad)} of {len(res.ranks)} ranks differ)"]
        + [f"rank {first['rank']}: {t}" for t in first["reasons"]]
        + common
    )
    res.parted_at = first["parted_at"]
    return res


def _rank_row(r: int, x: ScriptResult) -> dict:
    """One rank's line of a run of several ranks."""
    return {
        "rank": r,
        "verdict": x.verdict,
        "parted_at": x.parted_at,
        "first_divergence": (x.first_divergence or {}).get("module"),
        "max_loss_abs": x.max_loss_abs,
        "max_loss_rel": x.max_loss_rel,
        "reasons": [t for t in x.reasons if not t.startswith(("tolerances", "noise floor"))],
        "collectives": [
            {"step": st["step"], "reference": st.get("reference_collectives"), "ported": st.get("ported_collectives")}
            for st in x.steps
        ],
    }


def _compare_one(
    ref: Trace,
    port: Trace,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    config: dict | None = None,
    ref_side: SideSummary | None = None,
    port_side: SideSummary | None = None,
) -> ScriptResult:
    from porter.verify.gaps import collect_gaps

    ref, port = listed_pair(ref, port)
    rm, pm = ref.manifest, port.manifest
    ref_side = ref_side or side_summary(ref, "reference")
    port_side = port_side or side_summary(port, "ported")
    res = ScriptResult(
        "error", [], dict(config or {}), ref_side, port_side, where={"reference": where(ref), "ported": where(port)}
    )
    regime = _lower(rm.get("precision", {}).get("regime", "float32"), pm.get("precision", {}).get("regime", "float32"))
    res.regime = regime
    floor = rm.get("noise_floor")
    res.noise_floor = floor
    if floor is not None and not floor.get("loss_envelope"):
        floor = None  # not measured (the reason is in res.noise_floor)
    res.rng = causes.rng_lines(rm, pm)
    res.made_on = {"reference": causes.made_on(rm), "ported": causes.made_on(pm)}

    def tol(table):
        r, a = table[regime]
        return (rtol if rtol is not None else r, atol if atol is not None else a)

    mod_tol, loss_tol, gn_tol = tol(DEFAULT_TOLERANCES), tol(LOSS_TOLERANCES), tol(GRAD_NORM_TOLERANCES)
    res.tolerances = {
        "regime": regime,
        "modules": list(mod_tol),
        "loss": list(loss_tol),
        "grad_norm": list(gn_tol),
        "lr_rtol": LR_RTOL,
        "initial_weights": "8 ulps of each parameter's dtype, by value",
        "overridden": rtol is not None or atol is not None,
    }
    res.gaps = collect_gaps([ref_side, port_side], (config or {}).get("target") or "xla", None)
    res.gaps += step_time_gap(ref_side, port_side, len(res.gaps))
    errors, device_fails = _errors(ref, port, ref_side, port_side)
    fails: list[str] = []
    ref_steps, port_steps = rm.get("steps", []), pm.get("steps", [])
    # per step
    n, pairs = min(len(ref_steps), len(port_steps)), _group_pairs(rm, pm)
    for i in range(max(len(ref_steps), len(port_steps))):
        a = ref_steps[i] if i < len(ref_steps) else None
        b = port_steps[i] if i < len(port_steps) else None
        res.steps.append(_step_row(i, a, b, floor, (loss_tol, gn_tol), pairs))
    compared = [r for r in res.steps[:n]]
    seen = [r for r in compared if r["loss_ok"] is not None]  # (`_loss_unseen`: not compared)
    if seen:
        res.max_loss_abs = max(r["abs_diff"] for r in seen)
        rels = [r["rel_diff"] for r in seen if r["rel_diff"] is not None]
        res.max_loss_rel = max(rels) if rels else None
    parted = next((r for r in compared if r["loss_ok"] is False), None)
    if parted is not None:
        res.parted_at = parted["step"]
    # structure and start
    res.parameters = compare_parameters(ref, port)
    ref_tied = {tuple(g) for g in rm.get("tied", [])}
    port_tied = {tuple(g) for g in pm.get("tied", [])}
    res.tied = {
        "reference": sorted(map(list, ref_tied)),
        "ported": sorted(map(list, port_tied)),
        "untied_in_port": sorted(map(list, ref_tied - port_tied)),
        # (a group the reference ties too, with more names, is no new tie)
        "tied_in_port_only": sorted(list(g) for g in port_tied if not any(set(g) <= set(r) for r in ref_tied)),
    }
    res.modules, res.first_divergence = compare_modules(ref, port, mod_tol[0], mod_tol[1], floor=floor)
    if not errors:
        fails += _fails(res, rm, pm, ref_steps, port_steps, compared, parted, loss_tol, device_fails)
    asked = _steps_asked(rm, pm)  # no verdict only where nothing else fails (weights that differ still do)
    errors += asked if asked and not fails and not errors else []
    res.warnings += asked if fails else []
    res.warnings += _added_modules(rm, pm) if port_steps else _unnamed_modules(pm)
    res.warnings += _other_target((config or {}).get("target"), pm)
    res.warnings += _other_porter(rm, pm)
    res.warnings += _other_libraries(rm, pm)
    res.warnings += _flat_said(res.parameters.get("flat"))
    tol_text = (
        f"tolerances ({regime}{' autocast' if regime != 'float32' else ''}): loss rtol="
        f"{loss_tol[0]:g} atol={loss_tol[1]:g}; module outputs rtol={mod_tol[0]:g} "
        f"atol={mod_tol[1]:g}; grad norm rtol={gn_tol[0]:g} atol={gn_tol[1]:g}; "
        f"learning rate rtol={LR_RTOL:g}"
    )
    res.reasons = errors + fails
    res.verdict = "error" if errors else ("fail" if fails else "pass")
    if res.verdict == "pass":
        emu = " (the port on emulation, not hardware)" if port_side.emulated else ""
        outputs = sum(m.get("compared", True) and m["type"] != "input" for m in res.modules)
        unseen = sum(r["loss_ok"] is None for r in compared)  # (`_loss_unseen`)
        agree = (
            f"learning rate and gradient norm agree, the loss not compared at {unseen}"
            if unseen
            else "loss, learning rate and gradient norm agree"
        )
        res.reasons.append(
            f"{n} optimizer step(s): {agree}; {outputs} module output(s) at step 1 and "
            f"{res.parameters['compared']} initial parameter(s) match{emu}"
        )
    res.reasons.append(tol_text)
    res.reasons += [f"{side}: {said}" for side, said in _spans(rm, pm)]
    if floor is not None:
        res.reasons.append(noise.describe(floor))
    elif res.noise_floor is not None:
        res.reasons.append(f"noise floor not measured: {res.noise_floor.get('why')}")
    res.reasons += res.warnings
    return res


def _spans(rm: dict, pm: dict) -> list[tuple[str, str]]:
    """Each side's steps said as the counted optimizer's where another stepped between them
    (`iterations_spanned`): which iterations `--steps N` covered was not said; and step 1's calls
    where they could not begin at the step's iteration (`calls_unrestarted`)."""
    sides = (("reference", rm), ("port", pm))
    return [(side, said) for side, m in sides for read in (iterations_spanned, calls_unrestarted) if (said := read(m))]


__all__ = ["ScriptResult", "compare_traces", "side_summary", "LOSS_TOLERANCES", "GRAD_NORM_TOLERANCES"]


def _errors(ref: Trace, port: Trace, ref_side: SideSummary, port_side: SideSummary) -> tuple[list[str], list[str]]:
    """What keeps the comparison from giving a verdict (a side failed, no optimizer step, a
    device finding that is an error, a reference loss that is not finite), and the device
    findings that are failures."""
    rm, pm = ref.manifest, port.manifest
    errors = []
    for s, m in ((ref_side, rm), (port_side, pm)):
        if s.error:
            errors.append(f"{s.role} side {_stopped_when(m)}: {_how_it_stopped(s.error)}")
    ref_steps = rm.get("steps", [])
    if not ref_steps and not ref_side.error:
        how = rm.get("stopped")
        errors.append(
            f"the reference stopped before its first optimizer step ({how}): no tensor of it was recorded"
            if isinstance(how, str) and how.startswith("the program called")  # os._exit(N), unsaid before
            else "the reference recorded no optimizer step: the command never called "
            "optimizer.step() (is it a training script? were --steps reached?)"
        )
    device_errors, device_fails = causes.device_findings(rm, pm)
    errors += device_errors
    rl = ref.tensors.get("steps.loss", torch.zeros(0, dtype=torch.float64))
    unseen = [i for i, s in enumerate(ref_steps) if _loss_unseen(s)]  # (not compared: `_unseen_losses` says it)
    bad = [i + 1 for i in (~rl.isfinite()).nonzero().flatten().tolist() if i not in unseen]
    if ref_steps and bad:
        errors.append(f"the reference's loss is not finite at step {bad[0]}: it is no baseline")
    return errors, device_fails


def _steps_asked(rm: dict, pm: dict) -> list[str]:
    """Both sides stopped at the steps they were asked for, and were asked for other counts: a
    faithful port recorded with `--steps 2` beside a reference with 3 failed with "the reference
    recorded 3 optimizer step(s), the port 2", the recording's choice blamed on the port
    (twenty-seventh read). A side that stopped otherwise (its script ended) still fails. No
    verdict only where nothing else fails: a port whose weights differ, recorded with `--steps 1`
    beside a reference of 10, was "no verdict" (twenty-seventh trace2 read); said beside a fail."""
    asked = [m.get("steps_requested") for m in (rm, pm)]
    if not all(type(n) is int for n in asked) or asked[0] == asked[1]:
        return []
    if any(m.get("stopped") != "steps reached" or len(m.get("steps") or []) != n for m, n in zip((rm, pm), asked)):
        return []
    return [
        f"the reference was recorded with --steps {asked[0]}, the port with --steps {asked[1]}: "
        "record both with the same --steps; no verdict"
    ]


def _stopped_when(m: dict) -> str:
    """When a side that failed stopped, by the steps its trace holds: "before its first
    optimizer step" was said as "a trace from an older porter?" (twenty-second read)."""
    n = len(m.get("steps") or [])
    return "stopped before its first optimizer step" if not n else f"stopped after optimizer step {n}"


def _how_it_stopped(e: dict) -> str:
    """A side's recorded error in one line: `sys.exit(3)` as its exit status, else the exception."""
    loc = f" at {e['location']}" if e.get("location") else ""
    msg = (e.get("message") or "").strip().splitlines()
    if e.get("type") == "SystemExit":
        return f"exit status {msg[0] if msg else 'None'} (sys.exit{loc})"
    return f"{e.get('type', '')}{loc}: {msg[0] if msg else ''}"


def _step_row(i: int, a: dict | None, b: dict | None, floor: dict | None, tols: tuple, pairs: list | None) -> dict:
    """One optimizer step of both sides: loss, gradient norm and learning rate, each judged
    against its tolerance or the noise floor (a step only one side reached is judged failed)."""
    row = {
        "step": i + 1,
        "reference_loss": a and a["loss"],
        "ported_loss": b and b["loss"],
        "abs_diff": None,
        "rel_diff": None,
        "loss_ok": False,
        "reference_grad_norm": a and a["grad_norm"],
        "ported_grad_norm": b and b["grad_norm"],
        "grad_norm_ok": False,
        "reference_lr": a and a["lr"],
        "ported_lr": b and b["lr"],
        "lr_ok": False,
        "reference_time_s": a and a.get("step_time_s"),
        "ported_time_s": b and b.get("step_time_s"),
        "reference_without_grad": a and a.get("without_grad"),
        "ported_without_grad": b and b.get("without_grad"),
        "reference_collectives": a and a.get("collectives"),
        "ported_collectives": b and b.get("collectives"),
    }
    if a and b:
        loss_tol, gn_tol = tols
        ra, pa = float(a["loss"]), float(b["loss"])
        diff = abs(pa - ra)
        allowed = noise.allowed(floor, "loss_envelope", i) if floor else None
        row["abs_diff"] = diff
        row["rel_diff"] = diff / abs(ra) if ra else None
        row["noise_allowed"] = allowed
        row["loss_ok"] = _close(ra, pa, *loss_tol) or diff <= (allowed or 0.0)
        if _loss_unseen(a) or _loss_unseen(b):
            row["loss_ok"] = None
        ga, gb = float(a["grad_norm"]), float(b["grad_norm"])
        row["grad_norm_ok"] = _close(ga, gb, *gn_tol) or abs(gb - ga) <= noise.allowed(floor, "grad_norm_envelope", i)
        row["lr_ok"] = _lrs_close(a["lr"], b["lr"], pairs)
    return row


# the ways to gradients whose loss no hook of the recorder reaches (`_unseen_losses`): the engine
# called directly was left out, and a port running its backward so was told only of torch.func
# (thirty-fifth read's leftover)
UNSEEN_BACKWARDS = (
    "by torch.func.grad, grad_and_value or vjp, or by autograd's engine called directly "
    "(`Variable._execution_engine.run_backward`)"
)


def _loss_unseen(step: dict | None) -> bool:
    """Whether a recorded step holds no loss: it called no backward porter sees (its gradients
    came from `torch.func.grad` or `vjp`, whose loss no hook reaches), so the recorder wrote NaN.
    Compared, a faithful port of a `loss.backward()` reference failed on "the loss curves part at
    step 1: reference 1.37, ported nan ... the loss is made from it otherwise", and such a
    reference was "not finite ... no baseline" (twenty-ninth read's leftover)."""
    if not isinstance(step, dict) or type(step.get("backward_calls")) is not int or step["backward_calls"] != 0:
        return False
    loss = step.get("loss")
    return isinstance(loss, float) and math.isnan(loss)


def _skipped_iterations(rm: dict, pm: dict) -> list[str]:
    """A line where a side's `GradScaler` skipped iterations (inf gradients: no update) and the
    other's skipped other counts: each side's step k is its k-th update, so the two steps follow
    other counts of iterations (other batches, where the data changes each iteration). They were
    dropped unsaid (thirtieth trace read's leftover)."""
    skips = [_scaler_skips(m) for m in (rm, pm)]
    if skips[0] == skips[1] or not any(map(any, skips)):
        return []
    said = ", ".join(_skips_said(role, n, m) for role, n, m in zip(("reference", "port"), skips, (rm, pm)))
    return [
        f"the GradScaler skipped iterations on one side or more (inf gradients: no update): {said}; each "
        "side's step k is its k-th update, so where the data changes each iteration the steps compared "
        "follow other batches, and a copy's (EMA's) rate read across a skip one side did not make is not compared"
    ]


def _skips_said(role: str, skips: list[int], m: dict) -> str:
    """A side's skipped iterations in words; a trace of an older porter does not say them (no
    `scaler_skipped`): said as "none", a reference that skipped two iterations as the port did
    was read as skipping none (thirty-first read)."""
    if any(skips):
        return f"the {role}'s {sum(skips)} (first before step {next(k for k, x in enumerate(skips, 1) if x)})"
    if not any(isinstance(s, dict) and "scaler_skipped" in s for s in m.get("steps") or []):
        return f"the {role}'s not recorded (a trace of an older porter: it may have skipped as many)"
    return f"the {role}'s none"


def _unseen_losses(compared: list[dict], ref_steps: list, port_steps: list) -> list[str]:
    """A line per side whose loss was not recorded at a compared step (`_loss_unseen`)."""
    out = []
    for role, steps in (("reference", ref_steps), ("port", port_steps)):
        at = [r["step"] for r in compared if r["loss_ok"] is None and _loss_unseen(steps[r["step"] - 1])]
        if at:
            out.append(
                f"the {role}'s loss is not recorded at {len(at)} step(s) (first: step {at[0]}): those steps called "
                f"no backward porter sees (gradients taken {UNSEEN_BACKWARDS}), so the loss "
                "is not compared there; the gradient norm, the learning rate and the initial weights are"
            )
    return out


def _groups_resized(rm: dict, pm: dict) -> list[str]:
    """A line per side where a parameter group held another count of parameters after step 1
    (`group_sizes`: parameters appended to or removed from a group's list): the traces name each
    group by step 1's parameters, so a group empty at step 1 and filled later is held by no pair
    and its rate was not compared, unsaid (twenty-ninth trace2 read's leftover)."""
    out = []
    for role, m in (("reference", rm), ("port", pm)):
        sizes = [s.get("group_sizes") for s in m.get("steps") or []]
        first = sizes[0] if sizes and isinstance(sizes[0], list) else None
        changed = next((i for i, x in enumerate(sizes) if isinstance(x, list) and x[: len(first or [])] != first), None)
        if first is not None and changed is not None:
            out.append(
                f"the {role}'s parameter groups held {first} parameter(s) at step 1 and {sizes[changed]} at step "
                f"{changed + 1} (parameters added to or removed from a group's list): the traces name each group by "
                "step 1's parameters, so the rates of a group emptied or filled later are compared by those names "
                "(a group empty at step 1 not at all)"
            )
    return out


def _filled_later(rm: dict, pm: dict) -> list[set[int]]:
    """Per side, the groups its steps hold parameters in (`group_sizes`), where both sides say
    them: read on one side only (the other's trace of an older porter), a group empty at step 1
    and filled later was paired on that side alone, and a faithful port failed on "the learning
    rate differs at step 1: reference [0.1, 0.01], ported [0.1, 0.01]" (thirtieth trace2 read)."""
    steps = [[s for s in m.get("steps") or [] if isinstance(s, dict)] for m in (rm, pm)]
    if not all(any(isinstance(s.get("group_sizes"), list) for s in side) for side in steps):
        return [set(), set()]
    return [{k for s in side for k, n in enumerate(s.get("group_sizes") or []) if n} for side in steps]


def _named_groups(rm: dict, pm: dict) -> list[list[list[str]]]:
    """Each side's groups by the parameters they hold, those added after step 1 after step 1's
    (`Recorder._name_added_groups`), the port's parameters by the reference's names where one side
    names them by weight_norm's hook form and the other by its parametrization (`_hook_form_renames`):
    not read so, a migrated port's bias-free weight-normed groups were paired by their order, and
    one that added two of them in another order at each other's rates passed (thirty-first read)."""
    groups = [[*(m.get("param_groups") or []), *(m.get("param_groups_added") or [])] for m in (rm, pm)]
    ref_names, port_names = ({n for g in side for n in g} for side in groups)
    renames = _hook_form_renames(ref_names, port_names)
    return [groups[0], [[renames.get(n, n) for n in g] for g in groups[1]]]


def _group_pairs(rm: dict, pm: dict) -> list[tuple[int | None, int | None]] | None:
    """(reference group, port group) of each parameter both sides' groups name
    (`recorder._group_names`); None where none is named on both (a trace of an older porter).
    A group step 1 holds empty (a `no_decay` group of a model without biases) is held by no group
    of the other side, (k, None) or (None, k): its rate moves nothing. Read as added after step 1,
    a faithful port without it failed on "the learning rate differs" (twenty-ninth trace2 read)."""
    groups = _named_groups(rm, pm)
    where = [{n: i for i, g in enumerate(gs) for n in g} for gs in groups]
    pairs = sorted({(where[0][n], where[1][n]) for n in where[0].keys() & where[1].keys()})
    if not pairs:
        return None
    # (one filled after step 1 holds parameters: compared as a group no pair holds, as one added later)
    filled = _filled_later(rm, pm)
    empty = [[k for k, g in enumerate(gs) if not g and k not in f] for gs, f in zip(groups, filled)]
    return [*pairs, *((k, None) for k in empty[0]), *((None, k) for k in empty[1])]


def _lrs_close(a: list, b: list, pairs: list[tuple[int | None, int | None]] | None) -> bool | None:
    """Each parameter's learning rate alike, its group on each side paired by the parameters it
    holds (`_group_pairs`): paired by count, a port that split the reference's groups of other
    rates failed on the rate, and one that swapped two groups' rates passed (twenty-seventh read).
    Unnamed groups (a trace of an older porter) are alike where every group of both runs at one
    rate. Of equal counts: alike where their rates agree in order (said: `_groups_by_order`),
    differing where a rate of one side is no group's on the other, else (the same rates in
    another order: a faithful port that listed its groups otherwise failed, paired by order;
    twenty-eighth read's leftover) None, not compared, as where the counts differ. Groups no pair
    holds (one `add_param_group` added after step 1, unfreezing a layer) are read as unnamed groups
    (`_unnamed_groups`): left out, a port that unfroze it at another rate passed (twenty-ninth read);
    their None stays None (said: `_unpaired_groups`): read as not alike, a faithful port that added
    two groups in another order failed on "the learning rate differs" (twenty-ninth trace2 read)."""
    if pairs is not None:
        # (a pair of groups added after step 1 on neither side yet: `Recorder._name_added_groups`)
        live = [(i, j) for i, j in _both(pairs) if i < len(a) or j < len(b)]
        if not all(i < len(a) and j < len(b) and _close(a[i], b[j], LR_RTOL, 0.0) for i, j in live):
            return False
        rest = _unnamed_groups(a, b, pairs)
        if bool(rest[0]) != bool(rest[1]):
            return False  # groups added on one side only
        return _lrs_close(rest[0], rest[1], None)
    if bool(a and b) and all(_close(a[0], y, LR_RTOL, 0.0) for y in (*a, *b)):
        return True
    if len(a) != len(b):
        return None
    if all(_close(x, y, LR_RTOL, 0.0) for x, y in zip(a, b)):
        return True
    if any(not any(_close(x, y, LR_RTOL, 0.0) for y in other) for one, other in ((a, b), (b, a)) for x in one):
        return False
    return None


def _lr_group_words(row: dict, rm: dict, pm: dict) -> str:
    """The first pair of groups (`_group_pairs`) whose rates differ at `row`'s step, by a parameter
    it holds: two sides' groups in another order differ there with the same lists of rates."""
    groups = _named_groups(rm, pm)
    a, b = row.get("reference_lr") or [], row.get("ported_lr") or []
    for i, j in _both(_group_pairs(rm, pm) or []):
        if i < len(a) and j < len(b) and not _close(a[i], b[j], LR_RTOL, 0.0):
            held = sorted(set(groups[0][i]) & set(groups[1][j]))
            return f" (the group holding {held[0]}: reference {a[i]:g}, ported {b[j]:g})" if held else ""
    return ""


def _both(pairs: list[tuple[int | None, int | None]]) -> list[tuple[int, int]]:
    """The pairs of a group on each side (`_group_pairs`: not an empty group's)."""
    return [(i, j) for i, j in pairs if i is not None and j is not None]


def _unnamed_groups(a: list, b: list, pairs: list[tuple[int | None, int | None]] | None) -> tuple[list, list]:
    """Each side's rates of the groups no pair (`_group_pairs`) holds: all of them in a trace of an
    older porter, else the groups `add_param_group` added after step 1 (the traces name step 1's only)."""
    held = [{p[side] for p in pairs or ()} for side in (0, 1)]
    return [r for k, r in enumerate(a) if k not in held[0]], [r for k, r in enumerate(b) if k not in held[1]]


def _unnamed_words(pairs: list | None) -> str:
    """Why `_unnamed_groups` cannot be told apart by their parameters, in words."""
    if pairs is None:
        return "the traces do not say which parameters each holds (recorded by an older porter?)"
    return "they were added after step 1 (`add_param_group`), and the traces name step 1's groups' parameters only"


def _unpaired_groups(compared: list[dict], rm: dict, pm: dict) -> list[str]:
    """A line where the sides' parameter groups could not be paired (`_lrs_close` None)."""
    row = next((r for r in compared if r["lr_ok"] is None), None)
    if row is None:
        return []
    pairs = _group_pairs(rm, pm)
    a, b = _unnamed_groups(row["reference_lr"] or [], row["ported_lr"] or [], pairs)
    return [
        f"the learning rates are not compared from step {row['step']}: the reference's parameter groups "
        f"({a}) and the port's ({b}) are of other counts and rates, or of the same rates in another order, "
        f"and {_unnamed_words(pairs)}, so they cannot be paired"
    ]


def _groups_by_order(compared: list[dict], rm: dict, pm: dict) -> list[str]:
    """A line where unnamed groups of other rates were paired by their order (`_lrs_close`): a
    port whose groups hold other parameters at those rates agrees there, unseen; the pass was said
    nowhere (twenty-eighth read's leftover), nor where the groups were added after step 1
    (twenty-ninth trace2 read)."""
    pairs = _group_pairs(rm, pm)
    for row in compared:
        a, b = _unnamed_groups(row.get("reference_lr") or [], row.get("ported_lr") or [], pairs)
        if row["lr_ok"] and len(a) == len(b) > 1 and not all(_close(a[0], y, LR_RTOL, 0.0) for y in (*a, *b)):
            return [
                f"the parameter groups ({len(a)}, at {a} from step {row['step']}) are paired by their order: "
                f"{_unnamed_words(pairs)}, so a port whose groups hold other parameters at these rates is not "
                "seen; record both sides again to pair them by the parameters they hold"
            ]
    return []


def _fails(
    res: ScriptResult,
    rm: dict,
    pm: dict,
    ref_steps: list,
    port_steps: list,
    compared: list[dict],
    parted: dict | None,
    loss_tol: tuple,
    device_fails: list[str],
) -> list[str]:
    """Why the port fails, when both sides ran: steps, ties, the start, the first diverging
    module, the loss curves, learning rate and gradient norm (and the random-number causes
    behind them); the shape warnings go to res.warnings."""
    fails: list[str] = []
    if len(ref_steps) != len(port_steps) and not _steps_asked(rm, pm):
        fails.append(f"the reference recorded {len(ref_steps)} optimizer step(s), the port {len(port_steps)}")
    fails += _tie_fails(res.tied)
    evaluations = _evaluations(rm, pm)
    res.warnings = (
        causes.branch_warnings(rm, pm)
        + evaluations
        + _shape_warnings(res.modules)
        + _dtype_warnings(res.modules, rm, pm)
        + _program_seeds(rm, pm)
        + _device_seeds(rm, pm)
        + _model_copies(rm, pm)
        + _unpaired_groups(compared, rm, pm)
        + _groups_by_order(compared, rm, pm)
        + _unseen_losses(compared, ref_steps, port_steps)
        + _groups_resized(rm, pm)
        + _skipped_iterations(rm, pm)
    )
    fails += device_fails
    seeds = _other_seeds(rm, pm)
    fails += seeds
    if res.parameters["differing"]:
        d = res.parameters["differing"]
        fails.append(
            f"the two runs did not start from the same weights: {len(d)} parameter(s) "
            f"differ before the first step (first: {d[0]['why']}); " + causes.weights_advice(pm, not seeds)
        )
    fails += _one_side_only(res.parameters, res.tied)
    fd = res.first_divergence
    if fd is not None:
        fails.append(
            _divergence_fail(fd)
            + _backend_cause(fd, res.modules, (pm.get("side") or {}).get("kind"))
            + _calls_before(fd, res.modules, rm)
            + _between_modules(fd, rm, pm)
            + _evaluation_parts(fd, res.modules)
        )
    if parted is not None:
        fails.append(
            f"the loss curves part at step {parted['step']}: reference "
            f"{parted['reference_loss']:.6g}, ported {parted['ported_loss']:.6g} "
            f"(abs diff {parted['abs_diff']:.3g}; rtol={loss_tol[0]:g} atol={loss_tol[1]:g})"
            + ("" if evaluations else _parted_why(res, compared, parted["step"]))
        )
    lr_bad = next((r for r in compared if r["lr_ok"] is False), None)
    if lr_bad is not None:
        fails.append(
            f"the learning rate differs at step {lr_bad['step']}: reference "
            f"{lr_bad['reference_lr']}, ported {lr_bad['ported_lr']}" + _lr_group_words(lr_bad, rm, pm)
        )
    fails += _grad_norm_fail(compared, parted, bool(fd is not None or res.parameters["differing"]))
    fails += _copy_rate_fails(rm, pm)  # (after the training's own: a port that trains otherwise moves them too)
    if fails:
        fails += (
            causes.rng_findings(
                rm, pm, parted["step"] if parted else None, bool(res.parameters["differing"] or res.first_divergence)
            )
            + causes.compiled_draws(rm, pm)
            + causes.reduced_matmul(rm, pm)
        )
    return fails


def _tie_fails(tied: dict) -> list[str]:
    """A line per group of parameters tied on one side only: the two sides train other
    parameters (the port's tie made it fail on "parameters on one side only", unsaid:
    twenty-eighth read)."""
    return [
        f"parameters tied in the reference are not tied in the port: {', '.join(g)} "
        "(on XLA, Module.to() unties shared weights: re-tie them after moving)"
        for g in tied["untied_in_port"]
    ] + [
        f"parameters tied in the port are separate in the reference: {', '.join(g)} (the port trains "
        "them as one parameter, a gradient of either updating both)"
        for g in tied.get("tied_in_port_only", [])
    ]


def _one_side_only(parameters: dict, tied: dict) -> list[str]:
    """The parameters recorded on one side only, less those a tie line names (a tied group is
    recorded by one name: its others were listed here beside the tie's line, the one change said
    twice; twenty-eighth trace2 read)."""
    said = {n for key in ("untied_in_port", "tied_in_port_only") for g in tied.get(key, []) for n in g}
    ref, port = ([n for n in parameters[k] if n not in said] for k in ("missing_in_port", "only_in_port"))
    renamed = parameters.get("renamed") or []
    names = [n for pair in renamed for side in pair for n in (side if isinstance(side, list) else [side])]
    if renamed and not said.intersection(names):  # (a tie's names: said by its line)
        return [
            f"parameters renamed in the port: {sum(len(a) if isinstance(a, list) else 1 for a, _ in renamed)} "
            "parameter(s) of one side only each pair with one of "
            f"the other's of the same shape and initial values ({_renamed_said(renamed)}): a rename, not a "
            "parameter missing, but "
            "a checkpoint (state_dict) saved on one side does not load on the other by name: keep the reference's "
            "names (a ParameterDict's keys, the attributes), or map the names where the checkpoint is loaded"
        ]
    return [f"parameters on one side only: reference {ref[:5]}, ported {port[:5]}"] if ref or port else []


def _grad_norm_fail(compared: list[dict], parted: dict | None, explained: bool) -> list[str]:
    """The first step whose gradient norm differs, where the loss curves have not parted by then
    (after they part the norms differ with them). A port that dropped `clip_grad_norm_`, or
    `zero_grad()`, failed on the curves parting two steps later with nothing said of the norm
    that differed first (Adam's update hides a clipped gradient's scale; twenty-seventh read). The
    lead is not given where a module or a starting weight differs (`explained`)."""
    gn_bad = next((r for r in compared if not r["grad_norm_ok"]), None)
    if gn_bad is None or (parted is not None and gn_bad["step"] >= parted["step"]):
        return []
    line = (
        f"the gradient norm differs at step {gn_bad['step']}: reference "
        f"{gn_bad['reference_grad_norm']:.6g}, ported {gn_bad['ported_grad_norm']:.6g}"
    )
    gradless = _gradless(gn_bad)
    if gradless:
        line += gradless
    elif parted is not None and not explained:
        line += (
            ", before the loss curves part: the gradients reaching the optimizer are made otherwise "
            "(gradient clipping, loss scaling or unscaling, gradients kept across steps without "
            "`zero_grad()`, accumulation)"
        )
    return [line]


def _gradless(row: dict) -> str:
    """Words where the sides left other counts of the optimizer's parameters without a gradient
    at a step (`Recorder.on_pre_step`): a port that replaced a parameter by a new `nn.Parameter`
    mid-run had its why name clipping and scaling (twenty-eighth trace read's leftover)."""
    a, b = row.get("reference_without_grad"), row.get("ported_without_grad")
    if a is None or b is None or a == b:
        return ""
    return (
        f": {b} of the port's optimizer's parameters had no gradient at that step (the reference {a}): a "
        "parameter the optimizer holds was replaced (a new nn.Parameter), frozen or left out of the loss"
    )


def _parted_why(res: ScriptResult, compared: list[dict], step: int) -> str:
    """Where the loss curves part with nothing recorded before them differing, what that leaves:
    a port that changed only its loss function, or only its optimizer's settings, failed on the
    curves alone, the tables all passing, nothing said of where to look (twenty-fifth read)."""
    if res.first_divergence is not None or res.parameters["differing"]:
        return ""
    if step == 1:
        model = [r for r in res.modules if r["module"] == MODEL]
        if model and all(r["passed"] and r["compared"] for r in model):
            return (
                "; every module output at step 1 agrees, the model's own among them: the loss is made "
                "from it otherwise (the loss function, its reduction or scaling, the targets)"
            )
        return ""
    before = compared[step - 2] if len(compared) >= step - 1 else None
    if before and before["loss_ok"] and before["grad_norm_ok"] and before["lr_ok"]:
        return (
            f"; step {step - 1}'s loss, gradient norm and learning rate agree: its update differs (the optimizer "
            f"or its settings, gradient clipping or scaling), or step {step}'s data or random draws do (the "
            "trace holds step 1's module outputs and input only)"
        )
    return ""


# an EMA rate read off a copy's update (`Recorder._copy_rates`): the part of its move off the
# plane of the copy and the model above which it is no update of the two (not compared), and the
# coefficients' tolerance (relative for the rate, of the copy's own weights for the shrink), widened
# by that part on both sides (what noise moved them by at most)
COPY_RESIDUAL = 0.05
COPY_RATE_RTOL = 1e-3
# the shrink's tolerance where both sides say what noise moves it by (`shrink_noise`): this
# floor (float32's rounding of the update's own constants) plus twice both sides' noise. Within
# COPY_RATE_RTOL a copy kept 1.0005 of itself each step, growing without bound, and passed
COPY_SHRINK_FLOOR = 1e-6
# the rate's tolerance where both sides say what noise moves it by (`rate_noise`): this part of
# the rate (float32's rounding of the update's own constants) plus twice both sides' noise. Within
# COPY_RATE_RTOL an EMA decay of 0.9989995 passed for 0.999 (twenty-ninth read's leftover)
COPY_RATE_FLOOR = 1e-6


def _scaler_skips(m: dict) -> list[int]:
    """Per recorded step, the iterations the side's `GradScaler` skipped before it
    (`scaler_skipped`; 0 where a trace of an older porter does not say)."""
    return [s.get("scaler_skipped") or 0 for s in m.get("steps") or [] if isinstance(s, dict)]


def _updates_across_skips(rm: dict, pm: dict) -> set[int]:
    """The updates (after step k, from 1) whose copy rates are read across other counts of
    skipped iterations on the two sides: an EMA updated at each iteration moves once more per
    skip while the model stands still (0.19 read for a decay of 0.1, one skip), and a faithful
    port without a scaler FAILed "is averaged at another rate" (thirtieth read's leftover)."""
    a, b = _scaler_skips(rm), _scaler_skips(pm)
    return {k for k in range(1, min(len(a), len(b))) if a[k] != b[k]} | set(_compounded_updates(rm, pm))


def _compounded_updates(rm: dict, pm: dict) -> dict[int, int]:
    """The updates (after step k, from 1) where a side that cannot say its skips (a trace of an
    older porter: no `scaler_skipped`) moved every copy as the other side's rate q compounded over
    n > 1 iterations, 1 - (1 - q)^n, with n: an EMA updated at each iteration while the model
    stood still at n - 1 skipped ones. An older reference that skipped FAILed a faithful port
    without a scaler "is averaged at another rate: reference 0.19, ported 0.1" (thirty-first
    read's leftover); a rate that is no such power (0.2 for 0.19) is still compared."""
    rates = [m.get("model_copy_rates") or [] for m in (rm, pm)]
    if not rates[0] or len(rates[0]) != len(rates[1]):
        return {}
    found: dict[int, int] = {}
    for old in (0, 1):
        if any(isinstance(s, dict) and "scaler_skipped" in s for s in (rm, pm)[old].get("steps") or []):
            continue
        for k in range(1, min(len(c["rates"]) for side in rates for c in side) + 1):
            ns = {_iterations_compounded(a, b, k) for a, b in zip(rates[old], rates[1 - old])}
            n = ns.pop() if len(ns) == 1 else None
            if n is not None:
                found[k] = n
    return found


def _iterations_compounded(a: dict, b: dict, k: int) -> int | None:
    """The n > 1 for which copy `a`'s rate after step k is copy `b`'s compounded, 1 - (1 - q)^n
    (within the rates' tolerance), or None."""
    x, y = a["rates"][k - 1], b["rates"][k - 1]
    if not (isinstance(x, float) and isinstance(y, float) and 0 < y < x < 1):
        return None
    n = round(math.log1p(-x) / math.log1p(-y))
    if n < 2 or abs(x - (1 - (1 - y) ** n)) > _rate_tolerance(a, b, x, y):
        return None
    return n


def _rates_kept(c: dict, across: set[int]) -> dict:
    """A copy's rates and shrinks without the updates in `across`, each kept one's step in `after`."""
    kept = [(k, r, s) for k, (r, s) in enumerate(zip(c["rates"], _shrinks(c)), 1) if k not in across]
    return {**c, "after": [k for k, _, _ in kept], "rates": [r for _, r, _ in kept], "shrinks": [s for _, _, s in kept]}


def _copy_rates(rm: dict, pm: dict) -> tuple[list, list] | None:
    """Both sides' copy rates where they can be paired: as many copies on each, every one read
    at a step at least, every update a combination of the copy and the model; the updates read
    across skipped iterations that the other side did not skip set aside (`_updates_across_skips`)."""
    rates = [m.get("model_copy_rates") or [] for m in (rm, pm)]
    if not rates[0] or len(rates[0]) != len(rates[1]) or rm.get("model_copies") != pm.get("model_copies"):
        return None
    across = _updates_across_skips(rm, pm)
    if across:
        rates = [[_rates_kept(c, across) for c in side] for side in rates]
    if any(not c["rates"] or c["residual"] > COPY_RESIDUAL for side in rates for c in side):
        return None
    return rates[0], rates[1]


def _shrinks(c: dict) -> list:
    """A copy's shrinks (`Recorder._copy_rates`); none recorded (a trace of an older porter,
    whose updates were fitted as averages) reads as averages."""
    return c.get("shrinks") or [0.0] * len(c["rates"])


def _shrink_tolerance(a: dict, b: dict) -> float:
    """How far two copies' shrinks may part (`COPY_SHRINK_FLOOR`); a trace of an older porter
    (no `shrink_noise`) keeps the rates' widened tolerance."""
    na, nb = a.get("shrink_noise"), b.get("shrink_noise")
    if na is None or nb is None:
        return COPY_RATE_RTOL + 2 * (a["residual"] + b["residual"])
    return COPY_SHRINK_FLOOR + 2 * (na + nb)


def _rate_tolerance(a: dict, b: dict, x: float, y: float) -> float:
    """How far two copies' rates x and y may part: the noise each side's fit saw (`rate_noise`),
    or for a trace of an older porter 1e-3 of the rate, widened by the residuals."""
    na, nb = a.get("rate_noise"), b.get("rate_noise")
    if na is None or nb is None:
        return max(abs(x), abs(y)) * (COPY_RATE_RTOL + 2 * (a["residual"] + b["residual"]))
    return max(abs(x), abs(y)) * COPY_RATE_FLOOR + 2 * (na + nb)


def _rate_differs(paired: tuple[list, list] | None) -> tuple[int, tuple, tuple, float, bool] | None:
    """The first step (from 1) whose update moved a pair of copies (`_copy_rates`) otherwise:
    another rate q, or another shrink s (E' = (1 + s - q) E + q W), with each side's (s, q) and
    the shrinks' tolerance, and whether the rates part."""
    for a, b in zip(*paired) if paired is not None else ():
        tol = _shrink_tolerance(a, b)
        steps = zip(a["rates"], b["rates"], _shrinks(a), _shrinks(b))
        for step, (x, y, sx, sy) in zip(a.get("after") or itertools.count(1), steps):
            rate_bad = abs(x - y) > _rate_tolerance(a, b, x, y)
            if rate_bad or abs(sx - sy) > tol:
                return step, (sx, x), (sy, y), tol, rate_bad
    return None


def _update_words(fit: tuple, tol: float) -> str:
    """A copy's update E' = p E + q W in words, from its (s, q) (`_rate_differs`): p said where
    s is more than `tol` from an average's 0."""
    s, q = fit
    if abs(s) <= tol:
        return f"{q:.6g}"
    return f"{q:.6g} (E' = {1 + s - q:.6g} E + {q:.6g} W: no average)"


def _copy_rate_fails(rm: dict, pm: dict) -> list[str]:
    """A fail where a copy of the model (an EMA) is updated otherwise on the two sides: its
    update after each step is read on each side from its own weights, so no device noise enters
    it; an unfaithful EMA rate passed with the copies said "not compared" (twenty-sixth read),
    and an update that is no average (0.9 E + 0.2 W) too (twenty-seventh read)."""
    found = _rate_differs(_copy_rates(rm, pm))
    if found is None:
        return []
    step, x, y, tol, rate_bad = found
    how = "is averaged at another rate" if rate_bad else "keeps another part of its own weights"
    return [
        f"a copy of the model that no optimizer steps (an EMA or averaged copy) {how} after step {step}: "
        f"reference {_update_words(x, tol)}, ported {_update_words(y, tol)} (its update moved it that part of the "
        "way to the model's weights; the EMA decay or its schedule differs)"
    ]


def _model_copies(rm: dict, pm: dict) -> list[str]:
    """A line where a side held copies of its model that step 1 did not call and no optimizer
    steps (`recorder._uncalled_copies`: an EMA copy): an unfaithful EMA rate passed unsaid
    (twenty-sixth read). Their rates are compared where `_copy_rates` pairs them (the steps
    compared said: a decay that differs only later, past a warmup or an `AveragedModel`'s first
    copy, is not seen), else said not compared."""
    counts = [m.get("model_copies") for m in (rm, pm)]
    said = [f"{role} {n}" for role, n in zip(("reference", "port"), counts) if type(n) is int and n > 0]
    if not said:
        return []
    paired = _copy_rates(rm, pm)
    if _rate_differs(paired) is not None:
        return []  # (the fail says it)
    return _compounded_said(rm, pm) + _copies_compared(said, paired, rm, pm)


def _compounded_said(rm: dict, pm: dict) -> list[str]:
    """A line for the updates `_compounded_updates` set aside."""
    found = _compounded_updates(rm, pm)
    if not found:
        return []
    steps = ", ".join(f"{k} ({n} iterations)" for k, n in sorted(found.items()))
    return [
        "a copy of the model (an EMA) moved after step(s) "
        f"{steps} as the other side's rate compounded over whole iterations (1 - (1 - q)^n) on a side whose "
        "GradScaler skips are not recorded (a trace of an older porter): skipped iterations, the copy updated at "
        "each, so those rates are not compared (a decay that differs by just that power passes); record both sides "
        "with this porter to compare them"
    ]


def _copies_compared(said: list[str], paired: tuple[list, list] | None, rm: dict, pm: dict) -> list[str]:
    """The line on the copies' rates: compared over which steps, or why not."""
    if paired is not None:
        steps = min(len(c["rates"]) for side in paired for c in side)
        which = "the first" if not _updates_across_skips(rm, pm) else "the (not across a skipped iteration)"
        return [
            f"copies of the model that step 1 did not call and no optimizer steps ({', '.join(said)}; an EMA or "
            f"averaged copy, say): their rates of averaging agree after {which} {steps} step(s) recorded "
            f"(reference {', '.join(f'{r:.4g}' for r in paired[0][0]['rates'][:steps])}); a rate that differs "
            "only later (past a warmup) is not compared"
        ]
    return [
        f"copies of the model that step 1 did not call and no optimizer steps ({', '.join(said)}; an EMA or "
        "averaged copy, say): their rates of averaging could not be read on both sides alike (one step recorded, "
        "other counts, or an update that is no combination of the copy and the model), so they are not compared "
        "(an EMA rate that differs passes); compare them with the model's own evaluation after training"
    ]


def _evaluations(rm: dict, pm: dict) -> list[str]:
    """A line per side whose model was called with gradients off in step 1 (`model_nograd_calls`):
    an evaluation before the training forward holds the first recorded calls, so the step-1 rows
    may compare evaluations, and a port fed other training data was told "every module output at
    step 1 agrees ...: the loss is made from it otherwise" (twenty-sixth read). The step's input
    is the first call's made with gradients on (thirty-sixth read)."""
    limit = (rm.get("limits") or {}).get("module_calls")
    counts = {role: m.get("model_nograd_calls") for role, m in (("reference", rm), ("ported", pm))}
    said = {role: n for role, n in counts.items() if type(n) is int and n > 0}
    if len(said) == 2 and said["reference"] == said["ported"]:
        said = {"both": said["reference"]}  # one line for both sides
    return [
        f"{'both sides' if role == 'both' else f'the {role} side'} called the model {n} time(s) with gradients "
        f"off in step 1 (an evaluation: a validation batch, a sanity check): step 1's module rows are the first "
        f"{limit or 'few'} call(s) of each module, the evaluation's among them (paired with the other side's "
        "evaluation calls, where the traces mark them), so the training forward's outputs may not be "
        "recorded"
        for role, n in said.items()
    ]


def _other_seeds(rm: dict, pm: dict) -> list[str]:
    """A line when the two traces were recorded with different `--seed`s: porter seeds random,
    numpy and torch with it before the program starts, so everything drawn from them differs.
    Two such traces failed on their weights "though both sides drew from the same seeded CPU
    generator" (twenty-fourth read)."""
    a, b = rm.get("seed"), pm.get("seed")
    if type(a) is not int or type(b) is not int or a == b:
        return []
    return [
        f"the two runs were recorded with different seeds (reference --seed {a}, ported --seed {b}): porter "
        "seeds random, numpy and torch with it before the program starts, so what the program draws from "
        "them (weights, data order, noise) differs; record both with one --seed"
    ]


# which generator each watched seeding seeds (`rng.ProgramSeeds`; an older porter's entries
# name none: `torch.manual_seed`). A device's (`torch.cuda.manual_seed`) is kept, not compared:
# a port seeds its device through its own API, and both sides' device draws are the CPU's here
_SEED_FAMILIES = {
    "torch.manual_seed": "torch",
    "torch.default_generator.manual_seed": "torch",
    "numpy.random.seed": "numpy",
    "random.seed": "Python's random",
    "torch.Generator.manual_seed": "its torch.Generator objects",
    "torch.set_rng_state": "torch",
    "numpy.random.default_rng": "numpy's default_rng Generators",
    "numpy.random.RandomState": "numpy's RandomState objects",
    "numpy.random.RandomState.seed": "numpy's RandomState objects",
}
# the device seedings (kept, not compared: `_device_seeds` says where the sides' differ)
_DEVICE_SEEDINGS = ("torch.cuda.manual_seed", "torch.cuda.manual_seed_all")


def _seed_sequence(calls: list, family: str) -> list[tuple]:
    """(seed, drawn) of one generator's seedings, a reseeding to the same seed with nothing
    drawn between dropped (it changes nothing: `torch.cuda.manual_seed_all(s)` rewritten to a
    second `torch.manual_seed(s)`); not across a Generator's objects, each its own."""
    out: list[tuple] = []
    for c in _seedings_of(calls, family):
        told = (c.get("seed"), c.get("drawn") is True)
        if out and told == (out[-1][0], False) and family != _SEED_FAMILIES["torch.Generator.manual_seed"]:
            continue
        out.append(told)
    return out


def _seedings_of(calls: list, family: str) -> list[dict]:
    return [
        c for c in calls if isinstance(c, dict) and _SEED_FAMILIES.get(c.get("call") or "torch.manual_seed") == family
    ]


def _seeding_said(c: dict) -> str:
    where = c.get("location") or (
        "a place not known (a C method: seen by the seed it left)"
        if c.get("call") == "torch.default_generator.manual_seed"
        else "?"
    )
    if c.get("call") == "torch.set_rng_state":
        return f"torch.set_rng_state(a state of CRC-32 {c.get('seed')}) at {where}"
    drawn = c.get("drawn")
    return f"{c.get('call') or 'torch.manual_seed'}({c.get('seed')}) at {where}" + (
        " after drawing from the generator"
        if drawn is True
        else " before any draw"
        if drawn is False
        else " (whether drawn from before: not known)"
    )


def _program_seeds(rm: dict, pm: dict) -> list[str]:
    """A line per generator the program seeds otherwise on the two sides (`rng.ProgramSeeds`:
    the seeds, and whether the generator was drawn from before each): porter's own seed before
    the program makes both sides' first numbers alike, so a port that seeds after making its
    model passed, though run alone its weights are unseeded (twenty-sixth read). Traces of older
    porters have no `program_seeds`: nothing said."""
    got = [m.get("program_seeds") for m in (rm, pm)]
    sides: list[list] = [s for s in got if isinstance(s, list)]
    if len(sides) != 2:
        return []
    lines = []
    for family in dict.fromkeys(_SEED_FAMILIES.values()):
        if _seed_sequence(sides[0], family) == _seed_sequence(sides[1], family):
            continue
        said = ["; ".join(_seeding_said(c) for c in _seedings_of(s, family)[:3]) or "none" for s in sides]
        lines.append(
            f"the program seeds {family} otherwise on the two sides: reference {said[0]}; port {said[1]}. "
            "Porter seeds torch, numpy and random before the program starts, so what one side draws before its "
            "own seeding (weights, data order) came from porter's seed here: run without porter, it is not the "
            "reference's"
        )
    return lines


def _device_seeds(rm: dict, pm: dict) -> list[str]:
    """A line where the sides' watched device seedings (`_DEVICE_SEEDINGS`) differ: kept in the
    trace, not compared (a port seeds its device through its own API, and a device's draws here
    are the CPU's), and said nowhere (twenty-seventh read's leftover)."""
    got: list[list] = [s for m in (rm, pm) if isinstance(s := m.get("program_seeds"), list)]
    if len(got) != 2:
        return []
    seen = [[c for c in s if isinstance(c, dict) and c.get("call") in _DEVICE_SEEDINGS] for s in got]
    if [c.get("seed") for c in seen[0]] == [c.get("seed") for c in seen[1]]:
        return []
    said = ["; ".join(_seeding_said(c) for c in s[:3]) or "none" for s in seen]
    return [
        f"device seedings are not compared: reference {said[0]}; port {said[1]} (a port seeds its device through "
        "its own API, not watched; a device's draws show only in what they make)"
    ]


def _added_modules(rm: dict, pm: dict, shown: int = 5) -> list[str]:
    """One line naming the module outputs (and buffers) the port recorded at step 1 that the
    reference has no entry for (a wrapper the port added, a module only the port calls), the
    first `shown` of them: the module table follows the reference, so a reviewer never saw what
    the port added (twentieth read's leftover). Said, not deciding the verdict: the steps and
    the reference's own module outputs decide it. Buffers are counted as such: `spectral_norm`'s
    `_u` and `_v` were said to be module outputs (thirty-second read)."""
    added: dict[str, list[str]] = {"modules": [], "buffers": []}
    theirs = {"modules": pm.get("modules") or [], "buffers": _hook_form_buffers(rm, pm)}
    for section, keys in added.items():
        ref_keys = [e.get("key") for e in rm.get(section) or [] if isinstance(e, dict)]
        have = {k: ref_keys.count(k) for k in set(ref_keys)}
        for e in theirs[section]:
            key = e.get("key") if isinstance(e, dict) else None
            if have.get(key, 0) > 0:
                have[key] -= 1
            elif isinstance(key, str):
                keys.append(key)
    every = added["modules"] + added["buffers"]
    if not every:
        return []
    more = f" and {len(every) - shown} more" if len(every) > shown else ""
    counts = [f"{len(added['modules'])} module output(s)"] if added["modules"] else []
    counts += [f"{len(added['buffers'])} buffer(s)"] if added["buffers"] else []
    return [f"{' and '.join(counts)} at step 1 only the port recorded, not compared: {', '.join(every[:shown])}{more}"]


def _other_target(asked: str | None, pm: dict) -> list[str]:
    """The target the comparison was asked for against the one the port's trace was recorded
    for (its manifest's `target`, and the device it ran on): `trace compare --target neuron` of
    a trace recorded on XLA printed what `--target xla` did and said nothing (twenty-fourth
    trace read's leftover). Said, not deciding: the traces are what they are."""
    recorded = pm.get("target") if pm.get("target") in TARGET_KINDS else None
    if asked is None or asked == (recorded or "xla"):  # a trace that names none: xla, as the CLI takes it
        return []
    ran_on = (pm.get("side") or {}).get("label") or "an unknown device"
    made = f"recorded for --target {recorded}" if recorded else "does not say which target it was recorded for"
    return [
        f"--target {asked}, but the port's trace was {made} and ran on {ran_on}: this compares that run, "
        f"not one on {asked} (record the port with --target {asked})"
    ]


def _other_porter(rm: dict, pm: dict) -> list[str]:
    """Traces recorded by other porter code (`porter_source`, the digest of its files): what
    porter records, and how, may differ between them. Said only where both traces hold a
    digest: their `porter` version is 0.1.0 in every build, and tells nothing apart."""
    ref, port = rm.get("porter_source"), pm.get("porter_source")
    if not (isinstance(ref, str) and isinstance(port, str)) or ref == port:
        return []
    return [
        f"the traces were recorded by other porter code (source {ref} and {port}, version "
        f"{rm.get('porter')} and {pm.get('porter')}): what they record may differ; record both with one porter"
    ]


def _other_libraries(rm: dict, pm: dict) -> list[str]:
    """Traces recorded with other releases of a library both imported (torch, torch_xla,
    transformers: the manifest's `libraries`, and its side's `versions` for traces written
    before it): their kernels and models' code may differ, so two traces compared with nothing
    said (twenty-fourth trace read's leftover). Said, not deciding: a port is often run with a
    newer torch than its reference. The build tag is not compared (`2.9.0+cu128` on the GPU
    host, `2.9.0+cpu` on the target's: one release built for each device)."""
    ref, port = _libraries(rm), _libraries(pm)
    differ = [
        f"{name} {ref[name]} and {port[name]}"
        for name in ref
        if name in port and _release(ref[name]) != _release(port[name])
    ]
    if not differ:
        return []
    return [
        f"the traces were recorded with other library versions (reference and ported: {'; '.join(differ)}): "
        "what the libraries compute may differ; the verdict holds for these versions"
    ]


def _libraries(m: dict) -> dict[str, str]:
    found = {**((m.get("side") or {}).get("versions") or {}), **(m.get("libraries") or {})}
    return {k: v for k, v in found.items() if isinstance(v, str)}


def _release(version: str) -> str:
    return version.split("+", 1)[0]


def _unnamed_modules(pm: dict) -> list[str]:
    """The module outputs of a port that stopped before its first optimizer step: porter names
    modules from the model at the end of step 1, so each was named as a model of its own
    (`<LlamaRMSNorm>`, `<Linear 2>`) and listed as "only the port recorded" (twenty-third read)."""
    n = len(pm.get("modules") or [])
    if not n:
        return []
    return [
        f"the port stopped before its first optimizer step: its {n} module output(s) could not be named "
        "(porter names them from the model at the end of step 1) and were not compared"
    ]


# the fields that mark a module output compared another way than block by block, or not at all,
# and the warning for those marked: `n` their number, `m` the first
_MARKED_OUTPUTS = (
    (
        "padded_from",
        "{n} module output(s) were larger on the ported side and were compared on the reference's region "
        "(first: {m[module]}: ported {m[padded_from]}, reference {m[reference_shape]}): the program pads its "
        "inputs further on the target (a fixed length on XLA, say); the padding itself was not compared",
    ),
    (
        "blocks_totals",
        "{n} complex module output(s) hold block sums cut another way on each side (first: {m[module]}; a "
        "trace of a porter before the twenty-fifth read): compared on the boundaries both cuts share (each "
        "lcm of their widths; the totals, which no cut changes, where none is short of the last block), a "
        "looser check than block by block",
    ),
    (
        "ported_call",
        "{n} module call(s) were compared with the port's call of the same output shapes, made in another "
        "order (first: {m[module]} with the port's {m[ported_call]})",
    ),
    (
        "gradient_call",
        "{n} module call(s) made with gradients on (or off) were compared with the port's call made so, the "
        "two sides calling the module with gradients off at other places (an evaluation on one side; first: "
        "{m[module]} with the port's {m[gradient_call]})",
    ),
    (
        "unsampled",
        "{n} module output(s) were not compared (first: {m[module]}: {m[problem]}): porter samples no output "
        "made inside a torch.func transform, nor a sparse, nested, quantized or meta one, and which of a "
        "call's outputs is missing is not known",
    ),
)


# a reference's module the port never calls, judged without its output: each row's mark and why
_UNCALLED_MARKS = (
    ("batch_cut", BATCH_CUT_OTHERWISE),
    ("layers_called", LAYERS_CALLED),
    ("weights_applied", WEIGHTS_APPLIED),
    ("stateless_done", STATELESS_DONE),
    ("after_transform", AFTER_TRANSFORM),
    ("evaluation_call", EVALUATION_CALL),
    ("input_nograd", INPUT_NOGRAD),
)


def _shape_warnings(modules: list[dict]) -> list[str]:
    """Module outputs compared on the reference's region only (the port padded further), and
    those not compared at all (shapes differ): the comparison holds, with this said."""
    warnings = [
        say.format(n=len(marked), m=marked[0])
        for field, say in _MARKED_OUTPUTS
        if (marked := [m for m in modules if m.get(field)])
    ]
    other = [m for m in modules if not m.get("compared", True) and m["problem"] != NO_TENSOR]
    other = [m for m in other if not any(m.get(f) for f in ("unsampled", "hook_form", *dict(_UNCALLED_MARKS)))]
    kept = [m for m in other if m.get("region_not_kept")]
    other = [m for m in other if not m.get("region_not_kept")]
    if kept:  # (said "padded differently on each side" before: the thirty-seventh trleft read)
        warnings.append(
            f"{len(kept)} module output(s) were larger on the ported side and were not compared (first: "
            f"{kept[0]['module']}: {kept[0]['problem'].removeprefix('other shapes: ')}): the port holds the "
            "reference's region, but its recorder keeps the regions of a bounded number of the reference's shapes "
            "a call number (8; 64 where both sides walk a list) and this call's was not among them; the loss, the "
            "gradient norm and the other module outputs were compared"
        )
    hooked = [m for m in modules if m.get("hook_form")]
    for mark, why in _UNCALLED_MARKS:
        walked = [m for m in modules if m.get(mark)]
        if walked:  # (said as "other shapes" before: thirty-third trace2 read)
            warnings.append(
                f"{len(walked)} module output(s) of the reference were not compared (first: {walked[0]['module']}): "
                f"{why}"
            )
    if hooked:
        warnings.append(
            f"{len(hooked)} parametrization call(s) of the reference were not compared (first: "
            f"{hooked[0]['module']}): the port makes the same weights by the deprecated hook form "
            "(torch.nn.utils.weight_norm), which calls no module; its parameters were compared by the "
            "parametrization's names"
        )
    if other:
        warnings.append(
            f"{len(other)} module output(s) had other shapes on the two sides and were not "
            f"compared (first: {other[0]['module']}: {other[0]['problem'].removeprefix('other shapes: ')}): "
            "the program fed its model inputs padded differently on each side (a fixed length "
            "on XLA, say); the loss, the gradient norm and the module outputs of equal shapes "
            "were compared"
        )
    # the root is `(model)` on both sides whatever it wraps: it pairs, and is not counted here
    called = [m for m in modules if m["type"] not in ("buffer", "input") and m["module"] != MODEL]
    if len(called) > 1 and all(m["problem"] == "not called on the ported side" for m in called):
        warnings.append(
            f"none of the reference's {len(called)} module outputs below its root (model) has its key "
            "in the port: a model "
            "renamed, or wrapped on one side only; porter names a root that only wraps one model "
            "(DataParallel, DDP) as that model, where porters before the twenty-first adversarial "
            "read kept the wrapper's `module.`: record both sides with one porter"
        )
    empty = [m for m in modules if m["problem"] == NO_TENSOR]
    if empty:
        warnings.append(
            f"{len(empty)} module output(s) held no tensor porter reads on either side and were not "
            f"compared (first: {empty[0]['module']}): a module that returns a generator, None, an object "
            "of a class that is neither a dataclass nor registered with torch.utils._pytree, or tensors "
            "made inside a torch.func transform; a divergence inside it is named at the first module "
            "that reads what it made"
        )
    return warnings


def _backend_cause(fd: dict, modules: list[dict], port_kind: str | None) -> str:
    """A cause the backend is known to give (measured on torch_xla 2.9, docs/parity.md): its
    BatchNorm moves running_var by the biased batch variance, CPU and CUDA by the unbiased one.
    Said only where the same module's running_mean agreed (the batch and momentum alike), so a
    FAIL that is the backend's does not send the user hunting through code that is faithful."""
    key = fd["module"]
    if fd["type"] != "buffer" or port_kind != "xla" or not key.endswith("running_var"):
        return ""
    mean = key.removesuffix("running_var") + "running_mean"
    if not any(m["module"] == mean and m["passed"] for m in modules):
        return ""
    return (
        f" ({mean} agreed: torch_xla updates BatchNorm's running_var with the biased batch variance, CPU "
        "and CUDA with the unbiased one, so this is the backend, not the port's code; the ported model "
        "evaluates on other statistics)"
    )


def _calls_before(fd: dict, modules: list[dict], rm: dict) -> str:
    """The modules called before the first diverging one more often than a trace records (a
    block of shared weights run in a loop): a change in a later call of theirs is first seen at
    the module that reads it, which was named unsaid (twenty-fourth read)."""
    keys = [m["module"] for m in modules]
    before = modules[: keys.index(fd["module"])] if fd["module"] in keys else []
    many = [m for m in before if m.get("calls")]
    if not many:
        return ""
    limit = (rm.get("limits") or {}).get("module_calls")
    each = f"the first {limit if type(limit) is int else 'few'} calls each"
    first = f"first: {many[0]['module']}, called {many[0]['calls']} times"
    return (
        f" ({len(many)} module(s) called before it more often than the trace records, {each} ({first}): "
        "a change in a later call of theirs shows first here)"
    )


def _between_modules(fd: dict, rm: dict, pm: dict) -> str:
    """Where the first diverging module's input may have changed before it: a `torch.nn.functional`
    call or a tensor operation between modules has no row, and the next module was named the
    first to diverge, unsaid (twenty-seventh read's leftover). Nothing where on both sides every
    tensor it got was a recorded output that agreed (`Recorder._note_fed`): the change is in it.
    The port's call is the one paired (`ported_call`): read at the reference's key, a shared
    module's calls made in another order gave another call's note (twenty-eighth trace2 read)."""
    if fd["type"] in ("input", "buffer"):
        return ""
    keys = (fd["module"], fd.get("ported_call") or fd.get("gradient_call") or fd["module"])
    fed = [
        next((m.get("fed") for m in side.get("modules") or [] if m.get("key") == key), None)
        for side, key in zip((rm, pm), keys)
    ]
    if all(f is True for f in fed):
        return ""
    why = (
        f"its input on the {' and '.join(r for r, f in zip(('reference', 'port'), fed) if f is False)} side was "
        "no module's recorded output"
        if False in fed
        else "the trace does not say what fed it"
    )
    return (
        f" (or before it, between modules: {why}, so a torch.nn.functional call or a tensor operation outside any "
        "module, which has no row, may be where the runs part)"
    )


def _evaluation_parts(fd: dict, rows: list[dict]) -> str:
    """Said where the first diverging row is a call made with gradients off on both sides and every
    call made with them on agrees: both sides evaluating their model under `no_grad` on other
    batches, the same training by `assert_close`, FAILed "first diverging module at step 1: 0" with
    nothing said of the evaluation (the thirty-sixth trace2 read's leftover). The FAIL stays: the
    program's evaluation numbers differ."""
    if not fd.get("nograd"):
        return ""
    training = [r for r in rows if not r.get("nograd") and r["type"] not in ("input", "buffer") and r["compared"]]
    if not training or not all(r["passed"] for r in training):
        return ""
    return (
        f" (a call made with gradients off on both sides, an evaluation: the {len(training)} module output(s) "
        "computed with gradients on agree, so the port evaluates on other data or otherwise, its training agrees "
        "there)"
    )


def _divergence_fail(fd: dict) -> str:
    """The first module whose output differs at step 1: what differs (and its type on each side
    when the port changed it)."""
    detail = fd["problem"] or (
        f"max abs error {fd['max_abs']:.3g} in a sample"
        + (f"; {', '.join(fd['stats_differ'])} differ" if fd["stats_differ"] else "")
    )
    kind = (
        f" ({fd['type']} vs {fd['ported_type']})" if fd.get("ported_type") and fd["ported_type"] != fd["type"] else ""
    )
    if fd["type"] == "input":  # what every module computes on: no module's code is to blame
        return (
            f"the data differs at step 1: {fd['module']}: {detail}: the port feeds its model other data "
            "(the order a loader shuffles in, its seed, the preprocessing), so the modules after it "
            "compute on other values and none of them is named"
        )
    if fd["type"] == "buffer":  # every module output agreed: the model's state after them does not
        return f"the buffer {fd['module']} differs after step 1's forward (what the model evaluates with): {detail}"
    if fd.get("reference_first"):
        return (
            f"first diverging module at step 1, in the port's call order: {fd['module']}{kind}: {detail} "
            f"(in the reference's order {fd['reference_first']} differs first: the port calls these modules "
            "in another order)"
        )
    return f"first diverging module at step 1: {fd['module']}{kind}: {detail}"
