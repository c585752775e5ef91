"""Mixed precision: `torch.cuda.amp.autocast`, fp16 → bf16, and `GradScaler`.

fp16 → bf16 is an unsafe fix (it changes numerics); removing a GradScaler is tied to it,
because a scaler is needed exactly when fp16 stays. So without `--unsafe-fixes` the scaler
stays and is reported; with it, both change together.
"""

from __future__ import annotations

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.family import Family, fix_commas, keyword_arg, string_value, walk
from porter.core.findings import Applicability
from porter.analysis.resolve import dotted

AUTOCAST = {"torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"}
# device-generic spellings: `torch.autocast("cuda")` without a dtype means CUDA's float16
GENERIC_AUTOCAST = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"}
# targets whose autocast default is their own, not CUDA's (targets.md: write the dtype)
WRITE_DTYPE = {"neuron", "tpu"}
SCALERS = {
    "torch.cuda.amp.GradScaler",
    "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
}
FP16 = {"torch.float16", "torch.half"}
# `x.dtype == torch.float16`, `x.dtype in {torch.float16, torch.bfloat16}`: a test of what a tensor is,
# not a choice of precision; bf16 there would skip the fp16 tensors the test was written for
_DTYPE_TEST_COLLECTIONS = (cst.Set, cst.Tuple, cst.List)
# the same for a dtype that is a key: `{torch.float16: 2, torch.bfloat16: 2}` (a table by dtype: bf16
# there makes a duplicate key and fp16 tensors are no longer in it), `WIDTHS[torch.float16]`, and
# `case torch.float16:` (an `==` test)
_DTYPE_KEYS = {cst.DictElement: "key", cst.Index: "value", cst.MatchValue: "value"}
# and a collection that already holds bf16, `SUPPORTED = (torch.float16, torch.bfloat16, torch.float32)`: a list
# of dtypes, named and tested elsewhere (`x.dtype not in SUPPORTED`); bf16 for its fp16 is a duplicate and
# fp16 tensors are turned away
_SCALER_METHODS = {"scale", "step", "update", "unscale_"}
_STATEMENT_METHODS = {"step", "update", "unscale_"}


