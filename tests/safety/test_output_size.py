"""Contract 5 (third adversarial read): what porter prints and reports grows with what it
finds, not with findings times the length of their line. A repository's one long line with
thousands of findings on it (a Dockerfile `RUN` of 20,000 `pip install`s) made `lint` print
the whole line once per finding, fingerprint it once per finding (in porter's own process,
outside the per-file time limit) and the Markdown report hold it once per site."""

from __future__ import annotations

import resource
import subprocess
import sys
from types import SimpleNamespace

from tests.safety.conftest import porter


def _one_long_line(root, n):
    root.mkdir()
    (root / "Dockerfile").write_bytes(b"FROM ubuntu:22.04\nRUN " + b"pip install cupy-cuda12x && " * n + b"true\n")
    return root


def test_full_output_shows_a_window_of_a_long_line(tmp_path):
    tree = _one_long_line(tmp_path / "t", 1500)  # a 42 KB line, 1,500 findings on it
    out = porter("lint", "t", "--target", "xla", "--no-cache", "--output-format", "full", cwd=tmp_path)
    text = out.stdout.decode()
    assert out.returncode == 1 and "Found 1500 findings." in text, out.stderr.decode()[-2000:]
    assert len(text) < 2_000_000, len(text)  # each finding's whole line: 63 MB
    shown = [line for line in text.splitlines() if line.startswith("2 | ")]
    assert len(shown) == 1500 and all(len(line) < 300 for line in shown)
    # the caret still points at the package, in the middle of the line as at its ends
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("2 | "):
            caret = lines[i + 1]
            at = caret.index("^")
            assert line[at:].startswith("cupy-cuda12x"), (line, caret)
    assert tree.exists()


def test_fingerprints_of_many_findings_on_one_line_take_linear_time(tmp_path, monkeypatch):
    """The line was normalised and hashed once per finding (minutes for this one): counted, in
    porter's own process (typer's runner), not timed."""
    from typer.testing import CliRunner

    from porter.cli import app
    from porter.lint import fingerprint

    _one_long_line(tmp_path / "t", 12000)  # a 336 KB line: 12,000 findings
    normalised, hashed = [0], [0]
    real_text, real_hash = fingerprint.normalised_text, fingerprint.hashlib.sha256

    def text(*args):  # (each fails at the first call past the count: per finding took minutes)
        normalised[0] += 1
        assert normalised[0] <= 2, "the line normalised again"
        return real_text(*args)

    def digest(*args):
        hashed[0] += 1
        assert hashed[0] <= 2, "the line hashed again"
        return real_hash(*args)

    monkeypatch.setattr(fingerprint, "normalised_text", text)
    monkeypatch.setattr(fingerprint, "hashlib", SimpleNamespace(sha256=digest))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".c"))
    args = ["lint", "t", "--target", "xla", "--no-cache", "--output-format", "gitlab", "--jobs", "1"]
    out = CliRunner().invoke(app, args)
    # one line range, one code: once each (per finding: 12,000 each)
    assert 1 <= normalised[0] <= 2 and 1 <= hashed[0] <= 2, (normalised[0], hashed[0], out.output[-2000:])
    assert out.exit_code == 1, out.output[-2000:]
    assert out.stdout.count('"fingerprint"') == 12000


def _limited():  # at most 2 GiB of address space for porter and its workers
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def test_markdown_report_quotes_a_long_line_once(tmp_path):
    _one_long_line(tmp_path / "t", 8000)  # 8,000 sites on one 224 KB line
    from tests.safety.conftest import REPO
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / ".c")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "porter",
            "lint",
            "t",
            "--target",
            "xla",
            "--no-cache",
            "--output-format",
            "concise",
            "--jobs",
            "1",
            "--report",
            "r.md",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=300,
        preexec_fn=_limited,
    )
    err = out.stderr.decode()
    assert out.returncode == 1 and "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    report = (tmp_path / "r.md").read_text()
    assert len(report) < 65_536
    block = report[report.index("```python") :]
    assert block.count("\n    2  RUN ") == 1  # the line once, cut short, however many sites it holds
    assert len(block) < 5_000
