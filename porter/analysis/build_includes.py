"""The `-I` folders a project's build gives its C++ sources, read (never run) from its build files:
`include_dirs=` of setup.py (`CUDAExtension(..., include_dirs=[Path(this_dir) / "csrc"])`, or a
list built in a variable passed there) and `include_directories` / `target_include_directories`
of CMakeLists.txt. The kernel inventory finds the headers a `.cu` file includes in them (flash-attn
2.8.3's `#include "namespace_config.h"` is in `csrc/flash_attn`, its setup.py's -I folder)."""

from __future__ import annotations

import ast
import copy
import os
import re
from pathlib import Path

from porter.analysis.program import called_name
from porter.core.reading import Unreadable, read_regular

_BUILD_FILES = ("setup.py", "CMakeLists.txt")
_MAX_BUILD_BYTES = 2**20  # a build file larger than this is not read for its folders
_MAX_DIRS = 64  # folders kept at most
_MAX_ITEMS = 1024  # the paths of one `include_dirs=` value read at most
_NAME_DEPTH = 8  # a name's value read through this many names at most (`a = b`, `b = ...`)
# the nodes read for the paths of one setup.py at most, and a path's length: a name used many times
# in the value of a name used many times (`a1 = join(a0, a0, ...)`, `a2 = join(a1, ...)`) made
# work and text exponential in the names' depth (a 10 KB setup.py stalled `porter kernels`)
_PATH_STEPS = 2_000  # for one path
_FILE_STEPS = 200_000  # for all of one setup.py's
_MAX_PATH = 4096
# `include_directories(...)` / `target_include_directories(tgt PUBLIC ...)` (CMake's commands are
# of any case); their arguments to the `)`, never past a line's own `(`
_CMAKE_INCLUDES = re.compile(r"\b(target_)?include_directories[ \t]*\(([^()]*)\)", re.I)
_CMAKE_KEYWORDS = {"SYSTEM", "BEFORE", "AFTER", "PUBLIC", "PRIVATE", "INTERFACE"}
# `$<BUILD_INTERFACE:dir>`, the folder a target's own build uses (any other generator expression is left out, so
# `$<INSTALL_INTERFACE:include>`): read as an unknown variable, a header found only there was "not read" (thirty-second
# read, pyops2)
_CMAKE_BUILD_INTERFACE = re.compile(r"\$<BUILD_INTERFACE:([^<>$]*(?:\$\{\w+\}[^<>$]*)*)>")
_CMAKE_HERE = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR", "PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR")


def include_dirs(root: Path, base: Path, source: Path | None = None) -> tuple[Path, ...]:
    """The existing folders under `base` (real paths) that the build files under `root` (or, for
    a file, beside it) give as `-I` folders, in the order found; with a `source` (a file or its
    folder), a setup.py's and a CMake `include_directories`' (a folder's own, for its targets) of
    the build files whose project folder holds it only (`target_include_directories` names a
    target, whose sources may be anywhere: kept). A vendored project's `include_directories(include)`
    gave its `keys.h` to a source outside it, taken for the one setup.py's `include_dirs=` gives: an
    op said CUDA-only that the build compiles for the CPU (thirty-second read, pyops2)."""
    found: list[Path] = []
    top = os.path.realpath(base)
    for build in _build_files(root):
        try:
            data = read_regular(build, limit=_MAX_BUILD_BYTES)
        except Unreadable:
            continue
        text = data.decode("utf-8", errors="replace")
        project = _project_of(build, top)
        holds = source is None or within(os.path.realpath(source), os.path.realpath(project))
        if build.name == "setup.py":
            parts = _setup_dirs(text, build) if holds else []
        else:
            parts = _cmake_dirs(text, os.path.relpath(build.parent, project), folder_wide=holds)
        for part in parts:
            folder = os.path.realpath(project / part)
            if os.path.isdir(folder) and within(folder, top) and Path(folder) not in found:
                found.append(Path(folder))
                if len(found) == _MAX_DIRS:
                    return tuple(found)
    return tuple(found)


def build_root(source: Path, top: Path) -> Path | None:
    """The highest folder from the source's own up to `top` (real paths) that holds a setup.py or a
    CMakeLists.txt: the project whose build files `include_dirs` reads for it, as `porter kernels` on
    that project does (lint's working folder may hold far more than the project); None where none does."""
    folder, stop, found = os.path.realpath(source.parent), os.path.realpath(top), None
    while within(folder, stop):
        if any(os.path.isfile(os.path.join(folder, name)) for name in _BUILD_FILES):
            found = Path(folder)
        if folder == stop or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    return found


