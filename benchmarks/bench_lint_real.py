"""`porter lint` on a million lines of real PyTorch code, next to `ast.parse` and TorchFix.

    python benchmarks/bench_lint_real.py [--target xla] [--jobs N] [--repeat 2]
        [--torchfix] [--findings-out FILE.json] [--skip-cold]
    python benchmarks/bench_lint_real.py --baseline CHECKOUT [--baseline CHECKOUT2] [--porter CHECKOUT] [--sample N] [--repeat 3]

The corpus is the Python source of pinned releases of PyTorch-heavy libraries from PyPI
(`DISTS`, ~1.2M lines, ~3,900 files), downloaded with pip, checked against their sha256,
and unpacked under `$PORTER_BENCH_CACHE` (default `~/.cache/porter-bench`); nothing is
vendored. One run measures, side by side: `ast.parse` of every file (one core), `porter
lint` cold (`--no-cache`), filling an empty temporary cache, warm (that cache again: every
file a hit), and with `--torchfix` TorchFix (`pip install .[bench]` in a venv of its own, as
it pins libcst 1.5, then `--torchfix-exe`; ~20 minutes on 2 cores). Figures are printed
as seconds and as ratios to `ast.parse` measured in the same run, since the machine is
shared and absolute times drift. The cache lives in a temporary folder, never the user's.
`--findings-out` keeps the sorted JSON findings (to compare two versions of porter).

`--baseline CHECKOUT` compares two versions of porter instead: cold lint (`--no-cache`) of the
same corpus (every `--sample`-th file) by the baseline checkout (e.g. main's worktree) and by
`--porter` (this one), alternated `--repeat` times in the same run, so both meet the same load;
it prints each one's best CPU seconds and their ratio, whether the branch's findings are each
baseline's (sorted, doc links made checkout-neutral) and the load average before each run,
and exits 1 when the branch costs more than `--tolerance` (3%) above the baseline. `--baseline` may be given more than once (e.g. the
release before a change and main): every checkout is alternated in the same run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "real_programs"))
from fetch import download  # noqa: E402 - the real programs' cached-download helper, found above

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# (pip requirement, file on the index, sha256): pinned, so every run lints the same lines
DISTS = (
    (
        "transformers==4.26.1",
        "transformers-4.26.1-py3-none-any.whl",
        "dae2fa15290c1f526e1b629b0e235eea5e4c04078fcaf1f197a70d51b4f65df2",
    ),
    (
        "deepspeed==0.16.1",
        "deepspeed-0.16.1.tar.gz",
        "058cb748d1c39f88580343fb69633fe45586225025522c1cf9f64b608a71820c",
    ),
    (
        "torch_geometric==2.6.1",
        "torch_geometric-2.6.1-py3-none-any.whl",
        "8faeb353f9655f7dbec44c5e0b44c721773bdfb279994da96b9b8b12fd30f427",
    ),
    (
        "timm==1.0.11",
        "timm-1.0.11-py3-none-any.whl",
        "52a6f895e2cbec35a87d0846870419c2c0aa40de9b205bcda917f38278bf3044",
    ),
    (
        "kornia==0.7.4",
        "kornia-0.7.4-py2.py3-none-any.whl",
        "1b816b4c45878a73531a500a46dbf61e646ec7a749bf8a4dd7a5833a04e28808",
    ),
    (
        "torchmetrics==1.6.0",
        "torchmetrics-1.6.0-py3-none-any.whl",
        "a508cdd87766cedaaf55a419812bf9f493aff8fffc02cc19df5a8e2e7ccb942a",
    ),
    (
        "lightning==2.4.0",
        "lightning-2.4.0-py3-none-any.whl",
        "560163af9711cf59055c448232c473150a299089efce0d2be3cc3288082d8768",
    ),
    (
        "accelerate==1.1.1",
        "accelerate-1.1.1-py3-none-any.whl",
        "61edd81762131b8d4bede008643fa1e1f3bf59bec710ebda9771443e24feae02",
    ),
    (
        "peft==0.13.2",
        "peft-0.13.2-py3-none-any.whl",
        "d4e0951ec78eac11c45a051801c569913436888c578d48e5ce86996b715bc6ef",
    ),
)
# v2: every file of each distribution (v1 had the .py files only): the files around the Python
# that porter reads too (requirements, setup.cfg, JSON/YAML configs) are in the corpus
_CORPUS_VERSION = "2"


def cache_dir() -> Path:
    return Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench"))


def _download(requirement: str, dist: str, sha: str) -> Path:
    name, version = requirement.split("==")
    try:
        return download(name, version, dist, sha, cache_dir() / "dists")
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def corpus() -> Path:
    """The unpacked corpus: each distribution's files under `<name>/` (made once)."""
    root = cache_dir() / f"corpus-v{_CORPUS_VERSION}"
    if (root / ".ok").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    for requirement, dist, sha in DISTS:
        archive = _download(requirement, dist, sha)
        dest = root / requirement.replace("==", "-")
        dest.mkdir(parents=True)
        if dist.endswith(".whl"):
            with zipfile.ZipFile(archive) as whl:
                whl.extractall(dest, [m for m in whl.namelist() if not m.endswith("/")])
        else:
            with tarfile.open(archive) as tar:
                members = [m for m in tar.getmembers() if m.isfile()]
                tar.extractall(dest, members, filter="data")
    (root / ".ok").write_text("\n".join(d[2] for d in DISTS))
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ast_all(sources: list[bytes]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) to parse every file with `ast` in this process."""
    cpu = time.process_time()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for src in sources:
            try:
                ast.parse(src)
            except (SyntaxError, ValueError):
                pass
    return time.perf_counter() - t, time.process_time() - cpu


def _lint(
    root: Path, target: str, cache: Path | None, jobs: int | None, porter: Path, kinds: str | None = None
) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of porter and its workers, exit code, stdout) of one
    `porter lint` process over the corpus (`kinds`: `PORTER_FILE_KINDS`, e.g. "python")."""
    env = {**os.environ, "PYTHONPATH": str(porter), "NO_COLOR": "1"}
    env.pop("PORTER_CACHE_DIR", None)
    env.pop("PORTER_FILE_KINDS", None)
    if kinds is not None:
        env["PORTER_FILE_KINDS"] = kinds
    args = [sys.executable, "-m", "porter", "lint", ".", "--target", target, "--isolated", "--output-format", "json"]
    args += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    if jobs:
        args += ["--jobs", str(jobs)]
    cpu = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"porter lint failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, _children_cpu() - cpu, proc.returncode, proc.stdout


