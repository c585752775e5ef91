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

from porter.apidata import Member, TargetApi, target_api
from porter.codemods.family import Family, ReferenceTracker, fix_commas, string_value
from porter.pipeline.findings import Applicability

# the namespaces porter emits into; anything else is not this family's business
_DEVICE_NAMES = ("device", "device_index")
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


class TargetApiFamily(ReferenceTracker, Family):
    name = "target-api"
    tokens = (b"accelerator", b"tpu", b"neuron", b"torch_xla")

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
            self.ctx.report(
                "API001",
                original,
                f"`{qual}` does not exist in {self.ctx.target.display}'s API (as recorded from {self.api.source_of(found.module)})",
            )
        return None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
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
        why = bind_error(member, original)
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
