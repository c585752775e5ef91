"""Autograd, attention and RNG helpers of CUDA programs that torch_xla 2.9 does not run (XLA006-XLA009,
rules/xla.toml).

- XLA006 `torch.utils.checkpoint.checkpoint` / `checkpoint_sequential`: torch saves the RNG
  state of the inputs' device through `torch.xla`, which torch_xla does not register
  (`AttributeError: module 'torch' has no attribute 'xla'`, reentrant or not). Not
  `checkpoint_sequential(fns, 1, x)`: one segment is run without a checkpoint. The same
  function reached another way fails the same: passed on as a value (`functools.partial(
  checkpoint, ...)`), through torch's `checkpoint_wrapper` / `apply_activation_checkpointing`
  without a `checkpoint_fn` of the program's, and through transformers' models'
  `gradient_checkpointing_enable()` / `activation_checkpointing_enable()` (in a file that
  imports transformers, peft or trl), which hand torch's checkpoint to every layer; and torch's
  composable `torch.distributed._composable.checkpoint(module)`, always non-reentrant.
- XLA007 `torch.inference_mode()` (a `with`, a decorator, called or not, stored, or passed on
  as a value): a module's forward under it raises `Cannot set version_counter for inference
  tensor`, which is raised at the first view of an XLA tensor made outside the mode.
  `inference_mode(False)` turns the mode off and is left alone; so is a `with` or decorated
  function that reads nothing from outside but torch, the standard library and builtins
  (such a region ran there, views of its own tensors included).
- XLA008 FlexAttention (`flex_attention`, `create_block_mask`: rules/xla.toml `[flex_attention]`),
  called or passed on (`torch.compile(flex_attention)`): torch checks the query's device and
  raises ValueError for an XLA tensor; TorchTPU patches it to take `tpu` tensors, TorchNeuron runs it.
- XLA009 `torch.Generator(device=device)` with a device porter cannot see (a variable, `p.device`):
  torch_xla has no generator on its device (`XLA device type not an accelerator`); a literal
  `"cuda"` is DEV002's (kept, reported), `"cpu"` is fine.

Each seen on XLA:CPU (torch 2.9, torch_xla 2.9). Findings with advice, no fix: the working
spellings (torch_xla's reentrant checkpoint, `torch.no_grad()`) change what some programs do.
A site in the branch an earlier test for XLA (`xla` / `tpu` in its code) did not take is the
program's CUDA path, already kept off XLA (Lightning picks `torch.no_grad` for its XLA
accelerator first); so is a site in code GUARD003 says only runs on CUDA. No evidence that
TorchNeuron or TorchTPU fail on either, so the rules are xla's only.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import libcst as cst

from porter.codemods.family import Family, ReferenceTracker
from porter.codemods.literals import device_generator
from porter.config.ruledata import load_toml

CHECKPOINT = "torch.utils.checkpoint.checkpoint"
SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"
_WRAPPERS = "torch.distributed.algorithms._checkpoint.checkpoint_wrapper."
WRAPPER = _WRAPPERS + "checkpoint_wrapper"
APPLY = _WRAPPERS + "apply_activation_checkpointing"
# torch's composable checkpoint: it checkpoints a module in place, always non-reentrant
COMPOSABLE = frozenset(
    ("torch.distributed._composable.checkpoint", "torch.distributed._composable.checkpoint_activation.checkpoint")
)
INFERENCE_MODE = "torch.inference_mode"
FLEX: frozenset[str] = frozenset(load_toml("xla.toml")["flex_attention"]["names"])
# what a reference that is not called names: torch's checkpoint where it is called later
_REFERENCED = frozenset((CHECKPOINT, SEQUENTIAL, WRAPPER, INFERENCE_MODE, *COMPOSABLE, *FLEX))
_LAST_NAMES = frozenset(q.rpartition(".")[2] for q in _REFERENCED)
# transformers' PreTrainedModel methods that give every layer torch's checkpoint
_HF_METHODS = frozenset(("gradient_checkpointing_enable", "activation_checkpointing_enable"))
_HF_PACKAGES = ("transformers", "peft", "trl")
_XLA_WORDS = ("xla", "tpu")
_TORCH_XLA_CHECKPOINT = "torch_xla.utils.checkpoint.checkpoint"
_WRAPPER_ADVICE = (
    f"Pass `checkpoint_fn={_TORCH_XLA_CHECKPOINT}` (without `use_reentrant=False`, which it refuses), or drop the "
    "checkpointing on XLA."
)
_APPLY_ADVICE = (
    "Pass `checkpoint_wrapper_fn=functools.partial(checkpoint_wrapper, "
    f"checkpoint_fn={_TORCH_XLA_CHECKPOINT})`, or drop the checkpointing on XLA."
)
_COMPOSABLE_ADVICE = (
    f"Wrap the module instead: `checkpoint_wrapper(module, checkpoint_fn={_TORCH_XLA_CHECKPOINT})` returns "
    "a module to put in its place; or drop the checkpointing on XLA."
)
_HF_ADVICE = (
    "Leave activation checkpointing off on XLA: transformers always passes torch's checkpoint. "
    f"`{_TORCH_XLA_CHECKPOINT}` runs a transformers model's layers when given through the private "
    "`model._set_gradient_checkpointing(enable=True, gradient_checkpointing_func=...)`."
)


def _turns_off(call: cst.Call) -> bool:
    """`inference_mode(False)` / `inference_mode(mode=False)`: the mode off, nothing to port."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "mode":
            return isinstance(arg.value, cst.Name) and arg.value.value == "False"
    return False


