"""porter at scale: lines/s and files/s for `lint` and `rewrite --diff`, cold and warm,
next to baselines measured in the same run (ast.parse, libcst.parse_module, TorchFix).

    python benchmarks/bench_scale.py [--lines 1000000] [--corpus DIR | --codebase DIR]
        [--target xla] [--jobs N] [--sample 0.1] [--torchfix /tmp/tfvenv/bin/torchfix]

Without --codebase a corpus is generated (benchmarks/corpus.py: ~40% of files mention CUDA,
as census.md counts). The libcst and TorchFix baselines parse every file, so they run on a
`--sample` of the files and are scaled up (the output says so). Ratios are porter's time
over the baseline's for the same lines.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".porter_cache" not in p.parts)


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _porter(args: list[str], cwd: Path, env: dict) -> tuple[float, int]:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return time.perf_counter() - t, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--corpus", type=Path, help="generate into (or reuse) this folder")
    ap.add_argument("--codebase", type=Path, help="measure this real tree instead")
    ap.add_argument("--target", default="xla")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--sample", type=float, default=0.1, help="share of files for the libcst/TorchFix baselines")
    ap.add_argument("--torchfix", default=shutil.which("torchfix") or "/tmp/tfvenv/bin/torchfix")
    ap.add_argument("--skip-cold", action="store_true")
    a = ap.parse_args()

    from corpus import generate

    if a.codebase:
        root = a.codebase.resolve()
    else:
        root = (a.corpus or Path(tempfile.mkdtemp(prefix="porter-bench-"))).resolve()
        if not _files(root):
            generate(root, a.lines)
    files = _files(root)
    sources = [p.read_bytes() for p in files]
    lines = sum(s.count(b"\n") for s in sources)
    cuda = sum(b"cuda" in s for s in sources)
    print(f"corpus: {root}\n  {len(files)} files, {lines} lines, {cuda} files ({cuda / len(files):.0%}) mention cuda")

    from porter.analysis.prefilter import admits
    from porter.config.settings import Settings

    s = Settings(target=a.target)
    rows = []
    t_pre = _time(lambda: [admits(x, s) for x in sources])
    admitted = sum(admits(x, s) for x in sources)
    print(
        f"  prefilter ({a.target}) admits {admitted} files ({admitted / len(files):.0%}) at {lines / t_pre:,.0f} lines/s"
    )

    def rate(name, seconds, n_lines=lines, n_files=len(files), note=""):
        rows.append((name, seconds, n_lines / seconds, n_files / seconds, note))

    def bad(x):
        try:
            ast.parse(x)
        except SyntaxError:
            pass

    rate("ast.parse (1 core)", _time(lambda: [bad(x) for x in sources]))
    step = max(1, round(1 / a.sample))
    sample = sources[::step]
    s_lines = sum(x.count(b"\n") for x in sample)
    import libcst

    t = _time(lambda: [libcst.parse_module(x) for x in sample])
    rate("libcst.parse_module (1 core)", t * lines / s_lines, note=f"measured on {len(sample)} files, scaled")

    tf = Path(a.torchfix)
    if tf.exists():
        sample_dir = Path(tempfile.mkdtemp(prefix="porter-tf-"))
        for p in files[::step]:
            dest = sample_dir / p.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(p.read_bytes())
        t = _time(
            lambda: subprocess.run([str(tf), str(sample_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        rate("TorchFix (all cores)", t * lines / s_lines, note=f"measured on {len(sample)} files, scaled")
        shutil.rmtree(sample_dir, ignore_errors=True)
    else:
        print(f"  TorchFix: not installed at {tf} (pip install torchfix into a venv; --torchfix PATH)")

    env = {**os.environ, "PYTHONPATH": str(HERE.parent), "NO_COLOR": "1"}
    if a.jobs:
        env["PORTER_JOBS"] = str(a.jobs)
    cache = Path(tempfile.mkdtemp(prefix="porter-cache-"))
    env["PORTER_CACHE_DIR"] = str(cache)
    has_lint = (
        subprocess.run([sys.executable, "-m", "porter", "lint", "--help"], env=env, capture_output=True).returncode == 0
    )
    commands = [("lint", ["lint", str(root), "--target", a.target])] if has_lint else []
    commands.append(("rewrite --diff", ["rewrite", str(root), "--target", a.target, "--diff", "-q"]))
    t_start = _time(lambda: subprocess.run([sys.executable, "-m", "porter", "--version"], env=env, capture_output=True))
    for name, args in commands:
        shutil.rmtree(cache, ignore_errors=True)
        if not a.skip_cold:
            t, rc = _porter(args, root, env)
            rate(f"porter {name}, cold", t, note=f"exit {rc}")
        t, rc = _porter(args, root, env)
        rate(f"porter {name}, warm", t, note=f"exit {rc}; cache in {cache.name}")
    shutil.rmtree(cache, ignore_errors=True)

    base = {r[0]: r[1] for r in rows}
    print(f"\n{'step':34} {'seconds':>9} {'lines/s':>11} {'files/s':>9}  {'x ast':>7} {'x libcst':>8}  note")
    for name, sec, lps, fps, note in rows:
        xa = sec / base["ast.parse (1 core)"]
        xl = sec / base["libcst.parse_module (1 core)"]
        print(f"{name:34} {sec:9.2f} {lps:11,.0f} {fps:9,.1f}  {xa:7.2f} {xl:8.2f}  {note}")
    print(
        f"\n(cores: {os.cpu_count()}; interpreter start + porter import: {t_start:.2f} s; ratios: time / baseline time)"
    )


if __name__ == "__main__":
    main()
