"""The kernels lint's view recognises (no tree) and how many through a re-export, on the branch;
a second argument (comma-separated names) narrows the Triton language evidence."""

import collections
import sys
from pathlib import Path

import libcst as cst

import porter.codemods.kernels as K
from porter.analysis.resolve import ImportTable, Resolver, ScopeStack

if len(sys.argv) > 2:
    K.TRITON_LANGUAGE = frozenset(sys.argv[2].split(","))
c: collections.Counter[str] = collections.Counter()
files = set()
for p in sorted(Path(sys.argv[1]).rglob("*.py")):
    src = p.read_bytes()
    if b"triton" not in src:
        continue
    m = cst.parse_module(src)
    how: dict[str, str] = {}
    c["kernels"] += len(K.triton_kernels(m, Resolver(ImportTable.from_module(m), ScopeStack()), True, True, how=how))
    c["reexported"] += len(how)
    if how:
        files.add(p)
print(dict(c), "files with re-exported kernels:", len(files))
