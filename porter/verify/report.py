"""Renders a ParityResult. One list of sections is built here; the terminal tables read it
directly, Markdown and HTML go through the shared report model (porter.report) as its
sections, and JSON is the result itself (schema `porter.parity/1`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from porter.core.textsafe import columns, encodable, json_inert, lines_printable, printable
from porter.verify.result import ParityResult

Section = tuple[str, list[str], list[list[str]], list[str]]  # title, header, rows, notes


class Block(str):
    """A note of several lines (a run's log tail), shown as its lines. Every other title, cell
    and note is one line: a line break in it (a label from another machine's trace) is shown as
    an escape, never as a line of the trace's own making."""


def _g(x, fmt: str = ".3g") -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return format(x, fmt)
    return str(x)


def _ms(s) -> str:
    return "—" if s is None else f"{s * 1000:.2f} ms"


def _side_rows(r: ParityResult) -> list[list[str]]:
    rows = []
    for s in (r.reference, r.ported):
        if s is None:
            rows.append(["ported", "not run", "—", "—", "—", "—"])
            continue
        kind = "hardware" if s.hardware else ("emulation" if s.emulated else "no accelerator")
        perf = s.perf or {}
        mem = perf.get("peak_memory") or {}
        mem_s = (
            f"{mem['bytes'] / 2**20:.1f} MiB"
            if mem.get("bytes") is not None
            else (
                f"host RSS {mem['host_peak_rss_bytes'] / 2**20:.0f} MiB"
                if mem.get("host_peak_rss_bytes")
                else "not reported"
            )
        )
        rows.append(
            [
                s.role,
                s.status,
                f"{s.device} [{kind}]",
                _ms(perf.get("first_step_s")),
                _ms(perf.get("steady_step_s")),
                mem_s,
            ]
        )
    return rows


def verdict_notes(r) -> list[str]:
    """The verdict, its reasons and each side's notes (a factory-mode or script-mode result)."""
    notes = [f"verdict: {r.verdict.upper()} (exit {r.exit_code})", *r.reasons]
    if r.ported is not None and r.ported.emulated:
        notes.append("the ported side ran on emulation: its numbers are not hardware results")
    for s in (r.reference, r.ported):
        if s is not None:
            notes += [f"{s.role}: {n}" for n in s.notes]
    return notes


def sections(r: ParityResult) -> list[Section]:
    return [
        *_sides(r),
        *side_errors(r.reference, r.ported),
        *_outputs(r),
        *_layers(r),
        *_weights(r),
        *_gradients(r),
        *_training(r),
        *_probes(r),
        *gap_sections(r),
    ]


def _sides(r: ParityResult) -> list[Section]:
    """What really ran on each side, with the verdict's notes."""
    notes = verdict_notes(r)
    step = ((r.reference.perf or {}).get("step") if r.reference else None) or "—"
    return [
        (
            "Sides (what really ran)",
            ["side", "status", "device", "first step", "steady step (median)", "peak memory"],
            _side_rows(r),
            notes + [f"timed step: {step}"],
        )
    ]


def side_errors(*sides) -> list[Section]:
    """Each side that failed: where, how, and the tail of its log (parity and script reports)."""
    out: list[Section] = []
    for s in sides:
        if s is not None and s.error:
            e = s.error
            out.append(
                (
                    f"{s.role} error",
                    ["phase", "kind", "type", "location", "message"],
                    [
                        [
                            e.get("phase", "?"),
                            e.get("kind", "?"),
                            e.get("type", ""),
                            e.get("location") or "—",
                            (e.get("message") or "")[:300],
                        ]
                    ],
                    [Block(f"log tail:\n{s.log_tail[-1500:]}")] if s.log_tail else [],
                )
            )
    return out


def _outputs(r: ParityResult) -> list[Section]:
    """Each output compared, with its error figures and tolerance."""
    out: list[Section] = []
    if r.outputs:
        out.append(
            (
                "Outputs",
                [
                    "output",
                    "shape",
                    "dtype",
                    "max abs",
                    "max rel",
                    "mean abs",
                    "cosine",
                    "NaN/Inf ref",
                    "NaN/Inf ported",
                    "tol (rtol/atol)",
                    "result",
                ],
                [
                    [
                        o.name,
                        "×".join(map(str, o.shape)) or "scalar",
                        o.dtype,
                        _g(o.max_abs),
                        _g(o.max_rel),
                        _g(o.mean_abs),
                        _g(o.cosine, ".6f"),
                        f"{o.ref_nan}/{o.ref_inf}",
                        f"{o.ported_nan}/{o.ported_inf}",
                        f"{o.rtol:g}/{o.atol:g}",
                        ("pass" if o.passed else "FAIL") + (f" ({o.problem})" if o.problem else ""),
                    ]
                    for o in r.outputs
                ],
                [],
            )
        )
    return out


def _layers(r: ParityResult) -> list[Section]:
    """The first module that diverges (and the first NaN/Inf), when both sides ran."""
    out: list[Section] = []
    if r.reference and r.reference.status == "ok" and r.ported and r.ported.status == "ok":
        fd = r.first_divergence
        rows = [
            [
                "first diverging module",
                fd["module"] if fd else "none",
                _g(fd.get("max_abs")) if fd else "—",
                (
                    f"{fd['mismatched']}/{fd['numel']} elements"
                    if fd and "numel" in fd
                    else (fd or {}).get("problem") or "—"
                ),
            ]
        ]
        for role, nf in r.first_nonfinite.items():
            rows.append([f"first NaN/Inf module ({role})", nf["module"], "—", f"{nf['nan']} NaN, {nf['inf']} Inf"])
        lnotes = [f"{r.layers_compared} module outputs compared in execution order"]
        if r.layer_issues.get("only_reference") or r.layer_issues.get("only_ported"):
            lnotes.append(
                "modules on one side only: reference "
                f"{r.layer_issues.get('only_reference')}, ported {r.layer_issues.get('only_ported')}"
            )
        out.append(("Layers", ["check", "module", "max abs", "detail"], rows, lnotes))
    return out


def _weights(r: ParityResult) -> list[Section]:
    """How the reference's weights loaded into the ported model."""
    out: list[Section] = []
    sd = r.state_dict
    if sd:
        out.append(
            (
                "Weights",
                ["loaded", "missing in reference", "reference-only", "shape mismatch"],
                [
                    [
                        str(sd["loaded"]),
                        ", ".join(sd["missing_in_reference"][:5]) or "none",
                        ", ".join(sd["unexpected_in_reference"][:5]) or "none",
                        ", ".join(x["name"] for x in sd["shape_mismatch"][:5]) or "none",
                    ]
                ],
                ["the reference's initial state_dict was loaded into the ported model"],
            )
        )
    return out


def _gradients(r: ParityResult) -> list[Section]:
    """The worst gradients, or why they were not compared."""
    out: list[Section] = []
    g = r.gradients
    if g and g.get("ran"):
        out.append(
            (
                f"Gradients (worst {len(g['worst'])} of {g['parameters']})",
                ["parameter", "max abs", "max rel", "cosine", "result"],
                [
                    [
                        w["name"],
                        _g(w["max_abs"]),
                        _g(w["max_rel"]),
                        _g(w["cosine"], ".6f"),
                        "pass" if w["passed"] else "FAIL",
                    ]
                    for w in g["worst"]
                ],
                [f"loss: {g.get('loss_fn')}"],
            )
        )
    elif g:
        out.append(("Gradients", ["status"], [[f"not run: {g.get('why')}"]], []))
    return out


def _training(r: ParityResult) -> list[Section]:
    """The loss curves step by step and the parameters that drifted most, or why not run."""
    out: list[Section] = []
    t = r.train
    if t and t.get("ran"):
        rows = [
            [str(i + 1), _g(a, ".6g"), _g(b, ".6g"), _g(abs(a - b))]
            for i, (a, b) in enumerate(zip(t["reference_losses"], t["ported_losses"]))
        ]
        out.append(
            (
                f"Training ({t['steps']} steps: {'pass' if t['passed'] else 'FAIL'})",
                ["step", "reference loss", "ported loss", "abs diff"],
                rows,
                [
                    "parameter drift (worst): "
                    + ", ".join(
                        f"{d['name']} {_g(d['max_abs'])}"
                        + (
                            f" ({d['relative_to_update']:.2g}× its update)"
                            if d.get("relative_to_update") is not None
                            else ""
                        )
                        for d in t["parameter_drift"][:5]
                    ),
                    t["drift_note"],
                ],
            )
        )
    elif t:
        out.append(("Training", ["status"], [[f"not run: {t.get('why')}"]], []))
    return out


def _probes(r: ParityResult) -> list[Section]:
    """What the probes measured on each side (compiles, fallbacks, transfers, syncs, graph breaks)."""
    probe_rows = []
    for s in (r.reference, r.ported):
        if s is not None and s.perf is not None:
            probe_rows += _probe_rows(s)
    return [("Probes", ["side", "probe", "value", "source"], probe_rows, [])] if probe_rows else []


def _probe_rows(s) -> list[list[str]]:
    """One side's probe rows."""
    probe_rows = []
    perf = s.perf
    xla = perf.get("xla")
    if xla:
        probe_rows.append(
            [
                s.role,
                "XLA compiles (first step / warm-up / after warm-up)",
                f"{xla['compiles_first_step']} / {xla['compiles_during_warmup']} / {xla['recompiles_after_warmup']}",
                xla["source"],
            ]
        )
        probe_rows.append(
            [
                s.role,
                "CPU fallback ops",
                ", ".join(f"{f['op']}×{f.get('count', '?')}" for f in xla["cpu_fallback_ops"]) or "none",
                xla["source"],
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
    syncs = perf.get("syncs") or {}
    probe_rows.append([s.role, "host sync calls per step", _g(syncs.get("host_syncs_per_step")), "TorchFunctionMode"])
    probe_rows.append(
        [
            s.role,
            "dynamic-shape ops",
            ", ".join(f"{d['call']} @ {d.get('location') or '?'}" for d in syncs.get("dynamic_shape_ops", []))
            or "none",
            "TorchFunctionMode",
        ]
    )
    gb = s.graph_breaks or {}
    probe_rows.append(
        [
            s.role,
            "torch.compile graph breaks",
            str(gb["graph_break_count"]) if gb.get("ran") else f"not measured ({gb.get('error', 'no data')})",
            "torch._dynamo.explain",
        ]
    )
    return probe_rows


def gap_sections(r) -> list[Section]:
    """The performance gaps, ranked, with advice and evidence (a parity or a script result)."""
    out: list[Section] = []
    if r.gaps:
        out.append(
            (
                "Performance gaps (ranked)",
                ["#", "severity", "side", "gap", "advice", "evidence"],
                [[str(g.rank), g.severity, g.side, g.title, g.advice, "; ".join(g.evidence)] for g in r.gaps],
                [],
            )
        )
    return out


def to_json(r: ParityResult) -> str:
    from porter.verify.tracefile import finite

    # non-finite numbers as "nan"/"inf" strings, as the trace writes them: `NaN` is not JSON; no CI
    # log command from a module's name or an error (`json_inert`: scriptreport's, twenty-sixth read)
    return json_inert(json.dumps(finite(r.to_dict()), indent=2, default=str))


def report_model(r: ParityResult):
    """The shared report model (porter.report) with one section per table of this result."""
    import re

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
    shared.insert(0, ReportSection(id="verdict", title=f"parity-check: {r.verdict.upper()}", text="; ".join(r.reasons)))
    target = (r.config or {}).get("target") or "xla"
    return ReportModel.from_run([], None, Settings(target=target), kind="parity-check", sections=shared)


def to_markdown(r: ParityResult) -> str:
    from porter.report import render

    return render(report_model(r), "markdown")


def to_html(r: ParityResult) -> str:
    from porter.report import render

    return render(report_model(r), "html")


def write_report(r: ParityResult, path: Path) -> None:
    from porter.report import name_suffix  # (`--report .html`: `Path.suffix` is empty)

    suffix = name_suffix(path)
    render = {".json": to_json, ".md": to_markdown, ".markdown": to_markdown, ".html": to_html, ".htm": to_html}.get(
        suffix
    )
    if render is None:
        raise ValueError(f"--report {path}: use a .json, .md or .html file name")
    from porter.pipeline.writer import write_output

    write_output(path, render(r))  # whole; a link of that name is replaced, not written through


def plain_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A table as plain text lines at its natural width: columns padded to their widest cell,
    two spaces apart, no box drawing, nothing wrapped or cut (for a pipe, a file, a CI log).
    A cell holds no line break (`printable` escaped it) and keeps its spaces: they were
    collapsed, and the labels `a  b` and `a b` read alike (eighteenth read); widths count
    terminal columns (a CJK name is two a character)."""
    return list(plain_lines(header, rows))


# the widest a plain table pads a column to: a cell wider than this runs on past its column
# (whole, on its own row) instead of padding every other row to its width, so a table's text
# grows with its cells, not with rows x its widest cell (a trace naming one module with a
# 20 MB key printed 120 MB, the key's width of spaces on each of the table's rows)
PAD_MAX = 1000


def plain_lines(header: list[str], rows: list[list[str]]) -> Iterator[str]:
    """`plain_table`'s lines one at a time: the widths in one pass over the cells, then each
    line made as it is written (the whole table, held as lines and then as one text, was three
    copies of a 100,000-step loss table at once)."""
    widths = [columns(str(h)) for h in header]
    for row in rows:
        for i, c in enumerate(row[: len(widths)]):
            w = min(columns(str(c)), PAD_MAX)
            if w > widths[i]:
                widths[i] = w

    def line(row: list[str]) -> str:
        return "  ".join(c + " " * (w - columns(c)) for c, w in zip(map(str, row), widths)).rstrip()

    yield line(header)
    yield "  ".join("-" * w for w in widths)
    for row in rows:
        yield line(row)


# on a terminal, a table of more rows than this is written as `plain_lines` too: rich lays a
# table out whole, about 0.1 ms a cell, and a 100,000-step loss table took 109 s of CPU and
# 1.9 GB there (none of it read: no screen shows 100,000 rows)
RICH_ROWS = 1000


def _write_lines(console, lines: Iterable[str], chunk: int = 2048) -> None:
    """`lines` into the console's file a chunk at a time, each line shown as text, never obeyed.
    Written past the console, so a reader that left is the console's to handle (`on_broken_pipe`):
    `trace compare --report r.md | head -1` ended at its title, no report, exit 0 where parity
    failed (thirtieth read); a `--report` now goes on to be written, with the verdict's code."""
    batch: list[str] = []
    for text in lines:
        batch.append(text)
        if len(batch) >= chunk:
            _write_batch(console, batch)
            batch = []
    if batch:
        _write_batch(console, batch)


def _write_batch(console, batch: list[str] | None) -> None:
    """`batch`'s lines written, or (None) what the file holds flushed."""
    if console.quiet:  # (the reader left and the run goes on)
        return
    try:
        if batch is None:
            console.file.flush()
        else:
            console.file.write(lines_printable("\n".join(batch)) + "\n")
    except BrokenPipeError:
        console.on_broken_pipe()


def _line(text: str) -> str:
    """A title or a note: one line, its line breaks shown as escapes (a Block: its lines)."""
    return lines_printable(text) if isinstance(text, Block) else printable(text)


def print_sections(title: str, verdict: str, secs: list[Section], console=None) -> None:
    """Rich tables on a terminal; plain text at natural width anywhere else (a pipe or a file:
    rich would squeeze the tables to 80 columns there). Every cell and note is a Text: user
    text (error messages, module names) is never read as rich markup."""
    from rich.text import Text

    from porter.report.console import make_console, on_a_terminal

    console = console or make_console()

    # every cell shown as text before the table is laid out: given raw, rich dropped BEL, backspace
    # and CR from a cell (and the plain table padded it) before the console's escapes widened it;
    # and as the stream writes it (`encodable`): an ASCII stream's `\u00e9` widened it too
    def cell(text: str) -> str:
        return encodable(printable(text), console.encoding)

    secs = [
        (name, [cell(h) for h in header], [[cell(c) for c in row] for row in rows], notes)
        for name, header, rows, notes in secs
    ]  # fmt: skip
    if not on_a_terminal(console):
        _write_lines(console, [_line(title)])
        for name, header, rows, notes in secs:
            _write_lines(console, ["", _line(name)])  # text from the run is shown, never obeyed
            if rows:
                _write_lines(console, plain_lines(header, rows))
            _write_lines(console, [f"  {_line(n)}" for n in notes])
        _write_batch(console, None)
        return
    colour = {"pass": "green", "fail": "red"}.get(verdict, "yellow")
    console.print(Text(_line(title), style=f"bold {colour}"))
    for section in secs:
        _print_section(console, section)


def _print_section(console, section: Section) -> None:
    """One section on a terminal: a rich table, or, of more than `RICH_ROWS` rows or with a cell
    wider than `PAD_MAX` columns, its plain lines streamed (no screen shows them whole anyway),
    then its notes. rich folded a 2 MB module key into its column: 7.5 MB of lines in 27 s; a
    plain line holds it whole once (as off a terminal, and whole in the JSON report)."""
    from rich.table import Table
    from rich.text import Text

    name, header, rows, notes = section
    if len(rows) > RICH_ROWS or any(columns(c) > PAD_MAX for row in rows for c in row):
        console.print(Text(_line(name), style="italic"))
        _write_batch(console, None)
        _write_lines(console, plain_lines(header, rows))
    elif rows:
        table = Table(title=Text(_line(name)), show_lines=False, title_justify="left")
        for h in header:
            table.add_column(Text(h), overflow="fold")
        for row in rows:
            table.add_row(*[Text(c) for c in row])
        console.print(table)
    for n in notes:
        console.print(Text(f"  {_line(n)}"), highlight=False)


def print_terminal(r: ParityResult, console=None) -> None:
    print_sections(f"parity-check: {r.verdict.upper()}", r.verdict, sections(r), console)


__all__ = [
    "sections",
    "to_json",
    "to_markdown",
    "to_html",
    "write_report",
    "print_terminal",
    "print_sections",
    "plain_table",
    "Block",
]
