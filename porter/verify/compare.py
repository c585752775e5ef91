"""Numerical comparison of the two sides: outputs, first diverging module, gradients, loss
curves and parameter drift. Runs in porter's process on tensors loaded with
torch.load(weights_only=True)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from porter.verify.config import ParityConfig
from porter.verify.result import TensorComparison


def load_tensors(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _f(x: torch.Tensor) -> float:
    return float(x.item())


def compare_tensor(
    name: str, ref: torch.Tensor | None, port: torch.Tensor | None, cfg: ParityConfig
) -> TensorComparison:
    if ref is None or port is None:
        present = ref if ref is not None else port
        assert present is not None  # a tensor missing on both sides is never compared
        side = "ported" if ref is not None else "reference"
        return TensorComparison(
            name, list(present.shape), _dtype_name(present), 0.0, 0.0, False, problem=f"missing on the {side} side"
        )
    low = port if port.dtype in (torch.float16, torch.bfloat16) else ref
    rtol, atol = cfg.tolerances(_dtype_name(low))
    res = TensorComparison(name, list(ref.shape), _dtype_name(ref), rtol, atol, False)
    if tuple(ref.shape) != tuple(port.shape):
        res.problem = f"shape differs: reference {list(ref.shape)}, ported {list(port.shape)}"
        return res
    if ref.is_floating_point() or ref.is_complex():
        res.ref_nan, res.ported_nan = int(ref.isnan().sum()), int(port.isnan().sum())
        res.ref_inf, res.ported_inf = int(ref.isinf().sum()), int(port.isinf().sum())
    if not (ref.is_floating_point() or ref.is_complex()):
        equal = torch.equal(ref, port.to(ref.dtype))
        res.passed = equal and ref.dtype == port.dtype
        diff = (ref.to(torch.float64) - port.to(torch.float64)).abs()
        res.max_abs = _f(diff.max()) if diff.numel() else 0.0
        res.mismatched = int((diff != 0).sum())
        if ref.dtype != port.dtype:
            res.problem = f"dtype differs: reference {_dtype_name(ref)}, ported {_dtype_name(port)}"
        return res
    if ref.is_complex() or port.is_complex():
        # its real and imaginary parts side by side (cast to float64, a complex value lost its
        # imaginary part, with a torch warning on the terminal)
        r, p = (torch.view_as_real(t.to(torch.complex128).resolve_conj()).reshape(-1) for t in (ref, port))
    else:
        r, p = ref.to(torch.float64), port.to(torch.float64)
    finite = r.isfinite() & p.isfinite()
    # a complex value is close by its modulus, as torch.isclose says (part by part, a faithful
    # FFT port whose small real part erred by a fraction of |z|'s tolerance failed: twenty-third read)
    if ref.is_complex() or port.is_complex():
        close = torch.isclose(port.to(torch.complex128), ref.to(torch.complex128), rtol=rtol, atol=atol)
    else:
        close = torch.isclose(p, r, rtol=rtol, atol=atol)
    res.mismatched = int((~close).sum())
    res.passed = res.mismatched == 0 and res.ref_nan == res.ported_nan == 0 and res.ref_inf == res.ported_inf == 0
    if finite.any():
        rf, pf = r[finite], p[finite]
        diff = (rf - pf).abs()
        res.max_abs = _f(diff.max())
        res.mean_abs = _f(diff.mean())
        big = rf.abs() > atol  # relative error only where the reference is not ~0
        res.max_rel = _f((diff[big] / rf[big].abs()).max()) if big.any() else 0.0
        nr, np_ = rf.norm(), pf.norm()
        res.cosine = (
            1.0
            if float(nr) == 0.0 and float(np_) == 0.0
            else (_f(torch.dot(rf, pf) / (nr * np_)) if float(nr) and float(np_) else 0.0)
        )
    if ref.dtype != port.dtype:
        res.problem = f"dtype differs: reference {_dtype_name(ref)}, ported {_dtype_name(port)}"
    return res


def compare_outputs(ref: dict, port: dict, cfg: ParityConfig) -> list[TensorComparison]:
    names = list(ref) + [n for n in port if n not in ref]
    return [compare_tensor(n, ref.get(n), port.get(n), cfg) for n in names]


def first_divergence(ref_acts: dict, port_acts: dict, order: list[str], cfg: ParityConfig):
    """The first module, in the reference's execution order, whose output exceeds
    tolerance on the ported side. Also: modules only one side has, and the first module
    that produced NaN/Inf on each side."""
    first: dict[str, Any] | None = None
    compared = 0
    only_ref = [k for k in order if k not in port_acts]
    only_port = [k for k in port_acts if k not in ref_acts]
    for key in order:
        if key not in port_acts:
            continue
        r_list, p_list = ref_acts[key], port_acts[key]
        if len(r_list) != len(p_list):
            first = first or {
                "module": key,
                "problem": f"{len(r_list)} output tensors on the reference, {len(p_list)} ported",
            }
            continue
        compared += 1
        for i, (r, p) in enumerate(zip(r_list, p_list)):
            cmp = compare_tensor(f"{key}[{i}]" if len(r_list) > 1 else key, r, p, cfg)
            if not cmp.passed and first is None:
                first = {
                    "module": key,
                    "output": i,
                    "max_abs": cmp.max_abs,
                    "max_rel": cmp.max_rel,
                    "mismatched": cmp.mismatched,
                    "numel": r.numel(),
                    "rtol": cmp.rtol,
                    "atol": cmp.atol,
                    "problem": cmp.problem,
                }
    return first, compared, {"only_reference": only_ref[:50], "only_ported": only_port[:50]}


def first_nonfinite(acts: dict, order: list[str]) -> dict | None:
    for key in order:
        for t in acts.get(key, []):
            if (t.is_floating_point() or t.is_complex()) and not bool(t.isfinite().all()):
                return {"module": key, "nan": int(t.isnan().sum()), "inf": int(t.isinf().sum())}
    return None


def compare_grads(ref: dict, port: dict, cfg: ParityConfig) -> dict:
    rows = [compare_tensor(n, ref.get(n), port.get(n), cfg) for n in ref]
    rows += [compare_tensor(n, None, port[n], cfg) for n in port if n not in ref]
    failed = [r for r in rows if not r.passed]

    def badness(r: TensorComparison) -> float:
        if r.problem or r.max_abs is None:
            return math.inf
        return r.max_abs / (r.atol + r.rtol * 1.0)

    worst = sorted(rows, key=badness, reverse=True)[: cfg.grad_top]
    return {
        "ran": True,
        "parameters": len(rows),
        "failed": len(failed),
        "passed": not failed,
        "worst": [r.__dict__ for r in worst],
    }


def compare_train(ref: dict, port: dict, cfg: ParityConfig) -> dict:
    rl, pl = ref["losses"].to(torch.float64), port["losses"].to(torch.float64)
    rtol, atol = cfg.tolerances()
    close = torch.isclose(pl, rl, rtol=rtol, atol=atol) if rl.shape == pl.shape else None
    finite = bool(rl.isfinite().all()) and bool(pl.isfinite().all())
    passed = close is not None and bool(close.all()) and finite
    drift = []
    init = ref.get("initial_params", {})
    for name, r in ref["final_params"].items():
        p = port["final_params"].get(name)
        if p is None or p.shape != r.shape:
            drift.append(
                {
                    "name": name,
                    "max_abs": None,
                    "relative_to_update": None,
                    "problem": "missing or different shape on the ported side",
                }
            )
            continue
        d = float((r.double() - p.double()).abs().max()) if r.numel() else 0.0
        moved = float((r.double() - init[name].double()).abs().max()) if name in init and r.numel() else 0.0
        drift.append({"name": name, "max_abs": d, "relative_to_update": (d / moved) if moved > 0 else None})
    drift.sort(key=lambda x: -1.0 if x["max_abs"] is None else x["max_abs"], reverse=True)
    return {
        "ran": True,
        "steps": int(rl.numel()),
        "passed": passed,
        "reference_losses": rl.tolist(),
        "ported_losses": pl.tolist() if pl.numel() else [],
        "max_loss_abs_error": float((rl - pl).abs().max()) if close is not None else None,
        "rtol": rtol,
        "atol": atol,
        "parameter_drift": drift[: cfg.grad_top],
        "drift_note": "informational: parameters whose true gradient is ~0 can drift by "
        "about the learning rate from float noise under Adam-type optimizers",
    }


__all__ = [
    "compare_tensor",
    "compare_outputs",
    "first_divergence",
    "first_nonfinite",
    "compare_grads",
    "compare_train",
    "load_tensors",
]
