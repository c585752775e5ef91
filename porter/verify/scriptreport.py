"""Renders a script-mode result (ScriptResult): the terminal (rich, user text never read as
markup), JSON (`porter.parity-script/1`), Markdown and HTML through the shared report model.
HTML also gets the two loss curves as an inline SVG chart (no script, no network)."""

from __future__ import annotations

import html
import json
import math
import re
import sys
from pathlib import Path

from porter.core.textsafe import html_text, json_inert
from porter.verify import noise
from porter.verify.report import Section, _g, _ms, gap_sections, side_errors, verdict_notes
from porter.verify.tracecmp import ScriptResult


def _side_rows(r: ScriptResult) -> list[list[str]]:
    rows = []
    for role, s in (("reference", r.reference), ("ported", r.ported)):
        if s is None:
            rows.append([role, "not run", "—", "—", "—", "—", "—", "—"])
            continue
        kind = "hardware" if s.hardware else ("emulation" if s.emulated else "no accelerator")
        w = r.where.get(role) or {}
        host = (w.get("host") or {}).get("hostname", "—")
        versions = ", ".join(f"{k} {v}" for k, v in (s.versions or {}).items())
        perf = s.perf or {}
        rows.append(
            [
                role,
                s.status,
                f"{s.device} [{kind}]",
                r.made_on.get(role, "—"),
                host,
                versions or "—",
                _ms(perf.get("first_step_s")),
                _ms(perf.get("steady_step_s")),
            ]
        )
    return rows


def sections(r: ScriptResult) -> list[Section]:
    out: list[Section] = []
    notes = verdict_notes(r)
    cmd = " ".join(
        (r.where.get("ported") or r.where.get("reference") or {}).get("command") or r.config.get("command") or []
    )
    notes.append(f"command: {cmd}")
    notes += [f"random numbers — {line}" for line in r.rng]
    out.append(
        (
            "Sides (where each run ran)",
            ["side", "status", "device", "tensors made on", "host", "versions", "first step", "steady step (median)"],
            _side_rows(r),
            notes,
        )
    )
    out += side_errors(r.reference, r.ported)
    out += _loss_curves(r)
    out += _ranks(r)
    out += _modules(r)
    out += _parameters(r)
    out += _probes(r)
    out += gap_sections(r)
    return out


def _loss_curves(r: ScriptResult) -> list[Section]:
    """The loss curves step by step, with where they part and the noise floor they are judged against."""
    out: list[Section] = []
    if r.steps:
        rows = [
            [
                str(s["step"]),
                _g(s["reference_loss"], ".7g"),
                _g(s["ported_loss"], ".7g"),
                _g(s["abs_diff"]),
                _g(s.get("noise_allowed")),
                {True: "ok", None: "not compared"}.get(s["loss_ok"], "DIFFERS"),
                _g(s["reference_grad_norm"], ".5g"),
                _g(s["ported_grad_norm"], ".5g"),
                _g((s["reference_lr"] or [None])[0], ".4g"),
                {True: "ok", None: "not compared"}.get(s["lr_ok"], "DIFFERS"),
                _ms(s["reference_time_s"]),
                _ms(s["ported_time_s"]),
            ]
            for s in r.steps
        ]
        t = r.tolerances
        floor = r.noise_floor or {}
        floor_note = (
            noise.describe(floor)
            if floor.get("measured")
            else f"noise floor not measured: {floor.get('why') or _no_floor_why(r)}"
        )
        out.append(
            (
                "Loss curves",
                [
                    "step",
                    "reference loss",
                    "ported loss",
                    "abs diff",
                    "noise allows",
                    "loss",
                    "ref grad norm",
                    "ported grad norm",
                    "lr",
                    "lr",
                    "ref step time",
                    "ported step time",
                ],
                rows,
                [
                    _curves_line(r),
                    f"max abs loss difference {_g(r.max_loss_abs)}, max relative {_g(r.max_loss_rel)}",
                    f"precision regime: {r.regime}; loss tolerance rtol/atol {t.get('loss')}",
                    floor_note + " (the column 'noise allows' is that margin times the floor)",
                    "loss = the sum of the scalars backward() was called on in the step "
                    "(gradient accumulation: the micro-batch losses; a tensor given its gradient: "
                    "the sum of their product; a step with no backward: what torch.autograd.grad "
                    "took the gradient of); step time = wall time "
                    "between optimizer steps (the first includes start-up)",
                ],
            )
        )
    return out


