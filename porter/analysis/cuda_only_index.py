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
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Literal, overload

from porter.config.cuda_packages import cuda_only_aten_ops, cuda_only_modules
from porter.config.settings import Facts
from porter.core.reading import NextOf
from porter.analysis import device_backends, extensions, native_ops, python_ops
from porter.analysis.kinds import CudaOnlyKind, CudaOnlyTag
from porter.analysis.program import dotted, module_name
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from porter.config.ruledata import load_toml


# Gluon's (`triton.experimental.gluon.jit`, Triton's lower-level kernels: vllm 0.34.0 has 36) too:
# lint reported them on a re-export's body evidence only, `porter kernels` listed none, and a direct
# import was said to be "reported where they are defined", unreported (twenty-second read's leftover)
TRITON_DECORATORS = {
    "triton.jit",
    "triton.autotune",
    "triton.heuristics",
    "triton.runtime.jit.jit",
    "triton.experimental.gluon.jit",
    "triton.experimental.gluon._runtime.jit",
}
# bytes that must occur for the analysis (here and in guards.py) to be worth running on a file:
# torch's own CUDA-only parts (and Triton, which is also named in torch's APIs) ...
TOKENS = (
    b"triton",
    b"cpp_extension",
    b"get_device_capability",
    b"get_device_properties",
    b"CUDAGraph",
    b"graphed_callables",
    b"cuda.graph",
    b"version.cuda",
    b"ProfilerActivity.CUDA",
    b"cuda.nccl",
    b"cudagraph_trees",
    b"numa.binding",
    b"_symmetric_memory",
    b"CudaExtension",  # a registry of CUDA extensions (_cuda_registry)
    b"MemPool",
    b"use_mem_pool",
    b"PluggableAllocator",
    b"rebuild_cuda_tensor",
)
# ... or an import of a CUDA-only package (porter.config.cuda_packages), read from the import
# lines in one pass: a substring scan per package name cost more, and took `import flash_attn`
# for `import fla`
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+(\w+)|import[ \t]+([\w., \t]+))", re.MULTILINE)


# The rule data behind the scans below (packages.json, documented.toml, aten_ops.json) and the
# patterns built from them are read on first use, not at import: a warm run imports this module
# (`digest`, `merged`) and reads no file, and the reads and compiles were 6.5 of its 7.7 ms.
@cache
def packages() -> frozenset[bytes]:
    """The top-level import names of the packages that are CUDA-only on some target."""
    return frozenset(m.split(".")[0].encode() for m in cuda_only_modules(None))


# ... or a call of one of torch's aten ops that has only a CUDA kernel (no CPU or Composite one:
# rules/cuda_only/aten_ops.json), `torch.ops.aten._weight_int4pack_mm` or `torch._cslt_compress`
@cache
def _op_patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(`aten.op`, `torch.op`): the CUDA-only aten ops' names, longest first."""
    ops = sorted(cuda_only_aten_ops(None), key=len, reverse=True)
    aten = b"|".join(re.escape(q.rpartition(".")[2].encode()) for q in ops if ".aten." in q)
    torch = b"|".join(re.escape(q[len("torch.") :].encode()) for q in ops if ".aten." not in q)
    return re.compile(rb"aten\.(?:" + aten + rb")\b"), re.compile(rb"torch\.(?:" + torch + rb")\b")


def calls_op(source: bytes) -> bool:
    """Whether `source` names one of torch's CUDA-only aten ops."""
    aten, torch = _op_patterns()
    return (b"aten." in source and aten.search(source) is not None) or torch.search(source) is not None


# ... or a quoted name of one (`_is_package_available("smdistributed")`): the module may define a
# predicate of its availability (availability_predicates)
@cache
def _package_string() -> re.Pattern[bytes]:
    names = b"|".join(re.escape(p) for p in sorted(packages(), key=len, reverse=True))
    return re.compile(rb"""["'](?:%s)["']""" % names)


# of those, the ones that only ask about the device: a file with none of the others runs no CUDA-only code
_ASK_TOKENS = (b"get_device_capability", b"get_device_properties", b"version.cuda", b"ProfilerActivity.CUDA")
RUN_TOKENS = tuple(t for t in TOKENS if t not in _ASK_TOKENS)


@dataclass(frozen=True)
class CudaOnlyData:
    modules: tuple[str, ...]
    apis: tuple[str, ...]
    builders: frozenset[str]
    asks: tuple[str, ...] = ()  # of those, the ones that only ask about the device
    ops: dict[str, str] = field(default_factory=dict)  # torch's CUDA-only aten ops, as spelled in Python -> why
    # one file's: the project's CUDA-only code it reaches by a dotted name (`torch.ops._C.op`, the
    # project's compiled op; `vllm._custom_ops.op` through `import vllm._custom_ops as ops`) -> why
    project: dict[str, str] = field(default_factory=dict)

    def with_project(self, found: dict[str, str]) -> CudaOnlyData:
        """These data, with the project's CUDA-only dotted names one file reaches (each runs it)."""
        return replace(self, project={**self.project, **found}) if found else self

    def without(self, own: frozenset[str]) -> CudaOnlyData:
        """These data but the packages under `own`'s names: a file whose `import cuda` finds the
        project's own `cuda.py` does not import cuda-python (porter.pipeline.runner's facts)."""
        if not own:
            return self
        modules = tuple(m for m in self.modules if m.split(".")[0] not in own)
        return replace(self, modules=modules, apis=tuple(a for a in self.apis if a.split(".")[0] not in own))

    def runs(self, qual: str | None) -> bool:
        """Whether using `qual` runs CUDA-only code (a kernel, a CUDA graph), not only asks
        about the device (a capability query): the user of such a name only runs on CUDA."""
        if not qual or self.why(qual) is None:
            return False
        return not any(qual == a or qual.startswith(a + ".") for a in self.asks)

    def _project_why(self, qual: str) -> str | None:
        parts = qual.split(".")
        for end in range(len(parts), 1, -1):
            if (name := ".".join(parts[:end])) in self.project:
                why = self.project[name]
                # a dotted extension import's why already names it (`pkg._C` (`pkg._C`: ...)): once
                return why if why.startswith(f"`{name}` (") else f"`{name}` ({why})"
        return None

    def why(self, qual: str | None) -> str | None:
        """Why the qualified name `qual` is CUDA-only, or None."""
        if not qual:
            return None
        if self.project and (found := self._project_why(qual)):
            return found
        if qual.startswith("torch.") and self.ops:
            parts = qual.split(".")  # `torch.ops.aten.op`, `torch.ops.aten.op.default`, `torch.op`
            for end in (2, 4, 5):
                if (name := ".".join(parts[:end])) in self.ops:
                    return f"`{name}` ({self.ops[name]})"
        for api in self.apis:
            if qual == api or qual.startswith(api + "."):
                return f"`{api}`"
        for mod in self.modules:
            if qual == mod or qual.startswith(mod + "."):
                return f"`{mod}`"
        return None


@lru_cache(maxsize=4)
def cuda_only_data(target: str | None = None) -> CudaOnlyData:
    """torch's CUDA-only modules and APIs (`[cuda_only]` in rules/guards.toml) and the
    third-party packages that are CUDA-only on `target` (porter.config.cuda_packages; None:
    on every target)."""
    table = load_toml("guards.toml").get("cuda_only", {})
    return CudaOnlyData(
        modules=(*table.get("modules", ()), *cuda_only_modules(target)),
        apis=tuple(table.get("apis", ())),
        builders=frozenset(table.get("extension_builders", ())),
        asks=tuple(table.get("asks", ())),
        ops=cuda_only_aten_ops(target),
    )


