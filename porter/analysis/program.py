"""The program as the project index reads it: modules, scopes, the values names hold and the
kinds of device facts, and `IndexView`, the part of the index that the passes built on it
(device-type comparisons, fused-optimizer flags) read: they sit between this module and the
index, which runs them."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Protocol

from porter.analysis.kinds import FusedKind, MoveKind, NameKind, ValueKind

KEPT = frozenset(
    {ValueKind.INDEX, ValueKind.MAYBE, ValueKind.CPU, ValueKind.CONFIG, MoveKind.TIED, MoveKind.STALE}
)  # what a file is told (unknowns only for rank-like names)
# a class's own `is_cuda` (a property or method over its own device field, or an attribute it
# assigns, `self.is_cuda = ...`): not a tensor's
# (what `rb"^\s*def is_cuda\(|\.is_cuda\s*(?::[^=\n]*)?=(?!=)"` (MULTILINE) finds, in one
# pass: `^\s*` ran over every blank line after each line start, and `: [^=\n]*` from each of
# 10,000 `x.is_cuda:` on one line to its end, 20 s for 100 KB)
_DEF_IS_CUDA = re.compile(rb"^[^\S\n]*def is_cuda\(", re.MULTILINE)  # (a blank line before it changes nothing)
_IS_CUDA_SET = re.compile(rb"\.is_cuda\s*=(?!=)")
_IS_CUDA_TYPED = re.compile(rb"\.is_cuda\s*:")
_EQUALS_OR_LINE_END = re.compile(rb"[=\n]")


def defines_is_cuda(source: bytes) -> bool:
    """Whether `source` has `def is_cuda(` opening a line, or assigns an `is_cuda` attribute
    (`self.is_cuda = ...`, `self.is_cuda: bool = ...`)."""
    if b"is_cuda" not in source:
        return False
    if _DEF_IS_CUDA.search(source) or _IS_CUDA_SET.search(source):
        return True
    reached = -1  # where the last `:`'s search for `=` ended: one after it ends there too
    for m in _IS_CUDA_TYPED.finditer(source):
        if m.end() <= reached:
            continue
        end = _EQUALS_OR_LINE_END.search(source, m.end())
        if end is None:
            return False
        reached = end.start()
        if source[reached : reached + 1] == b"=" and source[reached + 1 : reached + 2] != b"=":
            return True
    return False


ACTIONABLE = frozenset(
    {
        ValueKind.INDEX,
        ValueKind.MAYBE,
        ValueKind.CONFIG,
        MoveKind.TIED,
        MoveKind.STALE,
        NameKind.ORIGIN,
        MoveKind.ATTRIBUTES,
        ValueKind.UNKNOWN,
        FusedKind.FALSE,
        FusedKind.KEEP,
    }
)  # facts that make a file worth parsing


@dataclass(frozen=True)
class Value:
    """What a name holds: a kind and the chain of steps back to where it came from."""

    kind: ValueKind
    chain: tuple[str, ...] = ()

    def via(self, step: str) -> Value:
        return Value(self.kind, (step, *self.chain))


def join(values: list[Value], step: str) -> Value:
    """One value for several sources: equal kinds agree; anything else is unknown."""
    if not values:
        return Value(ValueKind.UNKNOWN, (step,))
    kinds = {v.kind for v in values}
    if len(kinds) == 1:
        return values[0]
    if kinds == {ValueKind.DEVICE, ValueKind.CPU}:  # `"cuda" if ... else "cpu"`: a device either way
        return next(v for v in values if v.kind == ValueKind.DEVICE)
    first = next((v for v in values if v.kind == ValueKind.INDEX), values[0])
    mixed = next(v for v in values if v.kind != first.kind)
    kind = ValueKind.MAYBE if ValueKind.INDEX in kinds or ValueKind.MAYBE in kinds else ValueKind.UNKNOWN
    return Value(kind, (f"{step} holds both {_describe(first)} and {_describe(mixed)}",))


def _describe(v: Value) -> str:
    origin = v.chain[-1] if v.chain else ""
    return {
        ValueKind.INDEX: "an integer",
        ValueKind.MAYBE: "an integer on some paths",
        ValueKind.DEVICE: "a device",
        ValueKind.CPU: "the CPU",
        ValueKind.CONFIG: "a configured device",
        ValueKind.OTHER: "a non-device value",
    }.get(v.kind, "an unknown value") + (f" ({origin})" if origin else "")


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head is not None else None
    return None


def called_name(call: ast.Call) -> str | None:
    """The name a call calls (`f(...)`, `obj.f(...)`); None for another callee (`fs[0](...)`)."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def short_source(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Scope:
    """A function (or a module's top level): its parameters, assignments, returns."""

    qual: str  # "Trainer._run_batch", "" for the module
    module: ModuleInfo
    node: ast.AST
    cls: str | None = None  # the class of a method
    params: list[str] = field(default_factory=list)
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    assigns: dict[str, list[ast.expr | str]] = field(default_factory=dict)
    returns: list[ast.expr] = field(default_factory=list)
    calls: list[ast.Call] = field(default_factory=list)
    sites: list[ast.expr] = field(default_factory=list)  # expressions used as devices
    assigned: dict[str, list[int]] = field(default_factory=dict)  # `a.b = c.d` text -> lines
    # calls handed `x.parameters()` (an optimizer, an EMA): (x, the call) -- they keep the
    # Parameter objects, which `x.to(xla)` then replaces
    param_refs: list[tuple[str, ast.Call]] = field(default_factory=list)


