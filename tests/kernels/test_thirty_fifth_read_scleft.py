"""The thirty-fifth read's leftover helper on the registration readers (scleft, issue 24): each test failed on
5a077b66. The verdicts are torch 2.9's (each program registered for real, the op called on a CPU tensor:
NotImplementedError is CUDA-only) and the compiler's (`cpp -P`, libclang): docs/reads/53-scleft-tools."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops
from porter.kernels import inventory

PY_DEF = (
    "import torch\nfrom torch.library import Library\n"
    'DEF = Library("myops", "DEF")\nDEF.define("a(Tensor x) -> Tensor")\nDEF.define("b(Tensor x) -> Tensor")\n'
)
CUDA_BOTH = 'DEF.impl("a", lambda x: x, "CUDA")\nDEF.impl("b", lambda x: x, "CUDA")\n'


def _py_cuda_only(body: str) -> list[str]:
    """The ops of `myops` porter reads as CUDA-only in a module `PY_DEF` + `body`."""
    kernels = python_ops.registered_kernels([("m.py", (PY_DEF + body).encode())])
    return sorted(native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {}))


def test_a_loop_item_an_if_on_the_loop_name_skips_registers_nothing():
    # (torch 2.9: `a` runs on a CPU tensor, `b` raises NotImplementedError, in each)
    skipped = [
        'for op in ("a", "myops::b"):\n    if "::" not in op:\n        DEF.impl(op, lambda x: x + 1, "CPU")\n',
        'for op in ("a", "b"):\n    if op == "b":\n        continue\n    DEF.impl(op, lambda x: x + 1, "CPU")\n',
        'for op in ("a", "b"):\n    if op == "b":\n        pass\n    else:\n        DEF.impl(op, lambda x: x + 1, "CPU")\n',
        'for op in ("a", "b"):\n    if op.startswith("a") or op == "c":\n        DEF.impl(op, lambda x: x + 1, "CPU")\n',
        'for op in ("a", "b"):\n    if op not in ["b"]:\n        DEF.impl(op, lambda x: x + 1, "CPU")\n',
    ]
    assert [_py_cuda_only(CUDA_BOTH + body) for body in skipped] == [["b"]] * len(skipped)
    # (the controls: a test porter cannot decide reads every item, as before; a `continue` of an inner loop skips
    # nothing of the outer one: torch runs both there)
    undecided = (
        'import os\nfor op in ("a", "b"):\n    if os.environ.get(op):\n        DEF.impl(op, lambda x: x, "CPU")\n'
    )
    inner = (
        'for op in ("a", "b"):\n    for k in ("CPU",):\n        if op == "b":\n            continue\n'
        '    DEF.impl(op, lambda x: x + 1, "CPU")\n'
    )
    assert [_py_cuda_only(CUDA_BOTH + undecided), _py_cuda_only(CUDA_BOTH + inner)] == [[], []]


def test_the_library_class_method_through_an_alias_of_torch_library_reads_its_key():
    # (torch 2.9: `a` CUDA-only, `b` runs, in both)
    for imported in ("import torch.library as tl", "from torch import library as tl"):
        body = imported + '\ntl.Library.impl(DEF, "a", lambda x: x, "CUDA")\nDEF.impl("b", lambda x: x, "CPU")\n'
        assert _py_cuda_only(body) == ["a"], imported
    # (the control: a CPU kernel so given is one)
    cpu = 'import torch.library as tl\nDEF.impl("b", lambda x: x, "CUDA")\ntl.Library.impl(DEF, "a", lambda x: x, "CPU")\n'
    assert _py_cuda_only(cpu) == ["b"]


def test_a_python_kernel_of_an_op_porter_cannot_read_is_said_in_the_table(tmp_path):
    # (no op of `myops` is said CUDA-only: `n` may be `a`, which torch 2.9 runs on a CPU tensor; the table said nowhere
    # why. An unread namespace too leaves every one unjudged, as torch 2.9's `_custom_op/impl.py` does to `symm_mem`'s
    # six CUDA-only ops: said there)
    (tmp_path / "a.cu").write_text(
        "#include <torch/library.h>\n__global__ void k(float* x) {}\nTORCH_LIBRARY_IMPL(myops, CUDA, m) {\n"
        '  m.impl("a", &a_cuda);\n}\n'
    )
    (tmp_path / "reg.py").write_text(
        'import torch\nfor n in ("a",):\n    torch.library.impl(f"myops::{n}", "cpu", lambda x: x)\n'
        "def reg(qualname, fn):\n    torch.library.impl(qualname, KEY, fn)\n"
    )
    notes = [p for p in inventory.scan(tmp_path, limit=None).problems if "cannot read" in p]
    assert notes == [
        "reg.py: registers a kernel for `cpu` of an op porter cannot read (a name given at run time): no op of "
        "`myops` is taken for CUDA-only",
        "reg.py: registers a kernel for a key porter cannot read of an op porter cannot read (a name given at run "
        "time): no op of any namespace (its namespace is not read either) is taken for CUDA-only",
    ]


OPS = b"""import torch
DEF = torch.library.Library("myops", "DEF")
DEF.define("a(Tensor x) -> Tensor")
cuda = torch.library.Library("myops", "IMPL", "CUDA")
def reg(lib):
    lib.impl("a", lambda x: x.clone())
