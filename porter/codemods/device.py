"""Device placement: `.cuda()`, CUDA device strings, `torch.device("cuda", i)`, `.is_cuda`,
integer devices, `map_location`, legacy `torch.cuda.*Tensor` types, and the
`"cuda" if torch.cuda.is_available() else "cpu"` idiom.

Device literals are parsed exactly (`"cuda"`, `"cuda:1"`), never substring-replaced, so a
path such as `runs/cuda_baseline/` survives.
"""

from __future__ import annotations

import re
from typing import Literal

import libcst as cst

from porter.codemods.cuda_api import lookup
from porter.codemods.family import Family, ReferenceTracker, fix_commas, keyword_arg, replace_string, string_value
from porter.codemods.flow import Flow, FlowScopes, assigned_values, module_move
from porter.core.findings import Applicability
from porter.analysis.kinds import MoveKind, NameKind, ValueKind
from porter.analysis.program import chain_text, defines_is_cuda
from porter.analysis.index import RANK_NAMES
from porter.analysis.resolve import dotted

# the project-index facts a site of this family reads (Flow.lookup, Flow.origin; on xla
# Flow.moved, Flow.stale_before)
_SITE_FACTS = frozenset({ValueKind.INDEX, ValueKind.MAYBE, ValueKind.CONFIG, ValueKind.UNKNOWN, NameKind.ORIGIN})
_XLA_FACTS = frozenset({MoveKind.TIED, MoveKind.STALE})
CUDA_DEVICE = re.compile(r"^cuda(?::(\d+))?$")
# `device=torch.cuda.current_device()`, `.to(torch.cuda.current_device()`: the current CUDA device as a device
_CURRENT_DEVICE_AS_DEVICE = re.compile(r"(?:\bdevice\s*=\s*|\.to\(\s*)torch\.cuda\.current_device\(\)")
_FORMATTED_DEVICE = re.compile(r"^cuda:(\{\d*\}|%[dis])$")  # "cuda:{}".format(i), "cuda:%d" % i

LEGACY_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "CharTensor": "int8",
    "ByteTensor": "uint8",
    "BoolTensor": "bool",
}


def names_current_device(ctx, cls: cst.ClassDef) -> bool:
    """Whether the class passes `torch.cuda.current_device()` as a device somewhere
    (`device=torch.cuda.current_device()`, `.to(torch.cuda.current_device())`): its `.cuda()`
    and bare "cuda" then become `torch.accelerator.current_accelerator()` where the target's
    device is torch.accelerator's, one spelling for the class, the same on CUDA."""
    return ctx.target.device_expr is None and bool(_CURRENT_DEVICE_AS_DEVICE.search(ctx.code(cls)))


def _legacy_type(qual: str | None):
    """The `rules/cuda_api.toml` row of a legacy typed tensor (`torch.cuda.FloatTensor`, any
    `torch.cuda.*Tensor` the table has no other row for): the table hands them to this family."""
    if qual is None or not qual.startswith("torch.cuda.") or not qual.endswith("Tensor"):
        return None
    row = lookup(qual[len("torch.cuda.") :])
    return row if row is not None and row.code == "DEV006" else None


def _under_cuda(node: cst.BaseExpression, names: dict[str, str]) -> bool:
    """Whether an attribute chain can name something under `torch.cuda` (a cheap test before
    the qualified name: `torch.Tensor` annotations are everywhere)."""
    while type(node) is cst.Attribute:
        if node.attr.value == "cuda":
            return True
        node = node.value
    return type(node) is cst.Name and "cuda" in names.get(node.value, "")


def cuda_device_index(value: str | None) -> tuple[bool, str | None]:
    if value is None:
        return False, None
    m = CUDA_DEVICE.match(value)
    return (True, m.group(1)) if m else (False, None)


def is_cuda_device_expr(node: cst.BaseExpression, qualname) -> bool:
    """A literal CUDA device: `"cuda[:N]"` or `torch.device("cuda"[, N])`."""
    if cuda_device_index(string_value(node))[0]:
        return True
    if isinstance(node, cst.Call) and qualname(node.func) == "torch.device" and node.args:
        return cuda_device_index(string_value(node.args[0].value))[0]
    return False


def _cuda_fstring(node: cst.BaseExpression) -> bool:
    """`f"cuda:{rank}"`."""
    parts = node.parts if isinstance(node, cst.FormattedString) else ()
    return bool(parts) and isinstance(parts[0], cst.FormattedStringText) and parts[0].value == "cuda:"


