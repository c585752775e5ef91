"""`porter rewrite` of real frameworks, next to cold `porter lint` and `ast.parse` of the same files.

    python benchmarks/bench_rewrite_real.py [--library NAME ...] [--jobs 1 --jobs 2] [--repeat 1]
        [--out-dir] [--diff-out DIR] [--porter CHECKOUT]

The frameworks are pinned releases from `benchmarks/library_hunks/corpus.toml` (downloaded,
checked against their sha256 and unpacked under `$PORTER_BENCH_CACHE` by `library_hunks.py`'s
code; nothing is vendored). The default set, colossalai, deepspeed, megatron-core and torchao,
is ~580k lines of Python. Each library is run as `library_hunks.py port` runs it: in its
unpacked folder, target neuron, `--no-cache`, its `port_exclude` patterns as `--exclude`.
For each `--jobs` value one run measures, library by library and alternated so that every
command meets the same load: `porter lint` cold, `porter rewrite --diff` cold and, with
`--out-dir`, `porter rewrite --out-dir` into a temporary folder. Wall seconds and the CPU
seconds of porter and its workers are printed, summed over the libraries, with ratios to
`ast.parse` of the same files (one core, this process) measured in the same run and to cold
lint: the machine is shared, so absolute times drift; CPU seconds and same-run ratios do
not drift as much. The load average is printed before each run.

`--baseline CHECKOUT` also times that checkout's `rewrite --diff` (e.g. a `git archive` of
main), alternated with the others in the same run, and says whether its diffs are the
branch's byte for byte.

`--diff-out DIR` keeps each library's `--diff` (of the first `--jobs` value) as
`DIR/<label>.patch`, to compare two versions of porter byte for byte; the diffs of every
`--jobs` value must be identical, or the run fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_lint_real import _ast_all, _children_cpu  # noqa: E402 - the lint benchmark's timers
from library_hunks import TARGET, Library, load_corpus, source_root  # noqa: E402 - its pinned corpus

REPO = HERE.parent
DEFAULT = ("colossalai", "deepspeed", "megatron-core", "torchao")


@dataclass
class Runs:
    """Wall and CPU seconds of one command, per run (summed over the libraries)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def python_files(lib: Library, root: Path) -> list[Path]:
    """The `.py` files porter reads in `root`: not under `port_exclude` (nor `.git`)."""
    spec = pathspec.GitIgnoreSpec.from_lines(lib.port_exclude)
    return sorted(p for p in root.rglob("*.py") if p.is_file() and not spec.match_file(p.relative_to(root).as_posix()))


def porter_args(lib: Library, command: str, jobs: int, out: Path | None = None) -> list[str]:
    if command == "lint":
        args = ["lint", ".", "--output-format", "json"]
    elif out is None:
        args = ["rewrite", ".", "--diff", "-q"]
    else:
        args = ["rewrite", ".", "--out-dir", str(out), "-q"]
    args += ["--target", TARGET, "--no-cache", "--jobs", str(jobs), "--file-timeout", "600"]
    for pattern in lib.port_exclude:
        args += ["--exclude", pattern]
    return args


