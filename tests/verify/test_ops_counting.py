"""porter's ATen operator counting can cost a compile of its own on XLA: the report says so
where it counts recompiles, and `--no-count-ops` turns the counting off (script mode)."""

from __future__ import annotations

from typer.testing import CliRunner

from porter.cli import app
from porter.verify.gaps import collect_gaps
from porter.verify.result import SideSummary


def _ported(ops_counted: bool) -> SideSummary:
    xla = {"recompiles_after_warmup": 2, "uncached_compiles": 5, "steps": 10, "compiles_first_step": 2,
           "cpu_fallback_ops": [], "device_to_host_transfers_per_step": 0, "ops_counted": ops_counted}
    return SideSummary(role="ported", status="ok", device="xla", hardware=False, emulated=True, shim=None,
                       versions={}, wall_s=1.0, phase_s={}, perf={"xla": xla}, graph_breaks=None, error=None)


def _recompile_evidence(ops_counted: bool) -> list[str]:
    [gap] = [g for g in collect_gaps([None, _ported(ops_counted)], "xla", None) if g.kind == "recompile"]
    return gap.evidence


def test_the_recompile_gap_says_when_porter_counted_operators():
    assert any("porter's own" in e and "--no-count-ops" in e for e in _recompile_evidence(True))
    assert not any("porter's own" in e for e in _recompile_evidence(False))


def test_no_count_ops_reaches_both_script_commands(monkeypatch, tmp_path):
    import porter.verify.script as script

    seen = []

    def fake_run_script(cfg, **kw):
        seen.append(cfg.ops)
        raise SystemExit(0)

    def fake_record(role, tree, cfg, *a, **kw):
        seen.append(cfg.ops)
        raise SystemExit(0)

    monkeypatch.setattr(script, "run_script", fake_run_script)
    monkeypatch.setattr(script, "record", fake_record)
    runner = CliRunner()
    for flag in ("--no-count-ops", "--count-ops"):
        runner.invoke(app, ["parity-check", "--ported", str(tmp_path), flag, "--", "python", "train.py"])
        runner.invoke(app, ["trace", "record", "-o", str(tmp_path / "t.safetensors"), flag, "--", "python", "train.py"])
    assert seen == [False, False, True, True]


def test_no_count_ops_is_for_script_mode(tmp_path):
    res = CliRunner().invoke(app, ["parity-check", "--original", str(tmp_path), "--ported", str(tmp_path),
                                   "--no-count-ops"])
    assert res.exit_code == 2 and "--no-count-ops, --no-noise-floor and --device-rng are for script mode" in res.output
