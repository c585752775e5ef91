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

# what the launcher and the recorder import once the program runs: loaded before it does when the
# program's own `porter` takes the name (porter's modules are then reached under theirs)
_LATE_IMPORTS = (
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
)


def own_entry() -> None:
    """Run by file path (this launcher, or porter.verify.worker beside it): porter's root, not
    this folder, first on sys.path."""
    global _OWN_ENTRY
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == here:
        sys.path[0] = _OWN_ENTRY = os.path.dirname(os.path.dirname(here))


def program_path(entry: str) -> None:
    """`entry` first on sys.path, as python puts it there for the program, in place of porter's."""
    if _OWN_ENTRY is not None and sys.path and sys.path[0] == _OWN_ENTRY:
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)
    _yield_porter_name()


def _yield_porter_name() -> None:
    """A `porter` that the program's sys.path finds and that is not this porter is the
    program's, as under `python ARGV...`: the name is given up (with each first-level name
    that package also holds), porter's own modules being loaded first and kept by object."""
    import importlib
    import importlib.machinery

    ours = sys.modules.get("porter")
    theirs = importlib.machinery.PathFinder.find_spec("porter", sys.path)
    if ours is None or theirs is None:
        return
    own = {str(Path(p).resolve()) for p in getattr(ours, "__path__", ())}
    found = list(theirs.submodule_search_locations or ()) or [os.path.dirname(theirs.origin or "")]
    if own & {str(Path(p).resolve()) for p in found}:
        return
    for name in _LATE_IMPORTS:
        importlib.import_module(name)
    where = list(theirs.submodule_search_locations or ())
    for name in [n for n in sys.modules if n == "porter" or n.startswith("porter.")]:
        first = ".".join(name.split(".")[:2])
        if name == "porter" or (where and importlib.machinery.PathFinder.find_spec(first, where)):
            del sys.modules[name]
