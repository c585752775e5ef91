"""Names a file imports from another module of the project that are CUDA-only there.

`from .kernels import copy_rows_kernel` brings a Triton launcher into a file that itself
never names Triton: the checks and `custom_op(device_types="cuda")` around it must stay on
CUDA all the same (GUARD001, KERN005). Per run, the modules that name a CUDA-only library
are read with `ast` and their CUDA-only module-level names worked out the way guards.py does
within one file (functions, autograd Functions, classes whose `__init__`/`__call__` is
CUDA-only, assignments, to a fixed point); then each file that imports one of those names
gets it as a fact. The facts travel in `Settings.flow` (kind `cuda-only`, no scope), so the
cache key of the importing file covers them; they are cached with the project index's answers
(runner.project_index). Nothing here imports or runs the code it reads.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from porter.config.settings import Facts
from porter.pipeline.index import dotted, module_name

if TYPE_CHECKING:
    from porter.codemods.guards import CudaOnlyData

# the kind of the `Settings.flow` facts this module makes (guards.py reads them by it)
KIND = "cuda-only"

# bytes that must occur for the analysis (here and in guards.py) to be worth running on a file
TOKENS = (
    b"triton",
    b"helion",
    b"deep_ep",
    b"hybrid_ep",
    b"cupy",
    b"pycuda",
    b"import cuda",
    b"from cuda",
    b"cutlass",
    b"numba",
    b"transformer_engine",
    b"bitsandbytes",
    b"cpp_extension",
    b"get_device_capability",
    b"get_device_properties",
    b"CUDAGraph",
    b"graphed_callables",
    b"cuda.graph",
    b"version.cuda",
    b"ProfilerActivity.CUDA",
)

_ENTRIES = ("__init__", "__call__")


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified name, from every import in the module (as ImportTable does)."""
    names: dict[str, str] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    names.setdefault(head, head)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _scan(node: ast.AST, imports: dict[str, str], data: CudaOnlyData) -> tuple[str | None, set[str]]:
    """Why the code under `node` itself touches a CUDA-only module or API, and the names it uses."""
    why = None
    refs: set[str] = set()
    for sub in ast.walk(node):
        found = None
        if isinstance(sub, ast.Name):
            refs.add(sub.id)
            if why is None and sub.id in imports:
                found = data.why(imports[sub.id])
        elif why is not None:
            continue
        elif isinstance(sub, ast.Attribute):
            name = dotted(sub)
            head, _, rest = (name or "").partition(".")
            if rest and head in imports:
                found = data.why(f"{imports[head]}.{rest}")
        elif isinstance(sub, ast.Import):
            found = next((w for a in sub.names if (w := data.why(a.name))), None)
        elif isinstance(sub, ast.ImportFrom) and not sub.level and sub.module:
            found = data.why(sub.module) or next((w for a in sub.names if (w := data.why(f"{sub.module}.{a.name}"))), None)
        if found:
            why = f"uses {found}"
    return why, refs


def _guards() -> ModuleType:
    """guards.py's data, imported on first use: importing any rule family loads libcst (~1 s
    of a warm run, which reads its facts from the stat index and parses nothing)."""
    from porter.codemods import guards

    return guards


def _statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement, nested ones too, without walking expressions."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        for name in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(stmt, name, ()))
        stack.extend(c.body for c in getattr(stmt, "cases", ()))  # match (3.10+)


def _top_units(body: list[ast.stmt]) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign]:
    """Module-level definitions, also under module-level `if`/`try` (optional imports)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign)):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _top_units(stmt.body)
            yield from _top_units(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from _top_units(block)


def cuda_only_names(source: bytes, data: CudaOnlyData | None = None) -> dict[str, str]:
    """The module's CUDA-only module-level names, each with why."""
    data = data or _guards().cuda_only_data()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    imports = _imports(tree)
    names: dict[str, str] = {}
    units: list[tuple[tuple[str, ...], str | None, set[str]]] = []
    for unit in _top_units(tree.body):
        if isinstance(unit, ast.Assign):
            bound = tuple(t.id for t in unit.targets if isinstance(t, ast.Name))
            node: ast.AST = unit.value
        else:
            bound = (unit.name,)
            node = unit
        if not bound:
            continue
        if isinstance(unit, ast.ClassDef) and not any((dotted(b) or "").split(".")[-1] == "Function" for b in unit.bases):
            # a class is CUDA-only when making or calling one is: its `__init__` or `__call__`
            entries = [m for m in unit.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in _ENTRIES]
            why: str | None = None
            refs: set[str] = set()
            for m in entries:
                w, r = _scan(m, imports, data)
                why, refs = why or w, refs | r
        else:
            why, refs = _scan(node, imports, data)
        units.append((bound, why, refs))
    for local, qual in imports.items():
        why = data.why(qual)
        if why:
            names[local] = f"`{local}`" if why == f"`{local}`" else f"`{local}` from {why}"
    changed = True
    while changed:
        changed = False
        for bound, why, refs in units:
            if all(n in names for n in bound):
                continue
            used = min((r for r in refs if r in names and r not in bound), default=None)
            if why or used:
                for n in bound:
                    names.setdefault(n, f"`{n}` ({why})" if why or used is None else f"`{n}` → {names[used]}")
                changed = True
    return {n: w for n, w in names.items() if n not in imports}


