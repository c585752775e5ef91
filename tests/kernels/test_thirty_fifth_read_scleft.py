"""The thirty-fifth read's leftover helper on the registration readers (scleft, issue 24): each test failed on
5a077b66. The verdicts are torch 2.9's (each program registered for real, the op called on a CPU tensor:
NotImplementedError is CUDA-only) and the compiler's (`cpp -P`, libclang): docs/reads/53-scleft-tools."""

from __future__ import annotations

from porter.analysis import native_ops, python_ops

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
