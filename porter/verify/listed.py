"""A side's names in the naming the other side's model takes. A port holding its layers in a
top-level `ModuleList` (or `ModuleDict`) it walks by hand has no module with a forward holding
them, so the recorder names them by their roots (`weight`, `<Tanh>`, `<Linear>.weight`, the first
root the model), as it must for a `ModuleList` that only hands an optimizer the parameters of parts
called on their own; against a reference calling a `Sequential` of the same layers (`0.weight`,
`2.weight`) a faithful port FAILed on the names alone. And a port keeping its parts in a module
whose forward it never calls is named by that module (`bb.0.weight`, `head.weight`), against a
reference without it (`0.weight`, `<Linear>.weight`) FAILed alike (the thirty-third reads'
leftovers: one side cannot tell which the other has). The recorder keeps the other naming beside
its own, each root's prefix -> its prefix there (`model_listed`: the list the model, never called;
`model_rooted`: the roots alone), and trace compare takes it where the other side's parameter names
are that naming's."""

from __future__ import annotations

from dataclasses import replace

from porter.verify.tracefile import Trace

MODEL = "(model)"  # the model's own key in module rows (its input's: "(model) (input)", a later call's "(model)#2")
# the manifest's name lists: entries' fields, and lists of names
_ENTRY_FIELDS = (("parameters", "name"), ("buffers", "key"), ("modules", "key"), ("inputs", "key"))
_NAME_LISTS = ("tied", "param_groups", "param_groups_added")
# the other namings a trace may keep, and whether its model is then never called
NAMINGS = (("model_listed", True), ("model_rooted", False))


def listed_prefixes(trace: Trace, field: str = "model_listed") -> dict[str, str]:
    """The side's map of prefixes in `field`, or {} (none, or not a map of names)."""
    got = trace.manifest.get(field)
    if not isinstance(got, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in got.items()):
        return {}
    return got


def _rest(name: str, prefix: str) -> str | None:
    """What follows root `prefix` in `name` (`.weight`, `#2`, ` (input)`, "" for the root itself),
    or None where `name` is not under it; "" is the model's prefix."""
    if prefix == "":
        if name.startswith(MODEL):
            return name[len(MODEL) :]
        return None if name.startswith("<") else "." + name
    if name == prefix or name.startswith((prefix + ".", prefix + "#", prefix + " ")):
        return name[len(prefix) :]
    return None


def relisted_name(name: str, prefixes: dict[str, str]) -> str:
    """`name` (a parameter's, buffer's or module call's key) in the other naming (the model's
    prefix "" tried last: every name not under a `<Type>` is under it)."""
    for old in sorted(prefixes, key=lambda k: k == ""):
        rest = _rest(name, old)
        if rest is not None:
            new = prefixes[old]
            if new:
                return new + rest
            return rest[1:] if rest.startswith(".") else MODEL + rest
    return name


def _named_parameters_of(trace: Trace) -> set:
    return {q.get("name") for q in trace.manifest.get("parameters") or [] if isinstance(q, dict)}


def _relisted(trace: Trace, prefixes: dict[str, str], uncalled: bool) -> Trace:
    """`trace` with every name in the other naming, its model `uncalled` or not."""

    def moved(name):
        return relisted_name(name, prefixes) if isinstance(name, str) else name

    m = dict(trace.manifest, model_uncalled=uncalled, model_listed={}, model_rooted={})
    for section, key in _ENTRY_FIELDS:
        m[section] = [{**e, key: moved(e.get(key))} if isinstance(e, dict) else e for e in m.get(section) or []]
    for section in _NAME_LISTS:
        m[section] = [list(map(moved, names)) if isinstance(names, list) else names for names in m.get(section) or []]
    return replace(trace, manifest=m)


def listed_pair(ref: Trace, port: Trace) -> tuple[Trace, Trace]:
    """(ref, port), one side renamed in its other naming where its parameters' names are then the
    other side's (and were not before)."""
    ref_names, port_names = _named_parameters_of(ref), _named_parameters_of(port)
    if ref_names == port_names:
        return _both_listed(ref, port)
    for field, uncalled in NAMINGS:
        p = listed_prefixes(port, field)
        if p and {relisted_name(n, p) for n in port_names if isinstance(n, str)} == ref_names:
            return ref, _relisted(port, p, uncalled)
        p = listed_prefixes(ref, field)
        if p and {relisted_name(n, p) for n in ref_names if isinstance(n, str)} == port_names:
            return _relisted(ref, p, uncalled), port
    return ref, port


def _both_listed(ref: Trace, port: Trace) -> tuple[Trace, Trace]:
    """(ref, port), both renamed in one naming where the two map their roots to other names there
    and its names are then the same: two programs walking a `ModuleList` by hand, the port in the
    other order (independent layers), had their roots named by the order of their calls
    (`(model)`, `<Linear>`, ...), each name another layer on each side, and the port FAILed "the
    two runs did not start from the same weights: 24 parameter(s) differ" with the same losses (the
    thirty-sixth trleft read)."""
    names = _named_parameters_of(ref)
    for field, uncalled in NAMINGS:
        r, p = listed_prefixes(ref, field), listed_prefixes(port, field)
        if r and p and r != p:
            moved = {relisted_name(n, r) for n in names if isinstance(n, str)}
            if moved == {relisted_name(n, p) for n in names if isinstance(n, str)}:
                return _relisted(ref, r, uncalled), _relisted(port, p, uncalled)
    return ref, port
