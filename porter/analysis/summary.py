"""What the project index reads of a file without its `ast` nodes: a summary kept per file.

Following a parameter back to its callers (`ProjectIndex.callers`) used to parse every file
that names the function and resolve every call in it, to keep the few that call it. Most of
that needs no node: which project function a call runs is decided by the call's spelling
(`f(...)`, `self.f(...)`, `mod.f(...)`, `mp.spawn(f, ...)`) and the names the module
defines and imports. A summary holds exactly that, worked out from the file's `ModuleInfo`:

- each scope's qualified name, class and parameters, in the module's order;
- each call that may run a project function, by its index in the scope's calls, with where
  its callee is found (`Ref`): in this module (resolved already), or a name in a module the
  file imports (resolved when asked, through `module_named`), and the same for the first
  argument of an `mp.spawn`-like call and for each argument that names a function;
- the `mp.spawn`-like calls whose first argument is a bare name (a relayed spawn);
- the module's classes, its argparse destinations (by call), and the attributes it sets on
  Parameter objects (already text).

The index keeps the summaries of its files in its state (`index.answers`), each with the
sha256 of the bytes it was made from, so after an edit the answers worked out again resolve
calls from summaries and parse only the files whose calls they then evaluate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from porter.analysis.program import ModuleInfo, Scope, dotted

# where a callee is: ("l", qual, parameters bound implicitly) in this module, or ("x", module
# name, name in it) in a module this one imports (`ProjectIndex.module_named` finds it)
Ref = tuple[str, str, Any]
# a call that may run a project function: (its index in the scope's calls, its callee, the
# callee of its first argument when it is an `mp.spawn`-like call, (argument index, callee)
# for each positional argument naming a function)
Site = tuple[int, Ref | None, Ref | None, tuple[tuple[int, Ref], ...]]

SPAWN = ("spawn", "start_processes")


@dataclass(frozen=True)
class ScopeSummary:
    qual: str
    cls: str | None
    params: tuple[str, ...]
    sites: tuple[Site, ...]
    spawns: tuple[tuple[int, str], ...]  # (call index, its first argument's name) of spawn-like calls


@dataclass(frozen=True)
class Summary:
    scopes: dict[str, ScopeSummary]  # in the module's order (`ModuleInfo.scopes`)
    classes: frozenset[str]
    options: tuple[tuple[str, int, str], ...]  # (scope, call index, argparse destination)
    param_attributes: tuple[str, ...]


def is_spawn(call: ast.Call) -> bool:
    """`mp.spawn(fn, ...)`, `start_processes(fn, ...)`: the first argument runs in a process."""
    return (dotted(call.func) or "").rpartition(".")[2] in SPAWN and bool(call.args)


def local(name: str, classes: Any, scopes: Any) -> tuple[str, int] | None:
    """(qual, parameters bound implicitly) of the function or class `name` defined at a module's
    top level (a class: its `__init__`); `classes` and `scopes` are the module's, by name."""
    if name in classes:
        init = f"{name}.__init__"
        return (init, 1) if init in scopes else None
    return (name, 0) if name and name in scopes else None


def ref(func: ast.expr, scope: Scope, info: ModuleInfo) -> Ref | None:
    """Where the callee `func` is, as far as the module itself tells (`ProjectIndex.function_of`
    without the modules it imports); None where no project function can be found."""
    if isinstance(func, ast.Name):
        found = local(func.id, info.classes, info.scopes)
        if found is not None:
            return ("l", *found)
        imported = info.imports.get(func.id)
        if imported is not None and imported[1] is not None:
            return ("x", imported[0], imported[1])
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        head = func.value.id
        if head == "self":
            qual = f"{scope.cls}.{func.attr}"
            return ("l", qual, 1) if scope.cls is not None and qual in info.scopes else None
        imported = info.imports.get(head)
        if imported is not None and imported[1] is None:
            return ("x", imported[0], func.attr)
    return None


