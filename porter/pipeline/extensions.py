"""A project's own compiled CUDA extensions, from its build files and its sources.

A `_C` module built from `.cu` files takes device pointers: a tensor of the target sent into
it fails, so code that reaches it is CUDA-only (the guard analysis keeps it on CUDA) and its
tests stay CUDA tests. What the project builds is evidence, read here without running
anything:

- `CUDAExtension("pkg._C", sources=[...])` in a build script (setup.py), also through a
  name bound to `CUDAExtension` (`extension = CUDAExtension` ... `extension("pkg._C", ...)`,
  as detectron2 writes it); a `CppExtension` whose sources name `.cu` files;
- `torch.utils.cpp_extension.load(name=..., sources=[... .cu])` in another module (its
  result, imported elsewhere, is covered by porter.pipeline.cuda_only_index);
- a module the project imports from its own packages that no Python file of the project
  provides and whose name says compiled (`_C`, `_ext`, `*_cuda`, `*_C`), in a project that
  has `.cu` / `.cuh` sources.

Each extension is named by its dotted module (as built, or as imported) with why.
"""

from __future__ import annotations

import ast
import re

from porter.pipeline.index import dotted

# bytes a build file shows (the ast is read only then)
TOKENS = (b"CUDAExtension", b"CppExtension")
CUDA_SUFFIXES = (".cu", ".cuh")
# an import line that may bind a compiled module (`from . import _C`, `import pkg._C as C`)
IMPORT_HINT = re.compile(rb"import[^\n]*\b(?:_C|_ext|_cuda|_kernels|\w+_C|\w+_cuda|\w+_ext)\b")
# the last part of a module name that says it is compiled
COMPILED_NAME = re.compile(r"^(?:_C|_ext|_cuda|_kernels|.+_C|.+_cuda|.+_cuda_ext|.+_ext)$")


def _strings(node: ast.AST | None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left) + _strings(node.right)
    return []


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
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = (dotted(node.func) or "").rpartition(".")[2]
        names = _strings(_argument(node, "name", 0))
        if not names:
            continue
        sources = _strings(_argument(node, "sources", 1))
        cu = [s for s in sources if s.endswith(CUDA_SUFFIXES)]
        where = f"{path}:{node.lineno}"
        if func in cuda_names:
            shown = f" from {', '.join(cu[:3])}{' ...' if len(cu) > 3 else ''}" if cu else (" (its sources are computed; the file names .cu files)" if sources_mention_cu else "")
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
