"""porter's cheap positions equal libcst's PositionProvider for the nodes it asks about."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.analysis.positions import positions

ROOT = Path(__file__).resolve().parent.parent


def _assert_same_positions(module: cst.Module, expected, nodes: list[cst.CSTNode], label: object) -> None:
    """porter's positions of `nodes` are PositionProvider's (`expected`), line and column."""
    ours = positions(module, nodes)
    for node in nodes:
        rng, (start, end) = expected[node], ours[id(node)]
        assert (start.line, start.column, end.line, end.column) == (
            rng.start.line,
            rng.start.column,
            rng.end.line,
            rng.end.column,
        ), (label, type(node).__name__)


def test_positions_match_provider_on_every_node_of_real_files():
    files = sorted((ROOT / "fixtures" / "projects").glob("*/src/*.py"))[:4] + [
        ROOT / "fixtures/cases/flags_compile.in.py"
    ]
    assert files
    for path in files:
        module = cst.parse_module(
            path.read_bytes().replace(b"\n", b"\r\n") if path.name == "model.py" else path.read_bytes()
        )
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        expected = wrapper.resolve(PositionProvider)
        nodes = [n for n in expected if not isinstance(n, (cst.Module,))]
        _assert_same_positions(module, expected, nodes, path.name)


def test_positions_match_provider_where_lines_end_in_a_lone_cr():
    # a CR-only file (Python reads a lone CR as a line end) had every finding on line 1, at
    # a column counted from the file's start; baselines then hashed the first line's text
    source = (ROOT / "fixtures/cases/flags_compile.in.py").read_bytes().replace(b"\n", b"\r")
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    kinds = (cst.Call, cst.Attribute, cst.Name, cst.SimpleString, cst.SimpleStatementLine, cst.FunctionDef, cst.If)
    nodes = [n for n in expected if isinstance(n, kinds)]
    _assert_same_positions(module, expected, nodes, "flags_compile.in.py, CR-only")


def test_positions_of_every_node_of_a_module_without_a_final_line_break():
    # the last line's newline node ends past the tokens libcst keeps for such a module (a
    # CR-only file is one to libcst): positions() raised IndexError asked about it
    for source in (
        "import torch\rx = torch.randn(3).cuda()\r\rdef f(a):\r    return a.cuda()\r",
        "x = 1\ny = f(x)  # c",
    ):
        module = cst.parse_module(source)
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [n for n in expected if not isinstance(n, cst.Module)]
        _assert_same_positions(module, expected, nodes, source)
