"""Judge porter on real programs and publish the table.

    python benchmarks/real_programs/run.py [--only NAME ...] [--work DIR] [--update] [--no-doc]
    python benchmarks/real_programs/run.py --record-first-run NAME

For every program in manifest.toml: fetch its pinned sdist (cached), port it to xla, neuron and
tpu, run the original on the CPU and the xla port on XLA:CPU, compare per-step losses. Writes
the results as JSON under the work folder and, unless --no-doc (or --only without --update),
the table in docs/real-programs.md. Exits 1 when any program fails.

The suite is also porter's development set. A program added to it is run once with
`--record-first-run NAME` before any porter change is made for it: that first result (and the
porter revision it ran) is written into its manifest entry and shown beside the current one,
and the programs that have one give the held-out rate. A compatibility patch a program needs to
run (`xla_compat`) counts as a hand edit.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fetch import MANIFEST, cache_dir, load_manifest, parse_manifest, porter_revision  # noqa: E402 - found through the sys.path entry above
import cuda_check  # noqa: E402 - found through the sys.path entry above
from harness import ATOL, REPO, RTOL, judge  # noqa: E402 - found through the sys.path entry above

DOC = REPO / "docs" / "real-programs.md"


def _codes(counts: dict[str, int]) -> str:
    return ", ".join(f"{c}×{n}" if n > 1 else c for c, n in sorted(counts.items())) or "—"


def _first_line(text: str | None, limit: int = 140) -> str:
    if not text:
        return ""
    text = text.replace(str(cache_dir() / "src") + "/", "")  # paths inside the download cache
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return (last[: limit - 1] + "…") if len(last) > limit else last


def _where(p: dict) -> str:
    if p["call"]:
        return f"the library, called by `entries/{p['call']}`"
    inner = p["root"].split("/", 1)[1] + "/" if "/" in p["root"] else ""
    return f"`{inner}{p['entry']}`"


def passed(result: dict) -> bool:
    """The xla port runs and its losses equal the original's (and move)."""
    run = result["xla_run"]
    return bool(run and run["runs"] and run["equal"] and run["learns"])


def hand_edits(program: dict) -> list[str]:
    """What had to be changed by hand for the program to run: a compatibility patch counts."""
    edits = []
    if program.get("xla_compat"):
        edits.append("`xla_compat`: torch-xla 2.9's removed `xm` names restored for the library")
    if program.get("accelerate_single_process"):
        edits.append(
            "`accelerate_single_process`: accelerate's `gather_object` made the identity (it raises under XLA)"
        )
    return edits


def zero_edits(result: dict) -> bool:
    return passed(result) and not hand_edits(result["program"])


def _first_run(program: dict) -> str:
    first = program.get("first_run") or {}
    if not first:
        return "not recorded (added before the rule)"
    ok = first.get("runs") and first.get("equal") and first.get("learns") and not first.get("hand_edits")
    verdict = "yes" if ok else "**no**" + (f": {first['error']}" if first.get("error") else "")
    return f"{verdict} ({first.get('on', '?')}, porter {first.get('porter', '?')})"


def held_out(results: list[dict]) -> tuple[int, int]:
    """(programs whose first run passed with zero hand edits, programs with a first run)."""
    firsts = [r["program"]["first_run"] for r in results if r["program"].get("first_run")]
    good = sum(1 for f in firsts if f.get("runs") and f.get("equal") and f.get("learns") and not f.get("hand_edits"))
    return good, len(firsts)


def native_ok(result: dict, target: str) -> bool:
    p = result["ports"].get(target)
    return bool(p and p["ok"] and p["parses"] and p["idempotent"] and not p.get("unknown_api"))


def _measured(results: list[dict]) -> str:
    """When the table's rows were measured (`--update` reruns some of them later)."""
    stamps = sorted(r["measured_at"] for r in results if r.get("measured_at"))
    if not stamps:
        return "at an unrecorded time"
    return stamps[0] if stamps[0] == stamps[-1] else f"between {stamps[0]} and {stamps[-1]}"


def _api_checked(results: list[dict]) -> bool:
    return any(p.get("unknown_api") is not None for r in results for p in r["ports"].values())


