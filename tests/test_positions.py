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


# nested blocks of every kind that indents (a `match` indents its cases without a block), an
# `elif` chain (printed alone an `elif` would say `if`), tabs, comments closing a block,
# decorators, and a line that repeats in two functions (its unit is not once in the file: the
# function around it is printed instead)
_UNITS = """\
import torch


@torch.no_grad()
def f(x, kind):
    # moves
    x = x.cuda()
    if kind == 1:
        y = x.cuda()
    elif kind == 2:
        y = x.to("cuda")
        # end of the elif
    elif kind == 3:
        pass
    else:
        y = None
    match kind:
        case 1:
            z = torch.cuda.is_available()
        case _:
            z = torch.device("cuda")
    return y, z


class A:
\tdef g(self, x):
\t\tx = x.cuda()
\t\ttry:
\t\t\treturn x.cuda(), \"\"\"a
string\"\"\"
\t\tfinally:
\t\t\tpass
"""


def _units(path: str, source: str):
    from porter.codemods.apply import _transform
    from porter.config.settings import Settings
    from porter.core.suppressions import scan

    data = source.encode()
    module = cst.parse_module(data)
    _, _, transformer = _transform(module, path, Settings(target="neuron", want_source=False), data, scan(data), data)
    assert transformer is not None
    return module, transformer.units


def _every_node(module: cst.Module) -> list[cst.CSTNode]:
    from porter.codemods import cstwalk

    out, stack = [], [module]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(cstwalk.children(node))
    return out


def test_statement_positions_are_the_whole_modules():
    from porter.analysis.positions import statement_positions

    files = [("units.py", _UNITS)] + [
        (p.name, p.read_text())
        for p in sorted((ROOT / "fixtures" / "projects").glob("*/src/*.py"))[:4]
        + [ROOT / "fixtures/cases/flags_compile.in.py"]
    ]
    for name, source in files:
        module, units = _units(name, source)
        nodes = [n for n in _every_node(module) if id(n) in units.of]
        assert len(nodes) > 50, name
        # each unit prints alone as it stands in the module: at a line start, indented as there
        for unit in {id(u): u for u in units.of.values()}.values():
            text = units.code(module, unit)
            assert "\n" + text in "\n" + module.code, (name, text)
        wanted = {id(n) for n in nodes}
        expected = {key: at for key, at in positions(module, nodes).items() if key in wanted}
        assert statement_positions(module, module.code, nodes, units) == expected, name
        # one node at a time: each unit printed alone (or the one around it, where it repeats)
        for node in nodes[:: max(1, len(nodes) // 60)]:
            assert statement_positions(module, module.code, [node], units) == {id(node): expected[id(node)]}, name


def test_statement_positions_give_up_on_a_statement_that_repeats_whole():
    from porter.analysis.positions import statement_positions

    module, units = _units("twice.py", "import torch\n\nx = torch.ones(1).cuda()\nx = torch.ones(1).cuda()\n")
    call = next(n for n in _every_node(module) if isinstance(n, cst.Call) and id(n) in units.of)
    assert statement_positions(module, module.code, [call], units) is None  # positions() then answers
    assert statement_positions(module, module.code + "#", [call], units) is None  # not the module's code