def _curves_line(r: ScriptResult) -> str:
    """Whether the loss curves part, over the steps both sides recorded: with a side that stopped
    before its first step, "the curves do not part within tolerance" was said of curves never
    compared (twenty-second read)."""
    ref = sum(s["reference_loss"] is not None for s in r.steps)
    port = sum(s["ported_loss"] is not None for s in r.steps)
    if r.parted_at:
        return f"the curves part at step {r.parted_at}"
    if ref != port:
        return (
            f"the reference recorded {ref} step(s), the port {port}: the curves do not part within "
            f"tolerance over the {min(ref, port)} step(s) both recorded"
            if min(ref, port)
            else f"the reference recorded {ref} step(s), the port {port}: no step to compare"
        )
    return "the curves do not part within tolerance"


def _no_floor_why(r: ScriptResult) -> str:
    """Why a reference trace holds no noise floor, where it does not say: a reference that
    stopped before its first step has none to measure (it was said to be an older porter's)."""
    if not any(s["reference_loss"] is not None for s in r.steps):
        return "the reference recorded no optimizer step"
    return "a trace from an older porter"


def _ranks(r: ScriptResult) -> list[Section]:
    """torchrun: each rank's verdict, and the collectives each side counted per step."""
    out: list[Section] = []
    if r.ranks:
        out.append(
            (
                "Ranks (torchrun: each rank compared with the same rank)",
                ["rank", "verdict", "curves part at step", "first diverging module", "max rel loss diff"],
                [
                    [
                        str(x["rank"]),
                        x["verdict"].upper(),
                        str(x["parted_at"] or "—"),
                        x["first_divergence"] or "—",
                        _g(x["max_loss_rel"]),
                    ]
                    for x in r.ranks
                ],
                ["the tables below show rank 0"],
            )
        )
        out.append(
            (
                "Collectives per step",
                ["rank", "step", "reference", "ported"],
                [
                    [str(x["rank"]), str(c["step"]), _counts(c["reference"]), _counts(c["ported"])]
                    for x in r.ranks
                    for c in x["collectives"]
                ],
                [
                    "counted by porter's host process group (porter.verify.collectives) on each side; "
                    "DDP's gradient buckets are all_reduce calls; '—': not counted (the program's own "
                    "backend ran)"
                ],
            )
        )
    return out


def _modules(r: ScriptResult) -> list[Section]:
    """Per-module error at step 1: the modules that differ first, then passing ones, at most 40, in execution order."""
    out: list[Section] = []
    if r.modules:
        bad = [m for m in r.modules if not m["passed"]]
        shown = bad[:30] + [m for m in r.modules if m["passed"]][: max(0, 40 - len(bad[:30]))]
        order = {m["module"]: i for i, m in enumerate(r.modules)}
        shown.sort(key=lambda m: order[m["module"]])
        fd = r.first_divergence
        out.append(
            (
                "Modules at step 1 (per-module error)",
                ["module", "type", "max abs (sample)", "max rel (sample)", "statistics differing", "result"],
                [
                    [
                        m["module"],
                        m["type"]
                        + (f" → {m['ported_type']}" if m.get("ported_type") and m["ported_type"] != m["type"] else ""),
                        _g(m["max_abs"]),
                        _g(m["max_rel"]),
                        ", ".join(m["stats_differ"]) or "—",
                        ("not compared" if not m.get("compared", True) else "pass" if m["passed"] else "FAIL")
                        + (f" ({m['problem']})" if m["problem"] else ""),
                    ]
                    for m in shown
                ],
                [
                    (
                        f"first diverging module (the first the port called of those that differ): {fd['module']}"
                        + (f"; in the reference's order, {fd['reference_first']}" if fd.get("reference_first") else "")
                    )
                    if fd
                    else "no module diverges",
                    f"{len(r.modules)} module outputs compared in the reference's execution order "
                    f"({len(bad)} differ; the table shows at most 40); tolerance rtol/atol "
                    f"{r.tolerances.get('modules')} on a strided sample and the statistics",
                ],
            )
        )
    return out


def _parameters(r: ScriptResult) -> list[Section]:
    """The initial weights compared before step 1, and which parameters are tied on each side."""
    out: list[Section] = []
    p = r.parameters
    if p:
        out.append(
            (
                "Initial weights and tying",
                ["check", "result"],
                [
                    ["parameters compared before step 1", str(p.get("compared"))],
                    *_unpaired(p),
                    ["compared by", p.get("by") or "a strided sample and the statistics (an older trace)"],
                    [
                        "differing",
                        "; ".join(d["why"] for d in p.get("differing", [])[:3])
                        + (f" (and {len(p['differing']) - 3} more)" if len(p.get("differing", [])) > 3 else "")
                        or "none",
                    ],
                    ["tied in the reference", "; ".join(", ".join(g) for g in r.tied.get("reference", [])) or "none"],
                    ["tied in the port", "; ".join(", ".join(g) for g in r.tied.get("ported", [])) or "none"],
                ],
                [_seed_note(r)],
            )
        )
    return out


