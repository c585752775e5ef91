"""The files around the Python of real distributions: every CUDA-specific line ported or reported.

    python benchmarks/real_files.py [--target neuron --target tpu --target xla] [--json FILE] [--markdown FILE]
    python benchmarks/real_files.py --from-json FILE --markdown TABLE.md   # the table of a saved run

Pinned source distributions from PyPI (checked against their sha256, unpacked under
`$PORTER_REALPROG_CACHE`, never vendored) whose sdists carry the files around the Python:
axolotl 0.6.0 (requirements, setup.py, Dockerfiles, a compose file, shell scripts, GitHub
workflows, ~100 YAML configs, DeepSpeed JSON, a Colab notebook), gpytorch 1.13 (50 notebooks,
a conda recipe, a Makefile, workflows), deepspeed 0.16.1 (requirements files, setup.cfg, JSON
config templates), trl 0.19.1's wheel (accelerate config files), mmdet 3.3.0's wheel (its Slurm
and torch.distributed.launch scripts), llama-cpp-python 0.2.90 (a Makefile with CUDA builds, CUDA
Dockerfiles and workflows; its vendored llama.cpp counted apart), proteinworkshop 0.2.5's wheel
(Hydra's Lightning trainer configs with `accelerator: gpu` and a DDP strategy, submitit Slurm
launcher configs with `gres: gpu:1`), neural-amp-modeler 0.13.0 (a conda environment on the
`nvidia` channel with `pytorch-cuda`, Lightning trainer settings in JSON), vllm 0.34.0's
`.buildkite/amd-disagg` (a Slurm batch file, `#SBATCH --gres=gpu:8`). For each target, benchmarks/no_silence.py's audit runs porter over the tree
(`porter rewrite --out-dir`, the tree is never written) and counts, per kind of file, the
files, the findings, the fixes applied, the CUDA-specific lines left in the port, and those
without a finding. The files around the Python must have none; the Python's are counted apart
(the Python codemods' business). Exits 1 when a file that is not Python has one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "real_programs"))

from fetch import Program, fetch  # noqa: E402 - the real programs' cached, checked download
from no_silence import audit_tree  # noqa: E402

# (package, version, file on the index, sha256, the folder inside it)
DISTS = (
    (
        "axolotl",
        "0.6.0",
        "axolotl-0.6.0.tar.gz",
        "8ad5e1f7e42d7deba40b932a4a4a41bf88e6315e0e73388066f2afeca2f5bd15",
        "axolotl-0.6.0",
    ),
    (
        "gpytorch",
        "1.13",
        "gpytorch-1.13.tar.gz",
        "f4a488633a2a7a4ab37d12553d1d1dd39690043dbceef14ca428b7d5f89f73ba",
        "gpytorch-1.13",
    ),
    (
        "deepspeed",
        "0.16.1",
        "deepspeed-0.16.1.tar.gz",
        "058cb748d1c39f88580343fb69633fe45586225025522c1cf9f64b608a71820c",
        "deepspeed-0.16.1",
    ),
    # the accelerate config files trl's CLI launches with (wheel: trl/accelerate_configs/*.yaml)
    (
        "trl",
        "0.19.1",
        "trl-0.19.1-py3-none-any.whl",
        "8a2d4277b4ba7221eaab545a35ee89b6fbb8721fa3709ac01876a8c1bd7fd78a",
        "trl",
    ),
    # OpenMMLab's launchers as mim installs them: Slurm `srun --gres=gpu:N` and
    # `torch.distributed.launch --nproc_per_node=$GPUS` scripts (the configs' Python left out)
    (
        "mmdet",
        "3.3.0",
        "mmdet-3.3.0-py3-none-any.whl",
        "2e23e291281ac57e7dccf8678e957da45fbe560ce78a1f5ded6afeccd3730f17",
        "mmdet/.mim/tools",
    ),
    # a Makefile with CUDA builds (its own and the vendored llama.cpp's nvcc rules), CUDA
    # Dockerfiles, a CUDA wheel workflow, notebooks
    (
        "llama_cpp_python",
        "0.2.90",
        "llama_cpp_python-0.2.90.tar.gz",
        "419b041c62dbdb9f7e67883a6ef2f247d583d08417058776be0bff05b4ec9e3d",
        "llama_cpp_python-0.2.90",
    ),
    # Lightning trainer configs as Hydra composes them (`accelerator: gpu`, `strategy: ddp...`,
    # `devices: 4`) and a submitit Slurm launcher config (`gres: gpu:1`), in the package itself
    (
        "proteinworkshop",
        "0.2.5",
        "proteinworkshop-0.2.5-py3-none-any.whl",
        "44240aa7cbe1db7660e1310944576cc81fff56e8511add446b5ce9e6ae87210b",
        "proteinworkshop",
    ),
    # a conda environment on the `nvidia` channel with `pytorch::pytorch-cuda=12.1`
    # (environments/environment_gpu.yml), Lightning trainer settings in JSON (`"accelerator": "gpu"`)
    (
        "neural-amp-modeler",
        "0.13.0",
        "neural_amp_modeler-0.13.0.tar.gz",
        "550710fc50aa374178bc739c0e55141b6c17e2749aad17b74fab02069484b8e4",
        "neural_amp_modeler-0.13.0",
    ),
    # a Slurm batch file (`#SBATCH --gres=gpu:8`, its CI's disaggregated-serving test) and the
    # script that submits it; the rest of this sdist is benchmarks/library_hunks.py's
    (
        "vllm",
        "0.34.0",
        "vllm-0.34.0.tar.gz",
        "fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113",
        "vllm-0.34.0/.buildkite/amd-disagg",
    ),
)

# folders of a distribution that are another project, vendored: their CUDA lines are counted
# apart, as the Python's are (llama.cpp's own C++ build of its CUDA backend, with 100-odd
# Makefile lines porter reads in part: docs/files.md, "Not done")
APART = {"llama_cpp_python": ("vendor/",)}


def tree(package: str, version: str, dist: str, sha: str, folder: str) -> Path:
    return (
        fetch(Program(name=package, package=package, version=version, dist=dist, sha256=sha, root=folder, requires=[]))
        / folder
    )


def table(name: str, result: dict) -> str:
    rows = [
        f"[{result['target']}] {name}: {result['files']} files (porter {result['porter_seconds']} s)",
        f"  {'kind':<14}{'files':>7}{'changed':>9}{'findings':>10}{'rewritten':>11}{'CUDA lines left':>17}{'without a finding':>19}",
    ]
    for kind, s in result["by_kind"].items():
        rows.append(
            f"  {kind:<14}{s.get('files', 0):>7}{s.get('changed', 0):>9}{s.get('findings', 0):>10}{s.get('rewritten', 0):>11}"
            f"{s.get('constructs', 0):>17}{s.get('uncovered', 0):>19}"
        )
    return "\n".join(rows)


def _triple(values: list[int]) -> str:
    """`a / b / c` per target, or `a` when the targets agree."""
    return str(values[0]) if len(set(values)) == 1 else " / ".join(str(v) for v in values)


def markdown(results: list[dict]) -> str:
    """docs/files.md's table of a run: a row per distribution and kind of file, a figure per
    target (in the run's order) where they differ; the lines without a finding of a vendored
    folder (APART) and of the Python in a row of their own."""
    from no_silence import kind_of

    targets = list(dict.fromkeys(r["target"] for r in results))
    rows = [
        f"| distribution | kind | files | findings ({' / '.join(targets)}) | fixes applied | CUDA lines in the port | without a finding |",
        "|---|---|---|---|---|---|---|",
    ]
    for dist in dict.fromkeys(r["dist"] for r in results):
        runs = [next(r for r in results if r["dist"] == dist and r["target"] == t) for t in targets]
        package = dist.split("==")[0]
        apart = tuple(APART.get(package, ()))
        first = True
        for kind in sorted({k for r in runs for k in r["by_kind"]}, key=lambda k: (k == "python", k)):
            stats = [r["by_kind"].get(kind, {}) for r in runs]
            own = [
                sum(
                    1
                    for m in r["uncovered"]
                    if (kind_of(m["path"]) or "python") == kind and not any(f"/{a}" in m["path"] for a in apart)
                )
                for r in runs
            ]
            label = kind if kind != "python" else "python (counted apart)"
            rows.append(
                f"| {dist.replace('==', ' ') if first else ''} | {label} | {stats[0].get('files', 0)} | "
                f"{_triple([s.get('findings', 0) for s in stats])} | {_triple([s.get('rewritten', 0) for s in stats])} | "
                f"{_triple([s.get('constructs', 0) for s in stats])} | {_triple(own)} |"
            )
            first = False
        if apart:
            rows.append(
                f"| | of which vendored ({', '.join(apart)}: another project), counted apart | | | | | "
                f"{_triple([r.get('vendored_uncovered', 0) for r in runs])} |"
            )
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", choices=["neuron", "tpu", "xla"])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--porter", help="import porter from this folder (a worktree)")
    ap.add_argument("--dist", action="append", help="only this package (repeatable)")
    ap.add_argument("--markdown", type=Path, help="write docs/files.md's table of the run here")
    ap.add_argument(
        "--from-json", type=Path, help="with --markdown: the table of a run saved with --json (nothing is ported)"
    )
    args = ap.parse_args(argv)
    if args.from_json is not None:
        text = markdown(json.loads(args.from_json.read_text("utf-8")))
        if args.markdown is None:
            sys.stdout.write(text)
        else:
            args.markdown.write_text(text, "utf-8")
        return 0
    results = []
    silent = Counter()
    with tempfile.TemporaryDirectory(prefix="porter-real-files-") as tmp:
        for package, version, dist, sha, folder in DISTS:
            if args.dist and package not in args.dist:
                continue
            root = tree(package, version, dist, sha, folder)
            for target in args.target or ["neuron", "tpu", "xla"]:
                work = Path(tmp) / f"{package}-{target}"
                work.mkdir()
                result = audit_tree(root, target, work, args.porter)
                result["dist"] = f"{package}=={version}"
                results.append(result)
                print(table(f"{package} {version}", result), flush=True)
                apart = [str(root / a) for a in APART.get(package, ())]
                vendored = [
                    m
                    for m in result["uncovered"]
                    if any(m["path"].startswith(a) for a in apart) and not m["path"].endswith((".py", ".pyi"))
                ]
                if vendored:
                    print(
                        f"  vendored ({', '.join(APART[package])}): {len(vendored)} CUDA lines without a finding, counted apart"
                    )
                result["vendored_uncovered"] = len(vendored)
                for m in result["uncovered"]:
                    if not m["path"].endswith((".py", ".pyi")) and m not in vendored:
                        silent[target] += 1
                        print(f"  uncovered: {m['path']}:{m['line']}: {m['text']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(results), "utf-8")
    print("files around the Python without a finding: " + (", ".join(f"{t} {n}" for t, n in silent.items()) or "none"))
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main())