class _ScalerUses(cst.CSTVisitor):
    """Finds `S = GradScaler(...)` bindings and sorts every use of S into the removable
    forms (`S.scale(x)`, `S.step(opt)`, `S.update()`, `S.unscale_(opt)`) and the rest."""

    def __init__(self, imports) -> None:
        self.imports = imports
        self.bindings: dict[str, list[cst.Assign]] = {}  # key: "name" or "self.name"
        self.allowed: dict[str, int] = {}
        self.refs: dict[str, int] = {}
        self.blocking: dict[str, list[str]] = {}
        self._statement_calls: set[int] = set()
        self._targets: set[int] = set()
        # GradScaler named where no binding above can be followed (`isinstance(s, GradScaler)`,
        # `@delegates(GradScaler)`, `GradScaler()` in a tuple): ids, each reported as manual
        self.loose: set[int] = set()
        self._bound: set[int] = set()  # the `GradScaler(...)` calls of the bindings
        self._funcs: set[int] = set()  # callees and attribute names: judged with their parent
        self._annotation = 0  # depth: a type annotation does nothing at run time

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotation += 1

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self._annotation -= 1

    def _scaler(self, node: cst.BaseExpression) -> bool:
        return self.imports.qualify(dotted(node) or "") in SCALERS

    def _key(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        if name is None or name.count(".") > 1 or (name.count(".") == 1 and not name.startswith("self.")):
            return None
        return name

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            qual = self.imports.qualify(dotted(node.value.func) or "")
            if qual in SCALERS and len(node.targets) == 1:
                key = self._key(node.targets[0].target)
                if key is not None:
                    self.bindings.setdefault(key, []).append(node)
                    self._targets.add(id(node.targets[0].target))
                    self._bound.add(id(node.value))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._funcs.add(id(func))
        if id(node) not in self._bound and not self._annotation and self._scaler(func):
            self.loose.add(id(node))
        if isinstance(func, cst.Attribute) and func.attr.value in _SCALER_METHODS:
            key = self._key(func.value)
            if key is not None:
                method = func.attr.value
                ok = method == "scale" or id(node) in self._statement_calls
                if method in ("step", "unscale_") and len(node.args) != 1:
                    ok = ok and method == "step" and len(node.args) >= 1
                if ok:
                    self.allowed[key] = self.allowed.get(key, 0) + 1
                else:
                    self.blocking.setdefault(key, []).append(f"`{key}.{method}(...)` used as a value")

    def visit_Name(self, node: cst.Name) -> None:
        self._count(node)
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self._count(node)
        self._funcs.add(id(node.attr))  # `GradScaler` in `amp.GradScaler` is judged with the whole
        self._reference(node)

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if id(node) not in self._funcs and not self._annotation and self._scaler(node):
            self.loose.add(id(node))

    def _count(self, node) -> None:
        if id(node) in self._targets:
            return
        key = self._key(node)
        if key is not None:
            self.refs[key] = self.refs.get(key, 0) + 1

    def removable(self, key: str) -> tuple[bool, str]:
        if len(self.bindings.get(key, [])) != 1:
            return False, f"`{key}` is assigned more than once"
        if self.blocking.get(key):
            return False, "; ".join(self.blocking[key])
        # each allowed method use references the key once (its receiver)
        others = self.refs.get(key, 0) - self.allowed.get(key, 0)
        if others > 0:
            return False, f"`{key}` is used in {others} other place(s) (state_dict, passed on, ...)"
        return True, ""


CUDA_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")


class AmpFamily(Family):
    name = "amp"
    tokens = (b"amp", b"autocast", b"float16", b"half", b"GradScaler")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every finding is of a GradScaler (`visit_Module` follows them only in a file that
        spells `GradScaler`), a call an import qualifies into `AUTOCAST`/`GENERIC_AUTOCAST`,
        a `.half()` call, or an attribute qualified into `FP16` (`Sites.half_attrs`)."""
        if not super().candidate(ctx, source):
            return False
        found = ctx.sites()
        if found is None or b"GradScaler" in source or "half" in found.callees:
            return True
        autocasts = AUTOCAST | GENERIC_AUTOCAST
        if any(q in autocasts for name in found.dotted_calls for q in found.qualified(name)):
            return True
        return any(q in FP16 for name in found.half_attrs for q in found.qualified(name))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._scalers: dict[str, bool] = {}  # key -> removal applied
        self._uses: _ScalerUses | None = None
        self._dtype_tests: set[int] = set()  # ids of the operands of comparisons (`_DTYPE_TEST_COLLECTIONS` opened)

    def visit_Module(self, node: cst.Module) -> None:
        if b"GradScaler" not in self.ctx.source:
            return
        uses = _ScalerUses(self.ctx.imports)
        cstwalk.visit(node, uses)
        self._uses = uses
        # decided up front: uses of a scaler may come before its assignment in the file
        for key, assigns in uses.bindings.items():
            self._scalers[key] = uses.removable(key)[0] and self.ctx.would_apply(
                "AMP003", assigns[0], Applicability.UNSAFE
            )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        for operand in operands:
            self._dtype_tests.add(id(operand))
            if isinstance(operand, _DTYPE_TEST_COLLECTIONS):
                self._dtype_tests.update(id(e.value) for e in operand.elements)

    def _dtype_key(self, node: cst.DictElement | cst.Index | cst.MatchValue) -> None:
        key = getattr(node, _DTYPE_KEYS[type(node)])
        self._dtype_tests.add(id(key))
        if isinstance(node, cst.DictElement) and self.ctx.qualname(key) in FP16:
            # the fp16 entry of a table by dtype (megatron-core 0.19.2's per-dtype buffers, `{torch.float16:
            # torch.empty(n, dtype=torch.float16), torch.bfloat16: ...}`): its value is made for fp16 tensors
            self._dtype_tests.update(
                id(n)
                for n in walk(node.value)
                if isinstance(n, (cst.Attribute, cst.Name)) and self.ctx.qualname(n) in FP16
            )

    visit_DictElement = visit_Index = visit_MatchValue = _dtype_key

    def _dtype_list(self, node: cst.Set | cst.Tuple | cst.List) -> None:
        values = [e.value for e in node.elements]
        if any(self.ctx.qualname(v) == "torch.bfloat16" for v in values):
            self._dtype_tests.update(id(v) for v in values)

    visit_Set = visit_Tuple = visit_List = _dtype_list

    # -- autocast --------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qual = self.ctx.qualname(original.func)
        if qual in AUTOCAST:
            return self._autocast(original, updated)
        if qual in GENERIC_AUTOCAST and self.ctx.target.name in WRITE_DTYPE:
            return self._generic_autocast(original, updated)
        if qual in SCALERS:
            if self._uses is not None and id(original) in self._uses.loose:
                self._loose(original, f"`{self.ctx.code(original)}` is not bound to a name porter can follow")
            return updated  # handled with its assignment
        func = original.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "half" and not original.args and self.ctx.qualname(func) is None:
                new = updated.with_changes(func=updated.func.with_changes(attr=cst.Name("bfloat16")))
                if self.ctx.report(
                    "AMP002",
                    original,
                    "`.half()` becomes `.bfloat16()`: bf16 is native on the target and needs no loss scaling",
                    replacement=new,
                ):
                    return new
                return updated
            key = self._uses._key(func.value) if self._uses else None
            if key is not None and self._scalers.get(key):
                return self._scaler_use(original, updated, key)
        return updated

    def _dtype(self, original: cst.Call) -> cst.BaseExpression:
        """The dtype CUDA autocast meant (float16), or bf16 with the unsafe AMP002 fix."""
        bf16 = self.ctx.report(
            "AMP002",
            original,
            "CUDA autocast defaults to float16; on the target bf16 is native and needs no GradScaler",
            replacement=self.ctx.expr("{torch}.bfloat16"),
        )
        return self.ctx.expr("{torch}.bfloat16" if bf16 else "{torch}.float16")

    def _autocast(self, original: cst.Call, updated: cst.Call):
        t = self.ctx.target
        kind = self.ctx.accelerator_type() if self.ctx.portable else cst.SimpleString(f'"{t.device_type}"')
        device = cst.Arg(value=kind)
        # `torch.cuda.amp.autocast(enabled, dtype, cache_enabled)` takes them positionally;
        # `torch.autocast(device_type, dtype, enabled, cache_enabled)` in another order
        named = (
            [
                a.with_changes(
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    ),
                )
                if a.keyword is None and not a.star and name is not None
                else a
                for a, name in zip(updated.args, (*CUDA_AUTOCAST_POSITIONAL, *[None] * len(updated.args)))
            ]
            if self.ctx.qualname(original.func) != "torch.autocast"
            else list(updated.args)
        )
        args = [device, *named]
        has_dtype = self.kwarg(original, "dtype") is not None or (
            len(self.positional(original)) > 1 and self.ctx.qualname(original.func) != "torch.autocast"
        )
        if not has_dtype:
            args.append(keyword_arg("dtype", self._dtype(original)))
        new = cst.Call(func=self.ctx.ref("torch.autocast"), args=fix_commas(args), lpar=updated.lpar, rpar=updated.rpar)
        if self.ctx.report(
            "AMP001",
            original,
            f"`{dotted(original.func)}(...)` becomes `torch.autocast({self.ctx.code(kind)}, ...)`",
            replacement=new,
        ):
            self.ctx.release(original.func)
            if t.device_import:
                self.ctx.add_import(t.device_import)
            return new
        return updated

    def _generic_autocast(self, original: cst.Call, updated: cst.Call):
        """`torch.autocast("cuda")` with no dtype: CUDA's default was float16, the target's
        default is its own; the dtype the code ran with is written out."""
        positional = self.positional(original)
        device = self.kwarg(original, "device_type") or (positional[0] if positional else None)
        value = string_value(device.value) if device is not None else None
        if value is None or value.split(":")[0] != "cuda":
            return updated
        if device is not None and id(device.value) in self.ctx.keep_cuda:
            return updated  # CUDA's own autocast, kept on CUDA (backends.py): it keeps CUDA's default too
        if self.kwarg(original, "dtype") is not None or len(positional) > 1 or any(a.star for a in original.args):
            return updated
        new = self.with_kwarg(updated, "dtype", self._dtype(original))
        t = self.ctx.target
        if self.ctx.report(
            "AMP001",
            original,
            f"CUDA autocast without a dtype ran in float16; {t.display}'s default differs: the dtype is written",
            replacement=new,
        ):
            return new
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if self._uses is not None and id(original) in self._uses.loose:
            self._loose(original, f"`{original.value}` is referred to outside a binding porter can follow")
        return updated

    def _loose(self, node: cst.CSTNode, how: str) -> None:
        """A GradScaler the removal cannot follow: the fp16 loss scaling stays, said."""
        self.ctx.report(
            "AMP003", node, f"GradScaler: {how}; its loss scaling stays", applicability=Applicability.MANUAL
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if self._uses is not None and id(original) in self._uses.loose:
            self._loose(original, f"`{self.ctx.code(original)}` is referred to outside a binding porter can follow")
            return updated
        qual = self.ctx.qualname(original)
        if qual in FP16 and id(original) not in self.ctx.claimed and id(original) not in self._dtype_tests:
            new = self.ctx.ref("torch.bfloat16")
            if self.ctx.report(
                "AMP002",
                original,
                f"`{qual}` becomes `torch.bfloat16`: bf16 is native on the target, fp16 needs loss scaling",
                replacement=new,
            ):
                return new
        return updated

    # -- GradScaler ------------------------------------------------------------------------

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if self._uses is None or not isinstance(original.value, cst.Call):
            return updated
        if self.ctx.qualname(original.value.func) not in SCALERS:
            return updated
        key = self._uses._key(original.targets[0].target)
        if key is None:
            return updated
        ok, why = self._uses.removable(key)
        if not ok:
            self.ctx.report(
                "AMP003",
                original,
                f"GradScaler `{key}` cannot be removed automatically: {why}",
                applicability=Applicability.MANUAL,
            )
            return updated
        if self._scalers.get(key):
            self.ctx.supersede(original)  # e.g. a "cuda" argument: the whole statement goes
        applied = self.ctx.report(
            "AMP003",
            original,
            f"GradScaler `{key}` and its scale/step/update calls are removed (bf16 needs no loss scaling)",
            replacement=cst.RemovalSentinel.REMOVE,
            applicability=Applicability.UNSAFE,
        )
        if applied and self._scalers.get(key):
            self.ctx.statement_edits.remove.add(id(original))
            self.ctx.release(original.value.func)
        return updated

    def _scaler_use(self, original: cst.Call, updated: cst.Call, key: str):
        method = cst.ensure_type(original.func, cst.Attribute).attr.value
        if method == "scale":
            return (
                updated.args[0].value.with_changes(
                    lpar=updated.lpar or updated.args[0].value.lpar, rpar=updated.rpar or updated.args[0].value.rpar
                )
                if updated.args
                else updated
            )
        statement = self.ctx.statement_of.get(id(original))
        if method == "step":
            opt, *rest = updated.args
            return cst.Call(
                func=cst.Attribute(value=opt.value, attr=cst.Name("step")),
                args=fix_commas(list(rest)),
            )
        if statement is not None:
            self.ctx.statement_edits.remove.add(id(statement))
        return updated
