"""Calls into the target's own API, checked against the records of the real packages.

`rules/api/*.json` (built by `porter.apidata.build` from torch, torch-xla, torch-tpu and
TorchNeuron's source) says what exists and how it binds. A call that names nothing there
(API001), does not bind (API002: unknown keyword, a positional-only parameter given by
keyword, too many arguments), passes a device or string where an int is declared (API003),
or calls one of TorchTPU's internal `torch.tpu.X` twins that raise (API004) is reported.
The same records let the other families emit calls that bind (`conform`).
"""

from __future__ import annotations

import inspect

import libcst as cst

from porter.apidata import Lookup, Member, TargetApi, target_api
from porter.codemods.family import Family, ReferenceTracker, fix_commas, string_value
from porter.core.findings import Applicability

# the namespaces porter emits into; anything else is not this family's business
_DEVICE_NAMES = ("device", "device_index")
# calls whose string arguments name something torch or the target registers (API007, API008)
_COMPILE = {"torch.compile"}
_INIT_PG = {"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"}
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_AUTOCAST = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"}
_CHECKED = ("torch.accelerator", "torch.tpu", "torch_tpu", "torch.neuron", "torch_neuronx", "torch_xla")


def _placeholders(call: cst.Call) -> tuple[list[int], dict[str, int]] | None:
    """Positional and keyword placeholders (argument indexes) for `Signature.bind`."""
    pos: list[int] = []
    kws: dict[str, int] = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return None  # `*args` / `**kwargs`: the shape is unknown
        if arg.keyword is None:
            pos.append(i)
        else:
            kws[arg.keyword.value] = i
    return pos, kws


def bind_error(member: Member, call: cst.Call) -> str | None:
    """Why `call` does not bind to `member`'s recorded signature, or None."""
    sig = member.signature
    shape = _placeholders(call)
    if sig is None or shape is None:
        return None
    try:
        sig.bind(*shape[0], **shape[1])
    except TypeError as exc:
        return str(exc)
    return None


