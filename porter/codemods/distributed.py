"""Distributed: the NCCL backend, `init_process_group`, DDP device arguments, launcher
environment variables, and `nn.DataParallel`."""

from __future__ import annotations

import re

from porter.codemods import cstwalk
import libcst as cst

from porter.codemods.context import CudaOnlyCode
from porter.codemods.family import Family, fix_commas, replace_string, string_value
from porter.codemods.family import walk as _walk
from porter.codemods.flow import assigned_values
from porter.core.findings import Applicability
from porter.analysis.device_backends import project_abstraction
from porter.analysis.kinds import BackendKind
from porter.analysis.resolve import dotted

INIT = {"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"}
BACKEND_NCCL = {"torch.distributed.Backend.NCCL", "torch.distributed.distributed_c10d.Backend.NCCL"}
NEW_GROUP = {"torch.distributed.new_group", "torch.distributed.distributed_c10d.new_group"}
NCCL_AVAILABLE = {"torch.distributed.is_nccl_available", "torch.distributed.distributed_c10d.is_nccl_available"}
DDP = {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}
DATA_PARALLEL = {
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
}

# env var -> per-target replacement (None: manual) and whether the rename is exact
ENV_VARS = {
    "CUDA_VISIBLE_DEVICES": {"neuron": ("NEURON_RT_VISIBLE_CORES", False), "tpu": ("TPU_VISIBLE_CHIPS", False)},
    "CUDA_LAUNCH_BLOCKING": {"neuron": ("NEURON_LAUNCH_BLOCKING", True), "tpu": ("TORCH_TPU_LAUNCH_BLOCKING", True)},
}
NCCL_VAR = re.compile(r"^NCCL_[A-Z0-9_]+$")
# PYTORCH_CUDA_ALLOC_CONF, TORCH_CUDA_ARCH_LIST, ...: a name of [A-Z0-9_] that holds CUDA, read in
# linear time (`[A-Z0-9_]*CUDA[A-Z0-9_]*$` tried each CUDA of a long run to its end)
CUDA_VAR = re.compile(r"^(?=[A-Z0-9_]*$)[A-Z0-9_]*?CUDA")
# code that asks torch for the backend of the device it runs on: a "nccl" there is a fallback
PER_DEVICE_BACKEND = ("default_device_backend_map", "get_default_backend_for_device")
PROCESS_GROUP_OPTION = "process_group"  # a ProcessGroup in torch's own API, never a backend name
DEVICE_TYPES = frozenset(
    ("cuda", "cpu", "xpu", "mps", "hpu", "npu", "mtia", "meta", "neuron", "tpu", "xla", "mlu", "musa", "sdaa")
)
_DEVICE_KEY = re.compile(r"^[a-z][a-z0-9_]{1,15}$")  # a vendor's own device name beside the known ones
# torch's device → backend map in one string (`init_process_group("cpu:gloo,cuda:nccl")`)
# one pair or more: torch's `BackendConfig` reads `"cuda:nccl"` alone as the map {"cuda": "nccl"}
_BACKEND_MAP = re.compile(r"^\s*[a-z][a-z0-9_]*:[a-z][a-z0-9_]*(?:\s*,\s*[a-z][a-z0-9_]*:[a-z][a-z0-9_]*)*\s*$")
# the calls that bind a process group to a device (`device_id=`) beside its backend
_BINDS_DEVICE = frozenset({"init_process_group", "new_group"})


