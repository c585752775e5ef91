"""Notebooks: code cells through the Python codemods as one module, IPython lines through the
shell checks, the file's bytes kept outside the changed cells' `source`."""

from __future__ import annotations

import json

import nbformat

from porter.files.notebooks import layout
from tests.files.conftest import codes, port_file, ported


def _notebook(*cells, **meta) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata.update(meta)
    made = []
    for kind, text in cells:
        cell = nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text)
        made.append(cell)
    nb.cells = made
    nb.cells[-1].outputs = (
        [nbformat.v4.new_output("stream", name="stdout", text="cuda 😀 ü\n")] if made[-1].cell_type == "code" else []
    )
    return nbformat.writes(nb)


NB = _notebook(
    ("markdown", "# Train on `cuda`\n\nprint(x.cuda())"),
    ("code", "!nvidia-smi\n%env CUDA_VISIBLE_DEVICES=0\n%pip install flash-attn"),
    ("code", 'import torch\nimport torch.nn as nn\ndevice = "cuda" if torch.cuda.is_available() else "cpu"  # é'),
    (
        "code",
        "model = nn.Linear(4, 2).cuda()\n%time y = model(torch.ones(1, 4).cuda())\nfor i in range(2):\n    !echo $i\n    print(i)",
    ),
    ("code", "%%bash\nnvidia-smi\necho done"),
    ("code", "torch.cuda.synchronize()\nprint(device)"),
    accelerator="GPU",
)


def _cells(text):
    return json.loads(text)["cells"]


def test_only_the_changed_cells_source_changes():
    new = ported("tutorial.ipynb", NB, "neuron")
    old_nb, new_nb = json.loads(NB), json.loads(new)
    assert new_nb["metadata"] == old_nb["metadata"] and new_nb["nbformat"] == old_nb["nbformat"]
    for old, cell in zip(old_nb["cells"], new_nb["cells"]):
        assert {k: v for k, v in cell.items() if k != "source"} == {k: v for k, v in old.items() if k != "source"}
    sources = ["".join(c["source"]) for c in new_nb["cells"]]
    assert sources[0] == "# Train on `cuda`\n\nprint(x.cuda())"  # markdown is prose
    assert sources[1] == "!neuron-ls\n%env NEURON_RT_VISIBLE_CORES=0\n%pip install flash-attn"
    assert (
        sources[2]
        == 'import torch\nimport torch.nn as nn\ndevice = "neuron" if torch.accelerator.is_available() else "cpu"  # é'
    )
    assert (
        sources[3]
        == 'model = nn.Linear(4, 2).to("neuron")\n%time y = model(torch.ones(1, 4).to("neuron"))\nfor i in range(2):\n    !echo $i\n    print(i)'
    )
    assert sources[4] == "%%bash\nneuron-ls\necho done"
    assert sources[5] == "torch.accelerator.synchronize()\nprint(device)"
    # byte for byte outside the `source` arrays: the file is its old self with those replaced
    spans = [(c.source.start, c.source.end) for c in layout.read(NB).cells]
    new_spans = [(c.source.start, c.source.end) for c in layout.read(new).cells]
    gaps = [NB[a:b] for (_, a), (b, _) in zip([(0, 0), *spans], [*spans, (len(NB), 0)])]
    new_gaps = [new[a:b] for (_, a), (b, _) in zip([(0, 0), *new_spans], [*new_spans, (len(new), 0)])]
    assert gaps == new_gaps
    assert ported("tutorial.ipynb", new, "neuron") == new  # a second run changes nothing


def test_findings_name_the_cell_and_point_at_the_files_line():
    r = port_file("tutorial.ipynb", NB, "neuron")
    lines = NB.splitlines()
    by_code = {}
    for f in r.findings:
        by_code.setdefault(f.code, []).append(f)
    [dev002] = by_code["DEV002"]
    assert dev002.message.endswith("(cell 3, line 3)")
    assert lines[dev002.start.line - 1][dev002.start.column :].startswith('\\"cuda\\"')  # where the file has it
    assert dev002.replacement == '\\"neuron\\"'  # a fix the file can take (a SARIF replacement) is JSON-escaped
    assert {f.message.rsplit("(", 1)[1] for f in by_code["LCH001"]} == {"cell 2, line 1)", "cell 5, line 2)"}
    assert [f.code for f in r.findings if f.code == "NB002"] == ["NB002"]


