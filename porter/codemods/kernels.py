"""Custom kernels and CUDA-only libraries: findings, never silence (KERN family).

- KERN001 `torch.utils.cpp_extension` (`load`, `load_inline`, `CUDAExtension`, `BuildExtension`)
- KERN002 `@triton.jit` / `@triton.autotune` / `@triton.heuristics` kernels and their launches
- KERN003 CUDA-only libraries (`cupy`, `pynvml`, `transformer_engine`, `deepspeed.ops`,
  `amp_C`, quantized `bitsandbytes` …), from the `[[library]]` table in `rules/kernels.toml`
- KERN004 `.cu` / `.cuh` sources: not Python, so `porter kernels` reports them (see
  `porter/kernels/inventory.py`); the engine never sees them.
- KERN005 a custom op registered for CUDA whose implementation is CUDA-only: the
  registration keeps its `"cuda"` (see `porter/codemods/guards.py` for what is CUDA-only).

Library rows say where a library is reported: `at = "import"` (the import statement: the
library is CUDA-only as a whole) or `at = "use"` (each reference the LIB rewrites of
`porter/codemods/libraries.py` do not handle, so a ported call never also gets a KERN003).
"""

from __future__ import annotations

import re
import unicodedata

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import libcst as cst

from porter.codemods.family import Family, ReferenceTracker, string_value
from porter.codemods.guards import cuda_only_facts
from porter.analysis.resolve import _import_statements, dotted
from porter.config.cuda_packages import package_of
from porter.analysis.cuda_only_index import TRITON_DECORATORS, imports_any
from porter.analysis.kinds import CudaOnlyKind, CudaOnlyTag
from porter.analysis.prefilter import rules_admit, triton_imported
from porter.config.ruledata import load_toml

CPP_EXTENSION = "torch.utils.cpp_extension"
_BUILDS = re.compile(rb"\b(?:load|load_inline|CUDAExtension|CppExtension|BuildExtension)\(")
# Triton language calls a kernel's body makes (`tl.program_id`, `tl.load`): the evidence that a
# decorator re-exported by a module not in the tree (`from vllm.triton_utils import tl, triton`) is
# Triton's, when the body reaches one through a name the same module gives (twenty-second read)
TRITON_LANGUAGE = frozenset({"program_id", "num_programs", "arange", "load", "store", "constexpr"})
# the re-exporting module's Triton bindings (its local name -> Triton's qualified name), or None
# where the module is not in the tree
_TAILS = frozenset(d.rpartition(".")[2] for d in TRITON_DECORATORS)
Reexports = Callable[[str], Mapping[str, str] | None]
# registration APIs: qualified names, and the method names of op/library objects
REGISTRARS = {
    "torch.library.custom_op",
    "torch.library.register_kernel",
    "torch.library.impl",
    "torch.library.triton_op",
    "torch._library.custom_ops.custom_op",
}
REGISTRAR_METHODS = {"register_kernel", "impl"}
_IMPL_KEYWORDS = {"fn", "func", "f"}


@dataclass(frozen=True)
class LibraryRow:
    prefix: str
    at: str  # "import" or "use"
    what: str
    advice: dict[str, str]
    uses: bool = False  # an "import" row whose every use is reported too (NVML and CuPy calls)

    def advice_for(self, target: str) -> str | None:
        return self.advice.get(target) or self.advice.get("*")


@lru_cache(maxsize=1)
def library_table() -> tuple[LibraryRow, ...]:
    rows = [
        LibraryRow(
            prefix=prefix,
            at=row.get("at", "import"),
            what=row["what"],
            advice=dict(row.get("advice", {})),
            uses=row.get("uses", False),
        )
        for row in load_toml("kernels.toml").get("library", [])
        for prefix in row["prefixes"]
    ]
    # longest prefix first: `bitsandbytes.optim` before `bitsandbytes`
    return tuple(sorted(rows, key=lambda r: len(r.prefix), reverse=True))


def library_row(qualname: str, target: str | None = None) -> LibraryRow | None:
    """The library `qualname` belongs to, unless its evidence shows a path on `target`
    (rules/cuda_only/: none now; a path a program must ask for, as Helion's Pallas backend on
    tpu, is not counted)."""
    for row in library_table():
        if qualname == row.prefix or qualname.startswith(row.prefix + "."):
            package = package_of(qualname) if target is not None else None
            return None if package is not None and target in package.targets else row
    return None