def within(path: str, folder: str) -> bool:
    """Whether real path `path` is `folder` or under it."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive
        return False


def _build_files(root: Path) -> list[Path]:
    if root.is_file():
        root = root.parent
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if not d.startswith(".") and d not in ("build", "dist", "node_modules", "__pycache__")
        ]
        out.extend(Path(dirpath) / f for f in filenames if f in _BUILD_FILES or f.endswith(".cmake"))
    return sorted(out)


def _project_of(build: Path, top: str) -> Path:
    """The folder a build file's relative folders start from: its own, or, for a CMake module
    (`cmake/utils.cmake`, which a CMakeLists.txt `include()`s: CMake keeps the includer's source
    folder), the nearest folder above it, within `top`, that holds a CMakeLists.txt (vllm 0.34.0's
    `target_include_directories(... PRIVATE csrc ...)` in `cmake/utils.cmake` means its `csrc`)."""
    if not build.name.endswith(".cmake"):
        return build.parent
    for folder in build.parents:
        if not within(os.path.realpath(folder), top):
            break
        if (folder / "CMakeLists.txt").is_file():
            return folder
    return build.parent


def _cmake_dirs(text: str, list_dir: str = ".", folder_wide: bool = True) -> list[str]:
    """The folders of a CMake file's include commands, relative to its project's folder (`list_dir`:
    the file's own folder from there, `${CMAKE_CURRENT_LIST_DIR}`); an argument of a variable porter
    cannot know (`${CUTLASS_DIR}/include`) or a generator expression but `$<BUILD_INTERFACE:...>`
    is left out; `folder_wide` False: `target_include_directories`' only."""
    text = re.sub(r"#[^\n]*", "", text)
    out: list[str] = []
    for m in _CMAKE_INCLUDES.finditer(text):
        if not (m.group(1) or folder_wide):  # (`include_directories` of a folder that does not hold the source)
            continue
        args = [a.strip('"') for a in m.group(2).split()]
        for arg in args[1:] if m.group(1) else args:
            if arg.upper() in _CMAKE_KEYWORDS:
                continue
            arg = _CMAKE_BUILD_INTERFACE.sub(r"\1", arg)
            arg = arg.replace("${CMAKE_CURRENT_LIST_DIR}", list_dir)
            for var in _CMAKE_HERE:
                arg = arg.replace("${" + var + "}", ".")
            if "$" not in arg and arg:
                out.append(arg)
    return out


def _setup_dirs(text: str, setup: Path) -> list[str]:
    """The folders a setup.py passes as `include_dirs=`: a list of paths, or a variable holding
    one (assigned, `+=`, `.append`/`.extend`/`.insert`), each path read where porter can read it
    without running the file (strings, `Path(...) / "x"`, `os.path.join`, `os.path.abspath`, a
    name assigned one, `__file__`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    assigned: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, node.value)
    out: list[str] = []
    left = _FILE_STEPS
    for value in _given(tree):
        for item in _path_items(value, assigned, _NAME_DEPTH)[:_MAX_ITEMS]:
            steps = [min(_PATH_STEPS, left)]
            found = _path(item, assigned, setup, _NAME_DEPTH, steps)
            left -= min(_PATH_STEPS, left) - max(steps[0], 0)
            if found is not None:
                out.append(found)
    return out


def _given(tree: ast.Module) -> list[ast.expr]:
    """What a setup.py passes as `include_dirs=`, and what it puts in a variable passed there."""
    given: list[ast.expr] = []
    variables: set[str] = set()
    for node in ast.walk(tree):
        for kw in node.keywords if isinstance(node, ast.Call) else ():
            if kw.arg == "include_dirs":
                (variables.add(kw.value.id) if isinstance(kw.value, ast.Name) else given.append(kw.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in variables for t in node.targets):
            given.append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in variables:
            given.append(node.value)
        elif _adds_to(node, variables):
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            given.append(node.args[-1] if node.func.attr == "insert" else node.args[0])
    return given


def _path_items(value: ast.expr, assigned: dict[str, ast.expr], depth: int) -> list[ast.expr]:
    """The paths of what is given as `include_dirs=`: a list's items, those of a list starred in it (`[*BASE, x]`), of
    both sides of a `+` of lists (`INC = [a] + [b]`) and of a name assigned a list (read as one path, such a list's
    folders were lost, and a header found only there was "not read": thirty-second read, pyops2)."""
    if depth <= 0:
        return []
    if isinstance(value, (ast.List, ast.Tuple)):
        return [
            path
            for item in value.elts
            for path in (_path_items(item.value, assigned, depth - 1) if isinstance(item, ast.Starred) else [item])
        ]
    if isinstance(value, ast.ListComp) and _over_names(value):  # `[os.path.join(here, d) for d in ("a", "b")]`
        name = value.generators[0].target
        assert isinstance(name, ast.Name)
        items = _path_items(value.generators[0].iter, assigned, depth - 1)
        return [_with_item(value.elt, name.id, item) for item in items]
    if _is_list(value, assigned, depth):
        if isinstance(value, ast.Name):
            return _path_items(assigned[value.id], assigned, depth - 1)
        assert isinstance(value, ast.BinOp)
        return _path_items(value.left, assigned, depth - 1) + _path_items(value.right, assigned, depth - 1)
    return [value]


def _over_names(comprehension: ast.ListComp) -> bool:
    """Whether a list comprehension runs one name over its items, unfiltered (`[f(d) for d in DIRS]`): its paths were
    not read, and a key's header found only there was "not read" (thirty-second pyops2 read's leftover)."""
    generators = comprehension.generators
    return len(generators) == 1 and isinstance(generators[0].target, ast.Name) and not generators[0].ifs


class _Bound(ast.NodeTransformer):
    """A comprehension's element with its name given one item (`_with_item`)."""

    def __init__(self, name: str, item: ast.expr) -> None:
        self.name, self.item = name, item

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.item if node.id == self.name else node


