"""The thirty-fifth read's second-wave leftover helper on the scaffold readers (scaf2, issue 24): each test failed on
16a1dae1. The verdicts are torch 2.9's and the compiler's (`cpp -P` with the macro defined and undefined, libclang
18.1.1): docs/reads/53-scaf2-tools."""

from __future__ import annotations

from porter.analysis import python_ops

from tests.growth import linear_steps


def _loop_of(n: int) -> list[tuple[str, bytes]]:
    """A module registering a CPU kernel for each of `n` names in one loop, under an `if` on the name."""
    items = ", ".join(f'"op{i}"' for i in range(n))
    source = (
        'import torch\nDEF = torch.library.Library("myops", "DEF")\n'
        f'for op in ({items}):\n    if op != "op1":\n        DEF.impl(op, lambda x: x, "CPU")\n'
    )
    return [("m.py", source.encode())]


def test_a_loop_of_many_names_is_read_in_steps_linear_in_them():
    # (16a1dae1: each item read the loop's N values again, to find which library `op` stands for: 0.21 s at 1,000
    # names, 2.34 s at 4,000; counted: x5.0 the bytecodes from 80 to 320 names, x9.0 from 320 to 1,280; now x3.3, x3.8)
    kernels = linear_steps(python_ops.registered_kernels, _loop_of, 1280, limit=6)
    assert len(kernels) == 1279 and ("myops", "op1", "cpu") not in kernels