def owns(path: str, prefix: str) -> bool:
    """Whether the file is part of the library a row names (DeepSpeed's own modules import
    `deepspeed.ops`): its CUDA-only parts are then the project's, judged by the guards."""
    folder = "/" + prefix.replace(".", "/") + "/"
    return folder in "/" + path.replace("\\", "/")


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _kern003_candidate(path: str, found) -> bool:
    """A necessary condition for KERN003 (`_import`, `_reference`) from the file's `Sites`."""
    for row in library_table():
        if row.at == "import" and not owns(path, row.prefix):
            if any(_under(name, row.prefix) for name in found.import_names):
                return True
        if row.at == "use" or row.uses:
            # a reference's qualified name is an import's binding and the rest of its spelling
            bases = (b for bs in found.imported.values() for b in bs)
            if any(_under(b, row.prefix) or _under(row.prefix, b) for b in bases):
                return True
    return False


@lru_cache(maxsize=1)
def _library_heads() -> frozenset[bytes]:
    return frozenset(r.prefix.split(".")[0].encode() for r in library_table())


@lru_cache(maxsize=1)
def _TOPS() -> frozenset[str]:
    return frozenset({r.prefix.split(".")[0] for r in library_table()} | {"torch"})


def kernel_decorator(
    resolver, fn: cst.FunctionDef, aliases: Mapping[str, str] | None = None, lookup: Reexports | None = None
) -> tuple[str, str] | None:
    """The Triton decorator `fn` is a kernel under, and how a re-exported one was recognised
    ("" where an import of Triton names it)."""
    for dec in fn.decorators:
        expr = dec.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        written = dotted(expr) or ""
        qual = (aliases or {}).get(written) or resolver.imports.qualify(written)
        if qual in TRITON_DECORATORS:
            return qual, ""
        found = _reexported(resolver, written, fn, lookup)
        if found is not None:
            return found
    return None


def _origin(imports, local: str) -> tuple[str, list[str]] | None:
    """The module an import binds `local` from, and the names under it `local` stands for:
    `from m import triton` -> ("m", ["triton"]); `import m as u` -> ("m", []); relative too."""
    if local in imports.sources:
        module, obj, _ = imports.sources[local]
        return module, [obj] if obj else []
    if local in imports.relative:
        module, obj = imports.relative[local]
        return module, [obj]
    return None


def _reexported(resolver, written: str, fn: cst.FunctionDef, lookup: Reexports | None) -> tuple[str, str] | None:
    """Triton's decorator that `written` reaches through a module re-exporting Triton
    (`from vllm.triton_utils import triton`; `@triton.jit`), and how it was recognised: by the
    module's file in the tree binding it to Triton, else by `fn` using the Triton language through
    a name from the same module (`tl.load`). Neither lint nor `porter kernels` saw vllm's kernels."""
    if written.rpartition(".")[2] not in _TAILS and (lookup is None or "." in written):
        return None  # most decorators stop here; a plain name may be one a module binds (`jit as J`)
    head, *rest = written.split(".")
    origin = _origin(resolver.imports, head)
    if origin is None or origin[0] == "triton" or origin[0].startswith("triton."):
        return None
    module, names = origin[0], origin[1] + rest
    if not names:
        return None
    module, names, bound = _through_modules(module, names, lookup)
    if bound is not None and names[0] in bound:
        qual = ".".join([bound[names[0]], *names[1:]])
        how = f"`{written}` is Triton's: `{module}` in the tree binds it"
        return (qual, how) if qual in TRITON_DECORATORS else None
    if bound is None and _without_triton(module):
        return None  # `from cutlass import cute`; `@cute.jit` (CuTe DSL) was listed as a Triton kernel
    use = _language_use(resolver.imports, fn, module) if len(names) <= 2 and names[-1] in _TAILS else None
    if use is None:
        return None
    # named as written (`gluon.jit` is no `triton.jit`): only the body says it is a Triton kernel;
    # so too where the module's file binds the name by no import of its own (`from .c import triton`)
    where = "not in the tree" if bound is None else f"its file binds `{names[0]}` by no import of Triton"
    how = f"`{written}` from `{module}` ({where}) taken as Triton's: the body uses `{use}`"
    return ".".join([module, *names]), how


def _without_triton(module: str) -> bool:
    """Whether `module` (not in the tree) is of a wheel porter read that has no Triton in it
    (rules/cuda_only/packages.json): a decorator of it is that package's own, never Triton's."""
    package = package_of(module)
    return package is not None and package.without_triton