def _sorted_findings(text: str, porter: Path) -> list[dict]:
    """The findings, sorted; links into porter's docs name `<porter>` rather than the
    checkout measured, so that two checkouts' findings compare equal when they are."""
    home = porter.resolve().as_uri()
    found = json.loads(text)
    for d in found:
        if isinstance(d.get("doc_url"), str) and d["doc_url"].startswith(home):
            d["doc_url"] = "<porter>" + d["doc_url"][len(home) :]
    return sorted(found, key=lambda d: json.dumps(d, sort_keys=True))


def _sample(root: Path, files: list[Path], step: int) -> Path:
    """Every `step`-th file of the corpus, copied under a temporary folder."""
    dest = Path(tempfile.mkdtemp(prefix="porter-bench-sample-"))
    for p in files[::step]:
        out = dest / p.relative_to(root)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(p.read_bytes())
    return dest


def _torchfix(root: Path, exe: str | None) -> tuple[float, int]:
    exe = exe or shutil.which("torchfix") or str(Path(sys.executable).parent / "torchfix")
    if not Path(exe).exists():
        raise SystemExit(
            "torchfix is not installed: pip install '.[bench]' (in a venv of its own: it pins libcst 1.5), or --torchfix-exe PATH"
        )
    t = time.perf_counter()
    proc = subprocess.run([exe, "."], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return time.perf_counter() - t, proc.stdout.count("\n")


def compare_cold(root: Path, a: argparse.Namespace) -> int:
    """Cold lint CPU of `a.porter` against each of `a.baseline`, alternated in one run (see the docstring)."""
    files = _files(root)
    where = _sample(root, files, a.sample) if a.sample > 1 else root
    lines = sum(p.read_bytes().count(b"\n") for p in _files(where))
    print(
        f"cold lint of {len(_files(where)):,} files, {lines:,} lines (every {a.sample}th of the corpus), target {a.target}"
    )
    checkouts = [(f"baseline{i + 1 if len(a.baseline) > 1 else ''}", b) for i, b in enumerate(a.baseline)]
    checkouts.append(("branch", a.porter))
    cpu: dict[str, list[float]] = {label: [] for label, _ in checkouts}
    wall: dict[str, list[float]] = {label: [] for label, _ in checkouts}
    counts: dict[str, int] = {}
    found: dict[str, list[dict]] = {}  # each checkout's findings, from its first run
    loads: list[float] = []
    try:
        for _ in range(a.repeat):
            for label, checkout in checkouts:
                loads.append(os.getloadavg()[0])
                seconds, used, _, out = _lint(where, a.target, None, a.jobs, checkout)
                cpu[label].append(used)
                wall[label].append(seconds)
                counts[label] = len(json.loads(out))
                found.setdefault(label, _sorted_findings(out, checkout))
    finally:
        if where != root:
            shutil.rmtree(where, ignore_errors=True)
    best = {label: min(v) for label, v in cpu.items()}
    for label, checkout in checkouts:
        runs = ", ".join(f"{c:.1f}" for c in cpu[label])
        walls = ", ".join(f"{w:.1f}" for w in wall[label])
        print(
            f"  {label:9} {checkout}: best {best[label]:.1f} CPU s (runs {runs}; wall {walls} s); {counts[label]:,} findings"
        )
    worst = 0.0
    for label, _ in checkouts[:-1]:
        same = "identical to" if found[label] == found["branch"] else "DIFFERENT from"
        print(f"  findings of branch: {same} {label}'s")
        ratio = best["branch"] / best[label]
        worst = max(worst, ratio)
        verdict = "no more CPU than" if ratio <= 1 + a.tolerance else "MORE CPU than"
        print(f"  ratio branch/{label}: {ratio:.3f} ({verdict} {label}; tolerance {a.tolerance:.0%})")
    print(f"  load average (1 min) at each run's start: {', '.join(f'{x:.1f}' for x in loads)}")
    print(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if worst <= 1 + a.tolerance else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="xla")
    ap.add_argument("--jobs", type=int, default=None, help="porter's --jobs (default: every core)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each porter measurement (the best is reported)")
    ap.add_argument("--torchfix", action="store_true", help="also time TorchFix over the corpus (slow: ~20 min)")
    ap.add_argument(
        "--torchfix-sample",
        type=int,
        default=1,
        metavar="N",
        help="run TorchFix on every N-th file only and scale its time by the lines (default 1: all)",
    )
    ap.add_argument("--torchfix-exe", help="the torchfix program (default: on PATH or beside this Python)")
    ap.add_argument(
        "--skip-cold", action="store_true", help="no --no-cache runs (the cache is still filled once, timed)"
    )
    ap.add_argument("--no-lint", action="store_true", help="measure ast.parse (and TorchFix) only")
    ap.add_argument("--findings-out", type=Path, help="write the sorted JSON findings here")
    ap.add_argument("--porter", type=Path, default=REPO, help="the checkout of porter to measure (default: this one)")
    ap.add_argument(
        "--file-kinds",
        action="store_true",
        help="only what the files around the Python cost: cold lint with every kind against PORTER_FILE_KINDS=python, alternated",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        action="append",
        help="compare cold lint CPU with this checkout of porter (same run, alternated); repeat it for several",
    )
    ap.add_argument(
        "--sample", type=int, default=1, metavar="N", help="with --baseline: every N-th file only (default 1: all)"
    )
    ap.add_argument(
        "--tolerance", type=float, default=0.03, help="with --baseline: the CPU ratio above 1 that fails (default 0.03)"
    )
    a = ap.parse_args()
    if a.file_kinds:
        file_kinds(a)
        return

    root = corpus()
    if a.baseline is not None:
        raise SystemExit(compare_cold(root, a))
    files = _files(root)
    sources = [p.read_bytes() for p in files]
    lines = sum(s.count(b"\n") for s in sources)
    print(f"corpus: {root}\n  {len(files):,} files, {lines:,} lines from {len(DISTS)} pinned PyPI distributions")
    print(f"  cores: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}")

    # wall seconds are what a user waits; CPU seconds (porter and its workers) are steadier
    # on a shared machine. Ratios are to ast.parse of the same lines in the same run.
    rows: list[tuple[str, float, float, str]] = []
    asts = [_ast_all(sources) for _ in range(a.repeat)]
    t_ast, c_ast = min(asts)
    rows.append(("ast.parse, every file (1 core)", t_ast, c_ast, f"best of {a.repeat}"))

    def measure(label: str, cache: Path | None, times: int) -> None:
        runs = []
        for _ in range(times):
            t, cpu, rc, out = _lint(root, a.target, cache, a.jobs, a.porter)
            runs.append((t, cpu))
            outputs.append(out)
        wall, cpu = min(runs)
        rows.append((label, wall, cpu, f"exit {rc}; runs: " + ", ".join(f"{w:.2f}" for w, _ in runs)))

    scratch = Path(tempfile.mkdtemp(prefix="porter-bench-cache-"))
    outputs: list[str] = []
    try:
        if not a.skip_cold and not a.no_lint:
            measure("porter lint, cold (--no-cache)", None, a.repeat)
        cache = scratch / "cache"
        if not a.no_lint:
            measure("porter lint, filling an empty cache", cache, 1)
            measure("porter lint, warm (every file a hit)", cache, a.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    found = [_sorted_findings(o, a.porter) for o in outputs] or [[]]
    same = all(f == found[0] for f in found)
    if outputs:
        print(f"  findings: {len(found[0]):,} ({'identical in every run' if same else 'DIFFER between runs'})")
    if a.findings_out and outputs:
        a.findings_out.write_text(json.dumps(found[0], indent=1, sort_keys=True) + "\n")
        print(f"  sorted findings written to {a.findings_out}")

    if a.torchfix:
        where, scale, note = root, 1.0, ""
        if a.torchfix_sample > 1:
            where = _sample(root, files, a.torchfix_sample)
            part = sum(s.count(b"\n") for s in sources[:: a.torchfix_sample])
            scale, note = (
                lines / part,
                f"; measured on every {a.torchfix_sample}th file ({part:,} lines), scaled x{lines / part:.1f}",
            )
        cpu0 = _children_cpu()
        t, n = _torchfix(where, a.torchfix_exe)
        rows.append(
            ("TorchFix (torchfix .)", t * scale, (_children_cpu() - cpu0) * scale, f"{n:,} lines of output{note}")
        )
        if where != root:
            shutil.rmtree(where, ignore_errors=True)
    else:
        print("  TorchFix: skipped (--torchfix to include it; ~20 min)")

    print(f"\n{'step':38} {'wall s':>8} {'CPU s':>8} {'lines/s':>11} {'wall/ast':>9} {'CPU/ast':>8}  note")
    for name, sec, cpu, note in rows:
        print(f"{name:38} {sec:8.2f} {cpu:8.2f} {lines / sec:11,.0f} {sec / t_ast:9.2f} {cpu / c_ast:8.2f}  {note}")
    print(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if not same:
        raise SystemExit("findings differ between runs")


def file_kinds(a: argparse.Namespace) -> None:
    """Cold `porter lint` over the corpus with the files around the Python and without them
    (`PORTER_FILE_KINDS=python`), alternated in one run; CPU seconds of porter and its workers
    are compared (steadier than wall time on a shared machine)."""
    sys.path.insert(0, str(a.porter))
    from porter.core.kinds import kind_of

    root = corpus()
    counts: dict[str, int] = {}
    for p in root.rglob("*"):
        if p.is_file():
            kind = kind_of(p.relative_to(root).as_posix()) or "(not read)"
            counts[kind] = counts.get(kind, 0) + 1
    print(
        f"corpus: {root}\n  files by kind: "
        + ", ".join(f"{k} {n:,}" for k, n in sorted(counts.items(), key=lambda x: -x[1]))
    )
    runs: dict[str, list[tuple[float, float]]] = {"python": [], "all": []}
    findings: dict[str, int] = {}
    for _ in range(a.repeat):
        for label, kinds in (("python", "python"), ("all", None)):
            t, cpu, rc, out = _lint(root, a.target, None, a.jobs, a.porter, kinds)
            runs[label].append((t, cpu))
            findings[label] = len(json.loads(out))
    for label in ("python", "all"):
        walls, cpus = [w for w, _ in runs[label]], [c for _, c in runs[label]]
        print(
            f"  cold lint, {'Python only' if label == 'python' else 'every kind':12} CPU s {min(cpus):8.2f} (runs: {', '.join(f'{c:.2f}' for c in cpus)})"
            f"   wall s {min(walls):7.2f}   findings {findings[label]:,}"
        )
    base, full = min(c for _, c in runs["python"]), min(c for _, c in runs["all"])
    print(
        f"  the files around the Python cost {100 * (full - base) / base:+.1f}% CPU (best of {a.repeat} each, alternated); "
        f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
