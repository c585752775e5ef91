"""A project's own compiled CUDA extensions, from its build files and its sources.

A `_C` module built from `.cu` files takes device pointers: a tensor of the target sent into
it fails, so code that reaches it is CUDA-only (the guard analysis keeps it on CUDA) and its
tests stay CUDA tests. What the project builds is evidence, read here without running
anything:

- `CUDAExtension("pkg._C", sources=[...])` in a build script (setup.py), also through a
  name bound to `CUDAExtension` (`extension = CUDAExtension` ... `extension("pkg._C", ...)`,
  as detectron2 writes it); a `CppExtension` whose sources name `.cu` files;
- `torch.utils.cpp_extension.load(name=..., sources=[... .cu])` in another module (its
  result, imported elsewhere, is covered by porter.analysis.cuda_only_index);
- a module the project imports from its own packages that no Python file of the project
  provides and whose name says compiled (`_C`, `_ext`, `*_cuda`, `*_C`), in a project that
  has `.cu` / `.cuh` sources;
- a module-level name bound to a loader's result, `ext_module = ext_loader.load_ext('_ext',
  [...])` (mmcv): the loader's first argument names one of those modules.

A build script's name may be a variable set to a string in the same file (`ext_name =
'mmcv._ext'` ... `extension(name=ext_name, ...)`).

Each extension is named by its dotted module (as built, or as imported) with why.
"""

from __future__ import annotations

import ast
import re

from porter.analysis.program import dotted

# bytes a build file shows (the ast is read only then)
TOKENS = (b"CUDAExtension", b"CppExtension")
CUDA_SUFFIXES = (".cu", ".cuh")
# an import line that may bind a compiled module (`from . import _C`, `import pkg._C as C`)
# (from each line's first `import` only, which sees the most of the line: from every `import`
# it scanned to the line's end, and 20,000 on one line cost 14 s)
IMPORT_HINT = re.compile(
    rb"^(?=([^\n]*?import))\1[^\n]*\b(?:_C|_ext|_cuda|_kernels|\w+_C|\w+_cuda|\w+_ext)\b", re.MULTILINE
)


def search_lines(pattern: re.Pattern[bytes], source: bytes, word: bytes = b"import") -> bool:
    """`pattern.search(source)` for a MULTILINE `pattern` that matches only from the start of a
    line holding `word`, within that line (`IMPORT_HINT`): each such line is matched alone
    rather than every line start of the file tried (the pattern's look for `import` ran over
    every line of every file: 0.7 CPU s of the bench corpus, now 0.05)."""
    at = source.find(word)
    while at != -1:
        end = source.find(b"\n", at)
        end = len(source) if end == -1 else end
        if pattern.match(source, source.rfind(b"\n", 0, at) + 1, end):
            return True
        at = source.find(word, end)
    return False


def hints_import(source: bytes) -> bool:
    """`IMPORT_HINT.search(source)`: an import line that may bind a compiled module."""
    return search_lines(IMPORT_HINT, source)


# the last part of a module name that says it is compiled
COMPILED_NAME = re.compile(r"^(?:_C|_ext|_cuda|_kernels|.+_C|.+_cuda|.+_cuda_ext|.+_ext)$")


# `name = loader('module', ...)` at the start of a line (the loader's result bound at module level)
LOADER = re.compile(rb"""^(\w+)[ \t]*=[ \t]*([\w.]+)\([ \t\r\n]*['"]([\w.]+)['"]""", re.MULTILINE)


def _strings(node: ast.AST | None, consts: dict[str, str] | None = None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and consts and node.id in consts:
        return [consts[node.id]]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e, consts)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left, consts) + _strings(node.right, consts)
    return []


def _string_names(tree: ast.AST) -> dict[str, str]:
    """Names the file sets to one string, and only ever to that one (`ext_name = 'mmcv._ext'`)."""
    seen: dict[str, set[str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            value = (
                node.value.value if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) else None
            )
            for t in node.targets:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, set()).add(value)
    return {n: next(iter(v)) for n, v in seen.items() if len(v) == 1 and None not in v}  # type: ignore[misc]


def loaded_extensions(source: bytes) -> list[tuple[str, str, str]]:
    """(local name, loader, module named) for each `name = loader('module', ...)` at module
    level whose module's last part says compiled (`_ext`, `_C`, ...)."""
    out = []
    for m in LOADER.finditer(source):
        module = m.group(3).decode()
        if COMPILED_NAME.match(module.rpartition(".")[2]):
            out.append((m.group(1).decode(), m.group(2).decode(), module))
    return out


def _argument(call: ast.Call, keyword: str, index: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[index] if len(call.args) > index else None


def built_extensions(path: str, source: bytes) -> dict[str, str]:
    """module -> why, for each CUDA extension a build file declares."""
    if not any(t in source for t in TOKENS):
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    # names bound to CUDAExtension somewhere in the file (`extension = CUDAExtension`)
    cuda_names = {"CUDAExtension"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and (dotted(node.value) or "").rpartition(".")[2] == "CUDAExtension":
            cuda_names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    sources_mention_cu = b".cu" in source
    consts = _string_names(tree)
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = (dotted(node.func) or "").rpartition(".")[2]
        names = _strings(_argument(node, "name", 0), consts)
        if not names:
            continue
        sources = _strings(_argument(node, "sources", 1), consts)
        cu = [s for s in sources if s.endswith(CUDA_SUFFIXES)]
        where = f"{path}:{node.lineno}"
        if func in cuda_names:
            shown = (
                f" from {', '.join(cu[:3])}{' ...' if len(cu) > 3 else ''}"
                if cu
                else (" (its sources are computed; the file names .cu files)" if sources_mention_cu else "")
            )
            how = "`CUDAExtension`" if func == "CUDAExtension" else f"`{func}` (bound to `CUDAExtension`)"
            out.setdefault(names[0], f"a CUDA extension built by {how} in {where}{shown}")
        elif func == "CppExtension" and cu:
            out.setdefault(names[0], f"built by `CppExtension` in {where} from CUDA sources ({', '.join(cu[:3])})")
    return out


def compiled(module: str, project: set[str]) -> bool:
    """Whether `module` is a compiled module of the project: its name says so, no Python file
    of the project provides it, and its package is one of the project's."""
    parent, _, leaf = module.rpartition(".")
    if not parent or not COMPILED_NAME.match(leaf) or _known(module, project):
        return False
    return _known(parent, project) or any(_known(parent, {m.rpartition(".")[0]}) for m in project if "." in m)


def _known(module: str, names: set[str]) -> bool:
    """`module` is one of `names`, either possibly with a longer prefix (paths name modules
    from where porter was run)."""
    return module in names or any(n.endswith("." + module) or module.endswith("." + n) for n in names)
