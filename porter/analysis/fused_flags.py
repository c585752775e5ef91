"""Fused-optimizer flags followed across the project: where the port makes them False.

nanoGPT-style code asks for fused AdamW with a flag computed elsewhere: `use_fused =
fused_available and device_type == "cuda"` in one function, `configure_optimizers(...,
use_fused=is_cuda)` in another, `create_optimizer(model, ..., torch.cuda.is_available())` in a
third module. The port turns every CUDA test into a test for the target, so such a flag turns
fused kernels on where there are none (PyTorch/XLA raises). This module follows the flag back
from `fused=flag` (or `dict(fused=True) if flag else dict()`) through names, parameters and
call arguments, `self` attributes and returns, with `porter.analysis.index`, as long as every
use of the value on the way is the flag itself (a `fused=` argument, the gate, a print or a
log call, or a parameter used only so). Where the walk stops it cuts:

* `keep`: a comparison of a proven device value with `"cuda"` (`device_type == "cuda"`, the
  device made in project code that the port makes the target's): left as it is, it is False
  on the target and True on CUDA. Zero edits.
* `false`: anything else (`torch.cuda.is_available()`, `x.is_cuda`, a value porter cannot
  see, a name also used for other things): the outermost expression that is only the flag
  becomes `False`, so whatever the program prints about the flag stays true. A gate whose
  test is used for more than the flag folds to its `else` value.

The answers are facts of the file that holds each cut (kinds FusedKind.FALSE / KEEP) and of
the file with the flag's use (FusedKind.SITE: the call stays as it is). Read with `ast`; nothing
is imported or run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from porter.analysis.device_types import DeviceTypes
from porter.analysis.kinds import FusedKind, TypeKind, ValueKind
from porter.analysis.program import IndexView, ModuleInfo, Scope, call_argument, dotted


__all__ = ["FusedFlags", "fused_key"]
FUSED_TOKEN = re.compile(rb"\bfused\s*=")


def names_fused(source: bytes) -> bool:
    """Whether `source` has `FUSED_TOKEN`, searched only where `fused` is (the pattern's `\\b`
    was tried at every place of every file: 0.24 CPU s a pass over the bench corpus, 0.04 now)."""
    return b"fused" in source and FUSED_TOKEN.search(source) is not None


# calls whose `fused=` asks for fused optimizer kernels (torch.optim's, or their argument dict)
_OPTIMIZER = re.compile(r"(?:^|\.)(?:optim\..*|Adam|AdamW|SGD|Adagrad|Adamax|NAdam|RAdam|RMSprop|dict)$")
_LOGS = frozenset({"print", "info", "debug", "warning", "warn", "error", "critical", "exception", "log", "write"})
_CUDA_CALLS = frozenset({"torch.cuda.is_available", "cuda.is_available", "torch.cuda.is_bf16_supported"})
_MAX_DEPTH = 30

Fact = tuple[str, str, str, tuple[str, ...]]


def fused_key(where: str, text: str) -> str:
    """The fact key of a cut: where the expression sits and its text (`ast.unparse` spelling).

    where: `call f(3)` / `call f(name)` (an argument), `name =` (an assignment), `default
    name =`, `return`, `gate` (an `X(fused=True) if flag else Y` expression), `keep LINE`."""
    return f"<fused> {where} {text}"


def _is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and (node.value is False or node.value is None)


def _cuda_string(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value == "cuda" or node.value.startswith("cuda:"))
    )


def _compared_device(node: ast.expr) -> ast.expr | None:
    """X of `X == "cuda"`, `"cuda" in X`, `X.type == "cuda"`: the value asked whether it is CUDA."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if isinstance(op, ast.Eq):
        other = right if _cuda_string(left) else left if _cuda_string(right) else None
    elif isinstance(op, ast.In):
        other = right if _cuda_string(left) else None
    else:
        return None
    if isinstance(other, ast.Attribute) and other.attr == "type":
        return other.value
    return other


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [c for v in node.values for c in _conjuncts(v)]
    return [node]


