"""A port holding its layers in a top-level `ModuleList` (or `ModuleDict`) it walks by hand has no
module with a forward holding them, so the recorder names them by their roots (`weight`,
`<Tanh>`, `<Linear>.weight`, the first root the model), as it must for a `ModuleList` that only
hands an optimizer the parameters of parts called on their own. Against a reference calling a
`Sequential` of the same layers (`0.weight`, `2.weight`) a faithful port FAILed on the names alone
(thirty-third read's leftover: one side cannot tell the two apart). The recorder keeps the list's
naming beside the roots' (`model_listed`: each root's prefix -> its prefix in the list's naming),
and trace compare takes it where the other side's parameter names are that naming's."""

from __future__ import annotations

from dataclasses import replace

from porter.verify.tracefile import Trace

MODEL = "(model)"  # the model's own key in module rows (its input's: "(model) (input)", a later call's "(model)#2")
# the manifest's name lists: entries' fields, and lists of names
_ENTRY_FIELDS = (("parameters", "name"), ("buffers", "key"), ("modules", "key"), ("inputs", "key"))
_NAME_LISTS = ("tied", "param_groups", "param_groups_added")


def listed_prefixes(trace: Trace) -> dict[str, str]:
    """The side's `model_listed` map, or {} (none, or not a map of names)."""
    got = trace.manifest.get("model_listed")
    if not isinstance(got, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in got.items()):
        return {}
    return got


def relisted_name(name: str, prefixes: dict[str, str]) -> str:
    """`name` (a parameter's, buffer's or module call's key) in the list's naming."""
    for old, new in prefixes.items():
        if old == "":  # the model: its own key, or a name not under another root's `<Type>`
            if name.startswith(MODEL):
                return new + name[len(MODEL) :]
            if not name.startswith("<"):
                return f"{new}.{name}"
        elif name == old or name.startswith((old + ".", old + "#", old + " ")):
            return new + name[len(old) :]
    return name


def _parameter_names(trace: Trace) -> set:
    return {q.get("name") for q in trace.manifest.get("parameters") or [] if isinstance(q, dict)}


def _relisted(trace: Trace, prefixes: dict[str, str]) -> Trace:
    """`trace` with every name in the list's naming, the list the model (never called)."""

    def moved(name):
        return relisted_name(name, prefixes) if isinstance(name, str) else name

    m = dict(trace.manifest, model_uncalled=True, model_listed={})
    for section, key in _ENTRY_FIELDS:
        m[section] = [{**e, key: moved(e.get(key))} if isinstance(e, dict) else e for e in m.get(section) or []]
    for section in _NAME_LISTS:
        m[section] = [list(map(moved, names)) if isinstance(names, list) else names for names in m.get(section) or []]
    return replace(trace, manifest=m)


def listed_pair(ref: Trace, port: Trace) -> tuple[Trace, Trace]:
    """(ref, port), a side named by its roots renamed in its list's naming where its parameters'
    names are then the other side's (and were not before)."""
    ref_names, port_names = _parameter_names(ref), _parameter_names(port)
    if ref_names == port_names:
        return ref, port
    if (p := listed_prefixes(port)) and {relisted_name(n, p) for n in port_names if isinstance(n, str)} == ref_names:
        return ref, _relisted(port, p)
    if (p := listed_prefixes(ref)) and {relisted_name(n, p) for n in ref_names if isinstance(n, str)} == port_names:
        return _relisted(ref, p), port
    return ref, port
