"""The wheel carries the rule data, and the engine does not pull in torch."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.deps import require

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_carries_rules(tmp_path: Path):
    require("hatchling")  # --no-build-isolation builds with the installed one
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("porter-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for rule_file in (ROOT / "rules").glob("*.toml"):
        assert f"porter/_rules/{rule_file.name}" in names
    for record in (ROOT / "rules" / "api").glob("*.json"):  # the target APIs lint checks against
        assert f"porter/_rules/api/{record.name}" in names
    assert "porter/_rules/compiled.json" in names  # the rule data every run reads (ruledata.load_toml)
    for page in ("rules.md", "ci.md"):  # every finding's link leads to these shipped pages
        assert f"porter/_docs/{page}" in names
    meta = next(n for n in names if n.endswith("METADATA"))
    requires = [
        line
        for line in zipfile.ZipFile(wheel).read(meta).decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert requires and not any("torch" in line for line in requires), requires


def test_every_link_leads_to_porters_own_docs():
    from porter.config.metacodes import NOT_CHECKED_CODE, UNUSED_CODE
    from porter.lint.model import rule_info
    from porter.config.ruledata import all_rules

    for code in [*all_rules(), UNUSED_CODE, NOT_CHECKED_CODE]:
        page, _, anchor = rule_info(code).doc_url.partition("#")
        assert page.startswith("file://"), page
        text = Path(page[len("file://") :]).read_text(encoding="utf-8")
        headings = {
            "-".join(line.lstrip("#").strip().lower().replace("`", "").split())
            for line in text.splitlines()
            if line.startswith("#")
        }
        assert anchor in headings, (code, anchor)


def test_engine_imports_without_torch():
    code = "import sys, porter.cli, porter.pipeline.runner, porter.codemods.apply; assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