def test_lint_and_rewrite_report_the_same():
    lint = port_file("tutorial.ipynb", NB, "xla", want_source=False)
    rewrite = port_file("tutorial.ipynb", NB, "xla")
    assert [f.to_dict() for f in lint.findings] == [f.to_dict() for f in rewrite.findings]
    assert lint.status == rewrite.status


def test_imports_go_to_the_cell_of_the_imports():
    new = ported("tutorial.ipynb", NB, "xla")
    sources = ["".join(c["source"]) for c in _cells(new)]
    assert sources[2].startswith("import torch\nimport torch.nn as nn\nimport torch_xla\n")
    assert "torch_xla" not in sources[1]


def test_a_cell_that_is_not_python_is_reported_and_kept():
    nb = _notebook(("code", "import torch\nx = torch.zeros(1).cuda(\n"), ("code", "y = torch.ones(1).cuda()"))
    r = port_file("nb.ipynb", nb, "neuron")
    assert "NB001" in codes(r)
    sources = ["".join(c["source"]) for c in _cells(r.new_source.decode())]
    assert sources == ["import torch\nx = torch.zeros(1).cuda(\n", 'y = torch.ones(1).to("neuron")']


def test_a_cell_is_cut_into_lines_where_python_cuts_it():
    """A cell's lines end where Python's do (LF, CRLF, a lone CR), not where str.splitlines also
    ends one: a U+2028 in a comment or a string made the cell "not Python" (NB001, not ported)
    though a .py file of it ports; a line ending in a form feed came back with a blank line
    after it; a cell whose lines end in a lone CR came back with CRLF ends (adversarial read 12)."""
    cells = [
        "import torch\nx = torch.zeros(3).cuda()  # \u2028 sep\ns = 'a\u2029b\x85c\x1cd'\n",
        "def f():\n\treturn torch.zeros(1).cuda()\x0c\n",
        "y = torch.ones(1).cuda()\rz = 1\r",
    ]
    r = port_file("nb.ipynb", _notebook(*(("code", c) for c in cells)), "neuron")
    assert "NB001" not in codes(r), codes(r)
    sources = ["".join(c["source"]) for c in _cells(r.new_source.decode())]
    assert sources == [c.replace(".cuda()", '.to("neuron")') for c in cells], sources


def test_one_string_sources_and_escaped_files_keep_their_style():
    doc = json.loads(NB)
    for cell in doc["cells"]:
        cell["source"] = "".join(cell["source"])
    escaped = json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
    new = ported("nb.ipynb", escaped, "neuron")
    assert new.isascii() and "\\u00e9" in new  # the file's escaping, kept
    cell = json.loads(new)["cells"][2]
    assert isinstance(cell["source"], str) and '"neuron"' in cell["source"]
    assert json.loads(new)["cells"][0] == doc["cells"][0]


def test_a_notebook_that_is_no_json_is_an_error():
    r = port_file("nb.ipynb", '{"cells": [ {"cell_type": "code", "source": ["x.cuda()"] ', "neuron")
    assert r.status.value == "error" and "not valid JSON" in r.reason


