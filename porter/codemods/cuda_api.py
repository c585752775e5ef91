"""`torch.cuda.*` APIs, driven by the mapping table in `rules/cuda_api.toml`.

The table is data, as hipify keeps its CUDA→HIP mappings: a row names the APIs, its rule
code and, per target, one action:

- `rename Q`      the callee (or attribute) becomes `Q`, arguments kept
- `expr T`        the whole call becomes template `T` (`{args}` = the call's arguments)
- `stmts T; U`    an expression statement becomes these statements; elsewhere: manual
- `remove`        an expression statement is removed; elsewhere: manual
- `manual`        a finding with the row's advice, no edit
- `delegate`      another family owns these names

Any `torch.cuda.X` the table does not know is reported (CUDA009): never silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst

from porter.apidata import target_api
from porter.codemods.family import Family, ReferenceTracker, string_value
from porter.codemods.family import walk as _walk
from porter.codemods.target_api import conform, conform_int_arguments
from porter.analysis.kinds import BackendKind
from porter.analysis.device_backends import project_abstraction
from porter.core.findings import Applicability
from porter.config.ruledata import load_toml


AVAILABLE = "torch.cuda.is_available"
_CUDA_SEEDS = ("manual_seed", "manual_seed_all")
# a CUDA stream or event the code makes or enters (`torch.cuda.Stream()`, `with torch.cuda.stream(s)`)
_STREAM_CALLS = re.compile(r"\bcuda\.(Stream|stream|Event|StreamContext|ExternalStream)\(")
# a side stream a class makes (`self.copy_stream = torch.cuda.Stream()`)
_CLASS_STREAMS = re.compile(r"\bcuda\.(Stream|ExternalStream)\(")
# a CUDA event a module makes (`self._reload_event = torch.cuda.Event()`)
_EVENT_CALLS = re.compile(r"\bcuda\.(Event)\(")
_EVENT_TYPE = re.compile(r"\bcuda\.Event\b(?![.\w(])")
# a stream handed to an event's API: `stream.wait_event(e)`, `stream.record_event(e)`
_EVENT_METHODS = frozenset({"wait_event", "record_event"})
# a CUDA stream or event a function's signature names as a type (`event: torch.cuda.Event`, `-> torch.cuda.Stream`)
_STREAM_TYPES = re.compile(r"\bcuda\.(Stream|Event)\b(?![.\w(])")
# `torch.cuda.set_stream = _patched_set_stream`: a module that replaces a CUDA API (a cheap test)
_ASSIGNS_CUDA_API = re.compile(rb"^[ \t]*torch\.cuda\.\w+[ \t]*=[^=]", re.MULTILINE)
_SEED_NAME = re.compile(r"(^|\.)(manual_seed|manual_seed_all|seed|seed_all)$")
# the calls that save or restore CUDA's generator state (`torch.cuda.get_rng_state()`)
_RNG_STATE = frozenset({"get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all"})
_EMPTY = cst.Module(body=[])


@dataclass(frozen=True)
class ApiRow:
    name: str
    code: str
    actions: dict[str, str]
    advice: dict[str, str]
    unsafe: tuple[str, ...]
    device_position: dict[str, str]  # action when the call names a device (`.to(X)`)
    with_rng_state: dict[str, str]  # action in a function that saves or restores CUDA's generator state
    prefix: bool  # the name also covers its sub-attributes (`nvtx` covers `nvtx.mark`)


@lru_cache(maxsize=1)
def api_table() -> dict[str, ApiRow]:
    rows: dict[str, ApiRow] = {}
    for row in load_toml("cuda_api.toml").get("api", []):
        for name in row["names"]:
            rows[name] = ApiRow(
                name=name,
                code=row["code"],
                actions={t: row[t].replace("{name}", name) for t in ("neuron", "tpu", "xla") if t in row},
                advice=row.get("advice", {}),
                unsafe=tuple(row.get("unsafe", ())),
                device_position=row.get("device_position", {}),
                with_rng_state={t: a.replace("{name}", name) for t, a in row.get("with_rng_state", {}).items()},
                prefix=row.get("prefix", False),
            )
    return rows


def lookup(suffix: str) -> ApiRow | None:
    table = api_table()
    if suffix in table:
        return table[suffix]
    parts = suffix.split(".")
    for i in range(len(parts) - 1, 0, -1):
        row = table.get(".".join(parts[:i]))
        if row is not None and row.prefix:
            return row
    if suffix.endswith("Tensor"):
        return table.get("*Tensor")
    return None


def rewrites_call(ctx, qual: str) -> bool:
    """Whether this family will rewrite a call of `qual` (a `torch.cuda.*` name) on the
    target, so that the device strings among its arguments should be ported with it."""
    row = lookup(qual[len("torch.cuda.") :])
    if row is None:
        return False
    target = ctx.target.name
    action = row.actions.get(target, "manual")
    if not action.startswith(("rename ", "expr ", "stmts ")):
        return False
    if target in row.unsafe and not ctx.settings.unsafe_fixes:
        return False
    return ctx.enabled(row.code)


_DEVICE_KWARGS = {"device", "map_location"}
PORTABLE_COLUMNS = ("neuron", "tpu")
# an action that names one target's own API (or answers a CUDA query with a constant) is not portable
_TARGET_ONLY = re.compile(r"torch\.(neuron|tpu)\b|torch_xla|\{x[mr]\}|\b(True|False)\b")


# the profiler's CUDA activity: records CUDA kernels, nothing on the targets (CUDA011)
PROFILER_CUDA = frozenset(
    (
        "torch.profiler.ProfilerActivity.CUDA",
        "torch.autograd.ProfilerActivity.CUDA",
        "torch.autograd.profiler.ProfilerActivity.CUDA",
    )
)


class CudaApiFamily(ReferenceTracker, Family):
    name = "cuda-api"
    tokens = (b"cuda", b"ProfilerActivity", b"nvidia-smi")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._track_init()
        self._callees: set[int] = set()
        self._device_args: set[int] = set()  # expressions in a device position
        self._abstraction: tuple[str, ...] | None | bool = False  # project_abstraction, read once
        self._as_text: set[int] = set()  # calls whose answer is written out as text (str(), f-strings)
        self._classes: list[cst.ClassDef] = []  # the classes the walk is in, innermost last
        self._profilers: dict[int, bool] = {}  # id(class) -> it drives CUDA's profiler
        self._indexes: dict[int, cst.BaseExpression] = {}  # id(index) -> the device of `torch.device(dev, index)`
        self._streams: dict[int, bool] = {}  # id(function or class) -> it keeps a CUDA stream (`_keeps_stream`)
        self._patched: frozenset[str] | None = None  # the `torch.cuda` APIs the module assigns (`_patched_apis`)
        self._handed: dict[int, str] = {}  # id(argument) -> the name of the function it is passed to
        self._arg_at: dict[int, tuple[str, int, str | None]] = {}  # id(argument) -> (function, position, keyword)
        self._index_params: dict[str, tuple[str, ...]] | None = None  # BackendKind.CUDA_INDEX facts
        self._event_waiters: frozenset[str] | None = None  # functions pairing a stream with an event, read once
        self._event_scopes: dict[int, bool] = {}  # id(function) -> `_pairs_events`
        self._event_typed: bool | None = None  # the module names `torch.cuda.Event` as a type (`_typed_event`)
        self._rng_scopes: dict[int, tuple[str, ...] | None] = {}  # id(scope) -> `_rng_state_here`

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        """`f'cuda:{torch.cuda.current_device()}'`: the index of that device (as `torch.device`'s)."""
        if (
            _names_cuda_device(node)
            and len(node.parts) == 2
            and isinstance(node.parts[1], cst.FormattedStringExpression)
        ):
            self._indexes[id(node.parts[1].expression)] = node

    def visit_Call(self, node: cst.Call) -> None:
        self._callees.add(id(node.func))
        func = node.func
        called = (
            func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        )
        if called is not None:
            self._note_arguments(node, called)
        if isinstance(func, cst.Attribute) and func.attr.value in _EVENT_METHODS:
            self._handed[id(func.value)] = func.attr.value  # `torch.cuda.current_stream().record_event(e)`
        self._note_device_arguments(node)
        if (
            isinstance(func, cst.Name)
            and func.value == "str"
            and len(node.args) == 1
            and isinstance(node.args[0].value, cst.Call)
        ):
            self._as_text.add(id(node.args[0].value))  # `str(torch.cuda.is_available())`

    def _note_arguments(self, node: cst.Call, called: str) -> None:
        """Which callee (by its last name) each argument of `node` is handed to, and where: its
        position among the positional ones, or its keyword (`_handed`, `_arg_at`)."""
        positional = 0
        for arg in node.args:
            self._handed[id(arg.value)] = called
            if arg.keyword is not None:
                self._arg_at[id(arg.value)] = (called, -1, arg.keyword.value)
            elif not arg.star:
                self._arg_at[id(arg.value)] = (called, positional, None)
                positional += 1

    def _note_device_arguments(self, node: cst.Call) -> None:
        """The arguments of `node` that are a device (`.to(x)`, `.cuda(x)`, `torch.device(x)`, a
        `device=` keyword) and the index of a `torch.device(type, index)`: where
        `torch.cuda.current_device()` is ported as a device, not as an index."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda") and node.args:
            self._device_args.add(id(node.args[0].value))
        elif len(node.args) == 2 and self.ctx.qualname(func) == "torch.device":
            # `torch.device("cuda", torch.cuda.current_device())`: the index of that device
            self._indexes[id(node.args[1].value)] = node.args[0].value
        elif len(node.args) == 1 and node.args[0].keyword is None and self.ctx.qualname(func) == "torch.device":
            # `torch.device(torch.cuda.current_device())` (fastai's default_device): a bare
            # index there means CUDA (`torch.device(0)` is `cuda:0`), so the device goes in
            self._device_args.add(id(node.args[0].value))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _DEVICE_KWARGS:
                self._device_args.add(id(arg.value))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`torch.cuda.current_stream(d) != torch.cuda.default_stream(d)`: two answers of CUDA's
        compared; where one stays CUDA's (the target has no such API), the other stays too, so
        both sides still ask the same device (mmcv's filtered_lrelu stream check)."""
        if len(node.comparisons) != 1:
            return
        sides = [node.left, node.comparisons[0].comparator]
        rows = [self._row_for(s.func) if isinstance(s, cst.Call) else None for s in sides]
        if any(r is None for r in rows):
            return
        kept = [
            i
            for i, r in enumerate(rows)
            if r is not None and (r[1] is None or self._action(r[1]) in ("manual", "delegate"))
        ]
        if len(kept) != 1:
            return
        other = sides[1 - kept[0]]
        found = rows[1 - kept[0]]
        assert isinstance(other, cst.Call) and found is not None
        if id(other) in self.ctx.keep_cuda or found[1] is None:
            return
        self.ctx.keep_cuda.add(id(other))
        stays = sides[kept[0]]
        self.ctx.report(
            found[1].code,
            other,
            f"`{self.ctx.code(other)}` is compared with `{self.ctx.code(stays)}`, which stays CUDA's "
            f"(no {self.ctx.target.display} counterpart): kept too, so both sides ask CUDA; "
            f"{self.ctx.target.display}'s check, if it needs one, is written beside",
            applicability=Applicability.MANUAL,
        )

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if isinstance(node.expression, cst.Call):
            self._as_text.add(id(node.expression))  # `f"CUDA available: {torch.cuda.is_available()}"`

    def _mapped_row(self, name: cst.BaseExpression, site: cst.CSTNode) -> tuple[str, ApiRow] | None:
        """(suffix, row) of the `torch.cuda.*` API `name` names; None where it names none, or
        one the API data has no row for (reported at `site`, CUDA009)."""
        found = self._row_for(name)
        if found is None:
            return None
        suffix, row = found
        if row is None:
            self._unmapped(site, suffix)
            return None
        return suffix, row

    def _row_for(self, node: cst.BaseExpression) -> tuple[str, ApiRow | None] | None:
        head = node
        while type(head) is cst.Attribute:
            head = head.value
        if type(head) is not cst.Name or "cuda" not in self.ctx.imports.names.get(head.value, ""):
            # only a name bound to torch itself or to something under torch.cuda can get there
            if type(head) is not cst.Name or self.ctx.imports.names.get(head.value) != "torch":
                return None
        qual = self.ctx.qualname(node)
        if qual is None or not qual.startswith("torch.cuda."):
            return None
        suffix = qual[len("torch.cuda.") :]
        return suffix, lookup(suffix)

    # -- references that are not calls (`torch.cuda.Event`, `except torch.cuda.OutOfMemoryError`)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        attr = original.attr.value
        if (attr == "cuda" and type(original.value) is cst.Attribute and original.value.attr.value == "version") or (
            attr.startswith("_cuda") and type(original.value) is cst.Attribute and original.value.attr.value == "_C"
        ):
            self._cuda_build_fact(original)  # `torch.version.cuda`, `torch._C._cuda_*` (a cheap test first)
        if original.attr.value == "CUDA" and self.ctx.qualname(original) in PROFILER_CUDA:
            self.ctx.report(
                "CUDA011",
                original,
                f"`ProfilerActivity.CUDA` records CUDA kernels: on {self.ctx.target.display} it records "
                "nothing (it stays)",
                applicability=Applicability.MANUAL,
            )
            return updated
        if id(original) in self._inner or id(original) in self._callees:
            return updated
        return self._reference(original, updated)

    def _cuda_build_fact(self, node: cst.Attribute) -> None:
        """`torch.version.cuda` (the CUDA version torch was built with) and torch's private
        CUDA bindings (`torch._C._cuda_getDeviceCount()`): no port, reported (CUDA012)."""
        if id(node) in self.ctx.keep_cuda:
            return
        qual = self.ctx.qualname(node) or ""
        t = self.ctx.target.display
        if qual == "torch.version.cuda":
            self.ctx.report(
                "CUDA012",
                node,
                f"`torch.version.cuda` is the CUDA version torch was built with: None with {t}'s torch, so "
                "what reads it takes its non-CUDA path there",
                applicability=Applicability.MANUAL,
            )
        elif qual.startswith("torch._C._cuda"):
            self.ctx.report(
                "CUDA012",
                node,
                f"`{qual}` is torch's private CUDA binding: {t} has none (use the public `torch.accelerator` API)",
                applicability=Applicability.MANUAL,
            )

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self.visit_SimpleString(node)  # type: ignore[arg-type]

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        """`subprocess.run(["nvidia-smi", ...])`: NVIDIA's command-line tool (CUDA013)."""
        if "nvidia-smi" in node.value and id(node) not in self.ctx.keep_cuda:
            t = self.ctx.target
            self.ctx.report(
                "CUDA013",
                node,
                f"`nvidia-smi` is NVIDIA's GPU tool: it is not on a {t.display} host",
                applicability=Applicability.MANUAL,
            )

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._inner or id(original) in self._callees:
            return updated
        if original.value not in self.ctx.imports.names:
            return updated
        return self._reference(original, updated)

    def _reference(self, original, updated):
        found = self._mapped_row(original, original)
        if found is None:
            return updated
        suffix, row = found
        if f"torch.cuda.{suffix}" in self._patched_apis():
            # `prev_set_stream = torch.cuda.set_stream` ... `torch.cuda.set_stream = _patched`:
            # the module wraps CUDA's own function; what it saves to call on is CUDA's
            self.ctx.report(
                row.code,
                original,
                f"`torch.cuda.{suffix}` stays: this module replaces it (`torch.cuda.{suffix} = ...`) and "
                "wraps CUDA's own",
                applicability=Applicability.MANUAL,
                advice=f"Wrap {self.ctx.target.display}'s function beside it if the wrapper should run there.",
            )
            return updated
        action = self._action(row)
        if action == "delegate":
            return updated
        if action.startswith("rename "):
            new = self.ctx.ref(action[7:].strip())
            if self._report(row, original, f"`torch.cuda.{suffix}` becomes `{self.ctx.code(new)}`", new):
                self.ctx.release(original)
                return new
            return updated
        self._manual(row, original, suffix)
        return updated

    def _patched_apis(self) -> frozenset[str]:
        """The `torch.cuda` APIs the module assigns to (`torch.cuda.set_stream = _patched`)."""
        if self._patched is None:
            found: set[str] = set()
            if self.ctx.source is None or _ASSIGNS_CUDA_API.search(self.ctx.source):
                for n in _walk(self.ctx.module):
                    if isinstance(n, cst.Assign):
                        for t in n.targets:
                            qual = self.ctx.qualname(t.target) if isinstance(t.target, cst.Attribute) else None
                            if qual and qual.startswith("torch.cuda."):
                                found.add(qual)
            self._patched = frozenset(found)
        return self._patched

    # -- calls -----------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        kept = self._kept_as_it_is(original, updated)
        if kept is not None:
            return kept
        found = self._mapped_row(original.func, original)
        if found is None:
            return updated
        suffix, row = found
        action = self._action(row, in_device_position=id(original) in self._device_args)
        if action == "delegate":
            return updated
        if row.code == "CUDA004" and (kept_state := self._rng_state_here()) is not None:
            if kept_state:
                return self._keep_rng_state(row, original, updated, suffix, kept_state)
            action = row.with_rng_state.get(self.ctx.target.name, action)
        stays = self._stays_beside(row, original, updated, suffix, action)
        if stays is not None:
            return stays
        return self._port(row, original, updated, suffix, action)

    def _kept_as_it_is(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        """The call, left as it is, where what decides that is the call's place, not its API row:
        a device-generic project's CUDA test, a check that guards CUDA-only code, a CUDA
        device's index (CUDA002); None elsewhere."""
        if id(original) in self.ctx.keep_generic:  # `device_type == "cuda" and torch.cuda.is_available()`
            self.ctx.report(
                "CUDA010",
                original,
                f"`{self.ctx.code(original)}` stays: the project picks its device generically and this "
                f"asks whether the run is a CUDA one (false on {self.ctx.target.display}, where the port "
                "takes the other path)",
                applicability=Applicability.MANUAL,
            )
            return updated
        if id(original) in self.ctx.keep_cuda:
            return updated  # a check that guards CUDA-only code (guards.py)
        device = self._indexes.get(id(original))
        why = None
        if (into := self._cuda_index_of(original)) is not None:
            # `move(t, torch.cuda.current_device())` where `move(t, target_device)` makes
            # `f"cuda:{target_device}"` (kept, BACK009): the index of a CUDA device
            why = f"it is passed where {into}"
        elif device is not None and id(device) in self.ctx.keep_cuda:
            # `torch.device("cuda", torch.cuda.current_device())` whose "cuda" stays (BACK009,
            # GUARD004): its index is CUDA's current device, and stays with it
            why = f"it is the index of `{self.ctx.code(device)}`, a CUDA device this port keeps"
        if why is not None:
            self.ctx.report(
                "CUDA002", original, f"`{self.ctx.code(original)}` stays: {why}", applicability=Applicability.MANUAL
            )
            return self._keep_cuda_arguments(original, updated)
        return None

    def _keep_rng_state(
        self, row: ApiRow, original: cst.Call, updated: cst.Call, suffix: str, kept: tuple[str, ...]
    ) -> cst.Call:
        """CUDA004: the generator state call stays, since this code saves and restores CUDA's
        generator state with a call (`kept`) that has no port to the target."""
        # `current = torch.cuda.get_rng_state()` (no port on the target) beside
        # `torch.cuda.set_rng_state(current)`: half the generator handling on the target
        # and half on CUDA saves one generator and restores another; it stays together
        self.ctx.report(
            row.code,
            original,
            f"`torch.cuda.{suffix}()` stays: this code saves and restores CUDA's generator state, and "
            f"`torch.cuda.{kept[0]}` has no port to {self.ctx.target.display} here",
            applicability=Applicability.MANUAL,
            advice=" ".join(
                filter(
                    None,
                    (
                        row.advice.get(self.ctx.target.name) or row.advice.get("*"),
                        f"Port this code's generator handling as a whole (see `torch.cuda.{kept[0]}`).",
                    ),
                )
            ),
        )
        return self._keep_cuda_arguments(original, updated)

    def _stays_beside(
        self, row: ApiRow, original: cst.Call, updated: cst.Call, suffix: str, action: str
    ) -> cst.Call | None:
        """The call, left as it is (reported), where the code around it still needs CUDA's
        answer though the row has a port: a seed `torch.manual_seed` already covers, a CUDA
        check written out as text, NVTX ranges under CUDA's profiler, a stream call beside CUDA
        streams that stay; None elsewhere."""
        if suffix in _CUDA_SEEDS and self._seeded_already(original):
            self.ctx.report(
                "CUDA010",
                original,
                f"`torch.cuda.{suffix}()` after `torch.manual_seed` stays: the project picks its device "
                "generically, so the port still runs on CUDA; `torch.manual_seed` already seeds "
                f"{self.ctx.target.display}",
                applicability=Applicability.MANUAL,
            )
            return updated
        if suffix == "is_available" and id(original) in self._as_text and not self.ctx.portable:
            # `cuda_available_str = str(torch.cuda.is_available())` (an environment report):
            # a statement about CUDA, which torch.accelerator would make about any device
            self.ctx.report(
                row.code,
                original,
                f"`torch.cuda.{suffix}()` is written out as text, a report of whether CUDA is there: it stays "
                f"(torch.accelerator would answer for {self.ctx.target.display} under CUDA's name)",
                applicability=Applicability.MANUAL,
                advice=f"Report {self.ctx.target.display} beside it if the output should name it.",
            )
            return self._keep_cuda_arguments(original, updated)
        if (
            row.code == "CUDA008"
            and action.startswith("rename ")
            and self._classes
            and self._drives_cuda_profiler(self._classes[-1])
        ):
            # `CudaProfilerWrapper`: `torch.cuda.profiler.start()` (no port: it stays) opens the
            # nsys capture whose timeline the NVTX ranges annotate; record_function emits none
            self.ctx.report(
                row.code,
                original,
                f"`torch.cuda.{suffix}()` stays: class `{self._classes[-1].name.value}` drives CUDA's profiler "
                "(`torch.cuda.profiler`), whose nsys timeline these NVTX ranges annotate",
                applicability=Applicability.MANUAL,
                advice=row.advice.get(self.ctx.target.name) or row.advice.get("*"),
            )
            return self._keep_cuda_arguments(original, updated)
        if (
            row.code == "CUDA006"
            and action.startswith("rename ")
            and self.ctx.in_cuda_only_code() is None
            and (kept_by := self._stream_kept_here() or self._event_kept_by(original))
        ):
            # `torch.cuda.current_stream()` beside a `torch.cuda.Stream()` that stays: half the
            # stream code on torch.accelerator and half on CUDA is no port, only a diff to read
            said = (
                f"`torch.cuda.{suffix}()` stays: {kept_by}, which torch's generic stream does not reach"
                if kept_by.startswith("`")
                else f"`torch.cuda.{suffix}()` stays beside the CUDA stream {kept_by} (`torch.cuda.Stream` / "
                "`stream` / `Event`, not ported here)"
            )
            self.ctx.report(
                row.code,
                original,
                said,
                applicability=Applicability.MANUAL,
                advice=row.advice.get(self.ctx.target.name) or row.advice.get("*"),
            )
            return self._keep_cuda_arguments(original, updated)
        return None

    def _port(self, row: ApiRow, original: cst.Call, updated: cst.Call, suffix: str, action: str):
        """The row's action for the target: a rename, an expression, the statement removed or
        replaced by statements, else a MANUAL finding (the call kept)."""
        statement = self.ctx.statement_of.get(id(original))
        is_statement = isinstance(statement, cst.Expr)
        if action.startswith("rename "):
            name = action[7:].strip()
            new: cst.BaseExpression = self._conform(name, updated.with_changes(func=self.ctx.ref(name)))
            return self._apply(row, original, suffix, new, updated)
        if action.startswith("expr "):
            return self._expr(row, original, updated, suffix, action[5:].strip())
        if action == "remove" and is_statement:
            if self._report(
                row,
                original,
                f"`torch.cuda.{suffix}()` has no effect on {self.ctx.target.display}: removed",
                cst.RemovalSentinel.REMOVE,
            ):
                self.ctx.statement_edits.remove.add(id(statement))
                self.ctx.release(original.func)
            return updated
        if action.startswith("stmts ") and is_statement:
            parts = [p.strip() for p in action[6:].split(";") if p.strip()]
            exprs = [self.ctx.expr(p, args=_args_code(self.ctx, updated)) for p in parts]
            smalls: list[cst.BaseSmallStatement] = [cst.Expr(value=e) for e in exprs]
            text = "; ".join(self.ctx.code(e) for e in exprs)
            if self._report(row, original, f"`torch.cuda.{suffix}()` becomes `{text}`", cst.FlattenSentinel(smalls)):
                self.ctx.statement_edits.replace[id(statement)] = smalls
                self.ctx.release(original.func)
            return updated
        self._manual(row, original, suffix)
        return self._keep_cuda_arguments(original, updated)

    def _expr(self, row: ApiRow, original: cst.Call, updated: cst.Call, suffix: str, template: str):
        """The call becomes the expression `template` (the target's answer), unless the project
        has backends of its own, where this line still answers for CUDA."""
        library = self._library() if template in _CONSTANTS and not self.ctx.portable else None
        if library is not None:
            # `torch.cuda.is_current_stream_capturing()` -> `False`: the target's answer, but
            # in a library that has backends of its own this line still runs on CUDA, where
            # the answer is CUDA's (a graph capture under way, bf16 on this GPU)
            self.ctx.report(
                row.code,
                original,
                f"`torch.cuda.{suffix}()` stays: the project has backends of its own ({library[0]}), "
                f"so this code still runs on CUDA, where it answers for CUDA; `{template}` is only "
                f"{self.ctx.target.display}'s answer. Where {self.ctx.target.display} reaches this line, "
                "ask the project's device abstraction (or `torch.cuda.is_available() and ...`) "
                "instead: on a torch build without CUDA the call raises",
                applicability=Applicability.MANUAL,
                advice=row.advice.get(self.ctx.target.name) or row.advice.get("*"),
            )
            return self._keep_cuda_arguments(original, updated)
        # parentheses, where the context needs them, come from the statement walker
        new = self.ctx.expr(template, args=_args_code(self.ctx, updated))
        return self._apply(row, original, suffix, new, updated)

    def visit_With(self, node: cst.With) -> None:
        """`with torch.cuda.stream(self.s1): gpu = t.to("cuda", non_blocking=True)` in a function
        whose CUDA streams stay (`_stream_kept_here`): the body runs on CUDA's stream, so the
        devices it names are CUDA's; the target's there would mix devices on CUDA and never
        run on the target. They stay, reported with the stream (a device-generic rewrite in
        the body, the same on CUDA, is still made)."""
        if self.ctx.in_cuda_only_code() is not None:
            return
        item = next(
            (
                i.item
                for i in node.items
                if isinstance(i.item, cst.Call) and self.ctx.qualname(i.item.func) == "torch.cuda.stream"
            ),
            None,
        )
        if item is None or not self._stream_kept_here():
            return
        self._keep_devices(
            node.body,
            item,
            f"the body of `with {self.ctx.code(item)}` runs on a CUDA stream this function keeps: its "
            "devices stay CUDA's",
            "this function",
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """`def unpack(tensor_id): ... t.to("cuda", non_blocking=True)` defined inside a function
        whose CUDA streams stay (torchtune's activation offloading: `__init__` makes the CUDA
        streams and installs this closure beside the hooks that use them): the closure runs on
        the same CUDA machinery, so the devices it names are CUDA's, reported as in a kept
        stream's body (visit_With)."""
        super().visit_FunctionDef(node)
        outer = [f for f in self.ctx.scopes.functions if f is not node]
        if not outer or self.ctx.in_cuda_only_code() is not None:
            return
        if not self._keeps_stream(outer[-1], _STREAM_CALLS):
            return
        self._keep_devices(
            node.body,
            node.name,
            f"`def {node.name.value}` is defined in `{outer[-1].name.value}`, which keeps its CUDA "
            f"streams: the devices it names stay CUDA's",
            f"`{outer[-1].name.value}`",
        )

    def _keep_devices(self, body: cst.CSTNode, at: cst.CSTNode, why: str, owner: str) -> None:
        """Keep the CUDA devices `body` names (code that runs on CUDA streams `owner` keeps) and
        report them once (CUDA006), listed after `why`."""
        kept = [n for n in _walk(body) if _names_cuda_device(n) and id(n) not in self.ctx.keep_cuda]
        if not kept:
            return
        self.ctx.keep_cuda.update(id(n) for n in kept)
        self.ctx.report(
            "CUDA006",
            at,
            f"{why} ({', '.join(dict.fromkeys(self.ctx.code(n) for n in kept))})",
            applicability=Applicability.MANUAL,
            advice=f"Port the stream code of {owner} as a whole (torch.accelerator streams) to run it on "
            f"{self.ctx.target.display}.",
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        self._classes.append(node)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated

    def _drives_cuda_profiler(self, node: cst.ClassDef) -> bool:
        """The class uses `torch.cuda.profiler` (start/stop of the CUDA profiler's capture)."""
        found = self._profilers.get(id(node))
        if found is None:
            found = self._profilers[id(node)] = _CUDA_PROFILER.search(self.ctx.code(node)) is not None
        return found

    def _library(self) -> tuple[str, ...] | None:
        """The project's device-abstraction evidence (a class per device, a per-device module
        family, a device ladder over several accelerators), or None: an application."""
        if self._abstraction is False:
            self._abstraction = project_abstraction(self.ctx.settings, self.ctx.path, self.ctx.source)
        return self._abstraction  # type: ignore[return-value]

    def _stream_kept_here(self) -> str | None:
        """Where the CUDA stream code this call sits beside is kept, or None: the innermost
        function uses a CUDA stream API that this port leaves as it is (`torch.cuda.Stream()`:
        manual on tpu and xla, an unsafe fix on neuron) or names one as a type in its signature
        (`event: torch.cuda.Event`); or the class it is a method of makes a side stream
        (`self.copy_stream = torch.cuda.Stream()` in `__init__`, joined in another method)."""
        scope = self.ctx.scopes.innermost
        if scope is None:
            return None
        if self._keeps_stream(scope, _STREAM_CALLS) or self._typed_stream(scope):
            return "this function keeps"
        cls = self._classes[-1] if self._classes else None
        if cls is not None and any(s is scope for s in _methods(cls)) and self._keeps_stream(cls, _CLASS_STREAMS):
            return f"its class `{cls.name.value}` keeps"
        return None

    def _handed_to_event(self, call: cst.Call) -> str | None:
        """`group.wait_reload_event(torch.cuda.current_stream())` where the module's
        `wait_reload_event(self, stream)` runs `stream.wait_event(self._reload_event)` and the
        module keeps its `torch.cuda.Event()`s (not ported here): the stream meets a CUDA event,
        and torch's generic stream would wait on an event CUDA's never records. The function
        it is handed to, or None."""
        called = self._handed.get(id(call))
        if called is None:
            called = self._name_handed(call)
        if called is None:
            return None
        if called in _EVENT_METHODS:
            return called if self._keeps_stream(self.ctx.module, _EVENT_CALLS) or self._typed_event() else None
        return called if called in self._stream_takers() else None

    def _stream_takers(self) -> frozenset[str]:
        """The module's functions that hand a parameter to CUDA's runtime: to an event's API
        where the module keeps `torch.cuda.Event()`s, or as a raw handle (`stream.cuda_stream`)."""
        if self._event_waiters is None:
            events = self._keeps_stream(self.ctx.module, _EVENT_CALLS)
            self._event_waiters = frozenset(
                n.name.value
                for n in _walk(self.ctx.module)
                if isinstance(n, cst.FunctionDef) and _pairs_param_with_cuda(n, events)
            )
        return self._event_waiters

    def _cuda_index_of(self, call: cst.Call) -> str | None:
        """Why `torch.cuda.current_device()` is passed as a CUDA device's index: the function
        it is passed to makes `f"cuda:{param}"` of that parameter (BackendKind.CUDA_INDEX)."""
        at = self._arg_at.get(id(call))
        if at is None or self.ctx.qualname(call.func) != "torch.cuda.current_device":
            return None
        if self._index_params is None:
            self._index_params = {
                f[1]: f[3] for f in (getattr(self.ctx.settings, "flow", None) or ()) if f[2] == BackendKind.CUDA_INDEX
            }
        fact = self._index_params.get(at[0])
        if fact is None or len(fact) < 3:
            return None
        why, position, param = fact[0], fact[1], fact[2]
        return why if (at[1] >= 0 and str(at[1]) == position) or at[2] == param else None

    def _name_handed(self, call: cst.Call) -> str | None:
        """`stream = torch.cuda.current_stream()` then `prefetch(t, stream=stream)` in the same
        function: the function the name is handed to, or None."""
        statement = self.ctx.statement_of.get(id(call))
        scope = self.ctx.scopes.innermost
        if (
            not isinstance(statement, cst.Assign)
            or statement.value is not call
            or len(statement.targets) != 1
            or not isinstance(statement.targets[0].target, cst.Name)
            or scope is None
        ):
            return None
        name = statement.targets[0].target.value
        for n in _walk(scope):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Name):
                if any(isinstance(a.value, cst.Name) and a.value.value == name for a in n.args):
                    if n.func.value in self._stream_takers():
                        return n.func.value
        return None

    def _typed_event(self) -> bool:
        """The module names `torch.cuda.Event` as a type (`event: torch.cuda.Event`)."""
        if self._event_typed is None:
            self._event_typed = bool(_EVENT_TYPE.search(self.ctx.code(self.ctx.module)))
        return self._event_typed

    def _event_kept_by(self, call: cst.Call) -> str | None:
        handed = self._handed_to_event(call)
        if handed:
            return f"`{handed}` hands it to CUDA's runtime (a kept `torch.cuda.Event`, or its raw `.cuda_stream`)"
        scope = self.ctx.scopes.innermost
        if isinstance(scope, cst.FunctionDef) and self._pairs_events(scope):
            return "`torch.cuda.current_stream()` meets a kept `torch.cuda.Event` in this function"
        return None

    def _pairs_events(self, scope: cst.FunctionDef) -> bool:
        """The function calls `torch.cuda.current_stream().record_event(e)` (or `wait_event`)
        where the module keeps or types CUDA events: its other CUDA stream calls stay with it."""
        known = self._event_scopes.get(id(scope))
        if known is None:
            known = False
            if self._keeps_stream(self.ctx.module, _EVENT_CALLS) or self._typed_event():
                known = any(
                    isinstance(n, cst.Call)
                    and isinstance(n.func, cst.Attribute)
                    and n.func.attr.value in _EVENT_METHODS
                    and isinstance(n.func.value, cst.Call)
                    and (self.ctx.qualname(n.func.value.func) or "").startswith("torch.cuda.")
                    for n in _walk(scope)
                )
            self._event_scopes[id(scope)] = known
        return known

    def _keeps_stream(self, scope: cst.CSTNode, pattern: re.Pattern[str]) -> bool:
        known = self._streams.get(id(scope))
        if known is None:
            known = False
            for n in pattern.finditer(self.ctx.code(scope)):
                row = api_table().get(n.group(1))
                action = self._action(row) if row is not None else "manual"
                unsafe = row is not None and self.ctx.target.name in row.unsafe and not self.ctx.settings.unsafe_fixes
                if not action.startswith(("rename ", "expr ")) or unsafe:
                    known = True
                    break
            self._streams[id(scope)] = known
        return known

    def _typed_stream(self, scope: cst.CSTNode) -> bool:
        """The function's parameters or result are typed as a CUDA stream or event (the types
        stay: `torch.cuda.Event` has no safe port on neuron and none on tpu or xla)."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        params = scope.params
        annotations = [
            p.annotation
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.annotation is not None
        ]
        if scope.returns is not None:
            annotations.append(scope.returns)
        return any(_STREAM_TYPES.search(self.ctx.code(a.annotation)) for a in annotations)

    def _rng_state_here(self) -> tuple[str, ...] | None:
        """None, or the code this call is in (its class, else its function, else the module)
        saves or restores CUDA's generator state (`state = torch.cuda.get_rng_state()` ...
        `torch.cuda.set_rng_state(state)`: ColossalAI's per-mode seed manager): then the names
        of its `torch.cuda` generator calls that have no port to the target (empty: all have).
        Such code manages the device's generator alone: a seed there seeds that generator only
        (`torch.neuron.manual_seed`; `torch.manual_seed` would also reseed the CPU generator,
        which the code neither saves nor restores), and its calls are ported together or stay."""
        scope = self._classes[0] if self._classes else self.ctx.scopes.innermost or self.ctx.module
        if isinstance(scope, cst.ClassDef) and self.ctx.scopes.functions and self._hands_state_on(scope):
            # a class of wrappers (a backend class per device: ColossalAI's `CudaAccelerator`,
            # `get_rng_state` returns the state, `set_rng_state` takes it) keeps no state between
            # its methods: its callers pair them, and each method is ported on its own
            scope = self.ctx.scopes.functions[-1]
        if id(scope) in self._rng_scopes:
            return self._rng_scopes[id(scope)]
        calls: list[tuple[str, ApiRow]] = []
        # the module's own statements, not the functions and classes it defines
        body = (
            [s for s in scope.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
            if isinstance(scope, cst.Module)
            else [scope]
        )
        for n in (n for part in body for n in _walk(part)):
            if type(n) is not cst.Call:
                continue
            called = n.func.attr if type(n.func) is cst.Attribute else n.func
            if type(called) is cst.Name and called.value.endswith(("rng_state", "rng_state_all", "seed", "seed_all")):
                found = self._row_for(n.func)
                if found is not None and found[1] is not None and found[1].code == "CUDA004":
                    calls.append((found[0], found[1]))
        answer: tuple[str, ...] | None = None
        if any(suffix in _RNG_STATE for suffix, _ in calls):
            answer = tuple(
                sorted({suffix for suffix, row in calls if not self._action(row).startswith(("rename ", "expr "))})
            )
        self._rng_scopes[id(scope)] = answer
        return answer

    def _hands_state_on(self, cls: cst.ClassDef) -> bool:
        """Whether each generator-state call of the class only hands the state to its caller or
        takes it from there: returned as it is (`return torch.cuda.get_rng_state(device)`), or
        given a parameter of its method (`torch.cuda.set_rng_state(new_state, device)`). Such a
        class keeps no state between its methods (the seed manager that stores
        `self._states[mode] = torch.cuda.get_rng_state()` does)."""
        key = -id(cls)
        if key in self._rng_scopes:
            return self._rng_scopes[key] is not None
        calls: set[int] = set()
        handed: set[int] = set()
        for fn in (n for n in _walk(cls) if type(n) is cst.FunctionDef):
            params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
            returned = {id(n.value) for n in _walk(fn) if type(n) is cst.Return and n.value is not None}
            for n in _walk(fn):
                if type(n) is not cst.Call:
                    continue
                found = self._row_for(n.func)
                if found is None or found[1] is None or found[1].code != "CUDA004" or found[0] not in _RNG_STATE:
                    continue
                calls.add(id(n))
                first = n.args[0].value if n.args else None
                if found[0].startswith("get_"):
                    ok = id(n) in returned
                else:
                    ok = type(first) is cst.Name and first.value in params
                if ok:
                    handed.add(id(n))
        answer = bool(calls) and calls == handed
        self._rng_scopes[key] = () if answer else None
        return answer

    def _seeded_already(self, call: cst.Call) -> bool:
        """Device-generic code: `torch.cuda.manual_seed(s)` right after `torch.manual_seed(s)`
        (other seeding between) seeds nothing new on the target, where it is a no-op, and
        still runs on CUDA: it stays (elsewhere it becomes the repeat that is removed)."""
        if not self.ctx.device_generic or len(self.ctx.current_statements) < 1:
            return False
        line = self.ctx.current_statements[-1]
        if not (
            type(line) is cst.SimpleStatementLine
            and len(line.body) == 1
            and getattr(line.body[0], "value", None) is call
        ):
            return False
        parent = self.ctx.current_statements[-2] if len(self.ctx.current_statements) > 1 else self.ctx.module
        inner = getattr(parent, "body", ())
        block = inner.body if isinstance(inner, cst.IndentedBlock) else inner
        before = next((block[:i] for i, stmt in enumerate(block) if stmt is line), None)
        args = _EMPTY.code_for_node(call.with_changes(func=cst.Name("f")))
        for prev in reversed(before or ()):
            value = (
                prev.body[0].value
                if type(prev) is cst.SimpleStatementLine and len(prev.body) == 1 and type(prev.body[0]) is cst.Expr
                else None
            )
            if type(value) is not cst.Call or not _SEED_NAME.search(self.ctx.code(value.func)):
                return False
            if (
                self.ctx.qualname(value.func) == "torch.manual_seed"
                and _EMPTY.code_for_node(value.with_changes(func=cst.Name("f"))) == args
            ):
                return True
        return False

    def _conform(self, qualname: str, call: cst.Call) -> cst.Call:
        """The renamed call made to bind as the target's recorded API declares it:
        torch.cuda took `device=` by keyword and devices where torch.accelerator takes ints."""
        found = target_api(self.ctx.target.name).lookup(qualname)
        member = found.member if found is not None else None
        call = conform(member, call)
        return conform_int_arguments(member, call, self.ctx.qualname)

    def _action(self, row: ApiRow, in_device_position: bool = False) -> str:
        """The row's action for the target; --portable: the first native target's action that
        names only `torch.accelerator` / plain `torch` APIs (they run on CUDA and the CPU too),
        else manual (the CUDA call stays, reported)."""
        columns = (self.ctx.target.name,) if not self.ctx.portable else PORTABLE_COLUMNS
        for target in columns:
            action = row.actions.get(target, "manual")
            if in_device_position and target in row.device_position:
                action = row.device_position[target]
            if not self.ctx.portable or (action.startswith(("rename ", "expr ")) and not _TARGET_ONLY.search(action)):
                return action
        return "delegate" if any(a == "delegate" for a in row.actions.values()) else "manual"

    def _apply(self, row, original, suffix, new, updated):
        self.ctx.supersede(original.func)
        if self._report(row, original, f"`torch.cuda.{suffix}(...)` becomes `{self.ctx.code(new)}`", new):
            self.ctx.release(original.func)
            return new
        return self._keep_cuda_arguments(original, updated)

    def _keep_cuda_arguments(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """A `torch.cuda.*` call left as it is keeps its arguments as they were: the call still
        talks to CUDA, so `torch.cuda.get_device_properties("neuron")` would be wrong twice, and
        `torch.cuda.get_device_capability(torch.accelerator.device_index(i))` hands CUDA a
        context manager where it took a device."""
        args = list(updated.args)
        for i, (old, new) in enumerate(zip(original.args, updated.args)):
            if not old.value.deep_equals(new.value):
                self.ctx.supersede(old.value)
                args[i] = new.with_changes(value=old.value)
        return updated.with_changes(args=args)

    def _report(self, row: ApiRow, node, message: str, replacement) -> bool:
        target = self.ctx.target.name
        applicability = Applicability.UNSAFE if target in row.unsafe else Applicability.SAFE
        return self.ctx.report(
            row.code,
            node,
            message,
            replacement=replacement,
            applicability=applicability,
            advice=row.advice.get(target) or row.advice.get("*"),
        )

    def _manual(self, row: ApiRow, node, suffix: str) -> None:
        target = self.ctx.target
        self.ctx.report(
            row.code,
            node,
            f"`torch.cuda.{suffix}` has no automatic port to {target.display}",
            applicability=Applicability.MANUAL,
            advice=row.advice.get(target.name) or row.advice.get("*"),
        )

    def _unmapped(self, node, suffix: str) -> None:
        self.ctx.report(
            "CUDA009",
            node,
            f"`torch.cuda.{suffix}` is CUDA-only and porter has no mapping for it",
            applicability=Applicability.MANUAL,
        )


_CUDA_PROFILER = re.compile(r"\btorch\.cuda\.profiler\b|\bcudaProfilerStart\b")
_CONSTANTS = frozenset({"True", "False", "None"})  # an `expr` action that answers for the target alone


def _args_code(ctx, call: cst.Call) -> str:
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return ", ".join(ctx.code(a).rstrip(", ") for a in args)


def _names_cuda_device(node: cst.CSTNode) -> bool:
    """`"cuda"`, `"cuda:0"`, `f"cuda:{i}"`: a string that names a CUDA device."""
    if isinstance(node, cst.SimpleString):
        value = string_value(node) or ""
        return value == "cuda" or value.startswith("cuda:")
    return (
        isinstance(node, cst.FormattedString)
        and bool(node.parts)
        and isinstance(node.parts[0], cst.FormattedStringText)
        and node.parts[0].value == "cuda:"
    )


def _pairs_param_with_cuda(fn: cst.FunctionDef, events: bool) -> bool:
    """Whether the function reads a parameter's raw CUDA stream (`stream.cuda_stream`) or, where
    `events` (the module keeps CUDA events), calls an event method on one (`stream.wait_event(e)`)."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)} - {"self"}
    for n in _walk(fn):
        if not isinstance(n, cst.Attribute) or not isinstance(n.value, cst.Name) or n.value.value not in params:
            continue
        if n.attr.value == "cuda_stream" or (events and n.attr.value in _EVENT_METHODS):
            return True
    return False


def _methods(cls: cst.ClassDef) -> list[cst.FunctionDef]:
    """The functions defined directly in a class's body."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return [s for s in body if isinstance(s, cst.FunctionDef)]
