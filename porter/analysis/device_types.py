"""What a value compared with `"cuda"` is: a torch device type, or something else.

Device-generic code asks `device_type == "cuda"` of the device type torch picked
(`_get_available_device_type() or "cuda"`, `current_accelerator().type`): on a target that
keeps that selection the answer is already right, so the comparison stays (porter.codemods.
literals). That is a fact about the value, not its name: `kind == "cuda"` on a device type is
the same question, and `device_type == "cuda"` on a GPU-platform option (`choices=["cuda",
"rocm"]`) is not a device at all. This module follows the compared value with the project
index (assignments, parameters and callers, `self` attributes, returns and tuple elements,
module globals and imported modules' globals, argparse options) and says which it is. Read
with `ast`; nothing is imported or run.
"""

from __future__ import annotations

import ast

from porter.analysis.kinds import TypeKind
from porter.analysis.program import IndexView, Scope, call_argument, dotted


# torch's device types (c10/core/DeviceType.h), and the targets' own
TORCH_DEVICE_TYPES = frozenset(
    {
        "cpu",
        "cuda",
        "mkldnn",
        "opengl",
        "opencl",
        "ideep",
        "hip",
        "fpga",
        "maia",
        "xla",
        "vulkan",
        "metal",
        "xpu",
        "mps",
        "meta",
        "hpu",
        "ve",
        "lazy",
        "ipu",
        "mtia",
        "privateuseone",
        "neuron",
        "tpu",
    }
)

# the device types out-of-tree backends register through PrivateUse1 (Ascend's torch_npu,
# Cambricon's torch_mlu, Moore Threads' torch_musa, Tecorigin's torch_sdaa, Enflame's torch_gcu):
# device words in a list beside "cuda", never a vocabulary of the program's own
PLUGIN_DEVICE_TYPES = frozenset({"npu", "mlu", "musa", "sdaa", "gcu"})


# option values that name a GPU platform, not a torch device (`choices=["cuda", "rocm"]`)
PLATFORMS = frozenset({"rocm", "gpu", "nvidia", "amd"})
_SELECTION_CALLS = frozenset({"_get_available_device_type", "get_available_device_type"})
_MAX_DEPTH = 30

Verdict = tuple[str, tuple[str, ...]] | None  # (DEVICE_TYPE or NOT_DEVICE, chain), None: unknown


def compared_key(expr: str) -> str:
    """The fact key of the value `expr` (ast.unparse spelling) compared with `"cuda"`."""
    return f"<compared> {expr}"


