"""Why two runs differ, when the reason is not the port's arithmetic: the sides took different
code paths (a device branch on one side, the CPU branch on the other), or they drew random
numbers from different generators. Read from the two traces' manifests (`devices`, `rng`)."""

from __future__ import annotations


def _kinds(manifest: dict) -> set[str]:
    d = manifest.get("devices") or {}
    return set(d.get("parameters") or {}) | set(d.get("losses") or [])


def made_on(manifest: dict) -> str:
    """Where the program's tensors were made, in words, for the side table."""
    d = manifest.get("devices") or {}
    side = manifest.get("side") or {}
    kinds = sorted(_kinds(manifest))
    where = ", ".join(kinds) or "unknown (no parameters or losses recorded)"
    requested = d.get("requested")
    if side.get("shim") == "cuda->cpu" and requested is not None:
        n = requested.get("cuda", 0)
        if n:
            return f"cuda, run on the CPU by the CUDA shim ({n} CUDA device argument(s) mapped)"
        return f"{where}: the program asked for no CUDA or accelerator device (its CPU branch)"
    return where


def _made(manifest: dict) -> str:
    """Where a side's recorded losses and parameters lived, in words."""
    d = manifest.get("devices") or {}
    params = d.get("parameters") or {}
    return f"losses on {', '.join(d.get('losses') or []) or 'no device recorded'}; parameters: " + (
        ", ".join(f"{n} on {k}" for k, n in sorted(params.items())) or "none recorded"
    )


def device_findings(rm: dict, pm: dict) -> tuple[list[str], list[str]]:
    """(errors, failures) about the device types the two sides' recorded tensors were made on.
    A verdict needs the reference on the original's device (CUDA, or the CPU through the CUDA
    shim) and the port on its target's: a reference that ran on the port's device type, or two
    sides on one device type, would compare the port with itself, and a PASS from that is the
    worst wrong answer. So no verdict is given then (porter keeps the target runtimes from the
    reference, devices.keep_reference_off_targets; this catches what gets past that, and traces
    recorded elsewhere)."""
    from porter.verify.devices import TARGET_KINDS

    errors, fails = [], []
    ref_made, port_made = _kinds(rm), _kinds(pm)
    port_kind = (pm.get("side") or {}).get("kind")
    for role, made, m in (("reference", ref_made, rm), ("port", port_made, pm)):
        if not made:
            errors += _unmade(role, m)
    on_target = sorted(ref_made & (set(TARGET_KINDS) | ({port_kind} - {None, "cpu", "cuda"})))
    if on_target:
        errors.append(
            f"the reference computed on {', '.join(on_target)}, the target's device type "
            f"({_made(rm)}): the reference must run the original's CUDA path (on a GPU, or "
            "on the CPU through porter's CUDA shim), or the port is compared with itself; "
            "no verdict"
        )
    elif port_kind not in (None, "cpu") and port_made == {"cpu"}:
        fails.append(
            f"the port computed on the CPU, not on its {port_kind} device: its parameters "
            "and losses never left the CPU (it took a CPU branch, or never moved the "
            "model), so this run says nothing about the port on the target"
        )
    elif ref_made and ref_made == port_made:
        errors.append(
            f"both sides computed on {', '.join(sorted(ref_made))} (reference: {_made(rm)}; "
            f"port: {_made(pm)}): a port compared with a run on its own device type proves "
            "nothing, so porter gives no verdict"
            + (" (no target runtime is installed for the port: install torch_xla)" if port_kind == "cpu" else "")
        )
    return errors, fails


def _unmade(role: str, m: dict) -> list[str]:
    """Why a side's trace names no device its tensors were made on. A side that stopped before
    its first optimizer step made none to record: its trace was said to be "from an older
    porter?" (twenty-second read); where it failed, its error already says so."""
    if "devices" in m and not m.get("steps"):
        if m.get("error") or role == "reference":  # said with its error, or as the reference's lack of steps
            return []
        return [
            f"the {role} stopped before its first optimizer step ({m.get('stopped') or 'no reason recorded'}): "
            "no tensor of it was recorded, so porter gives no verdict"
        ]
    return [
        f"where the {role}'s tensors were made is not recorded (a trace from an older "
        "porter?): without it porter cannot tell that the two sides ran on different "
        "devices, so it gives no verdict"
    ]