def _one_segment(call: cst.Call) -> bool:
    """`checkpoint_sequential(fns, 1, x)`: its last segment runs without a checkpoint, so one
    segment checkpoints nothing (it runs on XLA:CPU)."""
    args = [a for a in call.args if a.keyword is None][1:2] or [
        a for a in call.args if a.keyword is not None and a.keyword.value == "segments"
    ]
    return bool(args) and isinstance(args[0].value, cst.Integer) and args[0].value.value == "1"


class _Region:
    """Whether code run under inference mode reads a name bound outside it (a tensor made
    outside may be viewed there, which raises on XLA). Names read after the region binds them
    are its own; so are a nested function's, lambda's or comprehension's own names. Names
    outside that hold no program tensor: builtins and what is imported from torch or the
    standard library."""

    def __init__(self, allowed) -> None:
        self.allowed = allowed
        self.stores: dict[str, tuple[int, int]] = {}
        self.loads: list[tuple[str, tuple[int, int]]] = []

    def reads_outside(self, stmts: list[ast.stmt]) -> bool:
        for stmt in stmts:
            self._walk(stmt, frozenset())
        for name, at in self.loads:
            if self.allowed(name):
                continue
            bound = self.stores.get(name)
            if bound is None or bound > at:
                return True
        return False

    def _store(self, target: ast.AST, at: tuple[int, int], local: frozenset[str]) -> None:
        """`target` bound at `at` (after the value it is given is read); what it reads (a
        subscript's container and index) read where they are."""
        if isinstance(target, ast.Name):
            self.stores[target.id] = min(self.stores.get(target.id, at), at)
        elif isinstance(target, ast.Starred):
            self._store(target.value, at, local)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._store(elt, at, local)
        else:
            self._walk(target, local)

    def _walk(self, node: ast.AST, local: frozenset[str]) -> None:
        handler = self._HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, local)
            return
        if isinstance(node, (ast.ExceptHandler, ast.ClassDef)) and node.name:
            self.stores.setdefault(node.name, (node.lineno, node.col_offset))
        for child in ast.iter_child_nodes(node):
            self._walk(child, local)

    def _name(self, node: ast.Name, local: frozenset[str]) -> None:
        if node.id in local:
            return
        if isinstance(node.ctx, ast.Load):
            self.loads.append((node.id, (node.lineno, node.col_offset)))
        else:
            self._store(node, (node.lineno, node.col_offset), local)

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr, local: frozenset[str]) -> None:
        if node.value is not None:
            self._walk(node.value, local)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(node, ast.AugAssign):
                self._walk(_as_load(target), local)
            self._store(target, _end(node.value or node), local)

    def _for(self, node: ast.For | ast.AsyncFor, local: frozenset[str]) -> None:
        self._walk(node.iter, local)
        self._store(node.target, _end(node.iter), local)
        for stmt in (*node.body, *node.orelse):
            self._walk(stmt, local)

    def _withitem(self, node: ast.withitem, local: frozenset[str]) -> None:
        self._walk(node.context_expr, local)
        if node.optional_vars is not None:
            self._store(node.optional_vars, _end(node.context_expr), local)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, local: frozenset[str]) -> None:
        for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
            self._walk(default, local)
        params = local | {a.arg for a in _parameters(node.args)}
        if isinstance(node, ast.Lambda):
            self._walk(node.body, params)
            return
        for deco in node.decorator_list:
            self._walk(deco, local)
        self.stores.setdefault(node.name, (node.lineno, node.col_offset))
        for stmt in node.body:
            self._walk(stmt, params)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, local) -> None:
        names = set(local)
        for gen in node.generators:
            names.update(n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name))
        inner = frozenset(names)
        for child in ast.iter_child_nodes(node):
            self._walk(child, inner)

    def _import(self, node: ast.Import | ast.ImportFrom, local: frozenset[str]) -> None:
        for alias in node.names:
            name = (alias.asname or alias.name).split(".")[0]
            self.stores.setdefault(name, (node.lineno, node.col_offset))

    _HANDLERS: ClassVar[dict[type, Callable[[_Region, Any, frozenset[str]], None]]] = {
        ast.Name: _name,
        ast.Assign: _assign,
        ast.AnnAssign: _assign,
        ast.AugAssign: _assign,
        ast.NamedExpr: _assign,
        ast.For: _for,
        ast.AsyncFor: _for,
        ast.withitem: _withitem,
        ast.FunctionDef: _function,
        ast.AsyncFunctionDef: _function,
        ast.Lambda: _function,
        ast.ListComp: _comprehension,
        ast.SetComp: _comprehension,
        ast.GeneratorExp: _comprehension,
        ast.DictComp: _comprehension,
        ast.Import: _import,
        ast.ImportFrom: _import,
    }


