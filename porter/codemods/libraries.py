"""CUDA kernel libraries → PyTorch-native equivalents (LIB family).

- LIB001 flash-attn `flash_attn_func` / `flash_attn_qkvpacked_func` / `flash_attn_kvpacked_func`
  → `F.scaled_dot_product_attention` with the layout change: flash-attn takes and returns
  (batch, seq, heads, dim), SDPA works on (batch, heads, seq, dim). GQA/MQA (fewer kv heads)
  is `enable_gqa=True`. `varlen` and `with_kvcache` are manual (pad and mask).
- LIB002 xformers `memory_efficient_attention` → SDPA (same layout change; a tensor
  `attn_bias` is SDPA's additive `attn_mask`, `LowerTriangularMask()` is `is_causal=True`).
- LIB003 apex `FusedLayerNorm` / `FusedRMSNorm` → `nn.LayerNorm` / `nn.RMSNorm`.
- LIB004 apex (and DeepSpeed) `FusedAdam`, `FusedSGD`, `FusedAdagrad` → `torch.optim`;
  `FusedLAMB` / `FusedNovoGrad` are manual (torch.optim has no LAMB).
- LIB005 `apex.amp` → nothing to initialize; `amp.scale_loss` is unwrapped (bf16 needs no
  loss scaling); the forward needs `torch.autocast` (advice: porter cannot see the forward).
- LIB006 bitsandbytes optimizers → `torch.optim` (32-bit state: more memory for 8-bit ones).

Every reference to a name handled here gets a finding from this family (a rewrite or a
manual one); `handled()` tells the KERN family to stay quiet about those names.
Numerical parity of each rewrite: tests/kernels/test_library_parity.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from porter.codemods.family import Family, ReferenceTracker
from porter.core.findings import Applicability
from porter.analysis.resolve import _import_statements, dotted
from porter.config.ruledata import all_rules

SDPA = "torch.nn.functional.scaled_dot_product_attention"

_FA = ("flash_attn.", "flash_attn.flash_attn_interface.")
FLASH = {p + n: n for p in _FA for n in ("flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_kvpacked_func")}
FLASH_MANUAL = {
    p + n: n
    for p in _FA
    for n in (
        "flash_attn_varlen_func",
        "flash_attn_varlen_qkvpacked_func",
        "flash_attn_varlen_kvpacked_func",
        "flash_attn_with_kvcache",
    )
}
XFORMERS = {"xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention"}
XF_CAUSAL = {
    "xformers.ops.LowerTriangularMask",
    "xformers.ops.fmha.LowerTriangularMask",
    "xformers.ops.fmha.attn_bias.LowerTriangularMask",
}

_NORM_MODULES = ("apex.normalization.", "apex.normalization.fused_layer_norm.")
NORMS = {
    m + n: (n, torch_name)
    for m in _NORM_MODULES
    for n, torch_name in (
        ("FusedLayerNorm", "torch.nn.LayerNorm"),
        ("MixedFusedLayerNorm", "torch.nn.LayerNorm"),
        ("FusedRMSNorm", "torch.nn.RMSNorm"),
        ("MixedFusedRMSNorm", "torch.nn.RMSNorm"),
    )
}

_OPT_MODULES = {
    "FusedAdam": (
        "apex.optimizers.",
        "apex.optimizers.fused_adam.",
        "deepspeed.ops.adam.",
        "deepspeed.ops.adam.fused_adam.",
    ),
    "FusedSGD": ("apex.optimizers.", "apex.optimizers.fused_sgd."),
    "FusedAdagrad": ("apex.optimizers.", "apex.optimizers.fused_adagrad."),
    "FusedLAMB": ("apex.optimizers.", "apex.optimizers.fused_lamb."),
    "FusedMixedPrecisionLamb": ("apex.optimizers.", "apex.optimizers.fused_mixed_precision_lamb."),
    "FusedNovoGrad": ("apex.optimizers.", "apex.optimizers.fused_novograd."),
    "FusedLamb": ("deepspeed.ops.lamb.", "deepspeed.ops.lamb.fused_lamb."),
}
APEX_OPT = {m + n: n for n, mods in _OPT_MODULES.items() for m in mods}

BNB_PREFIX = "bitsandbytes.optim."
AMP_PREFIX = "apex.amp."

_ADAM_POS = ("params", "lr", "betas", "eps", "weight_decay", "amsgrad")
_TORCH_POSITIONAL = {
    "Adam": _ADAM_POS,
    "AdamW": _ADAM_POS,
    "SGD": ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
    "RMSprop": ("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered"),
    "Adagrad": ("params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"),
}


def _bnb_class(name: str) -> str | None:
    base = name.removeprefix("Paged").removesuffix("8bit").removesuffix("32bit")
    return base if base in _TORCH_POSITIONAL else None


def code_for(qual: str) -> str | None:
    if qual in FLASH or qual in FLASH_MANUAL:
        return "LIB001"
    if qual in XFORMERS:
        return "LIB002"
    if qual in NORMS:
        return "LIB003"
    if qual in APEX_OPT:
        return "LIB004"
    if qual == "apex.amp" or qual.startswith(AMP_PREFIX):
        return "LIB005"
    if qual.startswith(BNB_PREFIX) and qual[len(BNB_PREFIX) :].split(".")[0] not in ("GlobalOptimManager",):
        return "LIB006"
    return None


_NAMED = frozenset((*FLASH, *FLASH_MANUAL, *XFORMERS, *NORMS, *APEX_OPT, "apex.amp"))


def _may_name(base: str) -> bool:
    """Whether a name an import binds to `base` (or an attribute of it) may be one `code_for`
    knows."""
    dotted = base + "."
    if any(q == base or q.startswith(dotted) for q in _NAMED):
        return True
    return any(dotted.startswith(p) or p.startswith(dotted) for p in (AMP_PREFIX, BNB_PREFIX))


def handled(qual: str, ctx) -> bool:
    """True when a LIB rule reports `qual` (so KERN003 need not)."""
    code = code_for(qual)
    return code is not None and ctx.enabled(code)


# -- literals --------------------------------------------------------------------------------


def _is_name(node: cst.CSTNode | None, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _is_zero(node: cst.CSTNode | None) -> bool:
    if isinstance(node, cst.Integer):
        return int(node.value, 0) == 0
    if isinstance(node, cst.Float):
        return float(node.value) == 0.0
    return False


def _is_literal(node, value) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.value) == value
    return False


def _is_minus_one_pair(node) -> bool:
    if not isinstance(node, cst.Tuple) or len(node.elements) != 2:
        return False
    return all(
        isinstance(e.value, cst.UnaryOperation)
        and isinstance(e.value.operator, cst.Minus)
        and _is_literal(e.value.expression, 1)
        for e in node.elements
    )


def _bind(call: cst.Call, names: tuple[str, ...]) -> dict[str, cst.Arg] | None:
    """Arguments by parameter name; None for `*args`/`**kw` or too many positionals."""
    out: dict[str, cst.Arg] = {}
    pos = 0
    for a in call.args:
        if a.star:
            return None
        if a.keyword is None:
            if pos >= len(names):
                return None
            out[names[pos]] = a
            pos += 1
        else:
            out[a.keyword.value] = a
    return out


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


class LibrariesFamily(ReferenceTracker, Family):
    name = "libraries"
    tokens = (b"flash_attn", b"xformers", b"apex", b"bitsandbytes", b"deepspeed")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every site is a name whose qualified name `code_for` knows: one an absolute import
        binds to a prefix of such a name (`from deepspeed.utils import logger` binds none)."""
        found = ctx.sites()
        return found is None or any(_may_name(base) for bases in found.imported.values() for base in bases)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self._callees: set[int] = set()
        self._with_items: set[int] = set()
        self._transposed: set[int] = set()  # original flash/xformers calls now ending in .transpose
        self._plain: list[str] | None = None

    # -- tracking --------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        self._callees.add(id(node.func))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._with_items.add(id(item.item))

    def _code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def _atom(self, node: cst.BaseExpression) -> str:
        code = self._code(node)
        if isinstance(node, _ATOMS) and not node.lpar:
            return code
        return code if node.lpar else f"({code})"

    def _release(self, node: cst.BaseExpression) -> None:
        """The library name at the head of `node` is replaced: drop its import if unused."""
        self.ctx.release(node)
        name = dotted(node)
        if name is None:
            return
        head = name.split(".")[0]
        source = self.ctx.imports.sources.get(head)
        if source is not None and source[1] is None:  # `import m as x`
            self.ctx.remove_import_if_unused(source[0], None, source[2])
            return
        if self._plain is None:
            self._plain = [
                dotted(a.name) or ""
                for stmt in _import_statements(self.ctx.module)
                if isinstance(stmt, cst.Import)
                for a in stmt.names
                if a.asname is None
            ]
        for module in self._plain:
            if name == module or name.startswith(module + "."):
                self.ctx.remove_import_if_unused(module)

    # -- references that are not calls ---------------------------------------------------

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if original.value in self.ctx.imports.names:
            return self._reference(original, updated)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        if not self.whole_reference(original) or id(original) in self._callees:
            return updated
        qual = self.ctx.qualname(original)
        if qual is None:
            return updated
        code = code_for(qual)
        if code is None:
            return updated
        if qual in NORMS and NORMS[qual][0] == "FusedLayerNorm":
            new = cst.parse_expression(self._spell(NORMS[qual][1], code, original))
            if self.ctx.report(
                code,
                original,
                f"`{NORMS[qual][0]}` becomes `{self._code(new)}` (same constructor and parameters)",
                replacement=new,
            ):
                self._release(original)
                return new
            return updated
        if qual == "apex.amp":
            return updated  # the module object itself: its uses are reported
        self.ctx.report(
            code,
            original,
            f"`{qual.split('.')[-1]}` is used as a value: porter ports its calls, so port this use by hand",
            applicability=Applicability.MANUAL,
        )
        return updated

    # -- calls -----------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "view" and id(func.value) in self._transposed:
            # the replacement is a transposed view, which `.view` cannot reshape
            return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("reshape")))
        qual = self.ctx.qualname(func)
        if qual is None:
            return updated
        code = code_for(qual)
        if code is None:
            return updated
        handler: Callable = {
            "LIB001": self._flash,
            "LIB002": self._xformers,
            "LIB003": self._norm,
            "LIB004": self._apex_optimizer,
            "LIB005": self._amp,
            "LIB006": self._bnb,
        }[code]
        return handler(original, updated, qual)

    def _manual(self, code: str, node: cst.CSTNode, message: str, advice: str | None = None):
        self.ctx.report(code, node, message, applicability=Applicability.MANUAL, advice=advice)

    def _report_replacing(self, code, node, subtree, message, replacement, applicability=None, advice=None) -> bool:
        """`report`, first dropping findings inside `subtree` when the fix will replace it."""
        app = applicability or all_rules()[code].applicability_for(self.ctx.target.name)
        if self.ctx.would_apply(code, node, app):
            self.ctx.supersede(subtree)
        return self.ctx.report(code, node, message, replacement=replacement, applicability=applicability, advice=advice)

    def _will(self, code: str, node: cst.CSTNode, applicability=None) -> bool:
        app = applicability or all_rules()[code].applicability_for(self.ctx.target.name)
        return self.ctx.would_apply(code, node, app)

    def _spell(self, qualified: str, code: str, node: cst.CSTNode, applicability=None) -> str:
        """The local spelling of `qualified`; an import is added only if the fix applies."""
        if self._will(code, node, applicability):
            return self._code(self.ctx.ref(qualified))
        return qualified

    def _apply(self, code, original, updated, new_code: str, message: str, applicability=None):
        new = cst.parse_expression(new_code)
        if self._report_replacing(code, original, original, message, new, applicability):
            self._release(original.func)
            return new
        return updated

    # LIB001 ------------------------------------------------------------------------------

    def _flash(self, original, updated, qual):
        kind = qual.split(".")[-1]
        if qual in FLASH_MANUAL:
            self._manual(
                "LIB001",
                original,
                f"`{kind}` packs variable-length sequences: SDPA has no varlen form; pad to a fixed length "
                "and pass a mask",
            )
            return updated
        lead = {
            "flash_attn_func": ("q", "k", "v"),
            "flash_attn_qkvpacked_func": ("qkv",),
            "flash_attn_kvpacked_func": ("q", "kv"),
        }[kind]
        names = (*lead, "dropout_p", "softmax_scale", "causal")
        bound = _bind(updated, names)
        if bound is None or any(n not in bound for n in lead):
            self._manual(
                "LIB001",
                original,
                f"`{kind}` with arguments porter cannot map one by one (`*args`, or positionals after `causal`)",
            )
            return updated
        for key, arg in bound.items():
            if key in names or key == "deterministic":
                continue
            ok = {
                "window_size": _is_minus_one_pair,
                "softcap": _is_zero,
                "alibi_slopes": lambda n: _is_name(n, "None"),
                "return_attn_probs": lambda n: _is_name(n, "False"),
            }.get(key)
            if ok is None or not ok(arg.value):
                self._manual(
                    "LIB001",
                    original,
                    f"`{kind}(..., {key}=...)` has no SDPA equivalent: write the mask (sliding window, "
                    "ALiBi bias, softcap) by hand",
                )
                return updated
        kw = self._sdpa_kwargs(bound.get("dropout_p"), bound.get("softmax_scale"), bound.get("causal"))
        causal = bound.get("causal")
        applicability = None
        message = f"`{kind}` becomes `scaled_dot_product_attention` on (batch, heads, seq, dim) and back"
        if causal is not None and not _is_name(causal.value, "False"):
            applicability = Applicability.UNSAFE
            message += (
                "; causal: flash-attn aligns the mask bottom-right, SDPA top-left, so they agree only when "
                "query and key lengths are equal (not when decoding with a KV cache)"
            )
        sdpa = self._spell(SDPA, "LIB001", original, applicability)
        gqa = ", enable_gqa=True" if kind != "flash_attn_qkvpacked_func" else ""
        t = lambda n: f"{self._atom(bound[n].value)}.transpose(1, 2)"  # noqa: E731
        unpack = lambda n: f"*{self._atom(bound[n].value)}.permute(2, 0, 3, 1, 4).unbind(0)"  # noqa: E731
        if kind == "flash_attn_func":
            inputs = f"{t('q')}, {t('k')}, {t('v')}"
        elif kind == "flash_attn_qkvpacked_func":
            inputs = unpack("qkv")
        else:
            inputs = f"{t('q')}, {unpack('kv')}"
        new_code = f"{sdpa}({inputs}{kw}{gqa}).transpose(1, 2)"
        new = self._apply("LIB001", original, updated, new_code, message, applicability)
        if new is not updated:
            self._transposed.add(id(original))
        return new

    def _sdpa_kwargs(self, dropout, scale, causal, mask: str | None = None) -> str:
        parts = []
        if mask is not None:
            parts.append(f"attn_mask={mask}")
        if dropout is not None and not _is_zero(dropout.value):
            parts.append(f"dropout_p={self._code(dropout.value)}")
        if causal is not None and not _is_name(causal.value, "False"):
            parts.append(f"is_causal={self._code(causal.value)}")
        if scale is not None and not _is_name(scale.value, "None"):
            parts.append(f"scale={self._code(scale.value)}")
        return "".join(", " + p for p in parts)

    # LIB002 ------------------------------------------------------------------------------

    def _xformers(self, original, updated, qual):
        names = ("query", "key", "value", "attn_bias", "p", "scale")
        bound = _bind(updated, names)
        if bound is None or any(n not in bound for n in names[:3]):
            self._manual("LIB002", original, "`memory_efficient_attention` with arguments porter cannot map one by one")
            return updated
        extra = set(bound) - set(names) - {"op"}
        if extra:
            self._manual(
                "LIB002", original, f"`memory_efficient_attention(..., {sorted(extra)[0]}=...)` has no SDPA equivalent"
            )
            return updated
        mask = causal = None
        bias = bound.get("attn_bias")
        message = (
            "`memory_efficient_attention` becomes `scaled_dot_product_attention` on (batch, heads, seq, dim) "
            "and back (4-D inputs assumed)"
        )
        if bias is not None and not _is_name(bias.value, "None"):
            bq = self.ctx.qualname(bias.value.func) if isinstance(bias.value, cst.Call) else None
            if bq in XF_CAUSAL and not bias.value.args:
                causal = cst.Arg(value=cst.Name("True"))
            elif bq is not None and bq.startswith("xformers."):
                self._manual(
                    "LIB002",
                    original,
                    f"the attention bias `{bq.split('.')[-1]}` has no SDPA form: build the equivalent "
                    "boolean or additive mask",
                )
                return updated
            else:
                mask = self._code(bias.value)
                message += (
                    "; `attn_bias` becomes the additive `attn_mask` (a tensor bias; an xformers AttentionBias "
                    "object is not one)"
                )
        if "op" in bound:
            message += "; `op=` (the xformers kernel choice) is dropped"
        kw = self._sdpa_kwargs(bound.get("p"), bound.get("scale"), causal, mask)
        sdpa = self._spell(SDPA, "LIB002", original)
        t = lambda n: f"{self._atom(bound[n].value)}.transpose(1, 2)"  # noqa: E731
        new_code = f"{sdpa}({t('query')}, {t('key')}, {t('value')}{kw}).transpose(1, 2)"
        new = self._apply("LIB002", original, updated, new_code, message)
        if new is not updated:
            self._transposed.add(id(original))
            if causal is not None:
                self._release(bias.value.func)
        return new

    # LIB003 ------------------------------------------------------------------------------

    def _norm(self, original, updated, qual):
        name, torch_name = NORMS[qual]
        names = ("normalized_shape", "eps", "elementwise_affine", "memory_efficient")
        bound = _bind(updated, names)
        if bound is None or set(bound) - set(names):
            self._manual("LIB003", original, f"`{name}` with arguments porter cannot map one by one")
            return updated
        args = [self._code(bound["normalized_shape"].value)] if "normalized_shape" in bound else []
        if "eps" in bound:
            args.append(f"eps={self._code(bound['eps'].value)}")
        elif "RMSNorm" in name:
            args.append("eps=1e-5")  # apex's default; nn.RMSNorm's is finfo(dtype).eps
        if "elementwise_affine" in bound:
            args.append(f"elementwise_affine={self._code(bound['elementwise_affine'].value)}")
        message = f"`{name}` becomes `{torch_name.removeprefix('torch.')}`, the same math"
        applicability = None
        if name.startswith("Mixed"):
            applicability = Applicability.UNSAFE
            message += (
                "; apex's Mixed variant keeps fp32 parameters and returns the input's dtype, nn's follows its "
                "parameters' dtype"
            )
        new_code = f"{self._spell(torch_name, 'LIB003', original, applicability)}({', '.join(args)})"
        return self._apply("LIB003", original, updated, new_code, message, applicability)

    # LIB004 ------------------------------------------------------------------------------

    def _rebuild(
        self, bound: dict[str, cst.Arg], keep: tuple[str, ...], drop: dict[str, Callable], add: dict[str, str]
    ) -> list[str] | str:
        """Arguments of the torch.optim call, or the name of an argument that blocks it."""
        out = []
        for key, arg in bound.items():
            if key in drop:
                if not drop[key](arg.value):
                    return key
                continue
            if key not in keep:
                return key
            value = self._code(arg.value)
            out.append(value if key == "params" or (key == "lr" and arg.keyword is None) else f"{key}={value}")
        out.extend(f"{k}={v}" for k, v in add.items() if k not in bound)
        return out

    def _apex_optimizer(self, original, updated, qual):
        name = APEX_OPT[qual]
        lib = qual.split(".")[0]
        true, false, anything = (lambda n: _is_name(n, "True")), (lambda n: _is_name(n, "False")), (lambda n: True)
        if name == "FusedAdam":
            bound = _bind(
                updated, ("params", "lr", "bias_correction", "betas", "eps", "adam_w_mode", "weight_decay", "amsgrad")
            )
            mode = bound.get("adam_w_mode") if bound is not None else None
            if mode is None or _is_name(mode.value, "True"):
                cls, add = "AdamW", {"weight_decay": "0.0"}  # FusedAdam's default; AdamW's is 0.01
            elif _is_name(mode.value, "False"):
                cls, add = "Adam", {}
            else:
                cls = None
            keep = ("params", "lr", "betas", "eps", "weight_decay", "amsgrad")
            drop = {
                "bias_correction": true,
                "adam_w_mode": anything,
                "set_grad_none": anything,
                "capturable": false,
                "master_weights": false,
            }
        elif name == "FusedSGD":
            bound = _bind(
                updated,
                (
                    "params",
                    "lr",
                    "momentum",
                    "dampening",
                    "weight_decay",
                    "nesterov",
                    "wd_after_momentum",
                    "materialize_master_grads",
                    "set_grad_none",
                ),
            )
            cls, add = "SGD", {}
            keep = _TORCH_POSITIONAL["SGD"]
            drop = {"wd_after_momentum": false, "materialize_master_grads": anything, "set_grad_none": anything}
        elif name == "FusedAdagrad":
            bound = _bind(updated, ("params", "lr", "eps", "weight_decay", "set_grad_none", "adagrad_w_mode"))
            cls, add = "Adagrad", {}
            keep = ("params", "lr", "eps", "weight_decay")
            drop = {"set_grad_none": anything, "adagrad_w_mode": false}
        else:
            self._manual(
                "LIB004", original, f"`{name}` has no `torch.optim` equivalent (torch.optim has no LAMB or NovoGrad)"
            )
            return updated
        if bound is None or cls is None:
            self._manual("LIB004", original, f"`{name}` with arguments porter cannot map one by one")
            return updated
        args = self._rebuild(bound, keep, drop, add)
        if isinstance(args, str):
            self._manual("LIB004", original, f"`{name}(..., {args}=...)` has no `torch.optim.{cls}` equivalent")
            return updated
        new_code = f"{self._spell('torch.optim.' + cls, 'LIB004', original)}({', '.join(args)})"
        message = (
            f"{lib}'s `{name}` becomes `torch.optim.{cls}`, the same update rule (fused by the compiler, not "
            "by a CUDA kernel)"
        )
        return self._apply("LIB004", original, updated, new_code, message)

    # LIB006 ------------------------------------------------------------------------------

    def _bnb(self, original, updated, qual):
        name = qual[len(BNB_PREFIX) :]
        cls = _bnb_class(name)
        if cls is None:
            self._manual("LIB006", original, f"`bitsandbytes.optim.{name}` has no `torch.optim` equivalent")
            return updated
        pos = _TORCH_POSITIONAL[cls]
        bound = _bind(updated, pos)
        if bound is None:
            self._manual("LIB006", original, f"`bitsandbytes.optim.{name}` with arguments porter cannot map one by one")
            return updated
        eight = "8bit" in name or (bound.get("optim_bits") is not None and _is_literal(bound["optim_bits"].value, 8))
        paged = name.startswith("Paged") or (
            bound.get("is_paged") is not None and not _is_name(bound["is_paged"].value, "False")
        )
        anything = lambda n: True  # noqa: E731
        drop = {
            "optim_bits": anything,
            "args": lambda n: _is_name(n, "None"),
            "min_8bit_size": anything,
            "block_wise": anything,
            "is_paged": anything,
            "percentile_clipping": lambda n: _is_literal(n, 100),
            "max_unorm": _is_zero,
        }
        args = self._rebuild(bound, pos, drop, {})
        if isinstance(args, str):
            self._manual(
                "LIB006",
                original,
                f"`bitsandbytes.optim.{name}(..., {args}=...)` has no `torch.optim.{cls}` equivalent",
            )
            return updated
        message = f"`bitsandbytes.optim.{name}` becomes `torch.optim.{cls}`"
        applicability = None
        if eight or paged:
            applicability = Applicability.UNSAFE
            notes = []
            if eight:
                notes.append(
                    "its 8-bit optimizer state becomes 32-bit: about 4x the state memory (Adam: 8 bytes "
                    "per parameter instead of 2)"
                )
            if paged:
                notes.append("paged state (spilled to host under memory pressure) becomes plain device memory")
            message += "; " + "; ".join(notes)
        new_code = f"{self._spell('torch.optim.' + cls, 'LIB006', original, applicability)}({', '.join(args)})"
        return self._apply("LIB006", original, updated, new_code, message, applicability)

    # LIB005 ------------------------------------------------------------------------------

    def _amp(self, original, updated, qual):
        name = qual[len(AMP_PREFIX) :]
        if name == "scale_loss" and id(original) in self._with_items:
            return updated  # leave_With unwraps the block
        if name == "initialize":
            return self._amp_initialize(original, updated)
        if name == "master_params":
            bound = _bind(updated, ("optimizer",))
            if bound and "optimizer" in bound:
                opt = self._atom(bound["optimizer"].value)
                new_code = f'(p for group in {opt}.param_groups for p in group["params"])'
                return self._apply(
                    "LIB005",
                    original,
                    updated,
                    new_code,
                    "without apex.amp the optimizer's parameters are the master parameters",
                )
        self._manual(
            "LIB005",
            original,
            f"`apex.amp.{name}` has no equivalent: with `torch.autocast` and bf16 there is no amp state to keep",
        )
        return updated

    def _amp_initialize(self, original, updated):
        positional = [a.value for a in updated.args if a.keyword is None and not a.star]
        if not positional or len(positional) > 2 or any(a.star for a in updated.args):
            self._manual("LIB005", original, "`amp.initialize` with arguments porter cannot map")
            return updated
        advice = self._autocast_advice()
        message = (
            "`amp.initialize` is removed: wrap the forward pass and loss in `torch.autocast` (porter cannot "
            "see where it is)"
        )
        stmt = self.ctx.statement_of.get(id(original))
        values = [self._code(v) for v in positional]
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0].target
            targets = (
                [self._code(e.value) for e in target.elements]
                if isinstance(target, (cst.Tuple, cst.List))
                else [self._code(target)]
            )
            if targets == values:
                if self.ctx.report("LIB005", original, message, replacement=cst.RemovalSentinel.REMOVE, advice=advice):
                    self.ctx.statement_edits.remove.add(id(stmt))
                    self._release(original.func)
                return updated
        elif isinstance(stmt, cst.Expr):
            if self.ctx.report("LIB005", original, message, replacement=cst.RemovalSentinel.REMOVE, advice=advice):
                self.ctx.statement_edits.remove.add(id(stmt))
                self._release(original.func)
            return updated
        new_code = values[0] if len(values) == 1 else f"({', '.join(values)})"
        new = cst.parse_expression(new_code)
        if self.ctx.report("LIB005", original, message, replacement=new, advice=advice):
            self._release(original.func)
            return new
        return updated

    def _autocast_advice(self) -> str:
        t = self.ctx.target
        return (
            f'Wrap the forward pass and the loss in `with torch.autocast("{t.device_type}", dtype=torch.bfloat16):` '
            "(apex O1/O2 cast to float16; bf16 is native on the target and needs no loss scaling)."
        )

    def leave_With(self, original: cst.With, updated: cst.With):
        if len(original.items) != 1:
            return updated
        call = original.items[0].item
        if not isinstance(call, cst.Call) or self.ctx.qualname(call.func) != AMP_PREFIX + "scale_loss":
            return updated
        bound = _bind(call, ("loss", "optimizers"))
        if bound is None or "loss" not in bound or not isinstance(updated.body, cst.IndentedBlock):
            self._manual("LIB005", call, "`amp.scale_loss` porter cannot unwrap: call `loss.backward()` directly")
            return updated
        loss = bound["loss"].value
        asname = original.items[0].asname
        body: list[Any] = list(updated.body.body)  # statements: libcst's BaseStatement does not declare leading_lines
        if asname is not None and isinstance(asname.name, cst.Name):
            alias = asname.name.value
            if isinstance(loss, cst.Name):
                body = [stmt.visit(_Rename(alias, loss.value)) for stmt in body]
            else:
                assign = cst.parse_statement(f"{alias} = {self._code(loss)}\n")
                body = [assign, *body]
        elif asname is not None:
            self._manual("LIB005", call, "`amp.scale_loss` porter cannot unwrap: call `loss.backward()` directly")
            return updated
        body[0] = body[0].with_changes(leading_lines=[*updated.leading_lines, *body[0].leading_lines])
        new = cst.FlattenSentinel(body)
        message = "`amp.scale_loss` is unwrapped: bf16 needs no loss scaling, so the loss is backpropagated as is"
        if self._report_replacing("LIB005", call, original, message, new, advice=self._autocast_advice()):
            self._release(call.func)
            return new
        return updated


class _Rename(cst.CSTTransformer):
    """Rename a variable (not attribute names or keywords) in a block."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self._skip: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) in self._skip or updated.value != self.old:
            return updated
        return updated.with_changes(value=self.new)