def _cuda(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def compared_values(tree_scope: ast.AST) -> list[ast.expr]:
    """The non-literal sides of comparisons with a CUDA string directly in one scope."""
    out: list[ast.expr] = []
    stack = list(ast.iter_child_nodes(tree_scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            sides = (node.left, node.comparators[0])
            if any(_cuda(s) for s in sides):
                out.extend(s for s in sides if not isinstance(s, ast.Constant))
        stack.extend(ast.iter_child_nodes(node))
    return out


def _join(verdicts: list[Verdict]) -> Verdict:
    """A CUDA string on any path is ported, and the test of it with it; else a device type on
    any path makes the comparison a device question there (`"auto"` on another path does not
    change that); no device only when every path says so."""
    for kind in (TypeKind.CUDA_LITERAL, TypeKind.DEVICE_TYPE):
        for v in verdicts:
            if v is not None and v[0] == kind:
                return v
    if verdicts and all(v is not None for v in verdicts):
        return verdicts[0]
    return None


class DeviceTypes:
    """Verdicts on compared values, per file: {(scope, key): (scope, key, kind, chain)}."""

    def __init__(self, index: IndexView) -> None:
        self.index = index
        self._memo: dict[tuple[str, str, str], Verdict] = {}

    def facts(self, path: str) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        info = self.index.module(path)
        if info is None:
            return ()
        out = {}
        for scope in info.scopes.values():
            for expr in compared_values(scope.node):
                text = ast.unparse(expr)
                if (scope.qual, text) in out:
                    continue
                verdict = self.kind(expr, scope)
                if verdict is not None:
                    out[(scope.qual, text)] = (scope.qual, compared_key(text), verdict[0], verdict[1])
        return tuple(out.values())

    def kind(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Verdict:
        key = (scope.module.path, scope.qual, ast.unparse(expr))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle says nothing
        verdict = self._kind(expr, scope, depth) if depth <= _MAX_DEPTH else None
        self._memo[key] = verdict
        return verdict

    def _kind(self, expr: ast.expr, scope: Scope, depth: int) -> Verdict:
        where = f"{scope.module.path}:{getattr(expr, 'lineno', '?')}"
        here = (f"`{_short(expr)}`, {where}",)
        if isinstance(expr, ast.Constant):
            if _cuda(expr):
                return (TypeKind.CUDA_LITERAL, here)
            is_type = isinstance(expr.value, str) and expr.value.split(":")[0] in TORCH_DEVICE_TYPES
            return (TypeKind.DEVICE_TYPE if is_type else TypeKind.NOT_DEVICE, here)
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or) and isinstance(expr.values[0], ast.Call):
            if (dotted(expr.values[0].func) or "").rpartition(".")[2] in _SELECTION_CALLS:
                return (TypeKind.DEVICE_TYPE, here)  # `_get_available_device_type() or "cuda"`: the fallback stays
        if isinstance(expr, (ast.BoolOp, ast.IfExp)):
            parts = expr.values if isinstance(expr, ast.BoolOp) else [expr.body, expr.orelse]
            return _via(_join([self.kind(p, scope, depth + 1) for p in parts]), here)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth, here)
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int:
            return self._element(expr, expr.slice.value, scope, depth, here)
        if isinstance(expr, ast.Attribute) and expr.attr == "type":
            base = dotted(expr.value) or ""
            call = expr.value.func if isinstance(expr.value, ast.Call) else None
            made = (dotted(call) or "").rpartition(".")[2] if call is not None else ""
            if base.rpartition(".")[2] in ("device", "accelerator") or made in ("current_accelerator", "device"):
                return (TypeKind.DEVICE_TYPE, here)  # `x.device.type`, `current_accelerator().type`
            return None
        name = dotted(expr)
        return self._name(name, scope, depth, here) if name is not None else None

    def _call(self, call: ast.Call, scope: Scope, depth: int, here: tuple[str, ...]) -> Verdict:
        name = (dotted(call.func) or "").rpartition(".")[2]
        if name in _SELECTION_CALLS:
            return (TypeKind.DEVICE_TYPE, here)
        if name == "str" and len(call.args) == 1:
            return None  # `str(device)` is a device's text, "cuda:0" included: not a type
        target = self.index.function_of(call.func, scope)
        if target is None or not target[0].returns:
            return None
        fn = target[0]
        return _via(_join([self.kind(r, fn, depth + 1) for r in fn.returns]), here)

    def _element(self, expr: ast.Subscript, i: int, scope: Scope, depth: int, here: tuple[str, ...]) -> Verdict:
        seq = expr.value
        if isinstance(seq, (ast.Tuple, ast.List)):
            return self.kind(seq.elts[i], scope, depth + 1) if -len(seq.elts) <= i < len(seq.elts) else None
        target = self.index.function_of(seq.func, scope) if isinstance(seq, ast.Call) else None
        if target is None:
            return None
        fn = target[0]
        parts: list[Verdict] = []
        for r in fn.returns:
            ok = isinstance(r, (ast.Tuple, ast.List)) and -len(r.elts) <= i < len(r.elts)
            parts.append(self.kind(r.elts[i], fn, depth + 1) if ok else None)  # type: ignore[attr-defined]
        return _via(_join(parts), here)

    def _name(self, name: str, scope: Scope, depth: int, here: tuple[str, ...]) -> Verdict:
        head, _, rest = name.partition(".")
        if rest:
            return self._dotted(head, rest, scope, depth, here)
        assigned = scope.assigns.get(name)
        if assigned:
            if any(isinstance(v, str) for v in assigned):
                return None
            return _via(_join([self.kind(v, scope, depth + 1) for v in assigned]), here)  # type: ignore[arg-type]
        if name in scope.params:
            i = scope.params.index(name)
            calls = self.index.callers(scope)
            args = [call_argument(c, i - skip, name) if 0 <= skip <= i else None for c, _, skip in calls]
            if not calls:
                return None
            return _via(
                _join(
                    [
                        self.kind(a, caller, depth + 1) if a is not None else None
                        for a, (_, caller, _) in zip(args, calls)
                    ]
                ),
                here,
            )
        module = scope.module.scopes[""]
        if scope.qual and name in module.assigns:
            return self.kind(ast.Name(id=name, ctx=ast.Load()), module, depth + 1)
        imported = scope.module.imports.get(name)
        if imported is not None and imported[1] is not None:
            other = self.index.module_named(imported[0], scope.module)
            if other is not None and imported[1] in other.scopes[""].assigns:
                return self.kind(ast.Name(id=imported[1], ctx=ast.Load()), other.scopes[""], depth + 1)
        return None

    def _dotted(self, head: str, rest: str, scope: Scope, depth: int, here: tuple[str, ...]) -> Verdict:
        """`self.attr`, `module.global` of a project module, `args.option` of argparse."""
        if "." in rest:
            return None
        if head == "self" and scope.cls is not None:
            assigned = scope.module.classes.get(scope.cls, {}).get(rest)
            if not assigned or any(isinstance(v, str) for v, _ in assigned):
                return None
            return _via(_join([self.kind(v, where, depth + 1) for v, where in assigned]), here)  # type: ignore[arg-type]
        imported = scope.module.imports.get(head)
        if imported is not None and head not in scope.assigns and head not in scope.params:
            module_name = imported[0] if imported[1] is None else f"{imported[0]}.{imported[1]}"
            other = self.index.module_named(module_name, scope.module)
            if other is not None and rest in other.scopes[""].assigns:
                return self.kind(ast.Name(id=rest, ctx=ast.Load()), other.scopes[""], depth + 1)
        return self._option(rest, depth, here)

    def _option(self, dest: str, depth: int, here: tuple[str, ...]) -> Verdict:
        """An argparse option: its choices (a GPU-platform list is no device) or default."""
        parts: list[Verdict] = []
        for call, where in self.index.options(dest):
            kws = {kw.arg: kw.value for kw in call.keywords if kw.arg}
            line = (f"`{_short(call)}`, {where.module.path}:{call.lineno}",)
            choices = kws.get("choices")
            values = (
                {e.value for e in choices.elts if isinstance(e, ast.Constant)}
                if isinstance(choices, (ast.List, ast.Tuple, ast.Set))
                else set()
            )
            if not PLATFORMS.isdisjoint(values):
                parts.append((TypeKind.NOT_DEVICE, (*line, "(a GPU platform's choices, not devices)")))
            elif isinstance(choices, (ast.List, ast.Tuple, ast.Set)):
                parts.append(_via(_join([self.kind(e, where, depth + 1) for e in choices.elts]), line))
            elif "default" in kws:
                parts.append(_via(self.kind(kws["default"], where, depth + 1), line))
            else:
                parts.append(None)
        return _via(_join(parts), here) if parts else None


def _via(verdict: Verdict, step: tuple[str, ...]) -> Verdict:
    if verdict is None:
        return None
    return (verdict[0], (*step, *verdict[1]) if verdict[1][:1] != step else verdict[1])


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