def _given(call: cst.Call, name: str, index: int) -> bool:
    """Whether `call` may pass the parameter `name` (the `index`th positional one): by keyword,
    by position, or in `*args` / `**kwargs` (torchtune's `apply_activation_checkpointing(model,
    auto_wrap_policy=..., **kwargs)` passes on what its callers give)."""
    positional = 0
    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value == name):
            return True
        positional += arg.keyword is None
    return positional > index


def _end(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def _as_load(target: ast.expr) -> ast.expr:
    """`x` of `x += 1` read before it is bound."""
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target)
    return target


def _parameters(args: ast.arguments) -> list[ast.arg]:
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    out += [a for a in (args.vararg, args.kwarg) if a is not None]
    return out


def _literal_device(node: cst.BaseExpression) -> bool:
    """`"cpu"`, `torch.device("cpu")`: a device the code spells (DEV002 keeps a CUDA one, reported)."""
    if isinstance(node, cst.Call) and node.args:
        node = node.args[0].value
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString))


def _mentions_xla(code: str) -> bool:
    lowered = code.lower()
    return any(word in lowered for word in _XLA_WORDS)


class XlaAutogradFamily(ReferenceTracker, Family):
    name = "xla-autograd"
    # every spelling of torch's checkpoint names `utils.checkpoint` or imports from `torch.utils`;
    # a bare `checkpoint` is in a fifth of real files (saving a model's), which the prefilter then
    # sent to libcst: cold lint of the 1.2M-line corpus took 87.6 CPU s where it took 71.
    # `checkpoint_wrapper` names torch's wrapper's module, `checkpointing_enable` transformers' methods,
    # `_composable` torch's composable checkpoint's package
    tokens = (
        b"utils.checkpoint",
        b"torch.utils import",
        b"checkpoint_wrapper",
        b"_composable",
        b"checkpointing_enable",
        b"inference_mode",
        b"flex_attention",  # FlexAttention's module: every import of its names spells it
        b"Generator",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self._names: frozenset[str] | None = None  # local names an import binds to a `_REFERENCED`
        self._regions: dict[int, cst.CSTNode] = {}  # id(inference_mode call) -> its `with` / def
        self._fine: set[int] = set()  # references given a checkpoint_fn of the program's
        self._off_xla: set[int] = set()  # arms an earlier test for XLA did not take
        self._off_depth = 0

    # -- the CUDA path of code that already tests for XLA ----------------------------------

    def _arms(self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None) -> None:
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        if _mentions_xla(self.ctx.code(test)):
            arm = body if negated else orelse
            if arm is not None:
                self._off_xla.add(id(arm))

    def _enter(self, node: cst.CSTNode) -> None:
        if id(node) in self._off_xla:
            self._off_depth += 1

    def _leave(self, node: cst.CSTNode) -> None:  # (the walk's leave_ methods hand on the updated node)
        if id(node) in self._off_xla:
            self._off_depth -= 1

    def visit_If(self, node: cst.If) -> None:
        self._enter(node)
        self._arms(node.test, node.body, node.orelse)

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        self._leave(original)
        return updated

    def visit_Else(self, node: cst.Else) -> None:
        self._enter(node)

    def leave_Else(self, original: cst.Else, updated: cst.Else) -> cst.Else:
        self._leave(original)
        return updated

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter(node)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        self._leave(original)
        return updated

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._arms(node.test, node.body, node.orelse)

    def _report(self, code: str, node: cst.CSTNode, message: str, advice: str | None = None) -> None:
        if self._off_depth or id(node) in self._off_xla:
            return
        if self.ctx.in_cuda_only_code() is not None:
            return  # torchtune 0.6.1's `if _SUPPORTS_FLEX_ATTENTION:` (CUDA's, GUARD003 says): XLA never runs it
        self.ctx.report(code, node, message, advice=advice)

    # -- sites -----------------------------------------------------------------------------

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._regions[id(item.item)] = node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        for deco in node.decorators:
            self._regions[id(deco.decorator)] = node

    def visit_Call(self, node: cst.Call) -> None:
        self._inner.add(id(node.func))
        if self.ctx.target.name != "xla":
            return
        qual = self.ctx.qualname(node.func)
        self._generator(node, qual)
        if qual == CHECKPOINT or (qual == SEQUENTIAL and not _one_segment(node)):
            self._report(
                "XLA006",
                node,
                f"`{qual.rpartition('.')[2]}` from torch.utils.checkpoint raises on XLA tensors with torch_xla 2.9 "
                "(`module 'torch' has no attribute 'xla'`)",
            )
        elif qual in COMPOSABLE:
            self._report(
                "XLA006",
                node,
                "torch's composable `checkpoint` runs torch.utils.checkpoint's non-reentrant form, which raises on XLA "
                "tensors with torch_xla 2.9 (`module 'torch' has no attribute 'xla'`)",
                _COMPOSABLE_ADVICE,
            )
        elif qual == WRAPPER and not _given(node, "checkpoint_fn", 2):
            self._report(
                "XLA006",
                node,
                "torch's `checkpoint_wrapper` without a `checkpoint_fn` runs torch.utils.checkpoint, which raises on "
                "XLA tensors with torch_xla 2.9 (`module 'torch' has no attribute 'xla'`)",
                _WRAPPER_ADVICE,
            )
        elif qual == APPLY and not _given(node, "checkpoint_wrapper_fn", 1):
            self._report(
                "XLA006",
                node,
                "`apply_activation_checkpointing` wraps layers in torch's `checkpoint_wrapper`, whose "
                "torch.utils.checkpoint raises on XLA tensors with torch_xla 2.9 "
                "(`module 'torch' has no attribute 'xla'`)",
                _APPLY_ADVICE,
            )
        elif qual in FLEX:
            self._flex(node, qual, "")
        elif qual == INFERENCE_MODE and not _turns_off(node):
            self._inference_mode(node)
        elif qual in ("functools.partial", "partial") or (qual or "").endswith(".partial"):
            self._partial(node)
        elif self._hf_method(node, qual):
            name = node.func.attr.value  # type: ignore[attr-defined]
            self._report(
                "XLA006",
                node,
                f"transformers' `{name}` gives the model's layers torch.utils.checkpoint, which raises on XLA "
                "tensors in training with torch_xla 2.9 (`module 'torch' has no attribute 'xla'`)",
                _HF_ADVICE,
            )

    def _flex(self, node: cst.CSTNode, qual: str, how: str) -> None:
        name = qual.rpartition(".")[2]
        what = "raises" if name == "flex_attention" else "makes a BlockMask for FlexAttention, which raises"
        self._report(
            "XLA008",
            node,
            f"FlexAttention's `{name}`{how} {what} on XLA tensors with torch 2.9 / torch_xla 2.9 "
            "(`FlexAttention is only supported on CUDA, CPU or HPU devices`)",
        )

    def _generator(self, node: cst.Call, qual: str | None) -> None:
        """`torch.Generator(device=device)`: a device porter cannot see (a literal is DEV002's)."""
        if qual not in device_generator().get("callables", ()):
            return
        device = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "device"), None)
        if device is None and node.args and node.args[0].keyword is None and not node.args[0].star:
            device = node.args[0].value
        if device is None or _literal_device(device):
            return
        self._report(
            "XLA009",
            node,
            f"`{qual}(device={self.ctx.code(device)})`: where that is the XLA device, the line raises with torch_xla "
            "2.9 (`XLA device type not an accelerator`): PyTorch/XLA has no generator on its device, and porter "
            "cannot see which device this is",
        )

    def _partial(self, node: cst.Call) -> None:
        """`partial(checkpoint_wrapper, checkpoint_fn=...)`: the wrapper runs the program's function."""
        args = self.positional(node)
        if args and _given(node, "checkpoint_fn", 3):
            self._fine.add(id(args[0].value))

    def _hf_method(self, node: cst.Call, qual: str | None) -> bool:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _HF_METHODS:
            return False
        if qual is not None and not qual.startswith(_HF_PACKAGES):
            return False  # a method of something the program imports from elsewhere
        if any(fn.name.value in _HF_METHODS for fn in self.ctx.scopes.functions):
            return False  # the methods' own implementation (an alias, an override calling its base)
        return any(full.split(".")[0] in _HF_PACKAGES for full in self.ctx.imports.names.values())

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """`@torch.inference_mode` without a call (the call form is visit_Call's)."""
        self._inner.add(id(node.decorator))
        if self.ctx.target.name == "xla" and self.ctx.qualname(node.decorator) == INFERENCE_MODE:
            self._inference_mode(node.decorator)

    def _inference_mode(self, node: cst.BaseExpression) -> None:
        region = self._regions.get(id(node))
        if region is not None and not self._reads_outside(region):
            return
        self._report(
            "XLA007",
            node,
            "a module's forward under `torch.inference_mode()` raises on XLA with torch_xla 2.9 "
            "(`Cannot set version_counter for inference tensor`)",
        )

    def _reads_outside(self, region: cst.CSTNode) -> bool:
        try:
            tree = ast.parse(cst.Module(body=[region]).code)  # type: ignore[list-item]
        except SyntaxError:
            return True
        stmt = tree.body[0]
        imports = self.ctx.imports.names
        stdlib = sys.stdlib_module_names

        def allowed(name: str) -> bool:
            full = imports.get(name)
            if full is None:
                return hasattr(builtins, name)
            top = full.split(".")[0]
            return top == "torch" or top in stdlib

        # a decorated function: its body (its parameters are bound outside the mode)
        body = stmt.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else [stmt]
        return _Region(allowed).reads_outside(body)

    # -- references that are not called ----------------------------------------------------

    def visit_Name(self, node: cst.Name) -> None:
        if self._names is None:
            self._names = frozenset(local for local, full in self.ctx.imports.names.items() if full in _REFERENCED)
        if node.value in self._names:
            self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        super().visit_Attribute(node)
        if node.attr.value in _LAST_NAMES:
            self._reference(node)

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if self.ctx.target.name != "xla" or not self.whole_reference(node) or id(node) in self._fine:
            return
        qual = self.ctx.qualname(node)
        if qual == INFERENCE_MODE:
            self._report(
                "XLA007",
                node,
                "`torch.inference_mode`, passed on here, makes a region where a module's forward raises on XLA with "
                "torch_xla 2.9 (`Cannot set version_counter for inference tensor`)",
            )
        elif qual in FLEX:
            self._flex(node, qual, ", passed on here,")
        elif qual in _REFERENCED:
            short = qual.rpartition(".")[2]
            self._report(
                "XLA006",
                node,
                f"torch's `{short}`, passed on here, runs torch.utils.checkpoint, which raises on XLA tensors with "
                "torch_xla 2.9 (`module 'torch' has no attribute 'xla'`)",
                _WRAPPER_ADVICE if qual == WRAPPER else _COMPOSABLE_ADVICE if qual in COMPOSABLE else None,
            )
