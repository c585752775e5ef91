"""The thirty-fifth read of terminal and report output (term, on 5a077b66): each test failed there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.verify.test_trace_units import _imports, make_trace  # noqa: F401 (`_imports`: its autouse fixture, torch)

_ROOT = Path(__file__).resolve().parents[2]

# Unicode's noncharacters, written out here from the standard (chapter 23.7), not from porter's data
_NONCHARACTERS = {chr(c) for c in range(0xFDD0, 0xFDF0)} | {
    chr(plane * 0x10000 + last) for plane in range(17) for last in (0xFFFE, 0xFFFF)
}


def _porter(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTER_")}
    return subprocess.run(
        [sys.executable, "-m", "porter", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(_ROOT)},
        capture_output=True,
        timeout=300,
    )


@pytest.mark.parametrize("command", ["lint", "rewrite"])
def test_the_html_report_holds_no_noncharacter(tmp_path: Path, command: str) -> None:
    """A file `<U+FFFF>.py` (and a comment holding U+FDD0) put the noncharacters raw in the HTML
    report: html5lib 1.1 read the page with "invalid-codepoint" errors (the HTML standard's
    noncharacter-in-input-stream). Now shown as `\\uffff`, as JUnit shows them."""
    source = "import torch\nx = torch.randn(3).cuda()  # \ufdd0\n"
    (tmp_path / "\uffff.py").write_text(source, encoding="utf-8")
    (tmp_path / "b\U0010fffe.py").write_text(source, encoding="utf-8")
    extra = ["--diff"] if command == "rewrite" else []
    r = _porter(tmp_path, command, ".", "-t", "xla", "--no-cache", *extra, "--report", "r.html")
    assert r.returncode == 1, r.stderr.decode()
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert not _NONCHARACTERS & set(page)
    assert "\\uffff.py" in page and "\\U0010fffe.py" in page


@pytest.mark.parametrize("command", [["lint", "a.py", "--no-cache"], ["config"]])
def test_isolated_with_a_named_config_is_refused(tmp_path: Path, command: list[str]) -> None:
    """`--isolated --config my.toml` passed over the file the user named, unsaid: `lint` reported the
    findings `my.toml` ignores (exit 1), `config` showed the defaults (exit 0). ruff 0.17.6 refuses
    the pair ("cannot be used with `--isolated`"). Now exit 2, before any work."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.randn(3).cuda()\n")
    (tmp_path / "my.toml").write_text('target = "xla"\nignore = ["DEV001"]\n')
    r = _porter(tmp_path, *command, "-t", "xla", "--isolated", "--config", "my.toml")
    assert r.returncode == 2, (r.returncode, r.stdout.decode(), r.stderr.decode())
    assert b"--isolated and --config do not go together" in r.stderr


@pytest.mark.parametrize("name", [".html", ".md", ".json"])
def test_a_report_named_by_its_suffix_alone_is_written(tmp_path: Path, name: str) -> None:
    """`lint --report .html` was refused, exit 2: "report file '.html' must end in .html, .md or
    .json" (`Path('.html').suffix` is empty: a hidden file's name). Now written, in that format."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.randn(3).cuda()\n")
    r = _porter(tmp_path, "lint", "a.py", "-t", "xla", "--no-cache", "--report", name)
    assert r.returncode == 1, r.stderr.decode()
    first = (tmp_path / name).read_text(encoding="utf-8").lstrip()[:1]
    assert first == {".html": "<", ".md": "#", ".json": "{"}[name]


@pytest.mark.parametrize("name", [".json", ".md"])
def test_trace_ops_writes_a_report_named_by_its_suffix_alone(tmp_path: Path, name: str) -> None:
    """`trace ops T --report .json` was refused: "--report .json: use a .json or .md file name"
    (`Path.suffix`, as lint's `--report .html`). Now written, in that format."""
    make_trace(tmp_path / "t.safetensors", [1.0, 0.9])
    r = _porter(tmp_path, "trace", "ops", "t.safetensors", "--target", "xla", "--report", name)
    assert r.returncode == 0, r.stderr.decode()
    assert (tmp_path / name).read_text(encoding="utf-8")[:1] == {".json": "{", ".md": "#"}[name]


@pytest.mark.parametrize("name", [".html", ".md", ".json"])
def test_parity_checks_report_named_by_its_suffix_alone_is_taken(name: str) -> None:
    """`parity-check --report .html` was refused before the run: "--report .html: use a .json, .md or
    .html file name" (`Path.suffix`). Now taken, as lint's `--report .html`."""
    from porter.verify.config import ParityConfig

    tree = _ROOT / "tests" / "verify" / "models" / "dynamic"
    config = ParityConfig(original=tree, ported=tree, entry="model:make_model", report=Path(name))
    assert config.report == Path(name)
    with pytest.raises(ValueError, match="use a .json, .md or .html file name"):
        ParityConfig(original=tree, ported=tree, entry="model:make_model", report=Path("r.txt"))
