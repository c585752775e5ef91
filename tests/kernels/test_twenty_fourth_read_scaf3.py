"""The twenty-fourth read's leftovers of scaf2 (issue 24, scaf3): each test failed on 7d03fc4."""

from __future__ import annotations

from tests.helpers import port_files
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
    assert f"uses `fwd` (uses `pkg._C` {why})" in dotted.message, dotted.message
    assert dotted.message.count("`pkg._C`") == 2, dotted.message
