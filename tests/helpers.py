"""Small helpers shared by the engine tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from porter.config.ruledata import all_rules
from porter.pipeline.port import port_source
from porter.config.settings import Settings


def port(code: str, target: str, *, unsafe: bool = False, path: str = "example.py", **settings) -> tuple[str, list]:
    """Port `code` as the file `path` (its name says its kind: `requirements.txt`, `Dockerfile`,
    ...); return the new code (the same if nothing changed) and the findings."""
    result = port_source(code.encode(), path, Settings(target=target, unsafe_fixes=unsafe, **settings))
    assert result.reason is None or result.status.value == "skipped", result.reason
    new = (result.new_source or code.encode()).decode()
    return new, result.findings


def conformance(code: str | bytes, target: str) -> list[str]:
    """What porter's own target-API lint (API*) finds in `code`: empty for anything porter
    emits. The check reads the records of the real packages (rules/api/*.json)."""
    data = code.encode() if isinstance(code, str) else code
    result = port_source(data, "ported.py", Settings(target=target, select=("API",), want_source=False))
    return [f"{f.code} line {f.start.line}: {f.message}" for f in result.findings]


def port_tree(src: Path, out: Path, target: str, *extra: str) -> Path:
    """`porter rewrite SRC --target T --out-dir OUT --quiet [extra]`, in-process (typer's
    CliRunner: the same command without a second Python's start-up); returns OUT."""
    from typer.testing import CliRunner

    from porter.cli import app

    result = CliRunner().invoke(
        app, ["rewrite", str(src), "--target", target, "--out-dir", str(out), "--quiet", *extra]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


def write_files(root: Path, files: dict[str, str]) -> None:
    """A small project under `root`: each relative path gets its (dedented) text."""
    import textwrap

    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def lint_codes(root: Path, files: dict[str, str], target: str = "tpu", cache: bool = False) -> dict[str, list[str]]:
    """Write `files` under `root` as given (not dedented) and lint the folder: each file's codes, by its path below
    `root`."""
    from porter.pipeline.runner import run

    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    results = run([root], Settings(target=target), jobs=1, cache=cache)[0]
    return {str(r.path).replace("\\", "/").split(root.name + "/", 1)[-1]: [f.code for f in r.findings] for r in results}


def port_files(root: Path, target: str) -> dict[str, tuple[str, list]]:
    """Every file under `root` ported in one run (the project index sees them all), by path
    relative to `root`: (the new text, or the old one where nothing changed; the findings)."""
    from porter.pipeline.runner import run

    results, _ = run([root], Settings(target=target), jobs=1, cache=False)
    return {
        Path(r.path).resolve().relative_to(root.resolve()).as_posix(): (
            (r.new_source or r.original_source or b"").decode(),
            r.findings,
        )
        for r in results
    }


def rule_example_files() -> list[tuple[str, bytes, Settings]]:
    """Every rule's one-file examples: (a name, the code before, its settings with the rule
    selected alone)."""
    return [
        (
            f"{rule.code}_{i}.py",
            ex.before.encode(),
            Settings(target=ex.target, unsafe_fixes=ex.unsafe_fixes, portable=ex.portable, select=(rule.code,)),
        )
        for rule in all_rules().values()
        for i, ex in enumerate(rule.examples)
        if not ex.file
    ]


def run_interpreted(script: str, folder: Path) -> dict:
    """`script` (which prints one JSON document) run in a fresh interpreter with `folder` as its
    argument under Triton's interpreter (`TRITON_INTERPRET=1`: a kernel runs on the CPU), its
    document read back."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script, str(folder)], capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)
