"""One parity check end to end: run both sides, compare, rank the gaps, decide the verdict."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from porter.verify.config import ParityConfig
from porter.verify.gaps import collect_gaps
from porter.verify.result import ParityResult, SideSummary
from porter.verify.runner import SideRun, run_both


def _summary(run: SideRun) -> SideSummary:
    meta = run.meta
    side = meta.get("side", {})
    device = side.get("label")
    if device is None:
        device = "unknown (the side stopped before choosing a device)"
    return SideSummary(
        role=run.role,
        status=run.status,
        device=device,
        hardware=bool(side.get("hardware")),
        emulated=bool(side.get("emulated")),
        shim=side.get("shim"),
        versions=side.get("versions", {}),
        wall_s=run.wall_s,
        phase_s=meta.get("phase_s", {}),
        perf=meta.get("perf"),
        graph_breaks=meta.get("graph_breaks"),
        error=run.error,
        notes=side.get("notes", []) + meta.get("notes", []),
        log_tail=run.log_tail if not run.ok else "",
    )


def _describe_error(s: SideSummary) -> str:
    e = s.error or {}
    where = f" at {e['location']}" if e.get("location") else ""
    what = {"timeout": "timed out", "out_of_memory": "ran out of memory", "crashed": "crashed"}.get(
        e.get("kind", ""), "raised"
    )
    msg = e.get("message", "").strip().splitlines()
    msg = msg[0] if msg else ""
    if e.get("kind") == "timeout":
        return f"{s.role} side {what}: {msg}"
    return f"{s.role} side {what} in phase '{e.get('phase', '?')}'{where}: {e.get('type', '')}: {msg}"


def run_parity(cfg: ParityConfig, workdir: Path | None = None, keep: bool = False) -> ParityResult:
    t0 = time.perf_counter()
    ref_run, port_run, base = run_both(cfg, workdir)
    ref = _summary(ref_run)
    port = _summary(port_run) if port_run is not None else None
    result = ParityResult(
        verdict="error",
        reasons=[],
        config=cfg.to_dict(),
        reference=ref,
        ported=port,
        workdir=str(base) if keep else None,
    )
    try:
        _fill(result, cfg, ref_run, port_run)
    finally:
        result.gaps = collect_gaps([ref, port], cfg.target, cfg.ported)
        result.wall_s = time.perf_counter() - t0
        if not keep and workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    return result


def _fill(result: ParityResult, cfg: ParityConfig, ref_run: SideRun, port_run: SideRun | None) -> None:
    port = result.ported
    if _no_comparison(result, ref_run, port_run):
        return
    assert port_run is not None  # _no_comparison said the ported side ran

    from porter.verify import compare

    rt = compare.load_tensors(ref_run.out / "tensors.pt")
    pt = compare.load_tensors(port_run.out / "tensors.pt")
    result.state_dict = port_run.meta.get("state_dict")
    result.outputs = compare.compare_outputs(rt["outputs"], pt["outputs"], cfg)
    order = ref_run.meta.get("module_order", [])
    first, compared, issues = compare.first_divergence(rt["activations"], pt["activations"], order, cfg)
    result.first_divergence, result.layers_compared, result.layer_issues = first, compared, issues
    for role, tensors, meta in (("reference", rt, ref_run.meta), ("ported", pt, port_run.meta)):
        nf = compare.first_nonfinite(tensors["activations"], meta.get("module_order", []))
        if nf:
            result.first_nonfinite[role] = nf

    error = _same_device(ref_run, port_run)
    output_error, fail = _output_problems(result)
    error += output_error
    if first is not None and any(not o.passed for o in result.outputs):
        fail.append(
            f"first diverging module: {first['module']}"
            + (f" (max abs error {first['max_abs']:.3g})" if first.get("max_abs") is not None else "")
            + (f" ({first['problem']})" if first.get("problem") else "")
        )
    fail += _weight_problems(result, ref_run, port_run)
    gradients, gradient_fail = _gradients(cfg, rt, pt, ref_run, port_run)
    result.gradients = gradients
    fail += gradient_fail
    if cfg.train_steps:
        train_error, train_fail = _train_problems(result, cfg, rt, pt, ref_run)
        error += train_error
        fail += train_fail
    result.reasons = error + fail
    result.verdict = "error" if error else ("fail" if fail else "pass")
    if result.verdict == "pass":
        emu = " (on emulation, not hardware)" if port is not None and port.emulated else ""
        result.reasons.append(
            f"all {len(result.outputs)} output tensor(s), "
            f"{result.layers_compared} module output(s)"
            + (f", {gradients['parameters']} gradient(s)" if gradients.get("ran") else "")
            + (f", {cfg.train_steps} training step(s)" if result.train else "")
            + f" within tolerance{emu}"
        )


def _no_comparison(result: ParityResult, ref_run: SideRun, port_run: SideRun | None) -> bool:
    """Whether there is nothing to compare (a side failed, or the reference is not finite and the
    ported side was not run); the reasons are recorded."""
    ref, port = result.reference, result.ported
    assert ref is not None  # run_parity always summarises the reference
    if not ref_run.ok:
        result.reasons.append(_describe_error(ref))
        result.reasons.append("the ported side was not run: there is no reference to compare with")
        return True
    if port_run is None and ref_run.meta.get("nonfinite_outputs"):
        from porter.verify import compare

        rt = compare.load_tensors(ref_run.out / "tensors.pt")
        nf = compare.first_nonfinite(rt["activations"], ref_run.meta.get("module_order", []))
        if nf:
            result.first_nonfinite["reference"] = nf
        src = f" (first non-finite module: {nf['module']})" if nf else ""
        for name, c in ref_run.meta["nonfinite_outputs"].items():
            result.reasons.append(
                f"the reference produced {c['nan']} NaN and {c['inf']} Inf in "
                f"{name}{src}: it is no baseline to check a port against"
            )
        result.reasons.append("the ported side was not run")
        return True
    if port_run is None or not port_run.ok:
        assert port is not None  # run_both runs the ported side after a usable reference
        result.reasons.append(_describe_error(port))
        return True
    return False


def _same_device(ref_run: SideRun, port_run: SideRun) -> list[str]:
    """An error when both sides ran on one device type: the reference never has a target's
    device (devices.keep_reference_off_targets), so the port has none either and proves nothing."""
    ref_kind = (ref_run.meta.get("side") or {}).get("kind")
    port_kind = (port_run.meta.get("side") or {}).get("kind")
    if ref_kind != port_kind:
        return []
    return [
        f"both sides ran on {ref_kind}: a port compared with a run on its own device "
        "type proves nothing, so porter gives no verdict"
        + (" (no target runtime is installed for the port: install torch_xla)" if port_kind == "cpu" else "")
    ]


def _output_problems(result: ParityResult) -> tuple[list[str], list[str]]:
    """Errors (a reference output that is not finite: no baseline) and failures (each ported
    output that is not finite, or outside tolerance)."""
    error: list[str] = []
    fail: list[str] = []
    ref_bad = [o for o in result.outputs if o.ref_nan or o.ref_inf]
    for o in ref_bad:
        where = result.first_nonfinite.get("reference")
        src = f" (first non-finite module: {where['module']})" if where else ""
        error.append(
            f"the reference produced {o.ref_nan} NaN and {o.ref_inf} Inf in {o.name}{src}: "
            "it is no baseline to check a port against"
        )
    for o in result.outputs:
        if o.passed or o in ref_bad:
            continue
        if o.ported_nan or o.ported_inf:
            where = result.first_nonfinite.get("ported")
            src = f" (first non-finite module: {where['module']})" if where else ""
            fail.append(f"the port produced {o.ported_nan} NaN and {o.ported_inf} Inf in {o.name}{src}")
        elif o.problem:
            fail.append(f"{o.name}: {o.problem}")
        else:
            fail.append(
                f"{o.name}: max abs error {o.max_abs:.3g}, {o.mismatched} element(s) "
                f"outside rtol={o.rtol:g} atol={o.atol:g}"
            )
    return error, fail


def _weight_problems(result: ParityResult, ref_run: SideRun, port_run: SideRun) -> list[str]:
    """Failures of the weights: ties the port lost, and names or shapes that do not match."""
    fail: list[str] = []
    ref_tied = {tuple(g) for g in ref_run.meta.get("tied", [])}
    port_tied = {tuple(g) for g in port_run.meta.get("tied", [])}
    for g in sorted(ref_tied - port_tied):
        fail.append(f"parameters tied in the reference are not tied in the port: {', '.join(g)}")
    sd = result.state_dict or {}
    for key, label in (
        ("missing_in_reference", "ported parameters/buffers with no reference weight"),
        ("unexpected_in_reference", "reference weights with no ported name"),
        ("shape_mismatch", "weights whose shapes differ"),
    ):
        if sd.get(key):
            names = [x["name"] if isinstance(x, dict) else x for x in sd[key]]
            fail.append(f"{label}: {', '.join(names[:8])}" + (" …" if len(names) > 8 else ""))
    return fail


def _gradients(cfg: ParityConfig, rt: dict, pt: dict, ref_run: SideRun, port_run: SideRun) -> tuple[dict, list[str]]:
    """The gradients compared when both sides recorded them (else why not); a failure when
    any is outside tolerance."""
    from porter.verify import compare

    if "grads" in rt and "grads" in pt:
        gradients = compare.compare_grads(rt["grads"], pt["grads"], cfg)
        gradients["loss_fn"] = ref_run.meta.get("gradients", {}).get("loss_fn")
        if not gradients["passed"]:
            return gradients, [
                f"{gradients['failed']} parameter gradient(s) outside tolerance "
                f"(worst: {gradients['worst'][0]['name']})"
            ]
        return gradients, []
    why = ref_run.meta.get("gradients", {}).get("why") or port_run.meta.get("gradients", {}).get("why")
    return {"ran": False, "why": why or "no gradients recorded"}, []


def _train_problems(
    result: ParityResult, cfg: ParityConfig, rt: dict, pt: dict, ref_run: SideRun
) -> tuple[list[str], list[str]]:
    """--train-steps: the loss curves compared (a failure when they differ); an error when
    training was asked for and not run."""
    from porter.verify import compare

    if "losses" in rt and "losses" in pt:
        result.train = compare.compare_train(rt, pt, cfg)
        if not result.train["passed"]:
            return [], [
                f"loss curves differ over {cfg.train_steps} steps (max abs error {result.train['max_loss_abs_error']})"
            ]
        return [], []
    why = ref_run.meta.get("train", {}).get("why", "not recorded")
    result.train = {"ran": False, "why": why}
    return [f"--train-steps {cfg.train_steps} asked for, but training was not run: {why}"], []


__all__ = ["run_parity"]
