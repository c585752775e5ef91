"""The twenty-fourth read's leftovers of scaf2 (issue 24, scaf3): each test failed on 7d03fc4."""

from __future__ import annotations

from tests.helpers import port_files
from tests.kernels.test_twenty_fourth_read_kidx import KERNEL, _kern002, _tree
from tests.kernels.test_twenty_fourth_read_scaf2 import USE, project  # noqa: F401 (a fixture)


def test_a_dotted_extension_import_names_the_extension_once(project):  # noqa: F811
    # `import pkg._C`: the project's why of the dotted name already named it (`pkg._C` (`pkg._C`: ...)),
    # and the data named it again around that: "uses `pkg._C` (`pkg._C` (`pkg._C`: a CUDA extension"
    (project / "pkg" / "dotted.py").write_text(USE.format(imp="import pkg._C", ext="pkg._C"))
    ported = port_files(project, "xla")
    (control,) = ported["pkg/control.py"][1]
    (dotted,) = ported["pkg/dotted.py"][1]
    why = "(`pkg._C`: a CUDA extension built by `CUDAExtension` in setup.py:3 from pkg/csrc/k.cu)"
    assert why in control.message  # the control: `from pkg import _C`, "uses `fwd` → `_C` (`pkg._C`: ...)"
    # (the from-import's form since the twenty-fifth read, scaf2: was "uses `fwd` (uses `pkg._C` ...)")
    assert f"uses `fwd` → `pkg._C` {why}" in dotted.message, dotted.message
    assert dotted.message.count("`pkg._C`") == 2, dotted.message


def test_a_launch_written_with_a_space_before_its_grid_is_reported(tmp_path):
    # `ops.scale [(1,)](...)` in a file that spells no token of Triton: the prefilter looked for
    # `ops.scale[` only, and the file was not read (the control: the same launch without the space;
    # a comment's `ops.scale [grid]` is admitted and has no launch)
    root = tmp_path / "p"
    use = "import torch\nfrom pkg import ops\n\n\ndef run(x: torch.Tensor) -> None:\n    ops.scale{gap}[(1,)](x, 1)\n"
    files = {f"pkg/use{i}.py": use.format(gap=gap) for i, gap in enumerate(("", " ", "  \t", " \\\n        "))}
    comment = "from pkg import ops\n\n\ndef run(x):\n    return ops.scale  # ops.scale [grid]\n"
    _tree(root, {"pkg/__init__.py": "", "pkg/ops.py": KERNEL, "pkg/comment.py": comment, **files})
    said = _kern002(root)
    assert {name: [line for line, _ in said.get(name, [])] for name in files} == dict.fromkeys(files, [6])
    assert "pkg/comment.py" not in said
