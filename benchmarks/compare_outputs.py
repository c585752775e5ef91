"""Whether two checkouts of porter give byte-identical findings and diffs: the check that a
speed change changed nothing else (docs/performance.md).

    python benchmarks/compare_outputs.py --baseline CHECKOUT [--porter CHECKOUT] [--sample 10]
        [--targets xla,neuron,tpu] [--work DIR]

Over every `--sample`-th Python file of the benchmark corpus (bench_lint_real.corpus()) and
the fixtures (cases, projects' sources, libraries), each checkout runs, per target, `porter
lint --output-format json` and `porter rewrite --diff`, cold (`--no-cache`, `--jobs 1`), with
the same interpreter. The outputs are compared after the checkout's own path is replaced by
`<porter>` (findings link into its docs); the first difference is printed and the exit code
is 1. With `--work DIR` the outputs are kept there, and a baseline's outputs already there
are reused (the baseline is not re-run while only the branch changes).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lint_real import _files, _sample, corpus  # noqa: E402


def _trees(sample: int, fixtures: Path) -> list[tuple[str, Path]]:
    """(label, folder) of every tree compared."""
    root = corpus()
    trees = [(f"corpus-every-{sample}", _sample(root, _files(root), sample))]
    trees.append(("fixtures-cases", fixtures / "cases"))
    for project in sorted((fixtures / "projects").iterdir()):
        if (project / "src").is_dir():
            trees.append((f"fixtures-{project.name}", project / "src"))
    for library in sorted((fixtures / "libraries").iterdir()):
        if library.is_dir():
            trees.append((f"fixtures-{library.name}", library))
    return trees


def _run(checkout: Path, tree: Path, target: str, mode: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1", "COLUMNS": "200"}
    for var in ("PORTER_CACHE_DIR", "PORTER_FILE_KINDS", "PORTER_JOBS"):
        env.pop(var, None)
    common = [".", "--target", target, "--no-cache", "--jobs", "1"]
    if mode == "lint":
        args = ["lint", *common, "--isolated", "--output-format", "json"]
    else:
        args = ["rewrite", *common, "--diff", "--allow-no-vcs", "--allow-dirty"]
    proc = subprocess.run(
        [sys.executable, "-m", "porter", *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"porter {mode} failed in {tree} ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out = proc.stdout
    for form in (checkout.resolve().as_uri(), str(checkout.resolve())):
        out = out.replace(form, "<porter>")
    return out


def _outputs(checkout: Path, trees: list[tuple[str, Path]], targets: list[str], work: Path, reuse: bool) -> Path:
    where = work / hashlib.sha256(str(checkout.resolve()).encode()).hexdigest()[:12]
    where.mkdir(parents=True, exist_ok=True)
    for label, tree in trees:
        for target in targets:
            for mode in ("lint", "diff"):
                out = where / f"{label}.{target}.{mode}"
                if reuse and out.exists():
                    continue
                out.write_text(_run(checkout, tree, target, mode))
    return where


def _compare(base: Path, mine: Path, trees: list[tuple[str, Path]], targets: list[str]) -> int:
    """How many outputs differ; each one's verdict printed, with the start of its diff."""
    differ = 0
    for label, _ in trees:
        for target in targets:
            for mode in ("lint", "diff"):
                name = f"{label}.{target}.{mode}"
                old, new = (base / name).read_text(), (mine / name).read_text()
                same = old == new
                differ += not same
                size = f"{len(new.splitlines()):,} lines"
                print(f"  {name:45} {'identical' if same else 'DIFFERENT'} ({size})")
                if not same:
                    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "baseline", "branch", lineterm="")
                    print("\n".join(list(lines)[:40]))
    return differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, required=True, help="the checkout of porter to compare with")
    ap.add_argument("--porter", type=Path, default=REPO, help="the checkout measured (default: this one)")
    ap.add_argument("--sample", type=int, default=10, metavar="N", help="every N-th corpus file (default 10)")
    ap.add_argument("--targets", default="xla,neuron,tpu")
    ap.add_argument("--work", type=Path, help="keep the outputs here (and reuse the baseline's)")
    a = ap.parse_args()
    targets = [t for t in a.targets.split(",") if t]
    work = a.work or Path(tempfile.mkdtemp(prefix="porter-compare-"))
    trees = _trees(a.sample, REPO / "fixtures")
    try:
        base = _outputs(a.baseline, trees, targets, work, reuse=a.work is not None)
        mine = _outputs(a.porter, trees, targets, work, reuse=False)
        differ = _compare(base, mine, trees, targets)
    finally:  # (the outputs are read before a temporary work folder goes)
        shutil.rmtree(trees[0][1], ignore_errors=True)
        if a.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{differ} of {len(trees) * len(targets) * 2} outputs differ")
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
