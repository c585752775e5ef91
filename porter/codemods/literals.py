"""Strings that read `"cuda"` but are not devices: they stay as they are.

A dict key (`rng_states["cuda"]`, `{"cuda": ...}`), a framework's vocabulary
(`accelerator="cuda"`, a tuple of accelerator names such as `("cpu", "gpu", "cuda")`, a
comparison with an `accelerator` flag), a key built in an f-string (a profiler's
`f"{'cuda' if c else 'cpu'}_time_total"`), or the argument of a `torch.cuda` call that stays
CUDA names CUDA in someone else's vocabulary: rewriting it breaks the program. In a project
that picks its device generically (`ctx.device_generic`), `x == "cuda"` on a device type (the
project index says what `x` is: porter.pipeline.device_types; by its name `device_type` only
where the index cannot tell) asks "is this CUDA?" of a device type that is already the
target's; a value the index proves is no device (a GPU-platform option) keeps its `"cuda"`
in any project, as someone else's vocabulary. The `"cuda"` in
`_get_available_device_type() or "cuda"` is only the fallback when no accelerator is found:
both stay. This family
only marks such strings in `ctx.keep_cuda` before the device family sees them; it reports
nothing (a framework's own device name is reported by `frameworks.py`; the device family
reports the device-generic ones, `ctx.keep_generic`, as DEV014).
"""

from __future__ import annotations

import ast
from functools import lru_cache

import libcst as cst

from porter.codemods.cuda_api import rewrites_call
from porter.codemods.device import DeviceFamily
from porter.codemods.family import Family, string_value
from porter.codemods.flow import Flow, FlowScopes, assigned_values
from porter.pipeline.device_types import DEVICE_TYPE, NOT_DEVICE, compared_key
from porter.pipeline.resolve import dotted
from porter.config.ruledata import load_toml


AVAILABLE_DEVICE_TYPE = "torch._utils._get_available_device_type"
CUDA_AVAILABLE = "torch.cuda.is_available"
VOCABULARY = frozenset(("gpu", "rocm"))  # names beside "cuda" that no torch device type has
GENERIC_DEVICE_TYPE = "device_type"
_ENUM_BASES = ("Enum", "Flag")  # and their kin: StrEnum, accelerate's BaseEnum, transformers' ExplicitEnum  # the name generic selection gives its answer (when the index cannot tell)


@lru_cache(maxsize=1)
def not_device_keywords() -> frozenset[str]:
    return frozenset(load_toml("frameworks.toml").get("not_device", {}).get("keywords", ()))


def _is_cuda(node: cst.CSTNode) -> bool:
    value = string_value(node)
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def _strings(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`node` itself, or the elements of a tuple/list/set literal, that are CUDA strings."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return [e.value for e in node.elements if _is_cuda(e.value)]
    return [node] if _is_cuda(node) else []


def _names_accelerator(node: cst.BaseExpression) -> bool:
    name = dotted(node)
    return name is not None and "accelerator" in name.rsplit(".", 1)[-1].lower()


def _conjuncts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `a and b and c` (unparenthesised nesting flattened)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) and not node.lpar:
        return [*_conjuncts(node.left), *_conjuncts(node.right)]
    return [node]


class _Strings(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.SimpleString] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if _is_cuda(node):
            self.found.append(node)