def imports_any(source: bytes, heads: frozenset[bytes]) -> bool:
    """Whether the file imports a module whose top-level name is one of `heads` (at any
    level: a lazy import in a function counts), read from its import lines alone."""
    for m in _IMPORT_LINE.finditer(source):
        if m.group(1) is not None:
            if m.group(1) in heads:
                return True
            continue
        for part in m.group(2).split(b","):
            if part.strip().split(b".")[0].split(b" ")[0] in heads:
                return True
    return False


def imports_package(source: bytes) -> bool:
    """Whether the file imports a CUDA-only package."""
    return imports_any(source, packages())


def has_token(source: bytes) -> bool:
    """Whether the analysis is worth running on `source`: it names torch's CUDA-only parts or
    imports a CUDA-only package."""
    return any(t in source for t in TOKENS) or imports_package(source) or calls_op(source)


def runs_token(source: bytes) -> bool:
    """Whether `source` may run CUDA-only code (not only ask about the device)."""
    return any(t in source for t in RUN_TOKENS) or imports_package(source) or calls_op(source)


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
            found = data.why(sub.module) or next(
                (w for a in sub.names if (w := data.why(f"{sub.module}.{a.name}"))), None
            )
        if found:
            why = f"uses {found}"
    return why, refs


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
    return _cuda_only_names(source, data or cuda_only_data())[0]


def names_package(source: bytes) -> bool:
    """Whether `source` quotes the name of a CUDA-only package (it may define a predicate of it)."""
    return b"return" in source and _package_string().search(source) is not None


def availability_predicates(source: bytes, data: CudaOnlyData | None = None) -> dict[str, str]:
    """The module-level functions whose truth means a CUDA-only package is installed, each with
    why: every `return` is False (or None) or asks whether such a package is there by its name
    (transformers' `is_sagemaker_dp_enabled`: `return _is_package_available("smdistributed")[0]`).
    The branch behind `if is_sagemaker_dp_enabled():` runs only where that package is, on CUDA."""
    if not names_package(source):
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    data = data or cuda_only_data()
    out: dict[str, str] = {}
    for unit in _top_units(tree.body):
        if not isinstance(unit, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        package = None
        for ret in _own_returns(unit.body):
            value = ret.value
            if value is None or (isinstance(value, ast.Constant) and value.value in (False, None)):
                continue
            package = _package_asked(value, data)
            if package is None:
                break
        else:
            if package is not None:
                out[unit.name] = f"`{unit.name}()` is true only where {package} is installed"
    return out


def _own_returns(body: list[ast.stmt]) -> Iterable[ast.Return]:
    """The `return` statements of a function body, not of functions defined in it."""
    for stmt in _statements(body):
        if isinstance(stmt, ast.Return):
            yield stmt


def _package_asked(node: ast.expr, data: CudaOnlyData) -> str | None:
    """The CUDA-only package whose name `node` passes to a call (`find_spec("smdistributed")`,
    `_is_package_available("smdistributed")[0]`), if any."""
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and sub.args
            and isinstance(sub.args[0], ast.Constant)
            and isinstance(sub.args[0].value, str)
            and (why := data.why(sub.args[0].value))
        ):
            return f"{why} (CUDA-only)"
    return None


def _cuda_only_names(
    source: bytes, data: CudaOnlyData, known: dict[str, str] | None = None
) -> tuple[dict[str, str], set[str], dict[str, str]]:
    """The module's CUDA-only module-level names, each with why, those of them whose use
    runs CUDA-only code (as guards.CudaOnly.running), and what some of them are (`_triton_what`).
    `known`: names the module imports that are CUDA-only and run it (the project's compiled
    CUDA extensions), with why."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, set(), {}
    imports = _imports(tree)
    units = [u for unit in _top_units(tree.body) if (u := _unit(unit, imports, data)) is not None]
    names: dict[str, str] = {}
    for local, qual in imports.items():
        why = data.why(qual)
        if why:
            names[local] = f"`{local}`" if why == f"`{local}`" else f"`{local}` from {why}"
    for local, why in (known or {}).items():
        names[local] = f"`{local}` ({why})"
        imports.setdefault(local, local)  # an import: exported by this module only through its users
    _spread(names, units)
    running = _running(tree, imports, data, set(known or ()))
    # a name the module imports from a CUDA-only package is CUDA-only where it is imported
    # again from this module (a shim: `from ._triton import triton, tl`)
    shims = {n for n in imports if n in names and data.why(imports[n])}
    exported = {n: w for n, w in names.items() if n not in imports or n in shims}
    # (what a name is needs an import of Triton in the file: no import spells it, no scan of units)
    what = _triton_what(tree, imports, shims) if b"triton" in source else {}
    return exported, running - (set(imports) - shims), what


def _triton_what(tree: ast.Module, imports: dict[str, str], shims: set[str]) -> dict[str, str]:
    """Of the module's exported names, what lint's KERN002 needs to know in the files importing
    them (the `CudaOnlyTag` chain part): a shim's name bound to Triton (`binds:triton`), and a
    Triton kernel the module defines (`kernel`). Read from the parse the names came from."""
    out = {n: f"{CudaOnlyTag.BINDS.value}:{imports[n]}" for n in shims if imports[n].split(".")[0] == "triton"}
    for unit in _top_units(tree.body):
        if isinstance(unit, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _qualified(d.func if isinstance(d, ast.Call) else d, imports) in TRITON_DECORATORS
            for d in unit.decorator_list
        ):
            out[unit.name] = CudaOnlyTag.KERNEL.value
    return out


def _qualified(node: ast.expr, imports: dict[str, str]) -> str:
    """`node`'s dotted name with its head qualified through the module's imports ("" if none)."""
    head, _, rest = (dotted(node) or "").partition(".")
    return ".".join(filter(None, (imports.get(head), rest))) if head in imports else ""


_Unit = tuple[tuple[str, ...], str | None, set[str]]  # names a statement binds, why it is CUDA-only, names it uses


def _unit(
    unit: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign,
    imports: dict[str, str],
    data: CudaOnlyData,
) -> _Unit | None:
    """What a module-level statement binds, why it is CUDA-only itself (None: not), and the
    names it uses; None where it binds no plain name."""
    if isinstance(unit, ast.Assign):
        bound = tuple(t.id for t in unit.targets if isinstance(t, ast.Name))
        node: ast.AST = unit.value
    else:
        bound = (unit.name,)
        node = unit
    if not bound:
        return None
    if isinstance(unit, ast.ClassDef) and not any((dotted(b) or "").split(".")[-1] == "Function" for b in unit.bases):
        # a class is CUDA-only when making or calling one is: its `__init__` or `__call__`
        entries = [
            m for m in unit.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in _ENTRIES
        ]
        why: str | None = _cuda_registry(unit)
        refs: set[str] = set()
        for m in entries:
            w, r = _scan(m, imports, data)
            why, refs = why or w, refs | r
        return bound, why, refs
    why, refs = _scan(node, imports, data)
    return bound, why, refs


def _spread(names: dict[str, str], units: list[_Unit]) -> None:
    """Adds to `names` (CUDA-only name -> why) each statement's names that are CUDA-only
    themselves or use one, to a fixed point."""
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


def _cuda_registry(cls: ast.ClassDef) -> str | None:
    """Why a class is a loader of CUDA extensions alone, or None: its body lists the classes
    it chooses from (`REGISTRY = [FusedOptimizerCudaExtension]`, ColossalAI's kernel loaders),
    and each is named a CUDA extension. Loading one builds or loads CUDA kernels, whatever
    device the host has (a loader that lists a CPU or NPU extension beside it is not this)."""
    for stmt in cls.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, (ast.List, ast.Tuple))
            and stmt.value.elts
            and all(isinstance(e, ast.Name) and _cuda_extension_name(e.id) for e in stmt.value.elts)
        ):
            listed = ", ".join(f"`{e.id}`" for e in stmt.value.elts)  # type: ignore[attr-defined]
            return f"its registry lists only CUDA extensions: {listed}"
    return None


# a class named a CUDA extension: `FusedOptimizerCudaExtension`, `CUDAOpBuilder`
def _cuda_extension_name(name: str) -> bool:
    """Whether `name` ends `Cuda` or `CUDA`, words `[A-Z][a-z]+`, then `Extension` or `Builder`
    (`FusedOptimizerCudaExtension`), read once from its end: the pattern
    `(?:Cuda|CUDA)(?:[A-Z][a-z]+)*(?:Extension|Builder)$` tried every `Cuda` of the name to its
    end (an 80 KB name: 16 s)."""
    for suffix in ("Extension", "Builder"):
        if not name.endswith(suffix):
            continue
        rest = name[: -len(suffix)]
        at = len(rest)  # each place where the words `[A-Z][a-z]+` before the suffix begin
        while at >= 4:
            if rest[at - 4 : at] in ("Cuda", "CUDA"):
                return True
            start = at
            while start > 0 and "a" <= rest[start - 1] <= "z":
                start -= 1
            if start == at or start == 0 or not "A" <= rest[start - 1] <= "Z":
                break
            at = start - 1
    return False


# code in a function that may not run on each of its runs (guards._CONDITIONAL)
_CONDITIONAL = (
    ast.If,
    ast.Try,
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _each_run(body: list[ast.stmt] | list[ast.AST]) -> Iterable[ast.AST]:
    """The nodes of a function body that run on each of its runs (no annotations)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _CONDITIONAL) or (hasattr(ast, "Match") and isinstance(node, ast.Match)):
            continue
        yield node
        if isinstance(node, ast.AnnAssign):
            stack.extend(n for n in (node.target, node.value) if n is not None)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _callees(call: ast.Call) -> list[ast.expr]:
    """The chain a call calls: `k[grid](x)` -> k[grid], k; `self.graph.replay()` -> ..., self.graph, self."""
    out: list[ast.expr] = []
    func: ast.expr = call.func
    while True:
        out.append(func)
        if isinstance(func, (ast.Attribute, ast.Subscript)):
            func = func.value
        elif isinstance(func, ast.Call):
            func = func.func
        else:
            return out