def summarize(info: ModuleInfo, dests: Any) -> Summary:
    """The summary of a parsed module; `dests(call)`: an `add_argument` call's destinations."""
    scopes: dict[str, ScopeSummary] = {}
    options: list[tuple[str, int, str]] = []
    for qual, scope in info.scopes.items():
        sites: list[Site] = []
        spawns: list[tuple[int, str]] = []
        for i, call in enumerate(scope.calls):
            callee = ref(call.func, scope, info)
            spawn = is_spawn(call)
            spawned = ref(call.args[0], scope, info) if spawn else None
            if callee is not None or spawned is not None:
                passed = tuple(
                    (j, r)
                    for j, arg in enumerate(call.args)
                    if callee is not None
                    and isinstance(arg, (ast.Name, ast.Attribute))
                    and (r := ref(arg, scope, info)) is not None
                )
                sites.append((i, callee, spawned, passed))
            if spawn and isinstance(call.args[0], ast.Name):
                spawns.append((i, call.args[0].id))
            if isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
                options.extend((qual, i, dest) for dest in dests(call))
        scopes[qual] = ScopeSummary(qual, scope.cls, tuple(scope.params), tuple(sites), tuple(spawns))
    return Summary(scopes, frozenset(info.classes), tuple(options), tuple(info.param_attributes))


# -- the state's form (JSON) -------------------------------------------------------------------


def to_json(s: Summary | None) -> Any:
    if s is None:
        return None
    return [
        [
            [sc.qual, sc.cls, list(sc.params), [_site_json(x) for x in sc.sites], [list(p) for p in sc.spawns]]
            for sc in s.scopes.values()
        ],
        sorted(s.classes),
        [list(o) for o in s.options],
        list(s.param_attributes),
    ]


def _site_json(site: Site) -> list[Any]:
    i, callee, spawned, passed = site
    return [i, _ref_json(callee), _ref_json(spawned), [[j, list(r)] for j, r in passed]]


def _ref_json(r: Ref | None) -> Any:
    return None if r is None else list(r)


def from_json(data: Any) -> Summary | None:
    """A summary `to_json` wrote, read back; TypeError for anything not of its shape."""
    if data is None:
        return None
    scopes_data, classes, options, attributes = data
    scopes: dict[str, ScopeSummary] = {}
    for qual, cls, params, sites, spawns in scopes_data:
        _check(isinstance(qual, str) and (cls is None or isinstance(cls, str)) and _strings(params))
        _check(isinstance(sites, list) and isinstance(spawns, list))
        scopes[qual] = ScopeSummary(
            qual,
            cls,
            tuple(params),
            tuple(_site(x) for x in sites),
            tuple((_index(i), _string(name)) for i, name in spawns),
        )
    _check(_strings(classes) and _strings(attributes) and isinstance(options, list))
    return Summary(
        scopes,
        frozenset(classes),
        tuple((_string(q), _index(i), _string(d)) for q, i, d in options),
        tuple(attributes),
    )


def _site(data: Any) -> Site:
    i, callee, spawned, passed = data
    _check(isinstance(passed, list))
    return (_index(i), _ref(callee), _ref(spawned), tuple((_index(j), _ref_required(r)) for j, r in passed))


def _ref(data: Any) -> Ref | None:
    return None if data is None else _ref_required(data)


def _ref_required(data: Any) -> Ref:
    kind, a, b = data
    _check(
        isinstance(a, str)
        and ((kind == "l" and type(b) is int and b in (0, 1)) or (kind == "x" and isinstance(b, str)))
    )
    return (kind, a, b)


def _index(i: Any) -> int:
    _check(type(i) is int and i >= 0)
    return int(i)


def _string(s: Any) -> str:
    _check(isinstance(s, str))
    return str(s)


def _strings(xs: Any) -> bool:
    return isinstance(xs, list) and all(isinstance(x, str) for x in xs)


def _check(ok: bool) -> None:
    if not ok:
        raise TypeError("not a summary of the project index")