def _seed_note(r: ScriptResult) -> str:
    """How the sides were seeded: alike, unless the traces say otherwise (two `--seed`s)."""
    seeds = [(r.where.get(role) or {}).get("seed") for role in ("reference", "ported")]
    if all(type(x) is int for x in seeds) and seeds[0] != seeds[1]:
        return (
            f"the sides were seeded differently (random, numpy, torch) before the script started: "
            f"reference --seed {seeds[0]}, ported --seed {seeds[1]}"
        )
    return (
        "both sides are seeded the same way (random, numpy, torch) before the script "
        "starts; weights made on the CPU are then identical"
    )


def _unpaired(p: dict) -> list[list[str]]:
    """A row naming the parameters of one side only, where there are any: a trace of a wrapped
    model by an earlier porter (`module.0.weight` against `0.weight`) had 0 compared and
    "differing: none", with nothing said of the 4 it could not pair."""
    said = [
        f"{len(names)} only in the {side} (first: {names[0]})"
        for side, names in (("reference", p.get("missing_in_port") or []), ("port", p.get("only_in_port") or []))
        if names
    ]
    return [["not paired by name", "; ".join(said)]] if said else []


def _probes(r: ScriptResult) -> list[Section]:
    """What the probes measured on each side (XLA compiles, fallbacks, transfers, host syncs)."""
    out: list[Section] = []
    probe_rows = []
    for s in (r.reference, r.ported):
        if s is None or s.perf is None:
            continue
        xla = s.perf.get("xla")
        if xla:
            source = str(xla.get("source", ""))  # (a trace's optional fields: read as absent)
            probe_rows.append(
                [s.role, "XLA compiles per step", ", ".join(map(str, xla.get("compiles_per_step") or [])), source]
            )
            probe_rows.append([s.role, "recompiles after warm-up", str(xla["recompiles_after_warmup"]), source])
            probe_rows.append(
                [
                    s.role,
                    "CPU fallback ops",
                    ", ".join(f"{f['op']}×{f.get('count', '?')}" for f in xla["cpu_fallback_ops"]) or "none",
                    source,
                ]
            )
            probe_rows.append(
                [
                    s.role,
                    "device→host transfers per step",
                    _g(xla["device_to_host_transfers_per_step"]),
                    "TransferFromDeviceTime",
                ]
            )
        syncs = s.perf.get("syncs") or {}
        if syncs:
            probe_rows.append(
                [s.role, "host sync calls per step", _g(syncs.get("host_syncs_per_step")), "TorchFunctionMode"]
            )
    if probe_rows:
        out.append(("Probes", ["side", "probe", "value", "source"], probe_rows, []))
    return out


def _counts(c: dict | None) -> str:
    if c is None:
        return "—"
    return ", ".join(f"{k}×{v}" for k, v in sorted(c.items())) or "none"