def timed(porter: Path, args: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of porter and its workers, stdout) of one porter process."""
    env = {**os.environ, "PYTHONPATH": str(porter), "NO_COLOR": "1"}
    env.pop("PORTER_CACHE_DIR", None)
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "porter", *args], cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"porter {' '.join(args)} failed ({proc.returncode}) in {cwd}:\n{proc.stderr.decode()[-3000:]}"
        )
    return wall, _children_cpu() - cpu, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--library", action="append", help=f"a library of the corpus (repeatable; default: {', '.join(DEFAULT)})"
    )
    ap.add_argument("--jobs", type=int, action="append", help="porter's --jobs (repeatable; default: 1 and 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command (the best is reported)")
    ap.add_argument("--out-dir", action="store_true", help="also time `rewrite --out-dir` (a temporary folder)")
    ap.add_argument("--no-lint", action="store_true", help="time the rewrite only")
    ap.add_argument("--diff-out", type=Path, help="keep each library's --diff here as <label>.patch")
    ap.add_argument("--porter", type=Path, default=REPO, help="the checkout of porter to measure (default: this one)")
    ap.add_argument(
        "--baseline", type=Path, help="also time this checkout's rewrite --diff, alternated, and compare diffs"
    )
    a = ap.parse_args()

    names = a.library or list(DEFAULT)
    corpus = {lib.name: lib for lib in load_corpus()}
    unknown = [n for n in names if n not in corpus]
    if unknown:
        raise SystemExit(f"not in the corpus: {', '.join(unknown)} (known: {', '.join(corpus)})")
    libs = [(corpus[n], source_root(corpus[n])) for n in names]
    sources: dict[str, list[bytes]] = {
        lib.label: [p.read_bytes() for p in python_files(lib, root)] for lib, root in libs
    }
    lines = sum(s.count(b"\n") for srcs in sources.values() for s in srcs)
    files = sum(len(srcs) for srcs in sources.values())
    asts = [_ast_all([s for srcs in sources.values() for s in srcs]) for _ in range(max(1, a.repeat))]
    t_ast, c_ast = min(asts)
    print(f"porter: {a.porter}" + (f"; baseline: {a.baseline}" if a.baseline else ""))
    for lib, root in libs:
        n = sum(s.count(b"\n") for s in sources[lib.label])
        print(f"  {lib.label:24} {len(sources[lib.label]):6,} .py files {n:10,} lines  ({root})")
    print(f"  {'together':24} {files:6,} .py files {lines:10,} lines; cores: {len(os.sched_getaffinity(0))}")
    print(f"  ast.parse of them (one core): {c_ast:.2f} CPU s, {t_ast:.2f} s wall", flush=True)

    commands = ([] if a.no_lint else ["lint"]) + ["rewrite --diff"] + (["rewrite --out-dir"] if a.out_dir else [])
    commands += ["baseline rewrite --diff"] if a.baseline else []
    checkout = {c: a.baseline if c.startswith("baseline") else a.porter for c in commands}
    jobs = a.jobs or [1, 2]
    runs: dict[tuple[str, int], Runs] = {(c, j): Runs() for c in commands for j in jobs}
    per_lib: dict[tuple[str, str, int], float] = {}  # (label, command, jobs) -> best CPU s
    diffs: dict[tuple[str, int], bytes] = {}
    loads: list[float] = []
    scratch = Path(tempfile.mkdtemp(prefix="porter-bench-rewrite-"))
    try:
        for _ in range(a.repeat):
            for j in jobs:
                sums = {c: [0.0, 0.0] for c in commands}
                for lib, root in libs:
                    for c in commands:  # a library's commands one after the other: the same load
                        out = scratch / lib.label if c == "rewrite --out-dir" else None
                        loads.append(os.getloadavg()[0])
                        kind = c.removeprefix("baseline ").split()[0]
                        w, u, stdout = timed(checkout[c], porter_args(lib, kind, j, out), root)
                        if out is not None:
                            shutil.rmtree(out, ignore_errors=True)
                        if c == "rewrite --diff":
                            diffs.setdefault((lib.label, j), stdout)
                        elif c == "baseline rewrite --diff":
                            diffs.setdefault((lib.label, -j), stdout)
                        key = (lib.label, c, j)
                        per_lib[key] = min(per_lib.get(key, u), u)
                        sums[c][0] += w
                        sums[c][1] += u
                        print(
                            f"    {lib.label:24} {c:24} -j{j}: {u:7.2f} CPU s, {w:7.2f} s wall (load {loads[-1]:.1f})",
                            flush=True,
                        )
                for c in commands:
                    runs[c, j].wall.append(sums[c][0])
                    runs[c, j].cpu.append(sums[c][1])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    same = all(diffs[lib.label, j] == diffs[lib.label, jobs[0]] for lib, _ in libs for j in jobs)
    if a.diff_out:
        a.diff_out.mkdir(parents=True, exist_ok=True)
        for lib, _ in libs:
            (a.diff_out / f"{lib.label}.patch").write_bytes(diffs[lib.label, jobs[0]])
        print(f"  diffs written to {a.diff_out}/<label>.patch")
    changed = {
        lib.label: diffs[lib.label, jobs[0]].count(b"\n+++ ") + diffs[lib.label, jobs[0]].startswith(b"+++ ")
        for lib, _ in libs
    }
    print(f"  files the diff changes: {', '.join(f'{k} {v:,}' for k, v in changed.items())}")
    print(f"  diffs of --jobs {', '.join(map(str, jobs))}: {'identical' if same else 'DIFFERENT'}")
    if a.baseline:
        as_base = all(diffs[lib.label, -j] == diffs[lib.label, j] for lib, _ in libs for j in jobs)
        print(f"  diffs of the baseline ({a.baseline}): {'identical to' if as_base else 'DIFFERENT from'} the branch's")
        same = same and as_base

    print(f"\n{'step':34} {'wall s':>8} {'CPU s':>8} {'lines/CPU s':>12} {'CPU/ast':>8} {'CPU/lint':>9}  runs (CPU s)")
    print(f"{'ast.parse, every file (1 core)':34} {t_ast:8.2f} {c_ast:8.2f} {lines / c_ast:12,.0f} {1:8.2f} {'':>9}")
    for j in jobs:
        for c in commands:
            r = runs[c, j]
            best = min(r.cpu)
            lint = min(runs["lint", j].cpu) if "lint" in commands else None
            vs_lint = f"{best / lint:9.2f}" if lint else f"{'':>9}"
            print(
                f"{f'porter {c}, --jobs {j}':34} {min(r.wall):8.2f} {best:8.2f} {lines / best:12,.0f} "
                f"{best / c_ast:8.2f} {vs_lint}  {', '.join(f'{x:.1f}' for x in r.cpu)}"
            )
    if len(libs) > 1:
        print("\nper library, best CPU s (" + ", ".join(f"{c} -j{j}" for j in jobs for c in commands) + ")")
        for lib, _ in libs:
            cells = "  ".join(f"{per_lib[lib.label, c, j]:8.2f}" for j in jobs for c in commands)
            print(f"  {lib.label:24} {cells}")
    print(f"  load average (1 min) at each run's start: {', '.join(f'{x:.1f}' for x in loads)}")
    print(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