def _names(node: cst.CSTNode) -> list[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    return [n for c in cstwalk.children(node) for n in _names(c)]


def _contains_nccl(node: cst.CSTNode) -> bool:
    if (string_value(node) or "").lower() == "nccl":
        return True
    return any(_contains_nccl(c) for c in cstwalk.children(node))


class DistributedFamily(Family):
    name = "distributed"
    tokens = (b"nccl", b"NCCL", b"init_process_group", b"DistributedDataParallel", b"DDP", b"DataParallel", b"CUDA_")

    candidate_reads_ast = True

    @classmethod
    def candidate(cls, ctx, source: bytes) -> bool:
        """Its rules' tokens, and one of what every report below starts from: a string whose
        value holds "ccl" or "cuda" in any case (`leave_SimpleString`'s "nccl", backend maps,
        `NCCL_*` and `CUDA_*` names; a dict keyed "cuda"; the "nccl" of a parameter's default,
        an assignment, a comparison, a choice, an option list, a `Literal`, a registry key, a
        discarded argument; `_contains_nccl`), an attribute named `NCCL` (`Backend.NCCL`), or a
        call `qualname` makes `INIT` (a missing backend), `DDP` or `DATA_PARALLEL` of (through
        the imports only, as `Sites.qualified`). `DistributedDataParallel` named but not called,
        `DDP` in a comment or a class name, `init_process_groups`, hold none."""
        if not super().candidate(ctx, source):
            return False
        found = ctx.sites()
        if found is None or found.backend_strings or found.nccl_attrs:
            return True
        calls = INIT | DDP | DATA_PARALLEL
        return any(q in calls for name in found.dotted_calls for q in found.qualified(name))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._per_device: set[int] = set()  # "nccl" strings that only name CUDA's own backend
        self._backend_args: set[int] = set()  # the backend arguments of init_process_group / new_group
        self._inner_strings: set[int] = set()  # the inner parts (concatenations, literals) of an implicit concatenation
        self._nccl_branches: list[tuple[CudaOnlyCode, cst.CSTNode]] = []  # bodies behind a kept NCCL test
        self._abstraction: bool | None = None  # see _library
        self._bound_devices: dict[int, list[cst.BaseExpression]] = {}  # id(backend map) -> its CUDA device_ids
        self._discarded: dict[str, tuple[str, ...]] | None = None  # BackendKind.DISCARDED facts

    def visit_Dict(self, node: cst.Dict) -> None:
        """`{"cuda": "nccl", "cpu": "gloo"}` maps each device type to its backend: "nccl" is
        CUDA's entry, right as it is. The target needs its own entry, which is reported. (A
        vendor's own device name beside the known ones is one more entry: accelerate's "sdaa".)"""
        keys = [string_value(e.key) for e in node.elements if isinstance(e, cst.DictElement)]
        known = [k for k in keys if k in DEVICE_TYPES]
        if "cuda" not in keys or len(known) < 2 or not all(k is not None and _DEVICE_KEY.match(k) for k in keys):
            return
        for e in node.elements:
            if isinstance(e, cst.DictElement) and (string_value(e.value) or "").lower() == "nccl":
                self._per_device.add(id(e.value))
        t = self.ctx.target
        if t.device_type in keys:
            for e in node.elements:
                if isinstance(e, cst.DictElement) and id(e.value) in self._per_device:
                    self.ctx.report(
                        "DIST007",
                        e.value,
                        f"`{self.ctx.code(e.value)}` is CUDA's entry of a device → backend mapping that "
                        f"has {t.display}'s own: kept",
                    )
        if t.device_type not in keys:
            self.ctx.report(
                "DIST001",
                node,
                f'a device-type → backend mapping without an entry for "{t.device_type}": a lookup with '
                "the target's device type fails",
                applicability=Applicability.MANUAL,
                advice=f'Add `"{t.device_type}": "{t.dist_backend}"` to the mapping (CUDA keeps "nccl").',
            )

    def visit_Arg(self, node: cst.Arg) -> None:
        """`FaultTolerance(process_group="nccl")`: torch's `process_group=` takes a ProcessGroup,
        never a string, so a string there is a library's name for one of its own classes."""
        if node.keyword is not None and node.keyword.value == PROCESS_GROUP_OPTION:
            self._library_choice(node.value)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`config.process_group == "nccl"`: the same library option, read. Any other test
        against "nccl" (`self.backend == "nccl"`, `communication_backend_name() == "nccl"`)
        asks whether the backend is NCCL: true only on CUDA, so what it guards stays CUDA's."""
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if any((dotted(s) or "").rsplit(".", 1)[-1] == PROCESS_GROUP_OPTION for s in sides):
            for side in sides:
                self._library_choice(side)
            return
        if self.ctx.portable:
            return  # --portable asks the current device's backend; its tests stay as they are
        for side in sides:
            values = side.elements if isinstance(side, (cst.Tuple, cst.List, cst.Set)) else ()
            for string in [side, *(e.value for e in values)]:
                if ((string_value(string) or "").lower() == "nccl" or self._backend_nccl(string)) and id(
                    string
                ) not in self._per_device:
                    self._per_device.add(id(string))
                    self.ctx.report(
                        "DIST007",
                        node,
                        f"`{self.ctx.code(node)}` asks whether the backend is NCCL: true only on CUDA, so "
                        "the code it guards stays CUDA's; kept",
                    )

    def _backend_nccl(self, node: cst.CSTNode) -> bool:
        return (
            isinstance(node, cst.Attribute)
            and node.attr.value == "NCCL"
            and (self.ctx.qualname(node) or "") in BACKEND_NCCL
        )

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """`dist.Backend.NCCL`: as the backend of `init_process_group` / `new_group` it becomes
        the target's; tested against, it stays (DIST007); anywhere else it is reported."""
        if not self._backend_nccl(original) or id(original) in self._per_device:
            return updated
        t = self.ctx.target
        if id(original) in self._backend_args:
            new = cst.SimpleString(f'"{t.dist_backend}"')
            if self.ctx.report(
                "DIST001", original, f'`Backend.NCCL` becomes "{t.dist_backend}" on {t.display}', replacement=new
            ):
                if t.dist_import:
                    self.ctx.add_import(t.dist_import)
                return new
            return updated
        self.ctx.report(
            "DIST001",
            original,
            f"`{self.ctx.code(original)}` names NCCL, NVIDIA's collective library: {t.display}'s backend "
            f'is "{t.dist_backend}"',
            applicability=Applicability.MANUAL,
        )
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """`def init_distributed_environment(..., backend: str = "nccl")`: a package's public
        function whose parameter defaults to NCCL. The default is the package's API, which its
        callers on CUDA rely on: kept, reported (as DEV016 keeps a public default device)."""
        if self.ctx.source is None or (b"device_id" in self.ctx.source and b"cuda:nccl" in self.ctx.source):
            self._map_devices(node)
        name = node.name.value
        if name.startswith("_") and name != "__init__" or not _in_package(self.ctx):
            return
        for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            if param.default is not None and string_value(param.default) == "nccl":
                self._per_device.add(id(param.default))
                t = self.ctx.target
                self.ctx.report(
                    "DIST001",
                    param.default,
                    f'`{param.name.value}` of `{name}` defaults to "nccl", public API of this package (it '
                    "selects NCCL at run time): kept",
                    applicability=Applicability.MANUAL,
                    advice=(
                        f'Pass {param.name.value}="{t.dist_backend}" where {t.display} calls `{name}`; porter '
                        "leaves a documented default as it is."
                    ),
                )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """`backend: Optional[str] = "nccl"` in a class: a documented configuration default,
        kept; it selects NCCL at run time, which is reported."""
        if node.value is not None and self._in_class() and (string_value(node.value) or "").lower() == "nccl":
            self._config_default(node.value, self.ctx.code(node.target))

    def visit_Assign(self, node: cst.Assign) -> None:
        """`NCCL_BACKEND = "nccl"`: a name for NCCL itself, kept (as `pt_cuda_available`)."""
        if (string_value(node.value) or "").lower() == "nccl" and all(
            "nccl" in (dotted(t.target) or "").lower() for t in node.targets
        ):
            self._per_device.add(id(node.value))
            self.ctx.report(
                "DIST007",
                node.value,
                f"`{self.ctx.code(node.targets[0].target)} = {self.ctx.code(node.value)}` names NCCL "
                "itself (what the code compares the backend with): kept",
            )
            return
        self._fallback(node)

    def _in_class(self) -> bool:
        statements = self.ctx.current_statements
        return len(statements) >= 2 and isinstance(statements[-2], cst.ClassDef)

    def _config_default(self, value: cst.BaseExpression, field: str) -> None:
        self._per_device.add(id(value))
        t = self.ctx.target
        self.ctx.report(
            "DIST001",
            value,
            f'`{field}` defaults to "nccl", a configuration value of the class (it selects NCCL at run time): kept',
            applicability=Applicability.MANUAL,
            advice=(
                f'Pass "{t.dist_backend}" for {t.display} where the configuration is made; porter leaves a '
                "documented default as it is."
            ),
        )

    def _library_choice(self, value: cst.BaseExpression) -> None:
        if (string_value(value) or "").lower() != "nccl":
            return
        self._per_device.add(id(value))
        self.ctx.report(
            "DIST001",
            value,
            "a library's `process_group` option names its own NCCL process group (as torchft's "
            "`ProcessGroupNCCL`), which needs CUDA: it stays",
            applicability=Applicability.MANUAL,
            advice=(
                f"Choose a process group that runs on {self.ctx.target.display} in that library's "
                "configuration; porter does not rename a library's vocabulary."
            ),
        )

    def _fallback(self, node: cst.Assign) -> None:
        """`backend = "nccl"` then `backend = Backend.default_device_backend_map.get(device_type)`
        when the device registers one: "nccl" is only the fallback (TorchNeuron and TorchTPU
        register theirs for their device; xla's only once its backend module is imported)."""
        if not self.ctx.device_generic or (string_value(node.value) or "").lower() != "nccl":
            return  # on xla the port pins the device type, and the "xla" backend needs its import
        scope = self.ctx.scopes.innermost
        if scope is not None and any(word in self.ctx.code(scope) for word in PER_DEVICE_BACKEND):
            self._per_device.add(id(node.value))
            self.ctx.report(
                "DIST006",
                node.value,
                '`"nccl"` stays: it is only the fallback of a per-device backend choice, which gives '
                f"{self.ctx.target.display} its own backend where it registers one",
                applicability=Applicability.MANUAL,
            )

    def _map_devices(self, function: cst.FunctionDef) -> None:
        """`init_process_group("cpu:gloo,cuda:nccl", device_id=torch.device(f"cuda:{i}"))`: the
        device bound to the group follows its backend map. While the map keeps CUDA's pair and
        has none for the target (DIST001 reports it), the `device_id` stays CUDA's: a target
        device there would be bound to no backend, and would break CUDA's pair."""
        t = self.ctx.target
        maps = [
            n
            for n in _walk(function.body)
            if isinstance(n, cst.SimpleString)
            and "cuda:nccl" in n.value.replace(" ", "")
            and (v := string_value(n)) is not None
            and _BACKEND_MAP.match(v)
            and t.device_type not in {pair.split(":")[0].strip() for pair in v.split(",")}
        ]
        if not maps:
            return
        bound: list[cst.BaseExpression] = []
        for call in _walk(function.body):
            if not isinstance(call, cst.Call) or (dotted(call.func) or "").rpartition(".")[2] not in _BINDS_DEVICE:
                continue
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value != "device_id":
                    continue
                values = assigned_values(function, arg.value.value) if isinstance(arg.value, cst.Name) else [arg.value]
                bound += [v for v in values if "cuda" in self.ctx.code(v)]
        for value in bound:
            self.ctx.keep_cuda.update(id(n) for n in _walk(value))
        for m in maps:
            self._bound_devices.setdefault(id(m), []).extend(bound)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        """Its inner concatenations and its literal parts: the whole is the map, a part is none
        (`"cpu:gloo," "cuda:nccl"`'s last part reads as a one-pair map)."""
        self._inner_strings.update(id(n) for n in (node.left, node.right) if isinstance(n, cst.SimpleString))
        right = node.right
        while isinstance(right, cst.ConcatenatedString):
            self._inner_strings.add(id(right))
            self._inner_strings.update(id(n) for n in (right.left, right.right) if isinstance(n, cst.SimpleString))
            right = right.right

    def leave_ConcatenatedString(self, original: cst.ConcatenatedString, updated: cst.ConcatenatedString):
        """`"cpu:gloo," "cuda:nccl"` (a long map split over lines) is one map to Python and to
        torch; its parts are no map, so it passed without a word."""
        if id(original) in self._inner_strings or id(original) in self.ctx.keep_cuda:
            return updated
        value = string_value(original)
        lowered = (value or "").lower()
        if (
            value is not None
            and _BACKEND_MAP.match(lowered)
            and "cuda:nccl" in lowered.replace(" ", "")
            and (lowered == value or id(original) in self._backend_args)
        ):
            self._backend_map(original, lowered)
        return updated

    def _backend_map(self, node: cst.BaseString, value: str) -> None:
        """`"cpu:gloo,cuda:nccl"`: a backend per device type, CUDA's NCCL right as it is. The
        target needs its own pair, which is reported, not written: the map makes every backend
        it names, so a pair for the target would fail where the target's package is absent."""
        t = self.ctx.target
        devices = {pair.split(":")[0].strip() for pair in value.split(",")}
        if t.device_type in devices:
            return
        bound = "".join(
            f"; the `device_id` bound with it (`{self.ctx.code(v)}`) stays CUDA's, as the map's CUDA pair"
            for v in self._bound_devices.get(id(node), ())
        )
        self.ctx.report(
            "DIST001",
            node,
            f"`{self.ctx.code(node)}` maps each device type to its backend (NCCL for CUDA) and has no pair for "
            f'"{t.device_type}": a process group on {t.display} gets no backend there{bound}',
            applicability=Applicability.MANUAL,
            advice=f'Where {t.display} runs, add `{t.device_type}:{t.dist_backend}` to the map (CUDA keeps "cuda:nccl")'
            + (f"; import `{t.dist_import}` first, which registers it." if t.dist_import else "."),
        )

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        raw = original.value
        if "ccl" not in raw and "CCL" not in raw and "CUDA" not in raw:
            return updated
        value = string_value(original)
        if (
            value is None
            or id(original) in self._per_device
            or id(original) in self.ctx.claimed
            or id(original) in self.ctx.keep_cuda
        ):
            return updated
        if value != "nccl" and value.lower() == "nccl" and id(original) not in self._backend_args:
            return updated  # "NCCL": an environment-variable prefix, a label; a backend is spelt "nccl"
        if value.lower() == "nccl":
            return self._nccl(original, updated)
        lowered = value.lower()  # torch lowercases a backend string: "CPU:GLOO,CUDA:NCCL" is its map too
        if (
            _BACKEND_MAP.match(lowered)
            and "cuda:nccl" in lowered.replace(" ", "")
            and (lowered == value or id(original) in self._backend_args)
            and id(original) not in self._inner_strings
        ):
            self._backend_map(original, lowered)
            return updated
        if value in ENV_VARS:
            return self._env_var(original, updated, value)
        self._cuda_setting(original, value)
        return updated

    def _nccl(self, original: cst.SimpleString, updated: cst.SimpleString):
        """DIST001: the backend `"nccl"` becomes the target's (with its import), or under
        --portable the current device's default backend."""
        t = self.ctx.target
        if self.ctx.portable:
            new = self.ctx.default_backend()
            if self.ctx.report(
                "DIST001",
                original,
                "NCCL backend becomes the default backend of the current device (NCCL on CUDA, gloo on "
                "the CPU, the target's own where it registers one)",
                replacement=new,
            ):
                return new
            return updated
        new = replace_string(updated, t.dist_backend)
        if self.ctx.report(
            "DIST001", original, f'NCCL backend becomes "{t.dist_backend}" on {t.display}', replacement=new
        ):
            if t.dist_import:
                self.ctx.add_import(t.dist_import)
            return new
        return updated

    def _env_var(self, original: cst.SimpleString, updated: cst.SimpleString, value: str):
        """DIST003: a CUDA environment variable with a counterpart on the target (`ENV_VARS`)
        becomes it; in a project with a device abstraction it stays beside the target's, and
        without a counterpart it is reported."""
        t = self.ctx.target
        mapping = ENV_VARS[value].get(t.name) if not self.ctx.portable else None
        if mapping is None:
            self.ctx.report(
                "DIST003", original, f"`{value}` has no {t.display} equivalent", applicability=Applicability.MANUAL
            )
            return updated
        name, exact = mapping
        if self._library():
            # a library sets or reads each backend's own variables (CUDA's beside Ascend's):
            # CUDA's stays CUDA's, the target's goes beside it
            self.ctx.report(
                "DIST003",
                original,
                f"`{value}` is CUDA's variable, in a project with a device abstraction of its own: kept for CUDA; "
                f"{t.display}'s counterpart is `{name}`{'' if exact else ' (its values count other units than GPUs)'}"
                ": set or read it beside this one",
                applicability=Applicability.MANUAL,
            )
            return updated
        new = replace_string(updated, name)
        msg = f"`{value}` becomes `{name}`"
        if not exact:
            msg += " (the values differ: NeuronCores or TPU chips, not GPUs; check the list you set)"
        if self.ctx.report(
            "DIST003",
            original,
            msg,
            replacement=new,
            applicability=Applicability.SAFE if exact else Applicability.UNSAFE,
        ):
            return new
        return updated

    def _cuda_setting(self, original: cst.SimpleString, value: str) -> None:
        """DIST004 / DIST003: a string that names an NCCL or CUDA setting with no counterpart on
        the target (it does nothing there) is reported."""
        t = self.ctx.target
        if NCCL_VAR.match(value):
            self.ctx.report(
                "DIST004",
                original,
                f"`{value}` tunes NCCL, which {t.display} does not use",
                applicability=Applicability.MANUAL,
            )
        elif CUDA_VAR.match(value) and "_" in value:
            self.ctx.report(
                "DIST003",
                original,
                f"`{value}` names a CUDA setting (an environment variable of CUDA's allocator, build or "
                f"runtime): no {t.display} equivalent, it does nothing there",
                applicability=Applicability.MANUAL,
            )

    def _library(self) -> bool:
        """Whether the project has a device abstraction of its own (device_backends.abstraction)."""
        if self._abstraction is None:
            self._abstraction = project_abstraction(self.ctx.settings, self.ctx.path, self.ctx.source) is not None
        return self._abstraction

    def _nccl_options(self, node: cst.IfExp) -> None:
        """`backend="nccl" if pg_options is not None else None`, where `pg_options` holds
        `ProcessGroupNCCL.Options`: NCCL is chosen, with NCCL's own options, only where torch
        has NCCL, and `None` gives every other device its default backend. "neuron" with NCCL
        options would be wrong twice: it stays, reported."""
        if (string_value(node.body) or "").lower() != "nccl" or not (
            isinstance(node.orelse, cst.Name) and node.orelse.value == "None"
        ):
            return
        if not self._names_nccl(node.test):
            return
        self._per_device.add(id(node.body))
        self.ctx.report(
            "DIST001",
            node,
            "NCCL is chosen only where torch has NCCL (with NCCL's options); elsewhere None picks the "
            "device's default backend",
            applicability=Applicability.MANUAL,
            advice=(
                f"Where torch is built with NCCL this still picks NCCL on {self.ctx.target.display}: make the "
                "condition false there (e.g. test the device type), so the default backend is used."
            ),
        )

    def _names_nccl(self, test: cst.BaseExpression) -> bool:
        if "nccl" in self.ctx.code(test).lower():
            return True
        names = [n.value for n in _names(test)]
        for scope in (self.ctx.scopes.innermost, self.ctx.module):
            if scope is None:
                continue
            for name in names:
                if any("nccl" in self.ctx.code(v).lower() for v in assigned_values(scope, name)):
                    return True
        return False

    def _per_device_choice(self, node: cst.IfExp) -> cst.BaseExpression | None:
        """`"nccl" if device == "cuda" else "gloo"`: the device's own backend, asked of torch."""
        test = node.test
        if not (string_value(node.body) == "nccl" and string_value(node.orelse) == "gloo"):
            return None
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
        ):
            return None
        sides = (test.left, test.comparisons[0].comparator)
        if not any(string_value(s) == "cuda" for s in sides):
            return None
        return next((s for s in sides if string_value(s) is None), None)

    def _nccl_test(self, test: cst.BaseExpression) -> bool:
        """`dist.get_backend() == "nccl"` (or one operand of an `and`): a test that is true only
        on CUDA, kept (DIST007, visit_Comparison)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._nccl_test(test.left) or self._nccl_test(test.right)
        return (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and any(
                (string_value(side) or "").lower() == "nccl" or self._backend_nccl(side)
                for side in (test.left, test.comparisons[0].comparator)
            )
            and not any(
                (dotted(side) or "").rsplit(".", 1)[-1] == PROCESS_GROUP_OPTION
                for side in (test.left, test.comparisons[0].comparator)
            )
        )

    def visit_If(self, node: cst.If) -> None:
        """`if dist.get_backend() == "nccl": tensor = tensor.to(get_device("cuda"))`: the test
        stays (DIST007), so the branch runs on CUDA only; it stays CUDA's too (a target device
        there would break CUDA and never run on the target). The fixes not applied in it are
        reported with the test."""
        if self.ctx.portable or self.ctx.in_cuda_only_code() is not None or not self._nccl_test(node.test):
            return
        region = CudaOnlyCode(node.test, f"`if {self.ctx.code(node.test)}`", "NCCL runs on CUDA only", code="DIST007")
        for stmt in node.body.body:
            self.ctx.cuda_only_code[id(stmt)] = region
        self._nccl_branches.append((region, node.test))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for region, at in self._nccl_branches:
            if region.left:
                self.ctx.report(
                    "DIST007",
                    at,
                    f"the branch behind `{self.ctx.code(at)}` runs only where the backend is NCCL, on "
                    f"CUDA: kept as it is (fixes not applied there: {', '.join(dict.fromkeys(region.left))})",
                )
        return updated

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """(the strings of a per-device NCCL-or-gloo choice are the call's, below)"""
        device = self._per_device_choice(node)
        if device is not None:
            self._per_device.add(id(node.body))
            self.ctx.keep_cuda.update(id(n) for n in (node.test.left, node.test.comparisons[0].comparator))  # type: ignore[attr-defined]
        self._nccl_options(node)

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        """`"nccl" if device == "cuda" else "gloo"` picks each device's backend: torch says it
        (`get_default_backend_for_device`: NCCL on CUDA, gloo on the CPU, the target's own),
        so CUDA keeps NCCL and the target gets its backend. `"nccl" if
        dist.is_nccl_available() else "gloo"`: once "nccl" is the target's backend the NCCL
        question no longer decides anything (and would pick gloo on the target)."""
        device = self._per_device_choice(original)
        if device is not None:
            choice = cst.Call(
                func=self.ctx.ref("torch.distributed.get_default_backend_for_device"), args=[cst.Arg(value=device)]
            )
            new: cst.BaseExpression = choice.with_changes(lpar=original.lpar, rpar=original.rpar)
            self.ctx.supersede(original)
            if self.ctx.report(
                "DIST001",
                original,
                f"the per-device backend choice becomes `{self.ctx.code(new)}`: NCCL on CUDA, gloo on the "
                f"CPU, {self.ctx.target.display}'s own there",
                replacement=new,
            ):
                if self.ctx.target.dist_import:
                    self.ctx.add_import(self.ctx.target.dist_import)  # (xla registers its backend on import)
                return new
            return updated
        test = original.test
        if not (
            type(test) is cst.Call and self.ctx.qualname(test.func) in NCCL_AVAILABLE and _contains_nccl(original.body)
        ):
            return updated
        if updated.body.deep_equals(original.body):
            return updated  # "nccl" was not ported (the rule is off or suppressed)
        new = updated.body.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else updated.body
        self.ctx.supersede(original.orelse)
        if self.ctx.report(
            "DIST001",
            original,
            f"the NCCL-or-gloo choice becomes {self.ctx.code(new)}: NCCL is not what the port uses",
            replacement=new,
        ):
            return new
        return updated

    def _discarded_backend(self, node: cst.Call) -> None:
        """`colossalai.launch(..., backend="nccl")` where `launch` sets `backend` again before
        reading it (BackendKind.DISCARDED): the argument selects nothing, on CUDA or the
        target; rewriting it is churn. Kept, reported."""
        if self._discarded is None:
            self._discarded = {
                f[1]: f[3] for f in (getattr(self.ctx.settings, "flow", None) or ()) if f[2] == BackendKind.DISCARDED
            }
        if not self._discarded:
            return
        qual = self.ctx.qualname(node.func)
        fact = self._discarded.get(qual or "")
        if fact is None or len(fact) < 3:
            return
        why, position, param = fact[0], int(fact[1]), fact[2]
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for arg in node.args:
            named = arg.keyword is not None and arg.keyword.value == param
            placed = arg.keyword is None and not arg.star and position >= 0 and positional.index(arg) == position
            if named or placed:
                self._keep_nccl_name(
                    arg.value,
                    f'`"nccl"` is passed as `{param}` to `{qual}`, which discards it ({why}): it selects nothing; kept',
                )

    def _keep_nccl_name(self, node: cst.CSTNode, message: str) -> None:
        """`"nccl"` as one name among others (an option's choices, a `Literal[...]`, a list of
        package-name patterns, a registry key): not a backend this code selects; kept."""
        for string in cstwalk.children(node) if isinstance(node, (cst.Tuple, cst.List, cst.Set)) else [node]:
            value = string.value if isinstance(string, cst.Element) else string
            if (string_value(value) or "") == "nccl" and id(value) not in self._per_device:
                self._per_device.add(id(value))
                self.ctx.report("DIST007", value, message)

    def _option_list(self, node: cst.Tuple | cst.List | cst.Set) -> None:
        values = [string_value(e.value) for e in node.elements]
        if "nccl" in values and sum(v is not None for v in values) >= 2 and all(v is not None for v in values):
            self._keep_nccl_name(
                node,
                '`"nccl"` is one name in a list of names (an option\'s choices, backends a check accepts, '
                "package patterns), not the backend this code selects: kept",
            )

    visit_Tuple = _option_list
    visit_List = _option_list
    visit_Set = _option_list

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`Literal["nccl", "mpi", "gloo"]`: the values a public option accepts."""
        if (dotted(node.value) or "").rsplit(".", 1)[-1] != "Literal":
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self._keep_nccl_name(
                    element.slice.value,
                    '`"nccl"` is one of the values a `Literal[...]` annotation accepts (the public signature): kept',
                )

    def _argparse_default(self, node: cst.Call) -> None:
        """`parser.add_argument("--backend", default="nccl")` in a package: a documented option
        of the library's command line; kept, reported (it selects NCCL at run time)."""
        default = self.kwarg(node, "default")
        if default is None or (string_value(default.value) or "") != "nccl" or not _in_package(self.ctx):
            return
        self._per_device.add(id(default.value))
        t = self.ctx.target
        self.ctx.report(
            "DIST001",
            default.value,
            'an option of this package\'s command line defaults to "nccl" (it selects NCCL at run time): kept',
            applicability=Applicability.MANUAL,
            advice=(
                f"Pass `--backend {t.dist_backend}` (the option as the package names it) on {t.display}; "
                "porter leaves a documented default as it is."
            ),
        )

    def visit_Call(self, node: cst.Call) -> None:
        """The backend argument of `init_process_group` / `new_group` (any spelling of NCCL there)."""
        last = (
            node.func.attr.value
            if isinstance(node.func, cst.Attribute)
            else node.func.value
            if isinstance(node.func, cst.Name)
            else ""
        )
        if last == "add_argument":
            self._argparse_default(node)
        if last.startswith("register") and node.args and node.args[0].keyword is None:
            self._keep_nccl_name(
                node.args[0].value,
                f'`"nccl"` is the key `{last}` registers an implementation under (a name of the library\'s '
                "own registry), not a backend selected here: kept",
            )
        self._discarded_backend(node)
        if last not in ("init_process_group", "new_group"):
            return  # (by name first: resolving every call costs)
        qual = self.ctx.qualname(node.func)
        if qual in INIT or qual in NEW_GROUP:
            backend = self.kwarg(node, "backend")
            if backend is None and qual in INIT and self.positional(node):
                backend = self.positional(node)[0]
            if backend is not None:
                self._backend_args.add(id(backend.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qual = self.ctx.qualname(original.func)
        if qual in INIT:
            return self._init(original, updated)
        if qual in DDP:
            return self._ddp(original, updated)
        if qual in DATA_PARALLEL:
            self.ctx.report(
                "DIST005",
                original,
                "`nn.DataParallel` replicates over CUDA GPUs in one process; on the target it does nothing",
                applicability=Applicability.MANUAL,
            )
        return updated

    def _init(self, original: cst.Call, updated: cst.Call):
        t = self.ctx.target
        backend = self.kwarg(original, "backend")
        positional = self.positional(original)
        if backend is None and positional:
            backend = positional[0]
        new = updated
        if self.ctx.portable:
            return self._portable_init(original, updated, backend)
        if backend is None and any(a.star == "**" for a in original.args):
            # `init_process_group(**kwargs)`: the caller's keywords may hold the backend (a
            # second `backend=` is a TypeError), and without one torch picks the device's own
            self.ctx.report(
                "DIST001",
                original,
                "the backend comes from "
                f"`{self.ctx.code(next(a for a in original.args if a.star == '**'))}`, the caller's: "
                "without one, torch picks each device's default backend (NCCL on CUDA); kept",
                applicability=Applicability.MANUAL,
                advice=f'Callers on {t.display} pass `backend="{t.dist_backend}"` where NCCL is asked for.',
            )
            return updated
        if backend is None:
            new = self.with_kwarg(new, "backend", cst.SimpleString(f'"{t.dist_backend}"'))
            if not self.ctx.report(
                "DIST001",
                original,
                f'no backend given: the default picks NCCL on CUDA; it is set to "{t.dist_backend}"',
                replacement=new,
            ):
                return updated
            if t.dist_import:
                self.ctx.add_import(t.dist_import)
        if t.dist_init_method and self.kwarg(original, "init_method") is None and self._is_nccl(backend):
            with_init = self.with_kwarg(new, "init_method", cst.SimpleString(f'"{t.dist_init_method}"'))
            if self.ctx.report(
                "DIST001",
                original,
                f'PyTorch/XLA\'s backend needs `init_method="{t.dist_init_method}"`',
                replacement=with_init,
            ):
                if t.dist_import:
                    self.ctx.add_import(t.dist_import)
                return with_init
        return new

    def _portable_init(self, original: cst.Call, updated: cst.Call, backend: cst.Arg | None):
        """--portable: `init_process_group("nccl")` -> `init_process_group()`: without a backend
        torch gives each device its default one (NCCL on CUDA, gloo on the CPU, the target's
        own where it registers one)."""
        if backend is None or (string_value(backend.value) or "").lower() != "nccl":
            return updated
        i = original.args.index(backend)
        if backend.keyword is None and i + 1 < len(original.args) and original.args[i + 1].keyword is None:
            return updated  # more positional arguments follow: the backend's place must stay
        args = [a for j, a in enumerate(updated.args) if j != i]
        new = updated.with_changes(args=fix_commas(args))
        self.ctx.supersede(backend)
        if self.ctx.report(
            "DIST001",
            original,
            "the NCCL backend is dropped: without one, torch picks each device's default backend (NCCL on "
            "CUDA, gloo on the CPU)",
            replacement=new,
        ):
            return new
        return updated

    def _is_nccl(self, backend: cst.Arg | None) -> bool:
        if backend is None or _contains_nccl(backend.value) or self._backend_nccl(backend.value):
            return True
        if isinstance(backend.value, cst.Name):
            for scope in (self.ctx.scopes.innermost, self.ctx.module):
                if scope is None:
                    continue
                values = assigned_values(scope, backend.value.value)
                if values:
                    return any(_contains_nccl(v) for v in values)
        return False

    def _ddp(self, original: cst.Call, updated: cst.Call):
        given = {a.keyword.value: a.value for a in original.args if a.keyword}
        computed = sorted(k for k in ("device_ids", "output_device") if isinstance(given.get(k), cst.Name))
        if isinstance(given.get("device_ids"), cst.Name):  # not `[local_rank]`: a list made elsewhere
            # `device_ids=device_ids`: computed above for each device (accelerate's per-backend
            # choice); dropping it would leave that choice dead and change CUDA's DDP
            self.ctx.report(
                "DIST002",
                original,
                f"DDP's {' and '.join(f'`{k}`' for k in computed)} come from a variable computed for each "
                f"device: kept; check it is None for {self.ctx.target.display} (one device per process)",
                applicability=Applicability.MANUAL,
            )
            return updated
        drop = {"device_ids", "output_device"} & set(given)
        new = self.without_kwargs(updated, drop) if drop else updated
        # `**kwargs` may hold it already (Lightning's `**self._ddp_kwargs`): a second one is a TypeError
        spread = any(a.star == "**" for a in original.args)
        bucket = self.ctx.target.name == "xla" and self.kwarg(original, "gradient_as_bucket_view") is None
        if bucket and not spread:
            new = self.with_kwarg(new, "gradient_as_bucket_view", cst.Name("True"))
        if new is updated:  # nothing CUDA's to drop (`DDP(model, **kwargs)`): a recommendation is no finding
            return updated
        what = ", ".join(sorted(drop)) or "arguments"
        msg = f"DDP's CUDA {what} dropped: the target has one device per process"
        if bucket:
            msg += _BUCKET_SPREAD if spread else "; `gradient_as_bucket_view=True` as PyTorch/XLA recommends"
        if self.ctx.report("DIST002", original, msg, replacement=new):
            return new
        return updated


_BUCKET_SPREAD = (
    "; PyTorch/XLA recommends `gradient_as_bucket_view=True`: not added, the call's `**` arguments may hold it"
    " (a second one is a TypeError); pass it there"
)


def _in_package(ctx) -> bool:
    """A module of a package (its folder has `__init__.py`, or it imports relatively)."""
    from porter.codemods.literals import in_package

    return in_package(ctx)