class LiteralsFamily(FlowScopes, Family):
    name = "literals"
    serves = DeviceFamily  # it owns no code: it marks the strings the device family must leave
    tokens = (b"cuda",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.flow = Flow(ctx.settings, ctx.path, ctx.source)

    def _keep(self, nodes) -> None:
        self.ctx.keep_cuda.update(id(n) for n in nodes)

    def _compared(self, node: cst.BaseExpression) -> str | None:
        """The index's verdict on a value compared with `"cuda"`: DEVICE_TYPE, NOT_DEVICE or None."""
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return None
        try:
            text = ast.unparse(ast.parse("(" + self.ctx.code(node) + ")", mode="eval").body)
        except SyntaxError:
            return None
        found = self.flow.lookup(compared_key(text))
        return found[0] if found is not None and found[0] in (DEVICE_TYPE, NOT_DEVICE) else None

    def _keep_vocabulary(self, nodes) -> None:
        """A GPU-platform or accelerator name (`choices=["cuda", "rocm"]`): the device family
        notes it (DEV015), so that a reviewer sees it was read."""
        ids = {id(n) for n in nodes}
        self.ctx.keep_cuda.update(ids)
        self.ctx.keep_vocabulary.update(ids)

    def _keep_generic(self, nodes) -> None:
        """Kept because the project is device-generic: reported as kept (DEV014 for strings, by the
        device family; CUDA010 for `torch.cuda.is_available()`, by the torch.cuda family)."""
        ids = {id(n) for n in nodes}
        self.ctx.keep_cuda.update(ids)
        self.ctx.keep_generic.update(ids)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """`class RNGType(Enum): CUDA = "cuda"`: an enum member's value is the enum's own name
        for CUDA (`RNGType.CUDA`), not a device: it stays, noted (DEV015)."""
        super().visit_ClassDef(node)
        if not any((dotted(b.value) or "").rsplit(".", 1)[-1].endswith(_ENUM_BASES) for b in node.bases):
            return
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        self._keep_vocabulary(_strings(small.value))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`Literal["cpu", "cuda", "auto"]`: the values a parameter accepts, not a device."""
        if (dotted(node.value) or "").rsplit(".", 1)[-1] != "Literal":
            return  # (by its name: most subscripts are no annotation, and resolving each costs)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self._keep_vocabulary(_strings(element.slice.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._keep(_strings(node.key))

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            self._keep(_strings(node.slice.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in not_device_keywords():
            self._keep(_strings(node.value))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if not any(_strings(s) for s in sides):
            return  # no CUDA string to keep: spares the index lookups below
        if any(_names_accelerator(s) for s in sides):
            for s in sides:
                self._keep(_strings(s))
        elif any(self._compared(s) == NOT_DEVICE for s in sides):
            for s in sides:
                self._keep_vocabulary(_strings(s))
        elif any(self._generic_device_type(s) for s in sides):
            for s in sides:
                self._keep_generic(_strings(s))

    def _generic_device_type(self, node: cst.BaseExpression) -> bool:
        """A device type (`utils.device_type`, `kind` from `current_accelerator().type`) in
        device-generic code: the selected device's type, not a CUDA string porter rewrites.
        What it is comes from the project index; where the index cannot tell, the name
        `device_type` is taken at its word (unless this file assigns it a CUDA string)."""
        if not self.ctx.device_generic:
            return False
        verdict = self._compared(node)
        if verdict is not None:
            return verdict == DEVICE_TYPE
        name = dotted(node)
        if name is None or name.rsplit(".", 1)[-1] != GENERIC_DEVICE_TYPE:
            return False
        if "." in name:
            return True
        for scope in (self.ctx.scopes.innermost, self.ctx.module):
            if scope is not None and any(_strings(v) for v in assigned_values(scope, name)):
                return False  # `device_type = "cuda"` here: it is ported, so is the test
        return True

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """`_get_available_device_type() or "cuda"`: the fallback when no accelerator is found.
        `device_type == "cuda" and torch.cuda.is_available()`: one question, "is this CUDA?"."""
        if not self.ctx.device_generic:
            return
        if isinstance(node.operator, cst.Or):
            if isinstance(node.left, cst.Call) and self.ctx.qualname(node.left.func) == AVAILABLE_DEVICE_TYPE:
                self._keep_generic(_strings(node.right))
            return
        operands = _conjuncts(node)
        if any(self._asks_cuda(o) for o in operands):
            self._keep_generic(o for o in operands if isinstance(o, cst.Call) and self.ctx.qualname(o.func) == CUDA_AVAILABLE)

    def _asks_cuda(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
            return False
        sides = (node.left, node.comparisons[0].comparator)
        return any(self._generic_device_type(s) for s in sides) and any(_strings(s) for s in sides)

    def _vocabulary(self, node: cst.Tuple | cst.List | cst.Set) -> None:
        # a list of accelerator or GPU-platform names: "gpu" and "rocm" are no torch device types
        values = [string_value(e.value) for e in node.elements]
        if not VOCABULARY.isdisjoint(values):
            self._keep_vocabulary(_strings(node))

    visit_Tuple = _vocabulary
    visit_List = _vocabulary
    visit_Set = _vocabulary

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        """`f"{'cuda' if c else 'cpu'}_time_total"` builds a key; `f"{dev}:{i}"` a device."""
        texts = [p.value for p in node.parts if isinstance(p, cst.FormattedStringText)]
        if not any(t and not t.startswith(":") for t in texts) or texts[:1] == ["cuda:"]:
            return
        scan = _Strings()
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                part.expression.visit(scan)
        self._keep(scan.found)

    def visit_Call(self, node: cst.Call) -> None:
        """`torch.cuda.get_device_properties("cuda")` keeps its argument where the call stays;
        `parser.add_argument("--accelerator", default="cuda")` is an accelerator name too, as is
        the default of an option whose choices are such names (`choices=["cuda", "rocm"]`)."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            flags = [string_value(a.value) or "" for a in node.args if a.keyword is None]
            choices = self.kwarg(node, "choices")
            listed = choices.value if choices is not None else None
            vocabulary = isinstance(listed, (cst.Tuple, cst.List, cst.Set)) and not VOCABULARY.isdisjoint(
                string_value(e.value) for e in listed.elements
            )
            if vocabulary or any("accelerator" in f.lower() for f in flags):
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value in ("default", "choices", "const"):
                        self._keep_vocabulary(_strings(arg.value))
            return
        qual = self.ctx.qualname(node.func)
        if qual is None or not qual.startswith("torch.cuda.") or rewrites_call(self.ctx, qual):
            return
        for arg in node.args:
            self._keep(_strings(arg.value))
