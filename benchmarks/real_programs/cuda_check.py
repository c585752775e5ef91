"""The real programs on a real GPU: does the original run on CUDA, does porter's `--portable` port
still run on CUDA (on CUDA, not silently on the CPU), and how far is the harness's stand-in for
CUDA (the original on the CPU under porter's CUDA shim, what run.py compares every port with)
from the real CUDA run?

    python benchmarks/real_programs/cuda_check.py prepare [--only NAME ...] [--bundle .gpu]
    python benchmarks/real_programs/cuda_check.py run --bundle .gpu --out DIR    # on the GPU host
    python benchmarks/real_programs/cuda_check.py compare DIR/cuda_results.json [--doc]

`prepare` (here, with porter installed) copies each program's pinned tree, ports it with
`porter rewrite --portable` for neuron and tpu, and downloads the pure-Python wheels the GPU host
lacks; the bundle holds only relative paths, so it can travel. `run` (on the GPU host, with the
repository on PYTHONPATH) runs side.py for every program in the runs RUNS lists. `compare` judges the results and, with --doc, writes the section in
docs/real-programs.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fetch import Program, load_manifest, program_root  # noqa: E402 - found through the sys.path entry above
from harness import side_job  # noqa: E402 - found through the sys.path entry above

REPO = HERE.parents[1]
SIDE = HERE / "side.py"
DOC = REPO / "docs" / "real-programs.md"
RECORDED = HERE / "cuda_results.json"  # the last run on a GPU host, shown in the doc
NOTES = HERE / "cuda_notes.md"
BEGIN, END = "<!-- cuda-check:begin -->", "<!-- cuda-check:end -->"

# Programs whose dependencies the GPU host has or that travel as small pure-Python wheels.
PROGRAMS = (
    "schedulefree-mnist",
    "pytorch-warmup-emnist",
    "ignite-mnist",
    "opacus-mnist",
    "tabnet-fit",
    "sb3-ppo",
    "opacus-char-lstm",
    "ignite-dcgan",
    "ignite-super-resolution",
    "mup-coord-check",
    "torchensemble-voting",
    "pml-metric-loss",
)
# Wheels the GPU host lacks (its image holds torch, torchvision, scipy, scikit-learn, pandas, ...).
WHEELS = (
    "schedulefree==1.4.1",
    "pytorch-warmup==0.2.0",
    "pytorch-ignite==0.5.5",
    "opacus==1.6.0",
    "gymnasium==1.4.0",
    "farama-notifications==0.0.4",
)
# (label, tree, side): side "cuda" runs a tree as it is on the GPU (twice: CUDA's own run-to-run
# variation); "cuda-det" with torch's deterministic algorithms, so that the original and its ports
# can be compared exactly (what a port changes is then the only difference); "cpu" runs the original under
# the CUDA shim with no GPU visible, as run.py's reference does; "cuda-like-cpu" runs it on the GPU
# with its random tensors drawn on the CPU (as the CPU reference and the XLA port draw them) and
# TF32 off: what is left between it and the CPU reference is the shim's own error.
RUNS = (
    ("original-cuda", "original", "cuda"),
    ("original-cuda-again", "original", "cuda"),
    ("original-cuda-det", "original", "cuda-det"),
    ("portable-neuron-cuda", "portable-neuron", "cuda-det"),
    ("portable-tpu-cuda", "portable-tpu", "cuda-det"),
    ("original-cpu-shim", "original", "cpu"),
    ("original-cuda-like-cpu", "original", "cuda-like-cpu"),
)
RTOL = 1e-5  # run.py's tolerance between the CPU reference and the XLA port


def prepare(names: list[str], bundle: Path) -> None:
    chosen = [p for p in load_manifest() if p.name in names]
    if bundle.exists():
        shutil.rmtree(bundle)
    bundle.mkdir(parents=True)
    porter = [sys.executable, "-m", "porter"]
    entries = []
    for p in chosen:
        root = program_root(p)
        here = bundle / p.name
        shutil.copytree(root, here / "original", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for target in ("neuron", "tpu"):
            out = here / f"portable-{target}"
            cmd = [*porter, "rewrite", str(root), "--target", target, "--portable", "--out-dir", str(out)]
            proc = subprocess.run([*cmd, "--no-cache", "-q"], capture_output=True, text=True, check=False)
            if proc.returncode not in (0, 1):  # 1: findings left for a person
                raise SystemExit(f"{p.name}: porter exited {proc.returncode}: {proc.stderr[-2000:]}")
        entries.append(asdict(p))
    (bundle / "programs.json").write_text(json.dumps(entries, indent=1))
    wheels = bundle / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        + ["--python-version", "3.12", "-d", str(wheels), *WHEELS],
        check=True,
    )
    print(f"bundle: {bundle} ({sum(f.stat().st_size for f in bundle.rglob('*') if f.is_file()) >> 10} KiB)")


def _run_one(program: dict, label: str, tree: str, side: str, bundle: Path, out: Path) -> dict:
    work = out / "work" / program["name"] / label
    work.mkdir(parents=True, exist_ok=True)
    root = (bundle / program["name"] / tree).resolve()
    job = side_job(Program(**program), "cpu" if side == "cpu" else "cuda", root, work)
    job["xla_compat"] = False  # no torch-xla on a GPU host
    job["cuda_like_cpu"] = side == "cuda-like-cpu"
    job["deterministic"] = side in ("cuda-det", "cuda-like-cpu")
    (work / "job.json").write_text(json.dumps(job, indent=1))
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", USE_TORCH_XLA="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if side == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"  # what deterministic cuBLAS asks for
    try:
        proc = subprocess.run(
            [sys.executable, str(SIDE), str(work / "job.json")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        tail = proc.stderr[-3000:]
    except subprocess.TimeoutExpired:
        return {"label": label, "losses": [], "devices": [], "error": "timed out after 300 s"}
    result_file = work / "result.json"
    if not result_file.exists():
        return {"label": label, "losses": [], "devices": [], "error": f"the side exited {proc.returncode}: {tail}"}
    result = json.loads(result_file.read_text())
    result["label"] = label
    return result


def run(bundle: Path, out: Path, jobs: int) -> None:
    import torch

    programs = json.loads((bundle / "programs.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(p, label, tree, side) for p in programs for label, tree, side in RUNS]
    with ThreadPoolExecutor(jobs) as pool:
        done = list(pool.map(lambda t: _run_one(*t, bundle, out), tasks))
    results: dict[str, dict] = {}
    for (p, label, _, _), result in zip(tasks, done):
        results.setdefault(p["name"], {})[label] = result
    host = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    (out / "cuda_results.json").write_text(json.dumps({"host": host, "programs": results}, indent=1))
    print(json.dumps(summarise(results), indent=1))


def _max_rel(a: list[float], b: list[float]) -> float | None:
    if not a or len(a) != len(b):
        return None
    return max(abs(x - y) / max(abs(x), abs(y), 1e-12) for x, y in zip(a, b))


# What each run is compared with: the as-written repeat with the as-written original (CUDA's own
# variation); the ports with the deterministic original; the CPU reference with both.
AGAINST = {
    "original-cuda-again": "original-cuda",
    "portable-neuron-cuda": "original-cuda-det",
    "portable-tpu-cuda": "original-cuda-det",
    "original-cpu-shim": "original-cuda",
    "original-cuda-like-cpu": "original-cpu-shim",
}


def summarise(results: dict[str, dict]) -> dict[str, dict]:
    """Per program: where each run's losses lived, and how far it is from what it is compared with."""
    table = {}
    for name, runs in results.items():
        row: dict = {"errors": {k: (v["error"] or "")[-300:] for k, v in runs.items() if v.get("error")}}
        for label, r in runs.items():
            row[label] = {"devices": r.get("devices", []), "n": len(r.get("losses", []))}
            if label in AGAINST:
                ref = runs.get(AGAINST[label], {}).get("losses", [])
                row[label]["max_rel"] = _max_rel(ref, r.get("losses", []))
        table[name] = row
    return table