def _before_exit(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a function body up to the first that may leave it early (guards._Scan:
    a call after `if ...: return` may not run)."""
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.If, ast.Try, ast.For, ast.While)) and any(_another_path(n) for n in ast.walk(stmt)):
            break
    return out


def _another_path(node: ast.AST) -> bool:
    """A `return` that computes something (guards._Exit): `return fallback(x)`, not `return out`."""
    return (
        isinstance(node, ast.Return)
        and node.value is not None
        and not isinstance(node.value, (ast.Name, ast.Attribute, ast.Constant, ast.Tuple))
    )


def _runs_qual(node: ast.AST, imports: dict[str, str], data: CudaOnlyData) -> str | None:
    """The CUDA-only module or API that `node` runs (not only asks about), if any."""
    qual = None
    if isinstance(node, ast.Name) and node.id in imports:
        qual = imports[node.id]
    elif isinstance(node, ast.Attribute):
        head, _, rest = (dotted(node) or "").partition(".")
        qual = f"{imports[head]}.{rest}" if rest and head in imports else None
    elif isinstance(node, ast.Import):
        qual = next((a.name for a in node.names if data.runs(a.name)), None)
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
        qual = (
            node.module
            if data.runs(node.module)
            else next((q for a in node.names if data.runs(q := f"{node.module}.{a.name}")), None)
        )
    return qual if data.runs(qual) else None


def _checks_device(fn: ast.AST, imports: dict[str, str], data: CudaOnlyData | None = None) -> bool:
    """Whether a function asks which device it is on, or catches errors (guards._DeviceChecks)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Try) and not all(
            (h.body and isinstance(h.body[-1], ast.Raise))
            or (data is not None and any(_runs_qual(n, imports, data) for n in ast.walk(h)))
            for h in node.handlers
        ):
            # (a handler that only raises again, or `try/finally`, is no other path; nor is one
            # that runs CUDA-only code itself: `nvsmi(...)` else `import pynvml`, NVIDIA's either way)
            return True
        if isinstance(node, ast.Attribute) and node.attr == "is_cuda":
            return True
        if isinstance(node, ast.Call):
            head, _, rest = (dotted(node.func) or "").partition(".")
            if f"{imports.get(head, head)}.{rest}".strip(".") == "torch.cuda.is_available":
                return True
        if isinstance(node, ast.Compare):
            if any(
                isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.split(":")[0] == "cuda"
                for c in (node.left, *node.comparators)
            ):
                return True
    return False


def _running(tree: ast.Module, imports: dict[str, str], data: CudaOnlyData, known: set[str] = frozenset()) -> set[str]:  # type: ignore[assignment]
    """The module-level names whose use runs CUDA-only code on each run: as
    guards.CudaOnly._runs, to a fixed point (what the other files' checks read)."""
    return _Running(tree, imports, data, known).names()