def _through_modules(
    module: str, names: list[str], lookup: Reexports | None
) -> tuple[str, list[str], Mapping[str, str] | None]:
    """The module whose file binds `names[0]`, the names under it, and its bindings (`lookup`):
    `tu.triton.jit` of `from pkg import tu` is `triton.jit` of `pkg.tu`, not of `pkg` (whose file
    binds no `tu`): the chain through a package's module was read by neither lint nor `porter
    kernels` (twenty-fourth read's leftover). A module the tree does not hold ends the walk."""
    bound = lookup(module) if lookup is not None else None
    while lookup is not None and names[0] not in (bound or ()) and len(names) > 1:
        inner = _joined(module, names[:1])
        found = lookup(inner)
        if found is None:
            break
        module, names, bound = inner, names[1:], found
    return module, names, bound


def _joined(module: str, names: list[str]) -> str:
    """The module `names` reach under `module` (`pkg` and `tu` -> `pkg.tu`; `.` and `tu` -> `.tu`)."""
    for name in names:
        module = module + name if module.endswith(".") else f"{module}.{name}"
    return module


def _language_use(imports, fn: cst.FunctionDef, module: str) -> str | None:
    """The first Triton language name (`tl.constexpr`, `tl.load`) `fn` uses through a name `module`
    gives, or None: its parameters' annotations first (`BLOCK: tl.constexpr`, no walk), then one
    walk of its body, only for a decorator spelled as Triton's through another module."""

    def through_module(node: cst.BaseExpression) -> str | None:
        written = dotted(node) or ""
        head, _, rest = written.partition(".")
        origin = _origin(imports, head)
        same = origin is not None and origin[0] == module and len(origin[1]) + rest.count(".") >= 1
        return written if same and written.rpartition(".")[2] in TRITON_LANGUAGE else None

    for param in (*fn.params.params, *fn.params.kwonly_params):
        found = through_module(param.annotation.annotation) if param.annotation else None
        if found:
            return found
    seen: list[str] = []

    class _Uses(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if not seen and node.attr.value in TRITON_LANGUAGE and through_module(node):
                seen.append(dotted(node) or "")
            return not seen

        def on_visit(self, node: cst.CSTNode) -> bool:
            return not seen and super().on_visit(node)

    fn.body.visit(_Uses())
    return seen[0] if seen else None


def imported_triton(settings) -> tuple[dict[str, str], dict[str, str]]:
    """From the project index's facts of the file (porter.analysis.cuda_only_index): the names it
    imports that a module of the project binds to Triton (local -> Triton's name: `from pkg.tu
    import triton`), and the Triton kernels it imports (local, dotted -> the file defining it:
    `ops.scale` of `from pkg import ops`). Lint knew neither; `porter kernels` reads the tree."""
    prefix = CudaOnlyTag.BINDS.value + ":"
    binds: dict[str, str] = {}
    kernels: dict[str, str] = {}
    for f in getattr(settings, "flow", None) or ():
        if f[2] != CudaOnlyKind.IMPORTED:
            continue
        for part in f[3][1:]:
            if str(part).startswith(prefix):
                binds[f[1]] = str(part)[len(prefix) :]
            elif part == CudaOnlyTag.KERNEL:
                kernels[f[1]] = str(f[3][0]).rpartition(", in ")[2]
    return binds, kernels


def reexports_of(imports, binds: Mapping[str, str]) -> Reexports | None:
    """`kernel_decorator`'s `lookup` from `imported_triton`'s bindings: for a module, the names
    the file imports from it that it binds to Triton (None where the file imports none). A binding
    reached through a module (`tu.triton` of `import pkg.tu as tu`, or of `from pkg import tu`) is
    the module's name (`pkg.tu`)."""
    if not binds:
        return None

    def lookup(module: str) -> dict[str, str] | None:
        out: dict[str, str] = {}
        for local, qual in binds.items():
            head, _, rest = local.partition(".")
            origin = _origin(imports, head)
            if origin is None:
                continue
            names = [*origin[1], *rest.split(".")] if rest else origin[1]
            if names and _joined(origin[0], names[:-1]) == module:  # (`tu.triton` of `from pkg import tu`: `pkg.tu`'s)
                out[names[-1]] = qual
        return out or None

    return lookup


def decorator_aliases(module: cst.Module, resolver) -> dict[str, str]:
    """The module-level names bound to a Triton decorator (`jit = triton.jit`), to it: a kernel
    under `@jit` was neither listed nor linted, nor its launches (twenty-second read). Only where
    an import binds Triton, and of the module's own statements (no walk of the tree)."""
    if not _names_triton(resolver):
        return {}
    out: dict[str, str] = {}
    for stmt in _module_level(module.body):
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                qual = out.get(dotted(small.value) or "") or resolver.imports.qualify(dotted(small.value) or "")
                if qual in TRITON_DECORATORS:
                    out[small.targets[0].target.value] = qual
    return out


def triton_kernels(
    module: cst.Module,
    resolver,
    in_blocks: bool = False,
    nested: bool = False,
    lookup: Reexports | None = None,
    how: dict[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> dict[str, cst.FunctionDef]:
    """Top-level functions decorated as Triton kernels, by name; with `in_blocks`, also those
    defined at module level inside an `if`, `try` or `with` (`if HAS_TRITON:`); with `nested`,
    also a function's or a class's own (each one lint reports: torchao 0.18.0 defines its kernels
    in the function that builds them), in the order they are written. `lookup` and `how`: a
    decorator re-exported by another module (`_reexported`), and how each such was recognised;
    `aliases`: the module's `decorator_aliases`, where the caller has them already."""
    found: dict[str, cst.FunctionDef] = {}
    if aliases is None:
        aliases = decorator_aliases(module, resolver)
    if nested:
        defined: list[cst.FunctionDef] = []

        class _Defs(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                defined.append(node)

        module.visit(_Defs())
    else:
        level = _module_level(module.body) if in_blocks else module.body
        defined = [s for s in level if isinstance(s, cst.FunctionDef)]
    for fn in defined:
        deco = kernel_decorator(resolver, fn, aliases, lookup)
        if deco is not None:
            found[fn.name.value] = fn
            if deco[1] and how is not None:
                how[fn.name.value] = deco[1]
    return found


def triton_wrapped(module: cst.Module, resolver, nested: bool = False) -> dict[str, tuple[cst.FunctionDef, cst.Call]]:
    """Triton kernels made by a call rather than a decorator: `k = triton.jit(fn)`, or
    `k = triton.autotune(...)(triton.jit(fn))`, `fn` a function of the module; by the name
    bound, with the function and the outer call. Neither `porter kernels` nor lint saw one,
    nor its launch `k[grid](...)` (twenty-first read: xformers' rewritten kernels and many
    benchmarks bind `triton.jit(fn)` to a name). At module level (in `if`/`try`/`with` blocks
    too); with `nested`, in a function's or a class's body as well."""
    if not _names_triton(resolver):
        return {}
    defs, assigns = _defs_and_assigns(module, nested)
    found: dict[str, tuple[cst.FunctionDef, cst.Call]] = {}
    for node in assigns:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            continue
        fn = _wrapped_function(node.value, resolver, defs)
        if fn is not None and isinstance(node.value, cst.Call):
            found.setdefault(node.targets[0].target.value, (fn, node.value))
    return found


def _defs_and_assigns(module: cst.Module, nested: bool) -> tuple[dict[str, cst.FunctionDef], list[cst.Assign]]:
    """The functions (the first of each name) and assignments of `module`, in order: at its own
    level (`_module_level`), or with `nested` anywhere in it."""
    defs: dict[str, cst.FunctionDef] = {}
    assigns: list[cst.Assign] = []

    class _Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            defs.setdefault(node.name.value, node)

        def visit_Assign(self, node: cst.Assign) -> None:
            assigns.append(node)

    if nested:
        module.visit(_Walk())
        return defs, assigns
    for stmt in _module_level(module.body):
        if isinstance(stmt, cst.FunctionDef):
            defs.setdefault(stmt.name.value, stmt)
        elif isinstance(stmt, cst.SimpleStatementLine):
            assigns.extend(s for s in stmt.body if isinstance(s, cst.Assign))
    return defs, assigns


def _names_triton(resolver) -> bool:
    """Whether an import binds a name to Triton: with none, no call is its decorator. Looking
    for them anyway cost lint a second libcst walk of every candidate file (13 CPU s of the
    corpus's cold run)."""
    return any(full == "triton" or full.startswith("triton.") for full in resolver.imports.names.values())


def _wrapped_function(expr: cst.BaseExpression, resolver, defs: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
    """The function of `defs` that `expr` wraps in Triton's decorators, called (`triton.jit(fn)`,
    `triton.autotune(...)(triton.jit(fn))`), or None."""
    for _ in range(8):  # decorators stacked as calls, a few deep
        if not isinstance(expr, cst.Call) or not expr.args:
            return None
        func = expr.func.func if isinstance(expr.func, cst.Call) else expr.func
        if resolver.imports.qualify(dotted(func) or "") not in TRITON_DECORATORS:
            return None
        expr = expr.args[0].value
        if isinstance(expr, cst.Name):
            return defs.get(expr.value)
    return None


def _module_level(body) -> list:
    """The statements of `body` and of the blocks of its `if`, `try` and `with` statements (their
    `else`, `except` and `finally` too), in order: what a module binds at its own level."""
    out: list = []
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        blocks: list[Any] = []
        if isinstance(stmt, cst.If):
            blocks = [stmt.body, stmt.orelse]
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            blocks = [stmt.body, *stmt.handlers, stmt.orelse, stmt.finalbody]
        elif isinstance(stmt, cst.With):
            blocks = [stmt.body]
        inner: list[Any] = []
        for block in blocks:
            if isinstance(block, cst.If):  # an `elif`
                inner.append(block)
            elif isinstance(block, cst.BaseSuite):  # a block's own
                inner.extend(block.body)
            elif block is not None:  # `else`, `except`, `finally`: their block
                inner.extend(block.body.body)
        stack.extend(reversed(inner))
    return out


class KernelsFamily(ReferenceTracker, Family):
    name = "kernels"
    tokens = (
        b"custom_op",
        b"register_kernel",
        b"library",
        b"triton_op",
        b"cpp_extension",
        b"triton",
        b"program_id",  # KERN002's (rules/kernels.toml): a kernel in a file that never spells "triton"
        b"constexpr",
        b"cupy",
        b"pynvml",
        b"nvidia_smi",
        b"pycuda",
        b"numba",
        b"transformer_engine",
        b"deepspeed",
        b"amp_C",
        b"apex",
        b"bitsandbytes",
        b"flash_attn",
        b"xformers",
        b"helion",
        b"deep_ep",
        b'.cu"',
        b".cu'",
        b".cuh",
    )

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """One of its rules' tokens (KERN003's aside: read from the imports), or where `ast` reads
        the file: (KERN003) an import of a library of the table, under an `import` row's prefix
        in a file that is not that library's own (`_own`: DeepSpeed's modules import
        `deepspeed.ops`), or of a name a `use` row's reference can start from (`_reference`
        qualifies names through imports); (KERN005, whose `lib.impl(...)` need not spell
        `library.impl`) a callee named as a registrar method, or an import of a registrar."""
        if rules_admit([c for c in cls.codes() if c != "KERN003"], ctx.enabled, source):
            return True
        if ctx.enabled("KERN002") and triton_imported(ctx.settings.flow or (), source):
            return True
        found = ctx.sites()
        if found is None:
            return True
        if ctx.enabled("KERN003") and _kern003_candidate(ctx.path, found):
            return True
        if not ctx.enabled("KERN005"):
            return False
        if not found.callees.isdisjoint(REGISTRAR_METHODS):
            return True
        return any(base in REGISTRARS for bases in found.imported.values() for base in bases)

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        """Also a file that imports a library of the table (read from its import lines: a
        substring scan per library name costs a pass over the file each)."""
        if super().wanted(ctx, source):
            return True
        if ctx.enabled("KERN002") and triton_imported(ctx.settings.flow or (), source):
            return True  # a launch of a kernel imported from the project, or a decorator (`imported_triton`)
        return any(ctx.enabled(c) for c in cls.codes()) and imports_any(source, _library_heads())

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self._kernels: dict[str, cst.FunctionDef] = {}
        self._wrapped: dict[int, str] = {}  # id(call) -> the name a `triton.jit(fn)` call is bound to
        self._aliases: dict[str, str] = {}  # module-level names bound to a Triton decorator
        self._builds_here: bool | None = None
        self._handled: Callable[[str, Any], bool] | None = None  # libraries.handled, imported on first use
        self._registrations_seen: set[int] = set()
        # `self.k = kernel` (attribute -> the names assigned) and the launches `self.k[grid](...)`:
        # reported at the module's end, where the one name assigned is a kernel of the file
        self._self_assigned: dict[str, set[str]] = {}
        self._self_launches: list[tuple[str, cst.Call]] = []
        # what the project index says of the names the file imports (`imported_triton`)
        binds, self._imported_kernels = imported_triton(ctx.settings)
        self._lookup = reexports_of(ctx.resolver.imports, binds)

    # -- whole-file facts ------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        # at module level in `if HAS_TRITON:` too, by the name Python reads (NFKC), as `porter
        # kernels` lists them: a launch of such a kernel was not reported (eighteenth read)
        self._aliases = decorator_aliases(node, self.ctx.resolver)
        self._kernels = {
            unicodedata.normalize("NFKC", name): fn
            for name, fn in triton_kernels(
                node, self.ctx.resolver, in_blocks=True, lookup=self._lookup, aliases=self._aliases
            ).items()
        }
        # and those a call makes (`k = triton.jit(fn)`): reported at the call, their launches too
        wrapped = triton_wrapped(node, self.ctx.resolver, nested=True)
        self._wrapped = {id(call): name for name, (_, call) in wrapped.items()}
        for name, (fn, _) in wrapped.items():
            self._kernels.setdefault(unicodedata.normalize("NFKC", name), fn)
        for stmt in _import_statements(node):
            self._import(stmt)

    def _import(self, stmt: cst.Import | cst.ImportFrom) -> None:
        names: list[str] = []
        if isinstance(stmt, cst.Import):
            names = [dotted(a.name) or "" for a in stmt.names]
        elif not stmt.relative and stmt.module is not None:
            module = dotted(stmt.module) or ""
            if isinstance(stmt.names, cst.ImportStar):
                names = [module]
            else:
                names = [f"{module}.{dotted(a.name)}" for a in stmt.names]
                names.append(module)
        reported: set[str] = set()
        if not self._kernels and any(q == "triton" or q.startswith("triton.") for q in names):
            # Triton imported where no kernel is defined (a shim that re-exports it): what
            # imports it from here is CUDA-only (guards.py); the import itself is said here
            self.ctx.report(
                "KERN002",
                stmt,
                f"Triton is imported here, and Triton does not run on {self.ctx.target.display}: the "
                "kernels that use it are reported where they are defined",
            )
        if any(q == CPP_EXTENSION or q.startswith(CPP_EXTENSION + ".") for q in names) and not self._builds():
            # no build call in the file (those are reported where they are): say it at the import
            self.ctx.report(
                "KERN001",
                stmt,
                "`torch.utils.cpp_extension` is imported to build or to ask about the project's C++/CUDA "
                "extensions (`CUDA_HOME`, `is_ninja_available`): its CUDA parts do not build for the "
                "target",
            )
        for qual in names:
            row = library_row(qual, self.ctx.target.name)
            if row is None or row.at != "import" or row.prefix in reported or self._own(row.prefix):
                continue
            if self.ctx.owns_module(qual):
                continue  # the project's own module of that name (`cuda.py` beside the file)
            reported.add(row.prefix)
            self.ctx.report(
                "KERN003",
                stmt,
                f"`{row.prefix}` is {row.what}: it does not run on {self.ctx.target.display}",
                advice=row.advice_for(self.ctx.target.name),
            )

    def _builds(self) -> bool:
        """Whether the file calls a cpp_extension builder (once per file: it scans the source)."""
        if self._builds_here is None:
            self._builds_here = bool(_BUILDS.search(self.ctx.source))
        return self._builds_here

    def _own(self, prefix: str) -> bool:
        return owns(self.ctx.path, prefix)

    # -- triton ----------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        for dec in node.decorators:
            if isinstance(dec.decorator, (cst.Call, cst.Attribute, cst.Name)):
                self._registration(dec.decorator, node, None)
        found = kernel_decorator(self.ctx.resolver, node, self._aliases, self._lookup)
        if found is None:
            return
        deco, how = found
        name = node.name.value
        self.ctx.report(
            "KERN002",
            node.name,
            f"Triton kernel `{name}` (`@{deco}`{'; ' + how if how else ''}): Triton does not run on "
            f"{self.ctx.target.display}",
        )

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Call):  # `custom_op(...)(impl)`
            self._registration(node.func, None, node)
        self._registration(node, None, None)
        if id(node) in self._wrapped:
            name = self._wrapped[id(node)]
            maker = self.ctx.qualname(node.func.func if isinstance(node.func, cst.Call) else node.func)
            self.ctx.report(
                "KERN002",
                node,
                f"Triton kernel `{name}` (`{maker}(...)`): Triton does not run on {self.ctx.target.display}",
            )
        func = node.func
        if isinstance(func, cst.Subscript) and self._launch(node, func):
            return
        qual = self.ctx.qualname(func)
        if qual is None or not qual.startswith(CPP_EXTENSION + "."):
            return
        what = qual[len(CPP_EXTENSION) + 1 :]
        if what in ("load", "load_inline"):
            self.ctx.report(
                "KERN001",
                node,
                f"`cpp_extension.{what}` JIT-builds a C++/CUDA extension: its CUDA kernels do not run on "
                f"{self.ctx.target.display}",
            )
        elif what == "CUDAExtension":
            self.ctx.report(
                "KERN001", node, "`CUDAExtension` builds CUDA sources with nvcc, which the target has no use for"
            )
        elif what == "CppExtension":
            self.ctx.report(
                "KERN001",
                node,
                "`CppExtension` builds host C++ ops: they run on the CPU, so device tensors pass through "
                "host memory (a CPU fallback) on every call",
            )

    def _launch(self, node: cst.Call, func: cst.Subscript) -> bool:
        """Reports `k[grid](...)` of a kernel of the file, or of one it imports; notes `self.k[grid]`."""
        if self._kernels and (attr := _self_attribute(func.value)):
            self._self_launches.append((attr, node))
        if isinstance(func.value, cst.Name):
            name = func.value.value
            if unicodedata.normalize("NFKC", name) in self._kernels and not self.ctx.scopes.shadows(name):
                self.ctx.report(
                    "KERN002",
                    node,
                    f"launch of Triton kernel `{name}`: replace with the op `porter kernels --scaffold` writes for it",
                )
                return True
        return bool(self._imported_kernels) and self._imported_launch(node, func.value)

    def _imported_launch(self, node: cst.Call, launched: cst.BaseExpression) -> bool:
        """Reports `ops.scale[grid](...)` (or `scale[grid](...)`) where the project index says the
        name is a Triton kernel the file imports (`imported_triton`), unless a local shadows it."""
        written = dotted(launched) or ""
        if written not in self._imported_kernels or self.ctx.scopes.shadows(written.partition(".")[0]):
            return False
        self.ctx.report(
            "KERN002",
            node,
            f"launch of Triton kernel `{written}` (defined in {self._imported_kernels[written]}): replace with the "
            "op `porter kernels --scaffold` writes for it",
        )
        return True

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._kernels and isinstance(node.value, cst.Name):
            for t in node.targets:
                if attr := _self_attribute(t.target):
                    self._self_assigned.setdefault(attr, set()).add(node.value.value)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """The launches through `self` (`self._kernel[grid](...)`) of the one name the file assigns
        to that attribute, where it is a kernel of the file, as `porter kernels` reads them: lint
        reported none (twenty-second read's leftover)."""
        for attr, call in self._self_launches:
            assigned = self._self_assigned.get(attr, set())
            name = next(iter(assigned)) if len(assigned) == 1 else ""
            if unicodedata.normalize("NFKC", name) in self._kernels:
                self.ctx.report(
                    "KERN002",
                    call,
                    f"launch of Triton kernel `{name}` (through `self.{attr}`): replace with the op `porter kernels"
                    " --scaffold` writes for it",
                )
        return updated

    # -- registrations ---------------------------------------------------------------------

    def _registration(self, reg: cst.BaseExpression, impl: cst.FunctionDef | None, applied: cst.Call | None) -> None:
        """`reg` registers an op; `impl` is the decorated function, `applied` the call that
        passes the implementation (`custom_op(...)(impl)`). A CUDA-only implementation keeps
        its `"cuda"` and is reported; any other is left to the device family to port."""
        if id(reg) in self._registrations_seen:
            return
        self._registrations_seen.add(id(reg))
        found = registration(self.ctx.resolver, reg)
        if found is None:
            return
        triton_op, devices = found
        call = reg if isinstance(reg, cst.Call) else None
        facts = cuda_only_facts(self.ctx)
        why = None
        if impl is not None:
            why = facts.unit_reason(impl)
        else:
            for arg in [*(call.args if call is not None else ()), *(applied.args if applied is not None else ())]:
                named = arg.keyword is None or arg.keyword.value in _IMPL_KEYWORDS
                if named and isinstance(arg.value, cst.Name) and (why := facts.name_reason(arg.value.value)):
                    break
        if triton_op:
            why = why or "a Triton op"
        if not why:
            return
        self.ctx.keep_cuda.update(id(s) for s in devices)
        name = impl.name.value if impl is not None else self.ctx.code(reg)[:60]
        what = "a Triton op" if triton_op else "an op registered for CUDA"
        self.ctx.report(
            "KERN005",
            reg,
            f"`{name}` is {what} and its implementation is CUDA-only ({why}): kept on CUDA, "
            f"so {self.ctx.target.display} has no kernel for it",
        )

    # -- .cu sources named in Python -------------------------------------------------------

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        value = string_value(original)
        if value and value.endswith((".cu", ".cuh")) and "\n" not in value and len(value) < 300:
            self.ctx.report("KERN004", original, f"CUDA source `{value}`: compiled by nvcc for NVIDIA GPUs only")
        return updated

    # -- references ------------------------------------------------------------------------

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if self.whole_reference(original) and original.value in self.ctx.imports.names:
            self._reference(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if self.whole_reference(original):
            self._reference(original)
        return updated

    def _reference(self, node: cst.BaseExpression) -> None:
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name):
            return
        bound = self.ctx.imports.names.get(head.value)
        if bound is None or bound.split(".")[0] not in _TOPS():
            return  # cheap exit: not a name of a library porter knows
        qual = self.ctx.qualname(node)
        if qual is None:
            return
        if qual == f"{CPP_EXTENSION}.BuildExtension" or qual.startswith(f"{CPP_EXTENSION}.BuildExtension."):
            self.ctx.report(
                "KERN001", node, "`BuildExtension` compiles the package's C++/CUDA extensions at install time"
            )
            return
        row = library_row(qual, self.ctx.target.name)
        if row is None or (row.at != "use" and not row.uses) or self.ctx.owns_module(qual):
            return
        if row.uses and self.ctx.in_cuda_only_code() is not None:
            return  # code left as CUDA's (GUARD003, BACK003) is reported as a whole
        if self._handled is None:
            from porter.codemods.libraries import handled

            self._handled = handled
        if self._handled(qual, self.ctx):
            return
        self.ctx.report(
            "KERN003",
            node,
            f"`{qual}` is {row.what}: it does not run on {self.ctx.target.display}",
            advice=row.advice_for(self.ctx.target.name),
        )


def registration(resolver, reg: cst.BaseExpression) -> tuple[bool, list[cst.BaseExpression]] | None:
    """Whether `reg` (a decorator or a call) registers an op: (is a `triton_op`, its `"cuda"`
    device strings), or None when it registers nothing for CUDA."""
    call = reg if isinstance(reg, cst.Call) else None
    func = call.func if call is not None else reg
    qual = resolver.qualname(func)
    method = isinstance(func, cst.Attribute) and qual is None and func.attr.value in REGISTRAR_METHODS
    if qual not in REGISTRARS and not method:
        return None
    devices = _cuda_device_strings(call) if call is not None else []
    triton_op = qual == "torch.library.triton_op"
    return (triton_op, devices) if devices or triton_op else None


def cuda_only_registrations(module: cst.Module, resolver, facts) -> list[tuple[str, cst.FunctionDef, str]]:
    """(op name, implementation, why it is CUDA-only) for each decorated registration in the
    module's top-level code (`porter kernels` lists them)."""
    found = []
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        stmt = stack.pop(0)
        if isinstance(stmt, (cst.If, cst.Try)):
            stack[:0] = list(stmt.body.body)
            continue
        if not isinstance(stmt, cst.FunctionDef):
            continue
        for dec in stmt.decorators:
            reg = registration(resolver, dec.decorator)
            if reg is None:
                continue
            why = facts.unit_reason(stmt) or ("a Triton op" if reg[0] else None)
            if why:
                call = dec.decorator if isinstance(dec.decorator, cst.Call) else None
                named = string_value(call.args[0].value) if call is not None and call.args else None
                found.append((named or stmt.name.value, stmt, why))
                break
    return found


def _cuda_device_strings(call: cst.Call) -> list[cst.BaseExpression]:
    """The `"cuda"` strings a registration call names its device with (`device_types=`,
    a positional device type, a tuple of them); `"CUDA"` dispatch keys are never ported."""
    found: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value not in ("device_types", "types", "device_type"):
            continue
        values = arg.value.elements if isinstance(arg.value, (cst.Tuple, cst.List)) else [arg.value]
        for v in values:
            node = v.value if isinstance(v, cst.BaseElement) else v
            if (string_value(node) or "").lower() == "cuda":
                found.append(node)
    return found


def _self_attribute(node: cst.BaseExpression) -> str | None:
    """`name` where `node` is `self.name`, else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None