def _with_item(element: ast.expr, name: str, item: ast.expr) -> ast.expr:
    """`element` with the name `name` standing for `item` (a copy: the tree is left as it is)."""
    bound = _Bound(name, item).visit(copy.deepcopy(element))
    return bound if isinstance(bound, ast.expr) else element


def _is_list(value: ast.expr, assigned: dict[str, ast.expr], depth: int) -> bool:
    """Whether `value` is a list or tuple display, a `+` with one on a side, or a name assigned one (`+` of paths
    is a path: `here + "/csrc"`)."""
    if depth <= 0:
        return False
    if isinstance(value, (ast.List, ast.Tuple)):
        return True
    if isinstance(value, ast.Name) and value.id in assigned:
        return _is_list(assigned[value.id], assigned, depth - 1)
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and (_is_list(value.left, assigned, depth - 1) or _is_list(value.right, assigned, depth - 1))
    )


def _adds_to(node: ast.AST, variables: set[str]) -> bool:
    """Whether `node` is `v.append(x)`, `v.extend(xs)` or `v.insert(i, x)` of one of `variables`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in variables
        and node.func.attr in ("append", "extend", "insert")
        and bool(node.args)
    )


def _path(node: ast.expr, assigned: dict[str, ast.expr], setup: Path, depth: int, steps: list[int]) -> str | None:
    """The path `node` stands for, where it is made of strings, `__file__`, names assigned such
    paths and path calls, within `steps` nodes read and `_MAX_PATH` characters; else None."""
    steps[0] -= 1
    if depth <= 0 or steps[0] < 0:
        return None
    found = _path_of(node, assigned, setup, depth, steps)
    return found if found is None or len(found) <= _MAX_PATH else None


def _path_of(node: ast.expr, assigned: dict[str, ast.expr], setup: Path, depth: int, steps: list[int]) -> str | None:
    """`_path` of one node."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return str(setup)
        return _path(assigned[node.id], assigned, setup, depth - 1, steps) if node.id in assigned else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        left = _path(node.left, assigned, setup, depth - 1, steps)
        right = _path(node.right, assigned, setup, depth - 1, steps)
        if left is None or right is None:
            return None
        return os.path.join(left, right) if isinstance(node.op, ast.Div) else left + right
    if isinstance(node, ast.JoinedStr):  # `f"{here}/csrc"`: its parts joined, each a path, none formatted
        parts = [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
        if any(
            isinstance(v, ast.FormattedValue) and (v.format_spec or v.conversion not in (-1, 115)) for v in node.values
        ):
            return None
        found = [_path(part, assigned, setup, depth - 1, steps) for part in parts]
        return None if None in found else "".join(p for p in found if p is not None)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path(node.value, assigned, setup, depth - 1, steps)
        return None if inner is None else os.path.dirname(inner)
    if isinstance(node, ast.Call) and not node.keywords:
        return _path_call(node, assigned, setup, depth, steps)
    return None


def _path_call(node: ast.Call, assigned: dict[str, ast.expr], setup: Path, depth: int, steps: list[int]) -> str | None:
    """The path a call of `os.path`'s or `pathlib`'s stands for (`_path`)."""
    func = node.func
    name = called_name(node)
    if isinstance(func, ast.Attribute) and name in ("resolve", "absolute") and not node.args:
        return _path(func.value, assigned, setup, depth - 1, steps)
    parts = [p for a in node.args if (p := _path(a, assigned, setup, depth - 1, steps)) is not None]
    if not parts or len(parts) < len(node.args):
        return None
    if name == "joinpath" and isinstance(func, ast.Attribute):  # `here.joinpath("csrc")`
        base = _path(func.value, assigned, setup, depth - 1, steps)
        return None if base is None else os.path.join(base, *parts)
    if name in ("join", "Path", "PurePath", "PosixPath"):
        return os.path.join(*parts)
    if name in ("abspath", "realpath", "normpath", "str", "fspath") and len(parts) == 1:
        return parts[0]
    if name == "dirname" and len(parts) == 1:
        return os.path.dirname(parts[0])
    return None