def loss_chart_svg(r: ScriptResult, width: int = 640, height: int = 260) -> str:
    """Both loss curves as an SVG line chart; the step where they part is marked."""
    pts = [(s["step"], s["reference_loss"], s["ported_loss"]) for s in r.steps]
    vals = [v for _, a, b in pts for v in (a, b) if v is not None and math.isfinite(v)]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if hi == lo:  # a flat curve gets a band around it, within the floats (1e308 + 0.5 is 1e308)
        pad = max(0.5, abs(hi) * 1e-6)
        hi, lo = min(hi + pad, sys.float_info.max), max(lo - pad, -sys.float_info.max)
    pad_l, pad_r, pad_t, pad_b = 64, 16, 16, 36
    n = max(s for s, _, _ in pts)
    sx = lambda s: pad_l + (width - pad_l - pad_r) * ((s - 1) / max(1, n - 1))  # noqa: E731
    # the span of losses at ±1e308 is past the largest float (inf / inf drew no curve, a NaN
    # coordinate): then it is scaled in halves (never always: half of 5e-324 is 0)
    half = 1.0 if math.isfinite(hi - lo) else 0.5
    sy = lambda v: pad_t + (height - pad_t - pad_b) * (1 - (v * half - lo * half) / (hi * half - lo * half))  # noqa: E731

    def line(idx: int, colour: str, dash: str) -> str:
        xy = [(sx(p[0]), sy(p[idx])) for p in pts if p[idx] is not None and math.isfinite(p[idx])]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>' for x, y in xy)
        return (
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
            f'stroke-dasharray="{dash}" points="{path}"/>{dots}'
        )

    def e(text: object) -> str:  # labels come from another machine's trace: no control characters
        return html.escape(html_text(str(text)))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="loss curves: reference and port">',
        f'<rect x="{pad_l}" y="{pad_t}" width="{width - pad_l - pad_r}" '
        f'height="{height - pad_t - pad_b}" fill="none" stroke="#ccc"/>',
    ]
    for v in (lo, lo / 2 + hi / 2 if half < 1 else lo + (hi - lo) / 2, hi):
        parts.append(
            f'<text x="{pad_l - 6}" y="{sy(v) + 4:.1f}" font-size="11" text-anchor="end">{e(format(v, ".5g"))}</text>'
        )
    for s in sorted({1, n, (1 + n) // 2}):
        parts.append(f'<text x="{sx(s):.1f}" y="{height - pad_b + 16}" font-size="11" text-anchor="middle">{s}</text>')
    parts.append(
        f'<text x="{(pad_l + width) / 2:.0f}" y="{height - 4}" font-size="11" '
        f'text-anchor="middle">optimizer step</text>'
    )
    if r.parted_at:
        x = sx(r.parted_at)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{pad_t}" y2="{height - pad_b}" '
            f'stroke="#c00" stroke-dasharray="3 3"/><text x="{x + 4:.1f}" y="{pad_t + 12}" '
            f'font-size="11" fill="#c00">parts at step {r.parted_at}</text>'
        )
    parts.append(line(1, "#1f77b4", "none"))
    parts.append(line(2, "#ff7f0e", "6 3"))
    ref_label = e(r.reference.device if r.reference else "reference")
    port_label = e(r.ported.device if r.ported else "ported")
    parts.append(
        f'<text x="{pad_l + 8}" y="{height - pad_b - 24}" font-size="11" fill="#1f77b4">'
        f'— reference: {ref_label}</text><text x="{pad_l + 8}" y="{height - pad_b - 10}" '
        f'font-size="11" fill="#ff7f0e">- - ported: {port_label}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def to_json(r: ScriptResult) -> str:
    from porter.verify.tracefile import finite

    # non-finite numbers as "nan"/"inf" strings, as the trace writes them: `NaN` is not JSON. No CI
    # log command (`json_inert`), as the lint report's JSON: a manifest's library name or tensor key
    # `##vso[...]` was written raw, and `cat parity.json` in a CI step obeyed it (twenty-sixth read)
    return json_inert(json.dumps(finite(r.to_dict()), indent=2, default=str))


def report_model(r: ScriptResult):
    from porter.report import ReportModel
    from porter.report import Section as ReportSection
    from porter.config.settings import Settings

    shared = [
        ReportSection(
            id=re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-"),
            title=title,
            text="\n".join(notes),
            columns=list(header),
            rows=[list(row) for row in rows],
        )
        for title, header, rows, notes in sections(r)
    ]
    shared.insert(
        0, ReportSection(id="verdict", title=f"parity-check (script): {r.verdict.upper()}", text="; ".join(r.reasons))
    )
    target = (r.config or {}).get("target") or "xla"
    return ReportModel.from_run([], None, Settings(target=target), kind="parity-check", sections=shared)


def to_markdown(r: ScriptResult) -> str:
    from porter.report import render

    return render(report_model(r), "markdown")


def to_html(r: ScriptResult) -> str:
    from porter.report import render

    page = render(report_model(r), "html")
    svg = loss_chart_svg(r)
    anchor = re.search(r'<section id="sec-loss-curves"><h2>[^<]*</h2>', page)
    if svg and anchor:
        page = page[: anchor.end()] + f'<figure class="loss-chart">{svg}</figure>' + page[anchor.end() :]
    return page


def write_report(r: ScriptResult, path: Path) -> None:
    from porter.report import name_suffix  # (`--report .html`: `Path.suffix` is empty)

    suffix = name_suffix(path)
    render = {".json": to_json, ".md": to_markdown, ".markdown": to_markdown, ".html": to_html, ".htm": to_html}.get(
        suffix
    )
    if render is None:
        raise ValueError(f"--report {path}: use a .json, .md or .html file name")
    from porter.pipeline.writer import write_output

    write_output(path, render(r))  # whole; a link of that name is replaced, not written through


def print_terminal(r: ScriptResult, console=None) -> None:
    from porter.verify.report import print_sections

    print_sections(f"parity-check (script): {r.verdict.upper()}", r.verdict, sections(r), console)


__all__ = ["sections", "loss_chart_svg", "to_json", "to_markdown", "to_html", "write_report", "print_terminal"]