def _walk_scope(root: ast.AST) -> Iterator[ast.AST]:
    """Nodes of one scope: nested functions, lambdas and classes are their own scopes."""
    stack = list(ast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _gated(node: ast.IfExp) -> bool:
    body = node.body
    return isinstance(body, ast.Call) and any(
        kw.arg == "fused" and isinstance(kw.value, ast.Constant) and kw.value.value is True for kw in body.keywords
    )


class FusedFlags:
    """Facts per path for every fused flag of the project (one walk per index)."""

    def __init__(self, index: IndexView) -> None:
        self.index = index
        self.facts: dict[str, dict[tuple[str, str], Fact]] = {}
        self._seen: set[tuple[str, str, str]] = set()
        self._only: dict[tuple[str, str, str], bool] = {}
        self._types = DeviceTypes(index)

    def run(self, sources: dict[str, bytes]) -> dict[str, dict[tuple[str, str], Fact]]:
        for path, source in sources.items():
            if not names_fused(source):
                continue
            info = self.index.module(path)
            if info is None:
                continue
            for scope in list(info.scopes.values()):
                self._sites(scope)
        return self.facts

    # -- facts ---------------------------------------------------------------------------

    def _add(self, scope: Scope, kind: str, key: str, chain: tuple[str, ...]) -> None:
        self.facts.setdefault(scope.module.path, {})[(scope.qual, key)] = (scope.qual, key, kind, chain)

    def _sites(self, scope: Scope) -> None:
        for node in _walk_scope(scope.node):
            if isinstance(node, ast.Call):
                name = dotted(node.func) or ""
                if not _OPTIMIZER.search(name) or self._callee(node, scope) is not None:
                    continue  # a project function's own `fused` parameter is followed from its body
                for kw in node.keywords:
                    if kw.arg == "fused" and not isinstance(kw.value, ast.Constant):
                        where = f"call {ast.unparse(node.func)}(fused)"
                        self._site(kw.value, scope, where, node.lineno)
            elif isinstance(node, ast.IfExp) and _gated(node):
                text = ast.unparse(node)
                self._add(scope, FusedKind.SITE, fused_key("gate", text), ())
                self._trace(
                    node.test, scope, "gate", (f"`{_short(text)}`, {scope.module.path}:{node.lineno}",), 0, whole=node
                )

    def _site(self, flag: ast.expr, scope: Scope, where: str, line: int) -> None:
        self._add(scope, FusedKind.SITE, fused_key(where, ast.unparse(flag)), ())
        self._trace(flag, scope, where, (f"`fused={_short(ast.unparse(flag))}`, {scope.module.path}:{line}",), 0)

    def _cut(
        self, expr: ast.expr, scope: Scope, where: str, chain: tuple[str, ...], whole: ast.expr | None = None
    ) -> None:
        text = ast.unparse(whole if whole is not None else expr)
        self._add(scope, FusedKind.FALSE, fused_key(where, text), chain)

    # -- the walk back ---------------------------------------------------------------------

    def _trace(
        self,
        expr: ast.expr,
        scope: Scope,
        where: str,
        chain: tuple[str, ...],
        depth: int,
        whole: ast.expr | None = None,
    ) -> None:
        """`expr` (at `where` in `scope`) is used only as the flag: follow it or cut it."""
        key = (scope.module.path, scope.qual, f"{where} {ast.unparse(expr)}")
        if key in self._seen:
            return
        self._seen.add(key)
        if _is_false(expr):
            return  # already off
        # the walk's first step is the site itself (`fused=flag`), already the chain's head
        here = f"`{_short(ast.unparse(expr))}`, {scope.module.path}:{getattr(expr, 'lineno', '?')}"
        step = (here,) if depth else ()
        if depth > _MAX_DEPTH:
            return self._cut(expr, scope, where, (*chain, *step), whole)
        kept = self._kept(expr, scope)
        if kept is not None:
            # by line too: the same test elsewhere in the function may guard something else
            self._add(scope, FusedKind.KEEP, fused_key(f"keep {kept.lineno}", ast.unparse(kept)), (*chain, *step))
            return
        name = dotted(expr)
        if isinstance(expr, ast.Name) and name is not None and self.flag_only(name, scope, depth):
            if self._follow_name(name, scope, (*chain, *step), depth):
                return
        elif (
            name is not None
            and name.startswith("self.")
            and name.count(".") == 1
            and self._attribute_only(name[5:], scope, depth)
        ):
            if self._follow_attribute(name[5:], scope, (*chain, *step), depth):
                return
        elif isinstance(expr, ast.Call) and self._follow_call(expr, scope, (*chain, *step), depth):
            return
        self._cut(expr, scope, where, (*chain, *step), whole)

    def _kept(self, expr: ast.expr, scope: Scope) -> ast.expr | None:
        """The conjunct `X == "cuda"` of `expr` where X is a device made in the project (the
        port makes it the target's, so the test is False there as it stands)."""
        for part in _conjuncts(expr):
            device = _compared_device(part)
            if device is None:
                continue
            if not _literal_cuda(device) and self._device(device, scope):
                return part
        return None

    def _device(self, expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
        """`expr` holds a device made in project code (ported where it is made). A parameter
        is asked of every caller, `obj.method(...)` calls included; one no project code calls
        holds its caller's device (a ported caller passes the target's)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name) and expr.id in scope.params and expr.id not in scope.assigns:
            i = scope.params.index(expr.id)
            calls = self._callers(scope)
            args = [call_argument(call, i - skip, expr.id) if 0 <= skip <= i else None for call, _, skip in calls]
            if not calls:
                # called from outside the project: the caller's device, ported with the caller
                default = scope.defaults.get(expr.id)
                return default is None or self._device(default, scope, depth + 1)
            if any(a is None for a in args):
                return False
            return all(self._device(a, caller, depth + 1) for a, (_, caller, _) in zip(args, calls))  # type: ignore[arg-type]
        v = self.index.value(expr, scope)
        if v is not None and v.kind in (ValueKind.DEVICE, ValueKind.CPU):
            return True
        verdict = self._types.kind(expr, scope)  # `_get_available_device_type()`, `x.device.type`
        return verdict is not None and verdict[0] == TypeKind.DEVICE_TYPE

    def _follow_name(self, name: str, scope: Scope, chain: tuple[str, ...], depth: int) -> bool:
        assigned = scope.assigns.get(name)
        if assigned:
            if any(isinstance(v, str) for v in assigned):
                return False
            for value in assigned:
                self._trace(value, scope, f"{name} =", chain, depth + 1)  # type: ignore[arg-type]
            return True
        if name not in scope.params:
            return False
        return self._follow_parameter(name, scope, chain, depth)

    def _follow_parameter(self, name: str, scope: Scope, chain: tuple[str, ...], depth: int) -> bool:
        """A parameter: follow what every caller passes for it (its default where one passes
        nothing), or its default when the function has no caller in the project."""
        i = scope.params.index(name)
        calls = self._callers(scope)
        default = scope.defaults.get(name)
        if not calls:
            if default is None:
                return False
            self._trace(default, scope, f"default {name} =", chain, depth + 1)
            return True
        if any(skip < 0 for _, _, skip in calls):
            return False  # a spawned process index
        for call, caller, skip in calls:
            arg = call_argument(call, i - skip, name) if i >= skip else None
            if arg is None:
                if default is not None:
                    self._trace(default, scope, f"default {name} =", chain, depth + 1)
                continue
            slot = next((kw.arg for kw in call.keywords if kw.value is arg), None) or str(call.args.index(arg))
            self._trace(arg, caller, f"call {ast.unparse(call.func)}({slot})", chain, depth + 1)
        return True

    def _follow_attribute(self, attr: str, scope: Scope, chain: tuple[str, ...], depth: int) -> bool:
        assigned = scope.module.classes.get(scope.cls or "", {}).get(attr)
        if not assigned or any(isinstance(v, str) for v, _ in assigned):
            return False
        for value, where in assigned:
            self._trace(value, where, f"self.{attr} =", chain, depth + 1)  # type: ignore[arg-type]
        return True

    def _follow_call(self, call: ast.Call, scope: Scope, chain: tuple[str, ...], depth: int) -> bool:
        """A project function whose result is only ever a flag: follow its returns."""
        target = self._callee(call, scope)
        if target is None:
            return False
        fn = target[0]
        if not fn.returns or fn.qual.endswith(".__init__"):
            return False
        for other, caller, _ in self._callers(fn):
            if not self._call_is_flag(other, caller, depth):
                return False
        for r in fn.returns:
            self._trace(r, fn, "return", chain, depth + 1)
        return True

    # -- uses ----------------------------------------------------------------------------

    def flag_only(self, name: str, scope: Scope, depth: int = 0) -> bool:
        """Every read of `name` in `scope` is the flag: `fused=name`, the test of a fused
        gate, a print or log argument, an f-string, `other = name` with `other` flag-only, or
        a parameter of a project function that is itself flag-only."""
        key = (scope.module.path, scope.qual, name)
        if key in self._only:
            return self._only[key]
        self._only[key] = False  # a cycle proves nothing
        reads = list(_reads(scope.node, lambda n: isinstance(n, ast.Name) and n.id == name))
        ok = depth <= _MAX_DEPTH and all(self._flag_use(use, parent, scope, depth) for use, parent in reads)
        self._only[key] = ok
        return ok

    def _flag_target(self, target: ast.expr, scope: Scope, depth: int) -> bool:
        """`name = flag` / `self.attr = flag` where the name or attribute is only the flag."""
        if isinstance(target, ast.Name):
            return self.flag_only(target.id, scope, depth + 1)
        name = dotted(target)
        return (
            name is not None
            and name.startswith("self.")
            and name.count(".") == 1
            and self._attribute_only(name[5:], scope, depth + 1)
        )

    def _attribute_only(self, attr: str, scope: Scope, depth: int) -> bool:
        if scope.cls is None:
            return False
        key = (scope.module.path, scope.cls, "self." + attr)
        if key in self._only:
            return self._only[key]
        self._only[key] = False
        ok = True
        for method in scope.module.scopes.values():
            if method.cls != scope.cls:
                continue
            for use, parent in _reads(method.node, lambda n: dotted(n) == "self." + attr):
                if not self._flag_use(use, parent, method, depth):
                    ok = False
                    break
        self._only[key] = ok
        return ok

    def _call_is_flag(self, call: ast.Call, scope: Scope, depth: int) -> bool:
        parent = next((p for p in ast.walk(scope.node) for c in ast.iter_child_nodes(p) if c is call), None)
        return parent is not None and self._flag_use(call, parent, scope, depth)

    def _flag_use(self, use: ast.expr, parent: ast.AST, scope: Scope, depth: int) -> bool:
        if isinstance(parent, ast.FormattedValue):
            return True
        if isinstance(parent, ast.IfExp) and parent.test is use:
            return _gated(parent)
        if isinstance(parent, ast.Assign) and parent.value is use:
            return all(self._flag_target(t, scope, depth) for t in parent.targets)
        if isinstance(parent, ast.keyword):
            call = next((c for c in ast.walk(scope.node) if isinstance(c, ast.Call) and parent in c.keywords), None)
            if call is None:
                return False
            if (
                parent.arg == "fused"
                and _OPTIMIZER.search(dotted(call.func) or "")
                and self._callee(call, scope) is None
            ):
                return True
            return self._handed_on(call, parent.arg, None, scope, depth)
        if not isinstance(parent, ast.Call) or use not in parent.args:
            return False
        if (dotted(parent.func) or "").rpartition(".")[2] in _LOGS:
            return True
        return self._handed_on(parent, None, parent.args.index(use), scope, depth)

    def _handed_on(self, call: ast.Call, keyword: str | None, i: int | None, scope: Scope, depth: int) -> bool:
        target = self._callee(call, scope)
        if target is None:
            return False
        fn, skip = target
        if keyword is None:
            assert i is not None
            if any(isinstance(a, ast.Starred) for a in call.args[: i + 1]) or i + skip >= len(fn.params):
                return False
            keyword = fn.params[i + skip]
        return keyword in fn.params and self.flag_only(keyword, fn, depth + 1)

    # -- calls ---------------------------------------------------------------------------

    def _callee(self, call: ast.Call, scope: Scope) -> tuple[Scope, int] | None:
        """The project function a call runs: `f()`, `self.m()`, `mod.f()`, and `obj.m()` on an
        instance of a project class (`raw_model.configure_optimizers(...)`)."""
        found = self.index.function_of(call.func, scope)
        if found is not None or not isinstance(call.func, ast.Attribute):
            return found
        owner = self.index.instance_of(call.func.value, scope) or self._made_here(call.func.value, scope)
        if owner is None:
            return self._named_method(call)
        mod, cls = owner
        method = mod.scopes.get(f"{cls}.{call.func.attr}")
        return (method, 1) if method is not None else None

    def _named_method(self, call: ast.Call) -> tuple[Scope, int] | None:
        """`obj.m(a=..., b=...)` where porter cannot see what `obj` is: the method of the one
        project class that defines `m`, when every keyword of the call is one of its
        parameters (nano-gpt's `raw_model.configure_optimizers(weight_decay=0.1, ...,
        use_fused=is_cuda)`, `raw_model` coming from outside the project)."""
        assert isinstance(call.func, ast.Attribute)
        attr = call.func.attr
        keywords = [kw.arg for kw in call.keywords]
        if not keywords or None in keywords or attr.startswith("__"):
            return None
        found = [
            s
            for mod in self.index.mentioning(attr)
            for s in mod.scopes.values()
            if s.cls is not None and s.qual == f"{s.cls}.{attr}"
        ]
        if len(found) != 1 or not set(keywords) <= set(found[0].params[1:]):
            return None
        return found[0], 1

    def _made_here(self, expr: ast.expr, scope: Scope) -> tuple[ModuleInfo, str] | None:
        """`model = GPT(...)` of a project class that has no `__init__` of its own (the
        index follows instances through `__init__`)."""
        if not isinstance(expr, ast.Name):
            return None
        for value in scope.assigns.get(expr.id, ()):
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                mod, name = scope.module, value.func.id
                imported = mod.imports.get(name)
                if name not in mod.classes and imported is not None and imported[1] is not None:
                    other = self.index.module_named(imported[0], mod)
                    mod, name = (other, imported[1]) if other is not None else (mod, name)
                if name in mod.classes:
                    return mod, name
        return None

    def _callers(self, fn: Scope) -> list[tuple[ast.Call, Scope, int]]:
        """The index's callers of `fn`, and for a method the `obj.method(...)` calls on
        instances of its class."""
        calls = list(self.index.callers(fn))
        if fn.cls is None or fn.qual.endswith(".__init__"):
            return calls
        attr = fn.qual.rpartition(".")[2]
        for mod in self.index.mentioning(attr):
            for scope in mod.scopes.values():
                for call in scope.calls:
                    func = call.func
                    if not (isinstance(func, ast.Attribute) and func.attr == attr) or dotted(func.value) == "self":
                        continue
                    if any(c is call for c, _, _ in calls):
                        continue
                    found = self._callee(call, scope)
                    if found is not None and found[0] is fn:
                        calls.append((call, scope, 1))
        return calls


def _literal_cuda(node: ast.expr) -> bool:
    return _cuda_string(node)


def _reads(root: ast.AST, match: Callable[[ast.expr], bool]) -> Iterator[tuple[ast.expr, ast.AST]]:
    for parent in ast.walk(root):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, (ast.Name, ast.Attribute)) and isinstance(child.ctx, ast.Load) and match(child):
                yield child, parent


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
