"""The real-program table's honest rates (issue 21, point 8): a compatibility patch counts as a
hand edit, and a program's first run, recorded in its manifest entry before any porter change
made for it, is shown beside its current result and gives the held-out rate. No program runs
here: the table is rendered from results shaped as `harness.judge` makes them."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_programs"
sys.path.insert(0, str(BENCH))

import run  # noqa: E402 - found through the sys.path entry above
from fetch import MANIFEST, load_manifest, parse_manifest  # noqa: E402


def _result(program, *, runs=True, equal=True, learns=True) -> dict:
    port = {
        "ok": True,
        "parses": True,
        "idempotent": True,
        "unknown_api": [],
        "problems": [],
        "rewritten": {"DEV002": 1},
        "manual": {},
        "unapplied": {},
    }
    return {
        "program": asdict(program),
        "ports": {"xla": dict(port), "neuron": dict(port), "tpu": dict(port)},
        "xla_run": {"runs": runs, "equal": equal, "learns": learns, "max_rel_diff": 1e-7, "error": None},
        "seconds": 1.0,
        "measured_at": "2026-12-04 10:00 UTC",
    }


@pytest.fixture
def programs():
    by_name = {p.name: p for p in load_manifest()}
    return by_name["schedulefree-mnist"], by_name["ignite-mnist"]


def test_a_compatibility_patch_counts_as_a_hand_edit(programs):
    plain, patched = programs
    assert patched.xla_compat and not plain.xla_compat
    doc = run.table([_result(plain), _result(patched)], 2.0)
    assert (
        "**Run rate: 1/2 (50%)** run on XLA with zero hand edits, their losses and gradient norms agreeing; 1 more run with a compatibility patch"
        in doc
    )
    row = next(line for line in doc.splitlines() if line.startswith("| ignite-mnist |"))
    assert "| `xla_compat`: torch-xla 2.9's removed `xm` names restored for the library |" in row
    assert next(line for line in doc.splitlines() if line.startswith("| schedulefree-mnist |")).split(" | ")[3] == "0"


def test_no_first_run_means_no_held_out_rate(programs):
    plain, _ = programs
    doc = run.table([_result(plain)], 1.0)
    assert "**Held-out rate: none yet.**" in doc and "development-set rate" in doc
    assert "| not recorded (added before the rule) |" in doc


def test_first_runs_are_shown_beside_the_current_result(programs):
    plain, patched = programs
    first_failed = {
        **asdict(plain),
        "first_run": {
            "on": "2026-12-04",
            "porter": "main@abc",
            "runs": False,
            "equal": False,
            "learns": False,
            "hand_edits": 0,
            "error": "RuntimeError: no NVIDIA driver",
        },
    }
    first_passed = {
        **asdict(patched),
        "first_run": {
            "on": "2026-12-05",
            "porter": "main@def",
            "runs": True,
            "equal": True,
            "learns": True,
            "hand_edits": 0,
        },
    }
    results = [_result(plain), _result(patched)]
    results[0]["program"], results[1]["program"] = first_failed, first_passed
    doc = run.table(results, 2.0)
    assert "**Held-out rate: 1/2** of the programs added since the rule passed on their first run" in doc
    assert "| **no**: RuntimeError: no NVIDIA driver (2026-12-04, porter main@abc) |" in doc
    assert "| yes (2026-12-05, porter main@def) |" in doc


def test_write_first_run_edits_one_entry_and_reads_back(tmp_path):
    manifest = tmp_path / "manifest.toml"
    text = MANIFEST.read_text()
    manifest.write_text(text)
    record = {
        "on": "2026-12-04",
        "porter": "h-corpus@0123456789",
        "runs": True,
        "equal": True,
        "learns": True,
        "hand_edits": 0,
    }
    run.write_first_run(manifest, "opacus-mnist", record)
    after = manifest.read_text()
    assert [p.first_run for p in parse_manifest(after) if p.name == "opacus-mnist"] == [record]
    before = {p.name: p.first_run for p in parse_manifest(text)}
    assert all(p.first_run == before[p.name] for p in parse_manifest(after) if p.name != "opacus-mnist")
    # nothing else moved: the original text plus one line
    assert (
        after.replace(
            'first_run = { on = "2026-12-04", porter = "h-corpus@0123456789", runs = true, equal = true, '
            "learns = true, hand_edits = 0 }\n",
            "",
            1,
        )
        == text
    )
    with pytest.raises(SystemExit, match="no `\\[\\[program\\]\\]` entry"):
        run.write_first_run(manifest, "no-such-program", record)


def test_manifest_first_runs_are_complete():
    for p in load_manifest():
        if p.first_run:
            assert {"on", "porter", "runs", "equal", "learns", "hand_edits"} <= set(p.first_run), p.name
