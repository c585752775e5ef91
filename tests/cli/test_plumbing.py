"""The CLI's shared plumbing has one home: a command module imports from `porter.cli.common`
(options, configuration, consoles), `porter.cli.writes` (writing files) and what those two
stand on (`gitstate`: the version-control guard; `interrupt`: signals), never from
another command module, so that no command depends on how another one is written."""

from __future__ import annotations

import ast
from pathlib import Path

import porter.cli

CLI = Path(porter.cli.__file__).parent
PLUMBING = {
    "porter.cli.common",
    "porter.cli.options",
    "porter.cli.writes",
    "porter.cli.gitstate",
    "porter.cli.interrupt",
    "porter.cli.streams",
}


def _cli_imports(path: Path) -> set[str]:
    """The `porter.cli.*` modules `path` imports, at any depth (lazy imports count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "porter.cli":
                found.update(f"porter.cli.{a.name}" for a in node.names)
            elif node.module.startswith("porter.cli."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("porter.cli."))
    return found


def test_command_modules_import_only_the_shared_plumbing():
    borrowed = {}
    for path in sorted(CLI.glob("*.py")):
        module = f"porter.cli.{path.stem}"
        if path.stem == "__init__" or module in PLUMBING:
            continue  # __init__ registers the commands; plumbing may use plumbing
        wrong = _cli_imports(path) - PLUMBING
        if wrong:
            borrowed[module] = sorted(wrong)
    assert not borrowed, f"command modules borrowing from other commands: {borrowed}"


def test_plumbing_imports_no_command_module():
    for module in sorted(PLUMBING):
        path = CLI / f"{module.rsplit('.', 1)[1]}.py"
        assert _cli_imports(path) <= PLUMBING, module


def test_the_scan_sees_a_borrowed_import(tmp_path):
    """The check above can fail: the scan finds both spellings of a borrowed import."""
    src = tmp_path / "cmd.py"
    src.write_text("from porter.cli.lint import effective_config\ndef f():\n    from porter.cli import rewrite\n")
    assert _cli_imports(src) == {"porter.cli.lint", "porter.cli.rewrite"}