def _target(importer: str, node: ast.ImportFrom) -> str | None:
    """The dotted module an `ImportFrom` names, made absolute against the importer's name."""
    if not node.level:
        return node.module
    package = importer.split(".")
    if len(package) < node.level:
        return None
    base = package[: len(package) - node.level]
    return ".".join([*base, node.module] if node.module else base)


def cuda_only_imports(files: Iterable[tuple[str, bytes]]) -> dict[str, Facts]:
    """path -> ((None, local name, "cuda-only", (why,)), ...) for each file that imports a
    CUDA-only name from another module of the project."""
    files = list(files)
    guards = _guards()
    data = guards.cuda_only_data()
    exported: dict[str, tuple[str, dict[str, str]]] = {}  # module -> (path, name -> why)
    for path, source in files:
        if any(t in source for t in TOKENS):
            found = cuda_only_names(source, data)
            if found:
                exported[module_name(path)] = (path, found)
    if not exported:
        return {}
    # a file is parsed only when it names such a module and one of its CUDA-only names
    probes = [
        (m.rpartition(".")[2].encode(), re.compile(rb"\b(?:%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(ns))))
        for m, (_, ns) in exported.items()
    ]
    out: dict[str, Facts] = {}
    for path, source in files:
        if not any(leaf in source and words.search(source) for leaf, words in probes):
            continue
        me = module_name(path)
        facts: list[tuple[str | None, str, str, tuple[str, ...]]] = []
        for node in _from_imports(source):
            wanted = _target(me, node)
            if not wanted:
                continue
            # paths name modules from where porter was run: either may be the longer name
            matches = [m for m in exported if m == wanted or m.endswith("." + wanted) or wanted.endswith("." + m)]
            if len(matches) != 1 or matches[0] == me:
                continue
            where, names = exported[matches[0]]
            for alias in node.names:
                why = names.get(alias.name)
                if why:
                    facts.append((None, alias.asname or alias.name, KIND, (f"{why}, in {where}",)))
        if facts:
            out[path] = tuple(sorted(set(facts)))
    return out


# `from x import a, b`, `from .x import (a,\n b)`, at any indentation: only these are parsed
_FROM = re.compile(rb"^[ \t]*(from[ \t]+\.*[\w.]*[ \t]+import[ \t]*(?:\([^)]*\)|[^\n#;]*))", re.MULTILINE)


def _from_imports(source: bytes) -> Iterable[ast.ImportFrom]:
    """The file's `from ... import ...` statements, without parsing the rest of it."""
    for match in _FROM.finditer(source):
        try:
            tree = ast.parse(match.group(1))
        except (SyntaxError, ValueError):
            continue
        if tree.body and isinstance(tree.body[0], ast.ImportFrom):
            yield tree.body[0]


def part(source: bytes) -> bytes:
    """What `cuda_only_imports` reads of one file, hashed: the whole of a file that may hold
    CUDA-only code, the `from ... import` lines of the others; empty for a file that imports
    nothing. Editing a body elsewhere changes nothing."""
    if b"import" not in source:
        return b""
    if any(t in source for t in TOKENS):
        return hashlib.sha256(source).digest()
    return hashlib.sha256(b"".join(m.group(1) + b"\0" for m in _FROM.finditer(source))).digest()


def digest(parts: list[tuple[str, bytes]]) -> str:
    """The key of the CUDA-only facts of a project, from each importing file's `part`."""
    h = hashlib.sha256(KIND.encode())
    for name, p in parts:
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + p)
    return h.hexdigest()


def with_cuda_only(facts: dict[str, Facts], files: list[tuple[str, bytes]]) -> dict[str, Facts]:
    """`facts` (the project index's answers per path) plus each file's CUDA-only imports."""
    found = cuda_only_imports(files)
    if not found:
        return facts
    merged = dict(facts)
    for name, extra in found.items():
        merged[name] = (*merged.get(name, ()), *extra)
    return merged
