"""The project index alone, cold, in one process: its CPU seconds and every answer it gives.

    python benchmarks/bench_index.py [--corpus DIR] [--sample N] [--target xla] [--repeat 3]
        [--porter CHECKOUT] [--baseline CHECKOUT] [--profile FILE.prof]

Over the bench corpus (`bench_lint_real.py`'s, every `--sample`-th Python file), each project
of the run (`runner.index_parts`) is indexed as a cold lint indexes it with no cache
(`runner._Part`, its two analyses worked out here): the device values (`_Part.values`), the
CUDA-only facts (`_Part.extra`) and the answers a file's port gets (`_Part.facts`) are written
out, with the CPU seconds of the scan, the device values and the CUDA-only facts apart.

`--baseline CHECKOUT` indexes the same files with that checkout too (alternated `--repeat`
times, each in a process of its own), requires every answer of both to be equal (exit 1
where one differs, naming the first files that do), and prints each one's best CPU seconds.
`--profile FILE` writes a cProfile of one run of `--porter`'s index instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import cProfile, json, os, sys, time
from pathlib import Path
from porter.pipeline import runner
from porter.pipeline.discover import discover

target, out, profile = sys.argv[1], sys.argv[2], sys.argv[3]
cuda_sources = []
candidates = list(discover([Path(".")], (), cuda_sources=cuda_sources))
prof = cProfile.Profile() if profile else None
times = {"scan": 0.0, "values": 0.0, "cuda-only": 0.0}
found = {"values": {}, "cuda-only": {}, "facts": {}}
if prof is not None:
    prof.enable()
for group, cu in runner.index_parts(candidates, cuda_sources, [Path(".")]):
    t = time.process_time()
    part = runner._Part(group, None, None, target, cu)
    times["scan"] += time.process_time() - t
    for kind in part.missing():
        t = time.process_time()
        fn, *args = part.task(kind)
        part.answered(kind, fn(*args))
        times[kind] += time.process_time() - t
    found["values"].update(part.values)
    found["cuda-only"].update(part.extra)
    found["facts"].update(part.facts())
if prof is not None:
    prof.disable()
    prof.dump_stats(profile)
with open(out, "w") as f:
    json.dump({"times": times, "found": {k: sorted(v.items()) for k, v in found.items()}}, f)
"""


def _python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _sample(root: Path, step: int) -> Path:
    """Every `step`-th Python file of the corpus (its other files all: markers, .cu sources), copied."""
    dest = Path(tempfile.mkdtemp(prefix="porter-index-sample-"))
    python = [p for p in _python_files(root) if p.suffix == ".py"]
    keep = set(python[::step])
    for p in _python_files(root):
        if p.suffix == ".py" and p not in keep:
            continue
        out = dest / p.relative_to(root)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, out)
    return dest


def _run(checkout: Path, where: Path, target: str, profile: str = "") -> dict:
    """One child's times and answers (JSON)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        subprocess.run([sys.executable, "-c", _CHILD, target, out, profile], cwd=where, env=env, check=True)
        return json.loads(Path(out).read_text())
    finally:
        os.unlink(out)


def _differ(a: dict, b: dict) -> list[str]:
    """What differs between two runs' answers (empty: none)."""
    out: list[str] = []
    for kind in a["found"]:
        left, right = dict(map(tuple, a["found"][kind])), dict(map(tuple, b["found"][kind]))
        names = sorted(set(left) | set(right))
        bad = [n for n in names if left.get(n) != right.get(n)]
        out += [f"{kind}: {n}" for n in bad[:10]]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = Path(os.environ.get("PORTER_BENCH_CACHE", Path.home() / ".cache" / "porter-bench")) / "corpus-v2"
    ap.add_argument("--corpus", type=Path, default=default)
    ap.add_argument("--sample", type=int, default=1, metavar="N", help="every N-th Python file only")
    ap.add_argument("--target", default="xla")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--porter", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--baseline", type=Path, default=None)
    ap.add_argument("--profile", default="", metavar="FILE.prof")
    a = ap.parse_args()
    where = _sample(a.corpus, a.sample) if a.sample > 1 else a.corpus
    try:
        if a.profile:
            _run(a.porter, where, a.target, str(Path(a.profile).resolve()))
            print(f"profile written to {a.profile}")
            return 0
        checkouts = {"branch": a.porter} | ({"baseline": a.baseline} if a.baseline else {})
        best: dict[str, dict] = {}
        runs: dict[str, dict] = {}
        for _ in range(a.repeat):
            for label, checkout in checkouts.items():
                got = runs[label] = _run(checkout, where, a.target)
                times = got["times"]
                print(
                    f"{label}: " + ", ".join(f"{k} {v:.2f}" for k, v in times.items()),
                    f"(load {os.getloadavg()[0]:.1f})",
                )
                if label not in best or sum(times.values()) < sum(best[label].values()):
                    best[label] = times
        for label, times in best.items():
            print(
                f"{label} best: {sum(times.values()):.2f} CPU s ("
                + ", ".join(f"{k} {v:.2f}" for k, v in times.items())
                + ")"
            )
        n = {k: len(v) for k, v in runs["branch"]["found"].items()}
        print("answers:", ", ".join(f"{k} {v:,} files" for k, v in n.items()))
        if "baseline" in runs:
            bad = _differ(runs["baseline"], runs["branch"])
            print("answers identical" if not bad else "ANSWERS DIFFER:\n  " + "\n  ".join(bad))
            return 1 if bad else 0
        return 0
    finally:
        if where != a.corpus:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