def table(results: list[dict], seconds: float) -> str:
    # a first run recorded since the results were measured is the manifest's
    recorded = {p.name: p.first_run for p in load_manifest() if p.first_run}
    results = [
        {
            **r,
            "program": {
                **r["program"],
                "first_run": recorded.get(r["program"]["name"], r["program"].get("first_run") or {}),
            },
        }
        for r in results
    ]
    n = len(results)
    good = sum(zero_edits(r) for r in results)
    patched = sum(passed(r) and bool(hand_edits(r["program"])) for r in results)
    rate = f"{good}/{n} ({100 * good / n:.0f}%)" if n else "0/0"
    first_good, first_n = held_out(results)
    held = (
        f"**Held-out rate: {first_good}/{first_n}** of the programs added since the rule passed on their first run, "
        "recorded before any porter change made for them (column *first run*)."
        if first_n
        else "**Held-out rate: none yet.** No program has been added since the rule that records each new program's "
        "first run before any porter change made for it (issue 21), so the rate above is a development-set rate: "
        "porter was changed to pass these programs."
    )
    lines = [
        "# Real programs: porter judged by running its ports",
        "",
        "<!-- generated by `python benchmarks/real_programs/run.py`; do not edit by hand -->",
        "",
        "Real training programs from pinned source distributions on the package index (never",
        "vendored; [`benchmarks/real_programs/manifest.toml`](../benchmarks/real_programs/manifest.toml)",
        "pins each with its sha256). Each is ported with",
        "`porter rewrite --target xla --out-dir` and run **with zero hand edits** on PyTorch/XLA's",
        "CPU device (`PJRT_DEVICE=CPU`); the original runs its CUDA path on the CPU under porter's",
        "CUDA shim. The driver supplies only argv, synthetic data, a step limit and, where a",
        "program uses dropout, turns dropout off on both sides (the XLA and CPU random streams",
        "differ); random tensors drawn on the XLA device are drawn on the CPU and moved, for the",
        "same reason. Every one-element `backward()` records its loss; the per-step losses must agree",
        f"within `rtol={RTOL}, atol={ATOL}` (torch.testing) or, for a program that drifts from itself,",
        "within 4 times the running maximum of its own noise floor (the original run a second time on",
        "another thread count with its weights scaled by 1 ± 2^-16 after every step: the judgement of",
        "[`independent.py`](../benchmarks/real_programs/independent.py), which",
        "[parity-evidence.md](parity-evidence.md) checks porter's verifier against), and must change",
        "from step to step (a real learning rate: a wrong model shows). The original never runs on XLA",
        "(torch_xla cannot be imported on its side) and its losses must be CPU tensors. The gradient",
        "norms before each optimizer step (before clipping) must agree the same way (rtol 1e-3): a",
        "loss can be blind to the model (trl's GRPO loss is a function of the rewards). Programs",
        "launched with torchrun (nano-gpt-ddp) are judged rank by rank in",
        "[parity-evidence.md](parity-evidence.md), not here. The neuron and tpu ports cannot run here:",
        "they are checked for parsing, idempotence (a second `porter rewrite` changes nothing) and,",
        "where porter has the targets' recorded APIs (`porter.apidata`), for names the target lacks.",
        "",
        f"**Run rate: {rate}** run on XLA with zero hand edits, their losses and gradient norms agreeing"
        + (f"; {patched} more run with a compatibility patch, which counts as a hand edit." if patched else "."),
        "",
        held,
        "",
        "The suite is porter's development set: programs were added to it and porter was changed until",
        "they ran. From issue 21 on, a program added to it is run once before any porter change made for",
        "it (`run.py --record-first-run NAME`); that first result, with the porter revision it ran, is",
        "kept in its manifest entry and shown beside the current one. A compatibility patch a program",
        "needs to run at all (`xla_compat`, restoring names torch-xla 2.9 removed) counts as a hand edit.",
        "",
        "The finding columns count porter's sites by rule code over the whole ported folder (for a",
        "library, the library; for an example, its folder), as `porter rewrite --report` gives them;",
        "the codes are explained in [rules.md](rules.md).",
        "",
        (
            f"Measured {_measured(results)} on {platform.machine()}, Python {platform.python_version()}; "
            f"the programs took {seconds:.0f} s in all (port, original and port runs)."
        ),
        "Target-API check of the ports: "
        + ("ran (porter.apidata)." if _api_checked(results) else "not run: this porter has no recorded target APIs."),
        "",
        (
            "| program | package | runs (xla) | hand edits | losses and gradient norms agree | max rel. diff (loss / grad norm) | "
            "noise floor (rel.) | porter rewrote (xla) | porter left for a person (xla) | "
            "neuron / tpu: parse, idempotent | first run (held out) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        p = r["program"]
        run = r["xla_run"] or {}
        xla = r["ports"]["xla"]
        diff = run.get("max_rel_diff")
        native = " / ".join(("yes" if native_ok(r, t) else "**no**") for t in ("neuron", "tpu") if t in r["ports"])
        runs = "yes" if run.get("runs") else "**no**"
        by_floor = "within 4x the original's own drift" in (run.get("judged_by") or "")
        equal = (
            ("yes, within its noise floor" if by_floor else "yes")
            if run.get("equal") and run.get("learns")
            else ("flat losses" if run.get("equal") else ("**no**" if run.get("runs") else "—"))
        )
        floor = run.get("noise_floor_rel")
        left = {**xla["manual"], **{f"{k} (unsafe)": v for k, v in xla["unapplied"].items()}}
        edits = hand_edits(p)
        lines.append(
            f"| {p['name']} | {p['package']} {p['version']}: {_where(p)} "
            f"| {runs} | {'; '.join(edits) if edits else '0'} | {equal} | {'' if diff is None else f'{diff:.1e}'}"
            f"{'' if run.get('grad_norm_rel_diff') is None else ' / ' + format(run['grad_norm_rel_diff'], '.1e')} "
            f"| {'not measured' if floor is None else f'{floor:.1e}'} "
            f"| {_codes(xla['rewritten'])} | {_codes(left)} | {native} | {_first_run(p)} |"
        )
    failures = [r for r in results if not passed(r) or any(p["problems"] for p in r["ports"].values())]
    if failures:
        lines += ["", "## What failed (or what porter got wrong on the way)", ""]
        for r in failures:
            run = r["xla_run"] or {}
            port_problems = "; ".join(
                f"porter ({t}): " + _first_line(pr, 300)
                for t in ("xla", "neuron", "tpu")
                if t in r["ports"]
                for pr in r["ports"][t]["problems"][:1]
            )
            why = "; ".join(x for x in (_first_line(run.get("error")), port_problems) if x)
            if not why and run and not run.get("learns"):
                why = "the losses do not change from step to step"
            lines.append(f"- **{r['program']['name']}**: {why}")
        lines.append("")
    firsts = [r for r in results if r["program"].get("first_run")]
    if firsts:
        lines += [
            "",
            "## First runs",
            "",
            "Each program's first run, before any porter change made for it (from the manifest's",
            "`first_run`), beside the run above:",
            "",
        ]
        for r in firsts:
            now = "PASS" if passed(r) else "FAIL"
            diff = (r["xla_run"] or {}).get("max_rel_diff")
            lines.append(
                f"- **{r['program']['name']}**: first: {_first_run(r['program'])}; {r['program']['first_run'].get('note', '')} Now: {now}"
                + (f" (max rel. diff {diff:.1e})." if diff is not None else ".")
            )
    diagnoses = HERE / "diagnoses.md"
    if diagnoses.exists():
        lines += ["" if lines[-1] else None, diagnoses.read_text().strip()]
        lines = [line for line in lines if line is not None]
    if cuda_check.RECORDED.exists():  # the last GPU run, recorded (no GPU here)
        lines += ["", cuda_check.section(cuda_check.RECORDED)[0]]
    lines += [
        "",
        "## Reproduce",
        "",
        "```sh",
        "pip install -e '.[xla,realprog]'",
        "python benchmarks/real_programs/run.py            # all programs, rewrites this page",
        "python benchmarks/real_programs/run.py --only ignite-mnist --no-doc",
        "python -m pytest -q tests/real_programs           # the quick subset (marked slow, xla)",
        "```",
        "",
        "Downloads are cached in `~/.cache/porter-realprog` (`PORTER_REALPROG_CACHE`).",
        "",
    ]
    return "\n".join(lines)


def record_first_run(name: str, work: Path) -> int:
    """Judge one program and write its result into its manifest entry as its first run."""
    programs = {p.name: p for p in load_manifest()}
    if name not in programs:
        raise SystemExit(f"{name}: not in {MANIFEST.name}; add its entry first")
    program = programs[name]
    if program.first_run:
        raise SystemExit(f"{name}: its first run is recorded already ({program.first_run}); it is recorded once")
    result = judge(program, work / name)
    run = result["xla_run"] or {}
    record = {
        "on": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "porter": porter_revision(REPO),
        "runs": bool(run.get("runs")),
        "equal": bool(run.get("equal")),
        "learns": bool(run.get("learns")),
        "hand_edits": len(hand_edits(result["program"])),
    }
    problems = [pr for port in result["ports"].values() for pr in port["problems"]]
    why = _first_line(run.get("error")) or (_first_line(problems[0]) if problems else "")
    if why and not passed(result):
        record["error"] = why
    write_first_run(MANIFEST, name, record)
    print(f"{name}: first run recorded in {MANIFEST.name}: {record}")
    return 0 if zero_edits(result) else 1


def write_first_run(manifest: Path, name: str, record: dict) -> None:
    """Put `first_run = {...}` after the `name = "<name>"` line of the program's entry (the
    file's comments and layout stay as they are)."""
    text = manifest.read_text()
    line = f"name = {json.dumps(name)}\n"
    at = text.find("[[program]]\n" + line)
    if at < 0:
        raise SystemExit(f"{name}: no `[[program]]` entry starting with {line.strip()!r} in {manifest}")
    at += len("[[program]]\n" + line)
    fields = ", ".join(f"{k} = {json.dumps(v)}" for k, v in record.items())
    new = text[:at] + f"first_run = {{ {fields} }}\n" + text[at:]
    if [p.first_run for p in parse_manifest(new) if p.name == name] != [record]:
        raise SystemExit(f"{name}: the first run did not read back from the manifest")
    manifest.write_text(new)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--work", type=Path)
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument(
        "--update",
        action="store_true",
        help="with --only: replace those programs in WORK/results.json and rewrite the table from all results there",
    )
    parser.add_argument("--render", action="store_true", help="only rewrite the table from WORK/results.json (no runs)")
    parser.add_argument(
        "--record-first-run",
        metavar="NAME",
        help="run a program just added to the manifest, before any porter change made for it, "
        "and record the result in its entry (the held-out rate)",
    )
    args = parser.parse_args()
    if args.record_first_run:
        return record_first_run(args.record_first_run, args.work or Path(tempfile.mkdtemp(prefix="porter-realprog-")))
    if args.render:
        results = json.loads((args.work / "results.json").read_text())
        DOC.write_text(table(results, sum(r.get("seconds", 0.0) for r in results)))
        print(f"table: {DOC}")
        return 0 if all(passed(r) for r in results) else 1
    # a torchrun program (nproc > 1) runs here as one process, which is another program: it is
    # judged rank by rank in docs/parity-evidence.md (parity_evidence.py)
    programs = [p for p in load_manifest() if (not args.only or p.name in args.only) and p.nproc == 1]
    work = args.work or Path(tempfile.mkdtemp(prefix="porter-realprog-"))
    results = []
    t0 = time.perf_counter()
    for program in programs:
        t1 = time.perf_counter()
        result = judge(program, work / program.name)
        result["seconds"] = round(time.perf_counter() - t1, 1)
        result["measured_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        results.append(result)
        run = result["xla_run"] or {}
        print(
            f"{program.name}: {'PASS' if passed(result) else 'FAIL'} "
            f"runs={run.get('runs')} equal={run.get('equal')} learns={run.get('learns')} "
            f"diff={run.get('max_rel_diff')} ({time.perf_counter() - t1:.0f} s)",
            flush=True,
        )
        if run.get("error"):
            print("   ", _first_line(run["error"], 300), flush=True)
        for target, port in result["ports"].items():
            for problem in port["problems"]:
                print(f"    [{target}] {_first_line(problem, 300)}", flush=True)
    seconds = time.perf_counter() - t0
    if args.update and (work / "results.json").exists():
        previous = {r["program"]["name"]: r for r in json.loads((work / "results.json").read_text())}
        previous.update({r["program"]["name"]: r for r in results})
        order = [p.name for p in load_manifest()]
        results = [previous[n] for n in order if n in previous]
        seconds = sum(r["seconds"] for r in results)
    (work / "results.json").write_text(json.dumps(results, indent=1))
    print(f"results: {work / 'results.json'}")
    if not args.no_doc and (not args.only or args.update):
        DOC.write_text(table(results, seconds))
        print(f"table: {DOC}")
    return 0 if all(passed(r) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