def branch_warnings(rm: dict, pm: dict) -> list[str]:
    """Warnings about the code paths the two sides took."""
    warns = []
    port_made = _kinds(pm)
    ref_side = rm.get("side") or {}
    requested = (rm.get("devices") or {}).get("requested")
    if (
        ref_side.get("shim") == "cuda->cpu"
        and requested is not None
        and not requested.get("cuda")
        and port_made - {"cpu"}
    ):
        warns.append(
            "the reference asked for no CUDA or accelerator device, so it ran its CPU "
            f"branch while the port ran on {', '.join(sorted(port_made - {'cpu'}))}: the two "
            "runs may follow different code paths (does the original choose CUDA through "
            "something porter's CUDA shim does not answer?)"
        )
    return warns + regime_warnings(rm, pm)


def regime_warnings(rm: dict, pm: dict) -> list[str]:
    """The two sides' precision regimes where they differ: the tolerances are the looser one's,
    so a port that added bfloat16 autocast to a float32 program passed at bfloat16's tolerances
    with nothing saying that the port, not the program, chose them (twenty-second read)."""
    ref, port = ((m.get("precision") or {}).get("regime") or "float32" for m in (rm, pm))
    if ref == port:
        return []
    return [
        f"the two sides ran in other precision regimes (reference {ref}, port {port}): both are judged "
        "at the tolerances of the lower precision; where the original runs without that autocast, the "
        "port changed the program's precision, and agreement within them is all this verdict says"
    ]


def _draw_where(d: dict) -> str:
    step = d.get("after_step", 0)
    when = "before step 1" if not step else f"in step {step + 1}"
    return f"{d['call']} at {d.get('location') or 'library code'}, {when}"


def rng_lines(rm: dict, pm: dict) -> list[str]:
    """What each side drew its random numbers from, for the report's notes."""
    out = []
    for role, m in (("reference", rm), ("ported", pm)):
        r = m.get("rng")
        if not r:
            out.append(f"{role}: not recorded (a trace from an older porter)")
            continue
        n = r.get("device_draws")
        drawn = (
            "" if n is None else (f"; {n} draw(s) on the device" + (" redirected" if r.get("redirected") and n else ""))
        )
        own = sum(x["count"] for x in r.get("own_generator", []))
        mine = f"; {own} draw(s) with the program's own device generator were not redirected" if own else ""
        out.append(f"{role}: drawn from {r.get('generator')}{drawn}{mine}")
    return out


def rng_findings(rm: dict, pm: dict, parted_step: int | None, start_differs: bool) -> list[str]:
    """When a divergence starts at a draw from a device's own generator, say so: it is the
    generators that differ, not the port's arithmetic."""
    out = []
    for role, m in (("ported", pm), ("reference", rm)):
        r = m.get("rng") or {}
        first = r.get("first") or []
        if r.get("redirected", True) or not r.get("device_draws") or not first:
            continue
        early = first[0]
        starts = start_differs and early.get("after_step", 0) == 0
        if parted_step is not None:
            starts = starts or early.get("after_step", 0) < parted_step
        if starts:
            out.append(
                f"the divergence starts at a random draw on the {role} side's device: "
                f"{r['device_draws']} tensor(s) drawn with the device's own generator "
                f"(--device-rng; first: {_draw_where(early)}), which is not the other side's "
                "generator; run without --device-rng to draw them from the CPU generator on "
                "both sides"
            )
    return out