class _Running:
    """`_running`'s state: the module's functions, which of them check the device, and the
    names found so far whose use runs CUDA-only code."""

    def __init__(self, tree: ast.Module, imports: dict[str, str], data: CudaOnlyData, known: set[str]) -> None:
        self.tree, self.imports, self.data = tree, imports, data
        self.running = {local for local, qual in imports.items() if data.runs(qual)} | set(known)
        self.functions = {
            u.name: u for u in _top_units(tree.body) if isinstance(u, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.checks: dict[str, bool] = {}

    def names(self) -> set[str]:
        changed = True
        while changed:
            changed = False
            for unit in _top_units(self.tree.body):
                if isinstance(unit, ast.Assign):
                    bound, runs = [t.id for t in unit.targets if isinstance(t, ast.Name)], self.assign_runs(unit)
                elif isinstance(unit, ast.ClassDef):
                    bound, runs = [unit.name], self.class_runs(unit)
                else:
                    bound, runs = [unit.name], self.function_runs(unit, set())
                if runs and not all(n in self.running for n in bound):
                    self.running.update(bound)
                    changed = True
        return self.running

    def checker(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the module's function `name`, or one it calls, checks the device."""
        if name not in self.checks:
            fn = self.functions[name]
            calls = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} & set(self.functions) - seen - {name}
            self.checks[name] = _checks_device(fn, self.imports, self.data) or any(
                self.checker(c, seen | {name}) for c in calls
            )
        return self.checks[name]

    def assign_runs(self, unit: ast.Assign) -> bool:
        called = {
            c.id
            for n in ast.walk(unit.value)
            if isinstance(n, ast.Call)
            for c in _callees(n)
            if isinstance(c, ast.Name)
        }
        if isinstance(unit.value, ast.Name):
            called.add(unit.value.id)  # an alias runs what it names
        return bool(called & self.running) or any(_runs_qual(n, self.imports, self.data) for n in ast.walk(unit.value))

    def function_runs(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, attrs: set[str]) -> bool:
        calls = {
            c.id
            for n in _each_run(_before_exit(fn.body))
            if isinstance(n, ast.Call)
            for c in _callees(n)
            if isinstance(c, ast.Name)
        }
        if not (calls & self.running) - {fn.name} and not self.runs_itself(fn, attrs):
            return False
        return not _checks_device(fn, self.imports, self.data) and not any(
            self.checker(n.id)
            for n in ast.walk(fn)
            if isinstance(n, ast.Name) and n.id in self.functions and n.id != fn.name
        )

    def runs_itself(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, attrs: set[str]) -> bool:
        """Whether `fn` runs CUDA-only code of a library (`@triton.jit` makes a kernel) or
        calls one of `attrs`, the attributes of `self` that hold such code."""
        for node in _each_run([*fn.decorator_list, *fn.body]):
            if _runs_qual(node, self.imports, self.data):
                return True
            if isinstance(node, ast.Call) and any(
                isinstance(c, ast.Attribute)
                and isinstance(c.value, ast.Name)
                and c.value.id == "self"
                and c.attr in attrs
                for c in _callees(node)
            ):
                return True
        return False

    def class_runs(self, cls: ast.ClassDef) -> bool:
        autograd = any((dotted(b) or "").split(".")[-1] == "Function" for b in cls.bases)
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        attrs = {
            t.attr
            for m in methods
            for a in ast.walk(m)
            if isinstance(a, ast.Assign) and any(_runs_qual(v, self.imports, self.data) for v in ast.walk(a.value))
            for t in a.targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
        }
        entries = ("forward",) if autograd else _ENTRIES
        return _cuda_registry(cls) is not None or any(
            self.function_runs(m, attrs) for m in methods if m.name in entries
        )


def _target(importer: str, node: ast.ImportFrom, package_init: bool = False) -> str | None:
    """The dotted module an `ImportFrom` names, made absolute against the importer's name
    (a package's `__init__.py` is named as the package: `.` is the package itself there)."""
    if not node.level:
        return node.module
    package = importer.split(".") + ([""] if package_init else [])
    if len(package) < node.level:
        return None
    base = package[: len(package) - node.level]
    return ".".join([*base, node.module] if node.module else base)


def extension_imports(
    files: list[tuple[str, bytes]], cuda_sources: Iterable[str] = ()
) -> dict[str, dict[str, tuple[str, str]]]:
    """path -> {local name: (module, why)} for each file that imports one of the project's own compiled
    CUDA extensions (porter.analysis.extensions): one a build file declares, or, in a project
    with `.cu` sources, a compiled-looking module no Python file of the project provides."""
    cu = sorted(c for c in cuda_sources if c.endswith(extensions.CUDA_SUFFIXES))
    built: dict[str, str] = {}
    for path, source in files:
        built.update(extensions.built_extensions(path, source))
    if not built and not cu:
        return {}
    found_in = _Extensions(built, cu, {module_name(p) for p, _ in files})
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for path, source in files:
        found = found_in.loaded(source)
        if extensions.hints_import(source) or found_in.may_name(source):
            found_in.imported(path, source, found)
        if found:
            out[path] = found
    return out


class _Extensions:
    """The project's compiled CUDA extensions (`built`: module -> why; `cu`: its CUDA sources),
    as `extension_imports` finds them in one file."""

    def __init__(self, built: dict[str, str], cu: list[str], project: set[str]) -> None:
        self.built, self.cu, self.project = built, cu, project
        self.shown = f"{', '.join(cu[:2])}{' ...' if len(cu) > 2 else ''}"
        # the built extensions' last names that `hints_import` does not take for compiled (flash-attn's
        # `import dropout_layer_norm` was not read, twenty-fourth read)
        lasts = {m.rpartition(".")[2] for m in built}
        self.last_names = sorted(n.encode() for n in lasts if not extensions.COMPILED_NAME.match(n))

    def may_name(self, source: bytes) -> bool:
        """Whether `source` holds a built extension's last name (a text check, before `imported` parses)."""
        return any(name in source for name in self.last_names)

    def loaded(self, source: bytes) -> dict[str, tuple[str, str]]:
        """local name -> (module, why) for each extension the file loads by name (`load('op')`)."""
        found: dict[str, tuple[str, str]] = {}
        for local, loader, named in extensions.loaded_extensions(source):
            match = next((m for m in self.built if m == named or m.endswith("." + named)), None)
            if match is not None:
                found[local] = (match, f"`{loader}('{named}')` loads {match}: {self.built[match]}")
            elif self.cu and "load" in loader.rpartition(".")[2].lower():
                found[local] = (
                    named,
                    f"`{loader}('{named}')` loads a compiled module of the project "
                    f"(the project has CUDA sources: {self.shown})",
                )
        return found

    def imported(self, path: str, source: bytes, found: dict[str, tuple[str, str]]) -> None:
        """Adds to `found` each extension the file imports (`from .ops import fused`, `import a.b as c`)."""
        me, init = module_name(path), path.replace("\\", "/").endswith("__init__.py")
        nodes: list[ast.ImportFrom | ast.Import] = [*_from_imports(source), *_aliased_imports(source, _IMPORTS)]
        for node in nodes:
            pairs: list[tuple[str, str, str | None]]
            if isinstance(node, ast.ImportFrom):
                base = _target(me, node, init)
                if base is None:
                    continue
                pairs = [(a.asname or a.name, f"{base}.{a.name}" if base else a.name, base) for a in node.names]
            else:  # `import a.b` binds `a`: the extension's ops are called as `a.b.op()`, by its dotted name
                pairs = [(a.asname or a.name, a.name, None) for a in node.names]
            for local, full, parent in pairs:
                hit = next((h for h in map(self.extension, (full, parent)) if h is not None), None)
                if hit is not None:
                    found[local] = hit

    def extension(self, module: str | None) -> tuple[str, str] | None:
        """(module, why) where `module` is one of the project's compiled extensions."""
        if not module:
            return None
        match = next(
            (m for m in self.built if m == module or m.endswith("." + module) or module.endswith("." + m)), None
        )
        if match is not None:
            return (match, f"`{module}`: {self.built[match]}")
        if self.cu and extensions.compiled(module, self.project):
            return (
                module,
                f"`{module}`: a compiled module of the project (no Python file provides it; "
                f"the project has CUDA sources: {self.shown})",
            )
        return None


def cuda_only_imports(
    files: Iterable[tuple[str, bytes]],
    target: str | None = None,
    cuda_sources: Iterable[str] = (),
    native: Iterable[tuple[str, bytes]] = (),
    own: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Facts]:
    """path -> ((None, local name, "cuda-only", (why[, "runs"])), ...) for each file that imports a
    CUDA-only name from another module of the project, or one of the project's own compiled
    CUDA extensions, or calls one of the project's ops that have a CUDA kernel only (`native`:
    its C++/CUDA sources that register ops, porter.analysis.native_ops; the local name is then
    `torch.ops.NS.OP`). `target`: the packages CUDA-only there (None: everywhere)."""
    files = list(files)
    data = cuda_only_data(target)
    kernels = _kernel_package_imports(files, target, own or {})
    compiled = {
        path: {local: why for local, (_, why) in names.items()}
        for path, names in extension_imports(files, cuda_sources).items()
    }
    ops = _op_uses(files, *native_ops.cuda_only_and_overloaded(native, python_ops.registered_kernels(files)))
    what: dict[str, dict[str, str]] = {}  # module -> name -> `_triton_what`'s chain part
    exported, running, needs = _exports(files, data, compiled, ops, what, own or {})
    out: dict[str, Facts] = {
        path: tuple(
            sorted(
                (None, local, CudaOnlyKind.IMPORTED, (f"`{local}` ({why})", CudaOnlyTag.RUNS))
                for local, why in names.items()
            )
        )
        for path, names in (*compiled.items(), *ops.items())
    }
    for path, kernel_facts in kernels.items():
        out[path] = tuple(sorted({*out.get(path, ()), *kernel_facts}))
    for path, predicate_facts in _predicate_imports(files, data).items():
        out[path] = tuple(sorted({*out.get(path, ()), *predicate_facts}))
    if not exported and not needs:
        return out
    follow = _Reexports(files, exported, running, needs, what)
    imported = follow.follow()
    for path, reexported in imported.items():
        kinds = follow.whats.get(path, {})
        facts = [
            (None, local, CudaOnlyKind.IMPORTED, (why, *((CudaOnlyTag.RUNS,) if runs else ()), *_part(kinds, local)))
            for local, (why, runs) in reexported.items()
        ]
        if facts:
            out[path] = tuple(sorted({*out.get(path, ()), *facts}))
    for path, attribute_facts in _module_attributes(files, exported, running, what, own or {}).items():
        out[path] = tuple(sorted({*out.get(path, ()), *attribute_facts}))
    return out


def _part(kinds: dict[str, str], name: str) -> tuple[str, ...]:
    """The chain part saying what `name` is (`_triton_what`), if known."""
    return (kinds[name],) if name in kinds else ()


# `torch.ops.NS.OP`: a call of a registered op, or of one of its overloads (`torch.ops.NS.OP.out`)
_TORCH_OP = re.compile(rb"\btorch\.ops\.(\w+)\.(\w+)(?:\.(\w+))?")
_CALLED_NOW = re.compile(rb"(?<![ \t])[ \t]*\(")  # (just after it: the op called, not taken as a value)


def _op_uses(
    files: list[tuple[str, bytes]],
    ops: dict[str, dict[str, str]],
    overloaded: dict[str, set[str]] | None = None,
) -> dict[str, dict[str, str]]:
    """path -> {`torch.ops.NS.OP`: why} for each of the project's CUDA-only ops (`ops`:
    namespace -> op -> why, an overload its own op, `a.out`) the file names: only those, so a file's
    facts are what it uses. A file that names an overload of an op that is not CUDA-only (`a.out`, with a
    CPU kernel) gets no fact of the op's default overload (`a`): a fact of `torch.ops.NS.a` is one of every
    name under it, and its `a.out` call would be said CUDA-only. Nor does one that takes `torch.ops.NS.a` as a
    value (`op = torch.ops.NS.a`, `getattr(torch.ops.NS.a, "out")`) where `a` has such an overload (`overloaded`:
    namespace -> those ops): its `op.out(x)` was said CUDA-only, and torch 2.9 runs it on a CPU tensor (thirty-first
    sleft read's leftover)."""
    if not ops:
        return {}
    out: dict[str, dict[str, str]] = {}
    for path, source in files:
        if b"torch.ops." not in source:
            continue
        found: dict[str, str] = {}
        other: set[str] = set()  # (the file's overloads that are not CUDA-only, by their op's name)
        for m in _TORCH_OP.finditer(source):
            ns, op, overload = m.group(1).decode(), m.group(2).decode(), m.group(3)
            named = f"{op}.{overload.decode()}" if overload not in (None, b"default") else op
            if named in ops.get(ns, ()):
                found[f"torch.ops.{ns}.{named}"] = ops[ns][named]
            elif named != op:
                other.add(f"torch.ops.{ns}.{op}")
            if overload is None and op in (overloaded or {}).get(ns, ()) and not _CALLED_NOW.match(source, m.end()):
                other.add(f"torch.ops.{ns}.{op}")
        found = {name: why for name, why in found.items() if name not in other}
        if found:
            out[path] = found
    return out


def _module_aliases(path: str, source: bytes) -> dict[str, str]:
    """local name -> the dotted name it is bound to, for the file's `import a.b as c`, `import a.b`
    (written `a.b`: its `a.b.op(x)` was no CUDA-only use, and `x.is_cuda` before it was rewritten;
    twenty-sixth read) and `from a import b [as c]` (made absolute)."""
    me, init = module_name(path), path.replace("\\", "/").endswith("__init__.py")
    aliases: dict[str, str] = {}
    for node in _aliased_imports(source, _IMPORTS):
        aliases.update((a.asname or a.name, a.name) for a in node.names)
    for from_node in _from_imports(source):
        base = _target(me, from_node, init)
        if base:
            aliases.update((a.asname or a.name, f"{base}.{a.name}") for a in from_node.names if a.name != "*")
    return aliases


def _module_attributes(
    files: list[tuple[str, bytes]],
    exported: dict[str, tuple[str, dict[str, str]]],
    running: dict[str, set[str]],
    what: dict[str, dict[str, str]],
    own: Mapping[str, Mapping[str, str]],
) -> dict[str, Facts]:
    """path -> facts for each file that imports a module of the project under a name
    (`import vllm._custom_ops as ops`, `from vllm import _custom_ops as ops`) and uses a name
    of it whose use runs CUDA-only code (`ops.sm100_cutlass_mla_decode(...)`): the local name
    is the dotted one the file writes (`ops.sm100_cutlass_mla_decode`). `own`: path -> the own
    top-level modules its imports find (name -> file): `import cuda` beside the project's
    `cuda.py` is that file, not a `kernels/cuda.py` whose name ends the same."""
    runs = {m: {n: names[n] for n in running.get(m, ()) if n in names} for m, (_, names) in exported.items()}
    leaves: dict[bytes, list[str]] = {}
    for module, names in runs.items():
        if names:
            leaves.setdefault(_leaf(module), []).append(module)
    if not leaves:
        return {}
    # (from each line's first `import` only: see extensions.IMPORT_HINT)
    probe = re.compile(
        rb"^(?=([^\n]*?\bimport\b))\1[^\n]*\b(?:%s)\b" % b"|".join(re.escape(leaf) for leaf in sorted(leaves)),
        re.MULTILINE,
    )
    out: dict[str, Facts] = {}
    for path, source in files:
        if not extensions.search_lines(probe, source):
            continue
        me = module_name(path)
        facts = []
        for local, full in _module_aliases(path, source).items():
            mine = own.get(path, {}).get(full.split(".")[0])
            found = next(
                (
                    m
                    for m in leaves.get(_leaf(full), ())
                    if (m == full or m.endswith("." + full) or full.endswith("." + m))
                    and (mine is None or _own_file(mine, full, exported[m][0]))
                ),
                None,
            )
            if found is None or found == me:
                continue
            where = exported[found][0]
            used = {u.decode() for u in re.findall(rb"\b%s\.(\w+)" % re.escape(local.encode()), source)}
            for name in sorted(used & set(runs[found])):
                why = runs[found][name]
                why = f"{why}, in {where}" if ", in " not in why else why
                kind = _part(what.get(found, {}), name)
                facts.append((None, f"{local}.{name}", CudaOnlyKind.IMPORTED, (why, CudaOnlyTag.RUNS, *kind)))
        if facts:
            out[path] = tuple(sorted(set(facts)))
    return out


def _own_file(top: str, full: str, path: str) -> bool:
    """Whether `path` is the file of module `full` under the project's own top-level module
    `top` (`cuda.py`, `cuda/__init__.py`): the module an import of `full` finds."""
    rest = full.split(".")[1:]
    if not rest:
        return _same_path(path, top)
    if os.path.basename(top) != "__init__.py":
        return False  # (a module, no package: nothing below it)
    base = os.path.join(os.path.dirname(top), *rest)
    return _same_path(path, base + ".py") or _same_path(path, os.path.join(base, "__init__.py"))


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(a.replace("\\", "/")) == os.path.normpath(b.replace("\\", "/"))


def _predicate_imports(files: list[tuple[str, bytes]], data: CudaOnlyData) -> dict[str, Facts]:
    """path -> facts (tag `predicate`) for each file that imports, directly or through a
    package's `__init__.py`, a function of the project whose truth means a CUDA-only package is
    installed (availability_predicates)."""
    defined: dict[str, tuple[str, dict[str, str]]] = {}
    for path, source in files:
        if found := availability_predicates(source, data):
            defined[module_name(path)] = (path, found)
    if not defined:
        return {}
    out: dict[str, Facts] = {}
    for path, names in _Reexports(files, defined, {}, {}).follow().items():
        if names:
            out[path] = tuple(
                sorted(
                    (None, local, CudaOnlyKind.IMPORTED, (why, CudaOnlyTag.PREDICATE))
                    for local, (why, _) in names.items()
                )
            )
    return out


def _exports(
    files: list[tuple[str, bytes]],
    data: CudaOnlyData,
    compiled: dict[str, dict[str, str]],
    ops: dict[str, dict[str, str]] | None = None,
    what: dict[str, dict[str, str]] | None = None,
    own: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[dict[str, tuple[str, dict[str, str]]], dict[str, set[str]], dict[str, tuple[str, str]]]:
    """The project's modules that export CUDA-only names: module -> (path, name -> why); the
    names of each whose use runs CUDA-only code; and the modules whose import needs a CUDA-only
    package: module -> (path, the package). `ops`: path -> the project's CUDA-only ops it calls;
    `what`, filled: module -> what some names are (`_triton_what`); `own`: path -> the project's
    own modules its imports find instead of packages of those names (`CudaOnlyData.without`)."""
    exported: dict[str, tuple[str, dict[str, str]]] = {}
    running: dict[str, set[str]] = {}
    needs: dict[str, tuple[str, str]] = {}
    whole = data
    for path, source in files:
        data = whole.without(frozenset((own or {}).get(path, {})))
        known = compiled.get(path)
        called = (ops or {}).get(path)
        if known or called or has_token(source):
            found, runs, kinds = _cuda_only_names(source, data.with_project(called or {}), known)
            if found:
                exported[module_name(path)] = (path, found)
                running[module_name(path)] = runs
            if kinds and what is not None:
                what[module_name(path)] = kinds
            if imports_package(source) and (package := import_needs(source, data)):
                needs[module_name(path)] = (path, package)
    return exported, running, needs


def _leaf(module: str) -> bytes:
    """The last part of a module's name, as the bytes of its file's name (a name that is not
    UTF-8 holds surrogate escapes: `.encode()` ended `porter kernels` in a UnicodeEncodeError
    traceback on a Triton kernel in `b\\xff.py`; sixteenth read)."""
    return module.rpartition(".")[2].encode("utf-8", "surrogateescape")


class _Reexports:
    """A name imported from a module that exports CUDA-only names is exported again by its
    importer (a package's `__init__.py`: `from .fused import op`, then `from ..kernels import op`
    elsewhere): a few rounds follow such re-exports, each reading only the files that name a
    new one. `imported`: path -> local name -> (why, whether using it runs CUDA-only code)."""

    def __init__(
        self,
        files: list[tuple[str, bytes]],
        exported: dict[str, tuple[str, dict[str, str]]],
        running: dict[str, set[str]],
        needs: dict[str, tuple[str, str]],
        what: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.files, self.exported, self.running, self.needs = files, exported, running, needs
        self.imported: dict[str, dict[str, tuple[str, bool]]] = {}
        # module -> name -> what it is (`_triton_what`), and path -> local name -> the same
        self.what: dict[str, dict[str, str]] = what if what is not None else {}
        self.whats: dict[str, dict[str, str]] = {}

    def follow(self) -> dict[str, dict[str, tuple[str, bool]]]:
        fresh = dict(self.exported)
        for round_ in range(4):
            if not fresh and (round_ or not self.needs):
                break
            probes = self._probes(fresh, round_)
            again: dict[str, tuple[str, dict[str, str]]] = {}
            for path, source in self.files:
                if any(leaf in source and names(source) for leaf, names in probes):
                    self._read(path, source, fresh, round_, again)
            fresh = self._merge(again)
        return self.imported

    def _probes(
        self, fresh: dict[str, tuple[str, dict[str, str]]], round_: int
    ) -> list[tuple[bytes, Callable[[bytes], bool]]]:
        """A file is parsed only when it names such a module and one of its CUDA-only names (or,
        in the first round, for a module whose import needs a CUDA-only package, imports from
        it in a function)."""
        probes = [(_leaf(m), names_word([n.encode() for n in sorted(ns)])) for m, (_, ns) in fresh.items()]
        if not round_:
            probes += [(_leaf(m), _has_local_from) for m in self.needs if m not in self.exported]
        return probes

    def _read(
        self,
        path: str,
        source: bytes,
        fresh: dict[str, tuple[str, dict[str, str]]],
        round_: int,
        again: dict[str, tuple[str, dict[str, str]]],
    ) -> None:
        me = module_name(path)
        mine = self.imported.setdefault(path, {})
        for node, local in _from_imports(source, where=True):
            wanted = _target(me, node, path.replace("\\", "/").endswith("__init__.py"))
            if not wanted:
                continue
            # paths name modules from where porter was run: either may be the longer name
            matches = [m for m in self.exported if m == wanted or m.endswith("." + wanted) or wanted.endswith("." + m)]
            source_module = matches[0] if len(matches) == 1 and matches[0] != me and matches[0] in fresh else None
            where, names = self.exported[source_module] if source_module else ("", {})
            marked = self.running.get(source_module or "", set())
            # `from .matmul_ext import matmul` in a function (or under an `if`/`try`), where
            # matmul_ext imports Triton when it is imported: the lazy import is where the
            # library put its CUDA-only dependency, so what it brings runs CUDA-only code
            lazy = (
                [m for m in self.needs if m == wanted or m.endswith("." + wanted) or wanted.endswith("." + m)]
                if local and not round_
                else []
            )
            lazy_from = self.needs[lazy[0]] if len(lazy) == 1 and lazy[0] != me else None
            for alias in node.names:
                local_name = alias.asname or alias.name
                if alias.name == "*" or local_name in mine:
                    continue
                taken = _taken(alias.name, where, names, marked, lazy_from)
                if taken is None:
                    continue
                mine[local_name] = taken
                kind = self.what.get(source_module or "", {}).get(alias.name)
                if kind is not None:
                    self.whats.setdefault(path, {})[local_name] = kind
                if alias.name in names:  # exported again by this module (a package's __init__.py)
                    again.setdefault(me, (path, {}))[1][local_name] = mine[local_name][0]
                    if kind is not None:
                        self.what.setdefault(me, {})[local_name] = kind

    def _merge(self, again: dict[str, tuple[str, dict[str, str]]]) -> dict[str, tuple[str, dict[str, str]]]:
        """Adds the round's re-exports to the exported names; returns the modules that export new ones."""
        for module, (path, names) in again.items():
            have = self.exported.setdefault(module, (path, {}))[1]
            added = {n: w for n, w in names.items() if n not in have}
            have.update(added)
            self.running.setdefault(module, set()).update(n for n in added if self.imported[path][n][1])
            if not added:
                again[module] = (path, {})
        return {m: v for m, v in again.items() if v[1]}


def _taken(
    name: str, where: str, names: dict[str, str], marked: set[str], lazy_from: tuple[str, str] | None
) -> tuple[str, bool] | None:
    """(why, runs) for the imported `name` (None: not CUDA-only): exported by the module
    imported from (`names`, defined `where`; `marked`: those whose use runs CUDA-only code), or
    brought by a lazy import of a module that needs a CUDA-only package (`lazy_from`)."""
    if name in names:
        why = names[name]
        return (f"{why}, in {where}" if ", in " not in why else why, name in marked or lazy_from is not None)
    if lazy_from is not None:
        needed_in, package = lazy_from
        return (f"`{name}` from a module that imports {package} when it is imported, in {needed_in}", True)
    return None


# `from x import a, b`, `from .x import (a,\n b)`, at any indentation: only these are parsed
# (`from_statements`: `(?:\([^)]*\)|[^\n#;]*)` after the head, without a search per statement).
# The module is `[\w.]+`, never empty: as `\.*[\w.]*` it could be, and the two runs of blanks
# around it split one run every way (`from` + 100,000 spaces cost the index, which no per-file
# limit stops, 8 CPU s; seventeenth read)
_FROM_HEAD = re.compile(rb"^[ \t]*(from[ \t]+[\w.]+[ \t]+import[ \t]*)", re.MULTILINE)
_FROM_REST = re.compile(rb"[^\n#;]*")


def from_statements(source: bytes) -> Iterator[tuple[int, int, bytes]]:
    r"""(where the line starts, where the statement starts, its text) of each `from ... import`,
    as `^[ \t]*(from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n#;]*))` finds them,
    in time linear in the file: a bracket is closed by the first `)` after it, found once for
    every statement that asks (`NextOf`; a search per statement was quadratic)."""
    close = NextOf(source, b")")
    taken = 0
    for m in _FROM_HEAD.finditer(source):
        if m.start() < taken:
            continue
        end = close.after(m.end() + 1) if source[m.end() : m.end() + 1] == b"(" else -1
        taken = end + 1 if end >= 0 else _FROM_REST.match(source, m.end()).end()  # type: ignore[union-attr]
        yield m.start(), m.start(1), source[m.start(1) : taken]


# an indented `from ... import` (in a function, or under an `if`/`try`)
_LOCAL_FROM = re.compile(rb"^[ \t]+from[ \t]", re.MULTILINE)


def _has_local_from(source: bytes) -> bool:
    return _LOCAL_FROM.search(source) is not None


_WORD = re.compile(rb"\w+")  # (of bytes: [A-Za-z0-9_])
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def names_word(names: list[bytes]) -> Callable[[bytes], bool]:
    """Whether a source has one of `names` as a whole word: `re.search(rb"\\b(?:n1|n2...)\\b")`.
    For names of word bytes alone the names are looked for first and the byte before each
    found checked (that pattern's `\\b` was tried at every place of every file: 1.3 CPU s of
    the bench corpus's CUDA-only facts, now 0.3): a name found right after a word byte is
    inside a longer word, and so is every place up to its end, where the search goes on."""
    alternatives = b"|".join(re.escape(n) for n in names)
    if not names or not all(_WORD.fullmatch(n) for n in names):
        whole = re.compile(rb"\b(?:%s)\b" % alternatives)
        return lambda source: whole.search(source) is not None
    ending = re.compile(rb"(?:%s)(?!\w)" % alternatives)

    def found(source: bytes) -> bool:
        for m in ending.finditer(source):
            if not m.start() or source[m.start() - 1] not in _WORD_BYTES:
                return True
        return False

    return found


@overload
def _from_imports(source: bytes) -> Iterable[ast.ImportFrom]: ...
@overload
def _from_imports(source: bytes, where: Literal[True]) -> Iterable[tuple[ast.ImportFrom, bool]]: ...
def _from_imports(
    source: bytes, where: bool = False
) -> Iterable[ast.ImportFrom] | Iterable[tuple[ast.ImportFrom, bool]]:
    """The file's `from ... import ...` statements, without parsing the rest of it (`where`:
    each with whether it is indented)."""
    for line, start, text in from_statements(source):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if tree.body and isinstance(tree.body[0], ast.ImportFrom):
            yield (tree.body[0], start > line) if where else tree.body[0]


def _kernel_package_imports(
    files: list[tuple[str, bytes]], target: str | None, own: Mapping[str, Mapping[str, str]]
) -> dict[str, Facts]:
    """path -> facts for each file that imports, at its top level (column 0), from a package of
    the project named for a CUDA-only package whose `__init__.py` imports it (ColossalAI's
    `colossalai/kernel/triton/`: `from colossalai.kernel.triton.copy_kv_cache_dest import
    copy_kv_cache_to_dest`). The package holds that package's kernels: the importing module
    cannot be imported without it, and what it imports from there runs CUDA-only code. `own`:
    path -> the own top-level modules its imports find: a project's own `cuda/` importing
    `cuda.ops` imports itself, no package of cuda-python's kernels."""
    packages = _kernel_packages(files, target, own)
    if not packages:
        return {}
    leaves = [p.rpartition(".")[2].encode() for p in packages]
    out: dict[str, Facts] = {}
    for path, source in files:
        if not any(b"." + leaf + b"." in source or b"." + leaf + b" " in source for leaf in leaves):
            continue
        facts = [
            fact
            for node, indented in _from_imports(source, where=True)
            for fact in _kernel_facts(node, indented, packages)
            if (node.module or "").split(".")[0] not in own.get(path, {})
        ]
        if facts:
            out[path] = tuple(sorted(set(facts)))
    return out


def _kernel_packages(
    files: list[tuple[str, bytes]], target: str | None, own: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    """The project's packages named for a CUDA-only package whose `__init__.py` imports it:
    the package's module name -> the CUDA-only package."""
    heads = {m.split(".")[0] for m in cuda_only_modules(target)}
    packages: dict[str, str] = {}
    for path, source in files:
        parts = path.replace("\\", "/").split("/")
        if len(parts) < 2 or parts[-1] != "__init__.py" or parts[-2] not in heads or parts[-2] in own.get(path, {}):
            continue
        if imports_any(source, frozenset({parts[-2].encode()})):
            packages[module_name(path)] = parts[-2]
    return packages


def _kernel_facts(
    node: ast.ImportFrom, indented: bool, packages: dict[str, str]
) -> Iterable[tuple[None, str, CudaOnlyKind, tuple[str, ...]]]:
    """The facts of a top-level `from PACKAGE.mod import a, b` from one of `packages`."""
    if indented or node.level or not node.module:
        return
    # the module or one of its packages (paths name modules from where porter was run:
    # either may be the longer name)
    dotted_parts = node.module.split(".")
    prefixes = [".".join(dotted_parts[: i + 1]) for i in range(len(dotted_parts))]
    found = next(
        (
            (m, package)
            for m, package in packages.items()
            for q in prefixes
            if m == q or m.endswith("." + q) or q.endswith("." + m)
        ),
        None,
    )
    if found is None:
        return
    for alias in node.names:
        if alias.name == "*":
            continue
        local = alias.asname or alias.name
        why = (
            f"`{local}` from `{node.module}`, the project's package of `{found[1]}` kernels "
            f"(its `__init__.py` imports `{found[1]}`)"
        )
        yield (None, local, CudaOnlyKind.IMPORTED, (why, CudaOnlyTag.RUNS, f"{CudaOnlyTag.NEEDS.value}:{found[1]}"))


def import_needs(source: bytes, data: CudaOnlyData) -> str | None:
    """The CUDA-only package (Triton, ...) a module imports at its top level, outside any `if`
    or `try` (an import line at column 0): importing the module needs it (None where it has no
    such import)."""
    for m in _TOP_IMPORT.finditer(source):
        names = [m.group(1)] if m.group(1) is not None else [p.strip().split(b" ")[0] for p in m.group(2).split(b",")]
        for name in names:
            text = name.decode("ascii", "replace")
            if data.runs(text):
                return f"`{text}`"
    return None


_TOP_IMPORT = re.compile(rb"^(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w., \t]+))", re.MULTILINE)


# `import a.b as c`: the one plain import that binds a module under a name of its own
_ALIASED = re.compile(
    rb"^[ \t]*(import[ \t]+[\w.]+[ \t]+as[ \t]+\w+(?:[ \t]*,[ \t]*[\w.]+[ \t]+as[ \t]+\w+)*)", re.MULTILINE
)


# `import a`, `import a.b as c`: the imports that bind a module (the extension's ops are called on
# it: `import causal_conv1d_cuda` was passed over, twenty-fourth read)
_IMPORTS = re.compile(
    rb"^[ \t]*(import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)", re.MULTILINE
)


def _aliased_imports(source: bytes, pattern: re.Pattern[bytes] = _ALIASED) -> Iterable[ast.Import]:
    for match in pattern.finditer(source):
        try:
            tree = ast.parse(match.group(1))
        except (SyntaxError, ValueError):
            continue
        if tree.body and isinstance(tree.body[0], ast.Import):
            yield tree.body[0]


def part(source: bytes) -> bytes:
    """What `with_cuda_only` reads of one file, hashed: the whole of a file that may hold
    CUDA-only code, the `from ... import` lines (and per-device class statements and the lines
    that hand a parameter on, porter.analysis.device_backends) of the others; empty for a file
    that has neither.
    Editing a body elsewhere changes nothing."""
    classes = device_backends.part(source)
    if b"import" not in source:
        return hashlib.sha256(classes).digest() if classes else b""
    if (
        has_token(source)
        or any(t in source for t in extensions.TOKENS)
        or extensions.hints_import(source)
        or extensions.LOADER.search(source)
        or _package_string().search(source)
        or python_ops.may_register(source)  # (a kernel it registers for a project op: python_ops)
    ):
        return hashlib.sha256(source).digest()
    handed = device_backends.handed_on_lines(source)  # a parameter handed on to a switch key
    return hashlib.sha256(
        b"".join(text + b"\0" for _, _, text in from_statements(source)) + classes + b"\5" + handed
    ).digest()


def reads(source: bytes) -> bool:
    """Whether `part(source)` is not empty (the CUDA-only facts read the file: it imports, or
    has a class statement or line `device_backends.part` keeps), without its scans and hash:
    what a run with no cache, which keys nothing by the parts, needs of them."""
    return b"import" in source or bool(device_backends.part(source))


def digest(
    parts: list[tuple[str, bytes]],
    target: str | None = None,
    cuda_sources: Iterable[str] = (),
    native: Iterable[tuple[str, bytes]] = (),
    own: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The key of the CUDA-only facts of a project, from each importing file's `part`, the
    target (a package may be CUDA-only on one target only), the project's CUDA sources and
    the sha256 of the text of those that register ops (`native`: name, digest)."""
    h = hashlib.sha256(CudaOnlyKind.IMPORTED.value.encode() + b"\0" + (target or "").encode())
    for name in sorted(cuda_sources):
        h.update(b"cu\0" + name.encode("utf-8", "surrogateescape"))
    for name, sha in sorted(native):
        h.update(b"ops\0" + name.encode("utf-8", "surrogateescape") + sha)
    for name, p in parts:
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + p)
    for name, modules in sorted((own or {}).items()):  # (the project's own modules its imports find, and their files)
        found = ",".join(f"{m}={f}" for m, f in sorted(modules.items()))
        h.update(b"own\0" + (name + "\0" + found).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def with_cuda_only(
    facts: dict[str, Facts],
    files: list[tuple[str, bytes]],
    target: str | None = None,
    cuda_sources: Iterable[str] = (),
    native: Iterable[tuple[str, bytes]] = (),
) -> dict[str, Facts]:
    """`facts` (the project index's answers per path) plus each file's CUDA-only imports and
    CUDA backend classes (porter.analysis.device_backends)."""
    return merged(facts, cuda_only_facts(files, target, cuda_sources, native))


def cuda_only_facts(
    files: list[tuple[str, bytes]],
    target: str | None = None,
    cuda_sources: Iterable[str] = (),
    native: Iterable[tuple[str, bytes]] = (),
    own: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Facts]:
    """Each file's CUDA-only imports, then its CUDA backend classes (what `with_cuda_only` adds).
    `native`: the project's C++/CUDA sources that register ops (name, bytes). `own`: path -> the
    project's own top-level modules its `import NAME` finds in place of a package of that name."""
    found = cuda_only_imports(files, target, cuda_sources, native, own)
    backends = device_backends.cuda_backend_facts(files)
    out: dict[str, Facts] = {}
    for more in (found, backends):
        for name, extra in more.items():
            out[name] = (*out.get(name, ()), *extra)
    return out


def merged(facts: dict[str, Facts], extra: dict[str, Facts]) -> dict[str, Facts]:
    """The project index's answers with `cuda_only_facts` after each file's own."""
    if not extra:
        return facts
    out = dict(facts)
    for name, more in extra.items():
        out[name] = (*out.get(name, ()), *more)
    return out
