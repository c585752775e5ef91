"""What the run's Python still imports after the port, of the CUDA-only packages.

A dependency file may drop `flash-attn` only where nothing imports `flash_attn` any more:
porter rewrote its calls, or nothing used it. The runner ports the Python (and the notebooks)
first, hands each result here, and ports the dependency files last with the modules that are
still imported (`Settings.imported_after_port`).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable
from functools import lru_cache

from porter.core import kinds
from porter.core.reading import too_large_to_parse
from porter.files.facts import cuda_only_modules
from porter.core.findings import FileResult, FileStatus

# the dependency files that read the facts (ported after everything else)
DEFERRED = frozenset({kinds.REQUIREMENTS, kinds.PYPROJECT, kinds.SETUP_CFG, kinds.CONDA})
_SOURCES = (kinds.PYTHON, kinds.SETUP_PY, kinds.NOTEBOOK, None)


def wants_imports(name: str) -> bool:
    return kinds.kind_of(name) in DEFERRED


@lru_cache(maxsize=16)
def _modules_re(modules: tuple[str, ...] | None = None) -> re.Pattern[bytes]:
    names = sorted(
        {m.split(".")[0] for m in (modules if modules is not None else cuda_only_modules())}, key=len, reverse=True
    )
    return re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")


def imports_cuda_only(source: bytes, modules: tuple[str, ...] | None = None) -> bool:
    """Whether `source` may import one of `modules` (default: every CUDA-only package's). A
    bytes scan, exact enough: a name in a comment costs a full port of that file in a
    findings-only run, nothing else."""
    if modules == ():
        return False
    return b"import" in source and _modules_re(modules).search(source) is not None


def named_modules(sources: list[bytes]) -> tuple[str, ...]:
    """The modules of the CUDA-only packages these dependency files name (a bytes scan): the
    only imports whose fate after the port a run has to know."""
    from porter.files.facts import cuda_only_packages

    found: set[str] = set()
    for package in cuda_only_packages():
        names = [n.encode() for n in package.names] + ([package.prefix.encode()] if package.prefix else [])
        spellings = {n for n in names} | {n.replace(b"-", b"_") for n in names}
        if package.modules and any(s in data.lower() for data in sources for s in spellings):
            found.update(package.modules)
    return tuple(sorted(found))


def imported(tree: ast.AST) -> set[str]:
    """The CUDA-only modules an `ast` tree imports (`flash_attn` for `from flash_attn.x import y`)."""
    wanted = cuda_only_modules()
    found: set[str] = set()
    for node in _statements(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            for module in wanted:
                if name == module or name.startswith(module + "."):
                    found.add(module)
    return found


# the fields of a statement that hold statements (an import is a statement: no expression holds one)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement of the tree (and the except handlers and match cases between them):
    what `ast.walk` yields that can be an import, without walking a single expression."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        for field in _BODIES:
            inner = getattr(node, field, None)
            if type(inner) is list:
                stack.extend(inner)
    return out


def _python_sources(kind: str | None, data: bytes) -> list[str]:
    if kind != kinds.NOTEBOOK:
        return [data.decode("utf-8", "replace")]
    try:
        cells = json.loads(data).get("cells", [])
    except (ValueError, AttributeError):
        return []
    out = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            text = "".join(src) if isinstance(src, list) else str(src)
            # IPython's escapes are no Python: blank them (their lines import nothing)
            out.append("\n".join("" if line.lstrip().startswith(("!", "%")) else line for line in text.splitlines()))
    return out


class ImportsAfterPort:
    """The CUDA-only modules that the results handed to `add` import after the port."""

    def __init__(self) -> None:
        self._found: set[str] = set()
        self._python = 0  # Python sources seen: without any, nothing is known

    def add(
        self,
        result: FileResult,
        read: Callable[[], bytes | None] | None = None,
        known: tuple[str, ...] | None = None,
    ) -> tuple[str, ...]:
        """Count the file's imports in; they are returned (sorted), for the stat index to keep.
        `read`: the file's bytes, for a result that carries none (a warm run's stat index
        answers an unchanged file without reading it). `known`: what an earlier `add` of the
        same result returned (the stat index kept it): then nothing is read or parsed."""
        kind = kinds.kind_of(result.path)
        if kind in _SOURCES:
            self._python += 1
        found = known if known is not None else tuple(sorted(self._imports(kind, result, read)))
        self._found.update(found)
        return found

    def _imports(self, kind: str | None, result: FileResult, read: Callable[[], bytes | None] | None) -> set[str]:
        if kind not in _SOURCES or result.status is FileStatus.ERROR:
            # a file porter could not read still imports what it imported
            if result.status is FileStatus.ERROR and result.original_source is not None and kind in _SOURCES:
                return _scan(kind, result.original_source)
            return set()
        data = result.new_source if result.new_source is not None else result.original_source
        if data is None and read is not None and result.status is not FileStatus.CHANGED:
            data = read()
        return _scan(kind, data) if data is not None else set()

    def modules(self) -> tuple[str, ...] | None:
        """The modules still imported; None when the run had no Python to tell."""
        return tuple(sorted(self._found)) if self._python else None


def _parsed(text: str) -> ast.Module | None:
    """The tree of `text`, or None where it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _scan(kind: str | None, data: bytes) -> set[str]:
    """The CUDA-only modules the Python in `data` imports."""
    found: set[str] = set()
    if not imports_cuda_only(data):
        return found
    texts = _python_sources(kind, data)
    # past the size porter parses (a notebook: its code cells, as its porter reads them), a file
    # is not parsed here either (its porter said so): it is read as unreadable Python is
    size = len(data) if kind != kinds.NOTEBOOK else sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    unparsed = too_large_to_parse(size) is not None
    for text in texts:
        tree = None if unparsed else _parsed(text)
        if tree is None:
            # unreadable Python (or not parsed): count every CUDA-only name it mentions as imported
            found.update(m for m in cuda_only_modules() if m.split(".")[0] in text)
        else:
            found |= imported(tree)
    return found
