"""The program's own noise floor: how far a run drifts from itself when only floating-point
rounding changes.

Some programs amplify rounding (a forward-forward trainer differs from itself by 1e-2 by step
3 when it runs on 1 thread instead of 2): no fixed tolerance can judge them either way. Script
mode runs the reference a second time with another thread count (CPU reductions split and
round differently; the program, its data and its random numbers are the same) and measures,
per step, the distance between the two runs. The port is then judged against the larger of
the precision tolerance and `NOISE_MARGIN` times that floor; the floor is printed beside it.
"""

from __future__ import annotations

import math

from porter.verify.tracefile import STAT_NAMES, Trace, paired

# The port's distance from the reference is another draw of the same noise as the floor's one
# sample: a faithful port lands within a small multiple of it; a wrong operation lands far
# outside as soon as it runs (the step-1 module outputs, where the floor is smallest).
NOISE_MARGIN = 4.0
# a floor above this fraction of the loss means the program's later steps judge little
NOISY_FRACTION = 0.1


def _abs(a, b) -> float:
    a, b = float(a), float(b)
    if math.isnan(a) and math.isnan(b):
        return 0.0
    return abs(a - b)


def envelope(values: list[float]) -> list[float]:
    """The running maximum: the floor at step k is the largest drift seen up to k (the drift of
    one pair of runs is a noisy measure; a later step is never allowed less than an earlier)."""
    out, top = [], 0.0
    for v in values:
        top = max(top, v if math.isfinite(v) else top)
        out.append(top)
    return out


def measure(a: Trace, b: Trace, how: str) -> dict:
    """The floor between two runs of the same program (`a` the reference, `b` the rerun)."""
    sa, sb = a.manifest.get("steps", []), b.manifest.get("steps", [])
    n = min(len(sa), len(sb))
    loss = [_abs(sa[i]["loss"], sb[i]["loss"]) for i in range(n)]
    grad = [_abs(sa[i]["grad_norm"], sb[i]["grad_norm"]) for i in range(n)]
    modules: dict[str, dict] = {}
    pairs = paired(a.manifest.get("modules", []), b.manifest.get("modules", []), "key")
    pairs += paired(a.manifest.get("buffers", []), b.manifest.get("buffers", []), "key")  # compared alike
    for m, other in pairs:
        if other is None or len(other["outputs"]) != len(m["outputs"]):
            continue
        sample, stats, blocks = 0.0, [0.0] * len(STAT_NAMES), 0.0
        for ro, po in zip(m["outputs"], other["outputs"]):
            r, p = a.tensor(ro["sample"]), b.tensor(po["sample"])
            if (
                r is not None
                and p is not None
                and r.shape == p.shape
                and r.numel()
                and (r.is_floating_point() or p.is_floating_point())
            ):
                d = (r.double() - p.double()).abs()
                d = d[d.isfinite()]
                if d.numel():
                    sample = max(sample, float(d.max()))
            rs, ps = a.tensor(ro["stats"]), b.tensor(po["stats"])
            if rs is not None and ps is not None:
                stats = [max(x, _abs(u, v)) for x, u, v in zip(stats, rs.tolist(), ps.tolist())]
            if "blocks" in ro and "blocks" in po:  # the block sketch's own drift (a rerun's rounding)
                rb, pb = a.tensor(ro["blocks"]), b.tensor(po["blocks"])
                if rb is not None and pb is not None and rb.shape == pb.shape:
                    d = (rb.double() - pb.double()).abs()
                    d = d[d.isfinite()]
                    if d.numel():
                        blocks = max(blocks, float(d.max()))
        modules[m["key"]] = {"sample": sample, "stats": stats, "blocks": blocks}
    losses = [float(s["loss"]) for s in sa[:n]]
    env = envelope(loss)
    noisy_from = next(
        (i + 1 for i, (f, v) in enumerate(zip(env, losses)) if math.isfinite(v) and v and f > NOISY_FRACTION * abs(v)),
        None,
    )
    peak = max(range(n), key=lambda i: loss[i]) if n else None
    return {
        "how": how,
        "margin": NOISE_MARGIN,
        "steps": n,
        "loss_abs": loss,
        "grad_norm_abs": grad,
        "loss_envelope": env,
        "grad_norm_envelope": envelope(grad),
        "modules": modules,
        "max_loss_abs": loss[peak] if peak is not None else None,
        "max_loss_step": peak + 1 if peak is not None else None,
        "max_loss_rel": (loss[peak] / abs(losses[peak])) if peak is not None and losses[peak] else None,
        "noisy_from_step": noisy_from,
    }


def allowed(floor: dict | None, key: str, i: int) -> float:
    """The absolute difference the floor allows at step index `i` (0 when not measured)."""
    if not floor:
        return 0.0
    env = floor.get(key) or []
    if not env:
        return 0.0
    return floor.get("margin", NOISE_MARGIN) * env[min(i, len(env) - 1)]


def describe(floor: dict) -> str:
    if floor.get("max_loss_abs") is None:
        return f"noise floor: {floor['how']}; no step to compare"
    rel = floor.get("max_loss_rel")
    text = (
        f"noise floor: {floor['how']}; the loss drifts from itself by at most "
        f"{floor['max_loss_abs']:.3g}"
        + (f" ({rel:.2g} relative)" if rel is not None else "")
        + f" (step {floor['max_loss_step']}); each step is judged against the larger of the "
        f"precision tolerance and {floor.get('margin', NOISE_MARGIN):g} × the floor up to it"
    )
    if floor.get("noisy_from_step"):
        text += (
            f"; from step {floor['noisy_from_step']} the program's own noise is over "
            f"{NOISY_FRACTION:.0%} of its loss, so those steps say little either way"
        )
    return text


__all__ = ["NOISE_MARGIN", "measure", "allowed", "describe", "envelope"]
