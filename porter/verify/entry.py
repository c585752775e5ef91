"""How porter's side processes (porter.verify.launch, porter.verify.worker) find porter's own
modules, and leave the program the imports `python ARGV...` gives it. Standard library only:
run before sys.path is set."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The launcher (and module mode's porter.verify.worker) is run by its file path
# (`python .../porter/verify/launch.py`), never with `-m` from the command's folder: a project
# holding its own `porter` package (or `porter.py`) was looked up first there, "No module named
# 'porter.verify'". The entry python put first on sys.path for it (this file's folder) is
# replaced by porter's own root while porter's modules load, and by the program's own entry (its
# script's folder, the working folder for -m and -c) when the program starts, so the program
# sees the sys.path that `python ARGV...` gives it.
_OWN_ENTRY: str | None = None

# what the side imports once the program runs, under each top-level name it needs then: loaded
# before the program starts when the program's folder holds a module of that name (its own
# `porter` package, a `safetensors.py`), which then takes the name for the program, as under
# `python ARGV...`, while porter keeps its own modules by object (and under their full names)
_LATE_IMPORTS = {
    "porter": (
        "porter.core.reading",
        "porter.core.textsafe",
        "porter.pipeline.writer",
        "porter.verify.capture",
        "porter.verify.collectives",
        "porter.verify.devices",
        "porter.verify.probes",
        "porter.verify.recorder",
        "porter.verify.rng",
        "porter.verify.shapes",
        "porter.verify.shim",
        "porter.verify.sides",
        "porter.verify.tracefile",
        "porter.verify.worker",
    ),
    "safetensors": ("safetensors", "safetensors.torch"),  # the trace is written with it
}


def own_entry() -> None:
    """Run by file path (this launcher, or porter.verify.worker beside it): porter's root, not
    this folder, first on sys.path."""
    global _OWN_ENTRY
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == here:
        sys.path[0] = _OWN_ENTRY = os.path.dirname(os.path.dirname(here))


def program_path(entry: str) -> None:
    """`entry` first on sys.path, as python puts it there for the program, in place of porter's;
    the names of _LATE_IMPORTS that the entry's folder provides are the program's from then on."""
    import importlib
    import importlib.machinery

    find = importlib.machinery.PathFinder.find_spec
    shadowed = [top for top in _LATE_IMPORTS if find(top, [entry]) is not None]
    for top in shadowed:
        for name in _LATE_IMPORTS[top]:
            importlib.import_module(name)
    if _OWN_ENTRY is not None and sys.path and sys.path[0] == _OWN_ENTRY:
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)
    for top in shadowed:
        theirs = find(top, sys.path)
        if theirs is not None and not _same(sys.modules[top], theirs):
            _give_up(top, list(theirs.submodule_search_locations or ()))


def _places(spec) -> set[str]:
    return {str(Path(p).resolve()) for p in (spec.submodule_search_locations or [spec.origin]) if p}


def _same(module, spec) -> bool:
    own = getattr(module, "__spec__", None)
    return own is not None and bool(_places(own) & _places(spec))


def _give_up(top: str, where: list[str]) -> None:
    """`top` out of sys.modules, and each of its loaded submodules whose first-level name the
    program's package also holds (`where`: its folders); porter's others stay, so that porter's
    own late imports still find them."""
    import importlib.machinery

    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        first = ".".join(name.split(".")[:2])
        if name == top or (where and importlib.machinery.PathFinder.find_spec(first, where)):
            del sys.modules[name]
