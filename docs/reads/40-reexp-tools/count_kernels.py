"""The Triton kernels lint's view recognises (`triton_kernels`, nested, no tree) in the files under
a folder that spell "triton": the same count on `c17e310` and on the branch."""

import sys
from pathlib import Path

import libcst as cst

from porter.analysis.resolve import ImportTable, Resolver, ScopeStack
from porter.codemods.kernels import triton_kernels

n = 0
for p in sorted(Path(sys.argv[1]).rglob("*.py")):
    src = p.read_bytes()
    if b"triton" not in src:
        continue
    m = cst.parse_module(src)
    n += len(triton_kernels(m, Resolver(ImportTable.from_module(m), ScopeStack()), in_blocks=True, nested=True))
print(sys.argv[1], n)