def conform(member: Member | None, call: cst.Call) -> cst.Call:
    """`call` with keyword arguments that name positional-only parameters made positional
    (`synchronize(device=d)` → `synchronize(d)`, `memory_allocated(device=d)` →
    `memory_allocated(d)` whose parameter is `device_index`), when that makes it bind."""
    sig = member.signature if member is not None else None
    shape = _placeholders(call)
    if member is None or sig is None or shape is None or bind_error(member, call) is None:
        return call
    pos_only = [p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    for name in pos_only[len(positional) :]:
        # torch.cuda.* named its device parameter `device`; torch.accelerator.* says `device_index`
        names = _DEVICE_NAMES if name in _DEVICE_NAMES else (name,)
        arg = next((a for a in keywords if cst.ensure_type(a.keyword, cst.Name).value in names), None)
        if arg is None:
            break
        keywords.remove(arg)
        positional.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
    new = call.with_changes(args=fix_commas(positional + keywords))
    return new if bind_error(member, new) is None else call


def _not_an_int(node: cst.BaseExpression, api_qualname) -> str | None:
    """What `node` evidently is when it cannot be an int (a string, a device), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "a string"
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        return "a torch.device"
    if isinstance(node, cst.Call) and api_qualname(node.func) == "torch.device":
        return "a torch.device"
    return None


def as_index(node: cst.BaseExpression, api_qualname) -> cst.BaseExpression | None:
    """The int index an evidently non-int device argument stands for, or None when `node`
    may already be an int: `"neuron:1"` → `1`, `"neuron"` → `None` (the current device),
    `x.device` / `torch.device(...)` → `.index` of it."""
    if isinstance(node, cst.SimpleString):
        value = string_value(node)
        if value is None:
            return None
        _, _, index = value.partition(":")
        return cst.Integer(index) if index.isdigit() else cst.Name("None")
    if _not_an_int(node, api_qualname) == "a torch.device":
        return cst.Attribute(value=node, attr=cst.Name("index"))
    return None


def conform_int_arguments(member: Member | None, call: cst.Call, api_qualname) -> cst.Call:
    """`call` with devices and device strings passed to int-only parameters turned into
    their index (`device_index(x.device)` → `device_index(x.device.index)`)."""
    if member is None or member.signature is None:
        return call
    shape = _placeholders(call)
    if shape is None or bind_error(member, call) is not None:
        return call
    args = list(call.args)
    for name, index in member.signature.bind(*shape[0], **shape[1]).arguments.items():
        if isinstance(index, int) and member.int_only(name):
            new = as_index(args[index].value, api_qualname)
            if new is not None:
                args[index] = args[index].with_changes(value=new)
    return call.with_changes(args=args)


# torch registers test-only compile backends: never shown as a choice
_TESTING = {
    b
    for b in (
        "non_leaf_compile_error_TESTING_ONLY",
        "relu_accuracy_error_TESTING_ONLY",
        "relu_compile_error_TESTING_ONLY",
        "relu_runtime_error_TESTING_ONLY",
        "dynamo_accuracy_minifier_backend",
        "dynamo_minifier_backend",
        "undefined",
        "fake",
    )
}


def _versions(labels) -> str:
    """`torch 2.10 and 2.11` / `torch 2.11` / `torch-tpu 0.2.0`."""
    labels = list(labels)
    if all(label.startswith("torch ") for label in labels) and len(labels) > 1:
        versions = [label.removeprefix("torch ") for label in labels]
        return "torch " + ", ".join(versions[:-1]) + " and " + versions[-1]
    return " and ".join(labels)


class TargetApiFamily(ReferenceTracker, Family):
    name = "target-api"
    tokens = (b"accelerator", b"tpu", b"neuron", b"torch_xla", b"backend", b"autocast")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Its rules' tokens, and where `ast` reads the file: a call an import qualifies into
        `_COMPILE` with a `backend=` (API007), `_INIT_PG` (API007) or `_AUTOCAST` (API008), or
        a name under `_CHECKED` (API001 to API004): an import binds one under it (`import
        torch_xla`, `from torch import accelerator`), or one above it (`torch`) and the file
        spells the name it binds with the next part (`torch.accelerator`, `T.accelerator`)."""
        if not super().candidate(ctx, source):
            return False
        found = ctx.sites()
        if found is None:
            return True
        for name, keywords in found.dotted_calls.items():
            for qual in found.qualified(name):
                if qual in _INIT_PG or qual in _AUTOCAST or (qual in _COMPILE and "backend" in keywords):
                    return True
        for local, base in found.bindings():
            for checked in _CHECKED:
                if base == checked or base.startswith(checked + "."):
                    return True
                if (
                    checked.startswith(base + ".")
                    and f"{local}.{checked[len(base) + 1 :].split('.')[0]}" in found.name_attrs
                ):
                    return True
        return False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self.api: TargetApi = target_api(ctx.target.name)
        self._callees: set[int] = set()

    def _checked(self, node: cst.BaseExpression) -> str | None:
        qual = self.ctx.qualname(node)
        if qual is None or not qual.startswith(_CHECKED):
            return None
        return qual

    def visit_Call(self, node: cst.Call) -> None:
        self._callees.add(id(node.func))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) in self._callees or not self.whole_reference(original):
            return updated
        qual = self._checked(original)
        if qual is None:
            return updated
        return self._name(original, updated, qual) or updated

    def _name(self, original, updated, qual: str):
        """API004 / API001 for a reference; the replacement node when a fix applies."""
        prefer = self.api.twins.get(qual)
        if prefer is not None:
            fixable = self.api.exists(prefer)
            new = self.ctx.ref(prefer) if fixable else None
            if self.ctx.report(
                "API004",
                original,
                f"`{qual}` is internal to {self.ctx.target.display} and raises when called from user code: "
                + (f"use `{prefer}`" if fixable else f"it names `{prefer}`, which the recorded torch does not have"),
                replacement=new,
                applicability=Applicability.SAFE if fixable else Applicability.MANUAL,
            ):
                return new
            return None
        found = self.api.lookup(qual)
        if found is not None and found.missing:
            self.ctx.report("API001", original, self._missing(qual, found))
        return None

    def _missing(self, qual: str, found) -> str:
        """API001's message: which of the recorded packages lack the name."""
        if found.members:  # some torch the target accepts has it, another does not
            has = ", ".join(label for label, _ in found.members)
            return (
                f"`{qual}` does not exist in {_versions(found.lacking)}, which {self.ctx.target.display} accepts "
                f"(it is in {has}; recorded from the real packages)"
            )
        return (
            f"`{qual}` does not exist in {self.ctx.target.display}'s API (as recorded from "
            f"{self.api.source_of(found.module)})"
        )

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        named = self.ctx.qualname(original.func)
        if named in _COMPILE or named in _INIT_PG:
            self._backend(original, updated, named in _COMPILE)
            return updated
        if named in _AUTOCAST:
            return self._autocast(original, updated)
        qual = self._checked(original.func)
        if qual is None:
            return updated
        if qual in self.api.twins:
            new_func = self._name(original.func, updated.func, qual)
            return updated.with_changes(func=new_func) if new_func is not None else updated
        found = self.api.lookup(qual)
        if found is None:
            return updated
        if found.missing:
            return self._name(original.func, updated.func, qual) or updated
        member = found.member
        if member is None or member.params is None:
            return updated
        return self._signature(original, updated, qual, found, member)

    def _signature(self, original: cst.Call, updated: cst.Call, qual: str, found: Lookup, member: Member):
        """API002: a call the newest recorded signature does not bind is conformed to it where
        porter can (else reported); one it binds is still reported where an older version the
        target accepts rejects it. Then its integer arguments are checked (`_int_arguments`)."""
        why = bind_error(member, original)
        if why is None:  # the newest binds: does every version the target accepts take it?
            failing = [(label, m, bind_error(m, original)) for label, m in found.members if m.params is not None]
            failing = [(label, m, err) for label, m, err in failing if err is not None]
            if failing:
                label, old, err = failing[0]
                self.ctx.report(
                    "API002",
                    original,
                    f"`{qual}{old.signature}` in {_versions([f[0] for f in failing])}, which "
                    f"{self.ctx.target.display} accepts, does not accept this call: {err}",
                    applicability=Applicability.MANUAL,
                )
                return updated
        if why is not None:
            fixed = conform(member, updated)
            new = fixed if fixed is not updated else None
            if self.ctx.report(
                "API002",
                original,
                f"`{qual}{member.signature}` does not accept this call: {why}",
                replacement=new,
                applicability=Applicability.SAFE if new is not None else Applicability.MANUAL,
            ):
                return new
            return updated
        self._int_arguments(original, member, qual)
        return updated

    @staticmethod
    def _argument(call: cst.Call, keyword: str, position: int | None) -> cst.Arg | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return positional[position] if position is not None and len(positional) > position else None

    def _backend(self, original: cst.Call, updated: cst.Call, compiling: bool) -> None:
        """API007: a backend name (as the port will run it) nobody registers."""
        arg = self._argument(updated, "backend", None if compiling else 0)
        value = string_value(arg.value) if arg is not None and isinstance(arg.value, cst.SimpleString) else None
        if arg is None or value is None:
            return
        if b"register_backend" in self.ctx.source:
            return  # the module registers a backend of its own (dynamo's or `Backend.register_backend`)
        known = self.api.compile_backends if compiling else self.api.dist_backends
        # a process group's backend may be per device: "cpu:gloo,neuron:neuron"
        names = [value] if compiling else [part.rpartition(":")[2] for part in value.split(",")]
        unknown = [n for n in names if n.strip().lower() not in known]
        if not unknown:
            return
        what = "compile backend" if compiling else "process-group backend"
        where = self._original_argument(original, arg)
        self.ctx.report(
            "API007",
            where,
            f"{what} {', '.join(repr(n) for n in unknown)} is registered neither by torch nor by "
            f"{self.ctx.target.display} (recorded: {', '.join(sorted(known - _TESTING))})",
        )

    def _original_argument(self, original: cst.Call, arg: cst.Arg) -> cst.CSTNode:
        """The argument's node in the original call (positions are known for those only)."""
        keyword = arg.keyword.value if arg.keyword is not None else None
        for a in original.args:
            if (a.keyword.value if a.keyword is not None else None) == keyword and (
                keyword is not None or a is original.args[0]
            ):
                return a.value
        return original

    def _autocast(self, original: cst.Call, updated: cst.Call):
        """API008: autocast on the target's own device with no dtype runs the device's default."""
        device = self._argument(updated, "device_type", 0)
        kind = string_value(device.value) if device is not None and isinstance(device.value, cst.SimpleString) else None
        if kind is None or kind not in self.api.device_types | {self.ctx.target.device_type}:
            return updated
        if self._argument(updated, "dtype", 1) is not None or any(a.star for a in updated.args):
            return updated
        default = self.api.autocast_default
        said = (
            f"it runs {default.removeprefix('torch.')} (torch.get_autocast_dtype({kind!r}), recorded from "
            "the real package)"
            if default
            else "it runs the device's default"
        )
        new = updated.with_changes(
            args=fix_commas(
                [*updated.args, cst.Arg(keyword=cst.Name("dtype"), value=self.ctx.ref("torch.bfloat16"), equal=_EQUAL)]
            )
        )
        if self.ctx.report(
            "API008",
            original,
            f"`torch.autocast({kind!r})` without a dtype: {said}, not the target's native bf16",
            replacement=new,
            applicability=Applicability.UNSAFE,
        ):
            return new
        return updated

    def _int_arguments(self, call: cst.Call, member: Member, qual: str) -> None:
        shape = _placeholders(call)
        sig = member.signature
        if shape is None or sig is None:
            return
        bound = sig.bind(*shape[0], **shape[1])
        for name, index in bound.arguments.items():
            if not isinstance(index, int) or not member.int_only(name):
                continue
            value = call.args[index].value
            what = _not_an_int(value, self.ctx.qualname)
            if what is not None:
                self.ctx.report(
                    "API003",
                    value,
                    f"`{qual}` takes an int for `{name}`; `{self.ctx.code(value)}` is {what} (TypeError)",
                )
