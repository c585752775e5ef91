"""Real programs from pinned packages on the index, ported with zero hand edits and run.

The quick subset of benchmarks/real_programs (manifest entries with `quick = true`; one of
them in every run, the others with `-m benchmark`): each is downloaded (cached in ~/.cache/porter-realprog), ported to xla, neuron and tpu; the xla port runs
a few steps on XLA:CPU and its per-step losses must equal the original's on the CPU. The full
table is `python benchmarks/real_programs/run.py` (docs/real-programs.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from porter.cli import app

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "real_programs"
sys.path.insert(0, str(BENCH))

from fetch import load_manifest  # noqa: E402 - found through the sys.path entry above

from tests.deps import BENCHMARK_INSTALL, INSTALL, require_distributions  # noqa: E402

PROGRAMS = load_manifest()
# The one quick program every run judges; the other quick ones (pytorch-warmup-emnist took
# five times as long) are a benchmark run of their own: `python -m pytest -m benchmark`.
IN_EVERY_RUN = "schedulefree-mnist"
QUICK = [
    pytest.param(p, id=p.name, marks=() if p.name == IN_EVERY_RUN else pytest.mark.benchmark)
    for p in PROGRAMS
    if p.quick
]


def test_manifest_pins_every_program():
    names = [p.name for p in PROGRAMS]
    assert len(names) == len(set(names)) and len(names) >= 10
    for p in PROGRAMS:
        assert re.fullmatch(r"[0-9a-f]{64}", p.sha256), p.name
        assert p.version in p.dist, p.name
        assert bool(p.entry) != bool(p.call), f"{p.name}: an entry script or a call, not both"
        if p.call:
            assert (BENCH / "entries" / p.call).is_file(), p.name
        assert p.losses >= 3, f"{p.name}: compare at least three steps"
    assert IN_EVERY_RUN in [p.name for p in PROGRAMS if p.quick]


def _porter_in_process(*args: str) -> subprocess.CompletedProcess:
    result = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(["porter", *args], result.exit_code, result.stdout, result.stderr)


@pytest.mark.xla
@pytest.mark.slow
@pytest.mark.parametrize("program", QUICK)
def test_port_runs_with_zero_edits_and_equal_losses(program, tmp_path, monkeypatch):
    import harness

    require_distributions(*program.requires, install=INSTALL if program.name == IN_EVERY_RUN else BENCHMARK_INSTALL)
    # porter in-process (the same command without a Python's start-up for each of its six
    # runs), and one intra-op thread for each side (the suite runs a test per core)
    monkeypatch.setattr(harness, "_porter", _porter_in_process)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # the program's noise floor only when the losses differ beyond float32 tolerance (the same
    # verdict as run.py's, one run of the original less when they agree)
    result = harness.judge(program, tmp_path, floor="when-needed")
    for target, port in result["ports"].items():
        assert port["ok"] and port["parses"] and port["idempotent"], (target, port["problems"])
        assert port["changed"], f"{target}: porter changed nothing in a CUDA program"
    run = result["xla_run"]
    assert run["runs"], run["error"]
    assert run["equal"], (run["cpu_losses"], run["xla_losses"], run["error"])
    assert run["learns"], f"the losses do not move: {run['cpu_losses']}"


def test_the_judge_of_the_table_and_the_evidence():
    """independent.py's judgement (run.py's too): float32 tolerance or 4x the original's own
    drift, for the losses and for the gradient norms before each step; no norms to compare (the
    program's own optimizer class) is said, not failed."""
    from independent import norm_verdict, verdict

    assert verdict([2.0, 1.5], [], [2.0, 1.5 + 1e-6], 2)["verdict"] == "pass"
    assert verdict([2.0, 1.5], [], [2.0, 1.51], 2)["verdict"] == "fail"
    # a program that drifts from itself by 0.01 at step 2: 0.03 is within 4x its drift
    assert verdict([2.0, 1.5], [2.0, 1.51], [2.0, 1.53], 2)["verdict"] == "pass"
    assert verdict([2.0, 1.5], [2.0, 1.51], [2.0, 1.6], 2)["verdict"] == "fail"
    assert norm_verdict([1.2, 1.1], [1.2, 1.1], [1.2, 1.1 * (1 + 5e-4)])["verdict"] == "pass"
    assert norm_verdict([1.2, 1.1], [1.2, 1.1], [0.2, 1.1])["verdict"] == "fail"
    assert norm_verdict([1.2], [], [1.2, 1.1])["verdict"] == "fail"
    assert norm_verdict([], [], [])["verdict"] == "not measured"