class DeviceFamily(FlowScopes, ReferenceTracker, Family):
    name = "device"
    tokens = (b"cuda", b".to(", b"map_location", b"device=")  # family-level; each rule narrows with its own tokens

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Every report below needs one of: a string holding "cuda" (a device string, a
        template, an f-string, a kept vocabulary word: DEV002/003/005/007/009/014/015/016), a
        name under `cuda` (`.cuda()` DEV001, a legacy `torch.cuda.*Tensor` DEV006), `.is_cuda`
        (DEV004), an int literal as a device (DEV008), on xla a `map_location` or `torch.load`'s
        location (DEV007), or a project-index fact for a name here (`_device_value`: an int,
        a configured device, one porter cannot see; `leave_Assign`: an origin; on xla
        `leave_SimpleStatementLine`: a move of a module with tied or taken parameters)."""
        xla = ctx.target.name == "xla"
        kinds = _SITE_FACTS | _XLA_FACTS if xla else _SITE_FACTS
        given = ctx.settings.flow  # the project's facts, when given, cost nothing to read first
        if given is not None and any(f[2] in kinds for f in given):
            return True
        found = ctx.sites()
        if found is None or found.cuda_strings or found.cuda_names or found.is_cuda or found.int_devices:
            return True
        if xla and found.loads:
            return True
        return given is None and any(f[2] in kinds for f in ctx.facts())

    @classmethod
    def wanted(cls, ctx, source: bytes) -> bool:
        """Also a file none of whose tokens shows a device: `device = local_rank` handed on."""
        flow = ctx.settings.flow or ()
        return super().wanted(ctx, source) or (ctx.enabled("DEV008") and any(f[2] == NameKind.ORIGIN for f in flow))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self._callees: set[int] = set()
        self._current_device_classes: dict[int, bool] = {}  # id(class) -> _class_current_device
        self._placed: set[int] = set()  # strings passed as `device=` or to `.to(...)`
        self._compared: set[int] = set()  # string nodes that sit in a comparison
        self._map_locations: set[int] = set()
        self._prefixes: set[int] = set()  # strings a device's name is tested to start/end with
        self.flow = Flow(ctx.settings, ctx.path, ctx.source)

    # -- scopes, named as the project index names them ---------------------------------------

    # -- strings ---------------------------------------------------------------------------

    def visit_Arg(self, node: cst.Arg) -> None:
        super().visit_Arg(node)
        if node.keyword is not None and node.keyword.value == "map_location":
            self._map_locations.add(id(node.value))  # ported (to "cpu") by its call, not as a string

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._callees.add(id(func))
        if isinstance(func, cst.Attribute) and func.attr.value in ("startswith", "endswith") and node.args:
            self._prefixes.add(id(node.args[0].value))  # `str(d).startswith("cuda:")`
        for i, arg in enumerate(node.args):
            # `device="cuda"`, `.to("cuda")`: a device passed where one is placed
            if (arg.keyword is not None and arg.keyword.value == "device") or (
                i == 0 and arg.keyword is None and isinstance(func, cst.Attribute) and func.attr.value == "to"
            ):
                if isinstance(arg.value, cst.SimpleString):
                    self._placed.add(id(arg.value))

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        """`"cuda:%d" % i`: a per-index device built the printf way; `"cuda:" + str(rank)`."""
        if isinstance(original.operator, cst.Modulo) and isinstance(original.left, cst.SimpleString):
            return self._formatted(original, updated, original.left, [cst.Arg(value=original.right)])
        if (
            isinstance(original.operator, cst.Add)
            and isinstance(original.left, cst.SimpleString)
            and string_value(original.left) == "cuda:"
        ):
            return self._concatenated(original, updated)
        return updated

    def _concatenated(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        """`"cuda:" + str(rank)`: the index is kept where the target keeps rank-indexed devices,
        else the device is the target's one device per process."""
        if id(original.left) in self.ctx.keep_cuda:
            return updated
        t = self.ctx.target
        if self.ctx.portable:
            return updated  # reported below: --portable spells devices through torch.accelerator
        if t.device_expr is not None or not t.rank_indexed_devices:
            if t.device_expr is not None:
                new: cst.BaseExpression = self.ctx.device()
            else:
                new = replace_string(updated.left, t.device_type)  # type: ignore[arg-type]
            new = new.with_changes(lpar=original.lpar, rpar=original.rpar) if isinstance(new, cst.SimpleString) else new
            msg = f"per-index CUDA device becomes {self.ctx.code(new)}: one device per process, the index is dropped"
        else:
            new = updated.with_changes(left=replace_string(updated.left, f"{t.device_type}:"))  # type: ignore[arg-type]
            msg = f"per-index CUDA device becomes {t.device_type}:<index>"
        if self.ctx.report("DEV002", original, msg, replacement=new):
            self._need_runtime_import()
            return new
        return updated

    def _formatted(self, original, updated, template: cst.SimpleString, args: list[cst.Arg]):
        """`"cuda:{}".format(i)` / `"cuda:%d" % i`: the index is kept where the target keeps
        rank-indexed devices, else the device is the target's one device per process."""
        if "cuda" not in template.value or id(template) in self.ctx.keep_cuda or len(args) != 1:
            return updated
        if not _FORMATTED_DEVICE.match(string_value(template) or ""):
            return updated
        t = self.ctx.target
        body = string_value(template) or ""
        if t.rank_indexed_devices:
            new_template = replace_string(template, t.device_type + body[4:])
            if isinstance(updated, cst.Call):
                new: cst.BaseExpression = updated.with_changes(func=updated.func.with_changes(value=new_template))
            else:
                new = updated.with_changes(left=new_template)
            msg = f"per-index CUDA device becomes {t.device_type}:<index>"
        else:
            new = replace_string(template, t.device_type).with_changes(lpar=original.lpar, rpar=original.rpar)
            msg = f"per-index CUDA device becomes {new.value}: one device per process, the index is dropped"
        if self.ctx.report("DEV002", original, msg, replacement=new):
            self._need_runtime_import()
            return new
        return updated

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._compared.add(id(node.left))
        for target in node.comparisons:
            self._compared.add(id(target.comparator))

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        if "cuda" not in original.value or id(original) in self._map_locations:
            return updated  # cheap: evaluating every string literal is not
        if self._kept_with_finding(original):
            return updated
        if id(original) in self.ctx.keep_cuda:
            return updated  # guards CUDA-only code, or not a device at all (guards.py, literals.py)
        if id(original) in self.ctx.keep_cuda_autocast_branch or id(original) in self.ctx.keep_cuda_method_branch:
            return self._autocast_branch_kept(original, updated)
        if id(original) in self._prefixes and string_value(original) == "cuda:":
            # --portable: a test for a CUDA device stays one, as comparisons do
            return updated if self.ctx.portable else self._prefix(original, updated)
        is_dev, index = cuda_device_index(string_value(original))
        if not is_dev:
            return updated
        code = "DEV005" if id(original) in self._compared else "DEV002"
        if self.ctx.portable:
            return self._portable_string(original, updated, code, index)
        return self._target_string(original, updated, code, index)

    def _autocast_branch_kept(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        """`if device_type == "cuda": dtype = torch.get_autocast_gpu_dtype()` (literals.py): kept, reported;
        and `elif "cuda" in str(device): return self.cuda()` where the file defines its own `cuda()`."""
        t = self.ctx.target.display
        if (call := self.ctx.keep_cuda_method_branch.get(id(original))) is not None:
            self.ctx.report(
                "DEV005",
                original,
                f"`{original.value}` stays: its branch calls `{call}`, a `cuda()` this file defines "
                f"itself and porter keeps as CUDA's (DEV001); made {t}'s test, {t} would run that CUDA code and "
                f"CUDA would lose its branch: write {t}'s branch beside it (`.to(device)`)",
                applicability=Applicability.MANUAL,
            )
            return updated
        self.ctx.report(
            "DEV005",
            original,
            f"`{original.value}` stays: its branch calls `{self.ctx.keep_cuda_autocast_branch[id(original)]}`, "
            f"CUDA's autocast state (torch 2.9 and 2.13), which would give {t}'s autocast CUDA's state if the "
            f"branch became {t}'s; write {t}'s branch beside it, asking `torch.get_autocast_dtype` / "
            "`torch.is_autocast_enabled` with the target's device type",
            applicability=Applicability.MANUAL,
        )
        return updated

    def _kept_with_finding(self, original: cst.SimpleString) -> bool:
        """Whether the string is a `"cuda"` the project keeps for a reason another walk found (a
        device-generic CUDA case, a vocabulary's name, a public default, an autocast state),
        reported here with that reason (DEV014-DEV017)."""
        if id(original) in self.ctx.keep_generic:
            self.ctx.report(
                "DEV014",
                original,
                f"`{original.value}` stays: the project picks its device generically; this is its CUDA "
                "case (or its fallback when no accelerator is found), and the selected device type is "
                f"{self.ctx.target.display}'s on the target",
                applicability=Applicability.MANUAL,
            )
            return True
        if id(original) in self.ctx.keep_vocabulary and string_value(original) == "cuda":
            self.ctx.report(
                "DEV015",
                original,
                '`"cuda"` is a name in a vocabulary of its own (GPU platforms beside `"gpu"` / `"rocm"`, '
                'kernel sets or providers beside `"triton"` / `"dml"`, an `--accelerator` option, an enum '
                "member, a `Literal[...]` of accepted values, the key of a device switch or a dict, an "
                "attribute name, error text searched for CUDA's word, the default of a configuration "
                "value the library case-normalizes, an argument where the same function is passed a name "
                "that is no device), not a torch device: it stays",
                applicability=Applicability.MANUAL,
            )
            return True
        if id(original) in self.ctx.keep_public_default:
            where = self.ctx.keep_public_default[id(original)]
            if where.startswith("method:"):  # (literals.METHOD_OF) a device a method names beside the field
                cls, _, field = where.removeprefix("method:").partition(":")
                message = (
                    f"`{original.value}` in a method of `{cls}`, whose public `{field}` defaults to CUDA (kept): "
                    "it stays with that default"
                )
            else:
                message = f"`{original.value}` is the default device of `{where}`, public API of this package: it stays"
            self.ctx.report("DEV016", original, message, applicability=Applicability.MANUAL)
            return True
        if id(original) in self.ctx.keep_generator_device:
            self.ctx.report(
                "DEV002",
                original,
                f"`{original.value}` is the device of a random generator (or of a draw that takes one): "
                f"{self.ctx.target.display} has no generator on its device (`torch.Generator(device=...)` "
                "raises there), so it stays; draw from a CPU generator and move the result to the device",
                applicability=Applicability.MANUAL,
            )
            return True
        if id(original) in self.ctx.keep_autocast_state:
            self.ctx.report(
                "DEV017",
                original,
                f"`{original.value}` in `{self.ctx.keep_autocast_state[id(original)]}(...)` names the "
                "autocast state it reads, not where the code runs: it already runs on "
                f"{self.ctx.target.display}, and the package keeps serving CUDA and the CPU, where "
                f'`"{self.ctx.target.device_type}"` is no device type; it stays (under '
                f"{self.ctx.target.display}'s autocast, what it does for CUDA's autocast does not apply)",
                applicability=Applicability.MANUAL,
            )
            return True
        return False

    def _target_string(self, original: cst.SimpleString, updated: cst.SimpleString, code: str, index: str | None):
        """The CUDA device string ported to the target's device (DEV002, or DEV005 where it is
        compared): its device type with the index where the target indexes devices, or the
        current accelerator where the class already spells its device that way."""
        t = self.ctx.target
        if code == "DEV002" and index is None and id(original) in self._placed and self._class_current_device():
            # the class passes `torch.cuda.current_device()` as a device elsewhere: one spelling
            # for the class (as `.cuda()` takes), the same on CUDA
            generic = self.ctx.expr("{torch}.accelerator.current_accelerator()")
            message = (
                f"CUDA device string {original.value} becomes `torch.accelerator.current_accelerator()`, as "
                "its class's `torch.cuda.current_device()` does"
            )
            if self.ctx.report(code, original, message, replacement=generic):
                return generic
            return updated
        new_value = t.device_type if index is None else self._indexed(index)
        new = replace_string(updated, new_value)
        msg = f"CUDA device string {original.value} becomes {new.value} on {t.display}"
        if index is not None and not t.indexed_devices:
            msg += " (one device per process: the index is dropped)"
        if self.ctx.report(code, original, msg, replacement=new):
            if code == "DEV002":  # a comparison needs no registered device
                self._need_runtime_import()
            return new
        return updated

    def _portable_string(self, original, updated, code: str, index: str | None):
        """--portable: "cuda" is the accelerator's type ("cpu" without one); a comparison with
        "cuda" stays, so that a CUDA-only branch stays CUDA-only."""
        if code == "DEV005":
            self.ctx.report(
                code,
                original,
                f"comparison with {original.value}: true on CUDA only, so the branch it guards runs only there",
                applicability=Applicability.MANUAL,
                advice=(
                    "If the branch is not CUDA-specific, compare with `torch.accelerator.current_accelerator().type`."
                ),
            )
            return updated
        kind = self.ctx.accelerator_type()
        if index is not None:  # still a string: code that reads it as one keeps working
            quote: Literal["'", '"'] = "'" if '"' in self.ctx.code(kind) else '"'
            kind = cst.FormattedString(
                start=f"f{quote}",
                end=quote,
                parts=[cst.FormattedStringExpression(expression=kind), cst.FormattedStringText(f":{index}")],
            )
        new = kind
        if self.ctx.report(
            code,
            original,
            f'CUDA device string {original.value} becomes the current accelerator\'s ("cpu" without one)',
            replacement=new,
        ):
            return new
        return updated

    def _prefix(self, original: cst.SimpleString, updated: cst.SimpleString):
        """`str(d).startswith("cuda:")`: a test for the device type. The port may have dropped
        the index (`torch.device("tpu")` prints as `"tpu"`, a tensor's as `"tpu:0"`), so the
        prefix is the bare type, which both spellings start with."""
        new = replace_string(updated, self.ctx.target.device_type)
        if self.ctx.report(
            "DEV005", original, f"CUDA device prefix {original.value} becomes {new.value}", replacement=new
        ):
            return new
        return updated

    def _indexed(self, index: str) -> str:
        t = self.ctx.target
        return f"{t.device_type}:{index}" if t.indexed_devices else t.device_type

    def _need_runtime_import(self) -> None:
        # "xla" device strings resolve only once torch_xla has registered the device
        if self.ctx.target.device_import:
            self.ctx.add_import(self.ctx.target.device_import)

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString):
        """`f"cuda:{rank}"`: the commonest way real code names a per-rank device."""
        parts = original.parts
        if (
            id(original) in self._map_locations
            or id(original) in self.ctx.keep_cuda
            or not (
                len(parts) == 2
                and isinstance(parts[0], cst.FormattedStringText)
                and parts[0].value == "cuda:"
                and isinstance(parts[1], cst.FormattedStringExpression)
            )
        ):
            return updated
        t = self.ctx.target
        if self.ctx.portable:
            quote = original.start[-1]
            kind = self.ctx.code(self.ctx.accelerator_type())
            kind = kind.replace('"', "'") if quote == '"' else kind.replace("'", '"')
            new: cst.BaseExpression = updated.with_changes(
                parts=[
                    cst.FormattedStringExpression(expression=cst.parse_expression(kind)),
                    cst.FormattedStringText(":"),
                    updated.parts[1],
                ]
            )
            if self.ctx.report(
                "DEV002",
                original,
                "per-rank CUDA device becomes the current accelerator's type with that index "
                '("cpu:<rank>" without one)',
                replacement=new,
            ):
                return new
            return updated
        if t.rank_indexed_devices:
            new = updated.with_changes(parts=[cst.FormattedStringText(f"{t.device_type}:"), updated.parts[1]])
            msg = f"per-rank CUDA device becomes {t.device_type}:<rank>"
        else:
            quote = original.start[-1] if original.start[-1] in "\"'" else '"'
            new = cst.SimpleString(f"{quote}{t.device_type}{quote}")
            msg = f"per-rank CUDA device becomes {new.value}: one device per process, the rank index is dropped"
        if self.ctx.report("DEV002", original, msg, replacement=new):
            self._need_runtime_import()
            return new
        return updated

    # -- attributes ------------------------------------------------------------------------

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value.endswith("Tensor"):
            if _under_cuda(original.value, self.ctx.imports.names):
                self._legacy_reference(original)
            return updated
        if original.attr.value != "is_cuda" or id(original) in self.ctx.keep_cuda:
            return updated
        if id(original) in self.ctx.cuda_beside_fallback:
            self.ctx.report(
                "DEV004",
                original,
                f"`{self.ctx.code(original)}` stays: it picks CUDA's implementation, and the `else` beside it is the "
                f"generic one every other device takes, {self.ctx.target.display} included; made "
                f"{self.ctx.target.display}'s test, CUDA would lose its branch",
                applicability=Applicability.MANUAL,
            )
            return updated
        if self.ctx.qualname(original) is not None or self.ctx.portable:
            return updated  # a module attribute; --portable: CUDA-only stays CUDA-only
        own = next((f[3] for f in self.ctx.settings.flow or () if f[2] == NameKind.OWN_IS_CUDA), None)
        if own is not None or defines_is_cuda(self.ctx.source):
            where = "this file defines" if own is None else f"`{own[0]}` defines"
            self.ctx.report(
                "DEV004",
                original,
                f"{where} its own `is_cuda`, so porter cannot tell this attribute from a tensor's",
                advice=(
                    "If it is a tensor's, use `(x.device.type == DEVICE)` with the target's device type; a "
                    "class's own `is_cuda` is ported where it is defined."
                ),
            )
            return updated
        t = self.ctx.target
        if t.tensor_is_attr:
            new: cst.BaseExpression = updated.with_changes(attr=cst.Name(t.tensor_is_attr))
        else:
            new = cst.Comparison(
                left=cst.Attribute(
                    value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type")
                ),
                comparisons=[
                    cst.ComparisonTarget(operator=cst.Equal(), comparator=cst.SimpleString(f'"{t.device_type}"'))
                ],
                lpar=[cst.LeftParen()],
                rpar=[cst.RightParen()],
            )
        if self.ctx.report("DEV004", original, f"`.is_cuda` becomes {self.ctx.code(new)}", replacement=new):
            return new
        return updated

    # -- calls -----------------------------------------------------------------------------

    def _help_of_default(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`add_argument("--device", default="cuda", help="... Default is 'cuda'.")` whose default
        the port changed: the help quotes the default it had, and says the new one."""
        old, new, help_arg = (
            self.kwarg(original, "default"),
            self.kwarg(updated, "default"),
            self.kwarg(updated, "help"),
        )
        if old is None or new is None or help_arg is None or not isinstance(help_arg.value, cst.SimpleString):
            return updated
        was, now = string_value(old.value), string_value(new.value)
        if was is None or now is None or was == now or not cuda_device_index(was)[0]:
            return updated
        text = help_arg.value.value
        said = re.sub(rf"(['`]){re.escape(was)}\1", lambda m: f"{m.group(1)}{now}{m.group(1)}", text)
        if said == text:
            return updated
        args = [a.with_changes(value=a.value.with_changes(value=said)) if a is help_arg else a for a in updated.args]
        return updated.with_changes(args=args)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if isinstance(func, cst.Attribute):
            method = self._method_call(original, updated, func)
            if method is not None:
                return method
        qual = self.ctx.qualname(func)
        if qual == "torch.device":
            return self._torch_device(original, updated)
        if qual is not None and qual.startswith("torch.cuda.") and _legacy_type(qual) is not None:
            return self._legacy_constructor(original, updated, qual[11:])
        map_location = self.kwarg(original, "map_location")
        if map_location is None and qual == "torch.load" and len(original.args) > 1:
            # the second argument is the location only where neither it nor the first is
            # starred or named (`load(f, **kw)` passes what the caller unpacks)
            first, second = original.args[:2]
            plain = all(a.keyword is None and not a.star for a in (first, second))
            map_location = second if plain else None
        if map_location is not None:
            why = self._map_location_why(map_location.value)
            if why is not None:
                return self._map_location(original, updated, map_location, why)
        device_kw = self.kwarg(original, "device")
        if (
            device_kw is not None
            and id(device_kw.value) not in self.ctx.claimed
            and not (qual or "").startswith(("torch.cuda.", "torch.accelerator."))
        ):
            return self._port_device_arg(original, updated, device_kw)
        return updated

    def _method_call(self, original: cst.Call, updated: cst.Call, func: cst.Attribute):
        """A method call that moves or names a device (`"...".format(...)`, `.cuda()`, `.to()`,
        `.type(...)`, argparse's `add_argument`), ported by its own rule; None for any other."""
        attr = func.attr.value
        if attr == "format" and isinstance(func.value, cst.SimpleString):
            return self._formatted(original, updated, func.value, self.positional(original))
        if attr == "cuda" and self.ctx.qualname(func) is None:
            return self._dot_cuda(original, updated)
        if attr == "to":
            return self._dot_to(original, updated)
        if attr == "type" and len(original.args) == 1:
            return self._dot_type(original, updated)
        if attr == "add_argument":
            return self._help_of_default(original, updated)
        return None

    def _map_location_why(self, value: cst.BaseExpression) -> str | None:
        """Why this `map_location` must become "cpu", or None to leave it."""
        if is_cuda_device_expr(value, self.ctx.qualname) or _cuda_fstring(value):
            return "instead of a CUDA device"
        if type(value) is cst.IfExp and any(
            is_cuda_device_expr(v, self.ctx.qualname) or _cuda_fstring(v) for v in (value.body, value.orelse)
        ):
            # `"cuda:0" if torch.cuda.is_available() else "cpu"`: its CUDA side would become the
            # target's device, which torch.load cannot restore onto XLA
            return "instead of a CUDA device (either side of the condition)"
        fact = self.flow.lookup(value)
        if fact is not None and fact[0] == ValueKind.INDEX:
            return f"instead of a CUDA device (an integer: {chain_text(self.ctx.code(value), fact[1])})"
        if self.ctx.target.name == "xla" and dotted(value) is not None and (fact is None or fact[0] != ValueKind.CPU):
            return f"instead of `{self.ctx.code(value)}`: torch.load cannot restore tensors onto an XLA device"
        return None

    # -- tied weights ------------------------------------------------------------------------

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        """`model.to(device)` on xla: Module.to() replaces each Parameter separately there,
        which unties shared weights; re-tie them right after the move (as the index saw
        them tied in the class)."""
        if self.ctx.target.name != "xla" or len(original.body) != 1:
            return updated
        move = module_move(original.body[0])
        holder = move[0] if move is not None else None
        if holder is None:
            return updated
        taken = self.flow.stale_before(holder)
        if taken is not None and self.ctx.enabled("XLA005"):
            self.ctx.moves_parameters = True  # XLA005 keeps the Parameter objects through the move
        elif taken is not None:
            self.ctx.report(
                "DEV013",
                original.body[0],
                f"{taken} took the parameters of `{holder}` before this move; on XLA, Module.to() replaces "
                "every Parameter, so it keeps the old CPU ones (an optimizer then trains nothing)",
            )
        statements = self.flow.moved(holder)
        if not statements:
            return updated
        if self.ctx.enabled("XLA005"):
            # XLA005's switch keeps the tie (and every other reference): a re-tie line beside
            # it would be a second fix for the same break
            self.ctx.moves_parameters = True
            return updated
        *ties, owner = statements
        lines = [cst.parse_statement(t) for t in ties]
        new = cst.FlattenSentinel([updated, *lines])
        message = (
            f"`{holder}` is a {owner} whose parameters are tied; moving it to the XLA device unties them: "
            "re-tied after the move"
        )
        if self.ctx.report("DEV011", original.body[0], message, replacement=new):
            return new
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """`device = local_rank` where `device` is "cpu" on the other path and used only as a
        device (the index proves both): the target device here, the "cpu" path kept."""
        if len(original.targets) != 1 or not isinstance(original.targets[0].target, cst.Name):
            return updated
        name = original.targets[0].target.value
        chain = self.flow.origin(name, lambda: self.ctx.code(original.value))
        if chain is None:
            return updated
        device = self.ctx.device(original.value)
        new = updated.with_changes(value=device)
        message = (
            f"integer device `{self.ctx.code(original.value)}` (a CUDA device) becomes {self.ctx.code(device)}: "
            f"`{name}` is used only as a device and is `'cpu'` on its other path; {chain_text(name, chain)}"
        )
        if self.ctx.report("DEV008", original, message, replacement=new):
            return new
        return updated

    def _dot_cuda(self, original: cst.Call, updated: cst.Call):
        if id(original) in self.ctx.keep_cuda:
            return updated  # CUDA's code (guards.py: a module that needs a CUDA-only package)
        if b"def cuda(" in self.ctx.source:
            self.ctx.report(
                "DEV001",
                original,
                "this file defines its own `cuda()` method, so porter cannot tell this call from a tensor's",
                advice="If it moves a tensor or module, use `.to(device)` with the target device.",
            )
            return updated
        positional = self.positional(original)
        device_kw = self.kwarg(original, "device")
        index_arg = positional[0] if positional else device_kw
        index: cst.BaseExpression | None = None
        if index_arg is not None:
            value = index_arg.value
            fact = self.flow.lookup(value)
            if isinstance(value, cst.Integer) or (fact is not None and fact[0] == ValueKind.INDEX):
                index = value
            else:
                shown = chain_text(self.ctx.code(value), fact[1]) if fact is not None else f"`{self.ctx.code(value)}`"
                self.ctx.report(
                    "DEV001",
                    original,
                    f"`.cuda({self.ctx.code(value)})`: porter cannot prove whether this is a device index "
                    f"or a device: {shown}",
                    advice="Use `.to(device)` with the target device; an int means a CUDA device.",
                )
                return updated
        rest = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        device = self.ctx.device(index)
        if index is None and not self.ctx.portable and self._class_current_device():
            # the class's other sites name `torch.cuda.current_device()` as the device, which
            # becomes `torch.accelerator.current_accelerator()`: one spelling for the class,
            # the same on CUDA (ColossalAI's cached embedding)
            device = self.ctx.expr("{torch}.accelerator.current_accelerator()")
        new = updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")),
            args=[cst.Arg(value=device), *rest],
        )
        new = new.with_changes(args=fix_commas(list(new.args)))
        if self.ctx.report("DEV001", original, f"`.cuda()` becomes `.to({self.ctx.code(device)})`", replacement=new):
            return new
        return updated

    def _class_current_device(self) -> bool:
        """Whether the class around the current node passes `torch.cuda.current_device()` as a
        device elsewhere (`device=torch.cuda.current_device()`, `.to(torch.cuda.current_device())`)
        on a target whose device torch.accelerator names."""
        if self.ctx.target.device_expr is not None:
            return False
        cls = next((c for c in reversed(self.ctx.current_statements) if isinstance(c, cst.ClassDef)), None)
        if cls is None:
            return False
        found = self._current_device_classes.get(id(cls))
        if found is None:
            found = self._current_device_classes[id(cls)] = names_current_device(self.ctx, cls)
        return found

    def _dot_to(self, original: cst.Call, updated: cst.Call):
        positional = self.positional(original)
        if not positional:
            return updated
        return self._port_device_arg(original, updated, positional[0])

    def _port_device_arg(self, original: cst.Call, updated: cst.Call, arg: cst.Arg):
        """`.to(x)` / `device=x` where `x` is proven to hold a CUDA index: the target device."""
        ported = self._device_value(original, arg.value)
        if ported is None:
            return updated
        device, how = ported
        i = original.args.index(arg)
        args = list(updated.args)
        args[i] = args[i].with_changes(value=device)
        new = updated.with_changes(args=args)
        message = f"integer device `{self.ctx.code(arg.value)}` (a CUDA device) becomes {self.ctx.code(device)}{how}"
        if self.ctx.report("DEV008", original, message, replacement=new):
            return new
        return updated

    def _device_value(self, call: cst.Call, value: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
        """(the target device, how porter knows) for a device argument proven to hold a CUDA
        index, else None, reporting a site porter cannot prove (DEV008 for a rank, DEV010
        for configuration)."""
        if isinstance(value, cst.Integer):
            return self.ctx.device(value), ""
        fact = self.flow.lookup(value)
        if fact is None:
            return None
        kind, chain = fact
        name = self.ctx.code(value)
        if kind == ValueKind.INDEX:
            return self.ctx.device(value), f": {chain_text(name, chain)}"
        if kind == ValueKind.MAYBE or (kind == ValueKind.UNKNOWN and name.rpartition(".")[2] in RANK_NAMES):
            self.ctx.report(
                "DEV008",
                call,
                f"an integer device means a CUDA device, and porter cannot prove what `{name}` holds: "
                f"{chain_text(name, chain)}",
            )
        elif kind == ValueKind.CONFIG:
            self.ctx.report(
                "DEV010",
                call,
                f"the device comes from configuration porter cannot read: {chain_text(name, chain)}",
            )
        return None

    def _dot_type(self, original: cst.Call, updated: cst.Call):
        arg = original.args[0]
        qual = self.ctx.qualname(arg.value)
        if qual is None or not qual.startswith("torch.cuda.") or qual[11:] not in LEGACY_TYPES:
            return updated
        dtype = self.ctx.expr("{torch}.%s" % LEGACY_TYPES[qual[11:]])
        new = updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")),
            args=fix_commas([cst.Arg(value=self.ctx.device()), cst.Arg(value=dtype)]),
        )
        self.ctx.supersede(original.args[0])
        if self.ctx.report("DEV006", original, f"legacy `{qual}` cast becomes `.to(device, dtype)`", replacement=new):
            self._need_runtime_import()
            return new
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if "cuda" in self.ctx.imports.names.get(original.value, ""):
            self._legacy_reference(original)  # `from torch.cuda import FloatTensor`
        return updated

    def _legacy_reference(self, node: cst.Attribute | cst.Name) -> None:
        """`isinstance(x, torch.cuda.FloatTensor)`: a legacy type that is neither called nor
        cast to (those are rewritten by their call) has no port of its own."""
        if id(node) in self._inner or id(node) in self._callees:
            return
        qual = self.ctx.qualname(node)
        row = _legacy_type(qual)
        if row is not None and qual is not None:
            self._legacy_manual(node, qual, row)

    def _legacy_manual(self, node: cst.CSTNode, qual: str, row) -> None:
        t = self.ctx.target
        self.ctx.report(
            "DEV006",
            node,
            f"`{qual}` has no automatic port to {t.display}",
            applicability=Applicability.MANUAL,
            advice=row.advice.get(t.name) or row.advice.get("*"),
        )

    def _legacy_constructor(self, original: cst.Call, updated: cst.Call, kind: str):
        if kind not in LEGACY_TYPES:
            self._legacy_manual(original, f"torch.cuda.{kind}", _legacy_type(f"torch.cuda.{kind}"))
            return updated
        args = self.positional(original)
        dtype = self.ctx.expr("{torch}.%s" % LEGACY_TYPES[kind])
        kw = [keyword_arg("dtype", dtype), keyword_arg("device", self.ctx.device())]
        if len(args) == 1 and len(original.args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
            new = cst.Call(func=self.ctx.ref("torch.tensor"), args=fix_commas([updated.args[0], *kw]))
        elif args and len(args) == len(original.args) and all(isinstance(a.value, cst.Integer) for a in args):
            new = cst.Call(func=self.ctx.ref("torch.empty"), args=fix_commas([*updated.args, *kw]))
        else:
            self._legacy_manual(original, f"torch.cuda.{kind}", _legacy_type(f"torch.cuda.{kind}"))
            return updated
        self.ctx.supersede(original.func)
        if self.ctx.report("DEV006", original, f"legacy `torch.cuda.{kind}(...)` constructor", replacement=new):
            return new
        return updated

    def _torch_device(self, original: cst.Call, updated: cst.Call):
        """`torch.device("cuda", i)`; a plain `torch.device("cuda[:N]")` ports by its string."""
        args = original.args
        if (
            len(args) != 2
            or not cuda_device_index(string_value(args[0].value))[0]
            or id(args[0].value) in self.ctx.keep_cuda
        ):
            return updated
        t = self.ctx.target
        index = args[1].value
        if t.device_expr is not None:
            new: cst.BaseExpression = self.ctx.device()
        elif not t.indexed_devices or (not t.rank_indexed_devices and not isinstance(index, cst.Integer)):
            new = updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        else:
            return updated  # the index is kept and the device string already ported
        self.ctx.supersede(original)
        msg = (
            f"`{self.ctx.code(original)}` becomes `{self.ctx.code(new)}` (one device per process: the index is dropped)"
        )
        if self.ctx.report("DEV003", original, msg, replacement=new):
            self._need_runtime_import()
            return new
        return updated

    def _kept_cuda_test(self, test: cst.BaseExpression) -> bool:
        """`torch.cuda.is_available()` kept on CUDA, or a flag set to one (`use_cuda`)."""
        if isinstance(test, cst.Call):
            return id(test) in self.ctx.keep_cuda and self.ctx.qualname(test.func) == "torch.cuda.is_available"
        if isinstance(test, cst.Name):
            for scope in (self.ctx.scopes.innermost, self.ctx.module):
                if scope is None:
                    continue
                values = assigned_values(scope, test.value)
                if values:
                    return all(isinstance(v, cst.Call) and self._kept_cuda_test(v) for v in values)
        return False

    def _choice_reaches_target(self, original: cst.IfExp, updated: cst.IfExp):
        """`"cuda:0" if use_cuda else "cpu"` where `use_cuda` stays CUDA's test: the ported
        string would sit under a test that is false on the target, so every run there would
        take the CPU. The choice asks whether the target is there instead."""
        if not is_cuda_device_expr(original.body, self.ctx.qualname) or not self._kept_cuda_test(original.test):
            return updated
        if id(original.body) in self.ctx.keep_cuda:
            # the whole choice stays CUDA's (a project's own device choice, BACK008): a test
            # asking for the target in front of CUDA's device would pick `cuda:0` there
            return updated
        if self.ctx.target.name == "xla":
            test = self.ctx.expr("{xr}.global_runtime_device_count() > 0")
        else:
            test = cst.Call(func=self.ctx.ref("torch.accelerator.is_available"))
        new = updated.with_changes(test=test)
        message = (
            f"`{self.ctx.code(original.test)}` stays CUDA's test (it gates CUDA-only code too): the device "
            f"choice asks for {self.ctx.target.display} instead, so the device reaches it"
        )
        if self.ctx.report("DEV009", original.test, message, replacement=new, applicability=Applicability.SAFE):
            return new
        return updated

    def _map_location(self, original: cst.Call, updated: cst.Call, arg: cst.Arg, why: str):
        i = original.args.index(arg)
        args = list(updated.args)
        args[i] = args[i].with_changes(value=cst.SimpleString('"cpu"'))
        new = updated.with_changes(args=args)
        self.ctx.supersede(arg)
        if self.ctx.report(
            "DEV007",
            original,
            f"checkpoint loads onto the CPU {why}; move it with `.to(device)` after loading",
            replacement=new,
        ):
            return new
        return updated

    # -- the availability idiom -------------------------------------------------------------

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        """`"cuda" if torch.cuda.is_available() else "cpu"`. Its CPU fallback is kept on every
        target: the parts port one by one (`"xla" if xr.global_runtime_device_count() > 0
        else "cpu"`). --portable: the accelerator's own type (DEV009). A test kept on CUDA
        (GUARD001: the flag also gates CUDA-only code) does not choose the target's device: the
        choice asks for the target instead, so the device reaches it (DEV009)."""
        if not self.ctx.portable:
            return self._choice_reaches_target(original, updated)
        test = original.test
        if (
            type(test) is cst.Comparison
            and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) is cst.In
            and string_value(test.left) == "cuda"
            and string_value(original.body) == "cuda"
            and string_value(original.orelse) == "cpu"
        ):
            # `"cuda" if "cuda" in device else "cpu"` is the type of `device`, whatever it is
            new = self.ctx.expr("{torch}.device(%s).type" % self.ctx.code(test.comparisons[0].comparator))
            self.ctx.supersede(original)
            if self.ctx.report(
                "DEV009",
                original,
                f"CUDA-or-CPU device type becomes the type of `{self.ctx.code(test.comparisons[0].comparator)}`",
                replacement=new,
            ):
                return new
            return updated
        if not (
            isinstance(test, cst.Call)
            and self.ctx.qualname(test.func) == "torch.cuda.is_available"
            and is_cuda_device_expr(original.body, self.ctx.qualname)
            and string_value(original.orelse) == "cpu"
        ):
            return updated
        new = self.ctx.accelerator_type()  # a call: the parentheses the choice had are not needed
        self.ctx.supersede(original)
        if self.ctx.report(
            "DEV009",
            original,
            'CUDA-or-CPU choice becomes the current accelerator\'s type, or "cpu" without one',
            replacement=new,
        ):
            return new
        return updated