reg(cuda)
"""


def test_a_function_named_by_a_module_that_cannot_import_it_keeps_its_parameters_library():
    # (torch 2.9, both modules imported: `a` CUDA-only; other.py's `reg` is its own, and it imports nothing of ops.py)
    other = b'import torch\ndef reg(x):\n    return x\ncpu = torch.library.Library("myops", "IMPL", "CPU")\nreg(cpu)\n'
    kernels = python_ops.registered_kernels([("pkg/ops.py", OPS), ("pkg/other.py", other)])
    assert sorted(native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {})) == ["a"]
    # (the controls: a module importing it, absolutely or relatively, may give it a CPU library: no verdict)
    for imports in (b"from pkg.ops import reg\n", b"from .ops import reg\n", b"from . import ops\nreg = ops.reg\n"):
        kernels = python_ops.registered_kernels([("pkg/ops.py", OPS), ("pkg/other.py", imports + other)])
        assert native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {}) == {}, imports
    # (and where the folder read is itself a package, `from pkg import reg` names no part of `ops`: no verdict)
    init = b"from .ops import *\n"
    kernels = python_ops.registered_kernels(
        [("__init__.py", init), ("ops.py", OPS), ("other.py", b"from pkg import reg\n" + other)]
    )
    assert native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {}) == {}


def test_a_hip_source_with_kernels_is_said_not_read(tmp_path):
    # (`porter kernels` said "0 kernel(s)" and nothing else for a tree of HIP kernels; a `.hip` without one is no note)
    kernel = "#include <hip/hip_runtime.h>\n__global__ void addk(float* x) { x[threadIdx.x] += 1; }\n"
    (tmp_path / "k.hip").write_text(kernel)
    (tmp_path / "k2.hip").write_text(kernel.replace("addk", "subk"))
    (tmp_path / "host.hip").write_text("#include <hip/hip_runtime.h>\nint main() { return 0; }\n")
    notes = [p for p in inventory.scan(tmp_path, limit=None).problems if "HIP" in p]
    assert len(notes) == 1 and notes[0].startswith("k.hip (and 1 more): a HIP (ROCm) source with `__global__` kernels")


def test_a_library_deleted_under_its_alias_too_registers_no_kernel():
    # (torch 2.9: `a` CUDA-only once both names are gone; `keep = lib` / `del lib` alone keeps it, and so does a list)
    lib = 'lib = Library("myops", "IMPL", "CPU")\nlib.impl("a", lambda x: x + 1)\n'
    gone = ["keep = lib\ndel lib\ndel keep\n", "keep = lib\ndel keep\ndel lib\n", "keep = lib\ndel lib\nkeep = None\n"]
    assert [_py_cuda_only(CUDA_BOTH + lib + form) for form in gone] == [["a", "b"]] * len(gone)
    kept = ["keep = lib\ndel lib\n", "keep = lib\ndel keep\n", "keep = lib\ndel lib\nK = [keep]\ndel keep\n"]
    assert [_py_cuda_only(CUDA_BOTH + lib + form) for form in kept] == [["b"]] * len(kept)