def _verdict(row: dict) -> str:
    """A `--portable` port keeps CUDA when it runs on CUDA and computes what the original does
    there: with deterministic algorithms on both, the same losses (to run.py's tolerance)."""
    verdicts = []
    for label in ("portable-neuron-cuda", "portable-tpu-cuda"):
        r = row[label]
        rel = r.get("max_rel")
        if r["devices"] != ["cuda"]:
            verdicts.append(f"{label}: ran on {r['devices'] or 'nothing'}")
        elif rel is None:
            verdicts.append(f"{label}: no losses to compare")
        elif rel > RTOL:
            verdicts.append(f"{label}: differs ({rel:.1e})")
    return "; ".join(verdicts) or "yes"


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.1e}"


def section(path: Path) -> tuple[str, int]:
    """The doc's GPU section from a recorded run (with the reading of it in cuda_notes.md, kept by
    hand like diagnoses.md), and how many programs' ports did not keep CUDA."""
    data = json.loads(path.read_text())
    table = summarise(data["programs"])
    host = data["host"]
    lines = [
        BEGIN,
        "## On a real GPU",
        "",
        f"`benchmarks/real_programs/cuda_check.py` on {host['gpu']} (torch {host['torch']}, CUDA {host['cuda']}), "
        "same driver as above (synthetic data, dropout off where the manifest says), losses compared step by step "
        "(max relative difference):",
        "",
        "- **CUDA again**: the original run twice on CUDA as written: CUDA's own run-to-run variation.",
        "- **`--portable` ports on CUDA**: `porter rewrite --portable` for neuron and for tpu, run on the GPU and "
        "compared with the original, both with torch's deterministic algorithms; the device the losses lived on "
        "is shown (a port that silently fell back to the CPU would show `cpu`).",
        "- **CPU reference vs CUDA**: the original on the CPU under porter's CUDA shim (the reference every port "
        "above is compared with) against the original on CUDA as written; then against CUDA computing the same "
        "thing (random tensors drawn on the CPU, as the reference and the XLA port draw them, TF32 off): what is "
        "left is the shim's own error.",
        "",
        "| program | original on CUDA | CUDA again | `--portable` neuron port on CUDA | `--portable` tpu port on CUDA "
        "| CPU reference vs CUDA as written | CPU reference vs CUDA drawing on the CPU, no TF32 | ports keep CUDA |",
        "|---|---|---:|---|---|---:|---:|---|",
    ]
    failed = 0
    for name, row in table.items():
        ok = _verdict(row)
        failed += ok != "yes"

        def cell(label: str, row: dict = row) -> str:
            r = row[label]
            where = "/".join(r["devices"]) or "error"
            rel = r.get("max_rel")
            return f"{where}, {r['n']} losses" + ("" if rel is None else f", {_fmt(rel)}")

        def rel(label: str, row: dict = row) -> str:
            return _fmt(row[label].get("max_rel"))

        lines.append(
            f"| {name} | {cell('original-cuda')} | {rel('original-cuda-again')} | {cell('portable-neuron-cuda')} | "
            f"{cell('portable-tpu-cuda')} | {rel('original-cpu-shim')} | {rel('original-cuda-like-cpu')} | {ok} |"
        )
    errors = [(n, label, e) for n, row in table.items() for label, e in row["errors"].items()]
    if errors:
        lines += ["", "Errors:", ""]
        lines += [f"- {n} / {label}: `{e.strip().splitlines()[-1] if e.strip() else e}`" for n, label, e in errors]
    if NOTES.exists():
        lines += ["", NOTES.read_text().strip()]
    lines.append(END)
    return "\n".join(lines), failed


def compare(path: Path, write_doc: bool) -> int:
    gpu, failed = section(path)
    print(gpu)
    if write_doc:
        doc = DOC.read_text()
        if BEGIN in doc:
            head, rest = doc.split(BEGIN, 1)
            doc = head + gpu + rest.split(END, 1)[1]
        else:
            doc = doc.rstrip("\n") + "\n\n" + gpu + "\n"
        DOC.write_text(doc)
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--only", nargs="*", default=list(PROGRAMS))
    p.add_argument("--bundle", type=Path, default=REPO / ".gpu")
    r = sub.add_parser("run")
    r.add_argument("--bundle", type=Path, default=REPO / ".gpu")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--jobs", type=int, default=8)
    c = sub.add_parser("compare")
    c.add_argument("results", type=Path)
    c.add_argument("--doc", action="store_true")
    args = ap.parse_args()
    if args.cmd == "prepare":
        prepare(args.only, args.bundle)
        return 0
    if args.cmd == "run":
        run(args.bundle, args.out, args.jobs)
        return 0
    return compare(args.results, args.doc)


if __name__ == "__main__":
    sys.exit(main())
