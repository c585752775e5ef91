"""The wheel carries the rule data, and the engine does not pull in torch."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_carries_rules(tmp_path: Path):
    pytest.importorskip("hatchling")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("porter-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for rule_file in (ROOT / "rules").glob("*.toml"):
        assert f"porter/_rules/{rule_file.name}" in names
    meta = next(n for n in names if n.endswith("METADATA"))
    requires = [
        line for line in zipfile.ZipFile(wheel).read(meta).decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert requires and not any("torch" in line for line in requires), requires


def test_engine_imports_without_torch():
    code = "import sys, porter.cli, porter.runner, porter.engine; assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
