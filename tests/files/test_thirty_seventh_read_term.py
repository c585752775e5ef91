"""The thirty-seventh read's term helper: a notebook's escaped command continued by `\\` onto the next line, judged
by what IPython 9.x runs (`IPython.core.inputtransformer2.TransformerManager().transform_cell`: one command,
`get_ipython().system('pip install --index-url    https://download.pytorch.org/whl/cu121 torch')`, and the cell's
Python after it)."""

from __future__ import annotations

import json

import nbformat

from tests.files.conftest import port_file

_IDX = "https://download.pytorch.org/whl/cu121"


def _notebook(source: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    return nbformat.writes(nb)


def test_a_shell_command_continued_onto_the_next_line_is_one_command_not_a_cell_that_does_not_parse():
    """`!pip install --index-url \\` then `  URL torch`, then Python: IPython runs the one command and the Python.
    porter read the continued line as Python: "NB001 the cell does not parse as Python (its IPython lines aside): its
    Python is not ported", the `.cuda()` below left as it was, and the CUDA index never said. Now the continued line
    is part of the command: the index is said (DEP002, at its line; not edited: one line is), the Python ported."""
    source = f"!pip install --index-url \\\n  {_IDX} torch\nimport torch\nx = torch.zeros(2).cuda()\n"
    result = port_file("n.ipynb", _notebook(source), "neuron")
    found = [(f.code, f.message.endswith("(cell 1, line 2)"), f.replacement) for f in result.findings]
    assert "NB001" not in [c for c, _, _ in found], result.findings
    assert [(c, at, r) for c, at, r in found if c == "DEP002"] == [("DEP002", True, None)], result.findings
    new = "".join(json.loads(result.new_source.decode())["cells"][0]["source"])
    assert new == f'!pip install --index-url \\\n  {_IDX} torch\nimport torch\nx = torch.zeros(2).to("neuron")\n'


def test_a_shell_command_on_one_line_is_still_edited_and_python_continuations_stay_python():
    """The control: a one-line `!pip install --index-url URL torch` is still rewritten to the CPU index, and a Python
    line continued by `\\` (no escape before it) is still the cell's Python, ported."""
    source = f"!pip install --index-url {_IDX} torch\nimport torch\nx = torch.zeros(2) + \\\n    torch.ones(2).cuda()\n"
    result = port_file("n.ipynb", _notebook(source), "neuron")
    assert "NB001" not in [f.code for f in result.findings]
    new = "".join(json.loads(result.new_source.decode())["cells"][0]["source"])
    assert new == (
        "!pip install --index-url https://download.pytorch.org/whl/cpu torch\nimport torch\n"
        'x = torch.zeros(2) + \\\n    torch.ones(2).to("neuron")\n'
    )


def test_a_cell_magics_indented_body_is_no_python_that_does_not_parse():
    """`%%bash` with a `for` loop's indented body, `%%writefile` of a function, `%%html`: IPython hands the body to the
    magic whole (`run_cell_magic`) and never reads it as Python. porter masked each body line at its own indent, the
    masks did not parse, and it said "NB001 the cell does not parse as Python (its IPython lines aside)" of each."""
    bodies = [
        "%%bash\nfor i in 1 2; do\n  echo $i\ndone\n",
        "%%writefile train.py\nimport torch\ndef f():\n    return torch.zeros(2)\n",
        "%%html\n<div>\n  <b>x</b>\n</div>\n",
    ]
    for body in bodies:
        result = port_file("n.ipynb", _notebook(body), "neuron")
        assert [f.code for f in result.findings] == [], (body, result.findings)


def test_a_python_cell_magics_indented_body_is_still_python():
    """The control: `%%time`'s body is Python (IPython runs it): an indented `.cuda()` in it is still ported, and a
    body that does not parse is still NB001."""
    new = port_file("n.ipynb", _notebook("%%time\nimport torch\nfor i in range(2):\n    x = torch.zeros(2).cuda()\n"))
    assert "".join(json.loads(new.new_source.decode())["cells"][0]["source"]).endswith(
        '    x = torch.zeros(2).to("neuron")\n'
    )
    bad = port_file("n.ipynb", _notebook("%%time\nimport torch\nfor i in range(2):\nx = torch.zeros(2).cuda()\n"))
    assert [f.code for f in bad.findings] == ["NB001"], bad.findings