@dataclass
class ModuleInfo:
    name: str  # dotted module name from the path
    path: str
    scopes: dict[str, Scope] = field(default_factory=dict)
    classes: dict[str, dict[str, list[tuple[ast.expr | str, Scope]]]] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, obj)
    # class -> tied parameters, as attribute paths under `self`: [("wte.weight", "lm_head.weight")]
    ties: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # `m.to(device)` / `t = m.to(device)` statements: (call, scope, the name that holds the module)
    moves: list[tuple[ast.Call, Scope, str]] = field(default_factory=list)
    # attributes set on Parameter objects in a loop over `.parameters()`: ["`p.infshape = ...`, f.py:9"]
    param_attributes: list[str] = field(default_factory=list)


def module_name(path: str) -> str:
    parts = path.removesuffix(".py").replace("\\", "/").lstrip("./").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(p for p in parts if p)


def call_argument(call: ast.Call, i: int, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    positional = call.args
    if any(isinstance(a, ast.Starred) for a in positional[: i + 1]):
        return None
    return positional[i] if i < len(positional) else None


def move_key(receiver: str) -> str:
    """The fact key of a `.to()` move of `receiver` (a dotted name, or `Cls()` for a call)."""
    return f"<move> {receiver}"


def attributes_key(receiver: str) -> str:
    """The fact key of a module move in a project that sets attributes on its Parameters."""
    return f"<attributes> {receiver}"


def origin_key(name: str, value: str) -> str:
    """The fact key of `name = value`, an integer ported where it is assigned."""
    return f"<origin> {name} = {value}"


def stale_key(receiver: str) -> str:
    """The fact key of a move after which references to the old parameters are stale."""
    return f"<stale> {receiver}"


def chain_text(name: str, chain: tuple[str, ...]) -> str:
    """ "`gpu_id` ← `Trainer(..., gpu_id)` ← ... ← `device = 0`, single_gpu.py:12"."""
    return " ← ".join((f"`{name}`", *chain))


class IndexView(Protocol):
    """What the passes over the index ask of it (porter.analysis.index.ProjectIndex answers)."""

    def module(self, path: str) -> ModuleInfo | None: ...

    def module_named(self, name: str, near: ModuleInfo) -> ModuleInfo | None: ...

    def mentioning(self, word: str) -> list[ModuleInfo]: ...

    def function_of(self, func: ast.expr, scope: Scope) -> tuple[Scope, int] | None: ...

    def callers(self, fn: Scope) -> list[tuple[ast.Call, Scope, int]]: ...

    def options(self, dest: str) -> list[tuple[ast.Call, Scope]]: ...

    def value(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Value | None: ...

    def instance_of(self, expr: ast.expr, scope: Scope, depth: int = 0) -> tuple[ModuleInfo, str] | None: ...