def compiled_draws(rm: dict, pm: dict) -> list[str]:
    """A side that drew inside `torch.compile`d code: porter redirects the device's random draws
    to the CPU generator through a Python mode, which holds in eager code only (dynamo traces it
    into the graph: the draws are counted as redirected, their values are not the CPU's). A
    faithful port compiled with "openxla" failed at its Dropout with nothing said of why, where
    `--eager` passes. Said with a failure where the trace counts draws dynamo traced
    (`compiled_draws`), not where the side drew only in eager code: a port failing for another
    reason was pointed at draws that were the CPU's (twenty-fifth read's leftover)."""
    out = []
    for role, m in (("ported", pm), ("reference", rm)):
        n, where = _drawn_compiled(m)
        if n:
            out.append(
                f"the {role} side drew {n} time(s) on its device {where}, whose random draws porter does "
                "not redirect to the CPU generator (its redirect holds in eager code only): the two sides' "
                "draws differ there; rerun with --eager to compare it eagerly"
            )
    return out


# side kind -> (setting, values that round float32 products to fewer mantissa bits, what it is)
_REDUCED = {
    "cuda": [
        ("cuda_matmul", {"tf32", "bf16"}, "TF32 matmuls (torch.backends.cuda.matmul, set_float32_matmul_precision)"),
        ("cudnn_conv", {"tf32", "bf16"}, "TF32 convolutions (torch.backends.cudnn.allow_tf32, on by default)"),
    ],
    "xla": [("xla_mat_mul", {"default", "high"}, "torch_xla's mat_mul_precision, bfloat16 passes on a TPU")],
}


def reduced_matmul(rm: dict, pm: dict) -> list[str]:
    """Said with a failure: a side that ran on hardware allowing its float32 matmuls or
    convolutions fewer mantissa bits (TF32: 10; one bfloat16 pass: 8), about 1e-3 relative or
    more, where float32's tolerance is 1e-4: a faithful port failed against such a reference
    with nothing said (twenty-sixth read). Emulated sides and the CUDA shim run full float32;
    cuDNN's setting (TF32 by default) is named only where the side recorded a convolution."""
    out = []
    for role, m in (("reference", rm), ("ported", pm)):
        side = m.get("side") or {}
        settings = (m.get("precision") or {}).get("matmul") or {}
        if not side.get("hardware") or not isinstance(settings, dict):
            continue
        convs = any("Conv" in str(e.get("type")) for e in m.get("modules") or [])  # cuDNN's setting is theirs
        found = [
            what
            for key, values, what in _REDUCED.get(str(side.get("kind")), [])
            if settings.get(key) in values and (convs or key != "cudnn_conv")
        ]
        if found:
            out.append(
                f"the {role} side ran on hardware that may round float32 products to fewer mantissa bits: "
                f"{'; '.join(found)}, about 1e-3 relative, past float32's tolerance; record it with full "
                "float32 precision (fp32_precision = 'ieee'; torch_xla.backends.set_mat_mul_precision('highest'))"
            )
    return out


def _drawn_compiled(m: dict) -> tuple[int, str]:
    """How many of a side's redirected device draws were in compiled code, and how it is known;
    an older trace counts no such draws: there, the draws of a side that compiled frames."""
    rng, frames = m.get("rng") or {}, m.get("compiled_frames")
    n = rng.get("compiled_draws", rng.get("device_draws"))
    if not rng.get("redirected", True) or type(n) is not int or n <= 0:
        return 0, ""
    if "compiled_draws" in rng:
        return n, "inside torch.compile'd frame(s)"
    if type(frames) is int and frames > 0:
        return n, f"and ran {frames} torch.compile'd frame(s) (this trace does not say where it drew)"
    return 0, ""


def weights_advice(pm: dict, seeded_alike: bool = True) -> str:
    r = pm.get("rng") or {}
    if not seeded_alike:
        return "the two runs were seeded differently (said above)"
    if r and not r.get("redirected", True) and r.get("before_step_1"):
        return (
            "the port drew random numbers on its device before step 1 with the device's own "
            "generator (--device-rng): run without it to draw them from the CPU generator"
        )
    return (
        "both sides drew from the same seeded CPU generator, so the port initialises "
        "differently: another initialiser, another order of draws, or weights loaded or "
        "changed elsewhere"
    )


__all__ = [
    "made_on",
    "device_findings",
    "branch_warnings",
    "rng_lines",
    "rng_findings",
    "compiled_draws",
    "weights_advice",
]