def test_a_notebook_whose_tokens_only_its_decoded_cells_show_is_ported(tmp_path):
    """The prefilter read the file's bytes: a `source` split into one-character strings, or
    JSON's `\\u0063uda` escapes, hid `cuda` from it, and lint passed the notebook in silence."""
    from tests.safety.conftest import porter

    code = "import torch\nx = torch.zeros(1).cuda()\n"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    meta = {"metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    split = json.dumps({"cells": [{**cell, "source": list(code)}], **meta}, indent=1)
    every = "".join(f"\\u{ord(c):04x}" for c in code)  # each character escaped
    escaped = json.dumps({"cells": [{**cell, "source": "@"}], **meta}).replace('"@"', f'"{every}"')
    assert json.loads(escaped)["cells"][0]["source"] == code
    assert "cuda" not in split and "cuda" not in escaped and "torch" not in escaped
    (tmp_path / "split.ipynb").write_text(split)
    (tmp_path / "escaped.ipynb").write_text(escaped)
    out = porter("lint", ".", "--target", "xla", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    text = out.stdout.decode()
    assert out.returncode == 1, text + out.stderr.decode()
    assert "split.ipynb" in text and "escaped.ipynb" in text, text


def test_a_key_the_notebook_repeats_is_read_as_jupyter_reads_it():
    """JSON lets a key repeat; `json.loads` (Jupyter's nbformat, porter's prefilter) keeps its
    last value. porter's notebook reader took the first: `{"cells": [], "cells": [<CUDA>]}` was
    a notebook of no cells, its CUDA code passed in silence (adversarial read 6)."""
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    code = json.dumps({**cell, "source": "import torch\nx = torch.zeros(1).cuda()\n"})
    text = '{"cells": [], "metadata": {}, "cells": [' + code + '], "nbformat": 4, "nbformat_minor": 5}'
    assert json.loads(text)["cells"][0]["source"].startswith("import torch")
    result = port_file("twice.ipynb", text)
    assert codes(result) == ["DEV001"], (result.status, result.reason)
    new = ported("twice.ipynb", text)
    assert json.loads(new)["cells"][0]["source"] == 'import torch\nx = torch.zeros(1).to("neuron")\n'
    assert new.startswith('{"cells": [], "metadata": {}, "cells": [')  # only the cell Jupyter reads is edited


def test_a_repeated_key_in_a_cell_is_read_as_jupyter_reads_it():
    """The same inside a cell: its last `source` and `cell_type` are what Jupyter runs."""
    text = json.dumps(
        {
            "cells": [{"cell_type": "markdown", "metadata": {}, "source": "x"}],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    ).replace(
        '"source": "x"',
        '"source": "x", "cell_type": "code", "outputs": [], "source": "import torch\\ny = torch.ones(1).cuda()\\n"',
    )
    cell = json.loads(text)["cells"][0]
    assert cell["cell_type"] == "code" and "cuda" in cell["source"]
    assert codes(port_file("twice.ipynb", text)) == ["DEV001"]


def test_a_cell_jupyter_could_not_read_makes_the_notebook_unreadable():
    """A cell that is not an object, or whose `source` is not text (a number, an object, a list
    holding one), was passed over in silence: `{"source": {"a": "x.cuda()"}}` linted clean. Jupyter
    refuses such a file; porter says it is not a notebook, as for a file with no list of cells
    (adversarial read 6)."""
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    meta = {"metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    bad = {
        "object": [{**cell, "source": {"a": "import torch\nx.cuda()\n"}}],
        "mixed": [{**cell, "source": ["import torch\n", 5, "x = torch.zeros(1).cuda()\n"]}],
        "a string": ["import torch; x = torch.zeros(1).cuda()"],
    }
    for what, cells in bad.items():
        result = port_file("bad.ipynb", json.dumps({"cells": cells, **meta}))
        assert result.status.value == "error" and "not a notebook" in (result.reason or ""), (what, result.reason)


def test_a_hunk_is_named_by_the_cell_it_changes_whatever_the_lines_hold():
    """The diff is cut at LF; its hunks' cells were found by cutting it again with
    str.splitlines, so a U+2028 in a context line (a raw one in JSON written with
    ensure_ascii=False) shifted the line count and the hunk lost its cell (or named another)."""
    from porter.report.terminal import diff_text

    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["import torch\n"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "outputs": [],
            "metadata": {"note": "a\u2028b\u2028c\u2028d\u2028e"},
            "source": "x = torch.zeros(3).cuda()",
        },
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["y = 1\n"]},
    ]
    before = json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1, ensure_ascii=False
    )
    after = before.replace(".cuda()", '.to(\\"neuron\\")')
    diff = diff_text(before + "\n", after + "\n", "n.ipynb")
    assert [line for line in diff.split("\n") if line.startswith("@@")] == ["@@ -16,7 +16,7 @@ cell 2"]


def test_a_line_the_port_did_not_change_keeps_its_item_of_the_source_array():
    """The ported cell was cut into source items with str.splitlines, so a line porter did not
    touch that holds a U+2028 or a form feed came back cut into three items (a diff of lines
    no one changed). A notebook Jupyter wrote (its items cut where str.splitlines cuts) keeps
    its items too."""
    for items in (["import torch\n", "# a\u2028b\x0cc\n"], ["import torch\n", "# a\u2028", "b\x0c", "c\n"]):
        doc = json.loads(_notebook(("code", "")))
        doc["cells"][0]["source"] = [*items, "x = torch.zeros(3).cuda()\n", "y = 2"]
        new = json.loads(ported("nb.ipynb", json.dumps(doc, indent=1) + "\n", "neuron"))
        assert new["cells"][0]["source"] == [*items, 'x = torch.zeros(3).to("neuron")\n', "y = 2"]
