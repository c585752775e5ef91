"""Run porter over a real codebase and check its promises, not only its speed.

    python benchmarks/real_codebase.py PATH [--target xla] [--target neuron ...]

For each target: every file is ported in memory; each changed file must re-parse; porting
the port must change nothing (idempotence); the summary's counts must equal the counts
recomputed from the per-file results. Prints figures and exits 1 on any broken promise.
Nothing is written to PATH.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import libcst as cst

from porter.pipeline.port import port_source
from porter.core.findings import FileStatus, Severity
from porter.pipeline.runner import run
from porter.config.settings import Settings


def check(path: Path, target: str) -> bool:
    settings = Settings(target=target)
    t0 = time.perf_counter()
    results, summary = run([path], settings)
    elapsed = time.perf_counter() - t0
    lines = sum((r.original_source or b"").count(b"\n") for r in results)
    problems: list[str] = []
    rewritten = Counter()
    manual = Counter()
    for r in results:
        for f in r.findings:
            if f.applied:
                rewritten[f.code] += 1
            elif not f.fixable and f.severity is not Severity.INFO:
                manual[f.code] += 1
        if r.status is not FileStatus.CHANGED:
            continue
        try:
            cst.parse_module(r.new_source)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{r.path}: output does not parse: {exc}")
            continue
        again = port_source(r.new_source, r.path, settings)
        if again.new_source is not None:
            problems.append(f"{r.path}: a second run changes the output")
    if rewritten != summary.rewritten or manual != summary.manual:
        problems.append("summary counts differ from the per-file findings")
    changed = sum(r.status is FileStatus.CHANGED for r in results)
    if changed != summary.changed:
        problems.append("summary changed-file count is wrong")
    print(
        f"[{target}] {summary.scanned} files, {lines:,} lines in {elapsed:.1f} s "
        f"({lines / elapsed:,.0f} lines/s): {summary.changed} changed, {summary.unchanged} unchanged, "
        f"{sum(summary.skipped.values())} skipped, {len(summary.errors)} failed; "
        f"{sum(summary.rewritten.values())} sites rewritten, {sum(summary.manual.values())} manual, "
        f"{sum(summary.unapplied.values())} unsafe not applied"
    )
    print(f"[{target}] top rewritten: {summary.rewritten.most_common(8)}")
    print(f"[{target}] top manual: {summary.manual.most_common(8)}")
    for err in summary.errors[:10]:
        print(f"[{target}] failed: {err.path}:{err.error_line}: {err.reason}")
    for p in problems[:20]:
        print(f"[{target}] PROBLEM: {p}")
    print(f"[{target}] {'OK' if not problems else f'{len(problems)} PROBLEMS'}")
    return not problems


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", type=Path)
    parser.add_argument("--target", action="append", choices=["neuron", "tpu", "xla"])
    args = parser.parse_args()
    ok = all([check(args.path, t) for t in (args.target or ["neuron", "tpu", "xla"])])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
